package switchmodel

import (
	"cmp"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// The order key of docs/model.md#event-order-and-determinism, pinned by hand-built
// expectations: at one picosecond the global events (in the order they were
// scheduled), then the injections (by index), then the nodes' events (by node, then
// in the order each node scheduled them).

// tagged records the arg of each event it handles, for handlers of several kinds.
type tagged struct{ got []int64 }

func (r *tagged) Handle(now units.Time, kind int32, arg int64) { r.got = append(r.got, arg) }

func TestEngineOrderKeyClasses(t *testing.T) {
	e := NewEngine()
	r := &tagged{}
	hg := e.Register(r)        // global
	hn := e.RegisterNode(r, 9) // node 9's handler (the scheduler decides the order)
	hs := e.RegisterShared(r)  // an injector
	e.ActAs(5)
	e.Schedule(10, hn, 0, 1) // node 5, its #0
	e.ActAs(NoNode)
	e.Schedule(10, hg, 0, 2) // global #0
	e.ScheduleInjection(10, 7, hs, 0, 3)
	e.ActAs(2)
	e.Schedule(10, hn, 0, 4) // node 2, its #0
	e.ScheduleInjection(10, 3, hs, 0, 5)
	e.ActAs(5)
	e.Schedule(10, hn, 0, 6) // node 5, its #1
	e.Schedule(10, hg, 0, 7) // for a global handler: global #1, whoever schedules it
	e.ActAs(NoNode)
	e.Schedule(10, hn, 0, 8) // acting globally: global #2
	e.Schedule(9, hn, 0, 9)  // earlier: first whatever its class
	e.ActAs(0)
	e.Schedule(10, hn, 0, 10) // node 0, its #0: the lowest node
	e.Run()
	want := []int64{9, 2, 7, 8, 5, 3, 10, 4, 1, 6}
	if !slices.Equal(r.got, want) {
		t.Fatalf("order %v, want %v", r.got, want)
	}
}

// node is a node's handler: on kind 1 it schedules, as its node, the events listed
// for it (at, arg) in order.
type nodeH struct {
	e    *Engine
	h    HandlerID
	rec  *tagged
	plan [][2]int64
}

func (n *nodeH) Handle(now units.Time, kind int32, arg int64) {
	if kind == 1 {
		for _, p := range n.plan {
			n.e.Schedule(units.Time(p[0]), n.h, 0, p[1])
		}
		return
	}
	n.rec.Handle(now, kind, arg)
}

// Two nodes each schedule events for the same picosecond; whichever node's event ran
// first, the tie runs in node order, and each node's events in its scheduling order.
func TestEngineTiesOfTwoNodesIgnoreSchedulingOrder(t *testing.T) {
	for _, aFirst := range []bool{true, false} {
		e := NewEngine()
		rec := &tagged{}
		a := &nodeH{e: e, rec: rec, plan: [][2]int64{{100, 31}, {100, 32}, {100, 33}}} // node 3
		b := &nodeH{e: e, rec: rec, plan: [][2]int64{{100, 12}, {100, 11}}}            // node 1
		a.h = e.RegisterNode(a, 3)
		b.h = e.RegisterNode(b, 1)
		if aFirst {
			e.Schedule(0, a.h, 1, 0)
			e.Schedule(1, b.h, 1, 0)
		} else {
			e.Schedule(0, b.h, 1, 0)
			e.Schedule(1, a.h, 1, 0)
		}
		e.Run()
		want := []int64{12, 11, 31, 32, 33}
		if !slices.Equal(rec.got, want) {
			t.Fatalf("a first %v: order %v, want %v", aFirst, rec.got, want)
		}
	}
}

// The same with the two nodes' triggering events themselves tied at one picosecond,
// scheduled in both orders by a global event.
func TestEngineTiedTriggersOfTwoNodes(t *testing.T) {
	for _, aFirst := range []bool{true, false} {
		e := NewEngine()
		rec := &tagged{}
		a := &nodeH{e: e, rec: rec, plan: [][2]int64{{50, 20}, {40, 21}}} // node 7
		b := &nodeH{e: e, rec: rec, plan: [][2]int64{{50, 10}, {40, 11}}} // node 4
		a.h = e.RegisterNode(a, 7)
		b.h = e.RegisterNode(b, 4)
		first, second := a.h, b.h
		if !aFirst {
			first, second = second, first
		}
		e.Schedule(5, first, 1, 0)
		e.Schedule(5, second, 1, 0)
		e.Run()
		want := []int64{11, 21, 10, 20}
		if !slices.Equal(rec.got, want) {
			t.Fatalf("a first %v: order %v, want %v", aFirst, rec.got, want)
		}
	}
}

// A node's reserved place keeps its rank among the node's own events, and against
// other nodes the node's rank: it runs where an event scheduled at reserve time would.
func TestEngineReserveKeepsItsPlace(t *testing.T) {
	e := NewEngine()
	rec := &tagged{}
	e.AddNodes(7)
	var saved uint64
	var hx, hy HandlerID
	hx = e.RegisterShared(HandlerFunc(func(now units.Time, kind int32, arg int64) {
		e.ActAs(6)
		switch kind {
		case 1: // node 6: schedule #0, reserve #1, schedule #2, all at 100
			e.Schedule(100, hx, 0, 60)
			saved = e.reserve()
			e.Schedule(100, hx, 0, 62)
		case 2: // node 6 later fills the reserved place
			if e.passed(100, saved) {
				t.Error("the reserved place counts as passed at t=50")
			}
			e.scheduleReserved(100, saved, hx, 0, 61)
		default:
			rec.Handle(now, kind, arg)
		}
	}))
	hy = e.RegisterNode(HandlerFunc(func(now units.Time, kind int32, arg int64) {
		if kind == 1 { // node 2 schedules after node 6 reserved, yet runs first
			e.Schedule(100, hy, 0, 20)
			return
		}
		rec.Handle(now, kind, arg)
	}), 2)
	e.Schedule(10, hx, 1, 0)
	e.Schedule(20, hy, 1, 0)
	e.Schedule(50, hx, 2, 0)
	e.Run()
	want := []int64{20, 60, 61, 62}
	if !slices.Equal(rec.got, want) {
		t.Fatalf("order %v, want %v", rec.got, want)
	}
	// At 100, while node 6's #2 (arg 62) ran last, its #1 had passed.
	if !e.passed(100, saved) || e.passed(101, saved) {
		t.Fatal("passed wrong after the run")
	}
}

// HandlerFunc adapts a function to EventHandler (tests).
type HandlerFunc func(now units.Time, kind int32, arg int64)

func (f HandlerFunc) Handle(now units.Time, kind int32, arg int64) { f(now, kind, arg) }

// Outside a handler the engine acts globally, also after Run left it in a node's event.
func TestEngineActsGloballyOutsideHandlers(t *testing.T) {
	e := NewEngine()
	rec := &tagged{}
	var h HandlerID
	h = e.RegisterNode(HandlerFunc(func(now units.Time, kind int32, arg int64) {
		rec.Handle(now, kind, arg)
		if arg == 1 {
			e.Schedule(200, h, 0, 3) // node 1's: after the global one at 200
		}
	}), 1)
	e.Schedule(100, h, 0, 1)
	e.RunUntil(150)
	e.Schedule(200, h, 0, 2) // outside a handler: global, first at 200
	e.Run()
	if want := []int64{1, 2, 3}; !slices.Equal(rec.got, want) {
		t.Fatalf("order %v, want %v", rec.got, want)
	}
}

// keyed draws a random dynamic workload over nodes, global events and injections and
// keeps, by its own bookkeeping, each event's expected key.
type keyed struct {
	e        *Engine
	hg, hs   HandlerID
	rng      *rand.Rand
	keys     []okey  // by arg
	nodeSeq  []int64 // the test's count of each node's schedules
	globSeq  int64
	injUsed  map[uint64]bool
	got      []int64
	left     int
	badPass  int // passed disagreed with the keys
	nodes    int32
	reserved []resv
}

type resv struct {
	at  units.Time
	ord uint64
	arg int64
}

// okey is an event's expected order key: time, class (0 global, 1 injection, 2 node),
// then the injection's index or the node and its counter, or the global counter.
type okey struct {
	at            units.Time
	class, node   int64
	seq           int64
	handlerNode   int32 // the node the event belongs to (-1 global)
	handledGlobal bool
}

func cmpKey(a, b okey) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.class, b.class), cmp.Compare(a.node, b.node), cmp.Compare(a.seq, b.seq))
}

// schedule adds an event at at whose scheduler acts as actor (-1: globally).
func (k *keyed) schedule(actor int32, at units.Time) {
	arg := int64(len(k.keys))
	ky := okey{at: at}
	switch c := k.rng.IntN(10); {
	case c == 0: // for the global handler
		ky.seq, ky.handledGlobal, ky.handlerNode = k.globSeq, true, -1
		k.globSeq++
		k.keys = append(k.keys, ky)
		k.e.Schedule(at, k.hg, 0, arg)
		return
	case c == 1: // an injection at a random node
		idx := k.rng.Uint64N(1 << 50)
		for k.injUsed[idx] {
			idx = k.rng.Uint64N(1 << 50)
		}
		k.injUsed[idx] = true
		ky.class, ky.seq, ky.handlerNode = 1, int64(idx), k.rng.Int32N(k.nodes)
		k.keys = append(k.keys, ky)
		k.e.ScheduleInjection(at, idx, k.hs, 0, arg)
		return
	}
	ky.handlerNode = k.rng.Int32N(k.nodes)
	if actor < 0 {
		ky.seq = k.globSeq
		k.globSeq++
	} else {
		ky.class, ky.node, ky.seq = 2, int64(actor), k.nodeSeq[actor]
		k.nodeSeq[actor]++
	}
	k.keys = append(k.keys, ky)
	if actor >= 0 && k.rng.IntN(4) == 0 { // reserve now, fill the place later
		k.reserved = append(k.reserved, resv{at, k.e.reserve(), arg})
		return
	}
	k.e.Schedule(at, k.hs, 0, arg)
}

func (k *keyed) Handle(now units.Time, kind int32, arg int64) {
	k.got = append(k.got, arg)
	ky := k.keys[arg]
	actor := int32(-1)
	if !ky.handledGlobal {
		actor = ky.handlerNode
		k.e.ActAs(actor)
	}
	// Fill the reserved places not passed yet (some now, the rest later).
	kept := k.reserved[:0]
	for _, r := range k.reserved {
		if k.e.passed(r.at, r.ord) != (cmpKey(k.keys[r.arg], ky) < 0) {
			k.badPass++
		}
		if k.e.passed(r.at, r.ord) {
			k.keys[r.arg].at = -1 // never scheduled: not expected
			continue
		}
		if k.rng.IntN(3) == 0 {
			k.e.scheduleReserved(r.at, r.ord, k.hs, 0, r.arg)
			continue
		}
		kept = append(kept, r)
	}
	k.reserved = kept
	n := k.rng.IntN(3)
	if k.e.Pending() < 200 {
		n = 2
	}
	for i := 0; i < n && k.left > 0; i++ {
		k.left--
		// Many ties, but none at now: an event scheduled for now with a key below
		// the current event's runs next, not in key order (TestEngineLateTie).
		d := units.Time(1 + k.rng.IntN(3))
		if k.rng.IntN(5) == 0 {
			d = units.Time(k.rng.IntN(3_000_000))
		}
		k.schedule(actor, now+d)
	}
}

func TestEngineRandomMatchesKeySort(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		e := NewEngine()
		k := &keyed{e: e, rng: rand.New(rand.NewPCG(seed, 99)), nodeSeq: make([]int64, 13), injUsed: map[uint64]bool{}, left: 60_000, nodes: 13}
		e.AddNodes(13)
		k.hg = e.Register(k)
		k.hs = e.RegisterShared(k)
		for i := 0; i < 40; i++ {
			k.schedule(-1, units.Time(k.rng.IntN(3)))
		}
		e.Run()
		if k.badPass > 0 {
			t.Fatalf("seed %d: passed disagreed with the keys %d times", seed, k.badPass)
		}
		for _, r := range k.reserved { // never filled
			k.keys[r.arg].at = -1
		}
		var want []int64
		for arg, ky := range k.keys {
			if ky.at >= 0 {
				want = append(want, int64(arg))
			}
		}
		slices.SortStableFunc(want, func(a, b int64) int { return cmpKey(k.keys[a], k.keys[b]) })
		if len(k.got) < 40_000 || !slices.Equal(k.got, want) {
			for i := range min(len(k.got), len(want)) {
				if k.got[i] != want[i] {
					t.Fatalf("seed %d: event #%d is %d %+v, want %d %+v", seed, i, k.got[i], k.keys[k.got[i]], want[i], k.keys[want[i]])
				}
			}
			t.Fatalf("seed %d: handled %d events, want %d", seed, len(k.got), len(want))
		}
		for i := 1; i < len(want); i++ {
			if cmpKey(k.keys[want[i-1]], k.keys[want[i]]) == 0 {
				t.Fatalf("seed %d: two events with one key", seed)
			}
		}
	}
}

func mustPanic(t *testing.T, what, msg string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("%s: no panic", what)
		}
		s, _ := r.(string)
		if err, ok := r.(error); ok {
			s = err.Error()
		}
		if !strings.Contains(s, msg) {
			t.Fatalf("%s: panic %v, want one containing %q", what, r, msg)
		}
	}()
	f()
}

func mustPanicRuntime(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if _, ok := recover().(runtime.Error); !ok {
			t.Fatalf("%s: no runtime panic", what)
		}
	}()
	f()
}

// A counter never wraps: its last ord is given out, the next schedule panics.
func TestEngineOrderOverflow(t *testing.T) {
	e := NewEngine()
	rec := &tagged{}
	h := e.RegisterNode(rec, 3)
	e.ActAs(3)
	ac := e.actorOf(3)
	ac.next = ac.end - 2
	e.Schedule(1, h, 0, 1)
	_ = e.reserve()
	mustPanic(t, "node counter", "node 3 scheduled 2^40 events", func() { e.Schedule(1, h, 0, 2) })
	mustPanic(t, "node reserve", "node 3 scheduled 2^40 events", func() { e.reserve() })
	// The last ord of node 3 is below node 4's first.
	if e.actorOf(3).end != e.actorOf(4).next {
		t.Fatal("node ranges not adjacent")
	}
	e.ActAs(NoNode)
	g := &e.global
	g.next = g.end
	mustPanic(t, "global counter", "global counter is exhausted", func() { e.Schedule(1, h, 0, 3) })
	mustPanic(t, "injection index", "MaxInjectionIndex", func() { e.ScheduleInjection(1, MaxInjectionIndex+1, h, 0, 0) })
	mustPanic(t, "node id", "outside 0..MaxEngineNodes-1", func() { e.RegisterNode(rec, MaxEngineNodes) })
	mustPanicRuntime(t, "ActAs of an unknown node", func() { e.ActAs(5) })
	mustPanicRuntime(t, "ActAs(-2)", func() { e.ActAs(-2) })
	if MaxEngineNodes < MaxNodes {
		t.Fatalf("MaxEngineNodes %d < MaxNodes %d", MaxEngineNodes, MaxNodes)
	}
	// The largest injection index is accepted and orders before node 0's first event.
	e2 := NewEngine()
	r2 := &tagged{}
	h2 := e2.RegisterNode(r2, 0)
	e2.ActAs(0)
	e2.Schedule(5, h2, 0, 2)
	e2.ScheduleInjection(5, MaxInjectionIndex, h2, 0, 1)
	e2.Run()
	if !slices.Equal(r2.got, []int64{1, 2}) {
		t.Fatalf("order %v", r2.got)
	}
}

// A shared handler that schedules before naming its node panics, clearly.
func TestEngineSharedHandlerMustActAs(t *testing.T) {
	e := NewEngine()
	var h HandlerID
	h = e.RegisterShared(HandlerFunc(func(now units.Time, kind int32, arg int64) {
		if kind == 0 {
			e.Schedule(now+1, h, 1, 0)
		}
	}))
	e.Schedule(0, h, 0, 0)
	mustPanic(t, "shared", "has not called ActAs", func() { e.Run() })
}

// An event scheduled for the current picosecond whose key is below the current
// event's cannot run in the past: it runs next, before the higher keys still pending.
func TestEngineLateTie(t *testing.T) {
	e := NewEngine()
	rec := &tagged{}
	hg := e.Register(rec)
	var hn HandlerID
	hn = e.RegisterNode(HandlerFunc(func(now units.Time, kind int32, arg int64) {
		rec.Handle(now, kind, arg)
		if arg == 1 {
			e.Schedule(now, hg, 0, 10) // global, for now: next
			e.ActAs(0)
			e.Schedule(now, hn, 0, 11) // node 0's, for now: then
			e.ActAs(8)
			e.Schedule(now, hn, 0, 12) // node 8's #2: after its #1 (arg 2)
		}
	}), 8)
	e.ActAs(8)
	e.Schedule(100, hn, 0, 1) // node 8's #0 ... (scheduled outside a handler as node 8)
	e.Schedule(100, hn, 0, 2) // ... and #1
	e.Run()
	if want := []int64{1, 10, 11, 2, 12}; !slices.Equal(rec.got, want) {
		t.Fatalf("order %v, want %v", rec.got, want)
	}
}

// Acting names the node an event acts for (its handler's, or ActAs's), NoNode for a
// global one; WrapHandlers puts a wrapper around every handler and changes no order.
func TestEngineActingAndWrapHandlers(t *testing.T) {
	e := NewEngine()
	e.AddNodes(8) // ActAs needs a known node
	var acted []int32
	var order []int64
	hn := e.RegisterNode(HandlerFunc(func(now units.Time, kind int32, arg int64) { order = append(order, arg) }), 4)
	hs := e.RegisterShared(HandlerFunc(func(now units.Time, kind int32, arg int64) {
		e.ActAs(int32(arg / 10))
		order = append(order, arg)
	}))
	hg := e.Register(HandlerFunc(func(now units.Time, kind int32, arg int64) { order = append(order, arg) }))
	wrapped := 0
	e.WrapHandlers(func(h EventHandler) EventHandler {
		wrapped++
		return HandlerFunc(func(now units.Time, kind int32, arg int64) {
			h.Handle(now, kind, arg)
			acted = append(acted, e.Acting())
		})
	})
	if wrapped != 3 {
		t.Fatalf("%d handlers wrapped, want 3", wrapped)
	}
	// Scheduled outside any handler, all three take the global counter: call order.
	e.Schedule(10, hn, 0, 1)  // node 4's handler
	e.Schedule(10, hs, 0, 72) // acts as node 7
	e.Schedule(10, hg, 0, 3)  // a global handler
	e.Run()
	if want := []int64{1, 72, 3}; !slices.Equal(order, want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	if want := []int32{4, 7, NoNode}; !slices.Equal(acted, want) {
		t.Fatalf("acted %v, want %v", acted, want)
	}
	if e.Acting() != NoNode {
		t.Fatalf("Acting after Run = %d, want NoNode", e.Acting())
	}
}

// keyRun builds the same small dynamic workload every time: three nodes and a global
// handler, events at a few picoseconds (many ties), each node event scheduling a
// child on another node. It returns the engine and the list the handlers append
// their args to.
func keyRun() (*Engine, *[]int64) {
	e := NewEngine()
	got := &[]int64{}
	var hs [3]HandlerID
	for k := range hs {
		hs[k] = e.RegisterNode(HandlerFunc(func(now units.Time, kind int32, arg int64) {
			*got = append(*got, arg)
			if arg < 1000 {
				e.Schedule(now+units.Time(arg%3), hs[(k+1)%3], 0, arg*10+int64(k))
			}
		}), int32(k))
	}
	hg := e.Register(HandlerFunc(func(now units.Time, kind int32, arg int64) { *got = append(*got, arg) }))
	for i := range 12 {
		e.Schedule(units.Time(i%4), hs[i%3], 0, int64(i+1))
		if i%5 == 0 {
			e.Schedule(units.Time(i%4), hg, 0, int64(-i-1))
		}
	}
	return e, got
}

// RunBeforeKey(k) handles exactly the events before key k (the keys the handlers
// read with Key in a full run), NextKey then names the next one, and the rest of the
// run is unchanged.
func TestEngineRunBeforeKey(t *testing.T) {
	e, got := keyRun()
	type key struct {
		at  units.Time
		ord uint64
	}
	var keys []key
	e.WrapHandlers(func(h EventHandler) EventHandler {
		return HandlerFunc(func(now units.Time, kind int32, arg int64) {
			at, ord := e.Key()
			keys = append(keys, key{at, ord})
			h.Handle(now, kind, arg)
		})
	})
	e.Run()
	full := slices.Clone(*got)
	if len(full) < 30 {
		t.Fatalf("only %d events", len(full))
	}
	for i := 1; i < len(keys); i++ {
		a, b := keys[i-1], keys[i]
		if a.at > b.at || (a.at == b.at && a.ord >= b.ord) {
			t.Fatalf("keys %d, %d out of order: %v %v", i-1, i, a, b)
		}
	}
	for k := range keys {
		e2, got2 := keyRun()
		left := e2.RunBeforeKey(keys[k].at, keys[k].ord)
		if !left || !slices.Equal(*got2, full[:k]) {
			t.Fatalf("before key %d: handled %v (pending %v), want %v", k, *got2, left, full[:k])
		}
		if at, ord, ok := e2.NextKey(); !ok || at != keys[k].at || ord != keys[k].ord {
			t.Fatalf("after key %d: NextKey %d %d %v, want %v", k, at, ord, ok, keys[k])
		}
		e2.Run()
		if !slices.Equal(*got2, full) {
			t.Fatalf("resumed after key %d: %v, want %v", k, *got2, full)
		}
	}
	e3, got3 := keyRun()
	if e3.RunBeforeKey(1<<62, 0) || !slices.Equal(*got3, full) {
		t.Fatal("RunBeforeKey beyond the last event did not run everything")
	}
	if _, _, ok := e3.NextKey(); ok {
		t.Fatal("NextKey on an empty engine")
	}
}

// docs/model.md#event-order-and-determinism, the example: two hosts' frames reach one
// switch port at the same picosecond; the switch takes them in the order of the
// sending hosts' node ids, whichever was injected first, by InjectAt (injection
// class) or by a global handler's Inject (the NIC acts as its host).
func TestTiedArrivalsRunInSenderOrder(t *testing.T) {
	l := LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond}
	for _, viaInjectAt := range []bool{true, false} {
		for _, lowFirst := range []bool{true, false} {
			st := newStar(t, 3, defaultSwitch(), l)
			lo, hi := st.hosts[1], st.hosts[2] // node ids 2 and 3 (the switch is 0)
			if lo.ID() >= hi.ID() {
				t.Fatalf("node ids %d, %d", lo.ID(), hi.ID())
			}
			order := []*Host{lo, hi}
			if !lowFirst {
				order = []*Host{hi, lo}
			}
			if viaInjectAt {
				for _, h := range order {
					id, p := st.net.NewPacket()
					p.Src, p.Dst, p.Length, p.TraceIndex = h.Index(), st.hosts[0].Index(), 1500, int64(h.Index())
					st.net.InjectAt(1000, h, id)
				}
			} else {
				in := newInjector(st.net, []pktSpec{
					{at: 1000, src: order[0].Index(), dst: 0, length: 1500},
					{at: 1000, src: order[1].Index(), dst: 0, length: 1500}})
				_ = in
			}
			st.eng.Run()
			d := st.obs.deliveries
			if len(d) != 2 || d[0].src != lo.Index() || d[1].src != hi.Index() || d[1].at <= d[0].at {
				t.Fatalf("InjectAt %v, low first %v: deliveries %+v; want host %d's first", viaInjectAt, lowFirst, d, lo.Index())
			}
			checkDrained(t, st.net)
		}
	}
}

// Acting on another node's behalf and back: the events take that node's counter, then
// the handler's again.
func TestEngineActorRestore(t *testing.T) {
	e := NewEngine()
	rec := &tagged{}
	var h HandlerID
	h = e.RegisterNode(HandlerFunc(func(now units.Time, kind int32, arg int64) {
		if kind == 1 {
			e.Schedule(50, h, 0, 40) // node 4's #0
			a := e.Actor()
			e.ActAs(1)
			e.Schedule(50, h, 0, 10) // node 1's #0
			e.RestoreActor(a)
			e.Schedule(50, h, 0, 41) // node 4's #1
			return
		}
		rec.Handle(now, kind, arg)
	}), 4)
	e.Schedule(0, h, 1, 0)
	e.Run()
	if want := []int64{10, 40, 41}; !slices.Equal(rec.got, want) {
		t.Fatalf("order %v, want %v", rec.got, want)
	}
}
