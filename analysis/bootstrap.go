package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultBootstrap is the default number of bootstrap replicates.
const DefaultBootstrap = 1000

// Estimate is a point estimate with, when HasCI, a bootstrap confidence interval
// [Lo, Hi]. In JSON: {"value": v, "lo": l, "hi": h}, lo and hi omitted without a CI.
type Estimate struct {
	Value float64
	Lo    float64
	Hi    float64
	HasCI bool
}

// MarshalJSON writes {"value", "lo", "hi"}.
func (e Estimate) MarshalJSON() ([]byte, error) {
	type ci struct {
		Value float64  `json:"value"`
		Lo    *float64 `json:"lo,omitempty"`
		Hi    *float64 `json:"hi,omitempty"`
	}
	c := ci{Value: e.Value}
	if e.HasCI {
		c.Lo, c.Hi = &e.Lo, &e.Hi
	}
	return json.Marshal(c)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Estimate) UnmarshalJSON(b []byte) error {
	var c struct {
		Value float64  `json:"value"`
		Lo    *float64 `json:"lo"`
		Hi    *float64 `json:"hi"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	*e = Estimate{Value: c.Value}
	if c.Lo != nil && c.Hi != nil {
		e.Lo, e.Hi, e.HasCI = *c.Lo, *c.Hi, true
	}
	return nil
}

func (e Estimate) String() string {
	if !e.HasCI {
		return fmt.Sprintf("%.4g", e.Value)
	}
	return fmt.Sprintf("%.4g [%.4g, %.4g]", e.Value, e.Lo, e.Hi)
}

// Bootstrap resamples flows to put confidence intervals on statistics computed from
// flow rows.
//
// Resampling scheme: the Poisson bootstrap. In each replicate every flow gets an
// independent weight w ~ Poisson(1) (how many times it is drawn), and the statistic is
// recomputed with those weights. For the thousands of flows of a trace this is
// equivalent to drawing n flows with replacement (the multinomial counts of the
// classic bootstrap tend to independent Poisson(1) counts; Hanley & MacGibbon 2006,
// Chamandy et al. 2012), and it lets each replicate be one sequential pass over the
// flows. The interval is the bias-corrected percentile interval (BiasCorrectedCI): the
// (1-Level)/2 and (1+Level)/2 empirical quantiles (gonum stat.Quantile, Empirical) of
// the B replicate values, shifted by the bootstrap bias estimate mean(replicates) -
// estimate. Resampling biases max/mean and CoV upward (a replicate that draws an
// elephant flow twice or not at all spreads the member loads), and the plain
// percentile interval of such a statistic can lie entirely above its estimate (seen:
// max/mean 1.244 with a percentile interval [1.29, 1.59]); the shift removes that
// bias, so the interval brackets the estimate and its width says how fragile the
// number is. To rank methods read the paired test of Comparison (Best.Clear).
//
// Determinism: replicate b draws from its own PCG seeded (Seed, b), in flow order, so
// the result depends only on Seed, B and the flows, not on Workers or scheduling. Runs
// of the same trace list their flows in the same order, so each replicate gives the same
// weight to the same flow in every run (paired resampling across methods).
type Bootstrap struct {
	B       int     // replicates; <= 0 means DefaultBootstrap
	Seed    uint64  // PCG seed
	Level   float64 // confidence level; 0 means 0.95
	Workers int     // parallel replicates; <= 0 means GOMAXPROCS
	// Progress, if not nil, is called with the replicates done so far (from one
	// goroutine at a time, in increasing order).
	Progress func(done, total int)
}

// poissonThresholds[k] is P(Poisson(1) <= k) scaled to 2^32: a uniform uint32 below it
// draws a count <= k (the probabilities are exact to 2^-32). The last entry ends the
// table.
var poissonThresholds = func() []uint32 {
	d := distuv.Poisson{Lambda: 1}
	var t []uint32
	for k := 0; k < 20; k++ {
		c := d.CDF(float64(k)) * (1 << 32)
		if c >= math.MaxUint32 {
			break
		}
		t = append(t, uint32(c))
	}
	return append(t, math.MaxUint32)
}()

// poisson1 maps a uniform uint32 to a Poisson(1) count.
func poisson1(u uint32) float64 {
	k := 0
	for k < len(poissonThresholds)-1 && u >= poissonThresholds[k] {
		k++
	}
	return float64(k)
}

// PoissonWeights fills w with independent Poisson(1) draws from r (two per 64-bit
// draw).
func PoissonWeights(r *rand.Rand, w []float64) {
	i := 0
	for ; i+1 < len(w); i += 2 {
		u := r.Uint64()
		w[i], w[i+1] = poisson1(uint32(u)), poisson1(uint32(u>>32))
	}
	if i < len(w) {
		w[i] = poisson1(uint32(r.Uint64()))
	}
}

// Run bootstraps a statistic of n flows with dim outputs. newStat is called once per
// worker and returns the statistic: given the flows' weights w (len n) it writes its
// dim values into out; it must treat w as read-only and may keep scratch state (it is
// never called concurrently with itself). It returns the point estimates (all weights
// 1) with their intervals.
func (bs Bootstrap) Run(n, dim int, newStat func() func(w, out []float64)) []Estimate {
	est, _ := bs.RunReplicates(n, dim, newStat)
	return est
}

// RunReplicates is Run that also returns the replicate values: reps[r*dim+k] is
// statistic k in replicate r. Two runs bootstrapped with the same Seed and B over the
// same flows in the same order share their weights replicate by replicate (paired), so
// differences of their replicates bootstrap the difference of the statistics.
func (bs Bootstrap) RunReplicates(n, dim int, newStat func() func(w, out []float64)) ([]Estimate, []float64) {
	b := bs.B
	if b <= 0 {
		b = DefaultBootstrap
	}
	level := bs.Level
	if level <= 0 || level >= 1 {
		level = 0.95
	}
	workers := bs.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, b)

	est := make([]Estimate, dim)
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	point := make([]float64, dim)
	newStat()(ones, point)
	ones = nil

	reps := make([]float64, b*dim) // reps[r*dim+k]
	var (
		mu   sync.Mutex
		done int
		next int
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := newStat()
			w := make([]float64, n)
			for {
				mu.Lock()
				r := next
				next++
				mu.Unlock()
				if r >= b {
					return
				}
				PoissonWeights(rand.New(rand.NewPCG(bs.Seed, uint64(r))), w)
				f(w, reps[r*dim:(r+1)*dim])
				mu.Lock()
				done++
				if bs.Progress != nil {
					bs.Progress(done, b)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()

	col := make([]float64, b)
	for k := range dim {
		for r := range b {
			col[r] = reps[r*dim+k]
		}
		lo, hi := BiasCorrectedCI(col, point[k], level)
		est[k] = Estimate{Value: point[k], Lo: lo, Hi: hi, HasCI: true}
	}
	return est, reps
}

// BiasCorrectedCI is the percentile interval of the replicates shifted by the
// bootstrap's bias estimate, mean(replicates) - point: [q_lo - bias, q_hi - bias].
// Statistics such as max/mean or the coefficient of variation are biased upward under
// resampling (a resample spreads the member loads more than the sample does), so the
// plain percentile interval can lie entirely above the point estimate; the shifted
// interval is centred on the estimate's own bias-corrected distribution. It sorts
// samples in place; NaN samples are ignored.
func BiasCorrectedCI(samples []float64, point, level float64) (lo, hi float64) {
	var sum float64
	n := 0
	for _, v := range samples {
		if !math.IsNaN(v) {
			sum += v
			n++
		}
	}
	lo, hi = PercentileCI(samples, level)
	if n == 0 || math.IsNaN(point) || math.IsInf(point, 0) {
		return lo, hi
	}
	bias := sum/float64(n) - point
	return lo - bias, hi - bias
}

// PercentileCI returns the percentile interval of level (e.g. 0.95) of samples, which
// it sorts in place. NaN samples are ignored; with none left it returns NaN, NaN.
func PercentileCI(samples []float64, level float64) (lo, hi float64) {
	s := samples[:0]
	for _, v := range samples {
		if !math.IsNaN(v) {
			s = append(s, v)
		}
	}
	if len(s) == 0 {
		return math.NaN(), math.NaN()
	}
	sort.Float64s(s)
	a := (1 - level) / 2
	return stat.Quantile(a, stat.Empirical, s, nil), stat.Quantile(1-a, stat.Empirical, s, nil)
}
