package replay

import (
	"fmt"
	"sync"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/units"
)

// The feed: the run pass reads the capture on a goroutine of its own and prepares each
// packet for injection there, a batch at a time: its injection time, its trace index,
// its flow id (in first-seen order) and its hosts. Reading, decoding and the flow and
// host lookups thus overlap with the simulation when a second core is free, and the
// simulation's loop only injects. The arrivals come in trace order, exactly as the
// simulation would have computed them; the batches are recycled (no allocation per
// batch) and at most feedBatches exist, so memory stays bounded.
const (
	feedBatch   = 1024 // arrivals per batch
	feedBatches = 4
)

// arrival is a trace packet prepared for injection: 96 bytes.
type arrival struct {
	at           units.Time // injection time
	traceIndex   int64
	fid          int32  // flow id; noFlow when source and destination map to one host
	src, dst     int32  // host indices
	length       uint32 // packet size L (IPv4 total length, 40 + IPv6 payload length)
	saddr, daddr ipaddr.Addr
	sport, dport uint16
	proto        uint8
	dscp, ecn    uint8
	laterFrag    bool   // a non-first fragment: no ports in the ECMP key
	replaced     uint8  // closed loop: a captured control packet not injected (replacedTCPAck, ...)
	copy         uint16 // --replicate: the copy (0: the capture itself)
	payload      uint32 // TCP payload bytes (closed loop)
	data         bool   // it carries data, so belongs to a message (docs/model.md#messages)
}

// noFlow is arrival.fid of an intra-host packet.
const noFlow = -1

func (a *arrival) tuple() ingest.FiveTuple {
	return ingest.FiveTuple{Src: a.saddr, Dst: a.daddr, SrcPort: a.sport, DstPort: a.dport, Proto: a.proto}
}

type arrivalBatch struct {
	as   []arrival
	n    int   // arrivals in as
	last bool  // the feed ended after these arrivals
	err  error // ... with this error (nil: end of the trace)
}

// batches carries arrival batches from a producing goroutine to the simulation's:
// full ones to it, used ones back, at most feedBatches in all.
type batches struct {
	full chan *arrivalBatch
	free chan *arrivalBatch
	done chan struct{}
	wg   sync.WaitGroup
	cur  *arrivalBatch
	i    int
}

// start makes the batches and starts produce on a goroutine of its own.
func (q *batches) start(produce func()) {
	q.full, q.free, q.done = make(chan *arrivalBatch, feedBatches), make(chan *arrivalBatch, feedBatches), make(chan struct{})
	for range feedBatches {
		q.free <- &arrivalBatch{as: make([]arrival, feedBatch)}
	}
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		produce()
	}()
}

// take returns a free batch for the producer, or nil once stopped.
func (q *batches) take() *arrivalBatch {
	select {
	case b := <-q.free:
		b.n = 0
		return b
	case <-q.done:
		return nil
	}
}

// give hands b to the consumer; false once stopped.
func (q *batches) give(b *arrivalBatch) bool {
	select {
	case q.full <- b:
		return true
	case <-q.done:
		return false
	}
}

// Next returns the next arrival (valid until the following call), or nil at the end
// of the trace or with the producer's error.
func (q *batches) Next() (*arrival, error) {
	for {
		if b := q.cur; b != nil {
			if q.i < b.n {
				q.i++
				return &b.as[q.i-1], nil
			}
			if b.last {
				return nil, b.err
			}
			q.free <- b
			q.cur = nil
		}
		q.cur, q.i = <-q.full, 0
	}
}

// stop stops the producer and waits for it.
func (q *batches) stop() {
	close(q.done)
	q.wg.Wait()
}

// feed reads and prepares arrivals on its own goroutine. Next and Close are called
// from one goroutine (the simulation's).
type feed struct {
	batches
	pr     *Prepared
	r      *ingest.Reader
	flows  flowTable
	hosts  [][2]int32   // per flow id: source and destination host
	clock  idleClock    // capture time to replay time (idle gaps shortened)
	closed bool         // closed loop: classify replaced packets, keep TCP payloads
	load   *offeredLoad // when not nil, the run's offered load (docs/model.md#offered-load)
	copies *copyFeed    // --replicate: every copy's reader, merged; nil: r alone
}

// copyFeed reads the capture once per copy of --replicate and merges the copies by
// (time, copy): copy k's packets at their capture offsets plus its time offset, each
// with its own idle clock (the same for all), skipping the traces it does not hold.
type copyFeed struct {
	rp     *replication
	rs     []*ingest.Reader // rs[0] is feed.r
	clocks []idleClock
	pkts   []ingest.Packet
	offs   []int64 // each copy's pending packet's offset (its time offset included)
	merge  *copyMerge
	cp     ingest.Packet // the copy being prepared, addresses rewritten
}

// newFeed starts reading pr's trace from r (and, with copies, from a reader per copy
// more), accounting the offered load into load when it is not nil.
func newFeed(pr *Prepared, r *ingest.Reader, load *offeredLoad) (*feed, error) {
	f := &feed{pr: pr, r: r,
		clock: newIdleClock(pr.T0, pr.Opt.MaxIdle), closed: pr.closedLoop(), load: load}
	if rp := pr.repl; rp != nil {
		c := &copyFeed{rp: rp, rs: []*ingest.Reader{r}, merge: newCopyMerge(rp.copies),
			clocks: make([]idleClock, rp.copies), pkts: make([]ingest.Packet, rp.copies), offs: make([]int64, rp.copies)}
		for k := 1; k < rp.copies; k++ {
			rk, err := openTrace(pr)
			if err != nil {
				for _, o := range c.rs {
					o.Close()
				}
				return nil, err
			}
			c.rs = append(c.rs, rk)
		}
		for k := range c.clocks {
			c.clocks[k] = newIdleClock(pr.T0, pr.Opt.MaxIdle)
		}
		f.copies = c
	}
	f.start(f.read)
	return f, nil
}

// fill reads copy k's next packet it holds into its pending slot and queues it; at
// the end of the capture the copy leaves the merge.
func (c *copyFeed) fill(k int) error {
	p := &c.pkts[k]
	for {
		ok, err := c.rs[k].Next(p)
		if err != nil || !ok {
			return err
		}
		if p.Multicast() {
			continue // not simulated; the summary counts it (skipped.multicast)
		}
		off := c.clocks[k].offset(p.Timestamp) // every copy's clock sees every packet
		if k >= c.rp.perFile[p.FileIndex] {
			continue // this copy does not hold the packet's trace
		}
		c.offs[k] = off + c.rp.offset[k]
		c.merge.push(c.offs[k], k)
		return nil
	}
}

// next returns the next packet of the merged copies (nil at the end), its offset and
// its copy.
func (c *copyFeed) next(started *bool) (*ingest.Packet, int64, int, error) {
	if !*started {
		*started = true
		for k := range c.rs {
			if err := c.fill(k); err != nil {
				return nil, 0, 0, err
			}
		}
	}
	if c.merge.len() == 0 {
		return nil, 0, 0, nil
	}
	off, k := c.merge.pop()
	c.cp = c.pkts[k] // the pending slot is refilled below
	if err := c.fill(k); err != nil {
		return nil, 0, 0, err
	}
	return &c.cp, off, k, nil
}

func (f *feed) read() {
	var p ingest.Packet
	started := false
	for {
		b := f.take()
		if b == nil {
			return
		}
		var err error
		if ctx := f.pr.Opt.Context; ctx != nil {
			err = ctx.Err() // interrupted: end the feed with the context's error
		}
		for b.n < len(b.as) {
			ok := false
			if c := f.copies; c != nil && err == nil {
				var q *ingest.Packet
				var off int64
				var k int
				if q, off, k, err = c.next(&started); q != nil && err == nil {
					ok = true
					err = f.prepareCopy(q, off, k, &b.as[b.n])
				}
			} else if err == nil {
				if ok, err = f.r.Next(&p); err == nil && ok {
					if p.Multicast() {
						continue // not simulated; the summary counts it (skipped.multicast)
					}
					err = f.prepare(&p, f.clock.offset(p.Timestamp), 0, &b.as[b.n])
				}
			}
			if err != nil || !ok {
				b.last, b.err = true, err
				break
			}
			b.n++
		}
		if !f.give(b) || b.last {
			return
		}
	}
}

// prepare fills a from packet p of copy k (0 without --replicate; a copy's addresses
// already rewritten) at capture offset off. A known flow knows its hosts; the host
// map is consulted for the first packet of a flow (and for every intra-host packet,
// which has no flow).
func (f *feed) prepare(p *ingest.Packet, off int64, k int, a *arrival) error {
	*a = arrival{at: f.pr.injectTime(off), traceIndex: f.pr.fileOffset[p.FileIndex] + p.Index, copy: uint16(k),
		saddr: p.Src, daddr: p.Dst, sport: p.SrcPort, dport: p.DstPort, length: p.TotalLen,
		proto: p.Proto, dscp: p.DSCP, ecn: p.ECN, laterFrag: p.Fragment && p.FragOffset != 0}
	n, _ := p.TCPPayload()
	if f.closed {
		// A replaced packet still belongs to its flow: flow ids stay those of an
		// open-loop replay of the trace, so that the two compare flow by flow.
		a.replaced = replacedKind(&f.pr.Opt.Config.Transport, p)
		a.payload = uint32(n)
	}
	if p.Proto == 6 {
		a.data = n > 0
	} else {
		a.data = replacedKind(&everyControl, p) == notReplaced
	}
	fid, slot := f.flows.find(p)
	if fid >= 0 {
		a.fid, a.src, a.dst = fid, f.hosts[fid][0], f.hosts[fid][1]
		if f.load != nil {
			f.load.add(a.at, a.src, a.dst, a.length)
		}
		return nil
	}
	src, dst, err := f.hostsOf(p, int(a.copy))
	if err != nil {
		return err
	}
	a.src, a.dst = src, dst
	if src == dst {
		a.fid = noFlow
		return nil
	}
	a.fid = int32(len(f.hosts))
	f.flows.insert(slot, p, a.fid)
	f.hosts = append(f.hosts, [2]int32{src, dst})
	if f.load != nil {
		f.load.add(a.at, a.src, a.dst, a.length)
	}
	return nil
}

// hostsOf maps packet p of copy k onto its hosts: its original addresses' hosts,
// rotated for a copy.
func (f *feed) hostsOf(p *ingest.Packet, k int) (src, dst int32, err error) {
	sa, da := p.Src, p.Dst
	if k > 0 {
		rp := f.pr.repl
		sa, da = rp.original(sa, k), rp.original(da, k)
	}
	src, ok1 := f.pr.HostMap.Host(sa)
	dst, ok2 := f.pr.HostMap.Host(da)
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("packet %d of %s: endpoint not in the host map (the trace changed since it was read?)",
			p.Index, f.pr.Opt.Traces[p.FileIndex])
	}
	if k > 0 {
		src, dst = f.pr.repl.hostOf[k][src], f.pr.repl.hostOf[k][dst]
	}
	return src, dst, nil
}

// prepareCopy fills a from packet p of copy k at offset off (its time offset
// included): copy 0 as prepare does, a copy with its addresses rewritten.
func (f *feed) prepareCopy(p *ingest.Packet, off int64, k int, a *arrival) error {
	if k > 0 {
		rp := f.pr.repl
		p.Src, p.Dst = rp.addr(p.Src, k), rp.addr(p.Dst, k)
	}
	return f.prepare(p, off, k, a)
}

// injectTime converts a capture time offset from T0 (ns, idle gaps shortened) to
// simulated time.
func (pr *Prepared) injectTime(d int64) units.Time { return injectAt(d, pr.Opt.Speedup) }

// injectAt is injectTime at speedup.
func injectAt(d int64, speedup float64) units.Time {
	if speedup == 1 {
		return units.Time(d) * units.Nanosecond
	}
	return units.Time(float64(d) * 1000 / speedup)
}

// Close stops the reading goroutine and closes the readers.
func (f *feed) Close() error {
	f.stop()
	if c := f.copies; c != nil {
		for _, r := range c.rs[1:] {
			r.Close()
		}
	}
	return f.r.Close()
}
