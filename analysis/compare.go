package analysis

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// ErrNotComparable is returned when runs are not replays of the same trace.
var ErrNotComparable = errors.New("analysis: runs are not comparable")

// Metric names of a comparison (besides "imbalance.tiers.<tier>.<metric>" for each
// tier and TierMetricNames), with the summary key they correspond to.
const (
	MetricNMI          = "polarization.nmi"         // NMI of rack vs fabric member choices (CI)
	MetricNMIByRack    = "polarization.nmi_by_rack" // the same within each source rack (CI)
	MetricDrops        = "drops.total"              // dropped packets, from flow rows (CI)
	MetricLossless     = "drops.lossless"           // headroom drops (no CI: not per flow)
	MetricPausedPs     = "pfc.paused_ps"            // total pause time, ps (no CI: not per flow)
	MetricStorms       = "pfc.storms"               // number of storm episodes (no CI)
	MetricP99DelayPs   = "delay.p99_ps"             // packet p99 from delay.arrow, ps (no CI)
	MetricFlowP99Delay = "delay.flow_p99_ps"        // p99 of flow mean delays per packet, ps (CI)
)

// HigherIsBetter reports whether a larger value of the metric is better: Jain's index
// and the chi-square p-value (closer to uniform); for everything else lower is better.
func HigherIsBetter(metric string) bool {
	return strings.HasSuffix(metric, ".jain") || strings.HasSuffix(metric, ".chi2_p")
}

// MethodMetrics is one run's row of a comparison: its metrics by name.
type MethodMetrics struct {
	Method  string              `json:"method"`
	Dir     string              `json:"dir"`
	Flows   int                 `json:"flows"`
	Metrics map[string]Estimate `json:"metrics"`
}

// Best names the best method on one metric and how sure that is. Difference is the
// best value minus the runner-up's; for bootstrapped metrics its interval comes from
// the paired bootstrap (the same resampled flows in both runs, replicate by
// replicate), and Clear is set when that interval excludes 0 on the best method's side:
// the ranking is then unlikely to be an accident of which flows the trace happened to
// hold. Metrics without a CI are never Clear.
type Best struct {
	Method     string   `json:"method"`
	Value      float64  `json:"value"`
	Higher     bool     `json:"higher_is_better"`
	RunnerUp   string   `json:"runner_up,omitempty"`
	Difference Estimate `json:"difference"`
	Clear      bool     `json:"clear"`
}

// Comparison is the side-by-side of several runs of one trace (one per hash method).
type Comparison struct {
	Methods  []string                  `json:"methods"` // in the order of the runs
	Metrics  []string                  `json:"metrics"` // metric names in display order
	ByMethod map[string]*MethodMetrics `json:"by_method"`
	Best     map[string]Best           `json:"best"`
	B        int                       `json:"bootstrap"`
	Seed     uint64                    `json:"seed"`
	Level    float64                   `json:"level"`
	Headline []string                  `json:"headline"`

	reps     map[string][]float64 // per method, the bootstrap replicates
	repIndex map[string]int       // metric -> index in a replicate
	dim      int
}

// Compare compares runs of the same trace. Per run it bootstraps (see Bootstrap;
// opt.Bootstrap replicates, opt.Seed) the per-flow statistics of FlowTable.FlowStat
// (tier imbalance from the flows' member choices and bytes, polarization, drops, the
// flow-delay p99), and adds without CI the run-level numbers that flows cannot be
// resampled for (lossless drops, pause time, storms, the packet p99 from delay.arrow).
// Then it picks the best method per metric (see HigherIsBetter; ties go to the
// earlier run) and tests it against the runner-up with the paired bootstrap (Best).
//
// Runs are named by their hash method, or by their directory's base name when the
// method is unknown or repeated. Runs must replay the same trace: the same number of
// flows and of trace packets and, when Load filled FlowTable.Fingerprint, the same
// flows in the same order; else ErrNotComparable.
func Compare(runs []*Run, opt Options) (*Comparison, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("%w: no runs", ErrNotComparable)
	}
	opt = opt.withDefaults()
	for i, r := range runs {
		if r == nil {
			return nil, fmt.Errorf("run %d: %w", i, ErrNoRun)
		}
		if err := r.Flows.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Dir, err)
		}
		if i > 0 && runs[0].Flows.Fingerprint != 0 && r.Flows.Fingerprint != 0 && runs[0].Flows.Fingerprint != r.Flows.Fingerprint {
			return nil, fmt.Errorf("%w: %s and %s hold different flows (flow ids, packets or bytes differ): compare replays of one trace", ErrNotComparable, runs[0].Dir, r.Dir)
		}
		if i > 0 {
			a, b := runs[0], r
			if len(a.Flows.Flows) != len(b.Flows.Flows) || a.Info.TracePackets != b.Info.TracePackets {
				return nil, fmt.Errorf("%w: %s has %d flows from %d trace packets, %s has %d from %d (compare replays of one trace)",
					ErrNotComparable, a.Dir, len(a.Flows.Flows), a.Info.TracePackets, b.Dir, len(b.Flows.Flows), b.Info.TracePackets)
			}
		}
	}
	c := &Comparison{ByMethod: map[string]*MethodMetrics{}, Best: map[string]Best{}, B: opt.Bootstrap, Seed: opt.Seed, Level: 0.95}
	// Names.
	count := map[string]int{}
	for _, r := range runs {
		count[r.Info.Method]++
	}
	for _, r := range runs {
		name := r.Info.Method
		if name == "" || count[name] > 1 {
			name = filepath.Base(r.Dir)
		}
		if _, dup := c.ByMethod[name]; dup {
			return nil, fmt.Errorf("%w: two runs named %q", ErrNotComparable, name)
		}
		c.Methods = append(c.Methods, name)
		c.ByMethod[name] = nil
	}
	// Tiers over all runs, so every method has the same metrics.
	var tiers []records.Tier
	for _, r := range runs {
		for _, t := range r.Flows.Tiers() {
			if !slices.Contains(tiers, t) {
				tiers = append(tiers, t)
			}
		}
	}
	slices.Sort(tiers)
	names := FlowStatNames(tiers)
	for i, n := range names {
		if i < len(tiers)*len(TierMetricNames) {
			names[i] = "imbalance.tiers." + n
		}
	}
	c.Metrics = append(append([]string{}, names...), MetricLossless, MetricPausedPs, MetricStorms, MetricP99DelayPs)
	c.reps = map[string][]float64{}
	c.repIndex = map[string]int{}
	c.dim = len(names)
	for k, n := range names {
		c.repIndex[n] = k
	}

	for i, r := range runs {
		name := c.Methods[i]
		bs := Bootstrap{B: opt.Bootstrap, Seed: opt.Seed}
		if opt.Progress != nil {
			stage := "bootstrap " + name
			bs.Progress = func(done, total int) { opt.Progress(stage, done, total) }
		}
		est, reps := bs.RunReplicates(len(r.Flows.Flows), len(names), r.Flows.FlowStat(tiers))
		c.reps[name] = reps
		m := &MethodMetrics{Method: name, Dir: r.Dir, Flows: len(r.Flows.Flows), Metrics: map[string]Estimate{}}
		for k, n := range names {
			m.Metrics[n] = est[k].clamp(metricRange(n))
		}
		var paused int64
		for _, iv := range r.Intervals {
			paused += iv.DurationPs()
		}
		storms := 0
		for _, e := range r.Episodes {
			if e.Depth >= 2 || e.DurationPs >= opt.StormDurationPs {
				storms++
			}
		}
		m.Metrics[MetricLossless] = Estimate{Value: float64(r.Drops.Lossless)}
		m.Metrics[MetricPausedPs] = Estimate{Value: float64(paused)}
		m.Metrics[MetricStorms] = Estimate{Value: float64(storms)}
		m.Metrics[MetricP99DelayPs] = Estimate{Value: delaySummary(r.Delay).P99Ps}
		c.ByMethod[name] = m
	}
	for _, metric := range c.Metrics {
		c.Best[metric] = c.best(metric)
	}
	c.Headline = c.headline(tiers)
	return c, nil
}

func (c *Comparison) best(metric string) Best {
	higher := HigherIsBetter(metric)
	b := Best{Higher: higher}
	better := func(x, y float64) bool {
		if higher {
			return x > y
		}
		return x < y
	}
	bi, ri := -1, -1
	for i, m := range c.Methods {
		v := c.ByMethod[m].Metrics[metric].Value
		switch {
		case bi < 0 || better(v, c.ByMethod[c.Methods[bi]].Metrics[metric].Value):
			bi, ri = i, bi
		case ri < 0 || better(v, c.ByMethod[c.Methods[ri]].Metrics[metric].Value):
			ri = i
		}
	}
	be := c.ByMethod[c.Methods[bi]].Metrics[metric]
	b.Method, b.Value = c.Methods[bi], be.Value
	if ri < 0 {
		return b
	}
	b.RunnerUp = c.Methods[ri]
	re := c.ByMethod[b.RunnerUp].Metrics[metric]
	b.Difference = Estimate{Value: be.Value - re.Value}
	k, ok := c.repIndex[metric]
	if !ok || be.Value == re.Value {
		return b
	}
	rb, rr := c.reps[b.Method], c.reps[b.RunnerUp]
	d := make([]float64, len(rb)/c.dim)
	for r := range d {
		d[r] = rb[r*c.dim+k] - rr[r*c.dim+k]
	}
	b.Difference.Lo, b.Difference.Hi = BiasCorrectedCI(d, b.Difference.Value, c.Level)
	b.Difference.HasCI = true
	if higher {
		b.Clear = b.Difference.Lo > 0
	} else {
		b.Clear = b.Difference.Hi < 0
	}
	return b
}

func (c *Comparison) headline(tiers []records.Tier) []string {
	var h []string
	for i := len(tiers) - 1; i >= 0; i-- { // the highest tier first: it shows polarization
		key := "imbalance.tiers." + tiers[i].String() + ".max_mean"
		b := c.Best[key]
		h = append(h, fmt.Sprintf("Best hash for the %s tier's balance: %s (byte max/mean %s)%s.", tiers[i], b.Method, c.ByMethod[b.Method].Metrics[key], c.clearWord(b)))
	}
	b := c.Best[MetricNMI]
	worst := c.Methods[0]
	for _, m := range c.Methods {
		if c.ByMethod[m].Metrics[MetricNMI].Value > c.ByMethod[worst].Metrics[MetricNMI].Value {
			worst = m
		}
	}
	if len(c.Methods) > 1 {
		h = append(h, fmt.Sprintf("Least polarized: %s (NMI %s); most: %s (NMI %s).", b.Method, c.ByMethod[b.Method].Metrics[MetricNMI], worst, c.ByMethod[worst].Metrics[MetricNMI]))
	}
	b = c.Best[MetricDrops]
	if e := c.ByMethod[b.Method].Metrics[MetricDrops]; e.Value == 0 && c.allZero(MetricDrops) {
		h = append(h, "No method dropped a packet.")
	} else {
		h = append(h, fmt.Sprintf("Fewest drops: %s (%s)%s.", b.Method, fmtEstimate(MetricDrops, e), c.clearWord(b)))
	}
	return h
}

// allZero reports whether every method's value of metric is 0.
func (c *Comparison) allZero(metric string) bool {
	for _, m := range c.Methods {
		if c.ByMethod[m].Metrics[metric].Value != 0 {
			return false
		}
	}
	return true
}

// fmtEstimate formats an estimate for a sentence: counts (drops, storms) as whole
// numbers with thousands separators, times in a human unit, other metrics as
// Estimate.String does.
func fmtEstimate(metric string, e Estimate) string {
	var f func(float64) string
	switch {
	case metric == MetricDrops || metric == MetricLossless || metric == MetricStorms:
		f = func(v float64) string { return units.FormatCount(int64(math.Round(v))) }
	case strings.HasSuffix(metric, "_ps"):
		f = units.FormatPs
	default:
		return e.String()
	}
	if !e.HasCI {
		return f(e.Value)
	}
	return fmt.Sprintf("%s [%s, %s]", f(e.Value), f(e.Lo), f(e.Hi))
}

func (c *Comparison) clearWord(b Best) string {
	if b.RunnerUp == "" {
		return ""
	}
	if b.Difference.Value == 0 {
		return fmt.Sprintf(", tied with %s", b.RunnerUp)
	}
	if !b.Difference.HasCI {
		return fmt.Sprintf(", ahead of %s (no interval: not a per-flow quantity)", b.RunnerUp)
	}
	if b.Clear {
		return fmt.Sprintf(", clearly ahead of %s (paired 95%% interval of the difference %s)", b.RunnerUp, b.Difference)
	}
	return fmt.Sprintf(", not clearly ahead of %s (paired 95%% interval of the difference %s includes 0)", b.RunnerUp, b.Difference)
}

// Table returns the hash_comparison table: one row per method and metric with the
// value, the CI bounds (empty without one) and whether the method is best on it.
func (c *Comparison) Table() Table {
	t := Table{Name: "hash_comparison", Header: []string{"method", "metric", "value", "lo", "hi", "best"}}
	for _, m := range c.Methods {
		for _, metric := range c.Metrics {
			e := c.ByMethod[m].Metrics[metric]
			lo, hi := "", ""
			if e.HasCI {
				lo, hi = ff(e.Lo), ff(e.Hi)
			}
			best := "false"
			if c.Best[metric].Method == m {
				best = "true"
			}
			t.Rows = append(t.Rows, []string{m, metric, ff(e.Value), lo, hi, best})
		}
	}
	return t
}

// metricRange is the range a bootstrapped metric can take; the bias-corrected interval
// (BiasCorrectedCI) is clipped to it so it never reports impossible values such as a
// max/mean below 1.
func metricRange(name string) (lo, hi float64) {
	switch {
	case strings.HasSuffix(name, ".max_mean"):
		return 1, math.Inf(1)
	case strings.HasSuffix(name, ".jain"), strings.HasSuffix(name, ".idle_fraction"),
		strings.HasSuffix(name, ".chi2_p"), strings.HasPrefix(name, "polarization."):
		return 0, 1
	}
	return 0, math.Inf(1)
}

// clamp clips the interval (not the estimate) to [lo, hi].
func (e Estimate) clamp(lo, hi float64) Estimate {
	if e.HasCI {
		e.Lo = min(max(e.Lo, lo), hi)
		e.Hi = min(max(e.Hi, lo), hi)
	}
	return e
}
