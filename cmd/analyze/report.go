package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/cmd/internal/cli"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/plots"
	"github.com/tracefabric/tracefabric/plots/report"
)

// figures holds what figureSpecs produced: the drawn figures and, for the others,
// why they were not drawn.
type figures struct {
	drawn  map[string]report.Figure
	noData map[string]string
}

// block is the figure's block, or a sentence saying why there is none.
func (f *figures) block(name string) report.Block {
	if fig, ok := f.drawn[name]; ok {
		return report.FigureBlock(fig)
	}
	reason := f.noData[name]
	if reason == "" {
		reason = "nothing to draw"
	}
	return report.NoDataBlock(sentence(reason))
}

// sentence capitalizes s and ends it with a period.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// headline is the report's first sentences. One run: analysis' headline (drops and
// lossless drops, PFC and storms, worst imbalance, polarization, ECN, delay). A
// comparison: the best hash per tier and on drops, drops and storms per method, then
// the reference run's headline.
func headline(j *job) []string {
	var h []string
	if j.partial != "" {
		h = append(h, j.partial)
	}
	if j.cmp == nil {
		return append(h, j.sum.Headline...)
	}
	c := j.cmp
	// Every run's caveats first (analysis.Caveats: they qualify its numbers), the
	// reference's included, then left out of its own lines below.
	for i, in := range j.inputs {
		for _, line := range analysis.Caveats(in.run.Info) {
			h = append(h, methodName(c, i)+" run: "+line)
		}
	}
	h = append(h, c.Headline...)
	var drops, lossless, storms []string
	var anyLossless bool
	for _, m := range c.Methods {
		mm := c.ByMethod[m].Metrics
		drops = append(drops, fmt.Sprintf("%s %s", m, units.FormatCount(int64(mm[analysis.MetricDrops].Value))))
		l := int64(mm[analysis.MetricLossless].Value)
		anyLossless = anyLossless || l > 0
		lossless = append(lossless, fmt.Sprintf("%s %s", m, units.FormatCount(l)))
		storms = append(storms, fmt.Sprintf("%s %s", m, units.FormatCount(int64(mm[analysis.MetricStorms].Value))))
	}
	line := "Dropped packets per " + c.Noun() + ": " + strings.Join(drops, ", ") + "; "
	if anyLossless {
		line += "lossless (headroom) drops: " + strings.Join(lossless, ", ") + "."
	} else {
		line += "no lossless (headroom) drops in any run."
	}
	h = append(h, line)
	if c.By == analysis.NamedByHash {
		h = append(h, "PFC storms per method: "+strings.Join(storms, ", ")+".")
	} else {
		var pfc []string
		for _, m := range c.Methods {
			mm := c.ByMethod[m].Metrics
			pfc = append(pfc, fmt.Sprintf("%s %s pause intervals (%s paused), %s storms", m,
				analysis.FormatEstimate(analysis.MetricPauseIntervals, mm[analysis.MetricPauseIntervals]),
				analysis.FormatEstimate(analysis.MetricPausedPs, mm[analysis.MetricPausedPs]),
				analysis.FormatEstimate(analysis.MetricStorms, mm[analysis.MetricStorms])))
		}
		h = append(h, "PFC per run: "+strings.Join(pfc, "; ")+".")
	}
	var fct []string
	for _, m := range c.Methods {
		f := c.ByMethod[m].FCT
		if f.Flows == 0 {
			continue
		}
		fct = append(fct, fmt.Sprintf("%s %s of %s complete, p50 %s, p99 %s", m, units.FormatCount(f.Complete), units.FormatCount(f.Flows),
			analysis.FormatSlowdown(f.SlowdownP50), analysis.FormatSlowdown(f.SlowdownP99)))
	}
	if len(fct) > 0 {
		h = append(h, "Flow completion slowdown per "+c.Noun()+": "+strings.Join(fct, "; ")+".")
	}
	ref := methodName(c, j.ref)
	for _, s := range j.sum.Headline[len(analysis.Caveats(j.sum.Run)):] {
		h = append(h, ref+" run: "+s)
	}
	return h
}

// buildReport is the report model of a job.
func buildReport(j *job, figs *figures, head []string) *report.Report {
	s := j.sum
	r := &report.Report{Title: "tracefabric analysis", Headline: head}
	if j.cmp == nil {
		r.Subtitle = fmt.Sprintf("run %s (hash %s, seed %d)", j.inputs[0].dir, s.Run.Method, s.Run.Seed)
	} else {
		dirs := make([]string, len(j.inputs))
		for i, in := range j.inputs {
			dirs[i] = in.dir
		}
		r.Subtitle = fmt.Sprintf("%s runs of one trace: %s", units.FormatCount(int64(len(dirs))), strings.Join(dirs, ", "))
	}
	r.Sections = append(r.Sections, runSection(j), fabricSection(j.inputs[j.ref], figs))
	if j.cmp != nil {
		r.Sections = append(r.Sections, comparisonSection(j, figs))
	}
	r.Sections = append(r.Sections, fctSection(j, figs))
	if i, _ := closedRun(j); i >= 0 {
		r.Sections = append(r.Sections, closedLoopSection(j, figs))
	}
	if f := j.sum.Failures; f != nil {
		r.Sections = append(r.Sections, failuresSection(f))
	}
	r.Sections = append(r.Sections,
		dropsSection(j, figs), pfcSection(j, figs), bufferSection(j, figs),
		ecmpSection(j, figs), ecnSection(j, figs), delaySection(j, figs))
	return r
}
func runSection(j *job) report.Section {
	s, in := j.sum, j.inputs[j.ref]
	info := s.Run
	sec := report.Section{Title: "Run", ID: "run"}
	if j.cmp != nil {
		sec.Blocks = append(sec.Blocks, report.ParagraphBlock(fmt.Sprintf(
			"The comparison covers every run; the sections after it detail the %s run (%s).", methodName(j.cmp, j.ref), in.dir)))
	}
	sec.Blocks = append(sec.Blocks, report.ParagraphBlock(transportSentence(info.Transport, info.Options.Speedup)))
	kv := []report.KV{
		{Key: "run directory", Value: in.dir},
		{Key: "hash method", Value: info.Method},
		{Key: "seed", Value: strconv.FormatUint(info.Seed, 10)},
	}
	kv = append(kv, runOptionRows(in)...)
	kv = append(kv,
		report.KV{Key: "trace flows", Value: units.FormatCount(info.TraceFlows)},
		report.KV{Key: "injected packets", Value: units.FormatCount(info.Injected)},
		report.KV{Key: "delivered packets", Value: units.FormatCount(info.Delivered)},
		report.KV{Key: "dropped packets", Value: units.FormatCount(s.Drops.Total)},
		report.KV{Key: "lossless drops", Value: units.FormatCount(s.Drops.Lossless)},
		report.KV{Key: "undrained packets", Value: units.FormatCount(info.Undrained)},
		report.KV{Key: "CE marks (at egress queues)", Value: units.FormatCount(info.CEMarked)},
		report.KV{Key: "PFC frames", Value: units.FormatCount(info.PFCFrames)},
		report.KV{Key: "simulated time", Value: units.FormatInstantPs(info.SimPs)},
	)
	if cmd := info.Command; len(cmd) > 0 {
		kv = append(kv, report.KV{Key: "command", Value: strings.Join(cmd, " ")})
	}
	sec.Blocks = append(sec.Blocks, report.KeyValueBlock("", kv...))
	sec.Blocks = append(sec.Blocks, hostMappingBlocks(info)...)
	if len(s.Warnings) > 0 {
		sec.Blocks = append(sec.Blocks, report.ParagraphBlock("Warnings: "+strings.Join(s.Warnings, "; ")+"."))
	}
	return sec
}

// metricFormat returns how the comparison table shows a metric: durations, sizes and
// shares in the unit of its figure panel (plots.AxisUnit: one unit per quantity
// between figure and table), counts whole, other values with three digits; and the
// unit to name beside the metric.
func metricFormat(c *analysis.Comparison, metric string) (format func(float64) string, unit string) {
	mc := metricCI(c, metric)
	switch mc.Quantity {
	case plots.Duration, plots.Size, plots.Share:
		div, unit := plots.AxisUnit(mc)
		return func(v float64) string { return units.FormatFloat(v / div) }, unit
	case plots.Count:
		return func(v float64) string { return units.FormatCount(int64(math.Round(v))) }, ""
	}
	return units.FormatFloat, ""
}

// runsTable says what each run of a comparison is and what differs between them.
func runsTable(j *job) report.Block {
	c := j.cmp
	t := report.Table{Caption: "Runs", Columns: []string{"run", "directory", "hash method", "transport", "load balancing", "speedup"}}
	for i, m := range c.Methods {
		tr := c.ByMethod[m].Traits
		t.Rows = append(t.Rows, []string{m, j.inputs[i].dir, tr.Hash, firstNonEmpty(tr.Transport, "-"), firstNonEmpty(tr.LB, "-"), units.FormatDecimal(tr.Speedup)})
	}
	switch {
	case len(c.Differs) == 0:
		t.Note = "the runs differ in nothing run.json records (named by directory)"
	default:
		t.Note = fmt.Sprintf("the runs differ in %s; named by %s", strings.Join(c.Differs, ", "), c.By)
	}
	return report.TableBlock(t)
}

func comparisonSection(j *job, figs *figures) report.Section {
	c := j.cmp
	sec := report.Section{Title: c.Title(), ID: "comparison"}
	sec.Blocks = append(sec.Blocks, runsTable(j))
	sec.Blocks = append(sec.Blocks, figs.block(plots.NameHashComparison))
	flows := c.ByMethod[c.Methods[0]].Flows
	sec.Blocks = append(sec.Blocks, report.ParagraphBlock(fmt.Sprintf(
		"Values with [%g%% %s bootstrap interval; for AMI the normal interval with the bootstrap standard error] over the %s flows (%s replicates, seed %d, the same resampled flows for every %s; a replicate in which a metric is undefined is left out). Lossless drops, pause intervals and time, storms, CE marks at queues and the packet p99 delay are run-level numbers that cannot be resampled by flow: they have no interval. Imbalance comes from the member loads loadbalance.arrow measured (frame bytes), as in a single run's analysis. FCT slowdowns and the flow mean-delay p99 count every flow with data, an unfinished flow as slower than every completed one, and the packet p99 delay every injected packet, one not delivered as slower than every delivered one: a quantile that falls among them reads \"unfinished\" (in the figure, the run's name starts with ∞ and no point is drawn), so that a run never ranks ahead by leaving flows unfinished; \"flows completed\" is the share of the flows with data that completed (see Flow completion).",
		100*c.Level, c.Interval, units.FormatCount(int64(flows)), units.FormatCount(int64(c.B)), c.Seed, c.Noun())))
	cols := append(append([]string{"metric"}, c.Methods...), "best")
	t := report.Table{Columns: cols, Source: "tables/hash_comparison.csv"}
	for _, metric := range c.Metrics {
		num, unit := metricFormat(c, metric)
		f := func(v float64) string {
			if math.IsInf(v, 1) {
				return analysis.UnfinishedWord
			}
			return num(v)
		}
		label := metricLabel(metric)
		if unit != "" {
			label += " (" + unit + ")"
		}
		row := []string{label}
		for _, m := range c.Methods {
			e := c.ByMethod[m].Metrics[metric]
			cell := "-"
			if e.Defined() {
				cell = f(e.Value)
				if e.HasCI {
					cell += fmt.Sprintf(" [%s, %s]", f(e.Lo), f(e.Hi))
				}
			}
			row = append(row, cell)
		}
		b := c.Best[metric]
		best := b.Method
		switch {
		case !b.Ranked:
			best = "not ranked"
		case b.Tie:
			best = "tie"
		case b.Clear:
			best += " (clear)"
		case b.Significant:
			best += " (statistically)"
		}
		t.Rows = append(t.Rows, append(row, best))
	}
	sec.Blocks = append(sec.Blocks, report.TableBlock(t),
		report.ParagraphBlock("\"clear\": the 95% interval ("+c.Interval+"; for AMI, normal) of the paired difference between the best "+c.Noun()+" and the runner-up (the same resampled flows in both runs) excludes 0, and the difference is a practical one: at least 5% of the runner-up's value (for counts also at least 10 packets or pause intervals, or 1 storm; for a CoV also 0.01), 1 percentage point for a share, 0.05 for AMI. \"statistically\": the interval excludes 0 but the difference is smaller than that. \"tie\": several "+c.Noun()+"s share the best value, and none is best. Max/mean, CoV, Jain and idle members are byte-based, traffic-weighted over each tier's judged sets (at least 5 flows per member). The chi-square p-value tests the flow counts against uniform: it is evidence against uniformity, not a score, so it is reported and never ranked; methods are ranked on byte imbalance."))
	sec.Blocks = append(sec.Blocks, eventImbalanceBlocks(c)...)
	return sec
}

// eventImbalanceBlocks is the comparison after each event (analysis.EventImbalance):
// one table per event, a row per tier, a column per run.
func eventImbalanceBlocks(c *analysis.Comparison) []report.Block {
	var out []report.Block
	for _, e := range c.Events {
		t := report.Table{Caption: fmt.Sprintf("Imbalance after %s %s at %s (flows started from %s to %s)", e.Kind, e.Target,
			units.FormatInstantPs(e.TimePs), units.FormatInstantPs(e.FromPs), units.FormatInstantPs(e.ToPs)),
			Columns: append(append([]string{"max/mean after the event"}, c.Methods...), "best")}
		flows := []string{"flows in the window"}
		for _, m := range c.Methods {
			flows = append(flows, units.FormatCount(int64(e.Flows[m])))
		}
		t.Rows = append(t.Rows, append(flows, ""))
		for _, metric := range e.Metrics {
			row := []string{strings.TrimSuffix(strings.TrimPrefix(metric, "after."), ".max_mean")}
			for _, m := range c.Methods {
				v := e.ByMethod[m][metric]
				cell := "-"
				if v.Defined() {
					cell = units.FormatFloat(v.Value)
					if v.HasCI {
						cell += fmt.Sprintf(" [%s, %s]", units.FormatFloat(v.Lo), units.FormatFloat(v.Hi))
					}
				}
				row = append(row, cell)
			}
			b := e.Best[metric]
			best := b.Method
			switch {
			case b.Tie:
				best = "tie"
			case b.Clear:
				best += " (clear)"
			case b.Significant:
				best += " (statistically)"
			}
			t.Rows = append(t.Rows, append(row, best))
		}
		out = append(out, report.TableBlock(t))
	}
	if len(out) > 0 {
		out = append(out, report.ParagraphBlock("After each event that changed equal-cost sets: per tier, the byte max/mean over each set's live members (a member the event left down or drained is out) of the flows whose first packet left from the event's reconvergence to the next event, traffic-weighted over the tier's sets, with the 95% BCa interval over those flows; best and clear as above (the paired bootstrap). The flows are those that started after the event: a flow that began before it counts where its first packet went. Sets are not judged by flows per member here: few flows start in a window, so read the interval."))
	}
	return out
}

// topKeys returns the keys of m with the largest values, at most n, largest first
// (ties by key).
func topKeys(m map[string]int64, n int) []string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v > 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(a, b int) bool {
		if m[keys[a]] != m[keys[b]] {
			return m[keys[a]] > m[keys[b]]
		}
		return keys[a] < keys[b]
	})
	return keys[:min(n, len(keys))]
}

// countTable is a two-column table of a breakdown, largest first.
// tierWord is what the report calls the groups of a per-tier table: "role" in a
// run through a topology file, whose tables group switches by their roles
// (docs/analysis.md#roles), else "tier".
func tierWord(s *analysis.Summary) string {
	if s.Run.Topology.File != "" {
		return "role"
	}
	return "tier"
}

func countTable(caption, key string, m map[string]int64, total int64, n int) report.Table {
	t := report.Table{Caption: caption, Columns: []string{key, "drops"}, Source: "tables/drops_by.csv"}
	keys := topKeys(m, n)
	for _, k := range keys {
		t.Rows = append(t.Rows, []string{k, units.FormatShare(m[k], total)})
	}
	if nz := len(topKeys(m, len(m))); nz > len(keys) {
		t.Note = fmt.Sprintf("top %s of %s", units.FormatCount(int64(len(keys))), units.FormatCount(int64(nz)))
	}
	return t
}

func dropsSection(j *job, figs *figures) report.Section {
	d := j.sum.Drops
	sec := report.Section{Title: "Drops", ID: "drops"}
	if d.Total == 0 {
		sec.Blocks = append(sec.Blocks, report.NoDataBlock("No drops: no packet was dropped in this run."))
		return sec
	}
	sec.Blocks = append(sec.Blocks, figs.block(plots.NameDropsOverTime))
	sec.Blocks = append(sec.Blocks, report.KeyValueBlock("",
		report.KV{Key: "dropped packets", Value: units.FormatShare(d.Total, j.sum.Run.Injected)},
		report.KV{Key: "dropped bytes", Value: units.FormatBytes(float64(d.Bytes))},
		report.KV{Key: "lossless (headroom) drops", Value: units.FormatCount(d.Lossless)},
	))
	if d.Lossless > 0 {
		sec.Blocks = append(sec.Blocks, report.ParagraphBlock(fmt.Sprintf(
			"%s packets of a lossless class were dropped for lack of headroom: with correctly sized headroom this never happens, so the headroom (or Xoff) of the lossless pool is undersized for this fabric.", units.FormatCount(d.Lossless))))
	}
	sec.Blocks = append(sec.Blocks,
		report.TableBlock(countTable("By reason", "reason", analysis.Named(d.ByReason), d.Total, len(d.ByReason))),
		report.TableBlock(countTable("By "+tierWord(j.sum), tierWord(j.sum), analysis.Named(d.ByTier), d.Total, len(d.ByTier))),
		report.TableBlock(countTable("By traffic class", "tc", analysis.Named(d.ByTC), d.Total, len(d.ByTC))),
		report.TableBlock(countTable("Dropping nodes", "node", d.ByNode, d.Total, j.top)),
	)
	if len(d.TopFlows) > 0 {
		t := report.Table{Caption: "Flows with most drops", Source: "tables/top_flows.csv",
			Columns: []string{"flow", "src", "dst", "proto", "sport", "dport", "tc", "packets", "dropped"},
			Align:   []report.Align{report.AlignRight, report.AlignLeft, report.AlignLeft, report.AlignLeft}}
		n := min(j.top, len(d.TopFlows))
		for _, f := range d.TopFlows[:n] {
			t.Rows = append(t.Rows, []string{strconv.FormatInt(f.FlowID, 10), f.Src, f.Dst, protoName(f.Proto),
				strconv.Itoa(int(f.Sport)), strconv.Itoa(int(f.Dport)), strconv.Itoa(int(f.TC)), units.FormatCount(f.Packets), units.FormatShare(f.Dropped, f.Packets)})
		}
		if n < len(d.TopFlows) {
			t.Note = fmt.Sprintf("top %s of %s", units.FormatCount(int64(n)), units.FormatCount(int64(len(d.TopFlows))))
		}
		sec.Blocks = append(sec.Blocks, report.TableBlock(t))
	}
	return sec
}
func pfcSection(j *job, figs *figures) report.Section {
	p := j.sum.PFC
	sec := report.Section{Title: "PFC pauses", ID: "pfc"}
	if j.cmp != nil {
		sec.Blocks = append(sec.Blocks, pfcPerRun(j))
	}
	if p.PauseIntervals == 0 {
		sec.Blocks = append(sec.Blocks, report.NoDataBlock("No PFC pauses: no port was paused in this run."))
		return sec
	}
	sec.Blocks = append(sec.Blocks, figs.block(plots.NamePFCPauseTimeline))
	sec.Blocks = append(sec.Blocks, report.KeyValueBlock("",
		report.KV{Key: "PFC events", Value: units.FormatCount(int64(p.Events))},
		report.KV{Key: "pause intervals", Value: units.FormatCount(int64(p.PauseIntervals))},
		report.KV{Key: "paused port-classes", Value: units.FormatCount(int64(p.PausedPorts))},
		report.KV{Key: "paused time (sum over port-classes)", Value: units.FormatPs(float64(p.PausedPs))},
		report.KV{Key: "longest pause", Value: units.FormatPs(float64(p.LongestPs))},
		report.KV{Key: "episodes", Value: units.FormatCount(int64(p.Episodes))},
		report.KV{Key: "storms", Value: fmt.Sprintf("%s (depth >= 2 or lasting >= %s)", units.FormatCount(int64(len(p.Storms))), units.FormatPs(float64(p.StormDurationPs)))},
		report.KV{Key: "storm victim flows", Value: units.FormatCount(int64(p.StormVictims))},
	))
	if len(p.Storms) == 0 {
		sec.Blocks = append(sec.Blocks, report.NoDataBlock(fmt.Sprintf(
			"No PFC storms: no pause spread upstream and none lasted %s.", units.FormatPs(float64(p.StormDurationPs)))))
	} else {
		t := report.Table{Caption: "Storms", Source: "tables/pfc_storms.csv",
			Columns: []string{"start", "duration", "ports", "depth", "root", "tc", "victims"}}
		n := min(j.top, len(p.Storms))
		for _, e := range p.Storms[:n] {
			t.Rows = append(t.Rows, []string{units.FormatInstantPs(e.StartPs), units.FormatPs(float64(e.DurationPs)), units.FormatCount(int64(e.Ports)),
				strconv.Itoa(e.Depth), e.Root, strconv.Itoa(int(e.TC)), units.FormatCount(int64(e.Victims))})
		}
		if n < len(p.Storms) {
			t.Note = fmt.Sprintf("first %s of %s", units.FormatCount(int64(n)), units.FormatCount(int64(len(p.Storms))))
		}
		sec.Blocks = append(sec.Blocks, report.TableBlock(t))
	}
	sec.Blocks = append(sec.Blocks, report.ParagraphBlock(analysis.StormRule+" "+analysis.StormChainRule+
		" The root is the congested port whose pause heads the deepest chain. Victims are flows that crossed a paused port while it was paused."))
	t := report.Table{Caption: "Most paused port-classes", Source: "tables/pfc_ports.csv",
		Columns: []string{"node:port/tc", "paused by", "intervals", "paused", "longest", "paused (% of run)"}}
	n := min(j.top, len(p.Ports))
	for _, pp := range p.Ports[:n] {
		t.Rows = append(t.Rows, []string{pp.PortName.String(), pp.Peer, units.FormatCount(int64(pp.Intervals)), units.FormatPs(float64(pp.TotalPs)),
			units.FormatPs(float64(pp.LongestPs)), units.FormatFraction(pp.Fraction)})
	}
	if n < len(p.Ports) {
		t.Note = fmt.Sprintf("top %s of %s", units.FormatCount(int64(n)), units.FormatCount(int64(len(p.Ports))))
	}
	sec.Blocks = append(sec.Blocks, report.TableBlock(t))
	return sec
}
func bufferSection(j *job, figs *figures) report.Section {
	sec := report.Section{Title: "Buffer occupancy", ID: "buffer"}
	sec.Blocks = append(sec.Blocks, figs.block(plots.NameBufferOccupancy))
	if _, drawn := figs.drawn[plots.NameBufferOccupancy]; drawn && len(j.sum.Buffer) > 0 {
		t := report.Table{Caption: "Peak occupancy (shared + headroom) of the busiest switches' pools, highest peak first", Source: "tables/buffer_occupancy.csv",
			Columns: []string{"switch", "pool", "peak"}}
		series := slices.Clone(j.sum.Buffer)
		slices.SortStableFunc(series, func(a, b analysis.BufferSeries) int { return cmp.Compare(b.Peak, a.Peak) })
		for _, b := range series {
			if b.Peak == 0 {
				continue
			}
			t.Rows = append(t.Rows, []string{b.Node, strconv.Itoa(int(b.Pool)), units.FormatBytes(float64(b.Peak))})
		}
		sec.Blocks = append(sec.Blocks, report.TableBlock(t))
	}
	return sec
}
func ecmpSection(j *job, figs *figures) report.Section {
	s := j.sum
	sec := report.Section{Title: "ECMP load balance", ID: "ecmp"}
	sec.Blocks = append(sec.Blocks, figs.block(plots.NameECMPMemberLoad))
	if _, drawn := figs.drawn[plots.NameECMPMemberLoad]; drawn {
		if _, unjudged := ecmpLoad(s.Imbalance); unjudged > 0 {
			sec.Blocks = append(sec.Blocks, report.ParagraphBlock(fmt.Sprintf(
				"The figure shows the judged sets only, leaving out %s with fewer than %d flows per member (tables/ecmp_sets.csv lists them, judged false).",
				cli.Plural(int64(unjudged), "set"), analysis.MinFlowsPerMember)))
		}
	}
	if s.Imbalance != nil && len(s.Imbalance.Tiers) > 0 {
		word := tierWord(s)
		t := report.Table{Caption: "Imbalance per " + word + " (bytes; chi-square on flow counts)", Source: "tables/ecmp_tiers.csv",
			Columns: []string{word, "judged sets", "max/mean", "CoV", "Jain", "idle members", "chi-square p", "worst set (max/mean)"}}
		var notes []string
		for _, tier := range s.Imbalance.TierNames() {
			ti := s.Imbalance.Tiers[tier]
			if !ti.Judged {
				t.Rows = append(t.Rows, []string{tier.String(), fmt.Sprintf("0 of %d", ti.Unjudged), "-", "-", "-", "-", "-", "-"})
				notes = append(notes, sentenceCase(ti.Reason)+".")
				continue
			}
			t.Rows = append(t.Rows, []string{tier.String(), fmt.Sprintf("%d of %d", ti.Sets, ti.Sets+ti.Unjudged), units.FormatFloat(ti.MaxMean), units.FormatFloat(ti.CoV), units.FormatFloat(ti.Jain),
				units.FormatFraction(ti.IdleFraction), units.FormatFloat(ti.Chi2P), fmt.Sprintf("%s (%s)", ti.Bytes.Worst.MaxMeanSet, units.FormatFloat(ti.Bytes.Worst.MaxMean))})
		}
		sec.Blocks = append(sec.Blocks, report.TableBlock(t), report.ParagraphBlock(fmt.Sprintf(
			"Max/mean, CoV, Jain's index and idle members are means over the %s's judged sets weighted by their bytes (max/mean 1, CoV 0 and Jain 1 are perfect); a set is judged when it carried at least %d flows per member. The chi-square p-value tests whether the flows were spread uniformly (small: not uniform).",
			word, analysis.MinFlowsPerMember)))
		for _, n := range notes {
			sec.Blocks = append(sec.Blocks, report.NoDataBlock(n))
		}
	}
	pol := s.Polarization
	switch {
	case pol.Flows == 0:
		sec.Blocks = append(sec.Blocks, report.NoDataBlock("No flow crossed both the rack and the fabric tier: no polarization to measure."))
	case !pol.Judged:
		sec.Blocks = append(sec.Blocks, report.NoDataBlock(sentenceCase(pol.Reason)+"."))
	default:
		kv := []report.KV{
			{Key: "flows crossing both tiers", Value: units.FormatNumber(pol.Flows)},
			{Key: "adjusted mutual information (AMI)", Value: pol.AMIEstimate.String()},
			{Key: "AMI within each source rack", Value: pol.AMIByRackEstimate.String()},
			{Key: "normalized mutual information, I / min(H)", Value: units.FormatFloat(pol.NMI)},
		}
		sec.Blocks = append(sec.Blocks, report.KeyValueBlock("Polarization (rack vs fabric member choice)", kv...), report.ParagraphBlock(fmt.Sprintf(
			"AMI (adjusted mutual information, Vinh, Epps and Bailey 2010, normalized by min(H)) is 0 in expectation when the fabric's choice is independent of the rack's and 1 when one determines the other (hash polarization: some fabric uplinks never used); intervals are %s 95%% bootstrap intervals over flows (the estimate plus or minus 1.96 bootstrap standard errors, capped at 1: see docs/analysis.md#comparisons for why not BCa). Plain NMI is biased upward on finite samples and is shown only for reference.",
			s.Bootstrap.Interval)))
	}
	if t, ok := stageTable(s.PolarizationStages); ok {
		sec.Blocks = append(sec.Blocks, report.TableBlock(t), report.ParagraphBlock(
			"A stage is a switch's position on a flow's path (1: the source host's switch); each row compares the members chosen at two consecutive ECMP stages over the flows that made both choices (stages.arrow: docs/analysis.md#polarization-between-stages). AMI 1: the later choice follows the earlier one, so some of the later set's members never see this traffic; within each switch: the same measure among the flows of one switch of the earlier stage (a hash whose salt cancels out polarizes there while the pooled AMI reads 0)."))
	}
	return sec
}

// stageTable is the ECMP section's table of polarization per pair of consecutive
// stages, for a fabric whose stages go beyond the rack and fabric choices (a
// stages.arrow); ok is false otherwise (the rack and fabric block says it all).
func stageTable(stages []analysis.StagePolarization) (report.Table, bool) {
	t := report.Table{Caption: "Polarization between consecutive ECMP stages", Source: "tables/polarization_stages.csv",
		Columns: []string{"stages", "flows", "AMI", "AMI within each switch", "NMI"}}
	deep := false
	for _, sp := range stages {
		deep = deep || sp.FromStagesArrow
		if !sp.Judged {
			t.Rows = append(t.Rows, []string{sp.Name(), units.FormatNumber(sp.Flows), "- (" + sp.Reason + ")", "-", "-"})
			continue
		}
		t.Rows = append(t.Rows, []string{sp.Name(), units.FormatNumber(sp.Flows), sp.AMIEstimate.String(), sp.AMIBySwitchEstimate.String(), units.FormatFloat(sp.NMI)})
	}
	return t, deep && len(t.Rows) > 0
}
func ecnSection(j *job, figs *figures) report.Section {
	e := j.sum.ECN
	sec := report.Section{Title: "ECN marking", ID: "ecn"}
	if j.cmp != nil {
		sec.Blocks = append(sec.Blocks, ecnPerMethod(j.cmp))
	}
	if e.Marked == 0 && e.DeliveredCE == 0 {
		sec.Blocks = append(sec.Blocks, report.NoDataBlock("No ECN marks: no queue marked a packet CE in this run."))
		return sec
	}
	sec.Blocks = append(sec.Blocks, figs.block(plots.NameECNMarking))
	sec.Blocks = append(sec.Blocks, report.KeyValueBlock("",
		report.KV{Key: "CE marks at egress queues", Value: units.FormatCount(e.Marked)},
		report.KV{Key: "of packets sent by switch ports", Value: units.FormatFraction(e.Fraction)},
		report.KV{Key: "delivered packets marked CE", Value: units.FormatShare(e.DeliveredCE, e.Delivered)},
		report.KV{Key: "marking queues", Value: units.FormatCount(int64(len(e.Queues)))},
	))
	if len(e.Queues) > 0 {
		t := report.Table{Caption: "Queues marking most", Source: "tables/ecn_queues.csv",
			Columns: []string{"node:port/tc", tierWord(j.sum), "sent", "marked", "fraction"}}
		n := min(j.top, len(e.Queues))
		for _, q := range e.Queues[:n] {
			t.Rows = append(t.Rows, []string{q.PortName.String(), q.Tier.String(), units.FormatCount(q.TxPackets), units.FormatCount(q.Marked), units.FormatFraction(q.Fraction)})
		}
		if n < len(e.Queues) {
			t.Note = fmt.Sprintf("top %s of %s", units.FormatCount(int64(n)), units.FormatCount(int64(len(e.Queues))))
		}
		sec.Blocks = append(sec.Blocks, report.TableBlock(t))
	}
	if e.Note != "" {
		sec.Blocks = append(sec.Blocks, report.ParagraphBlock(sentence(e.Note)))
	}
	return sec
}

// ecnPerMethod is the ECN table of a comparison: per method the CE marks applied at
// egress queues and the delivered packets that arrived CE-marked, with their share of
// the delivered packets (bootstrap interval).
func ecnPerMethod(c *analysis.Comparison) report.Block {
	t := report.Table{Caption: "CE marking per method", Source: "tables/hash_comparison.csv",
		Columns: []string{"method", "CE marks at queues", "delivered CE-marked", "share of delivered"}}
	for _, m := range c.Methods {
		mm := c.ByMethod[m].Metrics
		t.Rows = append(t.Rows, []string{m, analysis.FormatEstimate(analysis.MetricECNMarked, mm[analysis.MetricECNMarked]),
			analysis.FormatEstimate(analysis.MetricDeliveredCE, mm[analysis.MetricDeliveredCE]), analysis.FormatEstimate(analysis.MetricCEFraction, mm[analysis.MetricCEFraction])})
	}
	return report.TableBlock(t)
}

// sentenceCase capitalizes the first letter of s.
func sentenceCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func delaySection(j *job, figs *figures) report.Section {
	d := j.sum.Delay
	sec := report.Section{Title: "One-way delay", ID: "delay"}
	sec.Blocks = append(sec.Blocks, figs.block(plots.NameDelayCDF))
	if d.All.Packets == 0 {
		return sec
	}
	lossless := j.inputs[j.ref].cfg.Switch.PfcEnabled
	t := report.Table{Caption: "Delay percentiles per traffic class (injection to delivery)", Source: "tables/delay_cdf.csv",
		Columns: []string{"class", "packets", "p50", "p90", "p99", "p99.9", "max (bucket edge)"}}
	rows := append(append([]analysis.DelayCDF(nil), d.Classes...), d.All)
	for i, c := range rows {
		if c.Packets == 0 {
			continue
		}
		label := "TC " + strconv.Itoa(int(c.TC))
		if i == len(rows)-1 {
			label = "all"
		} else if containsInt(lossless, int(c.TC)) {
			label += " (lossless)"
		}
		t.Rows = append(t.Rows, []string{label, units.FormatCount(c.Packets), units.FormatPs(c.P50Ps), units.FormatPs(c.P90Ps), units.FormatPs(c.P99Ps), units.FormatPs(c.P999Ps), units.FormatPs(c.MaxPs)})
	}
	sec.Blocks = append(sec.Blocks, report.TableBlock(t))
	return sec
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// familyMix says how the trace's IP packets split between IPv4 and IPv6.
func familyMix(info analysis.RunInfo) string {
	ip := info.TraceIPv4 + info.TraceIPv6
	if ip == 0 {
		return "-"
	}
	return fmt.Sprintf("IPv4 %s, IPv6 %s", units.FormatShare(info.TraceIPv4, ip), units.FormatShare(info.TraceIPv6, ip))
}
