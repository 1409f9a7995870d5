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

// Interval methods of Bootstrap (docs/analysis.md#comparisons).
const (
	// IntervalMethod is the default: BCa, the bias-corrected and accelerated
	// percentile interval (BCaCI).
	IntervalMethod = "BCa"
	// IntervalNormal is the normal interval with the bootstrap standard error:
	// estimate +- z * sd(replicates) (NormalCI), for the chance-corrected polarization
	// measures (IntervalOf).
	IntervalNormal = "normal"
	// IntervalNone: no interval (plain NMI, kept for reference only).
	IntervalNone = "none"
)

// IntervalOf returns the interval method of a per-flow metric. The adjusted mutual
// information is chance-corrected, so its estimate is centred on the truth, but the
// plug-in mutual information inside it is biased upward under resampling (a flow
// drawn twice adds a perfectly dependent pair), and at independence, the case that
// matters, it is a degenerate (chi-square) statistic whose bootstrap distribution
// lies above the estimate: BCa and percentile intervals cover the truth of
// independent choices about two times in three there (TestAMIIntervalCoverage). Its
// interval is therefore the normal interval around the estimate with the bootstrap
// standard error, which keeps nominal coverage both at independence (where it is
// conservative) and for polarized choices. The plain NMI, biased and kept beside AMI for reference only,
// gets no interval. Every other metric gets BCa.
func IntervalOf(metric string) string {
	switch metric {
	case MetricAMI, MetricAMIByRack:
		return IntervalNormal
	case MetricNMI, MetricNMIByRack:
		return IntervalNone
	}
	return IntervalMethod
}

// intervalMethods returns IntervalOf of each metric.
func intervalMethods(metrics []string) []string {
	m := make([]string, len(metrics))
	for i, n := range metrics {
		m[i] = IntervalOf(n)
	}
	return m
}

// Estimate is a point estimate with, when HasCI, a 95% bootstrap confidence interval
// [Lo, Hi] (BCa, see Bootstrap). A Value of NaN is undefined (Reason says why): in
// JSON {"value": null, "judged": false, "reason": "..."}, else {"value": v, "lo": l,
// "hi": h}, lo and hi omitted without an interval. A Value (or Hi) of +Inf is a
// quantile that falls among the unfinished flows (or packets not delivered), which
// rank worst: in JSON the number is null and "unfinished" (or "hi_unfinished") is
// true, with the reason.
type Estimate struct {
	Value  float64
	Lo     float64
	Hi     float64
	HasCI  bool
	Reason string
}

// Defined reports whether the estimate has a value (+Inf, Unfinished, is one).
func (e Estimate) Defined() bool { return !math.IsNaN(e.Value) }

// Unfinished reports whether the value is +Inf: a quantile among the unfinished.
func (e Estimate) Unfinished() bool { return math.IsInf(e.Value, 1) }

// estimateJSON is an Estimate in JSON.
type estimateJSON struct {
	Value        *float64 `json:"value"`
	Lo           *float64 `json:"lo,omitempty"`
	Hi           *float64 `json:"hi,omitempty"`
	Judged       *bool    `json:"judged,omitempty"`
	Unfinished   bool     `json:"unfinished,omitempty"`
	HiUnfinished bool     `json:"hi_unfinished,omitempty"`
	Reason       string   `json:"reason,omitempty"`
}

// MarshalJSON writes {"value", "lo", "hi"}, or a null value with judged false and
// the reason; an infinite value or bound is null and flagged unfinished.
func (e Estimate) MarshalJSON() ([]byte, error) {
	if !e.Defined() {
		f := false
		return json.Marshal(estimateJSON{Judged: &f, Reason: e.Reason})
	}
	num := func(v *float64) *float64 {
		if math.IsInf(*v, 0) {
			return nil
		}
		return v
	}
	c := estimateJSON{Value: num(&e.Value), Unfinished: e.Unfinished()}
	if e.Unfinished() {
		c.Reason = e.Reason
	}
	if e.HasCI {
		c.Lo, c.Hi, c.HiUnfinished = num(&e.Lo), num(&e.Hi), math.IsInf(e.Hi, 1)
	}
	return json.Marshal(c)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Estimate) UnmarshalJSON(b []byte) error {
	var c estimateJSON
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	*e = Estimate{Value: math.NaN(), Reason: c.Reason}
	switch {
	case c.Value != nil:
		e.Value = *c.Value
	case c.Unfinished:
		e.Value = math.Inf(1)
	}
	hi := c.Hi
	if c.HiUnfinished {
		inf := math.Inf(1)
		hi = &inf
	}
	if c.Lo != nil && hi != nil {
		e.Lo, e.Hi, e.HasCI = *c.Lo, *hi, true
	}
	return nil
}

func (e Estimate) String() string {
	f := func(v float64) string {
		if math.IsInf(v, 1) {
			return UnfinishedWord
		}
		return fmt.Sprintf("%.4g", v)
	}
	switch {
	case !e.Defined():
		return "-"
	case !e.HasCI:
		return f(e.Value)
	}
	return fmt.Sprintf("%s [%s, %s]", f(e.Value), f(e.Lo), f(e.Hi))
}

// Bootstrap resamples flows to put confidence intervals on statistics computed from
// flow rows (docs/analysis.md#comparisons).
//
// Resampling: the Poisson bootstrap. In each replicate every flow gets an independent
// weight w ~ Poisson(1) (how many times it is drawn), and the statistic is recomputed
// with those weights. For the thousands of flows of a trace this is equivalent to
// drawing n flows with replacement (the multinomial counts of the classic bootstrap
// tend to independent Poisson(1) counts; Hanley & MacGibbon 2006, Chamandy et al.
// 2012), and it lets each replicate be one pass over the flows.
//
// Interval: BCa, the bias-corrected and accelerated percentile interval (Efron 1987;
// Efron & Tibshirani, An Introduction to the Bootstrap, 1993, section 14.3; BCaCI).
// It corrects the percentile interval for the bias of the statistic under resampling
// (max/mean and CoV are biased upward: a resample that draws an elephant flow twice or
// not at all spreads the member loads) through z0, and for its skewness through the
// acceleration a, estimated by a grouped jackknife: JackknifeGroups groups of flows
// (flow i in group i mod G), each left out once. Its coverage is tested
// (TestBCaCoverage: nominal 95% intervals cover the true value of simulated samples
// at least 90% of the time).
//
// Undefined replicates: a replicate in which the statistic is undefined (NaN: a tier
// no resampled flow crossed, an entropy of 0) is left out, never scored 0; with no
// replicate left the estimate has no interval. An interval always contains its
// estimate (a BCa endpoint on the wrong side of it, possible when nearly every
// replicate lies on one side, is moved to the estimate) and its endpoints are
// replicate values, so it stays in the statistic's range.
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

// JackknifeGroups is the number of flow groups of the grouped jackknife that
// estimates the BCa acceleration (fewer flows: one flow per group).
const JackknifeGroups = 100

// poissonTable maps a uniform 16-bit value to a Poisson(1) count: entry u is the
// smallest k with u < 65536 P(Poisson(1) <= k), rounded, so the probabilities are
// exact to 2^-16 (the largest count drawn is 8, on one entry in 65,536; counts
// above 8, of probability 1.1e-6 together, are not drawn). One
// 64-bit draw gives four weights, each a single lookup: the bootstrap's weights cost
// less than its statistic.
var poissonTable = func() *[1 << 16]uint8 {
	d := distuv.Poisson{Lambda: 1}
	var t [1 << 16]uint8
	k := 0
	for u := range t {
		for k < 255 && float64(u) >= math.Round(d.CDF(float64(k))*(1<<16)) {
			k++
		}
		t[u] = uint8(k)
	}
	return &t
}()

// PoissonWeights fills w with independent Poisson(1) draws from r (four per 64-bit
// draw, see poissonTable).
func PoissonWeights(r *rand.Rand, w []float64) {
	i := 0
	for ; i+3 < len(w); i += 4 {
		u := r.Uint64()
		w[i], w[i+1] = float64(poissonTable[uint16(u)]), float64(poissonTable[uint16(u>>16)])
		w[i+2], w[i+3] = float64(poissonTable[uint16(u>>32)]), float64(poissonTable[uint16(u>>48)])
	}
	if i < len(w) {
		for u := r.Uint64(); i < len(w); i, u = i+1, u>>16 {
			w[i] = float64(poissonTable[uint16(u)])
		}
	}
}

// Replicates are a bootstrap's raw material: the point estimates, the replicate
// values (Values[r*Dim+k]: statistic k in replicate r) and the grouped-jackknife values
// (Jack[g*Dim+k]: statistic k without group g), NaN where undefined. Methods gives
// statistic k's interval method (IntervalMethod when nil or empty).
type Replicates struct {
	Dim     int
	Point   []float64
	Values  []float64
	Jack    []float64
	Level   float64
	Methods []string
}

// Run bootstraps a statistic of n flows with dim outputs. newStat is called once per
// worker and returns the statistic: given the flows' weights w (len n) it writes its
// dim values into out (NaN where undefined); it must treat w as read-only and may keep
// scratch state (it is never called concurrently with itself). It returns the point
// estimates (all weights 1) with their BCa intervals.
func (bs Bootstrap) Run(n, dim int, newStat func() func(w, out []float64)) []Estimate {
	return bs.RunReplicates(n, dim, newStat).Estimates()
}

// RunReplicates is Run returning the replicates. Two runs bootstrapped with the same
// Seed and B over the same flows in the same order share their weights replicate by
// replicate (paired), so differences of their replicates (Difference) bootstrap the
// difference of the statistics.
func (bs Bootstrap) RunReplicates(n, dim int, newStat func() func(w, out []float64)) *Replicates {
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
	groups := min(n, JackknifeGroups)
	rep := &Replicates{Dim: dim, Point: make([]float64, dim), Values: make([]float64, b*dim), Jack: make([]float64, groups*dim), Level: level}

	f := newStat()
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	f(w, rep.Point)
	for g := range groups { // the grouped jackknife: group g (flows i = g mod groups) left out
		for i := g; i < n; i += groups {
			w[i] = 0
		}
		f(w, rep.Jack[g*dim:(g+1)*dim])
		for i := g; i < n; i += groups {
			w[i] = 1
		}
	}

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
				f(w, rep.Values[r*dim:(r+1)*dim])
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
	return rep
}

// column returns statistic k's replicate and jackknife values.
func (r *Replicates) column(k int) (reps, jack []float64) {
	reps = make([]float64, len(r.Values)/r.Dim)
	for i := range reps {
		reps[i] = r.Values[i*r.Dim+k]
	}
	jack = make([]float64, len(r.Jack)/r.Dim)
	for i := range jack {
		jack[i] = r.Jack[i*r.Dim+k]
	}
	return reps, jack
}

func (r *Replicates) method(k int) string {
	if k < len(r.Methods) && r.Methods[k] != "" {
		return r.Methods[k]
	}
	return IntervalMethod
}

// Estimates returns every statistic's point estimate with its interval.
func (r *Replicates) Estimates() []Estimate {
	est := make([]Estimate, r.Dim)
	for k := range r.Dim {
		reps, jack := r.column(k)
		est[k] = intervalOf(r.method(k), r.Point[k], reps, jack, r.Level, true)
	}
	return est
}

// Difference returns the paired bootstrap of statistic k of r minus statistic k of o
// (bootstrapped with the same seed over the same flows): the difference of the point
// estimates with the interval (of statistic k's method) of the replicate by replicate
// differences; replicates where either is undefined are left out.
func (r *Replicates) Difference(o *Replicates, k int) Estimate {
	a, ja := r.column(k)
	b, jb := o.column(k)
	for i := range a {
		a[i] -= b[i]
	}
	for i := range ja {
		ja[i] -= jb[i]
	}
	return intervalOf(r.method(k), r.Point[k]-o.Point[k], a, ja, r.Level, false)
}

// intervalOf is the Estimate of point with its interval by method; capped caps a
// normal interval's upper end at 1 (the adjusted mutual information's maximum; not
// for a difference of two, which ranges wider).
func intervalOf(method string, point float64, reps, jack []float64, level float64, capped bool) Estimate {
	e := Estimate{Value: point}
	if !e.Defined() {
		return e
	}
	var lo, hi float64
	var ok bool
	switch method {
	case IntervalNone:
		return e
	case IntervalNormal:
		lo, hi, ok = NormalCI(reps, point, level)
		if capped {
			hi = min(hi, max(1, point)) // the adjusted mutual information is at most 1
		}
	default:
		lo, hi, ok = BCaCI(reps, jack, point, level)
	}
	if ok {
		e.Lo, e.Hi, e.HasCI = lo, hi, true
	}
	return e
}

// NormalCI is the normal interval of level around point with the bootstrap standard
// error: point -+ z sd(replicates), z = Phi^-1((1+level)/2); NaN replicates are left
// out, and ok is false with fewer than two.
func NormalCI(reps []float64, point, level float64) (lo, hi float64, ok bool) {
	s := finite(reps)
	if len(s) < 2 || math.IsNaN(point) {
		return math.NaN(), math.NaN(), false
	}
	half := distuv.UnitNormal.Quantile((1+level)/2) * stat.StdDev(s, nil)
	return point - half, point + half, true
}

// BCaCI is the BCa interval of level (e.g. 0.95) for an estimate point from its
// bootstrap replicates and its (grouped) jackknife values; NaN values of either are
// left out. With replicate values theta*_b, B of them, and jackknife values theta_(g)
// of mean m:
//
//	z0 = Phi^-1(p0), p0 = (#{theta*_b < point} + #{theta*_b = point}/2) / B, kept in [1/(2B), 1 - 1/(2B)]
//	a  = sum (m - theta_(g))^3 / (6 (sum (m - theta_(g))^2)^(3/2))   (0 without spread)
//	a1 = Phi(z0 + (z0 + z_lo) / (1 - a (z0 + z_lo))), z_lo = Phi^-1((1-level)/2); a2 the same with z_hi
//	[lo, hi] = the a1 and a2 quantiles of the replicates (stat.Quantile, Empirical)
//
// then moved to contain point. An infinite replicate (a quantile that falls among the
// unfinished flows in that resample) is a value above every finite one, so an end may
// be +Inf; the jackknife's infinite values are left out of the acceleration. ok is
// false without a replicate. It sorts
// reps in place.
func BCaCI(reps, jack []float64, point, level float64) (lo, hi float64, ok bool) {
	s := notNaN(reps) // an infinite replicate (a quantile among unfinished flows) is a value
	if len(s) == 0 || math.IsNaN(point) {
		return math.NaN(), math.NaN(), false
	}
	sort.Float64s(s)
	B := float64(len(s))
	var below, equal float64
	for _, v := range s {
		switch {
		case v < point:
			below++
		case v == point:
			equal++
		}
	}
	p0 := min(max((below+equal/2)/B, 1/(2*B)), 1-1/(2*B))
	z0 := distuv.UnitNormal.Quantile(p0)
	a := acceleration(finite(jack))
	adjust := func(alpha float64) float64 {
		z := distuv.UnitNormal.Quantile(alpha)
		d := 1 - a*(z0+z)
		if d <= 0 { // beyond the acceleration's reach: the extreme replicate
			if z < 0 {
				return 0
			}
			return 1
		}
		return distuv.UnitNormal.CDF(z0 + (z0+z)/d)
	}
	alpha := (1 - level) / 2
	lo = stat.Quantile(min(max(adjust(alpha), 0), 1), stat.Empirical, s, nil)
	hi = stat.Quantile(min(max(adjust(1-alpha), 0), 1), stat.Empirical, s, nil)
	return min(lo, point), max(hi, point), true
}

// acceleration is the BCa acceleration from jackknife values (0 with fewer than 3 or
// no spread).
func acceleration(jack []float64) float64 {
	if len(jack) < 3 {
		return 0
	}
	m := stat.Mean(jack, nil)
	// The ratio is scale-invariant: deviations are divided by the largest first, so
	// that statistics of tiny magnitude (a chi-square p-value of 1e-130) neither
	// underflow s2^1.5 to 0 (0/0) nor lose the acceleration.
	var scale float64
	for _, v := range jack {
		scale = max(scale, math.Abs(m-v))
	}
	if scale == 0 || math.IsInf(scale, 0) {
		return 0
	}
	var s2, s3 float64
	for _, v := range jack {
		d := (m - v) / scale
		s2 += d * d
		s3 += d * d * d
	}
	return s3 / (6 * math.Pow(s2, 1.5))
}

// notNaN returns the values of x that are not NaN, infinite ones included (a copy).
func notNaN(x []float64) []float64 {
	out := make([]float64, 0, len(x))
	for _, v := range x {
		if !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// finite returns the finite values of x (a copy).
func finite(x []float64) []float64 {
	out := make([]float64, 0, len(x))
	for _, v := range x {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out = append(out, v)
		}
	}
	return out
}
