package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBiasCorrectedCIBracketsBiasedStatistic: max/mean of member loads is biased
// upward under resampling; the bias-corrected interval still brackets the estimate,
// where the plain percentile interval lies above it.
func TestBiasCorrectedCIBracketsBiasedStatistic(t *testing.T) {
	// 4 members, 40 flows each of 1..3 elephants-ish sizes: a nearly balanced set.
	r := rand.New(rand.NewPCG(1, 2))
	n := 40
	member := make([]int, n)
	size := make([]float64, n)
	for i := range n {
		member[i] = i % 4
		size[i] = 1 + float64(r.IntN(3))
	}
	stat := func(w []float64) float64 {
		var load [4]float64
		for i := range n {
			load[member[i]] += w[i] * size[i]
		}
		return Imbalance(load[:]).MaxMean
	}
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	point := stat(ones)
	reps := make([]float64, 2000)
	w := make([]float64, n)
	for b := range reps {
		PoissonWeights(rand.New(rand.NewPCG(7, uint64(b))), w)
		reps[b] = stat(w)
	}
	plo, phi := PercentileCI(append([]float64(nil), reps...), 0.95)
	lo, hi := BiasCorrectedCI(reps, point, 0.95)
	t.Logf("point %.3f percentile [%.3f, %.3f] bias-corrected [%.3f, %.3f]", point, plo, phi, lo, hi)
	if !(lo <= point && point <= hi) {
		t.Errorf("bias-corrected [%g, %g] does not bracket %g", lo, hi, point)
	}
	if math.Abs((phi-plo)-(hi-lo)) > 1e-12 {
		t.Errorf("the shift changed the width: %g vs %g", phi-plo, hi-lo)
	}
	if lo2, hi2 := BiasCorrectedCI([]float64{math.NaN()}, 1, 0.95); !math.IsNaN(lo2) || !math.IsNaN(hi2) {
		t.Errorf("all-NaN replicates gave [%g, %g]", lo2, hi2)
	}
}

func TestMetricRangeClamp(t *testing.T) {
	e := Estimate{Value: 1.1, Lo: 0.9, Hi: 1.4, HasCI: true}.clamp(metricRange("imbalance.tiers.fabric.max_mean"))
	if e.Lo != 1 || e.Hi != 1.4 || e.Value != 1.1 {
		t.Errorf("max/mean clamp: %+v", e)
	}
	e = Estimate{Value: 0.99, Lo: 0.95, Hi: 1.03, HasCI: true}.clamp(metricRange("polarization.nmi"))
	if e.Hi != 1 || e.Lo != 0.95 {
		t.Errorf("NMI clamp: %+v", e)
	}
	e = Estimate{Value: 3, Lo: -1, Hi: 5, HasCI: true}.clamp(metricRange("drops.total"))
	if e.Lo != 0 {
		t.Errorf("drops clamp: %+v", e)
	}
}
