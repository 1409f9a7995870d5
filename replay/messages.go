package replay

import (
	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// Messages (docs/model.md#messages): each flow's data split, in capture order, into
// runs between idle gaps of at least MessageGap and turn-arounds (a data packet after
// data of the reverse direction), each with its own start, size, ideal and FCT
// (messages.arrow). A flow keeps its unsettled messages in a queue, oldest first:
// one allocation per message (amortized by the queue's growth), none per packet.
//
// Settling: open loop a message is complete when every one of its packets was
// delivered (its packets carry the message's number in Packet.Seq), dropped when one
// was dropped; closed loop when the receiver holds every segment up to its last
// (transport.Layer.Watch on the oldest unsettled message's last segment). A message
// settles once no later data can join it: the flow's next message started, or the
// reverse direction's did (a turn-around closes both), or the run ended.
//
// Causality (Transport.Causality request, closed loop, both directions re-sent): a
// message that follows a reverse-direction message at a turn-around is held until
// max(its captured time, that message's delivery + think time); its later segments
// keep their captured spacing, and every later packet of the flow waits behind it.

// message is one unsettled message of a flow: pointer-free, as are flowState and
// the flows' queues' contents, so that the garbage collector never scans them (the
// queues' headers are in sim.msgs, a slice per flow, and held arrivals in sim.held).
type message struct {
	start    units.Time // availability of its first data packet (-1: none injected yet)
	captured units.Time // its first data packet's captured (feed) time
	lastAt   units.Time // the captured time of its last data packet so far (think times)
	idealEnd units.Time // the latest ideal arrival of its packets
	done     units.Time // delivery of its last byte so far, -1 none
	delta    units.Time // causality: how much later than captured it became available, -1 unknown
	size     int64
	packets  int64
	arrived  int64 // open loop: packets delivered
	dropped  int64 // open loop: packets dropped
	lastSeg  int32 // closed loop: the index of its last segment in the flow, -1 none yet
	index    int32
	follows  int32 // the reverse flow's message it follows, -1 none (the reverse flow is flowState.rev)
	waiter   int32 // causality: the flow holding a message that follows this one, -1 none
	closed   bool  // no more data joins it
	settled  bool  // its row is written
}

// newMessage starts message index of flow fid at captured time at; follows is the
// reverse flow's message it follows (-1 none).
func (s *sim) newMessage(fid int32, f *flowState, at units.Time, follows int32) *message {
	q := append(s.msgs[fid], message{start: -1, captured: at, lastAt: at, done: -1, lastSeg: -1,
		index: f.nmsg, follows: follows, waiter: -1})
	s.msgs[fid] = q
	f.nmsg++
	return &q[len(q)-1]
}

// msgOf returns flow fid's unsettled message of the given index (nil if settled).
func (s *sim) msgOf(fid int32, f *flowState, index int32) *message {
	q := s.msgs[fid]
	i := int(index - f.msgBase)
	if i < 0 || i >= len(q) {
		return nil
	}
	return &q[i]
}

// classify assigns data arrival p of flow fid, captured (fed) at now, to a message:
// the flow's open one, or a new one after an idle gap of MessageGap or a turn-around,
// which closes the flow's open message and, at a turn-around, the reverse's.
func (s *sim) classify(now units.Time, fid int32, f *flowState) *message {
	// The connection's latest data sender (its two directions share a slot): the
	// reverse direction's means a turn-around.
	turn := s.lastSender[f.pair] == f.rev && f.rev >= 0
	s.lastSender[f.pair] = fid
	q := s.msgs[fid]
	if len(q) > 0 && !turn && now-f.lastData < s.msgGap {
		if m := &q[len(q)-1]; !m.closed { // the flow's open message: the queue's last
			m.lastAt = now
			f.lastData = now
			return m
		}
	}
	f.lastData = now
	if f.nmsg > 0 {
		s.closeMessage(fid, f, f.nmsg-1)
	}
	follows := int32(-1)
	if turn {
		rev := &s.flows[f.rev]
		follows = rev.nmsg - 1
		s.closeMessage(f.rev, rev, follows)
	}
	nm := s.newMessage(fid, f, now, follows)
	if s.causal && f.closed && follows >= 0 {
		nm.delta = s.await(fid, f, nm)
	}
	return nm
}

// closeMessage marks message index of flow fid closed (no more data joins it) and
// settles it if it is complete or dropped already.
func (s *sim) closeMessage(fid int32, f *flowState, index int32) {
	m := s.msgOf(fid, f, index)
	if m == nil || m.closed {
		return
	}
	m.closed = true
	if _, ok := finalOf(f, m); ok && index == f.msgBase {
		s.settleReady(fid, f)
	}
}

// injected counts a data piece of message m injected (open loop, Packet.Seq set by
// the caller) or offered as segment seg (closed loop, seg >= 0) at now, with its ideal
// arrival.
func (s *sim) injected(now units.Time, fid int32, f *flowState, m *message, piece int32, ideal units.Time, seg int32) {
	if m.start < 0 {
		m.start = now
	}
	m.size += int64(piece)
	m.packets++
	m.idealEnd = max(m.idealEnd, ideal)
	if seg >= 0 {
		m.lastSeg, m.done = seg, -1
		if m.index == f.msgBase { // the oldest unsettled: the watch is on it
			s.layer.Watch(fid, seg)
		}
	}
}

// SegmentsDelivered implements transport.Watcher: flow fid's receiver holds every
// segment before next. Every unsettled message whose last segment is before next was
// delivered now (the watch is on the oldest's last segment, so this is the first time
// any of them is), and the watch moves to the oldest still waiting.
func (s *sim) SegmentsDelivered(now units.Time, fid, next int32) {
	f := &s.flows[fid]
	q := s.msgs[fid]
	for i := range q {
		m := &q[i]
		if m.lastSeg < 0 && m.packets > 0 {
			continue // every piece dropped at the source (--oversize drop)
		}
		if m.lastSeg < 0 || m.lastSeg >= next {
			break
		}
		if m.done < 0 {
			m.done = now
		}
	}
	s.settleReady(fid, f)
	if q := s.msgs[fid]; len(q) > 0 {
		if m := &q[0]; m.lastSeg >= next {
			s.layer.Watch(fid, m.lastSeg)
		}
	}
}

// openDelivered counts a delivered (or dropped) open-loop data packet of message
// number seq (Packet.Seq: index + 1) of flow fid.
func (s *sim) openDelivered(now units.Time, fid int32, seq int32, dropped bool) {
	f := &s.flows[fid]
	m := s.msgOf(fid, f, seq-1)
	if m == nil {
		return
	}
	if dropped {
		m.dropped++
	} else {
		m.arrived++
		m.done = max(m.done, now)
	}
	if m.closed && m.arrived+m.dropped == m.packets && m.index == f.msgBase {
		s.settleReady(fid, f)
	}
}

// settleReady writes, in order from the oldest, the rows of f's closed messages
// that are final: complete, or, open loop, with every packet delivered or dropped
// (closed loop: a piece dropped at the source), waking the flows waiting on them;
// the queue keeps the rest.
func (s *sim) settleReady(fid int32, f *flowState) {
	q := s.msgs[fid]
	n := 0
	for ; n < len(q); n++ {
		m := &q[n]
		c, ok := finalOf(f, m)
		if !m.closed || !ok {
			break
		}
		s.settle(fid, f, m, c)
	}
	if n > 0 {
		// Keep the backing array (no allocation per message in steady state): the
		// unsettled messages move to its front.
		q = s.msgs[fid]
		q = q[:copy(q, q[n:])]
		f.msgBase += int32(n)
		s.msgs[fid] = q
	}
}

// finalOf is message m's completion if it is final: closed loop complete when its
// last byte was delivered (dropped when --oversize drop took a piece at the source),
// open loop when every packet was delivered (dropped when one was dropped).
func finalOf(f *flowState, m *message) (records.Completion, bool) {
	switch {
	case f.closed && m.dropped > 0 && (m.done >= 0 || m.lastSeg < 0):
		return records.CompletionDropped, true
	case f.closed && m.done >= 0:
		return records.CompletionComplete, true
	case !f.closed && m.packets > 0 && m.arrived+m.dropped == m.packets:
		if m.dropped > 0 {
			return records.CompletionDropped, true
		}
		return records.CompletionComplete, true
	}
	return 0, false
}

// settle writes message m's row and releases a flow held until its delivery.
func (s *sim) settle(fid int32, f *flowState, m *message, c records.Completion) {
	m.settled = true
	r := &s.msgRow
	*r = records.MessageRow{FlowID: int64(fid), Message: m.index, StartPs: int64(m.start), CapturedPs: int64(m.captured),
		Packets: m.packets, SizeBytes: m.size, FollowsFlowID: -1, FollowsMessage: -1, Completion: c}
	if m.start < 0 { // nothing of it was injected: the run ended first (causality)
		r.StartPs = int64(m.captured)
	}
	if m.follows >= 0 {
		r.FollowsFlowID, r.FollowsMessage = int64(f.rev), m.follows
	}
	if m.start >= 0 {
		r.IdealFctPs = int64(m.idealEnd - m.start)
		if c == records.CompletionComplete {
			r.FctPs = int64(m.done - m.start)
		}
	}
	s.setErr(s.w.Messages.Append(r))
	f.lastSettled = settledMessage{index: m.index, done: -1, lastAt: m.lastAt}
	if c == records.CompletionComplete {
		f.lastSettled.done = m.done
		if m.waiter >= 0 {
			s.triggered(m.waiter, m)
		}
	}
}

// settledMessage is what causality needs of a flow's latest settled message.
type settledMessage struct {
	index        int32
	done, lastAt units.Time
}

// settleAll writes the rows of every unsettled message at the end of the run, each
// closed by it: complete when every byte arrived, otherwise as its flow ended.
func (s *sim) settleAll() {
	for fid := range s.flows {
		f := &s.flows[fid]
		for i := range s.msgs[fid] {
			s.msgs[fid][i].closed = true
		}
		s.settleReady(int32(fid), f)
		q := s.msgs[fid]
		for i := range q {
			m := &q[i]
			if m.settled {
				continue
			}
			c, ok := finalOf(f, m)
			switch {
			case ok:
			case f.closed:
				c = records.CompletionMaxDrain
			case m.dropped > 0:
				c = records.CompletionDropped
			default:
				c = records.CompletionUndrained
			}
			s.settle(int32(fid), f, m, c)
		}
		s.msgs[fid] = nil
	}
}

// linkReverse connects flow fid with its reverse direction's flow (the reversed
// 5-tuple), if it has one yet: at the later one's first packet, one map lookup per
// flow.
func (s *sim) linkReverse(fid int32, f *flowState) {
	f.rev, f.pair = -1, fid
	if s.byTuple == nil {
		s.byTuple = map[ingest.FiveTuple]int32{}
	}
	t := f.tuple
	if r, ok := s.byTuple[ingest.FiveTuple{Src: t.Dst, Dst: t.Src, SrcPort: t.DstPort, DstPort: t.SrcPort, Proto: t.Proto}]; ok {
		f.rev, f.pair = r, s.flows[r].pair
		s.flows[r].rev = fid
	}
	s.byTuple[t] = fid
}

// seqOf is the open-loop Packet.Seq of a data piece of message m: its number + 1 (0
// marks a packet outside every message).
func seqOf(m *message) int32 {
	if m == nil {
		return 0
	}
	return m.index + 1
}

// isOpenData reports an open-loop data packet that belongs to a message.
func isOpenData(p *switchmodel.Packet) bool { return p.Class == switchmodel.OpenData && p.Seq > 0 }

// heldArrival is an arrival held back by causality: its captured (fed) time and the
// message it belongs to (data) or follows (the flow's open message at the time; -1
// before its first).
type heldArrival struct {
	a        arrival
	captured units.Time
	msg      int32
	data     bool
}

// heldQueue is a flow's held arrivals, oldest first, in a ring that grows by
// doubling: no allocation per packet once it is large enough.
type heldQueue struct {
	buf         []heldArrival
	head, n     int
	lastRelease units.Time // when the flow's last held arrival was released
	event       units.Time // the pending release event's time, -1 none
}

func (q *heldQueue) push(h heldArrival) {
	if q.n == len(q.buf) {
		nb := make([]heldArrival, max(16, 2*len(q.buf)))
		for i := 0; i < q.n; i++ {
			nb[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = nb, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = h
	q.n++
}

func (q *heldQueue) front() *heldArrival { return &q.buf[q.head] }

func (q *heldQueue) pop() {
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	if q.n == 0 {
		q.buf, q.head = nil, 0
	}
}

// evRelease is the sim handler's event kind that releases a flow's held arrivals;
// arg is the flow id.
const evRelease int32 = 1

// await is the causality of a new message nm of closed-loop flow fid that follows
// message nm.follows of the reverse flow, fed at now: its delay against its captured
// time, max(0, that message's delivery - its last packet's captured time) (so that it
// is available at the later of its captured time and the delivery plus the captured
// think time), or -1 while that message is not delivered (the reverse flow wakes it:
// triggered). Open-loop reverse flows impose nothing.
func (s *sim) await(fid int32, f *flowState, nm *message) units.Time {
	rev := &s.flows[f.rev]
	if !rev.closed {
		return 0
	}
	if t := s.msgOf(f.rev, rev, nm.follows); t != nil {
		t.waiter = fid
		return -1
	}
	// Settled already: it was the reverse flow's latest settled message.
	if ls := rev.lastSettled; ls.index == nm.follows && ls.done >= 0 {
		return max(0, ls.done-ls.lastAt)
	}
	return 0 // settled without being delivered: nothing to wait for
}

// triggered: message t of flow f.rev, followed by a message of flow wid, was
// delivered; the follower's delay is known and its held arrivals may go.
func (s *sim) triggered(wid int32, t *message) {
	q := s.msgs[wid]
	for i := range q {
		if m := &q[i]; m.follows == t.index && m.delta < 0 {
			m.delta = max(0, t.done-t.lastAt)
		}
	}
	s.release(wid)
}

// hold queues arrival p of flow fid, fed at now, behind the flow's held ones.
func (s *sim) hold(now units.Time, fid int32, f *flowState, p *arrival, m *message) {
	h := heldArrival{a: *p, captured: now, msg: f.nmsg - 1, data: m != nil}
	q := s.held[fid]
	if q == nil {
		if s.held == nil {
			s.held = map[int32]*heldQueue{}
		}
		q = &heldQueue{event: -1}
		s.held[fid] = q
	}
	q.push(h)
	s.layer.Expect(1)
	if q.n == 1 {
		s.release(fid)
	}
}

// release injects flow fid's held arrivals whose time has come: an arrival of a
// message delayed by delta at its captured time + delta, never before the flow's
// previous release; it waits while its message's delay is unknown, and schedules a
// release event for the next one due later.
func (s *sim) release(fid int32) {
	f := &s.flows[fid]
	q := s.held[fid]
	if q == nil {
		return
	}
	// A release acts as the flow's source host (docs/model.md#event-order-and-determinism),
	// also when another node's event settles the message it waited for (a switch's
	// drop can settle a dropped message and with it a delivered one behind it).
	act := s.eng.Actor()
	s.eng.ActAs(s.net.Hosts()[f.src].ID())
	defer s.eng.RestoreActor(act)
	now := s.eng.Now()
	for q.n > 0 {
		h := q.front()
		var m *message
		delta := units.Time(0)
		if h.msg >= 0 {
			if mm := s.msgOf(fid, f, h.msg); mm != nil {
				if mm.delta < 0 {
					return // waits for the message it follows (triggered)
				}
				delta = mm.delta
				if h.data {
					m = mm
				}
			}
		}
		at := max(h.captured+delta, q.lastRelease)
		if at > now {
			if q.event != at {
				q.event = at
				s.eng.Schedule(at, s.hid, evRelease, int64(fid))
			}
			return
		}
		a := h.a
		q.pop()
		q.lastRelease = now
		s.layer.Expect(-1)
		s.place(now, fid, f, &a, m)
		if q.n == 0 {
			delete(s.held, fid)
			return
		}
	}
}
