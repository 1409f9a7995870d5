package switchmodel

import (
	"math"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// call runs f at time at from the event loop (tests drive internals with it).
type call struct{ f func(now units.Time) }

func (c *call) Handle(now units.Time, kind int32, arg int64) { c.f(now) }

func at(e *Engine, t units.Time, f func(now units.Time)) {
	e.Schedule(t, e.Register(&call{f}), 0, 0)
}

// docs/model.md#priority-flow-control: one quantum is 512 bit times; 65535 quanta last 65535*512/C exactly
// (335.5 us at 100 Gb/s), and the pause expires then unless refreshed.
func TestPFCPauseDurationPerSpeed(t *testing.T) {
	tests := []struct {
		speed units.BitRate
		want  units.Time // 65535*512/C in ps, hand-computed
	}{
		{10 * units.Gbps, 3_355_392_000},
		{25 * units.Gbps, 1_342_156_800},
		{100 * units.Gbps, 335_539_200},
		{400 * units.Gbps, 83_884_800},
	}
	for _, tc := range tests {
		t.Run(tc.speed.String(), func(t *testing.T) {
			prop := units.Microsecond
			st := newStar(t, 2, defaultSwitch(), LinkSpec{Speed: tc.speed, PropagationDelay: prop})
			swPort := st.sw.ports[0] // faces host 0
			at(st.eng, 0, func(now units.Time) { st.net.sendPFC(now, swPort, 1<<3, PFCQuanta) })
			// A TC3 and a TC0 packet at host 0 after the pause arrived.
			pfcArrive := units.SerializationTime(84, tc.speed) + prop
			newInjector(st.net, []pktSpec{
				{at: pfcArrive + 10, src: 0, dst: 1, length: 1000, dscp: 3 << 3},
				{at: pfcArrive + 10, src: 0, dst: 1, length: 1000, dscp: 0},
			})
			st.eng.Run()
			rx := st.obs.pfcOf(PFCRxPause)
			ex := st.obs.pfcOf(PFCExpire)
			if len(rx) != 1 || rx[0].Time != pfcArrive || rx[0].TC != 3 || rx[0].Quanta != PFCQuanta {
				t.Fatalf("rx_pause %+v, want one at %d", rx, pfcArrive)
			}
			if len(ex) != 1 || ex[0].Time != pfcArrive+tc.want || ex[0].Node != st.hosts[0].ID() {
				t.Fatalf("expire %+v, want at %d", ex, pfcArrive+tc.want)
			}
			// TC0 went at once, TC3 waited for the expiry: paused class skipped.
			d := st.obs.deliveries
			ser := units.SerializationTime(1038, tc.speed)
			if len(d) != 2 || d[0].tc != 0 || d[0].at != pfcArrive+10+2*(ser+prop) {
				t.Fatalf("TC0 delivery %+v", d)
			}
			if d[1].tc != 3 || d[1].at != pfcArrive+tc.want+2*(ser+prop) {
				t.Fatalf("TC3 delivered at %d, want %d", d[1].at, pfcArrive+tc.want+2*(ser+prop))
			}
			ps := st.hosts[0].PortStats(0)
			if ps[3].PausedPs != tc.want || ps[3].PFCPauseRx != 1 {
				t.Fatalf("paused %d ps, rx %d", ps[3].PausedPs, ps[3].PFCPauseRx)
			}
			sws := st.sw.PortStats(0)
			if sws[3].PFCPauseTx != 1 || st.net.Counters().PFCFrames != 1 {
				t.Fatal("PFC frame not counted")
			}
			checkDrained(t, st.net)
		})
	}
}

// docs/model.md#priority-flow-control: quanta 0 resumes at once; a later pause frame overrides the timer.
func TestPFCResumeAndOverride(t *testing.T) {
	c := 100 * units.Gbps
	prop := units.Microsecond
	pfcLat := units.SerializationTime(84, c) + prop
	ser := units.SerializationTime(1038, c)
	tests := []struct {
		name   string
		frames []struct {
			t units.Time
			q uint16
		}
		release units.Time // when host 0 may send TC3 again
	}{
		{"xon resumes at once", []struct {
			t units.Time
			q uint16
		}{{0, PFCQuanta}, {50 * units.Microsecond, 0}}, 50*units.Microsecond + pfcLat},
		{"later pause overrides timer", []struct {
			t units.Time
			q uint16
		}{{0, PFCQuanta}, {100 * units.Microsecond, 1000}}, 100*units.Microsecond + pfcLat + units.SerializationTime(1000*64, c)},
		{"refresh extends", []struct {
			t units.Time
			q uint16
		}{{0, PFCQuanta}, {100 * units.Microsecond, PFCQuanta}}, 100*units.Microsecond + pfcLat + 335_539_200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newStar(t, 2, defaultSwitch(), LinkSpec{Speed: c, PropagationDelay: prop})
			swPort := st.sw.ports[0]
			for _, f := range tc.frames {
				f := f
				at(st.eng, f.t, func(now units.Time) { st.net.sendPFC(now, swPort, 1<<3|1<<4, f.q) })
			}
			newInjector(st.net, []pktSpec{{at: 10 * units.Microsecond, src: 0, dst: 1, length: 1000, dscp: 4 << 3}})
			st.eng.Run()
			if len(st.obs.deliveries) != 1 {
				t.Fatal("not delivered")
			}
			if got, want := st.obs.deliveries[0].at, tc.release+2*(ser+prop); got != want {
				t.Fatalf("delivered at %d, want %d", got, want)
			}
			checkDrained(t, st.net)
		})
	}
}

// docs/model.md#ports-links-and-scheduling: a frame being transmitted is never pre-empted, not by a pause and not by a
// higher class: a pause arriving mid-frame lets that frame finish.
func TestFrameInFlightNotPreempted(t *testing.T) {
	c := 10 * units.Gbps
	prop := units.Microsecond
	st := newStar(t, 2, defaultSwitch(), LinkSpec{Speed: c, PropagationDelay: prop})
	ser := units.SerializationTime(9018+20, c) // 7.2 us
	newInjector(st.net, []pktSpec{
		{at: 0, src: 0, dst: 1, length: 9000, dscp: 3 << 3},
		{at: 1 * units.Microsecond, src: 0, dst: 1, length: 9000, dscp: 7 << 3},
		{at: 1 * units.Microsecond, src: 0, dst: 1, length: 9000, dscp: 3 << 3},
	})
	// Pause TC3 at host 0 while the first TC3 frame is on the wire.
	at(st.eng, 0, func(now units.Time) { st.net.sendPFC(now, st.sw.ports[0], 1<<3, PFCQuanta) })
	st.eng.Run()
	d := st.obs.deliveries
	if len(d) != 3 {
		t.Fatalf("%d deliveries", len(d))
	}
	if d[0].trace != 0 || d[0].at != 2*(ser+prop) {
		t.Fatalf("first frame pre-empted or delayed: %+v", d[0])
	}
	if d[1].trace != 1 || d[1].at != ser+2*(ser+prop) {
		t.Fatalf("TC7 frame should follow back to back: %+v", d[1])
	}
	pause := st.obs.pfcOf(PFCRxPause)[0].Time
	if d[2].trace != 2 || d[2].at != pause+3_355_392_000+2*(ser+prop) {
		t.Fatalf("paused TC3 frame at %d", d[2].at)
	}
}

// docs/model.md#priority-flow-control: the class-enable vector holds every PFC-enabled TC of the pool.
func TestPFCClassEnableVector(t *testing.T) {
	tests := []struct {
		name  string
		pools []config.Pool
		pfc   []int
		send  uint8 // DSCP class sent
		want  uint8
	}{
		{"default pool 1 = TC3,4", nil, nil, 3, 1<<3 | 1<<4},
		{"three lossless classes", []config.Pool{
			{Name: "lossy", Size: config.PoolShare(0.5), TrafficClasses: []int{0, 1, 5, 6, 7}},
			{Name: "lossless", Size: config.PoolShare(0.5), TrafficClasses: []int{2, 3, 4}}},
			[]int{2, 3, 4}, 2, 1<<2 | 1<<3 | 1<<4},
		{"two lossless pools", []config.Pool{
			{Name: "lossy", Size: config.PoolShare(0.4), TrafficClasses: []int{0, 1, 2, 7}},
			{Name: "rdma", Size: config.PoolShare(0.3), TrafficClasses: []int{3, 4}},
			{Name: "storage", Size: config.PoolShare(0.3), TrafficClasses: []int{5, 6}}},
			[]int{3, 4, 5, 6}, 6, 1<<5 | 1<<6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultSwitch()
			if tc.pools != nil {
				cfg.Pools, cfg.PfcEnabled = tc.pools, tc.pfc
			}
			cfg.Xoff = 20_000 // fixed, small: the incast pauses quickly
			st := newStar(t, 3, cfg, LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond})
			newInjector(st.net, incast([]int32{1, 2}, 0, 30, 1500, tc.send<<3, 0, 100*units.Gbps))
			st.eng.Run()
			tx := st.obs.pfcOf(PFCTxPause)
			if len(tx) == 0 {
				t.Fatal("no pause sent")
			}
			var vec uint8
			for _, e := range tx {
				if e.Time == tx[0].Time && e.Node == tx[0].Node && e.Port == tx[0].Port {
					vec |= 1 << e.TC
				}
			}
			if vec != tc.want {
				t.Fatalf("class-enable vector %08b, want %08b", vec, tc.want)
			}
			checkDrained(t, st.net)
		})
	}
}

// incast returns n packets from each source to dst, each source sending back to back at
// line rate c from time 0.
func incast(srcs []int32, dst int32, n int, length int32, dscp uint8, ecn uint8, c units.BitRate) []pktSpec {
	ser := units.SerializationTime(int64(FrameSize(length))+20, c)
	var out []pktSpec
	for i := 0; i < n; i++ {
		for _, s := range srcs {
			out = append(out, pktSpec{at: units.Time(i) * ser, src: s, dst: dst, length: length, dscp: dscp, ecn: ecn, flow: int64(s)})
		}
	}
	return out
}

// docs/model.md#priority-flow-control: while (p,P) stays paused the pause frame is re-sent every half pause time;
// a single quanta-0 frame ends it once headroom is empty and occupancy <= XonThreshold.
func TestPFCRefreshEveryHalfPauseTime(t *testing.T) {
	c := 100 * units.Gbps
	cfg := defaultSwitch()
	cfg.Xoff = 50_000
	st := newStar(t, 2, cfg, LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
	// Block the switch's egress to host 1 for TC3 from t=0 to ~1.3 ms (4 pauses).
	egress := st.hosts[1].ports[0]
	for i := 0; i < 4; i++ {
		at(st.eng, units.Time(i)*300*units.Microsecond, func(now units.Time) { st.net.sendPFC(now, egress, 1<<3, PFCQuanta) })
	}
	newInjector(st.net, incast([]int32{0}, 1, 100, 1500, 3<<3, 0, c))
	st.eng.Run()
	var tx []PFCEvent
	for _, e := range st.obs.pfcOf(PFCTxPause) {
		if e.Node == st.sw.ID() && e.TC == 3 {
			tx = append(tx, e)
		}
	}
	if len(tx) < 5 {
		t.Fatalf("%d pause frames from the switch, want refreshes while paused", len(tx))
	}
	half := units.Time(335_539_200 / 2)
	for i := 1; i < len(tx); i++ {
		// The PFC queue goes first, but a frame on the wire delays it at most one frame.
		gap := tx[i].Time - tx[i-1].Time
		if gap < half || gap > half+units.SerializationTime(1538, c) {
			t.Fatalf("refresh %d after %d ps, want half pause time %d (+ at most one frame)", i, gap, half)
		}
	}
	for _, e := range st.obs.pfcOf(PFCExpire) {
		if e.Node == st.hosts[0].ID() {
			t.Fatalf("the refreshed pause expired at host 0: %+v", e)
		}
	}
	res := st.obs.pfcOf(PFCTxResume)
	var swRes []PFCEvent
	for _, e := range res {
		if e.Node == st.sw.ID() && e.TC == 3 {
			swRes = append(swRes, e)
		}
	}
	if len(swRes) != 1 || swRes[0].Time < tx[len(tx)-1].Time {
		t.Fatalf("want exactly one resume after the last refresh, got %+v", swRes)
	}
	if len(st.obs.drops) != 0 {
		t.Fatalf("drops: %+v", st.obs.drops)
	}
	checkDrained(t, st.net)
}

// docs/model.md#priority-flow-control resume condition: a lossless packet that arrived on p leaves while
// headroom(p,P) is empty AND shared(p,P) <= XonThreshold; otherwise no resume.
func TestPFCResumeCondition(t *testing.T) {
	st := newStar(t, 2, defaultSwitch(), LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond})
	s := st.sw
	const P = 1
	pl := &s.pools[P]
	in, e := s.ports[0], s.ports[1]
	cell := s.cell
	// The resume threshold by hand (docs/model.md#priority-flow-control), from the configured
	// numbers, not the switch's code: a port resumes when, after the release, its
	// shared bytes x satisfy x <= max(Xon, XoffAlpha*(PoolSize - x) - XonOffset), i.e.
	// x <= max(Xon, (XoffAlpha*PoolSize - XonOffset) / (1 + XoffAlpha)); xon is the
	// largest whole number of cells that does. Defaults: Xon = XonOffset = 4608 B,
	// XoffAlpha = 1/8.
	cfg := defaultSwitch()
	if cfg.Xon != 4608 || cfg.XonOffset != 4608 || cfg.XoffAlpha != 0.125 || cfg.Xoff != 0 {
		t.Fatalf("the defaults changed: Xon %v XonOffset %v XoffAlpha %v Xoff %v", cfg.Xon, cfg.XonOffset, cfg.XoffAlpha, cfg.Xoff)
	}
	limit := math.Max(4608, (0.125*float64(pl.size)-4608)/1.125)
	xon := int64(limit) / cell * cell
	if xon < 4608 || xon > pl.size/8 {
		t.Fatalf("XonThreshold %d out of range for a pool of %d B", xon, pl.size)
	}
	tests := []struct {
		name             string
		headroom, shared int64 // (p,P) after the departing packet is released
		pausing          bool
		wantResume       bool
	}{
		{"headroom empty, shared at XonThreshold", 0, xon, true, true},
		{"headroom empty, shared below", 0, cell, true, true},
		{"headroom empty, shared one cell above XonThreshold", 0, xon + cell, true, false},
		{"headroom not empty", cell, 0, true, false},
		{"headroom not empty, shared above", 4 * cell, xon + cell, true, false},
		{"not paused", 0, 0, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := 4 * cell
			id, p := st.net.NewPacket()
			p.TC, p.Frame, p.pool, p.inPort, p.charged = 3, int32(b), P, in.idx, int32(b)
			// The departing packet was charged to headroom if any remains, else shared.
			hr, sh := tc.headroom, tc.shared
			if hr > 0 {
				hr += b
			} else {
				sh += b
			}
			in.ingHeadroom[P], in.ingShared[P] = hr, sh
			pl.headroom, pl.shared = hr, sh
			e.tc[3].egress, e.egressTotal, pl.egress = b, b, b
			in.pausing[P] = tc.pausing
			// The threshold is evaluated at the occupancy after release.
			s.depart(0, e, id, p)
			if in.ingHeadroom[P] != tc.headroom || in.ingShared[P] != tc.shared {
				t.Fatalf("release: headroom %d shared %d, want %d %d (headroom first)", in.ingHeadroom[P], in.ingShared[P], tc.headroom, tc.shared)
			}
			got := false
			// The idle port starts the frame at once: it is on the link.
			for _, q := range []*fifo{&in.pfcq, &in.flight} {
				for q.n > 0 {
					fid, f := q.pop(&st.net.arena)
					if f.Class != classPFC || f.quanta != 0 {
						t.Fatal("not a resume frame")
					}
					got = true
					st.net.arena.release(fid)
				}
			}
			in.busy, in.flightPFC = false, 0
			if got != tc.wantResume {
				t.Fatalf("resume sent = %v, want %v (XonThreshold %d)", got, tc.wantResume, xon)
			}
			if in.pausing[P] == tc.wantResume && tc.pausing {
				t.Fatal("pausing state not updated")
			}
			st.net.arena.release(id)
			in.ingHeadroom[P], in.ingShared[P], pl.headroom, pl.shared = 0, 0, 0, 0
			e.tc[3].egress, e.egressTotal, pl.egress = 0, 0, 0
			in.pausing[P] = false
		})
	}
}

// docs/model.md#shared-buffer release order: headroom first, then shared (ref HPCC).
func TestReleaseHeadroomFirst(t *testing.T) {
	st := newStar(t, 2, defaultSwitch(), LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond})
	s := st.sw
	in, e := s.ports[0], s.ports[1]
	const P = 1
	id, p := st.net.NewPacket()
	p.TC, p.Frame, p.pool, p.inPort, p.charged = 3, 1024, P, 0, 1024
	in.ingHeadroom[P], in.ingShared[P] = 512, 4096
	s.pools[P].headroom, s.pools[P].shared = 512, 4096
	e.tc[3].egress, e.egressTotal, s.pools[P].egress = 1024, 1024, 1024
	s.depart(0, e, id, p)
	if in.ingHeadroom[P] != 0 || in.ingShared[P] != 3584 || s.pools[P].shared != 3584 || s.pools[P].headroom != 0 {
		t.Fatalf("headroom %d shared %d", in.ingHeadroom[P], in.ingShared[P])
	}
}

// A (port, pool) paused by arrivals that were all dropped holds nothing, so no
// departure can resume it: it resumes at its refresh time instead of pausing forever.
func TestPFCPausedWithNothingBufferedResumes(t *testing.T) {
	c := 100 * units.Gbps
	cfg := defaultSwitch()
	cfg.Headroom = config.FixedHeadroom(0)
	cfg.Xoff = 1000 // below one 1518-byte frame: every lossless arrival pauses and drops
	st := newStar(t, 2, cfg, LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
	newInjector(st.net, []pktSpec{{at: 0, src: 0, dst: 1, length: 1500, dscp: 3 << 3}})
	if !st.net.Drain(units.Second) {
		t.Fatal("did not drain")
	}
	st.eng.RunUntil(10 * units.Millisecond) // the refresh timer
	tx, res := st.obs.pfcOf(PFCTxPause), st.obs.pfcOf(PFCTxResume)
	if len(tx) != 2 || len(res) != 2 || st.net.Counters().Dropped[DropHeadroom] != 1 {
		t.Fatalf("pause %d resume %d events (2 classes each), drops %v", len(tx), len(res), st.net.Counters().Dropped)
	}
	if res[0].Time != tx[0].Time+335_539_200/2 {
		t.Fatalf("resumed at %v, want at the refresh time", res[0].Time)
	}
	if st.eng.Pending() != 0 {
		t.Fatalf("%d events left: the pause keeps refreshing", st.eng.Pending())
	}
}

// PFC back-pressure propagates hop by hop: with the last egress blocked, s2 pauses s1,
// s1's queue grows and s1 pauses the host; nothing lossless is dropped, and once the
// block ends everything drains with resumes in reverse order.
func TestPFCPropagatesUpstream(t *testing.T) {
	o := &obs{}
	eng := NewEngine()
	net := NewNetwork(eng, Options{Seed: 1, Observers: o.observers()})
	cfg := defaultSwitch()
	cfg.Xoff = 30_000
	s1, _ := net.AddSwitch("s1", config.TierNone, &cfg, nil)
	s2, _ := net.AddSwitch("s2", config.TierNone, &cfg, nil)
	a, _ := net.AddHost("a")
	b, _ := net.AddHost("b")
	l := LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond}
	net.Connect(a, s1, l)
	_, _, _ = net.Connect(s1, s2, l)
	_, _, _ = net.Connect(b, s2, l)
	r1, _ := s1.AddEqualCostSet([]int{1})
	r2, _ := s2.AddEqualCostSet([]int{1})
	s1.SetRoute(b.Index(), r1)
	s2.SetRoute(b.Index(), r2)
	if _, err := net.Start(); err != nil {
		t.Fatal(err)
	}
	// Host b "pauses" s2's egress for TC3 for one pause time (test-only frame).
	at(eng, 0, func(now units.Time) { net.sendPFC(now, b.ports[0], 1<<3, PFCQuanta) })
	newInjector(net, incast([]int32{0}, 1, 300, 1500, 3<<3, 0, l.Speed))
	eng.Run()
	first := map[int32]units.Time{}
	var resumes []int32
	for _, e := range o.pfc {
		if e.Kind == PFCTxPause && e.Node != b.ID() {
			if _, ok := first[e.Node]; !ok {
				first[e.Node] = e.Time
			}
		}
		if e.Kind == PFCTxResume && e.TC == 3 {
			resumes = append(resumes, e.Node)
		}
	}
	t2, ok2 := first[s2.ID()]
	t1, ok1 := first[s1.ID()]
	if !ok1 || !ok2 || t1 <= t2 {
		t.Fatalf("pauses: s2 at %v (%v), s1 at %v (%v): want s2 first, then s1", t2, ok2, t1, ok1)
	}
	if len(resumes) != 2 || resumes[0] != s2.ID() || resumes[1] != s1.ID() {
		t.Fatalf("resumes from %v, want s2 then s1", resumes)
	}
	if c := net.Counters(); c.DroppedTotal() != 0 || c.Delivered != 300 {
		t.Fatalf("counters %+v", c)
	}
	checkDrained(t, net)
}
