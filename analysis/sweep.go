package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/stat"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// This file analyzes a sweep directory (`replay sweep`, README "analyze"): every
// point's headline numbers against each numeric axis, and the answers such as
// "smallest Switch.BufferSize with no drop". It reads each point's run.json through
// package records, its record files through Load and Analyze (the keys of
// summary.json, so that it depends on nothing else of a Summary), and flows.arrow's
// completion times through package records.

// Sweep metric names (summary.json sweep.metrics[].name and the keys of
// sweep.points[].metrics). MetricMaxMeanPrefix+tier is a tier's max/mean member
// load in bytes (imbalance.tiers.<tier>.max_mean).
const (
	SweepDrops          = "drops"            // packets dropped (run.json)
	SweepLosslessDrops  = "lossless_drops"   // lossless (headroom) drops (run.json)
	SweepPFCFrames      = "pfc_frames"       // PFC frames sent (run.json)
	SweepPausedPs       = "pfc_paused_ps"    // pause time summed over paused port-classes, ps (pfc.paused_ps)
	SweepStorms         = "pfc_storms"       // PFC storm episodes (pfc.storms)
	SweepCEMarked       = "ce_marked"        // packets marked CE (run.json)
	SweepPolarization   = "polarization"     // rack/fabric polarization: polarization.ami when the analysis has it, else .nmi
	SweepFCTSlowdownP50 = "fct_slowdown_p50" // median FCT slowdown of completed flows (flows.arrow fct_ps / ideal_fct_ps)
	SweepFCTSlowdownP95 = "fct_slowdown_p95" // 95th percentile
	SweepFCTSlowdownP99 = "fct_slowdown_p99" // 99th percentile
	SweepFCTComplete    = "fct_complete"     // share of the flows with data that completed (flows.arrow)
	SweepHostLoad       = "host_link_load"   // the busiest host link's load (congestion.busiest_host_link)
	SweepSpeedup        = "speedup"          // the speedup a point's --target-load found (run.json options.speedup; target_load points only)
	SweepMaxMeanPrefix  = "max_mean_"        // + tier: imbalance.tiers.<tier>.max_mean
	sweepSourceRun      = "run.json"         // where a metric comes from
	sweepSourceAnalysis = "analysis"         // Load and Analyze of the point
	sweepSourceFlows    = "flows.arrow"      // fct_ps and ideal_fct_ps
)

// SweepMetric describes one metric of a sweep analysis.
type SweepMetric struct {
	Name   string `json:"name"`
	Title  string `json:"title"`            // what it measures, for axes and tables
	Unit   string `json:"unit"`             // packets, frames, ps, ratio
	Source string `json:"source"`           // run.json, analysis, flows.arrow
	Note   string `json:"note,omitempty"`   // e.g. which polarization measure
	Zero   string `json:"zero,omitempty"`   // "no drop": the answer "smallest X with <zero>" is asked of it
	Higher bool   `json:"higher_is_better"` // false: lower is better
}

// SweepPoint is one point's metrics; a metric that is undefined for the point (no
// completed flow for a slowdown, no flow crossing two tiers) is null.
type SweepPoint struct {
	ID      int                 `json:"id"`
	Dir     string              `json:"dir"`
	Values  []string            `json:"values"`
	Metrics map[string]*float64 `json:"metrics"`
	// Caveats are the point's headline caveats (Caveats: a host mapping that leaves
	// the fabric unused, closed-loop fallbacks to open loop); none for most points.
	Caveats []string `json:"caveats,omitempty"`

	levels map[string]int // the level of each tier (role) of the point's max/mean metrics
}

// SweepSeries is one line of a figure: a metric against one numeric axis with the
// other varying axes fixed (LineAxes at LineValues; none when there are no others).
type SweepSeries struct {
	Metric     string   `json:"metric"`
	Axis       string   `json:"axis"`
	LineAxes   []string `json:"line_axes"`
	LineValues []string `json:"line_values"`
	// Categorical: the axis is not numeric, X holds the values' positions.
	Categorical bool       `json:"categorical"`
	X           []float64  `json:"x"`      // the axis's values in base units, increasing
	Labels      []string   `json:"labels"` // the same values as written
	Y           []*float64 `json:"y"`      // the metric (null where undefined)
	Points      []int      `json:"points"` // the point of each x
}

// SweepAnswer answers "smallest AXIS with ZERO" (largest, for speedup) for one line
// of the other varying axes (LineAxes at LineValues): Value is the axis value as
// written, "" when no point of the line reaches zero; Again lists the values past it
// where the metric is not zero again (a non-monotone response). In a partial sweep,
// NotAnalyzed lists the line's values whose points were not analyzed (not done): the
// answer is over the others.
type SweepAnswer struct {
	Question    string   `json:"question"`
	Metric      string   `json:"metric"`
	Axis        string   `json:"axis"`
	LineAxes    []string `json:"line_axes"`
	LineValues  []string `json:"line_values"`
	Value       string   `json:"value"`
	X           *float64 `json:"x"`
	Point       *int     `json:"point"`
	Again       []string `json:"again,omitempty"`
	NotAnalyzed []string `json:"not_analyzed,omitempty"`
}

// SweepSummary is the analysis of a sweep (summary.json "sweep"). Points are the
// analyzed points; NotDone, in a partial analysis (Options.Partial), the others.
type SweepSummary struct {
	Dir      string               `json:"dir"`
	Points   []SweepPoint         `json:"points"`
	NotDone  []records.PointState `json:"not_done"`
	Axes     []records.SweepAxis  `json:"axes"`
	Metrics  []SweepMetric        `json:"metrics"`
	Series   []SweepSeries        `json:"series"`
	Answers  []SweepAnswer        `json:"answers"`
	Headline []string             `json:"headline"`

	loadSource string // where SweepHostLoad comes from (LoadFromRunJSON, LoadFromPorts)
}

// ErrSweepIncomplete: a sweep directory with points that are not done.
var ErrSweepIncomplete = errors.New("sweep is incomplete")

// AnalyzeSweep analyzes the sweep in dir: every point must be done (replay sweep
// --status says which are not), unless opt.Partial, which analyzes the done points
// and lists the others in NotDone. Points are analyzed in parallel (GOMAXPROCS at a
// time); ctx stops it.
func AnalyzeSweep(ctx context.Context, dir string, opt Options) (*SweepSummary, error) {
	sw, err := records.ReadSweep(dir)
	if err != nil {
		return nil, err
	}
	sw.Scan(dir)
	notDone := sw.States(true)
	switch {
	case len(notDone) > 0 && !opt.Partial:
		return nil, IncompleteSweep(dir, sw)
	case len(notDone) == len(sw.Points):
		return nil, fmt.Errorf("%w: %s: none of its %d points is done (replay sweep --status %s says why)", ErrSweepIncomplete, dir, len(sw.Points), dir)
	}
	var todo []records.SweepPoint
	for _, p := range sw.Points {
		if p.Status == records.StatusDone {
			todo = append(todo, p)
		}
	}
	s := &SweepSummary{Dir: dir, Axes: sw.Axes, Points: make([]SweepPoint, len(todo)), NotDone: notDone}
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var done int
	var mu sync.Mutex
	for k, p := range todo {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx != nil && ctx.Err() != nil {
				errs[k] = ctx.Err()
				return
			}
			po := opt
			po.Progress = nil // points run in parallel: only the count of points is reported
			m, source, levels, caveats, err := pointMetrics(filepath.Join(dir, p.Dir), po)
			if err != nil {
				errs[k] = fmt.Errorf("%s: %w", p.Dir, err)
				return
			}
			s.Points[k] = SweepPoint{ID: p.ID, Dir: p.Dir, Values: p.Values, Metrics: m, Caveats: caveats, levels: levels}
			mu.Lock()
			if source != "" && (s.loadSource == "" || source == LoadFromPorts) {
				s.loadSource = source // ports.arrow when any point lacks offered_load
			}
			done++
			opt.progress("sweep points", done, len(todo))
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s.Metrics = sweepMetrics(s.Points)
	s.Series = sweepSeries(s)
	s.Answers = sweepAnswers(s)
	s.Headline = sweepHeadline(s)
	return s, nil
}

// IncompleteSweep is the ErrSweepIncomplete error of a scanned sweep in dir: how
// many points are not done, the first five with their status, where to see them
// all, and that analyze --partial analyzes the done ones.
func IncompleteSweep(dir string, sw *records.Sweep) error {
	nd := sw.States(true)
	var first []string
	for _, p := range nd[:min(5, len(nd))] {
		first = append(first, p.Dir+" "+string(p.Status))
	}
	if len(nd) > len(first) {
		first = append(first, "...")
	}
	return fmt.Errorf("%w: %s: %d of %d points not done (%s; replay sweep --status %s lists them); analyze --partial analyzes the %d done",
		ErrSweepIncomplete, dir, len(nd), len(sw.Points), strings.Join(first, ", "), dir, len(sw.Points)-len(nd))
}

// pointMetrics reads one point's metrics, where its SweepHostLoad comes from
// (HostLoad.Source), the level of each tier (role) of its max/mean metrics, and its
// caveats (Caveats).
func pointMetrics(runDir string, opt Options) (_ map[string]*float64, loadSource string, levels map[string]int, caveats []string, err error) {
	m := map[string]*float64{}
	num := func(v float64) *float64 { return &v }
	rj, err := records.ReadRun(runDir)
	if err != nil {
		return nil, "", nil, nil, err
	}
	sim := &rj.Simulation
	m[SweepDrops] = num(float64(sim.DroppedTotal()))
	m[SweepLosslessDrops] = num(float64(sim.LosslessDrops))
	m[SweepPFCFrames] = num(float64(sim.PFCFrames))
	m[SweepCEMarked] = num(float64(sim.CEMarked))
	if rj.Options.TargetLoad > 0 {
		m[SweepSpeedup] = num(rj.Options.Speedup)
	}

	run, err := Load(runDir)
	if err != nil {
		return nil, "", nil, nil, err
	}
	sum, err := Analyze(run, opt)
	if err != nil {
		return nil, "", nil, nil, err
	}
	js, err := json.Marshal(sum)
	if err != nil {
		return nil, "", nil, nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, "", nil, nil, err
	}
	m[SweepPausedPs] = jsonNumber(doc, "pfc", "paused_ps")
	if storms, ok := jsonPath(doc, "pfc", "storms").([]any); ok {
		m[SweepStorms] = num(float64(len(storms)))
	}
	if tiers, ok := jsonPath(doc, "imbalance", "tiers").(map[string]any); ok {
		levels = map[string]int{}
		for tier := range tiers {
			m[SweepMaxMeanPrefix+tier] = jsonNumber(doc, "imbalance", "tiers", tier, "max_mean")
			if ti := sum.Imbalance.Tiers[Role(tier)]; ti != nil {
				levels[tier] = ti.Level
			}
		}
	}
	// The busiest host link's load: its peak 1 ms bin (run.json offered_load), else its
	// mean over the run (ports.arrow); the source goes into the metric's note.
	loadSource, _ = jsonPath(doc, "congestion", "busiest_host_link", "source").(string)
	if v := jsonNumber(doc, "congestion", "busiest_host_link", "peak_share"); v != nil {
		m[SweepHostLoad] = v
	} else {
		m[SweepHostLoad] = jsonNumber(doc, "congestion", "busiest_host_link", "mean_share")
	}
	if v := jsonNumber(doc, "polarization", "ami"); v != nil || jsonPath(doc, "polarization", "ami") != nil {
		m[SweepPolarization] = v
	} else {
		m[SweepPolarization] = jsonNumber(doc, "polarization", "nmi")
	}
	p50, p95, p99, n, data, err := fctSlowdown(filepath.Join(runDir, records.FlowsFile))
	if err != nil {
		return nil, "", nil, nil, err
	}
	if n > 0 {
		m[SweepFCTSlowdownP50], m[SweepFCTSlowdownP95], m[SweepFCTSlowdownP99] = num(p50), num(p95), num(p99)
	}
	if data > 0 {
		m[SweepFCTComplete] = num(float64(n) / float64(data))
	}
	return m, loadSource, levels, Caveats(run.Info), nil
}

// polarizationNote names the measure SweepPolarization holds.
const polarizationNote = "polarization.ami of the point's analysis (chance-corrected) when it has one, else polarization.nmi"

func jsonPath(doc map[string]any, keys ...string) any {
	var v any = doc
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func jsonNumber(doc map[string]any, keys ...string) *float64 {
	f, ok := jsonPath(doc, keys...).(float64)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

// fctSlowdown returns the 50th, 95th and 99th percentile of fct_ps / ideal_fct_ps
// over the completed flows of flows.arrow (empirical quantiles: the smallest
// slowdown with at least that fraction of flows at or below it), how many flows
// count, and how many flows have data (size_bytes or ideal_fct_ps above 0: the
// completed ones and the unfinished).
func fctSlowdown(path string) (p50, p95, p99 float64, n, data int, err error) {
	r, err := records.OpenFlows(path)
	if err != nil {
		return 0, 0, 0, 0, 0, err
	}
	defer r.Close()
	var xs []float64
	var row records.FlowRow
	for r.Next(&row) {
		if row.SizeBytes > 0 || row.IdealFctPs > 0 {
			data++
		}
		if row.Completion == records.CompletionComplete && row.IdealFctPs > 0 {
			xs = append(xs, float64(row.FctPs)/float64(row.IdealFctPs))
		}
	}
	if err := r.Err(); err != nil {
		return 0, 0, 0, 0, 0, err
	}
	if len(xs) == 0 {
		return 0, 0, 0, 0, data, nil
	}
	sort.Float64s(xs)
	q := func(p float64) float64 { return stat.Quantile(p, stat.Empirical, xs, nil) }
	return q(0.50), q(0.95), q(0.99), len(xs), data, nil
}

// sweepMetrics lists the metrics the points have, in display order.
func sweepMetrics(points []SweepPoint) []SweepMetric {
	has := map[string]bool{}
	var tiers []string
	level := map[string]int{}
	for _, p := range points {
		for t, l := range p.levels {
			if _, ok := level[t]; !ok {
				level[t] = l
			}
		}
		for k, v := range p.Metrics {
			if v == nil {
				continue
			}
			if !has[k] && strings.HasPrefix(k, SweepMaxMeanPrefix) {
				tiers = append(tiers, strings.TrimPrefix(k, SweepMaxMeanPrefix))
			}
			has[k] = true
		}
	}
	// Tiers (roles) in the fabric's order, lowest level first (host, rack, fabric,
	// spine; leaf, spine, super-spine), by the level a point's summary gave them or
	// their records tier, unknown names last.
	levelOf := func(t string) (int, bool) {
		if l, ok := level[t]; ok {
			return l, true
		}
		rt, err := records.ParseTier(t)
		return int(rt), err == nil
	}
	sort.SliceStable(tiers, func(i, j int) bool {
		li, oki := levelOf(tiers[i])
		lj, okj := levelOf(tiers[j])
		if oki != okj {
			return oki
		}
		if oki && li != lj {
			return li < lj
		}
		return tiers[i] < tiers[j]
	})
	all := []SweepMetric{
		{Name: SweepDrops, Title: "drops", Unit: "packets", Source: sweepSourceRun, Zero: "no drop"},
		{Name: SweepLosslessDrops, Title: "lossless drops", Unit: "packets", Source: sweepSourceRun, Zero: "no lossless drop"},
		{Name: SweepPFCFrames, Title: "PFC frames sent", Unit: "frames", Source: sweepSourceRun, Zero: "no PFC pause"},
		{Name: SweepPausedPs, Title: "PFC paused time", Unit: "ps", Source: sweepSourceAnalysis, Note: "summed over the paused port-classes"},
		{Name: SweepStorms, Title: "PFC storms", Unit: "episodes", Source: sweepSourceAnalysis, Zero: "no PFC storm"},
		{Name: SweepCEMarked, Title: "CE marks", Unit: "packets", Source: sweepSourceRun},
		{Name: SweepHostLoad, Title: "busiest host link load", Unit: "fraction", Source: sweepSourceAnalysis,
			Note: "of its speed: the peak 1 ms bin of run.json offered_load, or, for a run without it, the mean over the run from ports.arrow"},
		{Name: SweepSpeedup, Title: "speedup found", Unit: "ratio", Source: sweepSourceRun,
			Note: "the speedup at which the busiest host link's p99 offered load in 1 ms bins is the point's target_load (options.speedup)"},
	}
	for _, t := range tiers {
		all = append(all, SweepMetric{Name: SweepMaxMeanPrefix + t, Title: "max/mean member load (" + t + ")", Unit: "ratio", Source: sweepSourceAnalysis})
	}
	all = append(all,
		SweepMetric{Name: SweepPolarization, Title: "rack/fabric polarization", Unit: "ratio", Source: sweepSourceAnalysis,
			Note: polarizationNote},
		SweepMetric{Name: SweepFCTSlowdownP50, Title: "FCT slowdown p50", Unit: "ratio", Source: sweepSourceFlows, Note: "over the completed flows (see flows completed)"},
		SweepMetric{Name: SweepFCTSlowdownP95, Title: "FCT slowdown p95", Unit: "ratio", Source: sweepSourceFlows, Note: "over the completed flows (see flows completed)"},
		SweepMetric{Name: SweepFCTSlowdownP99, Title: "FCT slowdown p99", Unit: "ratio", Source: sweepSourceFlows, Note: "over the completed flows (see flows completed)"},
		SweepMetric{Name: SweepFCTComplete, Title: "flows completed", Unit: "fraction", Source: sweepSourceFlows,
			Note: "the slowdowns are over the completed flows: read them with this share", Higher: true},
	)
	var out []SweepMetric
	for _, m := range all {
		if has[m.Name] {
			out = append(out, m)
		}
	}
	return out
}

// varying are the indexes of the axes with more than one value.
func (s *SweepSummary) varying() []int {
	var out []int
	for i, a := range s.Axes {
		if len(a.Values) > 1 {
			out = append(out, i)
		}
	}
	return out
}

// lineKey is the point's values of the varying axes other than axis, as
// "name=value" strings.
func (s *SweepSummary) lineKey(p *SweepPoint, axis int) []string {
	line := []string{}
	for _, i := range s.varying() {
		if i != axis {
			line = append(line, s.Axes[i].Name+"="+p.Values[i])
		}
	}
	return line
}

// lines groups the points by their values of the varying axes other than axis, in
// the order of the points; each group is sorted by the axis's numeric value.
func (s *SweepSummary) lines(axis int) (keys [][]string, groups [][]*SweepPoint) {
	index := map[string]int{}
	a := &s.Axes[axis]
	pos := map[string]int{}
	for i, v := range a.Values {
		pos[v] = i
	}
	for k := range s.Points {
		p := &s.Points[k]
		key := s.lineKey(p, axis)
		id := strings.Join(key, "\x00")
		g, ok := index[id]
		if !ok {
			g = len(keys)
			index[id] = g
			keys = append(keys, key)
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], p)
	}
	for _, g := range groups {
		sort.SliceStable(g, func(i, j int) bool { return axisX(a, g[i].Values[axis]) < axisX(a, g[j].Values[axis]) })
	}
	return keys, groups
}

// axisX is where value v of axis a goes on a figure's x axis: its numeric value, or
// its position among the axis's values for a category.
func axisX(a *records.SweepAxis, v string) float64 {
	for i, w := range a.Values {
		if w == v {
			if a.IsNumeric() {
				return a.Numeric[i]
			}
			return float64(i)
		}
	}
	return math.NaN()
}

// sweepSeries is every metric against every numeric axis with more than one value;
// a sweep without one has the metrics against its first varying axis, as
// categories (Categorical).
func sweepSeries(s *SweepSummary) []SweepSeries {
	var axes []int
	for _, ai := range s.varying() {
		if s.Axes[ai].IsNumeric() {
			axes = append(axes, ai)
		}
	}
	if len(axes) == 0 && len(s.varying()) > 0 {
		axes = s.varying()[:1]
	}
	var out []SweepSeries
	for _, ai := range axes {
		a := &s.Axes[ai]
		_, groups := s.lines(ai)
		for _, m := range s.Metrics {
			for _, pts := range groups {
				ser := SweepSeries{Metric: m.Name, Axis: a.Name, Categorical: !a.IsNumeric(), LineAxes: []string{}, LineValues: []string{}}
				for _, i := range s.varying() {
					if i != ai {
						ser.LineAxes = append(ser.LineAxes, s.Axes[i].Name)
						ser.LineValues = append(ser.LineValues, pts[0].Values[i])
					}
				}
				for _, p := range pts {
					v := p.Values[ai]
					ser.X = append(ser.X, axisX(a, v))
					ser.Labels = append(ser.Labels, v)
					ser.Y = append(ser.Y, p.Metrics[m.Name])
					ser.Points = append(ser.Points, p.ID)
				}
				out = append(out, ser)
			}
		}
	}
	return out
}

// loadAxes are the axes whose larger values raise the load (speedup; replicate and
// target_load, the load axes of replay sweep): their question is the largest value
// with no drop.
var loadAxes = map[string]bool{"speedup": true, "replicate": true, "target_load": true}

// sweepAnswers answers, per numeric axis and per metric with a Zero, "smallest
// AXIS with ZERO" (largest for the load axes, loadAxes) on every line.
func sweepAnswers(s *SweepSummary) []SweepAnswer {
	var out []SweepAnswer
	for _, ai := range s.varying() {
		a := &s.Axes[ai]
		if !a.IsNumeric() {
			continue
		}
		_, groups := s.lines(ai)
		for _, m := range s.Metrics {
			if m.Zero == "" {
				continue
			}
			q := "smallest " + a.Name + " with " + m.Zero
			largest := loadAxes[a.Name]
			if largest {
				q = "largest " + a.Name + " with " + m.Zero
			}
			for _, pts := range groups {
				ans := SweepAnswer{Question: q, Metric: m.Name, Axis: a.Name, LineAxes: []string{}, LineValues: []string{}}
				for _, i := range s.varying() {
					if i != ai {
						ans.LineAxes = append(ans.LineAxes, s.Axes[i].Name)
						ans.LineValues = append(ans.LineValues, pts[0].Values[i])
					}
				}
				order := pts
				if largest {
					order = slices.Clone(pts)
					slices.Reverse(order)
				}
				ans.NotAnalyzed = s.notAnalyzed(ai, ans.LineAxes, ans.LineValues)
				found := -1
				for i, p := range order {
					if v := p.Metrics[m.Name]; v != nil && *v == 0 {
						found = i
						break
					}
				}
				if found >= 0 {
					p := order[found]
					x := axisX(a, p.Values[ai])
					id := p.ID
					ans.Value, ans.X, ans.Point = p.Values[ai], &x, &id
					for _, p := range order[found+1:] {
						if v := p.Metrics[m.Name]; v != nil && *v != 0 {
							ans.Again = append(ans.Again, p.Values[ai])
						}
					}
				}
				out = append(out, ans)
			}
		}
	}
	return out
}

// notAnalyzed lists the values of axis ai, in the axis's order, of the points not
// analyzed on the line where the axes names take values.
func (s *SweepSummary) notAnalyzed(ai int, names, values []string) []string {
	var out []string
	for _, v := range s.Axes[ai].Values {
		for _, p := range s.NotDone {
			on := p.Values[ai] == v
			for k, name := range names {
				for i, a := range s.Axes {
					if a.Name == name && p.Values[i] != values[k] {
						on = false
					}
				}
			}
			if on {
				out = append(out, v)
				break
			}
		}
	}
	return out
}

// PartialSentence says which points of the sweep in dir a partial analysis of
// analyzed points left out (nd): the first five with their settings on the varying
// axes, status and reason, and how many more.
func PartialSentence(dir string, axes []records.SweepAxis, analyzed int, nd []records.PointState) string {
	var parts []string
	for _, p := range nd[:min(5, len(nd))] {
		var set []string
		for i, a := range axes {
			if len(a.Values) > 1 {
				set = append(set, a.Name+"="+p.Values[i])
			}
		}
		part := p.Dir
		if len(set) > 0 {
			part += " (" + strings.Join(set, ", ") + ")"
		}
		part += " " + string(p.Status)
		if p.Detail != "" {
			part += ": " + p.Detail
		}
		parts = append(parts, part)
	}
	line := fmt.Sprintf("Partial sweep: %d of %d points analyzed; not done: %s", analyzed, analyzed+len(nd), strings.Join(parts, "; "))
	if n := len(nd) - len(parts); n > 0 {
		line += fmt.Sprintf("; and %d more (replay sweep --status %s lists them)", n, dir)
	}
	return line + "."
}

// sweepHeadline states the answers, each question in one sentence with the lines
// grouped by their answer, then the range of drops and lossless drops over the
// points; a partial analysis first says which points it left out.
func sweepHeadline(s *SweepSummary) []string {
	var out []string
	if len(s.NotDone) > 0 {
		out = append(out, PartialSentence(s.Dir, s.Axes, len(s.Points), s.NotDone))
	}
	out = append(out, sweepCaveats(s)...)
	if line := s.quietLine(); line != "" {
		// Every answer is "the smallest swept": one line says it all.
		return append(out, line)
	}
	type group struct {
		question string
		answers  []SweepAnswer
	}
	var groups []group
	for _, a := range s.Answers {
		if n := len(groups); n > 0 && groups[n-1].question == a.Question {
			groups[n-1].answers = append(groups[n-1].answers, a)
		} else {
			groups = append(groups, group{a.Question, []SweepAnswer{a}})
		}
	}
	for _, g := range groups {
		if g.answers[0].Metric == SweepStorms {
			continue // in the answers table and summary.json, not the headline
		}
		out = append(out, answerSentence(s, g.question, g.answers))
	}
	for _, r := range []struct{ name, title, none string }{
		{SweepDrops, "Drops", "No drop"},
		{SweepLosslessDrops, "Lossless drops", "No lossless drop"},
	} {
		lo, hi := -1, -1
		for k := range s.Points {
			v := s.Points[k].Metrics[r.name]
			if v == nil {
				continue
			}
			if lo < 0 || *v < *s.Points[lo].Metrics[r.name] {
				lo = k
			}
			if hi < 0 || *v > *s.Points[hi].Metrics[r.name] {
				hi = k
			}
		}
		switch {
		case lo < 0:
		case *s.Points[hi].Metrics[r.name] == 0:
			out = append(out, fmt.Sprintf("%s at any of the %d points.", r.none, len(s.Points)))
		default:
			out = append(out, fmt.Sprintf("%s: from %s (%s) to %s (%s) over the %d points.", r.title,
				units.FormatCount(int64(*s.Points[lo].Metrics[r.name])), pointLabel(s, lo),
				units.FormatCount(int64(*s.Points[hi].Metrics[r.name])), pointLabel(s, hi), len(s.Points)))
		}
	}
	return out
}

// sweepCaveats are the points' caveats (SweepPoint.Caveats), each once with the
// points that have it: "p0001, p0003: Closed loop fell back ...", or "p0001, p0003,
// p0005 and 9 more points: ..." past three.
func sweepCaveats(s *SweepSummary) []string {
	var order []string
	at := map[string][]string{}
	for _, p := range s.Points {
		for _, c := range p.Caveats {
			if _, ok := at[c]; !ok {
				order = append(order, c)
			}
			at[c] = append(at[c], p.Dir)
		}
	}
	out := make([]string, len(order))
	for i, c := range order {
		dirs := at[c]
		where := strings.Join(dirs, ", ")
		switch {
		case len(dirs) == len(s.Points) && len(dirs) > 1:
			where = "every point"
		case len(dirs) > 3:
			where = fmt.Sprintf("%s and %d more points", strings.Join(dirs[:3], ", "), len(dirs)-3)
		}
		out[i] = where + ": " + c
	}
	return out
}

// Quiet says whether nothing congested at any analyzed point: no drop, lossless
// drop, PFC frame or CE mark (run.json).
func (s *SweepSummary) Quiet() bool {
	for _, p := range s.Points {
		for _, m := range []string{SweepDrops, SweepLosslessDrops, SweepPFCFrames, SweepCEMarked} {
			if v := p.Metrics[m]; v == nil || *v != 0 {
				return false
			}
		}
	}
	return len(s.Points) > 0
}

// quietLine is the sweep's one headline line when nothing congested at any point:
// that, and the busiest host link's largest load over the points (SweepHostLoad);
// "" when something congested.
func (s *SweepSummary) quietLine() string {
	if !s.Quiet() {
		return ""
	}
	line := fmt.Sprintf("Nothing congested at any of the %d points: no drop, PFC pause or ECN mark", len(s.Points))
	hi := -1
	for k := range s.Points {
		if v := s.Points[k].Metrics[SweepHostLoad]; v != nil && (hi < 0 || *v > *s.Points[hi].Metrics[SweepHostLoad]) {
			hi = k
		}
	}
	if hi >= 0 {
		line += fmt.Sprintf("; the busiest host link's load reached at most %s of its speed (%s; %s)", units.FormatFraction(*s.Points[hi].Metrics[SweepHostLoad]),
			pointLabel(s, hi), s.hostLoadSource())
	}
	return line + ". The fabric was not loaded: raise the load (speedup, more traffic) to see it congest."
}

// hostLoadSource says what SweepHostLoad holds: "peak 1 ms bin, run.json
// offered_load" or "mean over the run, ports.arrow".
func (s *SweepSummary) hostLoadSource() string {
	if s.loadSource == LoadFromRunJSON {
		return "its peak 1 ms bin, " + LoadFromRunJSON
	}
	return "its mean over the run, " + LoadFromPorts + ": these runs have no run.json offered_load"
}

// pointLabel is "p0003: hash=crc16, Switch.BufferSize=16MiB" (the varying axes).
func pointLabel(s *SweepSummary, k int) string {
	p := &s.Points[k]
	var set []string
	for _, i := range s.varying() {
		set = append(set, s.Axes[i].Name+"="+p.Values[i])
	}
	if len(set) == 0 {
		return p.Dir
	}
	return p.Dir + ": " + strings.Join(set, ", ")
}

// answerSentence is one question's answer over its lines, the lines grouped by
// answer: "Smallest Switch.BufferSize with no drop: 112MiB at hash=crc16; 128MiB at
// hash=crc32/xor16." A group that covers every combination of some values of the
// other axes is named by those values (an axis at all its values is left out);
// another lists its first lines.
func answerSentence(s *SweepSummary, q string, answers []SweepAnswer) string {
	head := strings.ToUpper(q[:1]) + q[1:] + ": "
	var axis *records.SweepAxis
	for i := range s.Axes {
		if s.Axes[i].Name == answers[0].Axis {
			axis = &s.Axes[i]
		}
	}
	// limit is the last value the question tries, extreme the first.
	limit, extreme := 0, 0
	for i := range axis.Values {
		if axis.Numeric[i] > axis.Numeric[limit] {
			limit = i
		}
		if axis.Numeric[i] < axis.Numeric[extreme] {
			extreme = i
		}
	}
	smallest := strings.HasPrefix(q, "smallest")
	if !smallest {
		limit, extreme = extreme, limit
	}
	text := func(a SweepAnswer) string {
		base := a.Value
		var notes []string
		switch {
		case a.Value == "" && smallest:
			base = "none up to " + axis.Values[limit]
		case a.Value == "":
			base = "none down to " + axis.Values[limit]
		case a.Value == axis.Values[extreme]:
			notes = append(notes, "the "+strings.Fields(q)[0]+" swept")
		}
		if len(a.Again) > 0 {
			notes = append(notes, "but not at "+strings.Join(a.Again, ", "))
		}
		if len(a.NotAnalyzed) > 0 {
			notes = append(notes, "not analyzed: "+strings.Join(a.NotAnalyzed, ", "))
		}
		if len(notes) > 0 {
			return base + " (" + strings.Join(notes, "; ") + ")"
		}
		return base
	}
	type bucket struct {
		text  string
		lines [][]string
	}
	var buckets []bucket
	for _, a := range answers {
		t := text(a)
		i := slices.IndexFunc(buckets, func(b bucket) bool { return b.text == t })
		if i < 0 {
			buckets = append(buckets, bucket{text: t})
			i = len(buckets) - 1
		}
		buckets[i].lines = append(buckets[i].lines, a.LineValues)
	}
	names := answers[0].LineAxes
	parts := make([]string, len(buckets))
	for i, b := range buckets {
		parts[i] = b.text
		if len(names) > 0 {
			parts[i] += " " + s.describeLines(names, b.lines)
		}
	}
	return head + strings.Join(parts, "; ") + "."
}

// andList joins names as "a", "a and b", "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// describeLines names a non-empty set of lines (values of the axes names): "at every
// hash and speedup", "at transport=closed, every hash", "at hash=crc16/xor16,
// speedup=1", or the first three and how many more.
func (s *SweepSummary) describeLines(names []string, lines [][]string) string {
	all := map[string][]string{}
	for _, a := range s.Axes {
		all[a.Name] = a.Values
	}
	product := 1
	var parts, every []string
	for k, name := range names {
		var vals []string
		for _, v := range all[name] {
			if slices.ContainsFunc(lines, func(l []string) bool { return l[k] == v }) {
				vals = append(vals, v)
			}
		}
		product *= len(vals)
		if len(vals) == len(all[name]) {
			every = append(every, name)
		} else {
			parts = append(parts, name+"="+strings.Join(vals, "/"))
		}
	}
	if product == len(lines) { // every combination of those values
		out := "at " + strings.Join(parts, ", ")
		switch {
		case len(parts) == 0:
			out = "at every " + andList(every)
		case len(every) > 0:
			out += ", every " + andList(every)
		}
		return out
	}
	var shown []string
	for _, l := range lines[:min(3, len(lines))] {
		kv := make([]string, len(l))
		for k, v := range l {
			kv[k] = names[k] + "=" + v
		}
		shown = append(shown, strings.Join(kv, ", "))
	}
	out := "at " + strings.Join(shown, "; at ")
	if n := len(lines) - len(shown); n > 0 {
		out += fmt.Sprintf(" and %d more combinations of %s", n, strings.Join(names, ", "))
	}
	return out
}

// Table is the sweep as a table: one row per point, its axis values and metrics
// (tables/sweep.csv).
func (s *SweepSummary) Table() Table {
	t := Table{Name: "sweep"}
	t.Header = append(t.Header, "point")
	for _, a := range s.Axes {
		t.Header = append(t.Header, a.Name)
	}
	for _, m := range s.Metrics {
		t.Header = append(t.Header, m.Name)
	}
	for _, p := range s.Points {
		row := []string{p.Dir}
		row = append(row, p.Values...)
		for _, m := range s.Metrics {
			if v := p.Metrics[m.Name]; v != nil {
				row = append(row, formatMetric(*v))
			} else {
				row = append(row, "")
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// formatMetric writes integers as integers, other values with full precision.
func formatMetric(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
