package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tracefabric/tracefabric/analysis"
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
	if j.cmp == nil {
		return append([]string(nil), j.sum.Headline...)
	}
	c := j.cmp
	h := append([]string(nil), c.Headline...)
	var drops, lossless, storms []string
	var anyLossless bool
	for _, m := range c.Methods {
		mm := c.ByMethod[m].Metrics
		drops = append(drops, fmt.Sprintf("%s %s", m, fmtCount(int64(mm[analysis.MetricDrops].Value))))
		l := int64(mm[analysis.MetricLossless].Value)
		anyLossless = anyLossless || l > 0
		lossless = append(lossless, fmt.Sprintf("%s %s", m, fmtCount(l)))
		storms = append(storms, fmt.Sprintf("%s %s", m, fmtCount(int64(mm[analysis.MetricStorms].Value))))
	}
	line := "Dropped packets per method: " + strings.Join(drops, ", ") + "; "
	if anyLossless {
		line += "lossless (headroom) drops: " + strings.Join(lossless, ", ") + "."
	} else {
		line += "no lossless (headroom) drops in any run."
	}
	h = append(h, line, "PFC storms per method: "+strings.Join(storms, ", ")+".")
	ref := methodName(c, j.ref)
	for _, s := range j.sum.Headline {
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
		r.Subtitle = fmt.Sprintf("%s runs of one trace: %s", fmtCount(int64(len(dirs))), strings.Join(dirs, ", "))
	}
	r.Sections = append(r.Sections, runSection(j))
	if j.cmp != nil {
		r.Sections = append(r.Sections, comparisonSection(j, figs))
	}
	r.Sections = append(r.Sections,
		dropsSection(j, figs), pfcSection(j, figs), bufferSection(j, figs),
		ecmpSection(j, figs), ecnSection(j, figs), delaySection(j, figs))
	return r
}

func runSection(j *job) report.Section {
	s, info := j.sum, j.sum.Run
	sec := report.Section{Title: "Run", ID: "run"}
	if j.cmp != nil {
		sec.Blocks = append(sec.Blocks, report.ParagraphBlock(fmt.Sprintf(
			"The comparison covers every run; the sections after it detail the %s run (%s).", methodName(j.cmp, j.ref), j.inputs[j.ref].dir)))
	}
	kv := []report.KV{
		{Key: "run directory", Value: j.inputs[j.ref].dir},
		{Key: "hash method", Value: info.Method},
		{Key: "seed", Value: strconv.FormatUint(info.Seed, 10)},
		{Key: "trace packets", Value: fmtCount(info.TracePackets)},
		{Key: "trace flows", Value: fmtCount(info.TraceFlows)},
		{Key: "trace families", Value: familyMix(info)},
		{Key: "injected packets", Value: fmtCount(info.Injected)},
		{Key: "delivered packets", Value: fmtCount(info.Delivered)},
		{Key: "dropped packets", Value: fmtCount(s.Drops.Total)},
		{Key: "lossless drops", Value: fmtCount(s.Drops.Lossless)},
		{Key: "undrained packets", Value: fmtCount(info.Undrained)},
		{Key: "CE marks (at egress queues)", Value: fmtCount(info.CEMarked)},
		{Key: "PFC frames", Value: fmtCount(info.PFCFrames)},
		{Key: "simulated time", Value: fmtTimePs(info.SimPs)},
	}
	if cmd := j.inputs[j.ref].meta.Command; len(cmd) > 0 {
		kv = append(kv, report.KV{Key: "command", Value: strings.Join(cmd, " ")})
	}
	sec.Blocks = append(sec.Blocks, report.KeyValueBlock("", kv...))
	if len(s.Warnings) > 0 {
		sec.Blocks = append(sec.Blocks, report.ParagraphBlock("Warnings: "+strings.Join(s.Warnings, "; ")+"."))
	}
	return sec
}

// fmtMetric formats a comparison metric's value for its kind.
func fmtMetric(metric string, v float64) string {
	switch {
	case strings.HasSuffix(metric, "_ps"):
		return fmtPs(v)
	case strings.HasSuffix(metric, ".idle_fraction"):
		return fmtFrac(v)
	case metric == analysis.MetricDrops || metric == analysis.MetricLossless || metric == analysis.MetricStorms:
		return fmtCount(int64(v + 0.5))
	}
	return fmtFloat(v)
}

func comparisonSection(j *job, figs *figures) report.Section {
	c := j.cmp
	sec := report.Section{Title: "Hash methods compared", ID: "comparison"}
	sec.Blocks = append(sec.Blocks, figs.block(plots.NameHashComparison))
	flows := c.ByMethod[c.Methods[0]].Flows
	sec.Blocks = append(sec.Blocks, report.ParagraphBlock(fmt.Sprintf(
		"Values with [%g%% bootstrap interval] over the %s flows (%s replicates, seed %d, the same resampled flows for every method). Lossless drops, pause time, storms and the packet p99 delay are run-level numbers that cannot be resampled by flow: they have no interval.",
		100*c.Level, fmtCount(int64(flows)), fmtCount(int64(c.B)), c.Seed)))
	cols := append(append([]string{"metric"}, c.Methods...), "best")
	t := report.Table{Columns: cols, Source: "tables/hash_comparison.csv"}
	for _, metric := range c.Metrics {
		row := []string{metricLabel(metric)}
		for _, m := range c.Methods {
			e := c.ByMethod[m].Metrics[metric]
			cell := fmtMetric(metric, e.Value)
			if e.HasCI {
				cell += fmt.Sprintf(" [%s, %s]", fmtMetric(metric, e.Lo), fmtMetric(metric, e.Hi))
			}
			row = append(row, cell)
		}
		b := c.Best[metric]
		best := b.Method
		if b.Clear {
			best += " (clear)"
		}
		t.Rows = append(t.Rows, append(row, best))
	}
	sec.Blocks = append(sec.Blocks, report.TableBlock(t),
		report.ParagraphBlock("\"clear\": the best method's interval does not overlap the runner-up's. Max/mean, CoV, Jain and idle members are byte-based, traffic-weighted over each tier's sets; the chi-square p-value tests the flow counts against uniform (higher is better)."))
	return sec
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
func countTable(caption, key string, m map[string]int64, total int64, n int) report.Table {
	t := report.Table{Caption: caption, Columns: []string{key, "drops"}, Source: "tables/drops_by.csv"}
	keys := topKeys(m, n)
	for _, k := range keys {
		t.Rows = append(t.Rows, []string{k, fmtShare(m[k], total)})
	}
	if nz := len(topKeys(m, len(m))); nz > len(keys) {
		t.Note = fmt.Sprintf("top %s of %s", fmtCount(int64(len(keys))), fmtCount(int64(nz)))
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
		report.KV{Key: "dropped packets", Value: fmtShare(d.Total, j.sum.Run.Injected)},
		report.KV{Key: "dropped bytes", Value: fmtBytes(float64(d.Bytes))},
		report.KV{Key: "lossless (headroom) drops", Value: fmtCount(d.Lossless)},
	))
	if d.Lossless > 0 {
		sec.Blocks = append(sec.Blocks, report.ParagraphBlock(fmt.Sprintf(
			"%s packets of a lossless class were dropped for lack of headroom: with correctly sized headroom this never happens, so the headroom (or Xoff) of the lossless pool is undersized for this fabric.", fmtCount(d.Lossless))))
	}
	sec.Blocks = append(sec.Blocks,
		report.TableBlock(countTable("By reason", "reason", d.ByReason, d.Total, len(d.ByReason))),
		report.TableBlock(countTable("By tier", "tier", d.ByTier, d.Total, len(d.ByTier))),
		report.TableBlock(countTable("By traffic class", "tc", d.ByTC, d.Total, len(d.ByTC))),
		report.TableBlock(countTable("Dropping nodes", "node", d.ByNode, d.Total, j.top)),
	)
	if len(d.TopFlows) > 0 {
		t := report.Table{Caption: "Flows with most drops", Source: "tables/top_flows.csv",
			Columns: []string{"flow", "src", "dst", "proto", "sport", "dport", "tc", "packets", "dropped"},
			Align:   []report.Align{report.AlignRight, report.AlignLeft, report.AlignLeft, report.AlignLeft}}
		n := min(j.top, len(d.TopFlows))
		for _, f := range d.TopFlows[:n] {
			t.Rows = append(t.Rows, []string{strconv.FormatInt(f.FlowID, 10), f.Src, f.Dst, protoName(f.Proto),
				strconv.Itoa(int(f.Sport)), strconv.Itoa(int(f.Dport)), strconv.Itoa(int(f.TC)), fmtCount(f.Packets), fmtShare(f.Dropped, f.Packets)})
		}
		if n < len(d.TopFlows) {
			t.Note = fmt.Sprintf("top %s of %s", fmtCount(int64(n)), fmtCount(int64(len(d.TopFlows))))
		}
		sec.Blocks = append(sec.Blocks, report.TableBlock(t))
	}
	return sec
}

func pfcSection(j *job, figs *figures) report.Section {
	p := j.sum.PFC
	sec := report.Section{Title: "PFC pauses", ID: "pfc"}
	if p.PauseIntervals == 0 {
		sec.Blocks = append(sec.Blocks, report.NoDataBlock("No PFC pauses: no port was paused in this run."))
		return sec
	}
	sec.Blocks = append(sec.Blocks, figs.block(plots.NamePFCPauseTimeline))
	sec.Blocks = append(sec.Blocks, report.KeyValueBlock("",
		report.KV{Key: "PFC events", Value: fmtCount(int64(p.Events))},
		report.KV{Key: "pause intervals", Value: fmtCount(int64(p.PauseIntervals))},
		report.KV{Key: "paused port-classes", Value: fmtCount(int64(p.PausedPorts))},
		report.KV{Key: "paused time (sum over port-classes)", Value: fmtPs(float64(p.PausedPs))},
		report.KV{Key: "longest pause", Value: fmtPs(float64(p.LongestPs))},
		report.KV{Key: "episodes", Value: fmtCount(int64(p.Episodes))},
		report.KV{Key: "storms", Value: fmt.Sprintf("%s (depth >= 2 or lasting >= %s)", fmtCount(int64(len(p.Storms))), fmtPs(float64(p.StormDurationPs)))},
		report.KV{Key: "storm victim flows", Value: fmtCount(int64(p.StormVictims))},
	))
	if len(p.Storms) == 0 {
		sec.Blocks = append(sec.Blocks, report.NoDataBlock(fmt.Sprintf(
			"No PFC storms: no pause spread upstream and none lasted %s.", fmtPs(float64(p.StormDurationPs)))))
	} else {
		t := report.Table{Caption: "Storms", Source: "tables/pfc_storms.csv",
			Columns: []string{"start", "duration", "ports", "depth", "root", "tc", "victims"}}
		n := min(j.top, len(p.Storms))
		for _, e := range p.Storms[:n] {
			t.Rows = append(t.Rows, []string{fmtTimePs(e.StartPs), fmtPs(float64(e.DurationPs)), fmtCount(int64(e.Ports)),
				strconv.Itoa(e.Depth), e.Root, strconv.Itoa(int(e.TC)), fmtCount(int64(e.Victims))})
		}
		if n < len(p.Storms) {
			t.Note = fmt.Sprintf("first %s of %s", fmtCount(int64(n)), fmtCount(int64(len(p.Storms))))
		}
		sec.Blocks = append(sec.Blocks, report.TableBlock(t), report.ParagraphBlock(
			"A storm is a set of overlapping pause intervals linked hop by hop (the paused node itself pausing its upstream); depth is the longest chain in hops, root the congested port whose pause started it. Victims are flows that crossed a paused port while it was paused."))
	}
	t := report.Table{Caption: "Most paused port-classes", Source: "tables/pfc_ports.csv",
		Columns: []string{"node:port/tc", "paused by", "intervals", "paused", "longest", "paused (% of run)"}}
	n := min(j.top, len(p.Ports))
	for _, pp := range p.Ports[:n] {
		t.Rows = append(t.Rows, []string{pp.PortClass.String(), pp.Peer, fmtCount(int64(pp.Intervals)), fmtPs(float64(pp.TotalPs)),
			fmtPs(float64(pp.LongestPs)), fmtFrac(pp.Fraction)})
	}
	if n < len(p.Ports) {
		t.Note = fmt.Sprintf("top %s of %s", fmtCount(int64(n)), fmtCount(int64(len(p.Ports))))
	}
	sec.Blocks = append(sec.Blocks, report.TableBlock(t))
	return sec
}

func bufferSection(j *job, figs *figures) report.Section {
	sec := report.Section{Title: "Buffer occupancy", ID: "buffer"}
	sec.Blocks = append(sec.Blocks, figs.block(plots.NameBufferOccupancy))
	if _, drawn := figs.drawn[plots.NameBufferOccupancy]; drawn && len(j.sum.Buffer) > 0 {
		t := report.Table{Caption: "Peak occupancy (shared + headroom) of the busiest switches' pools, busiest switch first", Source: "tables/buffer_occupancy.csv",
			Columns: []string{"switch", "pool", "peak"}}
		for _, b := range j.sum.Buffer {
			if b.Peak == 0 {
				continue
			}
			t.Rows = append(t.Rows, []string{b.Node, strconv.Itoa(int(b.Pool)), fmtBytes(float64(b.Peak))})
		}
		sec.Blocks = append(sec.Blocks, report.TableBlock(t))
	}
	return sec
}

func ecmpSection(j *job, figs *figures) report.Section {
	s := j.sum
	sec := report.Section{Title: "ECMP load balance", ID: "ecmp"}
	sec.Blocks = append(sec.Blocks, figs.block(plots.NameECMPMemberLoad))
	if s.Imbalance != nil && len(s.Imbalance.Tiers) > 0 {
		t := report.Table{Caption: "Imbalance per tier (bytes; chi-square on flow counts)", Source: "tables/ecmp_tiers.csv",
			Columns: []string{"tier", "sets", "max/mean", "CoV", "Jain", "idle members", "chi-square p", "worst set (max/mean)"}}
		for _, tier := range s.Imbalance.TierNames() {
			ti := s.Imbalance.Tiers[tier]
			if ti.Sets == 0 {
				continue
			}
			t.Rows = append(t.Rows, []string{tier, fmtCount(int64(ti.Sets)), fmtFloat(ti.MaxMean), fmtFloat(ti.CoV), fmtFloat(ti.Jain),
				fmtFrac(ti.IdleFraction), fmtFloat(ti.Chi2P), fmt.Sprintf("%s (%s)", ti.Bytes.Worst.MaxMeanSet, fmtFloat(ti.Bytes.Worst.MaxMean))})
		}
		sec.Blocks = append(sec.Blocks, report.TableBlock(t), report.ParagraphBlock(
			"Max/mean, CoV, Jain's index and idle members are means over the tier's sets weighted by their bytes (max/mean 1, CoV 0 and Jain 1 are perfect); the chi-square p-value tests whether the flows were spread uniformly (small: not uniform)."))
	}
	if pol := s.Polarization; pol.Flows > 0 {
		sec.Blocks = append(sec.Blocks, report.KeyValueBlock("Polarization (rack vs fabric member choice)",
			report.KV{Key: "flows crossing both tiers", Value: fmtCount(int64(pol.Flows))},
			report.KV{Key: "normalized mutual information", Value: fmtFloat(pol.NMI)},
		), report.ParagraphBlock("NMI 0: the fabric's choice is independent of the rack's; 1: one determines the other (hash polarization: some fabric uplinks never used)."))
	} else {
		sec.Blocks = append(sec.Blocks, report.NoDataBlock("No flow crossed both the rack and the fabric tier: no polarization to measure."))
	}
	return sec
}

func ecnSection(j *job, figs *figures) report.Section {
	e := j.sum.ECN
	sec := report.Section{Title: "ECN marking", ID: "ecn"}
	if e.Marked == 0 && e.DeliveredCE == 0 {
		sec.Blocks = append(sec.Blocks, report.NoDataBlock("No ECN marks: no queue marked a packet CE in this run."))
		return sec
	}
	sec.Blocks = append(sec.Blocks, figs.block(plots.NameECNMarking))
	sec.Blocks = append(sec.Blocks, report.KeyValueBlock("",
		report.KV{Key: "CE marks at egress queues", Value: fmtCount(e.Marked)},
		report.KV{Key: "of packets sent by switch ports", Value: fmtFrac(e.Fraction)},
		report.KV{Key: "delivered packets marked CE", Value: fmtShare(e.DeliveredCE, e.Delivered)},
		report.KV{Key: "marking queues", Value: fmtCount(int64(len(e.Queues)))},
	))
	if len(e.Queues) > 0 {
		t := report.Table{Caption: "Queues marking most", Source: "tables/ecn_queues.csv",
			Columns: []string{"node:port/tc", "tier", "sent", "marked", "fraction"}}
		n := min(j.top, len(e.Queues))
		for _, q := range e.Queues[:n] {
			t.Rows = append(t.Rows, []string{q.PortClass.String(), q.Tier, fmtCount(q.TxPackets), fmtCount(q.Marked), fmtFrac(q.Fraction)})
		}
		if n < len(e.Queues) {
			t.Note = fmt.Sprintf("top %s of %s", fmtCount(int64(n)), fmtCount(int64(len(e.Queues))))
		}
		sec.Blocks = append(sec.Blocks, report.TableBlock(t))
	}
	if e.Note != "" {
		sec.Blocks = append(sec.Blocks, report.ParagraphBlock(sentence(e.Note)))
	}
	return sec
}

func delaySection(j *job, figs *figures) report.Section {
	d := j.sum.Delay
	sec := report.Section{Title: "One-way delay", ID: "delay"}
	sec.Blocks = append(sec.Blocks, figs.block(plots.NameDelayCDF))
	if d.All.Packets == 0 {
		return sec
	}
	lossless := j.inputs[j.ref].meta.LosslessClasses
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
		t.Rows = append(t.Rows, []string{label, fmtCount(c.Packets), fmtPs(c.P50Ps), fmtPs(c.P90Ps), fmtPs(c.P99Ps), fmtPs(c.P999Ps), fmtPs(c.MaxPs)})
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
	return fmt.Sprintf("IPv4 %s (%s), IPv6 %s (%s)", fmtCount(info.TraceIPv4), fmtFrac(float64(info.TraceIPv4)/float64(ip)),
		fmtCount(info.TraceIPv6), fmtFrac(float64(info.TraceIPv6)/float64(ip)))
}
