package switchmodel

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/tracefabric/tracefabric/internal/units"
)

// EventHandler receives the events it scheduled. kind and arg are the handler's own:
// the engine only orders and delivers them. A handler is registered once with
// Engine.Register and addressed by the HandlerID it returns.
type EventHandler interface {
	Handle(now units.Time, kind int32, arg int64)
}

// HandlerID names a registered EventHandler. A global handler's id has hGlobal set
// (packHK drops it: the handler's index is below 2^24).
type HandlerID int32

// hGlobal marks the id of a global handler (Register): every event for it is ordered
// in the global class, whoever schedules it.
const hGlobal HandlerID = 1 << 30

// NoNode names no node: ActAs(NoNode) makes the current handler act globally.
const NoNode int32 = -1

// The order key (docs/model.md#event-order-and-determinism): events run by (at, ord),
// ord = class << 62 | what the class orders by.
//
//	global:    0 << 62 | the global counter
//	injection: 1 << 62 | the injection's index (its feed position)
//	node:      2 << 62 | node << OrdSeqBits | the node's own counter
//
// The global counter takes every event for a global handler (Register), and every
// event scheduled while a global handler's event is handled, or outside any handler;
// a node's counter every event scheduled while one of its events is handled (the
// handler's node, RegisterNode, or the node named by ActAs).
const (
	ordClassShift = 62
	ordInjection  = 1 << ordClassShift
	ordNode       = 2 << ordClassShift
	// OrdSeqBits is the width of a node's counter: a node may schedule (or reserve)
	// 2^40 events in one run; one more panics.
	OrdSeqBits = 40
	// MaxEngineNodes is the number of nodes the order key has room for (22 bits).
	MaxEngineNodes = 1 << (ordClassShift - OrdSeqBits)
	// MaxInjectionIndex bounds ScheduleInjection's index (and the global counter).
	MaxInjectionIndex = 1<<ordClassShift - 1
)

// actor is one owner of an order counter: next is the ord its next event takes, end
// the first ord beyond its range; node is its node (NoNode: the global counter, -2:
// the shared handlers' none, whose range is empty so a schedule panics).
type actor struct {
	next, end uint64
	node      int32
}

// actorChunk is how many node actors are allocated together (they never move: the
// engine and its handlers point at them).
const actorChunk = 64

// handlerEntry is a registered handler and the actor its events run as (the none
// actor for a shared handler, which names it with ActAs).
type handlerEntry struct {
	h   EventHandler
	act *actor
}

// event is one pending event: 32 bytes, no pointers (the GC does not scan the queue).
type event struct {
	at  units.Time
	ord uint64
	arg int64
	hk  uint32 // handler << 8 | kind
}

func (a *event) before(b *event) bool {
	return a.at < b.at || (a.at == b.at && a.ord < b.ord)
}

// calNode is an event in a calendar bucket's list of later events: 40 bytes. The
// list's first node also holds the list's tail.
type calNode struct {
	at         units.Time
	ord        uint64
	arg        int64
	hk         uint32 // handler << 8 | kind
	next, tail int32
}

// calBucket is one bucket: its earliest event inline (most buckets hold one event or
// none, so scheduling touches one bucket and taking reads the ring in order, with no
// node to chase), then a list of its later events. 32 bytes, two to a cache line.
// Whether the bucket holds an event at all is its bit in Engine.occ.
type calBucket struct {
	at   units.Time
	ord  uint64
	arg  int64
	hk   uint32 // handler << 8 | kind
	head int32  // later events, in order; -1 when none
}

// packHK packs a handler id (< 2^24) and an event kind (0..255) into a bucket's hk.
func packHK(h HandlerID, kind int32) uint32 { return uint32(h&^hGlobal)<<8 | uint32(uint8(kind)) }

// MaxHandlers is the number of handlers an Engine accepts; event kinds are 0..255.
const MaxHandlers = 1 << 24

// Calendar geometry: the initial and largest number of buckets (log2), the initial
// bucket width (log2 ps), and how often (pops) the geometry is reconsidered.
const (
	calMinBits   = 10
	calMaxBits   = 18
	calWidthBits = 12 // 4.096 ns
	calMaxWidth  = 40
	calTuneEvery = 1 << 15
)

// Engine is a discrete-event scheduler: simulated time in integer picoseconds, events
// ordered by (time, ord), where ord is the order key of
// docs/model.md#event-order-and-determinism: at one picosecond the global events
// first (in their scheduling order), then the injections (in their index order), then
// the nodes' events, by node and, within a node, in the order the node scheduled
// them. The order of events of one node thus never depends on when other nodes
// scheduled theirs: what a partitioned engine needs to keep it. Components
// keep at most one pending event each where possible (a busy port, a link's head
// frame, a timer), so the queue holds O(ports) entries rather than O(packets). An
// Engine is a plain value passed to components: several simulations may run in one
// process.
//
// The pending set is a calendar queue (R. Brown, CACM 1988) for the near future plus a
// typed 4-ary min-heap for the rest. The calendar is a ring of buckets of 2^w ps
// covering [base, base + buckets*2^w), base <= Now; each bucket is a list sorted by
// (time, ord) and a bitmap marks the non-empty ones, so scheduling and taking
// the next event cost O(1) when the width suits the event density. Events beyond the
// ring wait in the heap and move into the ring as base advances. The engine adapts the
// number of buckets and their width to the pending events now and then; the order of
// events never depends on the geometry.
type Engine struct {
	now       units.Time
	curOrd    uint64 // the ord of the event being (or last) handled
	act       *actor // the actor scheduling now
	global    actor
	none      actor
	actors    []*actor // the global actor, then node k's at k+1
	chunk     []actor  // room for more node actors
	handlers  []handlerEntry
	processed uint64
	stopped   bool

	// Calendar.
	nodes        []calNode
	free         int32 // free list of nodes through next, -1 none
	bk           []calBucket
	occ          []uint64
	nbBits, w    uint       // log2(buckets), log2(bucket width in ps)
	base         units.Time // start of bucket cur, a multiple of the width, <= now
	cur          int
	span         units.Time // buckets << w
	nearN        int
	heap         []event // far events: at >= base + span
	scratch      []event
	pushes, far  uint64 // schedules and those into the heap since the last tuning
	half, crowd  uint64 // schedules into the ring's second half; into an occupied bucket
	walks, since uint64 // list steps of sorted inserts; pops since the last tuning
	scans        uint64 // bitmap words skipped looking for the next event
}

// NewEngine returns an empty engine at time 0.
func NewEngine() *Engine {
	e := &Engine{heap: make([]event, 0, 64), free: -1}
	e.global = actor{0, ordInjection, NoNode}
	e.none = actor{0, 0, -2}
	e.act = &e.global
	e.actors = []*actor{&e.global}
	e.setGeometry(calMinBits, calWidthBits)
	return e
}

func (e *Engine) setGeometry(nbBits, w uint) {
	nb := 1 << nbBits
	e.nbBits, e.w = nbBits, w
	if len(e.bk) == nb {
		clear(e.occ) // a new width only: the buckets are reused
	} else {
		e.bk = make([]calBucket, nb)
		e.occ = make([]uint64, nb/64)
	}
	e.span = units.Time(nb) << w
	e.base = e.now &^ (units.Time(1)<<w - 1)
	e.cur = int(e.base>>w) & (nb - 1)
	e.nearN = 0
	e.nodes = e.nodes[:0]
	e.free = -1
}

// Register adds a global handler h and returns its id for Schedule: h's events are
// ordered in the global class (they run before every other event of their
// picosecond, in the order they were scheduled, whoever scheduled them), and so are
// the events h schedules. A handler that reads or changes many nodes at once (a
// sampler of every switch, the failures' runner) is global. An engine takes up to
// MaxHandlers handlers; one more is a bug of the caller and panics.
func (e *Engine) Register(h EventHandler) HandlerID {
	return e.register(h, &e.global) | hGlobal
}

// RegisterNode adds handler h of node (0 <= node < MaxEngineNodes) and returns its
// id for Schedule: while h handles an event, what it schedules is node's, ordered by
// node's own counter.
func (e *Engine) RegisterNode(h EventHandler, node int32) HandlerID {
	return e.register(h, e.actorOf(node))
}

// RegisterShared adds a handler h that acts for several nodes, one per event: its
// Handle must name the node with ActAs before it schedules anything (a schedule
// before that panics). Events for it are ordered by whoever schedules them.
func (e *Engine) RegisterShared(h EventHandler) HandlerID {
	return e.register(h, &e.none)
}

func (e *Engine) register(h EventHandler, act *actor) HandlerID {
	if len(e.handlers) == MaxHandlers {
		panic("switchmodel: Engine.Register: more than MaxHandlers handlers")
	}
	e.handlers = append(e.handlers, handlerEntry{h, act})
	return HandlerID(len(e.handlers) - 1)
}

// AddNodes makes nodes 0..n-1 known to the engine, for ActAs (RegisterNode makes its
// node and those below known).
func (e *Engine) AddNodes(n int32) {
	if n > 0 {
		e.actorOf(n - 1)
	}
}

// actorOf returns node's actor, making the actors up to it.
func (e *Engine) actorOf(node int32) *actor {
	if node < 0 || node >= MaxEngineNodes {
		panic(fmt.Sprintf("switchmodel: Engine: node %d outside 0..MaxEngineNodes-1", node))
	}
	for len(e.actors) <= int(node)+1 {
		if len(e.chunk) == 0 {
			e.chunk = make([]actor, actorChunk)
		}
		k := len(e.actors) - 1
		base := ordNode | uint64(k)<<OrdSeqBits
		a := &e.chunk[0]
		*a = actor{base, base + 1<<OrdSeqBits, int32(k)}
		e.chunk = e.chunk[1:]
		e.actors = append(e.actors, a)
	}
	return e.actors[node+1]
}

// ActAs makes the rest of the current event act for node (NoNode, or a node known
// from RegisterNode or AddNodes; another panics: index out of range):
// what it schedules (or reserves) is node's, ordered by node's counter; NoNode makes
// it act globally. A
// shared handler (RegisterShared) calls it first in Handle; any handler may call it
// while it acts, synchronously, on another node's behalf. Outside a handler the
// engine acts globally (and again after each Run or RunUntil).
func (e *Engine) ActAs(node int32) {
	e.act = e.actors[node+1] // actors[0] is the global one
}

// Actor is whom the engine acts for (Engine.Actor).
type Actor struct{ a *actor }

// Actor returns whom the engine acts for now, so that code acting synchronously on
// another node's behalf (ActAs) can return to it with RestoreActor.
func (e *Engine) Actor() Actor { return Actor{e.act} }

// RestoreActor makes a the current actor again (see Actor).
func (e *Engine) RestoreActor(a Actor) { e.act = a.a }

// Acting returns the node the engine acts for now (ActAs, or the handler's node), or
// NoNode when it acts globally: within a handler, the node the event is (or, after
// its Handle returns, was last) attributed to.
func (e *Engine) Acting() int32 {
	if n := e.act.node; n >= 0 {
		return n
	}
	return NoNode
}

// WrapHandlers replaces every handler registered so far by wrap's result for it (a
// profiler's or a test's hook around each event). The order of events is unchanged;
// the wrapper must call the handler it was given.
func (e *Engine) WrapHandlers(wrap func(EventHandler) EventHandler) {
	for i := range e.handlers {
		e.handlers[i].h = wrap(e.handlers[i].h)
	}
}

// Now is the current simulated time: the time of the event being handled, or of the
// last one handled.
func (e *Engine) Now() units.Time { return e.now }

// Pending is the number of scheduled events not yet handled.
func (e *Engine) Pending() int { return e.nearN + len(e.heap) }

// Processed is the number of events handled so far.
func (e *Engine) Processed() uint64 { return e.processed }

// Schedule queues an event of kind (0..255; another kind is a bug of the caller and
// panics) for handler h at time at. A time before Now is an error of the caller; it is
// clamped to Now so time never runs backwards.
func (e *Engine) Schedule(at units.Time, h HandlerID, kind int32, arg int64) {
	if uint32(kind) > 255 {
		panic("switchmodel: Engine.Schedule: event kind outside 0..255")
	}
	if at < e.now {
		at = e.now
	}
	ac := e.act
	if h&hGlobal != 0 {
		ac = &e.global
	}
	ord := ac.next
	if ord >= ac.end {
		e.exhausted(ac)
	}
	ac.next = ord + 1
	e.pushes++
	e.insert(at, ord, arg, packHK(h, kind))
	e.checkWalks()
}

// ScheduleInjection queues an event of kind for handler h at time at in the injection
// class: at its picosecond it runs after the global events and before every node's,
// among the injections by index (0 <= index <= MaxInjectionIndex; the caller gives each
// injection its own: the replay its feed position). The handler acts as the node it
// injects at (ActAs).
func (e *Engine) ScheduleInjection(at units.Time, index uint64, h HandlerID, kind int32, arg int64) {
	if uint32(kind) > 255 {
		panic("switchmodel: Engine.ScheduleInjection: event kind outside 0..255")
	}
	if index > MaxInjectionIndex {
		panic("switchmodel: Engine.ScheduleInjection: index beyond MaxInjectionIndex")
	}
	if at < e.now {
		at = e.now
	}
	e.pushes++
	e.insert(at, ordInjection|index, arg, packHK(h, kind))
	e.checkWalks()
}

// exhausted panics: actor a cannot order another event.
func (e *Engine) exhausted(a *actor) { panic(exhaustedError{a.node}) }

// exhaustedError is the panic of an actor that cannot order another event.
type exhaustedError struct{ node int32 }

func (x exhaustedError) Error() string {
	switch x.node {
	case -2:
		return "switchmodel: Engine.Schedule from a shared handler (RegisterShared) that has not called ActAs"
	case NoNode:
		return "switchmodel: Engine.Schedule: the global counter is exhausted"
	}
	return fmt.Sprintf("switchmodel: Engine.Schedule: node %d scheduled 2^%d events: its counter is exhausted", x.node, OrdSeqBits)
}

// reserve takes the current actor's next ord for an event that may be scheduled later
// with scheduleReserved, as if it were scheduled now: a component that often
// schedules an event only to find nothing to do then (a port's transmit-done with an
// empty queue) reserves its place in the order instead and schedules it only if it
// turns out to be needed, which leaves the order of every event exactly as it was.
// (The event's handler must not be global: a global handler's events take the global
// counter.)
func (e *Engine) reserve() uint64 {
	ac := e.act
	ord := ac.next
	if ord >= ac.end {
		panic(exhaustedError{ac.node})
	}
	ac.next = ord + 1
	return ord
}

// scheduleReserved queues an event in the place of a reserved ord at time at. The
// place must be later than the current event's (passed reports that it is not: the
// event would have been handled by now).
func (e *Engine) scheduleReserved(at units.Time, ord uint64, h HandlerID, kind int32, arg int64) {
	e.pushes++
	e.insert(at, ord, arg, packHK(h, kind))
	e.checkWalks()
}

// passed reports whether an event at (at, ord) would have been handled by now: it is
// before the event being handled (or the last one handled).
func (e *Engine) passed(at units.Time, ord uint64) bool {
	return at < e.now || (at == e.now && ord < e.curOrd)
}

func (e *Engine) checkWalks() {
	if e.walks > 1<<14 && e.walks > 8*e.pushes {
		// Many events landed in few buckets out of order (e.g. scheduled before Run):
		// narrow the buckets now rather than at the next tuning.
		e.tune()
	}
}

// insert puts an event in its bucket, sorted, or in the heap when beyond the ring.
// (Fields rather than an event value: Go spills a struct argument to the stack in
// pieces and reloads it whole, which stalls store forwarding on this hot path.)
func (e *Engine) insert(at units.Time, ord uint64, arg int64, hk uint32) {
	if at-e.base >= e.span {
		e.far++
		e.heap = append(e.heap, event{})
		x := &e.heap[len(e.heap)-1]
		x.at, x.ord, x.arg, x.hk = at, ord, arg, hk
		e.up(len(e.heap) - 1)
		return
	}
	if at-e.base >= e.span>>1 {
		e.half++
	}
	b := int(at>>(e.w&63)) & (len(e.bk) - 1)
	e.nearN++
	bk := &e.bk[b]
	if e.occ[b>>6]&(1<<(b&63)) == 0 {
		bk.at, bk.ord, bk.arg, bk.hk, bk.head = at, ord, arg, hk, -1
		e.occ[b>>6] |= 1 << (b & 63)
		return
	}
	e.crowd++
	n := e.node()
	nd := &e.nodes[n]
	if at < bk.at || (at == bk.at && ord < bk.ord) {
		// The new event is the bucket's earliest: the inline one heads the list.
		nd.at, nd.ord, nd.arg, nd.hk, nd.next, nd.tail = bk.at, bk.ord, bk.arg, bk.hk, bk.head, n
		if bk.head >= 0 {
			nd.tail = e.nodes[bk.head].tail
		}
		bk.at, bk.ord, bk.arg, bk.hk, bk.head = at, ord, arg, hk, n
		return
	}
	nd.at, nd.ord, nd.arg, nd.hk, nd.next = at, ord, arg, hk, -1
	if bk.head < 0 {
		bk.head, nd.tail = n, n
		return
	}
	first := &e.nodes[bk.head]
	if t := &e.nodes[first.tail]; at > t.at || (at == t.at && ord > t.ord) {
		t.next = n
		first.tail = n
		return
	}
	// After every earlier event.
	prev, i := int32(-1), bk.head
	for at > e.nodes[i].at || (at == e.nodes[i].at && ord > e.nodes[i].ord) {
		prev, i = i, e.nodes[i].next
		e.walks++
	}
	nd.next = i
	if prev < 0 {
		nd.tail = first.tail
		bk.head = n
	} else {
		e.nodes[prev].next = n
	}
}

// node takes a list node from the free list, or a new one.
func (e *Engine) node() int32 {
	if n := e.free; n >= 0 {
		e.free = e.nodes[n].next
		return n
	}
	e.nodes = append(e.nodes, calNode{})
	return int32(len(e.nodes) - 1)
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
	return b, e.bk[b].at, true
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

// Results of step.
const (
	stepHandled = iota // an event was handled
	stepEmpty          // nothing is pending
	stepLater          // the earliest pending event is later than the limit
)

// step removes the earliest pending event if its time is <= limit, makes it the
// current event and hands it to its handler. Taking an event from the ring moves base
// to its bucket, and then the heap's events that the ring now covers into the ring.
func (e *Engine) step(limit units.Time) int {
	var (
		at  units.Time
		ord uint64
		hk  uint32
		arg int64
	)
	if e.nearN > 0 {
		b := e.cur
		if x := e.occ[b>>6] >> (b & 63); x != 0 {
			b += bits.TrailingZeros64(x)
		} else {
			b = e.nextBucket()
		}
		bk := &e.bk[b]
		if bk.at > limit {
			return stepLater
		}
		at, ord, hk, arg = bk.at, bk.ord, bk.hk, bk.arg
		if n := bk.head; n >= 0 {
			// The list's first event moves inline.
			nd := &e.nodes[n]
			bk.at, bk.ord, bk.arg, bk.hk, bk.head = nd.at, nd.ord, nd.arg, nd.hk, nd.next
			if nd.next >= 0 {
				e.nodes[nd.next].tail = nd.tail
			}
			nd.next = e.free
			e.free = n
		} else {
			e.occ[b>>6] &^= 1 << (b & 63)
		}
		e.nearN--
		// Move base to the bucket (no branch: the distance is often 0, often not).
		e.base += units.Time((b-e.cur)&(len(e.bk)-1)) << (e.w & 63)
		e.cur = b
		if len(e.heap) > 0 {
			e.pullHeap()
		}
	} else if len(e.heap) > 0 {
		if e.heap[0].at > limit {
			return stepLater
		}
		// The ring is empty: jump to the heap's earliest event.
		ev := e.pop()
		at, ord, hk, arg = ev.at, ev.ord, ev.hk, ev.arg
		e.base = at &^ (units.Time(1)<<(e.w&63) - 1)
		e.cur = int(e.base>>(e.w&63)) & (len(e.bk) - 1)
		e.pullHeap()
	} else {
		return stepEmpty
	}
	e.now, e.curOrd = at, ord
	e.processed++
	if e.since++; e.since >= calTuneEvery {
		e.tune()
	}
	he := &e.handlers[hk>>8]
	e.act = he.act
	he.h.Handle(at, int32(hk&0xff), arg)
	return stepHandled
}

// pullHeap moves the heap's events that the ring covers into the ring.
func (e *Engine) pullHeap() {
	for len(e.heap) > 0 && e.heap[0].at-e.base < e.span {
		ev := e.pop()
		e.insert(ev.at, ev.ord, ev.arg, ev.hk)
	}
}

// Stop makes the running Run or RunUntil return after the current event.
func (e *Engine) Stop() { e.stopped = true }

// NextTime returns the time of the earliest pending event and true, or false if none.
func (e *Engine) NextTime() (units.Time, bool) {
	_, at, ok := e.front()
	return at, ok
}

// Key returns the key of the event being handled, or of the last one handled: its
// time and ord (docs/model.md#event-order-and-determinism). Events run in increasing
// (time, ord).
func (e *Engine) Key() (units.Time, uint64) { return e.now, e.curOrd }

// NextKey returns the key of the earliest pending event and true, or false if none.
func (e *Engine) NextKey() (units.Time, uint64, bool) {
	b, at, ok := e.front()
	if !ok {
		return 0, 0, false
	}
	if b < 0 {
		return at, e.heap[0].ord, true
	}
	return at, e.bk[b].ord, true
}

// RunBeforeKey handles, in order, every event whose key is before (at, ord), until
// none is left or Stop is called: a window of the parallel engine that ends at a
// given event rather than a time (docs/parallel.md). It returns true if events are
// still pending.
func (e *Engine) RunBeforeKey(at units.Time, ord uint64) bool {
	if at > 0 && e.RunUntil(at-1) && e.stopped {
		return true
	}
	e.stopped = false
	defer func() { e.act = &e.global }()
	for !e.stopped {
		t, o, ok := e.NextKey()
		if !ok {
			return false
		}
		if t > at || (t == at && o >= ord) {
			return true
		}
		e.step(t)
	}
	return e.Pending() > 0
}

// Run handles events until none is pending or Stop is called.
func (e *Engine) Run() { e.RunUntil(units.Time(1<<63 - 1)) }

// RunUntil handles every event whose time is <= limit, in order, until none is left,
// or Stop is called. It returns true if events are still pending (all later than limit,
// or left by Stop). Now is left at the last handled event's time.
func (e *Engine) RunUntil(limit units.Time) bool {
	e.stopped = false
	defer func() { e.act = &e.global }() // outside handlers the engine acts globally
	for !e.stopped {
		switch e.step(limit) {
		case stepEmpty:
			return false
		case stepLater:
			return true
		}
	}
	return e.Pending() > 0
}

// tune reconsiders the calendar's geometry from what the last calTuneEvery events
// did: more buckets (up to 2^calMaxBits) while the pending events are more than an
// eighth as many as the buckets (a sparse ring costs a few bitmap words; a crowded
// bucket costs list work and mispredicted branches on every event); wider buckets when more than 1/8 of the schedules went beyond the ring, or
// when finding the next event skipped more than 4 bitmap words on average (and most
// buckets were free); narrower ones when more than 1/4 of the schedules found their
// bucket occupied, fewer than 1/64 went into the ring's second half (so halving the
// width keeps nearly all in the ring) and the ring was not sparse. In the hold model
// with 100k pending events this settles at 2^18 buckets of 4 ps; a replay through the
// default fabric (about 450 pending events) at 2^12 buckets of 0.5-1 ns.
func (e *Engine) tune() {
	nb, w := e.nbBits, e.w
	switch {
	case e.Pending() > 1<<nb>>3 && nb < calMaxBits:
		nb++
	case e.far*8 > e.pushes && w < calMaxWidth:
		w++
	case e.scans > 4*e.since && e.crowd*2 < e.pushes && w < calMaxWidth:
		// Sparse ring: the next event is often several bitmap words away.
		w++
	case e.crowd*4 > e.pushes && e.half*64 < e.pushes && e.scans < e.since && w > 0:
		// Crowded buckets, and half the ring would still hold nearly every event.
		w--
	}
	e.pushes, e.far, e.half, e.crowd, e.walks, e.since, e.scans = 0, 0, 0, 0, 0, 0, 0
	if nb == e.nbBits && w == e.w {
		return
	}
	e.rebuild(nb, w)
}

// appendRing appends the calendar ring's events to all in order, bucket by bucket
// from cur (time order), and returns it.
func (e *Engine) appendRing(all []event) []event {
	mask := len(e.bk) - 1
	for k := range e.bk {
		b := (e.cur + k) & mask
		if e.occ[b>>6]&(1<<(b&63)) == 0 {
			continue
		}
		bk := &e.bk[b]
		all = append(all, event{at: bk.at, ord: bk.ord, arg: bk.arg, hk: bk.hk})
		for n := bk.head; n >= 0; n = e.nodes[n].next {
			nd := &e.nodes[n]
			all = append(all, event{at: nd.at, ord: nd.ord, arg: nd.arg, hk: nd.hk})
		}
	}
	return all
}

// rebuild puts every pending event into a calendar of 2^nb buckets of 2^w ps.
func (e *Engine) rebuild(nb, w uint) {
	// Rebuild: take every pending event out, in order, and put it back. The ring's
	// events come first, bucket by bucket from cur (time order), then the heap's,
	// which are all later.
	all := e.appendRing(e.scratch[:0])
	ring := len(all)
	all = append(all, e.heap...)
	slices.SortFunc(all[ring:], func(a, b event) int {
		if a.before(&b) {
			return -1
		}
		return 1
	})
	e.heap = e.heap[:0]
	e.setGeometry(nb, w)
	for i := range all {
		ev := &all[i]
		e.insert(ev.at, ev.ord, ev.arg, ev.hk)
	}
	e.scratch = all[:0]
	e.pushes, e.far, e.half, e.crowd, e.walks, e.scans = 0, 0, 0, 0, 0, 0
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
