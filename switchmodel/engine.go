package switchmodel

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/tracefabric/tracefabric/switchmodel/units"
)

// EventHandler receives the events it scheduled. kind and arg are the handler's own:
// the engine only orders and delivers them. A handler is registered once with
// Engine.Register and addressed by the HandlerID it returns.
type EventHandler interface {
	Handle(now units.Time, kind int32, arg int64)
}

// HandlerID names a registered EventHandler.
type HandlerID int32

// event is one pending event: 32 bytes, no pointers (the GC does not scan the queue).
type event struct {
	at   units.Time
	seq  uint64
	arg  int64
	h    HandlerID
	kind int32
}

func (a *event) before(b *event) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// calNode is an event in a calendar bucket's list.
type calNode struct {
	ev   event
	next int32
}

// Calendar geometry: the initial and largest number of buckets (log2), the initial
// bucket width (log2 ps), and how often (pops) the geometry is reconsidered.
const (
	calMinBits   = 10
	calMaxBits   = 17
	calWidthBits = 12 // 4.096 ns
	calMaxWidth  = 40
	calTuneEvery = 1 << 15
)

// Engine is a discrete-event scheduler: simulated time in integer picoseconds, events
// ordered by (time, insertion sequence) so ties break by insertion order. Components
// keep at most one pending event each where possible (a busy port, a link's head
// frame, a timer), so the queue holds O(ports) entries rather than O(packets). An
// Engine is a plain value passed to components: several simulations may run in one
// process.
//
// The pending set is a calendar queue (R. Brown, CACM 1988) for the near future plus a
// typed 4-ary min-heap for the rest. The calendar is a ring of buckets of 2^w ps
// covering [base, base + buckets*2^w), base <= Now; each bucket is a list sorted by
// (time, sequence) and a bitmap marks the non-empty ones, so scheduling and taking
// the next event cost O(1) when the width suits the event density. Events beyond the
// ring wait in the heap and move into the ring as base advances. The engine adapts the
// number of buckets and their width to the pending events now and then; the order of
// events never depends on the geometry.
type Engine struct {
	now       units.Time
	seq       uint64
	handlers  []EventHandler
	processed uint64
	stopped   bool

	// Calendar.
	nodes        []calNode
	free         int32   // free list of nodes through next, -1 none
	head, tail   []int32 // per bucket, -1 when empty
	occ          []uint64
	nbBits, w    uint       // log2(buckets), log2(bucket width in ps)
	base         units.Time // start of bucket cur, a multiple of the width, <= now
	cur          int
	span         units.Time // buckets << w
	nearN        int
	heap         []event // far events: at >= base + span
	scratch      []event
	pushes, far  uint64 // schedules and those into the heap since the last tuning
	walks, since uint64 // list steps of sorted inserts; pops since the last tuning
	scans        uint64 // bitmap words skipped looking for the next event
}

// NewEngine returns an empty engine at time 0.
func NewEngine() *Engine {
	e := &Engine{heap: make([]event, 0, 64), free: -1}
	e.setGeometry(calMinBits, calWidthBits)
	return e
}

func (e *Engine) setGeometry(nbBits, w uint) {
	nb := 1 << nbBits
	e.nbBits, e.w = nbBits, w
	e.head = make([]int32, nb)
	e.tail = make([]int32, nb)
	for i := range e.head {
		e.head[i], e.tail[i] = -1, -1
	}
	e.occ = make([]uint64, nb/64)
	e.span = units.Time(nb) << w
	e.base = e.now &^ (units.Time(1)<<w - 1)
	e.cur = int(e.base>>w) & (nb - 1)
	e.nearN = 0
	e.nodes = e.nodes[:0]
	e.free = -1
}

// Register adds h and returns its id for Schedule.
func (e *Engine) Register(h EventHandler) HandlerID {
	e.handlers = append(e.handlers, h)
	return HandlerID(len(e.handlers) - 1)
}

// Now is the current simulated time: the time of the event being handled, or of the
// last one handled.
func (e *Engine) Now() units.Time { return e.now }

// Pending is the number of scheduled events not yet handled.
func (e *Engine) Pending() int { return e.nearN + len(e.heap) }

// Processed is the number of events handled so far.
func (e *Engine) Processed() uint64 { return e.processed }

// Schedule queues an event for handler h at time at. A time before Now is an error of
// the caller; it is clamped to Now so time never runs backwards.
func (e *Engine) Schedule(at units.Time, h HandlerID, kind int32, arg int64) {
	if at < e.now {
		at = e.now
	}
	e.seq++
	e.pushes++
	e.insert(at, e.seq, arg, h, kind)
	if e.walks > 1<<14 && e.walks > 8*e.pushes {
		// Many events landed in few buckets out of order (e.g. scheduled before Run):
		// narrow the buckets now rather than at the next tuning.
		e.tune()
	}
}

// insert puts an event in its bucket, sorted, or in the heap when beyond the ring.
// (Fields rather than an event value: Go spills a struct argument to the stack in
// pieces and reloads it whole, which stalls store forwarding on this hot path.)
func (e *Engine) insert(at units.Time, seq uint64, arg int64, h HandlerID, kind int32) {
	if at-e.base >= e.span {
		e.far++
		e.heap = append(e.heap, event{})
		x := &e.heap[len(e.heap)-1]
		x.at, x.seq, x.arg, x.h, x.kind = at, seq, arg, h, kind
		e.up(len(e.heap) - 1)
		return
	}
	b := int(at>>e.w) & (len(e.head) - 1)
	var n int32
	if e.free >= 0 {
		n = e.free
	} else {
		n = int32(len(e.nodes))
		e.nodes = append(e.nodes, calNode{})
		e.nodes[n].next = -1
	}
	nd := &e.nodes[n]
	e.free = nd.next
	nd.ev.at, nd.ev.seq, nd.ev.arg, nd.ev.h, nd.ev.kind = at, seq, arg, h, kind
	nd.next = -1
	e.nearN++
	t := e.tail[b]
	switch {
	case t < 0:
		e.head[b], e.tail[b] = n, n
		e.occ[b>>6] |= 1 << (b & 63)
	case !nd.ev.before(&e.nodes[t].ev):
		e.nodes[t].next = n
		e.tail[b] = n
	default:
		prev, i := int32(-1), e.head[b]
		for !nd.ev.before(&e.nodes[i].ev) {
			prev, i = i, e.nodes[i].next
			e.walks++
		}
		nd.next = i
		if prev < 0 {
			e.head[b] = n
		} else {
			e.nodes[prev].next = n
		}
	}
}

// front returns the bucket holding the earliest event (-1 when it is in the heap)
// and the event's time; ok is false when nothing is pending.
func (e *Engine) front() (b int, at units.Time, ok bool) {
	if e.nearN == 0 {
		if len(e.heap) == 0 {
			return -1, 0, false
		}
		return -1, e.heap[0].at, true
	}
	b = e.nextBucket()
	return b, e.nodes[e.head[b]].ev.at, true
}

// nextBucket returns the first non-empty bucket from cur on, around the ring (nearN > 0).
func (e *Engine) nextBucket() int {
	wi := e.cur >> 6
	if x := e.occ[wi] >> (e.cur & 63); x != 0 {
		return e.cur + bits.TrailingZeros64(x)
	}
	nw := len(e.occ)
	for k := 1; k <= nw; k++ {
		j := (wi + k) & (nw - 1)
		if x := e.occ[j]; x != 0 {
			e.scans += uint64(k)
			return j<<6 + bits.TrailingZeros64(x)
		}
	}
	panic("switchmodel: engine calendar count out of step")
}

// take removes the earliest event, found by front in bucket b, and moves base to its
// bucket (then heap events that the ring now covers into the ring). It returns the
// event's fields.
func (e *Engine) take(b int) (at units.Time, h HandlerID, kind int32, arg int64) {
	if b < 0 {
		// The ring is empty: jump to the heap's earliest event.
		ev := e.pop()
		at, h, kind, arg = ev.at, ev.h, ev.kind, ev.arg
		e.base = at &^ (units.Time(1)<<e.w - 1)
		e.cur = int(e.base>>e.w) & (len(e.head) - 1)
	} else {
		e.base += units.Time((b-e.cur)&(len(e.head)-1)) << e.w
		e.cur = b
		n := e.head[b]
		nd := &e.nodes[n]
		at, h, kind, arg = nd.ev.at, nd.ev.h, nd.ev.kind, nd.ev.arg
		e.head[b] = nd.next
		if nd.next < 0 {
			e.tail[b] = -1
			e.occ[b>>6] &^= 1 << (b & 63)
		}
		nd.next = e.free
		e.free = n
		e.nearN--
	}
	for len(e.heap) > 0 && e.heap[0].at-e.base < e.span {
		ev := e.pop()
		e.insert(ev.at, ev.seq, ev.arg, ev.h, ev.kind)
	}
	return at, h, kind, arg
}

// Stop makes the running Run or RunUntil return after the current event.
func (e *Engine) Stop() { e.stopped = true }

// NextTime returns the time of the earliest pending event and true, or false if none.
func (e *Engine) NextTime() (units.Time, bool) {
	_, at, ok := e.front()
	return at, ok
}

// Run handles events until none is pending or Stop is called.
func (e *Engine) Run() { e.RunUntil(units.Time(1<<63 - 1)) }

// RunUntil handles every event whose time is <= limit, in order, until none is left,
// or Stop is called. It returns true if events are still pending (all later than limit,
// or left by Stop). Now is left at the last handled event's time.
func (e *Engine) RunUntil(limit units.Time) bool {
	e.stopped = false
	for !e.stopped {
		b, at, ok := e.front()
		if !ok {
			break
		}
		if at > limit {
			return true
		}
		at, h, kind, arg := e.take(b)
		e.now = at
		e.processed++
		if e.since++; e.since >= calTuneEvery {
			e.tune()
		}
		e.handlers[h].Handle(at, kind, arg)
	}
	return e.Pending() > 0
}

// tune reconsiders the calendar's geometry from what the last calTuneEvery events
// did: more buckets when the pending events outnumber them twice; wider buckets when
// more than 1/8 of the schedules went beyond the ring, or when finding the next event
// skipped more than 4 bitmap words on average; narrower ones when sorted inserts
// walked more than two steps on average, the ring was not sparse and almost nothing
// went beyond it.
func (e *Engine) tune() {
	nb, w := e.nbBits, e.w
	switch {
	case e.Pending() > 2<<nb && nb < calMaxBits:
		nb++
	case e.far*8 > e.pushes && w < calMaxWidth:
		w++
	case e.scans > 4*e.since && e.walks < e.pushes && w < calMaxWidth:
		// Sparse ring: the next event is often several bitmap words away.
		w++
	case e.walks > 2*e.pushes && e.far*64 < e.pushes && e.scans < e.since && w > 0:
		w--
	}
	e.pushes, e.far, e.walks, e.since, e.scans = 0, 0, 0, 0, 0
	if nb == e.nbBits && w == e.w {
		return
	}
	// Rebuild: take every pending event out, in order, and put it back.
	all := e.scratch[:0]
	for b := range e.head {
		for n := e.head[b]; n >= 0; n = e.nodes[n].next {
			all = append(all, e.nodes[n].ev)
		}
	}
	all = append(all, e.heap...)
	slices.SortFunc(all, func(a, b event) int {
		if a.before(&b) {
			return -1
		}
		return 1
	})
	e.heap = e.heap[:0]
	e.setGeometry(nb, w)
	for i := range all {
		ev := &all[i]
		e.insert(ev.at, ev.seq, ev.arg, ev.h, ev.kind)
	}
	e.scratch = all[:0]
	e.pushes, e.far, e.walks, e.scans = 0, 0, 0, 0
}

func (e *Engine) pop() event {
	h := e.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	e.heap = h[:n]
	if n > 1 {
		e.down(0)
	}
	return top
}

func (e *Engine) up(i int) {
	h := e.heap
	x := h[i]
	for i > 0 {
		p := (i - 1) >> 2
		if !x.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

// down re-inserts h[i] (the former last element) after a pop: the hole at i sinks to a
// leaf along the smallest children, then the element rises from there (Floyd's
// method: the moved element nearly always belongs near the bottom).
func (e *Engine) down(i int) {
	h := e.heap
	n := len(h)
	x := h[i]
	for {
		c := i<<2 + 1
		if c >= n {
			break
		}
		m := c
		if c+3 < n {
			if h[c+1].before(&h[m]) {
				m = c + 1
			}
			if h[c+2].before(&h[m]) {
				m = c + 2
			}
			if h[c+3].before(&h[m]) {
				m = c + 3
			}
		} else {
			for j := c + 1; j < n; j++ {
				if h[j].before(&h[m]) {
					m = j
				}
			}
		}
		h[i] = h[m]
		i = m
	}
	for i > 0 {
		p := (i - 1) >> 2
		if !x.before(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = x
}

// String describes the engine's state for debugging.
func (e *Engine) String() string {
	return fmt.Sprintf("engine{now=%v pending=%d processed=%d}", e.now, e.Pending(), e.processed)
}
