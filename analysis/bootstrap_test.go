package analysis

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

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

// flowFixture: two racks with 2 uplinks each, two fabric switches with 2 uplinks each.
func flowFixture() *FlowTable {
	ft := &FlowTable{Sets: []SetDef{
		{Node: nid("rack-0"), Tier: records.TierRack, Members: 2, Offset: 0},
		{Node: nid("rack-1"), Tier: records.TierRack, Members: 2, Offset: 2},
		{Node: nid("fabric-0"), Tier: records.TierFabric, Members: 2, Offset: 4},
		{Node: nid("fabric-1"), Tier: records.TierFabric, Members: 2, Offset: 6},
	}}
	add := func(rack, rm, fm int, bytes, dropped, delivered, delay float64) {
		f := FlowSample{RackCell: int32(2*rack + rm), RackMember: int32(rm), FabricCell: -1, FabricMember: -1,
			Bytes: bytes, Dropped: dropped, Delivered: delivered, DelayMeanPs: delay}
		if fm >= 0 {
			f.FabricCell, f.FabricMember = int32(4+2*rm+fm), int32(fm)
		}
		ft.Flows = append(ft.Flows, f)
	}
	add(0, 0, 0, 100, 0, 10, 1000)
	add(0, 1, 1, 300, 2, 8, 5000)
	add(0, 0, 0, 100, 0, 10, 2000)
	add(1, 1, 1, 200, 1, 9, 3000)
	add(1, 0, -1, 50, 0, 0, 0) // intra-pod: no fabric member, nothing delivered
	add(1, 1, 0, 100, 0, 10, 4000)
	return ft
}

func TestFlowStatPoint(t *testing.T) {
	ft := flowFixture()
	if err := ft.Validate(); err != nil {
		t.Fatal(err)
	}
	tiers := ft.Tiers()
	if !reflect.DeepEqual(tiers, []records.Tier{records.TierRack, records.TierFabric}) {
		t.Fatalf("tiers %v", tiers)
	}
	names := FlowStatNames(tiers)
	out := make([]float64, len(names))
	w := make([]float64, len(ft.Flows))
	for i := range w {
		w[i] = 1
	}
	ft.FlowStat(tiers)()(w, out)
	// The same loads by hand.
	ref := ImbalanceOf([]SetLoad{
		{Node: nid("rack-0"), Tier: records.TierRack, Bytes: []float64{200, 300}, Flows: []float64{2, 1}},
		{Node: nid("rack-1"), Tier: records.TierRack, Bytes: []float64{50, 300}, Flows: []float64{1, 2}},
		{Node: nid("fabric-0"), Tier: records.TierFabric, Bytes: []float64{200, 0}, Flows: []float64{2, 0}},
		{Node: nid("fabric-1"), Tier: records.TierFabric, Bytes: []float64{100, 500}, Flows: []float64{1, 2}},
	}, testNodes())
	pol := NMI([]int{0, 1, 0, 1, 1}, []int{0, 1, 0, 1, 0})
	// Packets by delay: 10@1000, 10@2000, 9@3000, 10@4000, 8@5000 (47); rank 0.99*47
	// = 46.53 falls on the last flow.
	want := map[string]float64{
		// rack 0: (0,0) (1,1) (0,0) identical, NMI 1; rack 1: (1,1) (1,0) constant rack
		// choice, NMI 0: weighted (3*1 + 2*0) / 5.
		"polarization.nmi": pol.NMI, "polarization.nmi_by_rack": 0.6, "drops.total": 3, "delay.flow_p99_ps": 5000,
	}
	for _, tier := range tiers {
		ti := ref.Tiers[tier]
		want[tier.String()+".max_mean"] = ti.MaxMean
		want[tier.String()+".cov"] = ti.CoV
		want[tier.String()+".jain"] = ti.Jain
		want[tier.String()+".chi2_p"] = ti.Chi2P
		want[tier.String()+".idle_fraction"] = ti.IdleFraction
	}
	for i, n := range names {
		if !near(out[i], want[n]) {
			t.Errorf("%s = %v, want %v", n, out[i], want[n])
		}
	}
	// Zero weight on the slowest flow moves the p99 to the next one.
	w[1] = 0
	ft.FlowStat(tiers)()(w, out)
	if got := out[len(out)-1]; got != 4000 {
		t.Errorf("p99 without the slowest flow = %v, want 4000", got)
	}
	est := Bootstrap{B: 200, Seed: 1}.Run(len(ft.Flows), len(names), ft.FlowStat(tiers))
	for i, e := range est {
		if !(e.Lo <= e.Hi) || math.IsNaN(e.Lo) {
			t.Errorf("%s: CI %v", names[i], e)
		}
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
			x[k], wt[k] = flows[i].DelayMeanPs, w[i]*flows[i].Delivered
			total += wt[k]
		}
		for _, p := range []float64{0.5, 0.9, 0.99, 0.999} {
			got := tailQuantile(p, order, flows, w, total)
			want := 0.0
			if total > 0 {
				want = stat.Quantile(p, stat.Empirical, x, wt)
			}
			if got != want {
				t.Fatalf("trial %d p%v: tail scan %v, stat.Quantile %v", trial, p, got, want)
			}
		}
	}
}
