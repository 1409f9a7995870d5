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
	payload      uint32 // TCP payload bytes (closed loop)
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

// feed reads and prepares arrivals on its own goroutine. Next and Close are called
// from one goroutine (the simulation's).
type feed struct {
	pr     *Prepared
	r      *ingest.Reader
	full   chan *arrivalBatch
	free   chan *arrivalBatch
	done   chan struct{}
	wg     sync.WaitGroup
	cur    *arrivalBatch
	i      int
	flows  flowTable
	hosts  [][2]int32 // per flow id: source and destination host
	clock  idleClock  // capture time to replay time (idle gaps shortened)
	closed bool       // closed loop: classify replaced packets, keep TCP payloads
}

func newFeed(pr *Prepared, r *ingest.Reader) *feed {
	f := &feed{pr: pr, r: r, full: make(chan *arrivalBatch, feedBatches),
		free: make(chan *arrivalBatch, feedBatches), done: make(chan struct{}),
		clock: newIdleClock(pr.T0, pr.Opt.MaxIdle), closed: pr.closedLoop()}
	for range feedBatches {
		f.free <- &arrivalBatch{as: make([]arrival, feedBatch)}
	}
	f.wg.Add(1)
	go f.read()
	return f
}

func (f *feed) read() {
	defer f.wg.Done()
	var p ingest.Packet
	for {
		var b *arrivalBatch
		select {
		case b = <-f.free:
		case <-f.done:
			return
		}
		b.n = 0
		var err error
		if ctx := f.pr.Opt.Context; ctx != nil {
			err = ctx.Err() // interrupted: end the feed with the context's error
		}
		for b.n < len(b.as) {
			ok := false
			if err == nil {
				ok, err = f.r.Next(&p)
			}
			if err == nil && ok {
				if p.Multicast() {
					continue // not simulated; the summary counts it (skipped.multicast)
				}
				err = f.prepare(&p, &b.as[b.n])
			}
			if err != nil || !ok {
				b.last, b.err = true, err
				break
			}
			b.n++
		}
		select {
		case f.full <- b:
		case <-f.done:
			return
		}
		if b.last {
			return
		}
	}
}

// prepare fills a from trace packet p. A known flow knows its hosts; the host map is
// consulted for the first packet of a flow (and for every intra-host packet, which
// has no flow).
func (f *feed) prepare(p *ingest.Packet, a *arrival) error {
	*a = arrival{at: f.pr.injectTime(f.clock.offset(p.Timestamp)), traceIndex: f.pr.fileOffset[p.FileIndex] + p.Index,
		saddr: p.Src, daddr: p.Dst, sport: p.SrcPort, dport: p.DstPort, length: p.TotalLen,
		proto: p.Proto, dscp: p.DSCP, ecn: p.ECN, laterFrag: p.Fragment && p.FragOffset != 0}
	if f.closed {
		// A replaced packet still belongs to its flow: flow ids stay those of an
		// open-loop replay of the trace, so that the two compare flow by flow.
		a.replaced = replacedKind(&f.pr.Opt.Config.Transport, p)
		n, _ := p.TCPPayload()
		a.payload = uint32(n)
	}
	fid, slot := f.flows.find(p)
	if fid >= 0 {
		a.fid, a.src, a.dst = fid, f.hosts[fid][0], f.hosts[fid][1]
		return nil
	}
	src, ok1 := f.pr.HostMap.Host(p.Src)
	dst, ok2 := f.pr.HostMap.Host(p.Dst)
	if !ok1 || !ok2 {
		return fmt.Errorf("packet %d of %s: endpoint not in the host map (the trace changed since it was read?)",
			p.Index, f.pr.Opt.Traces[p.FileIndex])
	}
	a.src, a.dst = src, dst
	if src == dst {
		a.fid = noFlow
		return nil
	}
	a.fid = int32(len(f.hosts))
	f.flows.insert(slot, p, a.fid)
	f.hosts = append(f.hosts, [2]int32{src, dst})
	return nil
}

// injectTime converts a capture time offset from T0 (ns, idle gaps shortened) to
// simulated time.
func (pr *Prepared) injectTime(d int64) units.Time {
	if pr.Opt.Speedup == 1 {
		return units.Time(d) * units.Nanosecond
	}
	return units.Time(float64(d) * 1000 / pr.Opt.Speedup)
}

// Next returns the next arrival (valid until the following call), or nil at the end
// of the trace or with an error.
func (f *feed) Next() (*arrival, error) {
	for {
		if b := f.cur; b != nil {
			if f.i < b.n {
				f.i++
				return &b.as[f.i-1], nil
			}
			if b.last {
				return nil, b.err
			}
			f.free <- b
			f.cur = nil
		}
		f.cur, f.i = <-f.full, 0
	}
}

// Close stops the reading goroutine and closes the reader.
func (f *feed) Close() error {
	close(f.done)
	f.wg.Wait()
	return f.r.Close()
}
