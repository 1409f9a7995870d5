package switchmodel

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/tracefabric/tracefabric/internal/units"
)

// The partitioned engine (docs/parallel.md): the fabric's nodes divided into
// partitions, each a copy of the Network with its own Engine, packet arena, counters
// and observation log, its nodes pointing to it; partitions advance in windows of the
// lookahead (the smallest propagation delay of a cut link), in parallel, and meet at
// barriers, where the frames that crossed a cut link are delivered and the
// observations are handed to the Network's observers in key order; the buffer
// samplers run on the coordinator at barriers, the windows ending at their ticks.
// Stage 1 of docs/parallel.md section 7: open loop (no Agent), no failures, the
// packets injected with InjectAt before the run.

// cutFrame is a frame on a cut link: the receiving port and the frame (its arrival
// time and key with it).
type cutFrame struct {
	to *port
	p  Packet
}

// sendCut hands a frame that starts on a cut link to the partition's outbox for the
// receiver's partition; its arena slot is freed (the barrier copies it into the
// receiver's).
func (n *Network) sendCut(pt *port, id PacketID, p *Packet) {
	if p.Class == classPFC {
		pt.flightPFC-- // counted in flight by the receiver's side
	} else {
		n.par.cutOut++
	}
	q := n.par.of[pt.peer.core.id]
	n.par.out[n.par.part][q] = append(n.par.out[n.par.part][q], cutFrame{pt.peer, *p})
	n.free(id) // a draining partition left empty pauses (the frame is not lost: see drainBarrier)
}

// drainBarrier decides, after a draining window, whether the run ends: when every
// partition holds no packet and no frame is on a cut link, the network became empty
// at the latest pause key K* of the window; the partitions that paused earlier or
// waited run their events before K*, and if they made no packet the run ends there
// (true). Otherwise every paused or waiting partition finishes the window (events
// before W), pausing again if it empties again, until none is paused.
func (n *Network) drainBarrier(views []*Network, out [][][]cutFrame, skip []bool, W units.Time) bool {
	paused := make([]bool, len(views))
	for p, v := range views {
		paused[p] = !skip[p] && v.eng.stopped
	}
	empty := func() bool { return n.partsEmpty(views, out) }
	for {
		if empty() {
			var kAt units.Time
			var kOrd uint64
			found := false
			for p, v := range views {
				if paused[p] {
					at, ord := v.eng.Key()
					if !found || at > kAt || (at == kAt && ord > kOrd) {
						kAt, kOrd, found = at, ord, true
					}
				}
			}
			if !found {
				return true // empty since the window's start: the end was before it
			}
			for p, v := range views {
				if paused[p] || skip[p] {
					// Every event before K*, through any pause on the way.
					for v.eng.RunBeforeKey(kAt, kOrd) && v.eng.stopped {
					}
				}
			}
			if empty() {
				return true
			}
		}
		// Not the end: the paused and waiting partitions finish the window.
		again := false
		for p, v := range views {
			if paused[p] || skip[p] {
				skip[p] = false
				v.eng.RunUntil(W - 1)
				paused[p] = v.eng.stopped
				again = again || paused[p]
			}
		}
		if !again {
			return false
		}
	}
}

// obsKind is the kind of a logged observation.
type obsKind uint8

const (
	obsDrop obsKind = iota
	obsPFC
	obsDelivered
	obsNIC
	obsNote
	obsAgent
)

// obsEntry is one observation of a partition, with the key of the event it was made
// in: 32 bytes without pointers (no clearing, no write barriers); what the observer
// saw beyond its kind is in the log's side slices, at idx: the packet (it dies with
// the call) in pkts for a drop, a delivery and a NIC dequeue, the event in drops,
// pfcs or nics. A note carries its argument in arg, a delivery its time.
type obsEntry struct {
	at   units.Time
	ord  uint64
	arg  int64 // obsNote: the note's argument; obsDelivered: the time
	idx  int32
	kind obsKind
}

// obsDropRec and obsNICRec are DropEvent and NICEvent without their packet (in the
// log's pkts, at the entry's idx).
type obsDropRec struct {
	time       units.Time
	node, port int32
	pkt        int32 // in the log's pkts
	tc         uint8
	reason     DropReason
}

type obsNICRec struct {
	time    units.Time
	delay   units.Time
	backlog int64
	host    int32
	pkt     int32 // in the log's pkts; -1: none
	tc      uint8
}

// obsLog is a partition's observers: it logs what the Network's would have seen.
type obsLog struct {
	eng     *Engine
	entries []obsEntry
	pkts    []Packet
	drops   []obsDropRec
	pfcs    []PFCEvent
	nics    []obsNICRec
	ags     []AgentNote
}

func (l *obsLog) add(k obsKind, idx int, arg int64) {
	at, ord := l.eng.Key()
	l.entries = append(l.entries, obsEntry{at: at, ord: ord, arg: arg, idx: int32(idx), kind: k})
}

func (l *obsLog) Drop(d DropEvent) {
	l.add(obsDrop, len(l.drops), 0)
	l.drops = append(l.drops, obsDropRec{d.Time, d.Node, d.Port, int32(len(l.pkts)), d.TC, d.Reason})
	l.pkts = append(l.pkts, *d.Packet)
}

func (l *obsLog) Note(_ units.Time, arg int64) { l.add(obsNote, 0, arg) }

func (l *obsLog) PFC(p PFCEvent) {
	l.add(obsPFC, len(l.pfcs), 0)
	l.pfcs = append(l.pfcs, p)
}

// NoteAgent logs a PartitionedAgent's observation during a partitioned run (with
// the current event's key), handed back with AgentNoted on the coordinator in key
// order. Outside a partitioned run it is handed back at once.
func (n *Network) NoteAgent(a AgentNote) {
	if n.par == nil {
		n.agent.(PartitionedAgent).AgentNoted(a)
		return
	}
	l := n.par.log
	l.add(obsAgent, len(l.ags), 0)
	l.ags = append(l.ags, a)
}

func (l *obsLog) Delivered(now units.Time, p *Packet) {
	l.add(obsDelivered, len(l.pkts), int64(now))
	l.pkts = append(l.pkts, *p)
}

func (l *obsLog) NICDequeue(ev NICEvent) {
	l.add(obsNIC, len(l.nics), 0)
	r := obsNICRec{ev.Time, ev.Delay, ev.Backlog, ev.Host, -1, ev.TC}
	if ev.Packet != nil {
		r.pkt = int32(len(l.pkts))
		l.pkts = append(l.pkts, *ev.Packet)
	}
	l.nics = append(l.nics, r)
}

// swap exchanges the contents of two logs (not their engines).
func (l *obsLog) swap(o *obsLog) {
	l.entries, o.entries = o.entries, l.entries
	l.pkts, o.pkts = o.pkts, l.pkts
	l.drops, o.drops = o.drops, l.drops
	l.pfcs, o.pfcs = o.pfcs, l.pfcs
	l.nics, o.nics = o.nics, l.nics
	l.ags, o.ags = o.ags, l.ags
}

// reset empties the log, keeping its memory.
func (l *obsLog) reset() {
	l.entries, l.pkts, l.drops, l.pfcs, l.nics, l.ags = l.entries[:0], l.pkts[:0], l.drops[:0], l.pfcs[:0], l.nics[:0], l.ags[:0]
}

// parState is what a partition's Network copy knows of the partitioning.
type parState struct {
	part int32
	log  *obsLog        // the partition's observation log
	of   []int32        // partition of every node
	out  [][][]cutFrame // out[from][to]: the outboxes (shared: each partition appends to its own row)
	err  error          // a feature the partitioned engine does not handle yet was met
	// cutOut, cutIn: the packets (not PFC frames) sent into and received from cut
	// links (conservation per partition, barrierCheck).
	cutOut, cutIn int64
	// wakes: the buffer samplers an injection found idle, with the injection's key,
	// applied by the coordinator at the barrier.
	wakes []samplerWake
}

type samplerWake struct {
	at      units.Time
	ord     uint64
	sampler int
}

func (ps *parState) wake(e *Engine, sampler int) {
	at, ord := e.Key()
	ps.wakes = append(ps.wakes, samplerWake{at, ord, sampler})
}

// applyWakes wakes the samplers the partitions' injections found idle, in key order
// (the first wakes a sampler; the later ones find it awake, as in the sequential run).
func (n *Network) applyWakes(views []*Network) {
	var all []samplerWake
	for _, v := range views {
		all = append(all, v.par.wakes...)
		v.par.wakes = v.par.wakes[:0]
	}
	slices.SortFunc(all, func(a, b samplerWake) int {
		switch {
		case a.at < b.at || (a.at == b.at && a.ord < b.ord):
			return -1
		case a.at == b.at && a.ord == b.ord && a.sampler == b.sampler:
			return 0
		}
		return 1
	})
	for _, w := range all {
		if sm := n.samplers[w.sampler]; sm.idle {
			sm.wake(w.at)
		}
	}
}

// ParallelStats describe a partitioned run.
type ParallelStats struct {
	Partitions int
	Lookahead  units.Time
	Windows    int64 // windows run
	// Critical is the sum over windows of the busiest partition's events: the
	// events handled one after another; total events / Critical bounds the speedup.
	Critical  uint64
	CutFrames int64           // frames delivered across cut links
	Events    []uint64        // events handled per partition
	Global    uint64          // global events (the samplers' ticks), run at barriers
	Busy      time.Duration   // the partitions' time in their windows, summed
	PartBusy  []time.Duration // each partition's time in its windows (partition 0's on the caller's goroutine)
	Wall      time.Duration   // the run's wall time, from the first window on
	Setup     time.Duration   // making the partitions and dealing the pending events
	Barriers  time.Duration   // the coordinator's work at barriers (cut frames, observations)
	// Drained: DrainPartitioned ended because the network held no packet.
	Drained bool
	// Waiting is the time the partitions spent idle at barriers, summed:
	// Partitions * Wall - Busy.
	Waiting time.Duration
}

// barrierCheck, when set (tests), is called at every barrier once the cut links'
// frames are delivered, with the partitions.
var barrierCheck func(views []*Network)

// ErrNotPartitioned wraps the reasons a network cannot run partitioned (yet).
var ErrNotPartitioned = errors.New("switchmodel: not partitioned")

// RunPartitioned runs the network to the end (every event handled, as Engine.Run)
// as the partitions of of (of[node] for every node, 0..parts-1) on parts goroutines:
// the records its observers get, its counters and every node's state at the end are
// those of Engine.Run. lookahead must not exceed the propagation delay of any link
// whose ends are in different partitions. The network must be started, with nothing
// handled yet, its only pending events InjectAt's (and node events); it must have no
// Agent and no failures, and its packets must drain: otherwise
// an error wrapping ErrNotPartitioned says why (and nothing has run), or, for a
// pause that lasts long enough to check for a deadlock, the run stops there.
func (n *Network) RunPartitioned(of []int32, parts int, lookahead units.Time) (ParallelStats, error) {
	return n.runPartitioned(of, parts, lookahead, false, 0)
}

// DrainPartitioned is RunPartitioned with Drain's end: it stops right after the
// event that leaves the network holding no packet (the injections pending count as
// held), or when the next event is later than limit, and reports in Drained whether
// the network drained; the events still pending then (timers) are left, as Drain
// leaves them, in the partitions (they are not handled later); a run that does not
// drain by limit is an error for now (its packets stay in the partitions' arenas,
// which the network's walks do not read yet: the network must not be used after
// that error, nor after a stop at a deadlock check). The run ends at the
// key of the sequential run's last event (docs/parallel.md section 1, termination):
// a partition pauses after the event that leaves it empty, one that holds nothing
// waits, and at a barrier where every partition is empty and no frame is on a cut
// link the paused and waiting partitions run their events before the latest pause
// key K*; if that makes no packet, the run ends at K*; else it goes on.
func (n *Network) DrainPartitioned(of []int32, parts int, lookahead, limit units.Time) (ParallelStats, error) {
	return n.runPartitioned(of, parts, lookahead, true, limit)
}

// InjectionFeed streams the injections of a partitioned run (DrainPartitionedFed)
// window by window, so that the whole stream need not be in memory: the run calls
// Next and Feed at every barrier, on its own goroutine.
type InjectionFeed interface {
	// Next returns the time of the next injection not yet scheduled (false: none left).
	Next() (units.Time, bool)
	// Feed schedules, with Network.ScheduleInjectionIn, every injection before w, in
	// feed order (their times not decreasing, their indexes increasing), and returns
	// false to stop the run here (an error, an interruption): the run then returns
	// ErrFeedStopped. It is called before every window, the drain's included (with
	// nothing left to schedule).
	Feed(w units.Time) bool
}

// ErrFeedStopped is returned by DrainPartitionedFed when its feed stopped the run.
var ErrFeedStopped = errors.New("switchmodel: the injection feed stopped the run")

// ScheduleInjectionIn is Engine.ScheduleInjection for an event that acts at host h:
// during a partitioned run (from InjectionFeed.Feed) it goes to h's partition's
// engine. Its handler runs there: it must touch nothing but h's partition (make its
// packets with h.Network().NewPacket and inject them there) and report what the
// rest of the program needs with Network.Note.
func (n *Network) ScheduleInjectionIn(h *Host, at units.Time, index uint64, hid HandlerID, kind int32, arg int64) {
	e := h.net.eng
	if at < e.now {
		at = e.now
	}
	e.ScheduleInjection(at, index, hid, kind, arg)
	n.lastInjAt, n.lastInjOrd = at, ordInjection|index
}

// DrainPartitionedFed is DrainPartitioned with the injections streamed by feed: the
// run is RunUntil's until the feed's last injection (events after it in its
// picosecond included only from the drain on), then Drain(that injection's time +
// maxDrain)'s, as the replay runs the sequential engine: no stop at an empty network
// before the last injection.
func (n *Network) DrainPartitionedFed(of []int32, parts int, lookahead units.Time, feed InjectionFeed, maxDrain units.Time) (ParallelStats, error) {
	n.feed, n.maxDrain = feed, maxDrain
	defer func() { n.feed = nil }()
	return n.runPartitioned(of, parts, lookahead, true, 0)
}

func (n *Network) runPartitioned(of []int32, parts int, lookahead units.Time, drain bool, limit units.Time) (ParallelStats, error) {
	st := ParallelStats{Partitions: parts, Lookahead: lookahead}
	feed := n.feed
	feeding := feed != nil
	if feeding {
		drain = false // until the last injection
	}
	setup := time.Now()
	if err := n.checkPartitioned(of, parts, lookahead); err != nil {
		return st, err
	}
	pa, _ := n.agent.(PartitionedAgent)
	pending := n.eng.takePending()
	samplerH := map[HandlerID]bool{}
	for _, sm := range n.samplers {
		samplerH[sm.h&^hGlobal] = true
	}
	for _, ev := range pending {
		he := n.eng.handlers[ev.hk>>8]
		if he.act.node < 0 && HandlerID(ev.hk>>8) != n.injectH && !samplerH[HandlerID(ev.hk>>8)] {
			n.eng.putBack(pending)
			return st, fmt.Errorf("%w: a global or shared handler's event is pending", ErrNotPartitioned)
		}
	}
	out := make([][][]cutFrame, parts)
	views := make([]*Network, parts)
	logs := make([]*obsLog, parts)
	// A fed run hands the observations of a window to the observers while the next
	// window runs (docs/parallel.md section 3, pipelining): the observers run on the
	// coordinator, from copies, and the partitions never read what they write.
	pipeline := feed != nil
	prev := make([]*obsLog, parts)
	for p := range prev {
		prev[p] = &obsLog{}
	}
	for p := range views {
		out[p] = make([][]cutFrame, parts)
		v := new(Network)
		*v = *n
		v.eng = n.eng.cloneEmpty()
		v.arena = newArena()
		v.injected, v.delivered, v.hops, v.dataHops, v.pfcFrames, v.ceMarked = 0, 0, 0, 0, 0, 0
		v.dropped, v.ctl = [NumDropReasons]int64{}, [NumClasses]ControlCounts{}
		v.dlStack, v.dlPath, v.deadlocks = nil, nil, nil
		v.par = &parState{part: int32(p), of: of, out: out}
		v.draining = drain
		v.feed = nil
		lg := &obsLog{eng: v.eng}
		v.par.log = lg
		if pa != nil {
			v.agent = partAgent{pa, int32(p)}
		}
		logs[p] = lg
		v.obs = Observers{}
		if n.obs.Drops != nil {
			v.obs.Drops = lg
		}
		if n.obs.PFC != nil {
			v.obs.PFC = lg
		}
		if n.obs.Deliveries != nil {
			v.obs.Deliveries = lg
		}
		if n.obs.NIC != nil {
			v.obs.NIC = lg
		}
		if n.obs.Notes != nil {
			v.obs.Notes = lg
		}
		v.obs.Buffer = n.obs.Buffer // the samplers run on the coordinator, at barriers
		views[p] = v
	}
	n.parts = views
	for _, nd := range n.nodes {
		c := nd.core()
		c.net = views[of[c.id]]
		for _, pt := range c.ports {
			pt.cutOut = of[pt.peer.core.id] != of[c.id]
			pt.cutIn = pt.cutOut
		}
	}
	if pa != nil {
		pa.Partition(of, parts)
	}
	// Deal the pending events to their nodes' partitions; an injection's packet moves
	// into its host's partition's arena.
	for _, ev := range pending {
		he := n.eng.handlers[ev.hk>>8]
		var v *Network
		if samplerH[HandlerID(ev.hk>>8)] {
			n.eng.insert(ev.at, ev.ord, ev.arg, ev.hk) // a tick: the coordinator's, at barriers
			continue
		}
		if he.act.node >= 0 {
			v = views[of[he.act.node]]
		} else {
			h := n.hosts[ev.arg>>32]
			v = views[of[h.id]]
			old := PacketID(int32(ev.arg))
			id, p := v.arena.alloc()
			*p = *n.arena.get(old)
			n.arena.release(old)
			ev.arg = int64(id) | ev.arg>>32<<32
		}
		v.eng.insert(ev.at, ev.ord, ev.arg, ev.hk)
	}

	start := time.Now()
	st.Setup = start.Sub(setup)
	global0 := n.eng.processed
	busy := make([]time.Duration, parts)
	// Partition 0 runs on the calling goroutine, the others each on a goroutine that
	// spins on the window's epoch (yielding) for a while before it sleeps: a window is
	// a few hundred microseconds of work, and waking a sleeping goroutine costs tens.
	skip := make([]bool, parts) // a draining partition that holds nothing waits (set before each window)
	var bar barrier
	bar.wake = make([]chan struct{}, parts)
	bar.sleeping = make([]atomic.Bool, parts)
	for p := 1; p < parts; p++ {
		bar.wake[p] = make(chan struct{}, 1)
		go func(p int) {
			for epoch := int64(1); ; epoch++ {
				if !bar.await(p, epoch) {
					return
				}
				if !skip[p] {
					t0 := time.Now()
					if o := bar.endOrd.Load(); o != 0 {
						views[p].eng.RunBeforeKey(units.Time(bar.end.Load()), o)
					} else {
						views[p].eng.RunUntil(units.Time(bar.end.Load()) - 1)
					}
					busy[p] += time.Since(t0)
				}
				bar.done.Add(1)
			}
		}(p)
	}
	defer bar.stop(parts)
	heads := make([]int, parts)
	done := make([]uint64, parts) // each partition's events by the last barrier
	var err error
	drainStart := false // the window that ended at the last injection ran: the drain starts
	for {
		// Barrier: deliver the cut frames, hand the observations over in key order.
		b0 := time.Now()
		for from := range out {
			for to, fs := range out[from] {
				for i := range fs {
					views[to].receiveCut(&fs[i])
				}
				st.CutFrames += int64(len(fs))
				out[from][to] = fs[:0]
			}
		}
		if !pipeline {
			n.replayLogs(logs, heads)
		}
		st.Barriers += time.Since(b0)
		if barrierCheck != nil {
			barrierCheck(views)
		}
		for _, v := range views {
			if v.par.err != nil && err == nil {
				err = v.par.err
			}
		}
		if err != nil {
			break
		}
		n.applyWakes(views)
		if drainStart {
			// Drain's start: an empty network ends the run at once.
			drainStart = false
			if n.partsEmpty(views, out) {
				st.Drained = true
				break
			}
		}
		T, any := units.Time(0), false
		for _, v := range views {
			if t, ok := v.eng.NextTime(); ok && (!any || t < T) {
				T, any = t, true
			}
		}
		if feeding {
			if t, ok := feed.Next(); ok && (!any || t < T) {
				T, any = t, true
			}
		}
		// Global events (the samplers' ticks) run here, before the nodes' events of
		// their picosecond, every partition stopped before it.
		if tc, ok := n.eng.NextTime(); ok && (!any || tc <= T) && (!drain || tc <= limit) {
			n.eng.RunUntil(tc)
			continue
		}
		if !any || (drain && T > limit) {
			break
		}
		W := T + lookahead
		if tc, ok := n.eng.NextTime(); ok {
			W = min(W, tc)
		}
		for _, sm := range n.samplers {
			// A wake in the window ticks at the next multiple: at or after W.
			W = min(W, (T/sm.interval+1)*sm.interval)
		}
		if drain {
			W = min(W, limit+1)
			for p, v := range views {
				skip[p] = v.Idle() // no packet, its agent's part idle
			}
		}
		var endOrd uint64 // a window that ends at a key: (W, endOrd)
		if feed != nil {
			// Called at every barrier (after the last injection it schedules nothing):
			// the feed may stop the run here.
			if !feed.Feed(W) {
				err = ErrFeedStopped
				break
			}
			for _, v := range views {
				v.keys = n.keys // the feed's new flows' keys (appended at barriers only)
			}
			if _, ok := feed.Next(); feeding && !ok {
				// The last injection is in this window: the window ends right after
				// it, and the drain starts there.
				feeding, drainStart = false, true
				W, endOrd = n.lastInjAt, n.lastInjOrd+1
				limit = n.lastInjAt + n.maxDrain
			}
		}
		if pipeline {
			// The last window's observations are handed over while this one runs.
			for p := range logs {
				logs[p].swap(prev[p])
			}
		}
		bar.start(W, endOrd, parts)
		if pipeline {
			b1 := time.Now()
			n.replayLogs(prev, heads)
			st.Barriers += time.Since(b1)
		}
		if !skip[0] {
			t0 := time.Now()
			if endOrd != 0 {
				views[0].eng.RunBeforeKey(W, endOrd)
			} else {
				views[0].eng.RunUntil(W - 1)
			}
			busy[0] += time.Since(t0)
		}
		bar.wait(parts)
		st.Windows++
		if drainStart {
			drain = true
			for _, v := range views {
				v.draining = true
			}
		}
		if drain && n.drainBarrier(views, out, skip, W) {
			st.Drained = true
			n.replayLogs(logs, heads)
			break
		}
		var most uint64
		for p, v := range views {
			most = max(most, v.eng.processed-done[p])
			done[p] = v.eng.processed
		}
		st.Critical += most
	}
	n.replayLogs(logs, heads) // what the last window (or barrier) observed
	st.Wall = time.Since(start)
	// Fold the partitions back into the network.
	live := 0
	for p, v := range views {
		n.injected += v.injected
		n.delivered += v.delivered
		n.hops += v.hops
		n.dataHops += v.dataHops
		n.pfcFrames += v.pfcFrames
		n.ceMarked += v.ceMarked
		for r := range n.dropped {
			n.dropped[r] += v.dropped[r]
		}
		for c := range n.ctl {
			n.ctl[c].Injected += v.ctl[c].Injected
			n.ctl[c].Delivered += v.ctl[c].Delivered
			for r := range n.ctl[c].Dropped {
				n.ctl[c].Dropped[r] += v.ctl[c].Dropped[r]
			}
		}
		n.eng.processed += v.eng.processed
		n.eng.now = max(n.eng.now, v.eng.now)
		st.Events = append(st.Events, v.eng.processed)
		st.Busy += busy[p]
		live += v.arena.live
	}
	st.PartBusy = busy
	st.Waiting = time.Duration(parts)*st.Wall - st.Busy
	st.Global = n.eng.processed - global0 - sumEvents(st.Events)
	n.parts = nil
	if live != 0 {
		n.rehome()
	}
	if pa != nil {
		pa.Partition(nil, 0)
	}
	for _, nd := range n.nodes {
		c := nd.core()
		c.net = n
		for _, pt := range c.ports {
			pt.cutOut, pt.cutIn = false, false
		}
	}
	return st, err
}

// rehome moves the packets left in the partitions (a run that did not drain) into
// the network's own arena, at the end of a partitioned run, every partition
// stopped and every outbox delivered: each node's queues, forwarding line and
// links keep their order, and a cut link's frames, in its receiver's rxFlight,
// go back to its sender's flight (where the sequential engine holds them), so
// that InFlight, ForEachOutstanding, Buffered and DeadlockUndrained read the
// state the sequential run leaves. The partitions' pending events (which name
// their arenas' packets) are not handled after the run.
func (n *Network) rehome() {
	move := func(from *arena, q *fifo) fifo {
		nq := newFifo()
		for id := q.head; id != NoPacket; {
			old := from.get(id)
			id = old.next
			nid, p := n.arena.alloc()
			*p = *old
			nq.push(&n.arena, nid, p)
		}
		return nq
	}
	for _, nd := range n.nodes {
		c := nd.core()
		a := &c.net.arena
		for _, pt := range c.ports {
			for tc := range pt.tc {
				pt.ctl[tc] = move(a, &pt.ctl[tc])
				pt.tc[tc].q = move(a, &pt.tc[tc].q)
			}
			pt.fwd = move(a, &pt.fwd)
			pt.pfcq = move(a, &pt.pfcq)
			pt.flight = move(a, &pt.flight)
		}
	}
	for _, nd := range n.nodes {
		c := nd.core()
		for _, pt := range c.ports {
			if !pt.cutIn || pt.rxFlight.n == 0 {
				continue
			}
			in := pt.peer // the sender: its flight of a cut link is empty
			q := move(&c.net.arena, &pt.rxFlight)
			pt.rxFlight = newFifo()
			in.flight = q
			in.flightPFC = 0
			for id := q.head; id != NoPacket; {
				p := n.arena.get(id)
				if p.Class == classPFC {
					in.flightPFC++
				}
				id = p.next
			}
		}
	}
}

// partsEmpty reports whether no partition holds a packet, no frame is on a cut
// link, and the agent's parts, if any, are idle (Network.Idle's conjunction).
func (n *Network) partsEmpty(views []*Network, out [][][]cutFrame) bool {
	for p, v := range views {
		if !v.Idle() {
			return false
		}
		for q := range out[p] {
			if len(out[p][q]) > 0 {
				return false
			}
		}
	}
	return true
}

// checkPartitioned says why the network cannot run partitioned, nil if it can.
func (n *Network) checkPartitioned(of []int32, parts int, lookahead units.Time) error {
	switch {
	case !n.started:
		return fmt.Errorf("%w: the network is not started", ErrNotPartitioned)
	case n.eng.processed > 0:
		return fmt.Errorf("%w: events were handled already", ErrNotPartitioned)
	case n.agent != nil && !isPartitionedAgent(n.agent):
		return fmt.Errorf("%w: closed loop (an Agent that is not a PartitionedAgent)", ErrNotPartitioned)
	case n.failed:
		return fmt.Errorf("%w: failures", ErrNotPartitioned)
	case len(of) != len(n.nodes):
		return fmt.Errorf("%w: %d partition entries for %d nodes", ErrNotPartitioned, len(of), len(n.nodes))
	case parts < 1 || lookahead <= 0:
		return fmt.Errorf("%w: %d partitions, lookahead %v", ErrNotPartitioned, parts, lookahead)
	}
	for _, p := range of {
		if p < 0 || int(p) >= parts {
			return fmt.Errorf("%w: partition %d outside 0..%d", ErrNotPartitioned, p, parts-1)
		}
	}
	for _, nd := range n.nodes {
		c := nd.core()
		for _, pt := range c.ports {
			if of[pt.peer.core.id] != of[c.id] && pt.prop < lookahead {
				return fmt.Errorf("%w: cut link %s-%s has delay %v < lookahead %v", ErrNotPartitioned,
					c.name, pt.peer.core.name, pt.prop, lookahead)
			}
		}
	}
	return nil
}

// receiveCut takes a frame delivered across a cut link into this partition: into its
// arena and the receiving port's rxFlight, its arrival scheduled in its sender's
// place if it heads the link.
func (n *Network) receiveCut(f *cutFrame) {
	id, p := n.arena.alloc()
	*p = f.p
	if p.Class != classPFC {
		n.par.cutIn++
	}
	pt := f.to
	head := pt.rxFlight.n == 0
	pt.rxFlight.push(&n.arena, id, p)
	if head {
		n.eng.scheduleReserved(p.at, p.arrOrd, pt.core.h, evArrive, int64(pt.idx))
	}
}

// replayLogs hands the partitions' observations to the network's observers in key
// order (each log is in key order; one event's observations are in one log, in the
// order they were made), and empties the logs.
func (n *Network) replayLogs(logs []*obsLog, heads []int) {
	for i := range heads {
		heads[i] = 0
	}
	for {
		best := -1
		for i, lg := range logs {
			if heads[i] == len(lg.entries) {
				continue
			}
			e := &lg.entries[heads[i]]
			if best < 0 {
				best = i
				continue
			}
			b := &logs[best].entries[heads[best]]
			if e.at < b.at || (e.at == b.at && e.ord < b.ord) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		lg := logs[best]
		e := &lg.entries[heads[best]]
		heads[best]++
		switch e.kind {
		case obsDrop:
			r := &lg.drops[e.idx]
			n.obs.Drops.Drop(DropEvent{Time: r.time, Node: r.node, Port: r.port, TC: r.tc, Reason: r.reason, Packet: &lg.pkts[r.pkt]})
		case obsPFC:
			n.obs.PFC.PFC(lg.pfcs[e.idx])
		case obsDelivered:
			n.obs.Deliveries.Delivered(units.Time(e.arg), &lg.pkts[e.idx])
		case obsNote:
			n.obs.Notes.Note(e.at, e.arg)
		case obsAgent:
			n.agent.(PartitionedAgent).AgentNoted(lg.ags[e.idx])
		case obsNIC:
			r := &lg.nics[e.idx]
			ev := NICEvent{Time: r.time, Host: r.host, TC: r.tc, Delay: r.delay, Backlog: r.backlog}
			if r.pkt >= 0 {
				ev.Packet = &lg.pkts[r.pkt]
			}
			n.obs.NIC.NICDequeue(ev)
		}
	}
	for _, lg := range logs {
		lg.reset()
	}
}

// takePending removes every pending event and returns them in order.
func (e *Engine) takePending() []event {
	all := append(e.appendRing(nil), e.heap...)
	slices.SortFunc(all, func(a, b event) int {
		if a.before(&b) {
			return -1
		}
		return 1
	})
	e.heap = e.heap[:0]
	e.setGeometry(e.nbBits, e.w)
	return all
}

// putBack queues events taken with takePending again.
func (e *Engine) putBack(evs []event) {
	for i := range evs {
		ev := &evs[i]
		e.insert(ev.at, ev.ord, ev.arg, ev.hk)
	}
}

// cloneEmpty returns an engine with e's handlers, its counters and its time, and no
// pending event: a partition's engine.
func (e *Engine) cloneEmpty() *Engine {
	c := NewEngine()
	c.now, c.curOrd = e.now, e.curOrd
	c.global.next = e.global.next
	if len(e.actors) > 1 {
		c.AddNodes(int32(len(e.actors) - 1))
	}
	for k := 1; k < len(e.actors); k++ {
		c.actors[k].next = e.actors[k].next
	}
	c.handlers = make([]handlerEntry, len(e.handlers))
	for i, he := range e.handlers {
		act := &c.none
		switch {
		case he.act == &e.global:
			act = &c.global
		case he.act.node >= 0:
			act = c.actors[he.act.node+1]
		}
		c.handlers[i] = handlerEntry{he.h, act}
	}
	return c
}

// barrier runs the windows: the coordinator publishes the window's end and bumps
// the epoch; each worker spins (yielding) until it sees the new epoch, or sleeps on
// its wake channel after spinLimit tries; done counts the workers that finished.
type barrier struct {
	epoch, end, done atomic.Int64
	endOrd           atomic.Uint64 // not 0: the window ends before the key (end, endOrd)
	sleeping         []atomic.Bool
	wake             []chan struct{}
	quit             atomic.Bool
}

const spinLimit = 20000

const spinLoads = 32

func (b *barrier) start(w units.Time, endOrd uint64, parts int) {
	b.done.Store(0)
	b.end.Store(int64(w))
	b.endOrd.Store(endOrd)
	b.epoch.Add(1)
	for p := 1; p < parts; p++ {
		if b.sleeping[p].Load() {
			select {
			case b.wake[p] <- struct{}{}:
			default:
			}
		}
	}
}

// await returns when the epoch reaches epoch (true) or the run ends (false).
func (b *barrier) await(p int, epoch int64) bool {
	for i := 0; ; i++ {
		if b.quit.Load() {
			return false
		}
		if b.epoch.Load() >= epoch {
			return true
		}
		if i < spinLimit {
			for k := 0; k < spinLoads && b.epoch.Load() < epoch; k++ {
			}
			runtime.Gosched()
			continue
		}
		// Sleep until woken: say so, then look again (the coordinator may have bumped
		// the epoch before it saw the flag).
		b.sleeping[p].Store(true)
		if b.epoch.Load() < epoch && !b.quit.Load() {
			<-b.wake[p]
		}
		b.sleeping[p].Store(false)
		i = 0
	}
}

// wait returns when the parts-1 workers have finished the window.
func (b *barrier) wait(parts int) {
	for b.done.Load() < int64(parts-1) {
		for k := 0; k < spinLoads && b.done.Load() < int64(parts-1); k++ {
		}
		runtime.Gosched()
	}
}

func (b *barrier) stop(parts int) {
	b.quit.Store(true)
	for p := 1; p < parts; p++ {
		select {
		case b.wake[p] <- struct{}{}:
		default:
		}
	}
}

func sumEvents(evs []uint64) uint64 {
	var s uint64
	for _, e := range evs {
		s += e
	}
	return s
}

func isPartitionedAgent(a Agent) bool {
	_, ok := a.(PartitionedAgent)
	return ok
}
