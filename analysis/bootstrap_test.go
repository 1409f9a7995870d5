package analysis

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/stat"

	"github.com/tracefabric/tracefabric/records"
)

func meanStat(x []float64) func() func(w, out []float64) {
	return func() func(w, out []float64) {
		return func(w, out []float64) {
			var s, n float64
			for i, v := range x {
				s += w[i] * v
				n += w[i]
			}
			out[0] = s / n
		}
	}
}

func TestPoissonWeights(t *testing.T) {
	w := make([]float64, 200000)
	PoissonWeights(rand.New(rand.NewPCG(1, 2)), w)
	m, v := stat.MeanVariance(w, nil)
	if math.Abs(m-1) > 0.01 || math.Abs(v-1) > 0.02 {
		t.Errorf("Poisson(1) weights: mean %v variance %v, want 1 and 1", m, v)
	}
	// The table's probabilities are Poisson(1)'s to 2^-16: e^-1 / k!.
	var count [256]float64
	for _, k := range poissonTable {
		count[k]++
	}
	fact := 1.0
	for k := range 8 {
		if k > 0 {
			fact *= float64(k)
		}
		if p := count[k] / (1 << 16); math.Abs(p-math.Exp(-1)/fact) > 1.0/(1<<16) {
			t.Errorf("P(%d) = %v, want %v", k, p, math.Exp(-1)/fact)
		}
	}
}

func TestBootstrapMean(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	x := make([]float64, 2000)
	for i := range x {
		x[i] = r.ExpFloat64() * 10
	}
	mean, sd := stat.MeanStdDev(x, nil)
	bs := Bootstrap{B: 400, Seed: 42}
	got := bs.Run(len(x), 1, meanStat(x))
	e := got[0]
	if !near(e.Value, mean) || !e.HasCI || !(e.Lo <= e.Value && e.Value <= e.Hi) {
		t.Fatalf("estimate %v, mean %v: point outside its CI", e, mean)
	}
	// The percentile interval of a mean is close to +-1.96 standard errors.
	half := 1.96 * sd / math.Sqrt(float64(len(x)))
	if w := (e.Hi - e.Lo) / 2; math.Abs(w-half)/half > 0.25 {
		t.Errorf("CI half width %v, want about %v", w, half)
	}
	// Deterministic for a seed, whatever the number of workers.
	for _, workers := range []int{1, 3} {
		bs2 := bs
		bs2.Workers = workers
		if again := bs2.Run(len(x), 1, meanStat(x)); !reflect.DeepEqual(again, got) {
			t.Errorf("workers=%d: %v, want %v", workers, again, got)
		}
	}
	other := bs
	other.Seed = 43
	if o := other.Run(len(x), 1, meanStat(x)); o[0].Lo == e.Lo && o[0].Hi == e.Hi {
		t.Errorf("another seed gave the same interval %v", o)
	}
	var calls, last int
	bs.Progress = func(done, total int) { calls++; last = done }
	bs.Run(len(x), 1, meanStat(x))
	if calls != 400 || last != 400 {
		t.Errorf("progress called %d times, last %d", calls, last)
	}
}

func TestEstimateJSON(t *testing.T) {
	for _, e := range []Estimate{{Value: 1.5, Lo: 1, Hi: 2, HasCI: true}, {Value: 3}} {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back Estimate
		if err := json.Unmarshal(b, &back); err != nil || back != e {
			t.Errorf("%s -> %+v (%v), want %+v", b, back, err, e)
		}
	}
	b, _ := json.Marshal(Estimate{Value: 3})
	if string(b) != `{"value":3}` {
		t.Errorf("no-CI JSON = %s", b)
	}
}

// FlowStat with every weight 1 gives the measured numbers, computed here by hand from
// the definitions: two racks and two fabric switches with two uplinks each and the
// member loads loadbalance.arrow would give, 32 flows crossing both tiers (rack 0's
// fabric member equals its rack member, rack 1's is independent of it).
func TestFlowStatPoint(t *testing.T) {
	ft := &FlowTable{
		Sets: []SetDef{
			{Node: nid("rack-0"), Tier: records.TierRack, Members: 2, Offset: 0},
			{Node: nid("rack-1"), Tier: records.TierRack, Members: 2, Offset: 2},
			{Node: nid("fabric-0"), Tier: records.TierFabric, Members: 2, Offset: 4},
			{Node: nid("fabric-1"), Tier: records.TierFabric, Members: 2, Offset: 6},
		},
		CellBytes: []float64{300, 100, 50, 350, 200, 0, 100, 500},
		CellFlows: []float64{6, 6, 5, 7, 10, 0, 4, 8},
	}
	add := func(rack, x, y int, delay float64) {
		// Flow j: ideal 1000 ps, FCT 1000 + 250 (j mod 8) ps, so slowdown 1 + (j mod 8)/4;
		// every fourth flow (j mod 4 = 3) did not complete.
		j := len(ft.Flows)
		completion := records.CompletionComplete
		if j%4 == 3 {
			completion = records.CompletionDropped
		}
		ft.Flows = append(ft.Flows, FlowSample{Rack: nid("rack-" + itoa1(rack)), RackCell: int32(2*rack + x), RackMember: int32(x),
			FabricCell: int32(4 + 2*x + y), FabricMember: int32(y), Packets: 2, Bytes: 100, Delivered: 2, CE: float64(j % 2),
			Dropped: float64(j % 3), DelayMeanPs: delay,
			SizeBytes: 100, Data: true, Completion: completion, Slowdown: SlowdownOf(completion == records.CompletionComplete, int64(1000+250*(j%8)), 1000)})
	}
	for k := range 8 {
		add(0, 0, 0, float64(1000+k))
		add(0, 1, 1, float64(2000+k))
	}
	for k := range 4 {
		for x := range 2 {
			for y := range 2 {
				add(1, x, y, float64(3000+100*k+10*x+y))
			}
		}
	}
	if err := ft.Validate(); err != nil {
		t.Fatal(err)
	}
	tiers := ft.Tiers()
	if !reflect.DeepEqual(tiers, []Role{"rack", "fabric"}) {
		t.Fatalf("tiers %v", tiers)
	}
	names := FlowStatNames(tiers)
	out := make([]float64, len(names))
	w := make([]float64, len(ft.Flows))
	for i := range w {
		w[i] = 1
	}
	ft.FlowStat(tiers)()(w, out)
	// By hand. Rack sets [300 100] and [50 350] (400 B each, equal weights): max/mean
	// 1.5 and 1.75, CoV 100/200 and 150/200, Jain 400^2/(2*100000) and
	// 400^2/(2*125000); flow chi-square 0 and (1+1)/6, pooled over 2 degrees of
	// freedom: P = exp(-x/2). Fabric sets [200 0] and [100 500] (weights 200 and 600):
	// max/mean 2 and 5/3, CoV 1 and 2/3, Jain 1/2 and 360000/520000, idle 1/2 and 0;
	// flows [10 0] and [4 8]: chi-square 10 + 4/3.
	fabricJain := (200*0.5 + 600*360000.0/520000) / 800
	want := map[string]float64{
		"imbalance.tiers.rack.max_mean": 1.625, "imbalance.tiers.rack.cov": 0.625, "imbalance.tiers.rack.jain": (0.8 + 0.64) / 2,
		"imbalance.tiers.rack.chi2_p": math.Exp(-1.0 / 6), "imbalance.tiers.rack.idle_fraction": 0,
		"imbalance.tiers.fabric.max_mean": 1.75, "imbalance.tiers.fabric.cov": 0.75, "imbalance.tiers.fabric.jain": fabricJain,
		"imbalance.tiers.fabric.chi2_p": math.Exp(-17.0 / 3), "imbalance.tiers.fabric.idle_fraction": 0.125,
		// Polarization, pooled table [[12 4] [4 12]]; per rack [[8 0] [0 8]] (AMI 1) and
		// [[4 4] [4 4]]: scikit-learn 1.5.2, adjusted_mutual_info_score(x, y,
		// average_method="min") gives 0.16905935525277674 and -0.052513607359303334;
		// mutual_info_score 0.1308120359411371 for the pooled table, so NMI = that / ln 2.
		MetricAMI: 0.16905935525277674, MetricAMIByRack: (16*1 + 16*-0.052513607359303334) / 32.0,
		MetricNMI: 0.1308120359411371 / math.Ln2, MetricNMIByRack: (16*1 + 16*0) / 32.0,
		// 32 flows: dropped 0,1,2,0,1,2,... (sum 31), CE every other flow of 2 delivered
		// packets each: 16 of 64.
		MetricDrops: 31, MetricDeliveredCE: 16, MetricCEFraction: 16.0 / 64,
		// 32 flows, each counted once, the 8 unfinished ones (j mod 4 = 3) as slowest:
		// the p99 rank 31.68 is past the 24 finished: unfinished, +Inf.
		MetricFlowMeanP99: math.Inf(1),
		// 24 completed flows (j mod 8 in 0, 1, 2, 4, 5, 6, four each): slowdowns 1,
		// 1.25, 1.5, 2, 2.25, 2.5; 8 unfinished, slowest. Empirical median over the 32:
		// the smallest value with 16 at or below it, 2 (4 each at 1, 1.25, 1.5, 2); p99:
		// 31.68 of 32, among the unfinished: +Inf. Completed: 24 of 32.
		MetricSlowdownP50: 2, MetricSlowdownP99: math.Inf(1), MetricCompleteFraction: 0.75,
	}
	for i, n := range names {
		if !scalar.EqualWithinAbsOrRel(out[i], want[n], 1e-12, 1e-9) && !(math.IsInf(want[n], 1) && math.IsInf(out[i], 1)) {
			t.Errorf("%s = %v, want %v", n, out[i], want[n])
		}
	}
	// The same numbers as the single-run summary's (the measured loads, not the flows').
	ref := ImbalanceOf([]SetLoad{
		{Node: nid("rack-0"), Tier: records.TierRack, Bytes: ft.CellBytes[0:2], Flows: ft.CellFlows[0:2]},
		{Node: nid("rack-1"), Tier: records.TierRack, Bytes: ft.CellBytes[2:4], Flows: ft.CellFlows[2:4]},
		{Node: nid("fabric-0"), Tier: records.TierFabric, Bytes: ft.CellBytes[4:6], Flows: ft.CellFlows[4:6]},
		{Node: nid("fabric-1"), Tier: records.TierFabric, Bytes: ft.CellBytes[6:8], Flows: ft.CellFlows[6:8]},
	}, testNodes())
	if got := ref.Tiers[TierRole(records.TierFabric)].MaxMean; got != out[5] {
		t.Errorf("fabric max/mean: FlowStat %v, ImbalanceOf %v", out[5], got)
	}
	// Zero weight on the unfinished flows leaves the 24 completed: the flow mean-delay
	// p99 is the largest of their delays, rack 1's 3310 (j = 30; 3311 is j = 31's,
	// unfinished), and the slowdowns are the completed flows' alone: median 1.5 (12 of
	// 24 at or below it), p99 2.5 (23.76 of 24, the largest); all of them completed.
	at := func(name string) float64 { return out[slices.Index(names, name)] }
	for i := range w {
		w[i] = 1
		if i%4 == 3 {
			w[i] = 0
		}
	}
	ft.FlowStat(tiers)()(w, out)
	if got := at(MetricFlowMeanP99); got != 3310 {
		t.Errorf("p99 without the unfinished flows = %v, want 3310", got)
	}
	if p50, p99, done := at(MetricSlowdownP50), at(MetricSlowdownP99), at(MetricCompleteFraction); p50 != 1.5 || p99 != 2.5 || done != 1 {
		t.Errorf("slowdown without the unfinished flows: p50 %v, p99 %v, complete %v; want 1.5, 2.5 and 1", p50, p99, done)
	}
	// Weights: the four flows of slowdown 2.5 (j = 6, 14, 22, 30) left out, those of
	// slowdown 1 (j = 0, 8, 16, 24) counted three times, the 8 unfinished once: 28
	// completed, 12 at 1, then 4 each at 1.25, 1.5, 2, 2.25, and 8 unfinished, 36 in
	// all. Median: 18 of 36, reached at 1.5 (20); p99: 35.64, past the 28 completed:
	// unfinished. Completed: 28 of 36.
	for i := range w {
		switch i % 8 {
		case 6:
			w[i] = 0
		case 0:
			w[i] = 3
		default:
			w[i] = 1
		}
	}
	ft.FlowStat(tiers)()(w, out)
	if p50, p99, done := at(MetricSlowdownP50), at(MetricSlowdownP99), at(MetricCompleteFraction); p50 != 1.5 || !math.IsInf(p99, 1) || !near(done, 28.0/36) {
		t.Errorf("weighted slowdown p50 %v, p99 %v, complete %v; want 1.5, +Inf and 28/36", p50, p99, done)
	}
	// The single run's FCT summary gives the same numbers with every weight 1; its
	// rows keep the completed flows' slowdowns (p99 of the 24: 2.5).
	s := ft.FCT(9000, 200_000)
	if s.SlowdownP50 != 2 || !math.IsInf(s.SlowdownP99, 1) || !slices.Equal(s.Unfinished, []string{"slowdown_p99"}) || s.CompleteFraction != 0.75 ||
		s.Complete != 24 || s.Flows != 32 || s.ByCompletion["dropped"] != 8 || *s.Rows[len(s.Rows)-1].P99 != 2.5 {
		t.Errorf("FCT summary %+v", s)
	}
	if js, err := json.Marshal(s); err != nil || !strings.Contains(string(js), `"slowdown_p99":null,"unfinished":["slowdown_p99"]`) {
		t.Errorf("FCT summary JSON %s, %v: want slowdown_p99 null and named unfinished", js, err)
	}
	if bad := (&FlowTable{Sets: ft.Sets, Flows: []FlowSample{{RackCell: 9, FabricCell: -1}}}).Validate(); bad == nil {
		t.Error("Validate accepted a cell outside the table")
	}
}

func TestTailQuantileMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 300; trial++ {
		n := 1 + r.IntN(300)
		flows := make([]FlowSample, n)
		w := make([]float64, n)
		var order []int32
		for i := range flows {
			flows[i] = FlowSample{Delivered: float64(r.IntN(4)), DelayMeanPs: float64(r.IntN(50))}
			w[i] = float64(r.IntN(3))
			if flows[i].Delivered > 0 {
				order = append(order, int32(i))
			}
		}
		sort.SliceStable(order, func(a, b int) bool { return flows[order[a]].DelayMeanPs < flows[order[b]].DelayMeanPs })
		x := make([]float64, len(order))
		wt := make([]float64, len(order))
		var total float64
		for k, i := range order {
			x[k], wt[k] = flows[i].DelayMeanPs, w[i]
			total += wt[k]
		}
		for _, p := range []float64{0.5, 0.9, 0.99, 0.999} {
			got := tailQuantile(p, order, x, w, total)
			want := math.NaN()
			if total > 0 {
				want = stat.Quantile(p, stat.Empirical, x, wt)
			}
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("trial %d p%v: tail scan %v, stat.Quantile %v", trial, p, got, want)
			}
		}
	}
}

// The grouped quantile of the slowdowns agrees with stat.Quantile on random weighted
// samples (ties, zero weights, fewer flows than groups and more).
func TestRankedQuantileMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for trial := 0; trial < 200; trial++ {
		n := 1 + r.IntN(5000)
		v := make([]float64, n)
		w := make([]float64, n)
		var order []int32
		for i := range v {
			v[i] = math.NaN()
			if r.IntN(4) > 0 { // a quarter without a value
				v[i] = float64(1 + r.IntN(40))
				order = append(order, int32(i))
			}
			w[i] = float64(r.IntN(3))
		}
		sort.SliceStable(order, func(a, b int) bool { return v[order[a]] < v[order[b]] })
		x := make([]float64, len(order))
		wt := make([]float64, len(order))
		var total float64
		for k, i := range order {
			x[k], wt[k] = v[i], w[i]
			total += w[i]
		}
		q := newRankedQuantiles(n, order, x)
		groups := make([]float64, len(q.group0))
		for i := range v {
			if rk := q.rank[i]; rk >= 0 {
				groups[int(rk)/q.size] += w[i]
			}
		}
		for _, p := range []float64{0.01, 0.5, 0.95, 0.99} {
			got := q.quantile(p, groups, w, total)
			want := math.NaN()
			if total > 0 {
				want = stat.Quantile(p, stat.Empirical, x, wt)
			}
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("trial %d (n %d) p%v: grouped %v, stat.Quantile %v", trial, n, p, got, want)
			}
		}
	}
}

// The measured load of a member (loadbalance.arrow frame bytes and flows) divides
// among the flows that crossed it: a flow that stayed on its member in proportion to
// its frame bytes (IPv4 bytes + 18 per packet), a flow that moved (flowlets) over the
// members as the residual the others leave. Numbers by hand.
func TestApportion(t *testing.T) {
	set := []SetDef{{Node: nid("rack-0"), Tier: records.TierRack, Members: 2}}
	// Hash: A (1000 B, 2 packets) and B (500 B, 1 packet) on member 0, C on member 1;
	// frame estimates 1036, 518, 318; measured [1600 400] B, [2 1] flows.
	ft := &FlowTable{Sets: set, CellBytes: []float64{1600, 400}, CellFlows: []float64{2, 1}, Flows: []FlowSample{
		{RackCell: 0, FabricCell: -1, Packets: 2, Bytes: 1000},
		{RackCell: 0, FabricCell: -1, Packets: 1, Bytes: 500},
		{RackCell: 1, FabricCell: -1, Packets: 1, Bytes: 300},
	}}
	ft.Apportion()
	want := []CellShare{{0, 1600 * 1036.0 / 1554, 1}, {0, 1600 * 518.0 / 1554, 1}, {1, 400, 1}}
	checkShares(t, "hash", ft, want)
	// Flowlets: D (600 B est.) moved, first on member 0; E and F (500 B est. each)
	// stayed on 0 and 1; measured [1000 1000] B, [2 2] flows (D counted on both). The
	// residuals are 500 B and 1 flow on each member: D spreads 300 + 300 B and a flow on
	// each; then each member's shares scale to its measured 1000 B (x 1.25).
	ft = &FlowTable{Sets: set, CellBytes: []float64{1000, 1000}, CellFlows: []float64{2, 2}, Flows: []FlowSample{
		{RackCell: 0, FabricCell: -1, Moved: true, Packets: 0, Bytes: 600},
		{RackCell: 0, FabricCell: -1, Packets: 0, Bytes: 500},
		{RackCell: 1, FabricCell: -1, Packets: 0, Bytes: 500},
	}}
	ft.Apportion()
	checkShares(t, "flowlet", ft, []CellShare{{0, 375, 1}, {1, 375, 1}, {0, 625, 1}, {1, 625, 1}})
}

func checkShares(t *testing.T, name string, ft *FlowTable, want []CellShare) {
	t.Helper()
	if len(ft.Shares) != len(want) {
		t.Fatalf("%s: shares %+v, want %+v", name, ft.Shares, want)
	}
	for i, w := range want {
		g := ft.Shares[i]
		if g.Cell != w.Cell || !near(g.Bytes, w.Bytes) || !near(g.Flows, w.Flows) {
			t.Errorf("%s: share %d = %+v, want %+v", name, i, g, w)
		}
	}
	// The shares of every member sum to its measured load.
	for c := range ft.CellBytes {
		var b, f float64
		for _, sh := range ft.Shares {
			if int(sh.Cell) == c {
				b, f = b+sh.Bytes, f+sh.Flows
			}
		}
		if !near(b, ft.CellBytes[c]) || !near(f, ft.CellFlows[c]) {
			t.Errorf("%s: member %d shares sum to %v B, %v flows; measured %v, %v", name, c, b, f, ft.CellBytes[c], ft.CellFlows[c])
		}
	}
}
