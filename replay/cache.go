package replay

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/config"
)

// A trace cache holds a prepared trace's packets in memory in a compact form, decoded
// once by Prepare's pass (scan.go), for the run and for every Prepared derived from the
// preparation (the points of a sweep, Derive): each replays from memory instead of
// reading and decoding the capture again on a goroutine of its own. What differs
// between the replays is applied as they read it: the flows' hosts and ids (the
// host mapping, --replicate's copies), the injection time (the speedup) and which
// captured control packets a closed-loop run replaces (the transport settings). The
// records are those of a replay that reads the capture (TestCachedTraceEqualsStreamed).

// cachedPacket is one packet of the cache: 32 bytes. What is the same for every
// packet of a flow (addresses, ports, protocol) is kept once per 5-tuple
// (tupleTable), and the hosts once per tuple and mapping (Prepared.hosts).
type cachedPacket struct {
	off     int64  // capture time after T0, ns, idle gaps shortened (injection time at speedup 1)
	index   int64  // the record's index in its file (Packet.Index)
	tid     int32  // tuple id
	length  uint32 // L
	payload uint32 // TCP payload bytes
	file    uint16 // the file's position in Options.Traces
	tos     uint8  // DSCP << 2 | ECN
	control uint8  // the captured control packet it is (replacedTCPAck, ...), whatever the transport settings
}

// The cache is a list of chunks of cacheChunk packets (2 MiB): it grows without
// copying, and takes what it holds (the last chunk is cut to its packets once the
// pass ends).
const (
	cacheShift = 16
	cacheChunk = 1 << cacheShift
)

// traceCache is a prepared trace in memory.
type traceCache struct {
	chunks [][]cachedPacket
	n      int
}

// CacheEntryBytes is what a trace cache takes per replayed packet; each flow adds
// CacheFlowBytes.
const (
	CacheEntryBytes = int64(unsafe.Sizeof(cachedPacket{}))
	CacheFlowBytes  = int64(unsafe.Sizeof(arrival{}))
)

// DefaultCache is the memory the compact trace may take by default (Options.Cache,
// --cache): 16 M packets.
const DefaultCache = 512 << 20

// NoCache as Options.Cache keeps no trace in memory: every run reads the capture.
const NoCache = -1

// CacheLimit is the memory the compact trace may take (0: none).
func (o *Options) CacheLimit() int64 {
	switch {
	case o.Cache == 0:
		return DefaultCache
	case o.Cache < 0:
		return 0
	}
	return o.Cache
}

// add appends packet p of tuple tid at capture offset off, of control kind ctl.
func (c *traceCache) add(p *ingest.Packet, off int64, tid int32, ctl uint8) {
	i := c.n & (cacheChunk - 1)
	if i == 0 {
		c.chunks = append(c.chunks, make([]cachedPacket, cacheChunk))
	}
	n, _ := p.TCPPayload()
	c.chunks[len(c.chunks)-1][i] = cachedPacket{off: off, index: p.Index, tid: tid, length: p.TotalLen, payload: uint32(n),
		file: uint16(p.FileIndex), tos: p.DSCP<<2 | p.ECN&3, control: ctl}
	c.n++
}

// at returns packet i.
func (c *traceCache) at(i int) *cachedPacket { return &c.chunks[i>>cacheShift][i&(cacheChunk-1)] }

// done cuts the last chunk to the packets it holds.
func (c *traceCache) done() {
	if k := len(c.chunks) - 1; k >= 0 {
		c.chunks[k] = append([]cachedPacket(nil), c.chunks[k][:c.n-k*cacheChunk]...)
	}
}

// bytes is the memory the cache takes, with the per-flow fields of flows flows.
func (c *traceCache) bytes(flows int) int64 {
	return int64(c.n)*CacheEntryBytes + int64(flows)*CacheFlowBytes
}

// CacheBytes is the memory pr's trace cache takes, or would take (an estimate from
// the summary) when it has none.
func (pr *Prepared) CacheBytes() int64 {
	if pr.cache != nil {
		return pr.cache.bytes(len(pr.tuples.first))
	}
	return pr.Summary.Unicast*CacheEntryBytes + pr.Summary.UnicastFlows*CacheFlowBytes
}

// Cached reports whether pr replays its trace from memory
// (docs/model.md#one-pass-over-the-capture).
func (pr *Prepared) Cached() bool { return pr.cache != nil }

// OverCache reports whether the rule kept pr's trace in memory (Options.KeepsTrace)
// but the trace took more than the limit: the run reads the capture again.
func (pr *Prepared) OverCache() bool { return pr.keep && pr.cache == nil }

// ErrCacheTooLarge: the trace would take more memory than CacheTrace was allowed.
var ErrCacheTooLarge = errors.New("the trace does not fit in the cache's memory")

// CacheTrace keeps pr's trace in memory (CacheBytes, at most maxBytes, else
// ErrCacheTooLarge and no cache) for pr's Run and for every Prepared derived from pr
// afterwards (Derive). A Prepared whose pass kept the trace already has it; another
// reads the capture once more here. It must be called before they run.
func (pr *Prepared) CacheTrace(maxBytes int64) error {
	if pr.cache != nil {
		return nil
	}
	if need := pr.CacheBytes(); need > maxBytes {
		return fmt.Errorf("%w: %d bytes needed, %d allowed", ErrCacheTooLarge, need, maxBytes)
	}
	c, err := pr.readCache()
	if err != nil {
		return err
	}
	pr.cache = c
	return nil
}

// lazyCache is the trace cache a second pass read for the Prepareds derived from one
// preparation whose own pass did not keep it (--target-load of a derived point).
type lazyCache struct {
	once sync.Once
	c    *traceCache
	err  error
}

// readCache returns pr's trace cache, reading the capture once more (for every
// Prepared sharing pr's preparation) when pr has none.
func (pr *Prepared) readCache() (*traceCache, error) {
	if pr.cache != nil {
		return pr.cache, nil
	}
	lc := pr.lazy
	lc.once.Do(func() { lc.c, lc.err = pr.readTrace() })
	return lc.c, lc.err
}

// readTrace is the second pass that reads pr's trace into a cache: the packets of
// the first pass, in its order, with its tuple ids.
func (pr *Prepared) readTrace() (*traceCache, error) {
	r, err := openTrace(pr)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	clock := newIdleClock(pr.T0, pr.Opt.MaxIdle)
	c := &traceCache{}
	var p ingest.Packet
	for i := 0; ; i++ {
		if ctx := pr.Opt.Context; ctx != nil && i&0xffff == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ok, err := r.Next(&p)
		if err != nil {
			return nil, inputErrf("%w", err)
		}
		if !ok {
			c.done()
			return c, nil
		}
		if p.Multicast() {
			continue
		}
		tid := pr.tuples.lookup(p.Tuple())
		if tid < 0 {
			return nil, inputErrf("packet %d of %s: a flow the first pass did not see (the trace changed since it was read?)", p.Index, pr.Opt.Traces[p.FileIndex])
		}
		c.add(&p, clock.offset(p.Timestamp), tid, replacedKind(&everyControl, &p))
	}
}

// arrivals is where a run takes its trace's arrivals from: the capture (feed) or a
// trace cache (cacheFeed).
type arrivals interface {
	// Next returns the next arrival (valid until the following call), or nil at the
	// end of the trace or with an error.
	Next() (*arrival, error)
	Close() error
}

// cacheOrder walks a trace cache in replay order: copy 0 alone, or --replicate's
// copies merged by (time, copy), as the feed merges them (copy k's packets at their
// offsets plus its time offset, skipping the traces it does not hold).
type cacheOrder struct {
	c     *traceCache
	rp    *replication
	i     int        // without copies: the next packet
	next  []int      // with copies: each copy's next packet
	merge *copyMerge // with copies: the copies' next packets
}

func newCacheOrder(c *traceCache, rp *replication) *cacheOrder {
	o := &cacheOrder{c: c, rp: rp}
	if rp != nil {
		o.next, o.merge = make([]int, rp.copies), newCopyMerge(rp.copies)
		for k := range rp.copies {
			o.advance(k)
		}
	}
	return o
}

// advance queues copy k's next packet it holds.
func (o *cacheOrder) advance(k int) {
	rp := o.rp
	i := o.next[k]
	for i < o.c.n && k >= rp.perFile[o.c.at(i).file] {
		i++
	}
	o.next[k] = i
	if i < o.c.n {
		o.merge.push(o.c.at(i).off+rp.offset[k], k)
	}
}

// step returns the next packet, its copy and its offset (the copy's time offset
// included), or nil at the end.
func (o *cacheOrder) step() (*cachedPacket, int, int64) {
	if o.rp == nil {
		if o.i == o.c.n {
			return nil, 0, 0
		}
		p := o.c.at(o.i)
		o.i++
		return p, 0, p.off
	}
	if o.merge.len() == 0 {
		return nil, 0, 0
	}
	off, k := o.merge.pop()
	p := o.c.at(o.next[k])
	o.next[k]++
	o.advance(k)
	return p, k, off
}

// cacheFeed replays a trace cache with its Prepared's host mapping, copies, speedup
// and transport. Flow ids are given in the order of each flow's first packet, the
// copies merged, as the feed gives them.
type cacheFeed struct {
	pr     *Prepared
	order  *cacheOrder
	a      arrival
	closed bool
	tcp    bool         // closed loop replaces captured TCP pure ACKs
	roce   bool         // ... and RoCEv2 ACKs, NAKs and CNPs
	fids   [][]int32    // per copy, per tuple id: the flow id (unseenFlow before its first packet, noFlow intra-host)
	flows  []arrival    // per flow id: the flow's fields, hosts and copy
	intra  [][][2]int32 // per copy, per tuple id: the hosts of an intra-host tuple
	n      int          // packets replayed, for the interrupt check
	ctxErr func() error // the run's context's Err, or nil
}

// unseenFlow marks a (copy, tuple) whose first packet the run has not replayed yet.
const unseenFlow = -2

func newCacheFeed(pr *Prepared) *cacheFeed {
	tr := &pr.Opt.Config.Transport
	closed := pr.closedLoop()
	f := &cacheFeed{pr: pr, order: newCacheOrder(pr.cache, pr.repl), closed: closed,
		tcp: closed && tr.Tcp != config.TcpOpen, roce: closed && tr.Roce != config.RoceOpen}
	copies := 1
	if pr.repl != nil {
		copies = pr.repl.copies
	}
	f.fids, f.intra = make([][]int32, copies), make([][][2]int32, copies)
	for k := range f.fids {
		f.fids[k] = make([]int32, len(pr.tuples.first))
		for i := range f.fids[k] {
			f.fids[k][i] = unseenFlow
		}
	}
	if ctx := pr.Opt.Context; ctx != nil {
		f.ctxErr = ctx.Err
	}
	return f
}

// flow gives tuple tid of copy k its flow id at its first packet.
func (f *cacheFeed) flow(k int, tid int32) int32 {
	src, dst := f.pr.hostsOf(tid, k)
	if src == dst {
		if f.intra[k] == nil {
			f.intra[k] = make([][2]int32, len(f.pr.tuples.first))
		}
		f.intra[k][tid] = [2]int32{src, dst}
		f.fids[k][tid] = noFlow
		return noFlow
	}
	a := f.pr.tuples.first[tid]
	if k > 0 {
		rp := f.pr.repl
		a.saddr, a.daddr = rp.addr(a.saddr, k), rp.addr(a.daddr, k)
	}
	fid := int32(len(f.flows))
	a.fid, a.src, a.dst, a.copy = fid, src, dst, uint16(k)
	f.flows = append(f.flows, a)
	f.fids[k][tid] = fid
	return fid
}

func (f *cacheFeed) Next() (*arrival, error) {
	if f.ctxErr != nil && f.n&0xfff == 0 {
		if err := f.ctxErr(); err != nil {
			return nil, err
		}
	}
	p, k, off := f.order.step()
	if p == nil {
		return nil, nil
	}
	f.n++
	fid := f.fids[k][p.tid]
	if fid == unseenFlow {
		fid = f.flow(k, p.tid)
	}
	a := &f.a
	if fid == noFlow {
		h := f.intra[k][p.tid]
		*a = arrival{fid: noFlow, src: h[0], dst: h[1], copy: uint16(k)}
	} else {
		*a = f.flows[fid]
	}
	a.at = f.pr.injectTime(off)
	a.traceIndex, a.length, a.dscp, a.ecn = f.pr.fileOffset[p.file]+p.index, p.length, p.tos>>2, p.tos&3
	a.data = p.control == notReplaced && (a.proto != 6 || p.payload > 0)
	if f.closed {
		a.payload = p.payload
		switch p.control {
		case replacedTCPAck:
			if f.tcp {
				a.replaced = p.control
			}
		case notReplaced:
		default:
			if f.roce {
				a.replaced = p.control
			}
		}
	}
	return a, nil
}

func (f *cacheFeed) Close() error { return nil }

// cacheBatches runs a cacheFeed on a goroutine of its own, a batch ahead of the
// simulation, as the feed reads a capture: the flow ids, hosts and injection times
// are computed beside the simulation when a second core is free, and its loop only
// injects. The arrivals are the cacheFeed's, in its order.
type cacheBatches struct {
	batches
	src *cacheFeed
}

func newCacheBatches(src *cacheFeed) *cacheBatches {
	q := &cacheBatches{src: src}
	q.start(q.produce)
	return q
}

func (q *cacheBatches) produce() {
	for {
		b := q.take()
		if b == nil {
			return
		}
		for b.n < len(b.as) {
			a, err := q.src.Next()
			if err != nil || a == nil {
				b.last, b.err = true, err
				break
			}
			b.as[b.n] = *a
			b.n++
		}
		if !q.give(b) || b.last {
			return
		}
	}
}

// Close stops the goroutine.
func (q *cacheBatches) Close() error {
	q.stop()
	return q.src.Close()
}
