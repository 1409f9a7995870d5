package transport

import (
	"math"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel"
)

const us = units.Microsecond

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// A scripted CNP sequence drives a 100 Gb/s sender through a cut, fast recovery, a
// second cut, fast recovery, additive and hyper increase. Defaults: g = 1/256, alpha
// every 1 us, cuts every 4 us, increases every 300 us, F = 1, AI 20 Mb/s, HAI
// 200 Mb/s. Expected values are the spec's arithmetic written out by hand.
func TestDCQCNRateArithmetic(t *testing.T) {
	cfg := config.DefaultTransport()
	r := newRP(&cfg, 100*units.Gbps)
	const line = 100e9
	d := 1 - 1.0/256
	check := func(at units.Time, rc, rt, alpha float64) {
		t.Helper()
		got := r.rate(at)
		if !near(got, rc) || !near(r.rt, rt) || !near(r.alpha, alpha) {
			t.Errorf("at %v: RC %.6f RT %.6f alpha %.9f, want %.6f %.6f %.9f", at, got, r.rt, r.alpha, rc, rt, alpha)
		}
	}
	check(0, line, line, 1) // no CNP: line rate, nothing happens

	// First CNP at 0: alpha restarts at 1, updates at 1, 2, 3, 4 us decay it (no CNP in
	// their slots); the cut at 4 us uses alpha = d^4. RT stays at line rate (no
	// increase since the last cut).
	r.cnp(0)
	a4 := math.Pow(d, 4)
	rc1 := line * (1 - a4/2)
	check(4*us, rc1, line, a4)
	check(303*us, rc1, line, math.Pow(d, 303))
	// 304 us: the first increase after the cut is fast recovery: RC = RC/2 + RT/2.
	rc2 := rc1/2 + line/2
	check(304*us, rc2, line, math.Pow(d, 304))

	// A CNP at 310 us: its slot's update (311 us) adds g; the next cut tick (312 us:
	// cuts tick every 4 us from the first) cuts with alpha after 312 us, and since an
	// increase happened since the last cut, RT = RC first.
	r.cnp(310 * us)
	a311 := math.Pow(d, 311) + 1.0/256
	a312 := a311 * d
	rc3 := rc2 * (1 - a312/2)
	check(312*us, rc3, rc2, a312)
	// 612 us: fast recovery towards RT = rc2.
	rc4 := rc3/2 + rc2/2
	check(612*us, rc4, rc2, a312*math.Pow(d, 300))
	// 912 us: additive increase: RT += 20 Mb/s, RC = RC/2 + RT/2.
	rt5 := rc2 + 20e6
	rc5 := rc4/2 + rt5/2
	check(912*us, rc5, rt5, a312*math.Pow(d, 600))
	// 1212 us and 1512 us: hyper increase: RT += 200 Mb/s each time.
	rt6 := rt5 + 200e6
	rc6 := rc5/2 + rt6/2
	check(1212*us, rc6, rt6, a312*math.Pow(d, 900))
	rt7 := rt6 + 200e6
	rc7 := rc6/2 + rt7/2
	check(1512*us, rc7, rt7, a312*math.Pow(d, 1200))
	if r.cuts != 2 {
		t.Errorf("%d cuts, want 2", r.cuts)
	}
}

// Reading the state at every microsecond or only at the end gives the same numbers:
// the lazy timers are exact, in both reaction-point variants.
func TestDCQCNLazyTimers(t *testing.T) {
	for _, v := range []config.DcqcnVariant{config.DcqcnMlx, config.DcqcnPaper} {
		cfg := config.DefaultTransport()
		if cfg.DcqcnVariant = v; v == config.DcqcnPaper {
			cfg.UsePaperDefaults(nil)
		}
		cnps := []units.Time{0, 3 * us, 50 * us, 51 * us, 700 * us, 2000 * us, 2002 * us}
		eager, lazy := newRP(&cfg, 100*units.Gbps), newRP(&cfg, 100*units.Gbps)
		next := 0
		for now := units.Time(0); now <= 5000*us; now += us {
			eager.rate(now)
			for next < len(cnps) && cnps[next] == now {
				eager.cnp(now)
				lazy.cnp(now)
				next++
			}
		}
		lazy.rate(5000 * us)
		if eager.rc != lazy.rc || eager.rt != lazy.rt || eager.alpha != lazy.alpha || eager.cuts != lazy.cuts || eager.stage != lazy.stage {
			t.Errorf("%v: eager RC %v RT %v alpha %v cuts %d; lazy RC %v RT %v alpha %v cuts %d", v,
				eager.rc, eager.rt, eager.alpha, eager.cuts, lazy.rc, lazy.rt, lazy.alpha, lazy.cuts)
		}
	}
}

// The rate never drops below MinRate, however many CNPs arrive.
func TestDCQCNMinRate(t *testing.T) {
	cfg := config.DefaultTransport()
	r := newRP(&cfg, 100*units.Gbps)
	for now := units.Time(0); now < 2000*us; now += us {
		r.cnp(now)
	}
	if got := r.rate(2000 * us); got != 1e9 {
		t.Errorf("RC %v after a CNP every microsecond, want MinRate 1 Gb/s", got)
	}
}

// A sender at MinRate that is "cut" again stays at MinRate: that is no rate cut.
// With a CNP every microsecond alpha stays above 0.99 (it starts at 1, and every
// update of a slot with a CNP moves it towards 1), so every cut multiplies the rate
// by at most 0.505: after 6 cuts it is above 100 x 0.5^6 = 1.5625 Gb/s, after 7 below
// 100 x 0.505^7 = 0.84 Gb/s, clamped to MinRate. Of the 500 cut ticks of [0, 2000 us]
// (every 4 us, each after a CNP) exactly 7 lower the rate; only they are reported
// and counted (transport.arrow rate_cut rows, FlowStats.RateCuts).
func TestDCQCNCutAtMinRateIsNoCut(t *testing.T) {
	cfg := config.DefaultTransport()
	r := newRP(&cfg, 100*units.Gbps)
	type ev struct {
		t  units.Time
		k  EventKind
		rc float64
	}
	var evs []ev
	r.emit = func(t units.Time, k EventKind, rc float64) { evs = append(evs, ev{t, k, rc}) }
	for now := units.Time(0); now < 2000*us; now += us {
		r.cnp(now)
	}
	if got := r.rate(2000 * us); got != 1e9 {
		t.Fatalf("RC %v, want MinRate", got)
	}
	if len(evs) != 7 || r.cuts != 7 {
		t.Fatalf("%d events, %d cuts, want 7 rate cuts: %v", len(evs), r.cuts, evs)
	}
	prev := 100e9
	for i, e := range evs {
		if e.k != EventRateCut || e.rc >= prev || e.t != units.Time(i+1)*4*us {
			t.Errorf("event %d: %v at %v to %v (previous rate %v): want a cut at %v us to a lower rate", i, e.k, e.t, e.rc, prev, (i+1)*4)
		}
		prev = e.rc
	}
	if prev != 1e9 {
		t.Errorf("the 7th cut leaves %v, want MinRate", prev)
	}
	// An increase step that leaves RC unchanged (RC = RT) is not reported either:
	// fast recovery from RC = RT = MinRate.
	evs = nil
	r.rt = r.rc
	r.rate(2300 * us) // the increase timer, 300 us after the last cut tick
	if len(evs) != 0 || r.rc != 1e9 || r.stage != 1 {
		t.Errorf("fast recovery with RC = RT = MinRate: events %v, RC %v, stage %d; want no event, RC unchanged, stage 1", evs, r.rc, r.stage)
	}
}

// roceSeg is a RoCE packet of IPv4 length l.
func roceSeg(l int32, trace int64) Segment {
	return Segment{Length: l, DSCP: 26, ECN: switchmodel.ECT0, TraceIndex: trace}
}

// A lone DCQCN flow in an empty fabric runs at line rate: its packets are delivered
// exactly when open loop would deliver them (hand-computed store and forward).
func TestDCQCNLoneFlowLineRate(t *testing.T) {
	st := newStar(t, 2, config.Default().Switch, config.DefaultTransport(), link100G())
	if err := st.layer.NewFlow(0, FlowSpec{Kind: DCQCN, Src: 0, Dst: 1, Key: st.key(0), Reverse: st.key(1)}); err != nil {
		t.Fatal(err)
	}
	const ser = (4140 + 38) * 80
	var list []offer
	for i := 0; i < 50; i++ {
		list = append(list, offer{at: 0, flow: 0, seg: roceSeg(4140, int64(i))})
	}
	scheduleOffers(st, list)
	st.eng.Run()
	if len(st.rec.deliveries) != 50 {
		t.Fatalf("%d deliveries", len(st.rec.deliveries))
	}
	for i, d := range st.rec.deliveries {
		if want := units.Time((i+2)*ser + 2_000_000); d.at != want {
			t.Fatalf("packet %d delivered at %d, want %d", i, d.at, want)
		}
	}
	if g := st.layer.Generated(); g[switchmodel.Cnp] != 0 || g[switchmodel.Ack] != 50 {
		t.Errorf("generated %v", g)
	}
	checkConservation(t, st)
}

// Two DCQCN flows into one 100 Gb/s port of a lossless class with the default ECN
// thresholds share it: each gets 50 Gb/s within 10% over the last 10 ms of a 30 ms
// run, and no flow gets two CNPs closer than CnpInterval.
func TestDCQCNTwoFlowsShare(t *testing.T) {
	sw := config.Default().Switch
	tr := config.DefaultTransport()
	st := newStar(t, 3, sw, tr, link100G())
	cnpAt := map[int64][]units.Time{}
	st.rec.onDrop = nil
	for f := 0; f < 2; f++ {
		if err := st.layer.NewFlow(int32(f), FlowSpec{Kind: DCQCN, Src: int32(f + 1), Dst: 0, Key: st.key(f), Reverse: st.key(10 + f)}); err != nil {
			t.Fatal(err)
		}
	}
	// Each flow has 30 ms of line rate available at t = 0.
	per := int(100e9*0.030/8) / 4178
	b := &bulkRoCE{l: st.layer, n: 2, per: per}
	st.eng.Schedule(0, st.eng.Register(b), 0, 0)
	st.layer.onCNP = func(now units.Time, f int64) { cnpAt[f] = append(cnpAt[f], now) }
	const from, to = 20 * units.Millisecond, 30 * units.Millisecond
	st.eng.RunUntil(to)
	var bytes [2]float64
	for _, d := range st.rec.deliveries {
		if d.at >= from && d.at < to {
			bytes[d.flow] += float64(d.length + 38)
		}
	}
	for f, b := range bytes {
		gbps := b * 8 / float64(to-from) * 1e12 / 1e9
		t.Logf("flow %d: %.2f Gb/s, %d CNPs, %d rate cuts", f, gbps, len(cnpAt[int64(f)]), st.layer.flows[f].rp.cuts)
		if gbps < 45 || gbps > 55 {
			t.Errorf("flow %d got %.2f Gb/s, want 50 within 10%%", f, gbps)
		}
		for i := 1; i < len(cnpAt[int64(f)]); i++ {
			if gap := cnpAt[int64(f)][i] - cnpAt[int64(f)][i-1]; gap < tr.CnpInterval {
				t.Fatalf("flow %d: CNPs %v apart, CnpInterval %v", f, gap, tr.CnpInterval)
			}
		}
	}
	if len(cnpAt[0]) == 0 || len(cnpAt[1]) == 0 {
		t.Error("no CNP: the case does not exercise DCQCN")
	}
	if len(st.rec.drops) != 0 {
		t.Errorf("%d drops in a lossless class", len(st.rec.drops))
	}
}

type bulkRoCE struct {
	l      *Layer
	n, per int
}

func (b *bulkRoCE) Handle(now units.Time, kind int32, arg int64) {
	for i := 0; i < b.per; i++ {
		for f := 0; f < b.n; f++ {
			b.l.Offer(int32(f), roceSeg(4140, int64(i)))
		}
	}
}

// Go-back-N in a lossy RoCE class: a 50 Gb/s RoCE flow shares its receiver's port
// with five line-rate bursts of open-loop jumbo frames; each burst overflows the
// port's fixed egress limit and drops runs of the flow's packets. The receiver sends
// one NAK per gap (at least one per burst), the sender goes back, and every packet is
// delivered once, in order, without a timeout.
func TestGoBackNLossy(t *testing.T) {
	sw := config.Default().Switch
	sw.PfcEnabled = nil // every class lossy
	sw.Pools = []config.Pool{{Name: "lossy", Size: config.PoolShare(1), TrafficClasses: []int{0, 1, 2, 3, 4, 5, 6, 7}}}
	sw.EcnEnabled = nil // no CNPs: losses alone
	sw.EgressLimitMode = config.EgressFixed
	sw.EgressQueueLimit = 100_000
	st := newStar(t, 3, sw, config.DefaultTransport(), link100G())
	if err := st.layer.NewFlow(0, FlowSpec{Kind: DCQCN, Src: 1, Dst: 0, Key: st.key(0), Reverse: st.key(10)}); err != nil {
		t.Fatal(err)
	}
	const per, ser = 3000, (4140 + 38) * 80
	var list []offer
	for i := 0; i < per; i++ { // 50 Gb/s: one packet every two wire times
		list = append(list, offer{at: units.Time(2 * ser * i), flow: 0, seg: roceSeg(4140, int64(i))})
	}
	scheduleOffers(st, list)
	bursts := &burster{net: st.net, src: st.hosts[2], dst: 0}
	h := st.eng.Register(bursts)
	for b := 0; b < 5; b++ {
		at := units.Time(100+400*b) * us
		for i := 0; i < 40; i++ {
			st.eng.Schedule(at+units.Time(i)*9038*80, h, 0, 0)
		}
	}
	st.eng.Run()
	s, _ := st.layer.Stats(0)
	naks := st.layer.Generated()[switchmodel.Nak]
	// Gaps, from the arrivals the network recorded: an arrival above the next packet
	// expected opens a gap unless the previous arrival was already out of sequence
	// at the same point (the receiver then still waits for the same packet).
	var next int32
	gaps, inGap := 0, int32(-1)
	for _, d := range st.rec.deliveries {
		switch {
		case d.seq == next:
			next++
		case d.seq > next && inGap != next:
			gaps++
			inGap = next
		}
	}
	t.Logf("%d drops (%d of the flow's packets), %d NAKs, %d retransmits, %d timeouts", len(st.rec.drops), st.rec.closedDrops, naks, s.Retransmits, s.Timeouts)
	if st.rec.closedDrops == 0 {
		t.Fatal("the bursts dropped none of the flow's packets")
	}
	if naks != int64(gaps) || gaps < 5 || s.Timeouts != 0 {
		t.Errorf("%d NAKs and %d timeouts for %d gaps (at least one per burst)", naks, s.Timeouts, gaps)
	}
	if !s.Complete || next != per || s.Delivered != per {
		t.Errorf("%d of %d delivered in order (stats %+v)", next, per, s)
	}
	checkConservation(t, st)
}

// burster injects one open-loop 9000-byte UDP packet from src to dst per event.
type burster struct {
	net *switchmodel.Network
	src *switchmodel.Host
	dst int32
}

func (b *burster) Handle(now units.Time, kind int32, arg int64) {
	id, p := b.net.NewPacket()
	p.FlowID, p.Src, p.Dst, p.Length, p.DSCP = 99, b.src.Index(), b.dst, 9000, 26
	b.net.Inject(b.src, id)
}
