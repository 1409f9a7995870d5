package switchmodel

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

type recorder struct {
	got []int64
	at  []units.Time
}

func (r *recorder) Handle(now units.Time, kind int32, arg int64) {
	r.got = append(r.got, arg)
	r.at = append(r.at, now)
}

func TestEngineOrdersByTimeThenInsertion(t *testing.T) {
	tests := []struct {
		name  string
		times []units.Time
		want  []int64 // args in expected order; arg = insertion index
	}{
		{"increasing", []units.Time{1, 2, 3}, []int64{0, 1, 2}},
		{"decreasing", []units.Time{3, 2, 1}, []int64{2, 1, 0}},
		{"ties keep insertion order", []units.Time{5, 5, 5, 5, 5, 5, 5}, []int64{0, 1, 2, 3, 4, 5, 6}},
		{"mixed ties", []units.Time{2, 1, 2, 1, 0, 2}, []int64{4, 1, 3, 0, 2, 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine()
			r := &recorder{}
			h := e.Register(r)
			for i, at := range tc.times {
				e.Schedule(at, h, 0, int64(i))
			}
			e.Run()
			if len(r.got) != len(tc.want) {
				t.Fatalf("handled %d events, want %d", len(r.got), len(tc.want))
			}
			for i := range tc.want {
				if r.got[i] != tc.want[i] {
					t.Fatalf("order %v, want %v", r.got, tc.want)
				}
			}
			if e.Processed() != uint64(len(tc.times)) {
				t.Fatalf("Processed = %d", e.Processed())
			}
		})
	}
}

func TestEngineRandomMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	e := NewEngine()
	r := &recorder{}
	h := e.Register(r)
	const n = 20000
	times := make([]units.Time, n)
	for i := range times {
		times[i] = units.Time(rng.IntN(500))
		e.Schedule(times[i], h, 0, int64(i))
	}
	e.Run()
	for i := 1; i < n; i++ {
		a, b := r.got[i-1], r.got[i]
		if times[a] > times[b] || (times[a] == times[b] && a > b) {
			t.Fatalf("event %d (t=%d) before %d (t=%d)", a, times[a], b, times[b])
		}
	}
}

type chain struct {
	e    *Engine
	h    HandlerID
	left int
}

func (c *chain) Handle(now units.Time, kind int32, arg int64) {
	if c.left > 0 {
		c.left--
		c.e.Schedule(now+10, c.h, 0, 0)
	}
}

func TestEngineRunUntil(t *testing.T) {
	e := NewEngine()
	c := &chain{e: e, left: 100}
	c.h = e.Register(c)
	e.Schedule(0, c.h, 0, 0)
	if !e.RunUntil(495) {
		t.Fatal("RunUntil reported nothing pending")
	}
	if e.Now() != 490 {
		t.Fatalf("Now = %d, want 490", e.Now())
	}
	if next, _ := e.NextTime(); next != 500 {
		t.Fatalf("next = %d, want 500", next)
	}
	if e.RunUntil(2000) {
		t.Fatal("events left after the chain ended")
	}
	if e.Now() != 1000 || e.Processed() != 101 {
		t.Fatalf("Now = %d processed = %d, want 1000 and 101", e.Now(), e.Processed())
	}
}

type nop struct{}

func (nop) Handle(units.Time, int32, int64) {}

// BenchmarkEngine measures one Schedule plus one pop+dispatch with 100k events pending.
func BenchmarkEngine(b *testing.B) {
	for _, pending := range []int{1, 1000, 100000} {
		b.Run(itoa(pending), func(b *testing.B) {
			e := NewEngine()
			h := e.Register(nop{})
			rng := rand.New(rand.NewPCG(3, 4))
			for i := 0; i < pending; i++ {
				e.Schedule(units.Time(rng.IntN(1_000_000)), h, 0, 0)
			}
			delays := make([]units.Time, 4096)
			for i := range delays {
				delays[i] = units.Time(rng.IntN(1_000_000))
			}
			b.ReportAllocs()
			b.ResetTimer()
			defer cpuClock(b, nil, "")()
			for i := 0; i < b.N; i++ {
				e.Schedule(e.now+delays[i&4095], h, 0, 0)
				e.step(units.Time(1<<63 - 1))
			}
		})
	}
}

func itoa(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return itoa(n/1000) + "k"
	}
	s := ""
	for n > 0 || s == "" {
		s = string(rune('0'+n%10)) + s
		n /= 10
	}
	return s
}

// holder reschedules itself once per event: the classic "hold" model of event-list
// benchmarks, through Engine.RunUntil (the handled slot is reused by the reschedule).
type holder struct {
	e      *Engine
	h      HandlerID
	delays []units.Time
	i      int
	left   int
}

func (c *holder) Handle(now units.Time, kind int32, arg int64) {
	if c.left > 0 {
		c.left--
		c.i++
		c.e.Schedule(now+c.delays[c.i&4095], c.h, 0, 0)
	}
}

// BenchmarkEngineHold measures one event handled and one scheduled, with 100k pending.
func BenchmarkEngineHold(b *testing.B) {
	for _, pending := range []int{1000, 100000} {
		b.Run(itoa(pending), func(b *testing.B) {
			e := NewEngine()
			rng := rand.New(rand.NewPCG(3, 4))
			c := &holder{e: e, left: b.N, delays: make([]units.Time, 4096)}
			for i := range c.delays {
				c.delays[i] = units.Time(rng.IntN(1_000_000))
			}
			c.h = e.Register(c)
			for i := 0; i < pending; i++ {
				e.Schedule(units.Time(rng.IntN(1_000_000)), c.h, 0, 0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			done := cpuClock(b, nil, "")
			e.RunUntil(units.Time(1 << 62))
			b.StopTimer()
			done()
			if e.Processed() != uint64(b.N+pending) {
				b.Fatalf("processed %d", e.Processed())
			}
		})
	}
}

// The handled slot reuse keeps the order exact whatever a handler does: schedule none,
// one or several events, ask Pending or NextTime.
type mixed struct {
	e    *Engine
	h    HandlerID
	rng  *rand.Rand
	seen []units.Time
	seqs []int64
	next int64
	left int
	t    *testing.T
}

func (m *mixed) Handle(now units.Time, kind int32, arg int64) {
	m.seen = append(m.seen, now)
	m.seqs = append(m.seqs, arg)
	if m.rng.IntN(4) == 0 {
		if nt, ok := m.e.NextTime(); ok && nt < now {
			m.t.Fatalf("NextTime %d before now %d", nt, now)
		}
	}
	k := m.rng.IntN(3)
	for i := 0; i < k && m.left > 0; i++ {
		m.left--
		m.next++
		m.e.Schedule(now+units.Time(m.rng.IntN(5)), m.h, 0, m.next)
	}
	if m.e.Pending() < 0 {
		m.t.Fatal("negative Pending")
	}
}

func TestEngineHandlerScheduling(t *testing.T) {
	e := NewEngine()
	m := &mixed{e: e, rng: rand.New(rand.NewPCG(5, 6)), left: 50000, t: t}
	m.h = e.Register(m)
	for i := 0; i < 50; i++ {
		m.next++
		e.Schedule(units.Time(i%3), m.h, 0, m.next)
	}
	e.Run()
	// Times never decrease; equal times come in insertion (arg) order.
	for i := 1; i < len(m.seen); i++ {
		if m.seen[i] < m.seen[i-1] || (m.seen[i] == m.seen[i-1] && m.seqs[i] < m.seqs[i-1]) {
			t.Fatalf("event %d (t=%d, #%d) after (t=%d, #%d)", i, m.seen[i], m.seqs[i], m.seen[i-1], m.seqs[i-1])
		}
	}
	if uint64(len(m.seen)) != e.Processed() || int64(len(m.seen)) != m.next || e.Pending() != 0 {
		t.Fatalf("handled %d, scheduled %d, processed %d", len(m.seen), m.next, e.Processed())
	}
}

// geo schedules through phases of very different event densities and horizons, so
// the calendar changes its geometry several times while events are pending.
type geo struct {
	e         *Engine
	h         HandlerID
	rng       *rand.Rand
	at        []units.Time
	args      []int64
	next      int64
	left      int
	nb, w     map[uint]bool
	maxPend   int
	handled   int
	phaseSize int
}

func (g *geo) Handle(now units.Time, kind int32, arg int64) {
	g.at = append(g.at, now)
	g.args = append(g.args, arg)
	g.handled++
	g.nb[g.e.nbBits], g.w[g.e.w] = true, true
	g.maxPend = max(g.maxPend, g.e.Pending())
	var d func() units.Time
	switch (g.handled / g.phaseSize) % 4 {
	case 0: // wide: up to 1 us, growing to thousands pending
		d = func() units.Time { return units.Time(g.rng.IntN(1_000_000)) }
	case 1: // dense: ties and picoseconds
		d = func() units.Time { return units.Time(g.rng.IntN(8)) }
	case 2: // sparse far timers mixed with near events
		d = func() units.Time {
			if g.rng.IntN(3) == 0 {
				return units.Time(1_000_000_000 + g.rng.Int64N(1_000_000_000_000))
			}
			return units.Time(g.rng.IntN(100_000))
		}
	default: // the hold model at 1k-100 ns
		d = func() units.Time { return units.Time(100_000 + g.rng.IntN(900_000)) }
	}
	k := g.rng.IntN(3)
	if g.e.Pending() < 50 {
		k = 2
	}
	if g.e.Pending() > 300_000 {
		k = 0
	}
	for i := 0; i < k && g.left > 0; i++ {
		g.left--
		g.next++
		g.e.Schedule(now+d(), g.h, 0, g.next)
	}
}

// The calendar's geometry (bucket count and width) adapts as the load changes; the
// order stays exactly (time, insertion).
func TestEngineGeometryChanges(t *testing.T) {
	e := NewEngine()
	g := &geo{e: e, rng: rand.New(rand.NewPCG(9, 10)), left: 800_000, nb: map[uint]bool{}, w: map[uint]bool{}, phaseSize: 100_000}
	g.h = e.Register(g)
	g.nb[e.nbBits], g.w[e.w] = true, true
	// Scheduled before running, out of order and crowded in one bucket.
	for i := 0; i < 30_000; i++ {
		g.next++
		e.Schedule(units.Time(g.rng.IntN(3000)), g.h, 0, g.next)
	}
	// Run in slices, scheduling between them too (the InjectAt pattern), then to the end.
	for lim, i := units.Time(0), 0; i < 3000 && e.Pending() > 0; lim, i = lim+7_777_777, i+1 {
		e.RunUntil(lim)
		if nt, ok := e.NextTime(); ok && nt <= lim {
			t.Fatalf("RunUntil(%d) left an event at %d", lim, nt)
		}
		g.next++
		e.Schedule(lim+1, g.h, 0, g.next)
	}
	e.Run()
	for i := 1; i < len(g.at); i++ {
		if g.at[i] < g.at[i-1] || (g.at[i] == g.at[i-1] && g.args[i] < g.args[i-1]) {
			t.Fatalf("event %d (t=%d, #%d) after (t=%d, #%d)", i, g.at[i], g.args[i], g.at[i-1], g.args[i-1])
		}
	}
	if int64(len(g.at)) != g.next || e.Processed() != uint64(g.next) {
		t.Fatalf("handled %d, scheduled %d, processed %d", len(g.at), g.next, e.Processed())
	}
	if len(g.nb) < 2 || len(g.w) < 3 {
		t.Fatalf("geometry barely changed: bucket counts %v, widths %v (max pending %d)", g.nb, g.w, g.maxPend)
	}
	t.Logf("bucket bits %v, width bits %v, max pending %d, events %d", g.nb, g.w, g.maxPend, len(g.at))
}

// periodic reschedules itself every period: one pending event, far apart in buckets.
type periodic struct {
	e      *Engine
	h      HandlerID
	period units.Time
	left   int
}

func (p *periodic) Handle(now units.Time, kind int32, arg int64) {
	if p.left--; p.left > 0 {
		p.e.Schedule(now+p.period, p.h, 0, 0)
	}
}

// After a dense phase has made the buckets narrow and many, a sparse phase whose events
// stay just inside the ring widens them again (finding the next event would otherwise
// scan thousands of empty bitmap words per event).
func TestEngineWidensSparseRing(t *testing.T) {
	e := NewEngine()
	rng := rand.New(rand.NewPCG(1, 1))
	h := e.Register(nop{})
	for i := 0; i < 100_000; i++ {
		e.Schedule(units.Time(rng.IntN(1_000_000)), h, 0, 0)
	}
	e.Run()
	nb, w := e.nbBits, e.w
	span := e.span
	p := &periodic{e: e, period: span * 9 / 10, left: 3 * calTuneEvery}
	p.h = e.Register(p)
	e.Schedule(e.Now(), p.h, 0, 0)
	e.Run()
	if e.w <= w {
		t.Fatalf("dense phase left %d buckets of 2^%d ps; sparse phase still 2^%d ps (%d buckets)", 1<<nb, w, e.w, 1<<e.nbBits)
	}
	t.Logf("dense: 2^%d buckets of 2^%d ps; sparse: 2^%d ps", nb, w, e.w)
}

// lazyNet drives the reserve / scheduleReserved path against an eager reference. Every
// handled event schedules one child or two at pseudo-random delays (ties included). Half
// the children are "lazy": the eager run schedules them at once; the lazy run only
// reserves their place. While a lazy child waits, each handled event may activate it
// (a coin flip on both ids): the lazy run then schedules it into its reserved place,
// and the eager run handles it as a real event rather than a no-op. Both runs must
// handle the real events in the same order, and passed must turn true in the lazy run
// exactly where the eager run handled a child that nobody activated.
type lazyNet struct {
	e      *Engine
	h      HandlerID
	nodes  int // > 0: a shared handler whose event arg acts as node arg % nodes
	lazy   bool
	next   int64
	left   int
	order  []int64 // ids of the real events handled
	wait   []reservedEv
	noops  map[int64]int // eager: unactivated child id -> len(order) when handled
	passes map[int64]int // lazy: unactivated child id -> len(order) when it passed
}

type reservedEv struct {
	at     units.Time
	seq    uint64
	id     int64
	active bool // eager run: activated
}

func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	return x ^ x>>33
}

func (l *lazyNet) Handle(now units.Time, kind int32, arg int64) {
	if l.nodes > 0 {
		l.e.ActAs(int32(arg % int64(l.nodes)))
	}
	if kind == 1 { // a lazy child in the eager run
		i := slices.IndexFunc(l.wait, func(r reservedEv) bool { return r.id == arg })
		r := l.wait[i]
		l.wait = slices.Delete(l.wait, i, i+1)
		if !r.active {
			l.noops[arg] = len(l.order)
			return
		}
	}
	l.order = append(l.order, arg)
	kept := l.wait[:0]
	for _, r := range l.wait {
		if l.lazy && l.e.passed(r.at, r.seq) {
			l.passes[r.id] = len(l.order) - 1
			continue
		}
		if !r.active && mix(uint64(arg)<<20^uint64(r.id))%4 == 0 {
			if l.lazy {
				l.e.scheduleReserved(r.at, r.seq, l.h, 0, r.id)
				continue
			}
			r.active = true
		}
		kept = append(kept, r)
	}
	l.wait = kept
	children := 1 + int(mix(uint64(arg)*3)%2)
	for c := 0; c < children && l.left > 0; c++ {
		l.left--
		l.next++
		id := l.next
		y := mix(uint64(id) * 7)
		d := units.Time(y % 4 * (y >> 8 % 5)) // 0..12 ps: many ties
		if y>>20%3 == 0 {
			d = units.Time(y >> 24 % 5000)
		}
		switch {
		case y>>40%2 == 0:
			l.e.Schedule(now+d, l.h, 0, id)
		case l.lazy:
			l.wait = append(l.wait, reservedEv{at: now + d, seq: l.e.reserve(), id: id})
		default:
			l.e.Schedule(now+d, l.h, 1, id)
			l.wait = append(l.wait, reservedEv{at: now + d, id: id})
		}
	}
}

func TestEngineReservedPlaces(t *testing.T) {
	for _, nodes := range []int{0, 5} {
		testReservedPlaces(t, nodes)
	}
}

// testReservedPlaces runs the lazy and the eager network, with a global handler
// (nodes 0) or as nodes events of nodes 0..nodes-1 (reserving from their counters).
func testReservedPlaces(t *testing.T, nodes int) {
	run := func(lazy bool) *lazyNet {
		e := NewEngine()
		l := &lazyNet{e: e, lazy: lazy, left: 60_000, noops: map[int64]int{}, passes: map[int64]int{}, nodes: nodes}
		if nodes > 0 {
			e.AddNodes(int32(nodes))
			l.h = e.RegisterShared(l)
		} else {
			l.h = e.Register(l)
		}
		for i := 0; i < 200; i++ {
			l.next++
			e.Schedule(units.Time(i%7), l.h, 0, l.next)
		}
		e.Run()
		if !lazy && len(l.wait) > 0 {
			t.Fatalf("eager run: %d lazy children never handled", len(l.wait))
		}
		for _, r := range l.wait { // never needed: the eager run handled them last
			l.passes[r.id] = len(l.order)
		}
		return l
	}
	eager, lazy := run(false), run(true)
	if len(eager.order) < 30_000 || !slices.Equal(eager.order, lazy.order) {
		t.Fatalf("orders differ: eager %d events, lazy %d", len(eager.order), len(lazy.order))
	}
	if len(eager.noops) < 500 || len(eager.noops) != len(lazy.passes) {
		t.Fatalf("%d unactivated events handled by the eager run, %d passed in the lazy run", len(eager.noops), len(lazy.passes))
	}
	for id, at := range eager.noops {
		if lazy.passes[id] != at {
			t.Fatalf("event %d: handled by the eager run before real event #%d, passed in the lazy run at #%d", id, at, lazy.passes[id])
		}
	}
	t.Logf("nodes %d: %d real events, %d never activated", nodes, len(eager.order), len(eager.noops))
}

// Ties append at the tail of their bucket's list in O(1): the list's first node keeps
// the tail, through inserts before, among and after the list's events and pops.
func TestEngineTiesAppendAtTheTail(t *testing.T) {
	e := NewEngine()
	r := &recorder{}
	h := e.Register(r)
	const n = 20_000
	e.Schedule(1_000_000, h, 0, -1) // another bucket
	for i := 0; i < n; i++ {
		e.Schedule(5, h, 0, int64(i))
	}
	e.Schedule(4, h, 0, -2) // a new earliest: the inline event moves to the list
	if e.walks != 0 || e.nbBits != calMinBits || e.w != calWidthBits {
		t.Fatalf("%d list steps for %d appends of equal times (geometry 2^%d x 2^%d ps)", e.walks, n, e.nbBits, e.w)
	}
	e.RunUntil(5)
	if len(r.got) != n+1 || r.got[0] != -2 || e.Pending() != 1 {
		t.Fatalf("handled %d, first %d, pending %d", len(r.got), r.got[0], e.Pending())
	}
	for i := 1; i <= n; i++ {
		if r.got[i] != int64(i-1) {
			t.Fatalf("event %d is #%d", i, r.got[i])
		}
	}
}

func TestEngineRejectsBadKinds(t *testing.T) {
	for _, kind := range []int32{-1, 256, 1 << 30} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("kind %d accepted", kind)
				}
			}()
			e := NewEngine()
			e.Schedule(0, e.Register(nop{}), kind, 0)
		}()
	}
	e := NewEngine()
	r := &recorder{}
	h := e.Register(r)
	e.Schedule(1, h, 255, 42)
	e.Run()
	if len(r.got) != 1 || r.got[0] != 42 {
		t.Fatalf("kind 255: %v", r.got)
	}
}
