package transport

import (
	"math"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// ClampTargetRate (docs/model.md#dcqcn): CNPs at 0 and 6 us give cuts at 4 and 8 us
// with no increase between. Mlx's default keeps RT at line rate through the second
// cut (no increase since the first); with the clamp RT = RC before the second cut.
// alpha at 8 us: decays at 1..6 us (d = 255/256), the 7 us update adds g for the CNP
// of its slot, 8 us decays: d^8 + g d. The first increase, 300 us after the second
// cut, is fast recovery RC = RC/2 + RT/2.
func TestDCQCNClampTargetRate(t *testing.T) {
	const line = 100e9
	g := 1.0 / 256
	d := 1 - g
	rc1 := line * (1 - math.Pow(d, 4)/2)
	rc2 := rc1 * (1 - (math.Pow(d, 8)+g*d)/2)
	for _, c := range []struct {
		clamp bool
		rt    float64
	}{{false, line}, {true, rc1}} {
		cfg := config.DefaultTransport()
		cfg.ClampTargetRate = c.clamp
		r := newRP(&cfg, 100*units.Gbps)
		r.cnp(0)
		r.cnp(6 * us)
		if got := r.rate(8 * us); !near(got, rc2) || !near(r.rt, c.rt) {
			t.Errorf("clamp %v: after the second cut RC %v RT %v, want %v %v", c.clamp, got, r.rt, rc2, c.rt)
		}
		if got := r.rate(308 * us); !near(got, rc2/2+c.rt/2) {
			t.Errorf("clamp %v: fast recovery to %v, want %v", c.clamp, got, rc2/2+c.rt/2)
		}
	}
}

// RateOnFirstCnp: the first CNP sets RC = RT = max(MinRate, fraction x RC) at once
// (a rate cut of its own), and the first timer cut 4 us later starts from there.
func TestDCQCNRateOnFirstCnp(t *testing.T) {
	a4 := math.Pow(1-1.0/256, 4)
	for _, c := range []struct {
		first      float64
		atCnp, at4 float64
		cuts       int64
	}{
		{1, 100e9, 100e9 * (1 - a4/2), 1},
		{0.5, 50e9, 50e9 * (1 - a4/2), 2},
		{0, 1e9, 1e9, 1}, // MinRate, and the cut at 4 us cannot go lower
	} {
		cfg := config.DefaultTransport()
		cfg.RateOnFirstCnp = c.first
		r := newRP(&cfg, 100*units.Gbps)
		r.cnp(0)
		if got := r.rate(0); !near(got, c.atCnp) || !near(r.rt, c.atCnp) {
			t.Errorf("RateOnFirstCnp %v: RC %v RT %v at the first CNP, want %v", c.first, got, r.rt, c.atCnp)
		}
		if got := r.rate(4 * us); !near(got, c.at4) || r.cuts != c.cuts {
			t.Errorf("RateOnFirstCnp %v: RC %v after the first cut (%d cuts), want %v (%d)", c.first, got, r.cuts, c.at4, c.cuts)
		}
	}
}

// The paper variant (DcqcnVariant paper, its defaults: K = T = 55 us, F = 5, B =
// 10 MB, clamp), at 100 Gb/s with AI 20 Mb/s and HAI 200 Mb/s. Each CNP cuts at once
// with the alpha before it and then sets alpha = (1-g) alpha + g; increases come from
// the timer (every 55 us after the last cut, count T) and the byte counter (every
// 10 MB, count BC): fast recovery while max(T, BC) < 5, hyper increase by (min - 5)
// x HAI once min(T, BC) > 5, additive between. Expected values by hand:
//
//   - CNP at 0: RT = 100, RC = 100 (1 - 1/2) = 50 Gb/s, alpha = 1.
//   - CNP at 10 us: alpha still 1 (no K since the last CNP): RT = 50, RC = 25.
//   - Timer at 65, 120, 175, 230 us (T = 1..4): fast recovery 37.5, 43.75, 46.875,
//     48.4375; 285 and 340 us (T = 5, 6; BC = 0): additive, RT 50.02 then 50.04.
//   - 60 MB sent at 341 us: BC = 1..5 additive (RT + 20 Mb/s each), BC = 6 with T =
//     6: hyper, RT + 200 Mb/s; 395 us (T = 7, BC = 6): hyper again.
//   - alpha decays by 1-g every 55 us after the last CNP: d^7 at 395 us; the CNP at
//     400 us cuts with it: RT = RC, RC (1 - d^7/2), then alpha = d^8 + g.
func TestDCQCNPaperArithmetic(t *testing.T) {
	cfg := config.DefaultTransport()
	cfg.DcqcnVariant = config.DcqcnPaper
	cfg.UsePaperDefaults(nil)
	r := newRP(&cfg, 100*units.Gbps)
	g := 1.0 / 256
	d := 1 - g
	check := func(at units.Time, rc, rt, alpha float64) {
		t.Helper()
		got := r.rate(at)
		if !near(got, rc) || !near(r.rt, rt) || !near(r.alpha, alpha) {
			t.Errorf("at %v: RC %.6f RT %.6f alpha %.9f, want %.6f %.6f %.9f", at, got, r.rt, r.alpha, rc, rt, alpha)
		}
	}
	check(0, 100e9, 100e9, 1)
	r.cnp(0)
	check(0, 50e9, 100e9, 1)
	r.cnp(10 * us)
	check(10*us, 25e9, 50e9, 1)
	check(64*us, 25e9, 50e9, 1)
	rc := 25e9
	for i, at := range []units.Time{65, 120, 175, 230} {
		rc = rc/2 + 50e9/2
		check(at*us, rc, 50e9, math.Pow(d, float64(i+1)))
	}
	rt := 50e9
	for i, at := range []units.Time{285, 340} {
		rt += 20e6
		rc = rc/2 + rt/2
		check(at*us, rc, rt, math.Pow(d, float64(i+5)))
	}
	r.sent(341*us, 60_000_000)
	for bc := 1; bc <= 5; bc++ {
		rt += 20e6
		rc = rc/2 + rt/2
	}
	rt += 200e6 // BC = 6, T = 6: min 6 > 5
	rc = rc/2 + rt/2
	check(341*us, rc, rt, math.Pow(d, 6))
	rt += 200e6 // T = 7, BC = 6
	rc = rc/2 + rt/2
	check(395*us, rc, rt, math.Pow(d, 7))
	r.cnp(400 * us)
	check(400*us, rc*(1-math.Pow(d, 7)/2), rc, math.Pow(d, 8)+g)
	if r.cuts != 3 {
		t.Errorf("%d cuts, want 3", r.cuts)
	}
}

// Two paper-variant DCQCN flows into one port of a lossless class (the paper's
// receiver: at most one CNP per flow per 50 us) both complete, with no drop and CNPs
// no closer than CnpInterval; the cuts are the paper's (one per CNP).
func TestDCQCNPaperTwoFlows(t *testing.T) {
	tr := config.DefaultTransport()
	tr.DcqcnVariant = config.DcqcnPaper
	tr.UsePaperDefaults(nil)
	st := newStar(t, 3, config.Default().Switch, tr, link100G())
	cnpAt := map[int64][]units.Time{}
	st.layer.onCNP = func(now units.Time, f int64) { cnpAt[f] = append(cnpAt[f], now) }
	for f := 0; f < 2; f++ {
		if err := st.layer.NewFlow(int32(f), FlowSpec{Kind: DCQCN, Src: int32(f + 1), Dst: 0, Key: st.key(f), Reverse: st.key(10 + f)}); err != nil {
			t.Fatal(err)
		}
	}
	b := &bulkRoCE{l: st.layer, n: 2, per: 3000}
	st.eng.Schedule(0, st.eng.Register(b), 0, 0)
	st.eng.Run()
	for f := 0; f < 2; f++ {
		s, _ := st.layer.Stats(int32(f))
		c := cnpAt[int64(f)]
		t.Logf("flow %d: FCT %v, %d CNPs, %d rate cuts", f, s.LastDelivery-s.FirstAvail, len(c), s.RateCuts)
		if !s.Complete || len(c) == 0 || s.RateCuts != int64(len(c)) {
			t.Errorf("flow %d: complete %v, %d CNPs, %d cuts; want complete, CNPs, one cut per CNP", f, s.Complete, len(c), s.RateCuts)
		}
		for i := 1; i < len(c); i++ {
			if c[i]-c[i-1] < tr.CnpInterval {
				t.Fatalf("flow %d: CNPs %v apart", f, c[i]-c[i-1])
			}
		}
	}
	if len(st.rec.drops) != 0 {
		t.Errorf("%d drops", len(st.rec.drops))
	}
	checkConservation(t, st)
}
