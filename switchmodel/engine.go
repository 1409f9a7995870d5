package switchmodel

import (
	"fmt"

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

// event is one pending event: 32 bytes, no pointers (the heap is not scanned by the GC).
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

// Engine is a discrete-event scheduler: simulated time in integer picoseconds, events
// ordered by (time, insertion sequence) so ties break by insertion order. The pending
// set is a typed 4-ary min-heap; components keep at most one pending event each where
// possible (a busy port, a link's head frame, a timer), so the heap holds O(ports)
// entries rather than O(packets). An Engine is a plain value passed to components:
// several simulations may run in one process.
type Engine struct {
	now       units.Time
	seq       uint64
	heap      []event
	handlers  []EventHandler
	processed uint64
	stopped   bool
	// rootDone is true while the handler of heap[0] runs: that slot is free, and the
	// handler's first Schedule replaces it (one sift instead of a pop and a push).
	rootDone bool
}

// NewEngine returns an empty engine at time 0.
func NewEngine() *Engine {
	return &Engine{heap: make([]event, 0, 1024)}
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
func (e *Engine) Pending() int {
	if e.rootDone {
		return len(e.heap) - 1
	}
	return len(e.heap)
}

// Processed is the number of events handled so far.
func (e *Engine) Processed() uint64 { return e.processed }

// Schedule queues an event for handler h at time at. A time before Now is an error of
// the caller; it is clamped to Now so time never runs backwards.
func (e *Engine) Schedule(at units.Time, h HandlerID, kind int32, arg int64) {
	if at < e.now {
		at = e.now
	}
	e.seq++
	ev := event{at: at, seq: e.seq, arg: arg, h: h, kind: kind}
	if e.rootDone {
		e.rootDone = false
		e.replaceRoot(ev)
		return
	}
	e.heap = append(e.heap, ev)
	e.up(len(e.heap) - 1)
}

// Stop makes the running Run or RunUntil return after the current event.
func (e *Engine) Stop() { e.stopped = true }

// NextTime returns the time of the earliest pending event and true, or false if none.
func (e *Engine) NextTime() (units.Time, bool) {
	e.settle()
	if len(e.heap) == 0 {
		return 0, false
	}
	return e.heap[0].at, true
}

// settle removes the handled root if the running handler did not reuse its slot.
func (e *Engine) settle() {
	if e.rootDone {
		e.rootDone = false
		e.pop()
	}
}

// Run handles events until none is pending or Stop is called.
func (e *Engine) Run() { e.RunUntil(units.Time(1<<63 - 1)) }

// RunUntil handles every event whose time is <= limit, in order, until none is left,
// or Stop is called. It returns true if events are still pending (all later than limit,
// or left by Stop). Now is left at the last handled event's time.
func (e *Engine) RunUntil(limit units.Time) bool {
	e.stopped = false
	for len(e.heap) > 0 && !e.stopped {
		if e.heap[0].at > limit {
			return true
		}
		ev := e.heap[0]
		e.rootDone = true
		e.now = ev.at
		e.processed++
		e.handlers[ev.h].Handle(ev.at, ev.kind, ev.arg)
		e.settle()
	}
	return len(e.heap) > 0
}

// replaceRoot puts x in place of the handled root and sifts it down (a new event is
// usually near-future and stops early).
func (e *Engine) replaceRoot(x event) {
	h := e.heap
	n := len(h)
	i := 0
	for {
		c := i<<2 + 1
		if c >= n {
			break
		}
		m := c
		end := min(c+4, n)
		for j := c + 1; j < end; j++ {
			if h[j].before(&h[m]) {
				m = j
			}
		}
		if !h[m].before(&x) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = x
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
	return fmt.Sprintf("engine{now=%v pending=%d processed=%d}", e.now, len(e.heap), e.processed)
}
