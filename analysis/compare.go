package analysis

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tracefabric/tracefabric/internal/units"
)

// ErrNotComparable is returned when runs are not replays of the same trace.
var ErrNotComparable = errors.New("analysis: runs are not comparable")

// Run-level metric names of a comparison: numbers of a whole run that flows cannot be
// resampled for (no interval). Every metric name of a comparison is also the
// summary.json key of the same number for a run analysed alone.
const (
	MetricLossless  = "drops.lossless"  // headroom drops
	MetricPausedPs  = "pfc.paused_ps"   // total pause time, ps
	MetricStorms    = "pfc.storm_count" // storm episodes
	MetricECNMarked = "ecn.marked"      // CE marks at egress queues (ports.arrow)
	MetricP99Delay  = "delay.p99_ps"    // packet p99 one-way delay from delay.arrow, ps
	// MetricPauseIntervals counts the PFC pause intervals (docs/analysis.md#pause-intervals).
	MetricPauseIntervals = "pfc.pause_intervals"
)

// Direction is how a comparison ranks a metric.
type Direction int

const (
	LowerIsBetter  Direction = iota // imbalance, polarization, drops, pauses, marks, delays
	HigherIsBetter                  // Jain's index
	NotRanked                       // p-values: evidence against uniformity, reported, never ranked
)

// MetricDirection returns how a metric is ranked: chi-square p-values are not (a
// p-value is evidence against uniformity, not a score: methods are ranked on byte
// imbalance), nor is the plain NMI (kept for reference; AMI ranks polarization);
// Jain's index and the share of completed flows are higher-is-better, everything else
// lower-is-better.
func MetricDirection(metric string) Direction {
	switch {
	case strings.HasSuffix(metric, ".chi2_p"), metric == MetricNMI, metric == MetricNMIByRack:
		return NotRanked
	case strings.HasSuffix(metric, ".jain"), metric == MetricCompleteFraction:
		return HigherIsBetter
	}
	return LowerIsBetter
}

// MetricUnit is the unit of a metric's values: "ps", "packets", "episodes",
// "fraction" (of 1), or "" for dimensionless ratios and indices.
func MetricUnit(metric string) string {
	switch {
	case strings.HasSuffix(metric, "_ps"):
		return "ps"
	case metric == MetricDrops || metric == MetricLossless || metric == MetricDeliveredCE || metric == MetricECNMarked:
		return "packets"
	case metric == MetricStorms:
		return "episodes"
	case metric == MetricPauseIntervals:
		return "intervals"
	case strings.HasSuffix(metric, "_fraction"):
		return "fraction"
	}
	return ""
}

// MethodMetrics is one run's row of a comparison: its metrics by name, what the run
// was (RunTraits), its flow completion (FCT: the slowdown per transport and size
// bucket, as a single run's summary has it) and, for a closed-loop run, its transport
// summary.
type MethodMetrics struct {
	Method     string              `json:"method"`
	Dir        string              `json:"dir"`
	Flows      int                 `json:"flows"`
	Traits     RunTraits           `json:"run"`
	Metrics    map[string]Estimate `json:"metrics"`
	FCT        FCTSummary          `json:"fct"`
	ClosedLoop *TransportSummary   `json:"-"`
}

// RunTraits is what a comparison tells runs of one trace apart by: the hash method,
// the transport mode (open or closed), the load balancing and the speedup.
type RunTraits struct {
	Hash      string  `json:"hash_method"`
	Transport string  `json:"transport"`
	LB        string  `json:"lb"`
	Speedup   float64 `json:"speedup"`
}

func traitsOf(r *Run) RunTraits {
	return RunTraits{Hash: r.Info.Method, Transport: r.Info.Transport, LB: r.Info.Options.LB, Speedup: r.Info.Options.Speedup}
}

// Names of the traits, as Comparison.Differs lists them.
const (
	TraitHash      = "hash method"
	TraitTransport = "transport"
	TraitLB        = "load balancing"
	TraitSpeedup   = "speedup"
	TraitSeed      = "seed"
	// Other replay options and configuration attributes are listed by their
	// run.json key or dotted path (max_idle_ns, Switch.BufferSize).
)

// Best says which method is best on one metric and how sure that is.
//
// Ranked is false for a metric that is not ranked (MetricDirection). Tie is set when
// two or more methods share the best value (Tied lists them): no method is best. With
// a unique best, Difference is its value minus the runner-up's; for per-flow metrics
// its interval is the paired bootstrap's (the same resampled flows in both runs,
// replicate by replicate, BCa). Significant is set when that interval excludes 0: the
// ranking is then unlikely to be an accident of which flows the trace happened to
// hold. Practical is set when the difference is at least Threshold, the metric's
// practical threshold (PracticalThreshold: 5% of the runner-up's value for ratios,
// times and slowdowns, with a floor for counts; an absolute step for fractions and
// AMI). Clear is both: "clearly ahead"; significant alone is "statistically ahead".
// Run-level metrics have no interval and are never Significant or Clear. Method is ""
// (null in JSON) when no method is best: a tie, an unranked metric or no defined
// value.
type Best struct {
	Method     string   `json:"method"`
	Ranked     bool     `json:"ranked"`
	Tie        bool     `json:"tie"`
	Tied       []string `json:"tied,omitempty"`
	Value      float64  `json:"value"`
	Higher     bool     `json:"higher_is_better"`
	RunnerUp   string   `json:"runner_up,omitempty"`
	Difference Estimate `json:"difference"`
	// Significant: the difference's interval excludes 0; Practical: the difference
	// is at least Threshold; Clear: both.
	Significant bool    `json:"significant"`
	Threshold   float64 `json:"threshold"`
	Practical   bool    `json:"practical"`
	Clear       bool    `json:"clear"`
}

// MarshalJSON writes a missing best method as null.
func (b Best) MarshalJSON() ([]byte, error) {
	o := bestJSON{Ranked: b.Ranked, Tie: b.Tie, Tied: b.Tied, Value: b.Value, Higher: b.Higher,
		RunnerUp: b.RunnerUp, Difference: b.Difference, Significant: b.Significant, Threshold: b.Threshold, Practical: b.Practical, Clear: b.Clear}
	if b.Method != "" {
		o.Method = &b.Method
	}
	return marshalNullNaN(o)
}

type bestJSON struct {
	Method      *string  `json:"method"`
	Ranked      bool     `json:"ranked"`
	Tie         bool     `json:"tie"`
	Tied        []string `json:"tied,omitempty"`
	Value       float64  `json:"value"`
	Higher      bool     `json:"higher_is_better"`
	RunnerUp    string   `json:"runner_up,omitempty"`
	Difference  Estimate `json:"difference"`
	Significant bool     `json:"significant"`
	Threshold   float64  `json:"threshold"`
	Practical   bool     `json:"practical"`
	Clear       bool     `json:"clear"`
}

// Comparison is the side-by-side of several runs of one trace (one per hash method,
// transport, ...). By says what the run names are (NamedBy*), Differs which traits
// (Trait*) differ between the runs.
type Comparison struct {
	Methods  []string                  `json:"methods"` // in the order of the runs
	By       string                    `json:"named_by"`
	Differs  []string                  `json:"differs"`
	Metrics  []string                  `json:"metrics"` // metric names in display order
	ByMethod map[string]*MethodMetrics `json:"by_method"`
	Best     map[string]Best           `json:"best"`
	B        int                       `json:"bootstrap"`
	Seed     uint64                    `json:"seed"`
	Level    float64                   `json:"level"`
	Interval string                    `json:"interval"` // IntervalMethod, the default
	// IntervalBy names the metrics whose interval is not Interval: the polarization
	// measures' (IntervalOf) and the run-level metrics' (IntervalNone).
	IntervalBy map[string]string `json:"interval_by_metric"`
	Headline   []string          `json:"headline"`
	// Events compares the runs' imbalance after each event that changed sets, when
	// the runs replayed the same events (EventImbalance); absent otherwise.
	Events []EventImbalance `json:"events,omitempty"`

	reps     map[string]*Replicates // per method
	repIndex map[string]int         // metric -> index in a replicate
}

// Compare compares runs of the same trace (docs/analysis.md#comparisons). Per run it
// bootstraps (see Bootstrap; opt.Bootstrap replicates, opt.Seed) the per-flow
// statistics of FlowTable.FlowStat: the tiers' imbalance from the measured member
// loads (the loadbalance.arrow frame bytes and flows the single-run summary uses, so
// a run's numbers are the same alone or compared), polarization, drops, CE-marked
// deliveries and the flow mean-delay p99; and it adds without interval the run-level
// numbers that flows cannot be resampled for (lossless drops, pause time, storms, CE
// marks at queues, the packet p99 from delay.arrow). Then it finds the best method per
// ranked metric and tests it against the runner-up with the paired bootstrap (Best).
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
	if err := comparable(runs); err != nil {
		return nil, err
	}
	c := &Comparison{ByMethod: map[string]*MethodMetrics{}, Best: map[string]Best{}, B: opt.Bootstrap, Seed: opt.Seed, Level: 0.95,
		Interval: IntervalMethod, reps: map[string]*Replicates{}, repIndex: map[string]int{}}
	var err error
	if c.Methods, c.By, c.Differs, err = runNames(runs); err != nil {
		return nil, err
	}
	// Tiers over all runs, so every method has the same metrics.
	var tiers []Role
	level := map[Role]int{}
	for _, r := range runs {
		for t, l := range r.Flows.TierLevels() {
			if !slices.Contains(tiers, t) {
				tiers = append(tiers, t)
				level[t] = l
			}
		}
	}
	sortRoles(tiers, func(t Role) int { return level[t] })
	names := FlowStatNames(tiers)
	c.Metrics = append(append([]string{}, names...), MetricLossless, MetricPauseIntervals, MetricPausedPs, MetricStorms, MetricECNMarked, MetricP99Delay)
	for k, n := range names {
		c.repIndex[n] = k
	}
	c.IntervalBy = map[string]string{}
	for _, m := range c.Metrics {
		switch _, resampled := c.repIndex[m]; {
		case !resampled:
			c.IntervalBy[m] = IntervalNone
		case IntervalOf(m) != c.Interval:
			c.IntervalBy[m] = IntervalOf(m)
		}
	}
	for i, r := range runs {
		name := c.Methods[i]
		bs := Bootstrap{B: opt.Bootstrap, Seed: opt.Seed}
		if opt.Progress != nil {
			stage := "bootstrap " + name
			bs.Progress = func(done, total int) { opt.Progress(stage, done, total) }
		}
		rep := bs.RunReplicates(len(r.Flows.Flows), len(names), r.Flows.FlowStat(tiers))
		rep.Methods = intervalMethods(names)
		c.reps[name] = rep
		m := &MethodMetrics{Method: name, Dir: r.Dir, Flows: len(r.Flows.Flows), Traits: traitsOf(r), Metrics: map[string]Estimate{},
			FCT: r.Flows.FCT(r.Info.MTUBytes, r.Info.Topology.BDPBytes), ClosedLoop: r.ClosedLoop.Summary()}
		why := undefinedReasons(r, tiers)
		for k, e := range rep.Estimates() {
			switch {
			case !e.Defined():
				e.Reason = why[names[k]]
			case e.Unfinished():
				e.Reason = unfinishedReason(names[k], m.FCT)
			}
			m.Metrics[names[k]] = e
		}
		for metric, v := range runLevel(r, opt) {
			m.Metrics[metric] = v
		}
		c.ByMethod[name] = m
	}
	for _, metric := range c.Metrics {
		c.Best[metric] = c.best(metric)
	}
	c.Headline = c.headline(tiers)
	c.Events = c.eventImbalances(runs, tiers, opt)
	return c, nil
}

// comparable checks that runs replay one trace: the same number of flows and of trace
// packets, and the same flows (FlowFingerprint: ids and 5-tuples always; first
// packet times when the runs' timing options agree; sizes when their transport modes
// agree).
func comparable(runs []*Run) error {
	for i, r := range runs {
		if r == nil {
			return fmt.Errorf("run %d: %w", i, ErrNoRun)
		}
		if err := r.Flows.Validate(); err != nil {
			return fmt.Errorf("%s: %w", r.Dir, err)
		}
		if i == 0 {
			continue
		}
		a := runs[0]
		if len(a.Flows.Flows) != len(r.Flows.Flows) || a.Info.TracePackets != r.Info.TracePackets {
			return fmt.Errorf("%w: %s has %d flows from %d trace packets, %s has %d from %d (compare replays of one trace)",
				ErrNotComparable, a.Dir, len(a.Flows.Flows), a.Info.TracePackets, r.Dir, len(r.Flows.Flows), r.Info.TracePackets)
		}
		fa, fr := a.Flows.Fingerprint, r.Flows.Fingerprint
		if fa == (FlowFingerprint{}) || fr == (FlowFingerprint{}) {
			continue
		}
		oa, or := a.Info.Options, r.Info.Options
		sameTiming := oa.Speedup == or.Speedup && oa.MaxIdleNs == or.MaxIdleNs && oa.WindowStartNs == or.WindowStartNs &&
			oa.WindowAbsolute == or.WindowAbsolute && oa.WindowNs == or.WindowNs
		switch {
		case fa.Tuple != fr.Tuple:
			return fmt.Errorf("%w: %s and %s hold different flows (flow ids or 5-tuples differ): compare replays of one trace", ErrNotComparable, a.Dir, r.Dir)
		case sameTiming && fa.Start != fr.Start:
			return fmt.Errorf("%w: %s and %s hold the same flows starting at other times (first_ps differs with the same speedup, idle gaps and window): compare replays of one trace", ErrNotComparable, a.Dir, r.Dir)
		case a.Info.Transport == r.Info.Transport && fa.Size != fr.Size:
			return fmt.Errorf("%w: %s and %s hold the same flows with other sizes (size_bytes differs): compare replays of one trace", ErrNotComparable, a.Dir, r.Dir)
		}
	}
	return nil
}

// What a comparison's run names are (Comparison.By).
const (
	NamedByHash      = "hash method"
	NamedByTransport = "transport"
	// NamedByTraits: each run is named by the values that differ, "lb=flowlet",
	// "hash=crc16, speedup=4" (see runDiffs).
	NamedByTraits = "what differs"
	NamedByDir    = "run directory"
)

// runDiff is one thing that differs between the runs of a comparison: its key in a
// run's name, its name in Comparison.Differs and each run's value.
type runDiff struct {
	key, trait string
	values     []string
}

// runDiffs returns what differs between the runs, in this order: the hash method
// (key hash), transport, load balancing (lb), speedup, the seed, then any other
// replay option (run.json options, by its key: max_idle_ns, hosts, ...; the traces
// left out) and any configuration attribute (run.json config, by its dotted path:
// Switch.BufferSize, Switch.Pools[1].Size), each in name order. A configuration
// attribute that a trait above already covers (Switch.EcmpHashMethod,
// Switch.LoadBalancingMethod, Transport.Mode, Seed) is not repeated.
func runDiffs(runs []*Run) []runDiff {
	var out []runDiff
	add := func(key, trait string, value func(i int) string) {
		d := runDiff{key: key, trait: trait}
		for i := range runs {
			v := value(i)
			if v == "" {
				v = "unset" // an option an older run does not record
			}
			d.values = append(d.values, v)
		}
		for _, v := range d.values[1:] {
			if v != d.values[0] {
				out = append(out, d)
				return
			}
		}
	}
	info := func(i int) *RunInfo { return &runs[i].Info }
	add("hash", TraitHash, func(i int) string { return info(i).Method })
	add("transport", TraitTransport, func(i int) string { return info(i).Transport })
	add("lb", TraitLB, func(i int) string { return info(i).Options.LB })
	add("speedup", TraitSpeedup, func(i int) string { return strconv.FormatFloat(info(i).Options.Speedup, 'g', -1, 64) })
	add("seed", TraitSeed, func(i int) string { return strconv.FormatUint(info(i).Seed, 10) })
	covered := map[string]bool{"traces": true, "speedup": true, "lb": true, "hash": true,
		"Seed": true, "Switch.EcmpHashMethod": true, "Switch.LoadBalancingMethod": true, "Transport.Mode": true}
	for _, part := range []func(r *Run) json.RawMessage{
		func(r *Run) json.RawMessage { b, _ := json.Marshal(r.Info.Options); return b },
		func(r *Run) json.RawMessage { return r.Info.Config },
	} {
		flat := make([]map[string]string, len(runs))
		keys := map[string]bool{}
		for i, r := range runs {
			flat[i] = map[string]string{}
			var v any
			if json.Unmarshal(part(r), &v) == nil {
				flattenJSON("", v, flat[i])
			}
			for k := range flat[i] {
				keys[k] = true
			}
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if covered[k] {
				continue
			}
			add(k, k, func(i int) string { return flat[i][k] })
		}
	}
	return out
}

// flattenJSON puts the leaves of a decoded JSON value into out under dotted paths
// (objects) and [i] indexes (arrays of objects), as --set spells attributes: a scalar
// as its text (strings unquoted), an array of scalars or null as compact JSON.
func flattenJSON(path string, v any, out map[string]string) {
	if path == "Events" { // one trait: the runs' event lists, each event in a few words
		out[path] = eventsText(v)
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flattenJSON(p, e, out)
		}
		return
	case []any:
		if slices.ContainsFunc(x, func(e any) bool { _, obj := e.(map[string]any); return obj }) {
			for i, e := range x {
				flattenJSON(fmt.Sprintf("%s[%d]", path, i), e, out)
			}
			return
		}
	case string:
		out[path] = x
		return
	}
	b, _ := json.Marshal(v)
	out[path] = string(b)
}

// runNames names runs by what differs between them (runDiffs): by their hash method
// alone ("crc16") when it is the only difference, by their transport alone ("open",
// "closed") when that is, otherwise by every value that differs ("lb=flowlet";
// "hash=crc16, speedup=4"); when nothing differs, or such names repeat, by their
// directory's base name. It also returns what the names are and the traits that
// differ.
func runNames(runs []*Run) (names []string, by string, differs []string, err error) {
	diffs := runDiffs(runs)
	differs = []string{}
	for _, d := range diffs {
		differs = append(differs, d.trait)
	}
	name := func(i int) string {
		var kv []string
		for _, d := range diffs {
			kv = append(kv, d.key+"="+d.values[i])
		}
		return strings.Join(kv, ", ")
	}
	by = NamedByTraits
	switch {
	case len(diffs) == 0:
		by = NamedByDir
	case len(diffs) == 1 && diffs[0].trait == TraitHash:
		name, by = func(i int) string { return diffs[0].values[i] }, NamedByHash
	case len(diffs) == 1 && diffs[0].trait == TraitTransport:
		name, by = func(i int) string { return diffs[0].values[i] }, NamedByTransport
	}
	if by != NamedByDir {
		seen := map[string]bool{}
		for i := range runs {
			n := name(i)
			if n == "" || seen[n] {
				by = NamedByDir
				break
			}
			seen[n] = true
		}
	}
	if by == NamedByDir {
		name = func(i int) string { return filepath.Base(runs[i].Dir) }
	}
	for i := range runs {
		n := name(i)
		if slices.Contains(names, n) {
			return nil, "", nil, fmt.Errorf("%w: two runs named %q", ErrNotComparable, n)
		}
		names = append(names, n)
	}
	return names, by, differs, nil
}

// undefinedReasons says, per per-flow metric, why a run's value can be undefined.
func undefinedReasons(r *Run, tiers []Role) map[string]string {
	why := map[string]string{}
	imb := ImbalanceOf(r.Sets, r.Nodes)
	for _, t := range tiers {
		reason := fmt.Sprintf("no equal-cost set at the %s tier", t)
		if ti := imb.Tiers[t]; ti != nil {
			reason = ti.Reason
		}
		for _, m := range TierMetricNames {
			why[TierMetric(t, m)] = reason
		}
	}
	pol := r.Flows.Polarization()
	for _, m := range []string{MetricAMI, MetricAMIByRack, MetricNMI, MetricNMIByRack} {
		why[m] = pol.Reason
	}
	why[MetricAMIByRack] = firstNonEmpty(pol.Reason, "no source rack with a defined measure")
	why[MetricNMIByRack] = why[MetricAMIByRack]
	why[MetricCEFraction] = "no packet was delivered"
	why[MetricFlowMeanP99] = "no packet was delivered"
	why[MetricSlowdownP50] = NoFlowWithData
	why[MetricSlowdownP99] = NoFlowWithData
	why[MetricCompleteFraction] = NoFlowWithData
	return why
}

// unfinishedReason says why a flow quantile is unfinished (+Inf): the share of flows
// that did not complete reaches past it.
func unfinishedReason(metric string, f FCTSummary) string {
	q := "median"
	if strings.HasSuffix(metric, "p99") || strings.HasSuffix(metric, "p99_ps") {
		q = "99th percentile"
	}
	return fmt.Sprintf("the %s falls among the unfinished flows, which rank slowest: %s of the %s flows with data did not complete",
		q, units.FormatFraction(1-f.CompleteFraction), units.FormatCount(f.Flows))
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// runLevel returns a run's run-level metrics (no interval), as Analyze computes them.
func runLevel(r *Run, opt Options) map[string]Estimate {
	var paused int64
	for _, iv := range r.Intervals {
		paused += iv.DurationPs()
	}
	intervals := float64(len(r.Intervals))
	storms := 0
	for _, e := range r.Episodes {
		if e.Depth >= 2 || e.DurationPs >= opt.StormDurationPs {
			storms++
		}
	}
	var marked int64
	for _, q := range r.Queues {
		marked += q.ECNMarked
	}
	p99 := Estimate{Value: packetDelayP99(r)}
	switch {
	case math.IsNaN(p99.Value):
		p99.Reason = "no packet was delivered"
	case math.IsInf(p99.Value, 1):
		p99.Reason = fmt.Sprintf("the 99th percentile falls among the packets not delivered, which rank slowest: %s of the %s injected",
			units.FormatFraction(float64(r.Info.Injected-r.Info.Delivered)/float64(r.Info.Injected)), units.FormatCount(r.Info.Injected))
	}
	return map[string]Estimate{
		MetricLossless:       {Value: float64(r.Drops.Lossless)},
		MetricPauseIntervals: {Value: intervals},
		MetricPausedPs:       {Value: float64(paused)},
		MetricStorms:         {Value: float64(storms)},
		MetricECNMarked:      {Value: float64(marked)},
		MetricP99Delay:       p99,
	}
}

func (c *Comparison) best(metric string) Best {
	dir := MetricDirection(metric)
	b := Best{Ranked: dir != NotRanked, Higher: dir == HigherIsBetter, Value: math.NaN(), Difference: Estimate{Value: math.NaN()}}
	if !b.Ranked {
		return b
	}
	better := func(x, y float64) bool {
		if b.Higher {
			return x > y
		}
		return x < y
	}
	var defined []string
	for _, m := range c.Methods {
		if c.ByMethod[m].Metrics[metric].Defined() {
			defined = append(defined, m)
		}
	}
	if len(defined) == 0 {
		return b
	}
	val := func(m string) float64 { return c.ByMethod[m].Metrics[metric].Value }
	bestV := val(defined[0])
	for _, m := range defined[1:] {
		if better(val(m), bestV) {
			bestV = val(m)
		}
	}
	b.Value = bestV
	for _, m := range defined {
		if val(m) == bestV {
			b.Tied = append(b.Tied, m)
		}
	}
	if len(b.Tied) > 1 {
		b.Tie = true
		return b
	}
	b.Method, b.Tied = b.Tied[0], nil
	for _, m := range defined {
		if m != b.Method && (b.RunnerUp == "" || better(val(m), val(b.RunnerUp))) {
			b.RunnerUp = m
		}
	}
	if b.RunnerUp == "" {
		return b
	}
	b.Difference = c.difference(metric, b.Method, b.RunnerUp)
	if b.Difference.HasCI {
		if b.Higher {
			b.Significant = b.Difference.Lo > 0
		} else {
			b.Significant = b.Difference.Hi < 0
		}
	}
	b.Threshold, _ = PracticalThreshold(metric, val(b.RunnerUp))
	b.Practical = math.Abs(b.Difference.Value) >= b.Threshold
	b.Clear = b.Significant && b.Practical
	return b
}

// Practical thresholds (docs/analysis.md#best-method-per-metric): the smallest
// difference between the best run and the runner-up that counts as a difference in
// practice, besides being unlikely to be chance.
const (
	PracticalRelative = 0.05 // ratios, times, slowdowns, counts: 5% of the runner-up's value
	PracticalFraction = 0.01 // shares (idle members, CE-marked deliveries): one percentage point
	PracticalAMI      = 0.05 // the adjusted mutual information (0 independent, 1 determined)
	PracticalCoV      = 0.01 // CoV: also at least 0.01 (two near-perfect spreads are alike)
	PracticalPackets  = 10   // packet counts: also at least 10 packets
	PracticalEvents   = 10   // pause intervals: also at least 10
	PracticalStorms   = 1    // storms: also at least one
)

// PracticalThreshold returns the practical threshold of a metric whose runner-up has
// value runnerUp, and the rule in words: an absolute step for fractions
// (PracticalFraction) and the AMIs (PracticalAMI); otherwise PracticalRelative of
// the runner-up's value, at least PracticalCoV for a CoV and at least a floor for
// counts (PracticalPackets, PracticalEvents, PracticalStorms).
func PracticalThreshold(metric string, runnerUp float64) (float64, string) {
	rel := PracticalRelative * math.Abs(runnerUp)
	if math.IsInf(rel, 0) || math.IsNaN(rel) {
		rel = 0 // an unfinished runner-up: any finite best is ahead by infinitely much
	}
	pct := fmt.Sprintf("%g%% of the runner-up's value", 100*PracticalRelative)
	switch {
	case MetricUnit(metric) == "fraction":
		return PracticalFraction, "1 percentage point"
	case metric == MetricAMI || metric == MetricAMIByRack:
		return PracticalAMI, fmt.Sprintf("an AMI of %g", PracticalAMI)
	case strings.HasSuffix(metric, ".cov"):
		return max(rel, PracticalCoV), fmt.Sprintf("%s and %g", pct, PracticalCoV)
	case MetricUnit(metric) == "packets":
		return max(rel, PracticalPackets), fmt.Sprintf("%s and %d packets", pct, PracticalPackets)
	case MetricUnit(metric) == "intervals":
		return max(rel, PracticalEvents), fmt.Sprintf("%s and %d intervals", pct, PracticalEvents)
	case MetricUnit(metric) == "episodes":
		return max(rel, PracticalStorms), fmt.Sprintf("%s and %d storm", pct, PracticalStorms)
	}
	return rel, pct
}

// difference is metric of method a minus method b, with the paired bootstrap's BCa
// interval for per-flow metrics.
func (c *Comparison) difference(metric, a, b string) Estimate {
	ea, eb := c.ByMethod[a].Metrics[metric], c.ByMethod[b].Metrics[metric]
	k, ok := c.repIndex[metric]
	if !ok {
		return Estimate{Value: ea.Value - eb.Value}
	}
	return c.reps[a].Difference(c.reps[b], k)
}

func (c *Comparison) headline(tiers []Role) []string {
	var h []string
	for i := len(tiers) - 1; i >= 0; i-- { // the highest tier first: it shows polarization
		key := TierMetric(tiers[i], "max_mean")
		b := c.Best[key]
		switch {
		case b.Tie && len(b.Tied) == len(c.Methods):
			h = append(h, fmt.Sprintf("The %s tier's balance is a tie: every %s's byte max/mean is %s.", tiers[i], c.Noun(), units.FormatFloat(b.Value)))
		case b.Tie:
			h = append(h, fmt.Sprintf("The %s tier's balance: %s tie for the best byte max/mean (%s).", tiers[i], strings.Join(b.Tied, ", "), units.FormatFloat(b.Value)))
		case b.Method == "":
			h = append(h, fmt.Sprintf("The %s tier's balance is not judged: %s.", tiers[i], c.ByMethod[c.Methods[0]].Metrics[key].Reason))
		case c.By == NamedByHash:
			h = append(h, fmt.Sprintf("Best hash for the %s tier's balance: %s (byte max/mean %s)%s.", tiers[i], b.Method, c.ByMethod[b.Method].Metrics[key], c.clearWord(key, b)))
		default:
			h = append(h, fmt.Sprintf("Best balance at the %s tier: %s (byte max/mean %s)%s.", tiers[i], b.Method, c.ByMethod[b.Method].Metrics[key], c.clearWord(key, b)))
		}
	}
	if len(c.Methods) > 1 {
		h = append(h, c.polarizationLine())
	}
	b := c.Best[MetricDrops]
	switch {
	case b.Tie && len(b.Tied) == len(c.Methods) && b.Value == 0:
		h = append(h, fmt.Sprintf("No %s dropped a packet.", c.Noun()))
	case b.Tie && len(b.Tied) == len(c.Methods):
		h = append(h, fmt.Sprintf("Every %s dropped %s packets.", c.Noun(), units.FormatCount(int64(b.Value))))
	case b.Tie:
		h = append(h, fmt.Sprintf("Fewest drops: %s tie (%s packets).", strings.Join(b.Tied, ", "), units.FormatCount(int64(b.Value))))
	case b.Method != "":
		h = append(h, fmt.Sprintf("Fewest drops: %s (%s)%s.", b.Method, FormatEstimate(MetricDrops, c.ByMethod[b.Method].Metrics[MetricDrops]), c.clearWord(MetricDrops, b)))
	}
	b = c.Best[MetricSlowdownP99]
	switch {
	case b.Tie && math.IsInf(b.Value, 1):
		h = append(h, fmt.Sprintf("FCT slowdown p99: %s tie: the 99th percentile falls among the unfinished flows of each (unfinished flows rank slowest).", strings.Join(b.Tied, ", ")))
	case b.Tie:
		h = append(h, fmt.Sprintf("FCT slowdown p99: %s tie (%s).", strings.Join(b.Tied, ", "), FormatSlowdown(b.Value)))
	case b.Method != "":
		h = append(h, fmt.Sprintf("Lowest FCT slowdown p99 (unfinished flows rank slowest): %s (%s)%s.", b.Method, c.ByMethod[b.Method].Metrics[MetricSlowdownP99], c.clearWord(MetricSlowdownP99, b)))
	}
	if b = c.Best[MetricCompleteFraction]; b.Method != "" {
		h = append(h, fmt.Sprintf("Most flows completed: %s (%s)%s.", b.Method, FormatEstimate(MetricCompleteFraction, c.ByMethod[b.Method].Metrics[MetricCompleteFraction]), c.clearWord(MetricCompleteFraction, b)))
	}
	return h
}

// Title is the comparison's title: what its runs differ in ("Hash methods
// compared", "Open and closed loop compared", "Runs compared by load balancing and
// speedup", "Runs compared" when nothing recorded differs).
func (c *Comparison) Title() string {
	switch c.By {
	case NamedByHash:
		return "Hash methods compared"
	case NamedByTransport:
		return "Open and closed loop compared"
	case NamedByTraits:
		return "Runs compared by " + andList(c.Differs)
	}
	return "Runs compared"
}

// Noun is what the comparison calls one of its runs: "method" when they are named by
// hash method, else "run".
func (c *Comparison) Noun() string {
	if c.By == NamedByHash {
		return "method"
	}
	return "run"
}

// polarizationLine names the least and the most polarized methods by AMI, the most
// only when the paired interval of its difference with the least excludes 0.
func (c *Comparison) polarizationLine() string {
	b := c.Best[MetricAMI]
	ami := func(m string) Estimate { return c.ByMethod[m].Metrics[MetricAMI] }
	switch {
	case b.Method == "" && !b.Tie:
		return fmt.Sprintf("Polarization is not judged: %s.", ami(c.Methods[0]).Reason)
	case b.Tie:
		return fmt.Sprintf("Polarization (AMI) ties: %s at %s.", strings.Join(b.Tied, ", "), units.FormatFloat(b.Value))
	}
	line := fmt.Sprintf("Least polarized: %s (AMI %s)%s.", b.Method, ami(b.Method), c.clearWord(MetricAMI, b))
	worst := b.Method
	for _, m := range c.Methods {
		if ami(m).Defined() && ami(m).Value > ami(worst).Value {
			worst = m
		}
	}
	if worst == b.Method {
		return line
	}
	var most []string // every method at the highest AMI
	for _, m := range c.Methods {
		if ami(m).Defined() && ami(m).Value == ami(worst).Value {
			most = append(most, m)
		}
	}
	d := c.difference(MetricAMI, worst, b.Method)
	method := IntervalOf(MetricAMI)
	if d.HasCI && d.Lo > 0 && d.Value >= PracticalAMI {
		return line + fmt.Sprintf(" Most polarized: %s (AMI %s; the paired 95%% %s interval of the difference with %s, %s, excludes 0).", strings.Join(most, ", "), ami(worst), method, b.Method, d)
	}
	if d.HasCI && d.Lo > 0 {
		return line + fmt.Sprintf(" No "+c.Noun()+" is clearly the most polarized: %s reads highest (AMI %s; the paired 95%% %s interval of the difference with %s, %s, excludes 0, but a practical difference is an AMI of at least %g).", strings.Join(most, ", "), ami(worst), method, b.Method, d, PracticalAMI)
	}
	return line + fmt.Sprintf(" No "+c.Noun()+" is clearly the most polarized: %s reads highest (AMI %s) but the paired 95%% %s interval of the difference with %s, %s, includes 0.", strings.Join(most, ", "), ami(worst), method, b.Method, d)
}

// FormatEstimate formats an estimate for a sentence: counts (drops, storms, marks) as
// whole numbers with thousands separators, times in a human unit, fractions in %,
// other metrics as Estimate.String does; "-" when undefined.
func FormatEstimate(metric string, e Estimate) string {
	var f func(float64) string
	switch MetricUnit(metric) {
	case "packets", "episodes", "intervals":
		f = func(v float64) string { return units.FormatCount(int64(math.Round(v))) }
	case "ps":
		f = units.FormatPs
	case "fraction":
		f = units.FormatFraction
	default:
		return e.String()
	}
	num := f
	f = func(v float64) string {
		if math.IsInf(v, 1) {
			return UnfinishedWord
		}
		return num(v)
	}
	switch {
	case !e.Defined():
		return "-"
	case !e.HasCI:
		return f(e.Value)
	}
	return fmt.Sprintf("%s [%s, %s]", f(e.Value), f(e.Lo), f(e.Hi))
}

func (c *Comparison) clearWord(metric string, b Best) string {
	if b.RunnerUp == "" {
		return ""
	}
	d := b.Difference
	if !d.HasCI {
		return fmt.Sprintf(", ahead of %s (no interval: not a per-flow quantity)", b.RunnerUp)
	}
	interval := fmt.Sprintf("the paired 95%% %s interval of the difference, %s", IntervalOf(metric), d)
	if r := c.ByMethod[b.RunnerUp].Metrics[metric]; r.Unfinished() {
		// The best's value is finite (a tie otherwise): ahead by infinitely much.
		word := "clearly ahead of"
		if !b.Clear {
			word = "ahead of"
		}
		return fmt.Sprintf(", %s %s, whose %s", word, b.RunnerUp, strings.TrimPrefix(r.Reason, "the "))
	}
	switch {
	case b.Clear:
		return fmt.Sprintf(", clearly ahead of %s (%s, excludes 0, and the difference is at least %s)", b.RunnerUp, interval, c.thresholdWords(metric, b))
	case b.Significant:
		return fmt.Sprintf(", statistically ahead of %s by %s (%s, excludes 0, but a practical difference is at least %s)", b.RunnerUp, c.by(metric, b), interval, c.thresholdWords(metric, b))
	}
	return fmt.Sprintf(", not clearly ahead of %s (%s, includes 0)", b.RunnerUp, interval)
}

// thresholdWords is the practical threshold of b's metric in words: "5% of the
// runner-up's value", "1 percentage point".
func (c *Comparison) thresholdWords(metric string, b Best) string {
	_, rule := PracticalThreshold(metric, c.ByMethod[b.RunnerUp].Metrics[metric].Value)
	return rule
}

// by is the size of b's difference in the terms of its threshold: a share of the
// runner-up's value ("0.08%"), percentage points of a fraction, or the difference
// of AMIs.
func (c *Comparison) by(metric string, b Best) string {
	d := math.Abs(b.Difference.Value)
	switch {
	case MetricUnit(metric) == "fraction":
		return fmt.Sprintf("%.2g percentage points", 100*d)
	case metric == MetricAMI || metric == MetricAMIByRack:
		return units.FormatFloat(d)
	}
	if r := math.Abs(c.ByMethod[b.RunnerUp].Metrics[metric].Value); r > 0 {
		return fmt.Sprintf("%.2g%%", 100*d/r)
	}
	return FormatEstimate(metric, Estimate{Value: d})
}

// Table returns the hash_comparison table: one row per method and metric with its
// unit, the value (empty when undefined), the interval bounds (empty without one),
// whether the method is the unique best on it (a tie marks none) and whether the
// value is judged (false when undefined, as summary.json's judged).
func (c *Comparison) Table() Table {
	t := Table{Name: "hash_comparison", Header: []string{"method", "metric", "unit", "value", "lo", "hi", "best", "judged"}}
	for _, m := range c.Methods {
		for _, metric := range c.Metrics {
			e := c.ByMethod[m].Metrics[metric]
			v, lo, hi := "", "", ""
			if e.Defined() {
				v = ff(e.Value)
			}
			if e.HasCI {
				lo, hi = ff(e.Lo), ff(e.Hi)
			}
			best := "false"
			if c.Best[metric].Method == m {
				best = "true"
			}
			t.Rows = append(t.Rows, []string{m, metric, MetricUnit(metric), v, lo, hi, best, strconv.FormatBool(e.Defined())})
		}
	}
	return t
}

// eventsText names a configuration's Events list (decoded run.json config) in a few
// words, "switch-down spine-s0-0 at 1s; link-up a-b at 2s", "none" when empty: a
// sweep with events as an axis names its points by it.
func eventsText(v any) string {
	list, _ := v.([]any)
	var parts []string
	for _, e := range list {
		m, _ := e.(map[string]any)
		target := fmt.Sprint(m["Node"])
		if l, ok := m["Link"].([]any); ok && len(l) > 0 {
			var ends []string
			for _, x := range l {
				ends = append(ends, fmt.Sprint(x))
			}
			target = strings.Join(ends, "-")
		}
		parts = append(parts, fmt.Sprintf("%v %s at %v", m["Kind"], target, m["At"]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}
