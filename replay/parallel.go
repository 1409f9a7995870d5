package replay

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tracefabric/tracefabric/fabric"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/transport"
)

// The parallel engine's replay side (docs/parallel.md sections 1 and 3, stage 1):
// an open-loop run without Events runs as the partitions of fabric.Partition's plan
// (switchmodel.Network.DrainPartitionedFed). The coordinator (the run's goroutine)
// reads the feed a window ahead: at each barrier it creates the window's new flows
// (their ECMP keys), computes each data packet's message number (Packet.Seq) from
// the trace alone, and schedules each arrival's injection event, with the packets
// ready, in its source host's partition, with the sequential run's key (the feed
// index). The partition's event makes and injects the packets and notes the
// arrival; the notes come back to the coordinator in key order, merged with the
// partitions' observations, and the replay's bookkeeping of the injection (sim.inject
// without the NIC part) runs there, exactly where the sequential run makes it.

// planThreads is the replay's use of the threads: run.json simulation.threads.
func (s *sim) planThreads(asked int) (*fabric.Plan, records.Threads) {
	t := records.Threads{Asked: asked, Used: 1}
	reason := ""
	switch {
	case asked <= 1:
		reason = "1 thread"
	case s.causal:
		reason = "closed loop with Transport.Causality: request is not partitioned yet"
	case s.ev != nil:
		reason = "Events (failures and operations) are not partitioned yet"
	}
	if reason != "" {
		t.Reason = reason
		return nil, t
	}
	plan, err := fabric.Partition(s.pr.Topo.Fabric, asked)
	if err != nil {
		t.Reason = err.Error()
		return nil, t
	}
	t.Reason = plan.Reason
	if plan.Parts < 2 {
		return nil, t
	}
	t.Used = plan.Parts
	return plan, t
}

// errSequential asks Prepared.Run for the run again on the sequential engine: the
// partitioned one met what it does not handle yet (a PFC deadlock check).
type errSequential struct{ reason string }

func (e errSequential) Error() string { return "run again sequentially: " + e.reason }

// parFeed is the partitioned run's injection feed, its injection handler (in the
// partitions) and its note observer (on the coordinator).
type parFeed struct {
	s     *sim
	hid   switchmodel.HandlerID
	of    []int32
	hosts []*switchmodel.Host
	q     []parQueue   // per partition: the window's injections and their packets
	arr   []parArrival // the arrivals fed and not yet noted: arr[head:]
	head  int          // the next arrival the notes settle
	base  int64        // the feed index of arr[0]
	index uint64       // the next arrival's feed index
	at    units.Time
	// The message numbering (classify) from the trace alone: per flow, and the
	// connections' latest data senders.
	msg        []shadowMsg
	lastSender []int32
	cur        *parArrival // the arrival whose note is replayed
}

type parQueue struct {
	injs []parInj
	pkts []parPkt
}

// parInj is one arrival's injection: its host, its packets (pkts[first:first+n]),
// its place in parFeed.arr.
type parInj struct {
	host, first, n int32
	arr            int64 // its feed index
}

// parPkt is a packet ready for the NIC, as place fills it, or (closed) a segment
// to offer to the flow's sender.
type parPkt struct {
	traceIndex  int64
	fid         int32
	src, dst    int32
	length, seq int32
	payload     int32 // closed: the segment's payload
	key         switchmodel.KeyID
	dscp, ecn   uint8
	closed      bool
}

// parArrival is an arrival fed to the partitions, kept until its note: its
// injection time (the sequential run's, clamped to the previous one) and its
// packets' Seq.
type parArrival struct {
	a   arrival
	at  units.Time
	seq int32
}

type shadowMsg struct {
	lastData units.Time
	nmsg     int32
	open     bool
}

func newParFeed(s *sim, plan *fabric.Plan) *parFeed {
	pf := &parFeed{s: s, of: plan.Of, hosts: s.net.Hosts(), q: make([]parQueue, plan.Parts)}
	pf.hid = s.eng.RegisterShared(pf)
	s.net.SetNoteObserver(pf)
	return pf
}

// Next implements switchmodel.InjectionFeed.
func (pf *parFeed) Next() (units.Time, bool) {
	if pf.s.next == nil {
		return 0, false
	}
	return max(pf.s.next.at, pf.at), true
}

// Feed implements switchmodel.InjectionFeed: at a barrier, the arrivals before w
// into their source hosts' partitions. It stops the run on an error or Ctrl-C.
func (pf *parFeed) Feed(w units.Time) bool {
	s := pf.s
	if ctx := s.pr.Opt.Context; ctx != nil && ctx.Err() != nil && s.readErr == nil {
		s.readErr = ctx.Err()
	}
	if s.readErr != nil || s.obsErr != nil {
		return false
	}
	// Every injection of the last window ran (its note may be replayed only during
	// the next window: the arrivals are kept until then).
	for p := range pf.q {
		pf.q[p].injs, pf.q[p].pkts = pf.q[p].injs[:0], pf.q[p].pkts[:0]
	}
	if pf.head > 0 {
		k := copy(pf.arr, pf.arr[pf.head:])
		clear(pf.arr[k:])
		pf.arr, pf.base, pf.head = pf.arr[:k], pf.base+int64(pf.head), 0
	}
	for s.next != nil {
		at := max(s.next.at, pf.at)
		if at >= w {
			break
		}
		pf.at = at
		pf.prepare(at, s.next)
		s.advance()
		if s.readErr != nil {
			return false
		}
	}
	if s.next == nil {
		s.lastInj, s.doneInjecting = pf.at, true
	}
	return true
}

// prepare schedules arrival a's injection at at: the trace-only part of sim.inject
// (the flow's creation, its message number, its MTU pieces).
func (pf *parFeed) prepare(at units.Time, a *arrival) {
	s := pf.s
	pf.arr = append(pf.arr, parArrival{a: *a, at: at})
	pa := &pf.arr[len(pf.arr)-1]
	part := pf.of[pf.hosts[a.src].ID()]
	q := &pf.q[part]
	in := parInj{host: a.src, first: int32(len(q.pkts)), arr: pf.base + int64(len(pf.arr)-1)}
	if fid := a.fid; fid != noFlow {
		if int(fid) == len(s.flows) {
			s.newFlow(at, fid, a)
			pf.msg = append(pf.msg, shadowMsg{})
			pf.lastSender = append(pf.lastSender, -1)
		}
		f := &s.flows[fid]
		// As sim.inject and place: a captured control packet the closed-loop
		// receiver replaces is not injected; a closed-loop flow's sender is made at
		// its first injected packet, its pieces offered to it.
		skip := a.replaced != notReplaced && !f.keepCtl
		if a.data && !skip {
			pa.seq = pf.seqOf(at, fid, f)
		}
		if !skip && f.closed && !f.registered {
			if err := s.registerSender(fid, f, a); err != nil {
				s.setErr(err)
				skip = true
			}
		}
		length := int32(a.length)
		if !skip && (length <= s.mtu || s.pr.Opt.Oversize != OversizeDrop) {
			hdr := int32(a.length) - int32(a.payload)
			for length > 0 {
				piece := min(length, s.mtu)
				length -= piece
				q.pkts = append(q.pkts, parPkt{traceIndex: a.traceIndex, fid: fid, src: a.src, dst: a.dst,
					length: piece, seq: pa.seq, payload: max(0, piece-hdr), key: f.key, dscp: a.dscp, ecn: a.ecn, closed: f.closed})
				in.n++
			}
		}
	}
	q.injs = append(q.injs, in)
	s.net.ScheduleInjectionIn(pf.hosts[a.src], at, pf.index, pf.hid, 0, int64(part)<<32|int64(len(q.injs)-1))
	pf.index++
}

// seqOf is classify's message number + 1 for data arrival of flow fid at now, from
// the trace alone: a flow's data joins its open message unless the idle gap reached
// MessageGap or the connection turned around (which closes the reverse's message).
func (pf *parFeed) seqOf(now units.Time, fid int32, f *flowState) int32 {
	m := &pf.msg[fid]
	turn := pf.lastSender[f.pair] == f.rev && f.rev >= 0
	pf.lastSender[f.pair] = fid
	if m.open && !turn && now-m.lastData < pf.s.msgGap {
		m.lastData = now
		return m.nmsg
	}
	m.lastData = now
	if turn {
		pf.msg[f.rev].open = false
	}
	m.open = true
	m.nmsg++
	return m.nmsg
}

// Handle is the injection event, in the source host's partition: the arrival's
// note, then its packets into the NIC.
func (pf *parFeed) Handle(now units.Time, kind int32, arg int64) {
	q := &pf.q[arg>>32]
	in := &q.injs[int32(arg)]
	h := pf.hosts[in.host]
	net := h.Network()
	net.Engine().ActAs(h.ID())
	net.Note(in.arr)
	for i := in.first; i < in.first+in.n; i++ {
		d := &q.pkts[i]
		if d.closed {
			pf.s.layer.Offer(d.fid, transport.Segment{Length: d.length, Payload: d.payload, DSCP: d.dscp, ECN: d.ecn, TraceIndex: d.traceIndex})
			continue
		}
		id, pk := net.NewPacket()
		pk.FlowID = int64(d.fid)
		pk.TraceIndex = d.traceIndex
		pk.Key = d.key
		pk.Src, pk.Dst = d.src, d.dst
		pk.DSCP = d.dscp
		pk.ECN = d.ecn
		pk.Length = d.length
		pk.Seq = d.seq
		net.Inject(h, id)
	}
}

// Note implements switchmodel.NoteObserver: an arrival's injection, replayed in the
// sequential run's order: the replay's bookkeeping of it (Handle's and inject's).
func (pf *parFeed) Note(now units.Time, arg int64) {
	s := pf.s
	if pf.head == len(pf.arr) || arg != pf.base+int64(pf.head) || now != pf.arr[pf.head].at {
		s.setErr(fmt.Errorf("replay: parallel injection %d noted as %d at %v", pf.base+int64(pf.head), arg, now))
		return
	}
	pa := &pf.arr[pf.head]
	pf.head++
	pf.cur = pa
	s.inject(now, &pa.a)
	pf.cur = nil
	s.trace.arrivals++
	if pa.a.copy == 0 {
		s.trace.replayed++
	}
	if s.trace.replayed&0xffff == 0 {
		s.progress(false)
	}
}

// checkSeq: place's message number of the arrival whose note is replayed must be
// the one its packets carry.
func (pf *parFeed) checkSeq(m *message) {
	if got := seqOf(m); got != pf.cur.seq {
		pf.s.setErr(fmt.Errorf("replay: parallel injection of trace packet %d: message %d, its packets carry %d",
			pf.cur.a.traceIndex, got, pf.cur.seq))
	}
}

// parStatsHook, when set (benchmarks), gets every partitioned run's statistics.
var parStatsHook func(switchmodel.ParallelStats)

// runParallel runs the fed network as plan's partitions, from the first arrival
// (s.next) on; it returns errSequential when the run must be made sequentially.
func (s *sim) runParallel(plan *fabric.Plan) error {
	pf := s.par
	st, err := s.net.DrainPartitionedFed(plan.Of, plan.Parts, plan.Lookahead, pf, s.pr.Opt.MaxDrain)
	s.parStats = st
	if parStatsHook != nil {
		parStatsHook(st)
	}
	switch {
	case errors.Is(err, switchmodel.ErrFeedStopped):
		return nil // s.readErr or s.obsErr says why
	case errors.Is(err, switchmodel.ErrNotPartitioned):
		s.retry = true
		return errSequential{strings.TrimPrefix(err.Error(), switchmodel.ErrNotPartitioned.Error()+": ")}
	case err != nil:
		return err
	}
	// Undrained (the drain limit came first): the packets left are back in the
	// network (switchmodel rehome), where the end-of-run walks find them.
	return nil
}
