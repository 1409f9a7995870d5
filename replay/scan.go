package replay

import (
	"time"

	"github.com/tracefabric/tracefabric/ingest"
)

// The one pass over the capture (docs/model.md#one-pass-over-the-capture). Prepare
// decodes the capture once (ingest.SummarizeVisit), and everything a run needs before
// it simulates comes from that pass: the summary and the endpoints the host mapping
// places, the idle gaps --max-idle shortens, the trace's 5-tuples in first-seen
// order (tuple ids), the closed-loop facts of every TCP and RoCEv2 flow (whatever
// the run's transport, so that the runs derived from the preparation share them),
// and the trace itself in a compact form (traceCache: 32 bytes per replayed packet)
// as long as it fits in Options.Cache, when Options.KeepsTrace says keeping it pays
// (a compressed capture or a pipe, copies, a target load, several runs; one run of
// plain files streams them a second time instead). The run then replays the packets
// from that form, and so do --replicate's copies, --target-load's search and every
// run derived from the preparation: the capture is decoded once. A trace whose compact
// form does not fit (or Options.Cache NoCache) is dropped from memory as soon as it
// passes the limit, and each run reads the capture a second time, streaming, on a
// goroutine of its own (and once more per copy of --replicate); --target-load keeps
// the compact form whatever the limit (its search evaluates every packet many
// times). The capture of a file out of timestamp order is read again with the
// reorder window from the first packet out of order on (ingest.Summarize).

// tupleTable numbers a trace's 5-tuples in the order of their first unicast packet
// (tuple ids) and keeps each one's per-flow fields.
type tupleTable struct {
	table flowTable
	// first holds, per tuple id, the fields of the flow's first packet that every
	// packet of the flow shares: addresses, ports, protocol, and whether it is a
	// later fragment (the flow's ECMP key and sender follow its first packet).
	first []arrival
}

// id returns packet p's tuple id, numbering a new tuple (and adding its facts).
func (t *tupleTable) id(p *ingest.Packet, facts *closedFacts) int32 {
	tid, slot := t.table.find(p)
	if tid >= 0 {
		return tid
	}
	tid = int32(len(t.first))
	t.table.insert(slot, p, tid)
	t.first = append(t.first, arrival{saddr: p.Src, daddr: p.Dst, sport: p.SrcPort, dport: p.DstPort, proto: p.Proto,
		laterFrag: p.Fragment && p.FragOffset != 0})
	facts.newTuple(p)
	return tid
}

// lookup returns the tuple id of ft, or -1 when the trace has no such flow. It only
// reads the table (runs in parallel call it).
func (t *tupleTable) lookup(ft ingest.FiveTuple) int32 {
	return t.table.get(ft.Src, ft.Dst, ft.SrcPort, ft.DstPort, ft.Proto)
}

// scanner is the Visitor of the one pass.
type scanner struct {
	maxIdle time.Duration
	budget  int64 // bytes the compact trace may take
	keepAll bool  // keep the compact trace whatever budget says (--target-load)

	started bool
	clock   idleClock
	tuples  *tupleTable
	facts   *closedFacts
	cache   *traceCache // nil once the trace passed budget (or with no cache at all)
}

func newScanner(opt *Options) *scanner {
	s := &scanner{maxIdle: opt.MaxIdle, budget: opt.CacheLimit(), keepAll: opt.TargetLoad > 0}
	s.Restart()
	return s
}

// Restart implements ingest.Visitor: everything starts again.
func (s *scanner) Restart() {
	s.started = false
	s.tuples = &tupleTable{}
	s.facts = newClosedFacts(s.tuples)
	s.cache = nil
	if s.budget > 0 || s.keepAll {
		s.cache = &traceCache{}
	}
}

// Visit implements ingest.Visitor: packet p of the merged capture, in replay order.
func (s *scanner) Visit(p *ingest.Packet) error {
	if p.Multicast() {
		return nil // not simulated; the summary counts it (skipped.multicast)
	}
	if !s.started {
		// The first unicast packet is the replay's time zero (Summary.FirstUnicast).
		s.started = true
		s.clock = newIdleClock(p.Timestamp, s.maxIdle)
	}
	off := s.clock.offset(p.Timestamp)
	tid := s.tuples.id(p, s.facts)
	ctl := replacedKind(&everyControl, p)
	s.facts.add(p, tid, ctl)
	if c := s.cache; c != nil {
		c.add(p, off, tid, ctl)
		if !s.keepAll && c.bytes(len(s.tuples.first)) > s.budget {
			s.cache = nil // over the limit: the run reads the capture again
		}
	}
	return nil
}

// idle is what the pass's idle clock removed.
func (s *scanner) idle() IdleStats {
	return IdleStats{MaxIdle: s.maxIdle, Gaps: s.clock.gaps, RemovedNs: s.clock.removed}
}
