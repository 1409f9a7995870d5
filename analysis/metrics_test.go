package analysis

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"

	"github.com/tracefabric/tracefabric/records"
)

const tol = 1e-9

func near(a, b float64) bool { return scalar.EqualWithinAbsOrRel(a, b, tol, tol) }

// chi2Q1 and chi2Q3 are the closed-form survival functions of χ² with 1 and 3 degrees
// of freedom, independent of gonum.
func chi2Q1(x float64) float64 { return math.Erfc(math.Sqrt(x / 2)) }
func chi2Q3(x float64) float64 {
	return math.Erfc(math.Sqrt(x/2)) + math.Sqrt(2*x/math.Pi)*math.Exp(-x/2)
}

func TestImbalance(t *testing.T) {
	cases := []struct {
		name  string
		loads []float64
		want  Balance
	}{
		{"uniform", []float64{10, 10, 10, 10}, Balance{Members: 4, Total: 40, MaxMean: 1, CoV: 0, Jain: 1, Chi2: 0, Chi2P: 1}},
		// mean 10, deviations 2,-2,0,0: pop var 2, Jain 1600/(4*408), chi2 8/10.
		{"mild", []float64{12, 8, 10, 10}, Balance{Members: 4, Total: 40, MaxMean: 1.2, CoV: math.Sqrt(2) / 10, Jain: 1600.0 / 1632, Chi2: 0.8, Chi2P: chi2Q3(0.8)}},
		// all on one member: std sqrt(300), Jain 1/n, chi2 (900+3*100)/10.
		{"one-member-takes-all", []float64{40, 0, 0, 0}, Balance{Members: 4, Total: 40, MaxMean: 4, CoV: math.Sqrt(300) / 10, Jain: 0.25, IdleFraction: 0.75, Chi2: 120, Chi2P: chi2Q3(120)}},
		// two members, mean 20: pop std 10, Jain 1600/(2*1000), chi2 200/20.
		{"pair", []float64{30, 10}, Balance{Members: 2, Total: 40, MaxMean: 1.5, CoV: 0.5, Jain: 0.8, Chi2: 10, Chi2P: chi2Q1(10)}},
		{"single", []float64{5}, Balance{Members: 1, Total: 5, MaxMean: 1, Jain: 1, Chi2P: 1}},
		{"single-idle", []float64{0}, Balance{Members: 1, Empty: true, MaxMean: 1, Jain: 1, IdleFraction: 1, Chi2P: 1}},
		{"all-zero", []float64{0, 0, 0}, Balance{Members: 3, Empty: true, MaxMean: 1, Jain: 1, IdleFraction: 1, Chi2P: 1}},
		{"none", nil, Balance{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := Imbalance(c.loads)
			w := c.want
			if g.Members != w.Members || g.Empty != w.Empty || !near(g.Total, w.Total) ||
				!near(g.MaxMean, w.MaxMean) || !near(g.CoV, w.CoV) || !near(g.Jain, w.Jain) ||
				!near(g.IdleFraction, w.IdleFraction) || !near(g.Chi2, w.Chi2) ||
				!scalar.EqualWithinAbsOrRel(g.Chi2P, w.Chi2P, 1e-12, 1e-6) {
				t.Errorf("Imbalance(%v)\n got %+v\nwant %+v", c.loads, g, w)
			}
		})
	}
}

func TestImbalanceAllocates(t *testing.T) {
	loads := []float64{3, 1, 4, 1, 5}
	if n := testing.AllocsPerRun(100, func() { Imbalance(loads) }); n != 0 {
		t.Errorf("Imbalance allocates %v times per call, want 0", n)
	}
}

func TestSummarizeTier(t *testing.T) {
	a := Imbalance([]float64{10, 10}) // total 20, balanced
	b := Imbalance([]float64{30, 10}) // total 40: max/mean 1.5, CoV 0.5, Jain 0.8, chi2 10
	e := Imbalance([]float64{0, 0})   // empty: left out
	got := SummarizeTier([]Balance{a, b, e}, []string{"a/0", "b/0", "e/0"})
	want := TierStats{
		Sets: 2, Total: 60,
		MaxMean: (20*1 + 40*1.5) / 60.0, CoV: (40 * 0.5) / 60.0, Jain: (20 + 40*0.8) / 60.0,
		Chi2: 10, DF: 2, Chi2P: math.Exp(-10.0 / 2), // χ²(2) survival is exp(-x/2)
		Worst: Worst{MaxMean: 1.5, MaxMeanSet: "b/0", CoV: 0.5, CoVSet: "b/0", Jain: 0.8, JainSet: "b/0", IdleFraction: 0, IdleSet: "a/0", Chi2P: chi2Q1(10), Chi2PSet: "b/0"},
	}
	if got.Sets != want.Sets || got.DF != want.DF || !near(got.Total, want.Total) || !near(got.MaxMean, want.MaxMean) ||
		!near(got.CoV, want.CoV) || !near(got.Jain, want.Jain) || !near(got.IdleFraction, 0) ||
		!near(got.Chi2, want.Chi2) || !scalar.EqualWithinAbsOrRel(got.Chi2P, want.Chi2P, 1e-12, 1e-6) ||
		got.Worst.MaxMeanSet != "b/0" || got.Worst.JainSet != "b/0" || !near(got.Worst.Jain, 0.8) ||
		!scalar.EqualWithinAbsOrRel(got.Worst.Chi2P, want.Worst.Chi2P, 1e-12, 1e-6) {
		t.Errorf("SummarizeTier\n got %+v\nwant %+v", got, want)
	}
	// A tier no traffic crossed: undefined, not 0.
	if z := SummarizeTier([]Balance{e}, nil); z.Sets != 0 || !math.IsNaN(z.MaxMean) || !math.IsNaN(z.Chi2P) || !math.IsNaN(z.Jain) {
		t.Errorf("all-empty tier: got %+v, want NaN measures", z)
	}
}

func TestImbalanceOf(t *testing.T) {
	r := ImbalanceOf([]SetLoad{
		{Node: nid("rack-p0-r0"), Tier: records.TierRack, Set: 0, Bytes: []float64{100, 300}, Flows: []float64{5, 5}},
		{Node: nid("fabric-p0-f0"), Tier: records.TierFabric, Set: 0, Bytes: []float64{50, 50, 0, 0}, Flows: []float64{10, 10, 0, 0}},
		{Node: nid("fabric-p0-f1"), Tier: records.TierFabric, Set: 0, Bytes: []float64{500, 0, 0, 0}, Flows: []float64{1, 0, 0, 0}}, // too few flows
		{Node: nid("spine-s0-0"), Tier: records.TierSpine, Set: 0, Bytes: []float64{0, 0}, Flows: []float64{0, 0}},                  // no traffic
	}, testNodes())
	rk := r.Tiers[TierRole(records.TierRack)]
	if rk == nil || !rk.Judged || !near(rk.MaxMean, 1.5) || !near(rk.Chi2P, 1) || !near(rk.Bytes.CoV, 0.5) || rk.Sets != 1 {
		t.Errorf("rack tier: %+v", rk)
	}
	// The one-flow set is left out of the fabric tier, which its 4x max/mean would
	// otherwise dominate.
	fb := r.Tiers[TierRole(records.TierFabric)]
	if fb == nil || !fb.Judged || fb.Sets != 1 || fb.Unjudged != 1 || fb.FlowCount != 21 || !near(fb.IdleFraction, 0.5) || !near(fb.MaxMean, 2) {
		t.Errorf("fabric tier: %+v", fb)
	}
	if sp := r.Tiers[TierRole(records.TierSpine)]; sp == nil || sp.Judged || !math.IsNaN(sp.MaxMean) || !math.IsNaN(sp.Chi2P) || sp.Reason != "no traffic crossed the spine tier's equal-cost sets" {
		t.Errorf("spine tier: %+v", sp)
	}
	js, err := json.Marshal(r.Tiers[TierRole(records.TierSpine)])
	if err != nil || !strings.Contains(string(js), `"max_mean":null`) || !strings.Contains(string(js), `"chi2_p":null`) {
		t.Errorf("spine tier JSON %s, %v: want nulls", js, err)
	}
	delete(r.Tiers, "spine")
	if got := r.TierNames(); len(got) != 2 || got[0] != "rack" || got[1] != "fabric" {
		t.Errorf("TierNames = %v", got)
	}
}

func TestNMI(t *testing.T) {
	// x = [0 0 1 1], y = [0 1 1 1]: H(X) = ln 2, H(Y) = H(1/4, 3/4),
	// H(X,Y) = H(1/4, 1/4, 1/2).
	hx := math.Ln2
	hy := -(0.25*math.Log(0.25) + 0.75*math.Log(0.75))
	hxy := -(2*0.25*math.Log(0.25) + 0.5*math.Log(0.5))
	partial := (hx + hy - hxy) / math.Min(hx, hy)
	var indX, indY []int
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			indX, indY = append(indX, i), append(indY, j)
		}
	}
	cases := []struct {
		name string
		x, y []int
		want float64
	}{
		{"identical", []int{0, 1, 2, 3, 0, 1, 2, 3, 3}, []int{0, 1, 2, 3, 0, 1, 2, 3, 3}, 1},
		{"permuted", []int{0, 1, 2, 3, 0, 1}, []int{2, 3, 0, 1, 2, 3}, 1},
		{"independent", indX, indY, 0},
		{"determined-smaller-set", []int{0, 1, 2, 3, 0, 1, 2, 3}, []int{0, 1, 0, 1, 0, 1, 0, 1}, 1},
		{"constant-fabric", []int{0, 1, 2, 3}, []int{0, 0, 0, 0}, math.NaN()}, // an entropy of 0: undefined
		{"partial", []int{0, 0, 1, 1}, []int{0, 1, 1, 1}, partial},
		{"no-flows", nil, nil, math.NaN()},
		{"uncrossed-skipped", []int{0, 1, -1, 2}, []int{0, 1, 3, 2}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := NMI(c.x, c.y); !scalar.EqualWithinAbsOrRel(got.NMI, c.want, 1e-12, 1e-9) && !(math.IsNaN(got.NMI) && math.IsNaN(c.want)) {
				t.Errorf("NMI = %v, want %v (%+v)", got.NMI, c.want, got)
			}
		})
	}
}

// The fabric member is the rack member XOR a per-rack constant (what an affine hash
// with per-switch salts does): pooled over racks the choices look independent, within
// each rack they are fully determined.
func TestPolarizationByRack(t *testing.T) {
	ft := &FlowTable{}
	for r := 0; r < 4; r++ {
		ft.Sets = append(ft.Sets, SetDef{Node: nid("rack-" + itoa1(r)), Tier: records.TierRack, Members: 4, Offset: 4 * r})
	}
	for r := 0; r < 4; r++ {
		for x := 0; x < 4; x++ {
			for k := 0; k < 5; k++ {
				ft.Flows = append(ft.Flows, FlowSample{Rack: nid("rack-" + itoa1(r)), RackCell: int32(4*r + x), FabricCell: -1, RackMember: int32(x), FabricMember: int32(x ^ r)})
			}
		}
	}
	p := ft.Polarization()
	// Pooled: every (x, y) cell holds 5 flows, independent: NMI 0, AMI below 0 by the
	// chance term; within each rack a bijection: 1.
	if !near(p.NMI, 0) || !near(p.NMIByRack, 1) || !near(p.AMIByRack, 1) || p.AMI >= 0 || p.Racks != 4 || p.Flows != 80 || !p.Judged {
		t.Errorf("polarization %+v, want pooled 0 and by rack 1", p)
	}
}

// refExpectedMI is E[I] written from Vinh, Epps and Bailey (2010), eq. 24a, summing
// every term k = max(1, a+b-n)..min(a, b) with the hypergeometric probability from
// log-factorials: no walk from the mode, no cut.
func refExpectedMI(a, b []float64, n float64) float64 {
	lf := func(x float64) float64 { v, _ := math.Lgamma(x + 1); return v }
	var e float64
	for _, ai := range a {
		for _, bj := range b {
			if ai == 0 || bj == 0 {
				continue
			}
			for k := math.Max(1, ai+bj-n); k <= math.Min(ai, bj); k++ {
				lp := lf(ai) + lf(bj) + lf(n-ai) + lf(n-bj) - lf(n) - lf(k) - lf(ai-k) - lf(bj-k) - lf(n-ai-bj+k)
				e += k / n * math.Log(n*k/(ai*bj)) * math.Exp(lp)
			}
		}
	}
	return e
}

func TestExpectedMI(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 300 {
		nx, ny := 1+r.IntN(5), 1+r.IntN(5)
		a, b := make([]float64, nx), make([]float64, ny)
		var n float64
		for i := range a {
			a[i] = float64(r.IntN(60))
			n += a[i]
		}
		// Columns: a random split of the same n.
		left := n
		for j := range b[:ny-1] {
			b[j] = float64(r.IntN(int(left) + 1))
			left -= b[j]
		}
		b[ny-1] = left
		got, want := ExpectedMI(a, b, n), refExpectedMI(a, b, n)
		if !scalar.EqualWithinAbsOrRel(got, want, 1e-12, 1e-9) {
			t.Fatalf("trial %d: a %v b %v: ExpectedMI %v, the formula %v", trial, a, b, got, want)
		}
	}
	// Large marginals: the walk from the mode matches the full sum.
	a, b := []float64{2500, 2500, 2500, 2500}, []float64{1000, 3000, 4000, 2000}
	if got, want := ExpectedMI(a, b, 10000), refExpectedMI(a, b, 10000); !scalar.EqualWithinAbsOrRel(got, want, 1e-13, 1e-9) {
		t.Errorf("10000 items: ExpectedMI %v, the formula %v", got, want)
	}
}

// AMI against scikit-learn on small tables. Reference values: scikit-learn 1.5.2,
// adjusted_mutual_info_score(x, y, average_method="min") for the labelings x, y that
// the tables count (python -m venv v && v/bin/pip install scikit-learn==1.5.2).
func TestAMIMatchesScikitLearn(t *testing.T) {
	for _, c := range []struct {
		name  string
		table [][]float64
		ami   float64
	}{
		{"identity", [][]float64{{3, 0, 0, 0}, {0, 2, 0, 0}, {0, 0, 4, 0}, {0, 0, 0, 1}}, 1.0},
		{"independent", [][]float64{{5, 5}, {5, 5}}, -0.04064067948899957},
		{"skewed 2x3", [][]float64{{4, 1, 0}, {1, 2, 3}}, 0.29331812793716455},
		{"3x2", [][]float64{{5, 0}, {0, 3}, {2, 2}}, 0.5953169892748109},
		{"pooled", [][]float64{{12, 4}, {4, 12}}, 0.16905935525277674},
	} {
		nx, ny := len(c.table), len(c.table[0])
		counts := make([]float64, 0, nx*ny)
		for _, row := range c.table {
			counts = append(counts, row...)
		}
		got := NMIFromCounts(counts, nx, ny)
		if !scalar.EqualWithinAbsOrRel(got.AMI, c.ami, 1e-12, 1e-9) {
			t.Errorf("%s: AMI %v, scikit-learn %v", c.name, got.AMI, c.ami)
		}
	}
}

// Chance-corrected: independent choices read AMI 0 on average while plain NMI reads
// its finite-sample bias (600 flows on 4 x 4 members: about 9/(2*600)/ln 4 = 0.005
// per the Miller-Madow term, more within racks); fully polarized choices read 1.
func TestAMIIsChanceCorrected(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 4))
	var ami, nmi float64
	const sims = 300
	x, y := make([]int, 600), make([]int, 600)
	for range sims {
		for i := range x {
			x[i], y[i] = r.IntN(4), r.IntN(4)
		}
		p := NMI(x, y)
		ami += p.AMI / sims
		nmi += p.NMI / sims
	}
	if math.Abs(ami) > 0.002 || nmi < 0.004 {
		t.Errorf("independent choices: mean AMI %.4f (want about 0), mean NMI %.4f (biased upward)", ami, nmi)
	}
	if p := NMI([]int{0, 1, 2, 3, 0, 1, 2, 3}, []int{1, 2, 3, 0, 1, 2, 3, 0}); !near(p.AMI, 1) {
		t.Errorf("polarized: AMI %v, want 1", p.AMI)
	}
}

// Undefined is null: every flow on one rack member is an entropy of 0, and fewer than
// MinPolarizationFlows flows are too few to judge; both say why, and JSON says null.
func TestPolarizationUndefined(t *testing.T) {
	ft := &FlowTable{}
	for i := range 40 {
		ft.Flows = append(ft.Flows, FlowSample{Rack: nid("rack-0"), RackCell: -1, FabricCell: -1, RackMember: 0, FabricMember: int32(i % 4)})
	}
	p := ft.Polarization()
	if p.Judged || !math.IsNaN(p.AMI) || !math.IsNaN(p.NMI) || !strings.Contains(p.Reason, "same rack member") {
		t.Errorf("one rack member: %+v", p)
	}
	js, err := json.Marshal(p)
	if err != nil || !strings.Contains(string(js), `"ami":null`) || !strings.Contains(string(js), `"judged":false`) {
		t.Errorf("JSON %s, %v", js, err)
	}
	ft.Flows = ft.Flows[:0]
	for i := range 29 {
		ft.Flows = append(ft.Flows, FlowSample{Rack: nid("rack-0"), RackCell: -1, FabricCell: -1, RackMember: int32(i % 4), FabricMember: int32(i % 4)})
	}
	if p := ft.Polarization(); p.Judged || !math.IsNaN(p.AMI) || !strings.Contains(p.Reason, "too few flows (29)") {
		t.Errorf("29 flows: %+v", p)
	}
	ft.Flows = append(ft.Flows, FlowSample{Rack: nid("rack-0"), RackCell: -1, FabricCell: -1, RackMember: 1, FabricMember: 1})
	if p := ft.Polarization(); !p.Judged || !near(p.AMI, 1) {
		t.Errorf("30 flows: %+v", p)
	}
}

// TestImbalanceWeighted: against shares 0.8/0.2, loads 80/20 are perfect; 50/50
// read max/mean 2.5 (the 100G member at 2.5 times its share) and Pearson's
// statistic (50-80)^2/80 + (50-20)^2/20 = 56.25; equal shares give Imbalance's numbers.
func TestImbalanceWeighted(t *testing.T) {
	b := ImbalanceWeighted([]float64{80, 20}, []float64{0.8, 0.2})
	if math.Abs(b.MaxMean-1) > 1e-12 || math.Abs(b.Chi2) > 1e-12 || math.Abs(b.Jain-1) > 1e-12 || b.CoV > 1e-12 {
		t.Errorf("80/20 at 4:1: %+v", b)
	}
	b = ImbalanceWeighted([]float64{50, 50}, []float64{0.8, 0.2})
	if math.Abs(b.MaxMean-2.5) > 1e-12 || math.Abs(b.Chi2-56.25) > 1e-9 {
		t.Errorf("50/50 at 4:1: %+v", b)
	}
	x := []float64{20, 10, 10, 0}
	w, u := ImbalanceWeighted(x, []float64{0.25, 0.25, 0.25, 0.25}), Imbalance(x)
	if math.Abs(w.MaxMean-u.MaxMean) > 1e-12 || math.Abs(w.CoV-u.CoV) > 1e-12 || math.Abs(w.Jain-u.Jain) > 1e-12 || math.Abs(w.Chi2-u.Chi2) > 1e-9 {
		t.Errorf("equal shares %+v, Imbalance %+v", w, u)
	}
}
