package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/plotter"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/cmd/internal/cli"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/plots"
	"github.com/tracefabric/tracefabric/records"
)

// This file adapts analysis results to the plain inputs of package plots. It
// computes nothing new: it renames and selects (times are units.Time on both sides).

// figureSpec is one figure of the report: its name and how to draw it.
type figureSpec struct {
	name string
	draw func() (*plots.Figure, error)
}

// figureSpecs lists the figures of a job in report order.
func figureSpecs(j *job) []figureSpec {
	s, cfg := j.sum, j.inputs[j.ref].cfg
	var specs []figureSpec
	if j.cmp != nil {
		specs = append(specs, figureSpec{plots.NameHashComparison, func() (*plots.Figure, error) {
			return plots.HashComparison(comparisonFigure(j.cmp), plots.Options{})
		}})
	}
	specs = append(specs,
		figureSpec{plots.NameFabricHeat, func() (*plots.Figure, error) { return fabricHeatFigure(j.inputs[j.ref]) }},
		figureSpec{plots.NameDropsOverTime, func() (*plots.Figure, error) {
			return plots.DropsOverTime(dropBins(s.Drops.Rate), plots.Options{})
		}},
		figureSpec{plots.NamePFCPauseTimeline, func() (*plots.Figure, error) {
			g := pauseGrid(s.PFC.Timeline)
			g.Total = s.PFC.PausedPorts
			return plots.PFCPauseTimeline(g, plots.Options{})
		}},
		figureSpec{plots.NameBufferOccupancy, func() (*plots.Figure, error) {
			f, err := plots.BufferOccupancy(poolOccupancy(s.Buffer, cfg.Switch.BufferStatsReportInterval), plots.Options{})
			return f, unsampledQueues(err, j.inputs[j.ref].run.Queues, j.inputs[j.ref].run.Nodes, cfg.Switch.BufferStatsReportInterval)
		}},
		figureSpec{plots.NameECMPMemberLoad, func() (*plots.Figure, error) {
			l, unjudged := ecmpLoad(s.Imbalance)
			if len(l.Sets) == 0 && unjudged > 0 {
				return nil, &plots.NoDataError{Figure: plots.NameECMPMemberLoad, Reason: fmt.Sprintf(
					"no equal-cost set carried enough flows to be judged (at least %d per member; the %s are in tables/ecmp_sets with judged false)",
					analysis.MinFlowsPerMember, cli.Plural(int64(unjudged), "unjudged set"))}
			}
			return plots.ECMPMemberLoad(l, plots.Options{})
		}},
		figureSpec{plots.NameECNMarking, func() (*plots.Figure, error) {
			return plots.ECNMarking(ecnMarks(s.ECN), plots.Options{})
		}},
		figureSpec{plots.NameDelayCDF, func() (*plots.Figure, error) {
			return plots.DelayCDF(delayClasses(j.inputs[j.ref].run.Delay, cfg.Switch.PfcEnabled), plots.Options{})
		}},
		figureSpec{plots.NameFCTSlowdown, func() (*plots.Figure, error) {
			return plots.FCTSlowdown(slowdownSeries(j), plots.Options{})
		}},
	)
	if _, tr := closedRun(j); tr != nil && (tr.Events["cnp"] > 0 || tr.Events["rate_cut"] > 0) {
		specs = append(specs, figureSpec{plots.NameCNPOverTime, func() (*plots.Figure, error) {
			return plots.CNPOverTime(cnpBins(tr.CNPOverTime), plots.Options{})
		}})
	}
	return specs
}

// closedRun is the closed-loop run the report's Closed loop section details: the
// reference run when it is closed loop, else the first closed-loop run; -1 and nil
// when every run is open loop.
func closedRun(j *job) (int, *analysis.TransportSummary) {
	if j.sum.Transport != nil {
		return j.ref, j.sum.Transport
	}
	if j.cmp != nil {
		for i, m := range j.cmp.Methods {
			if tr := j.cmp.ByMethod[m].ClosedLoop; tr != nil {
				return i, tr
			}
		}
	}
	return -1, nil
}

// slowdownSeries is the fct_slowdown figure's input: one series per transport of the
// run (or its "all" rows when it has one transport); when comparing, one per run (its
// "all" rows), named as the comparison names them.
func slowdownSeries(j *job) plots.Slowdown {
	var s plots.Slowdown
	add := func(label string, rows []analysis.SlowdownRow) {
		sr := plots.SlowdownSeries{Label: label}
		for _, r := range rows {
			if r.Name == "all" {
				continue
			}
			if len(s.Series) == 0 {
				s.Buckets = append(s.Buckets, bucketLabel(r.FCTBucket))
			}
			sr.P50 = append(sr.P50, valueOrNaN(r.P50))
			sr.P99 = append(sr.P99, valueOrNaN(r.P99))
			sr.Complete = append(sr.Complete, float64(r.Complete))
		}
		s.Series = append(s.Series, sr)
	}
	byTransport := func(rows []analysis.SlowdownRow) map[string][]analysis.SlowdownRow {
		m := map[string][]analysis.SlowdownRow{}
		for _, r := range rows {
			m[r.Transport] = append(m[r.Transport], r)
		}
		return m
	}
	if j.cmp != nil {
		for _, m := range j.cmp.Methods {
			add(m, byTransport(j.cmp.ByMethod[m].FCT.Rows)["all"])
		}
		return s
	}
	rows := j.sum.FCT.Rows
	if m := j.sum.MessageFCT; m != nil && m.Flows > 0 {
		rows, s.Of = m.Rows, "message" // per message, the default (docs/analysis.md#flow-completion)
	}
	by := byTransport(rows)
	var order []string
	for _, r := range rows {
		if !slices.Contains(order, r.Transport) {
			order = append(order, r.Transport)
		}
	}
	if len(order) > 1 {
		order = slices.DeleteFunc(order, func(t string) bool { return t == "all" })
	}
	for _, t := range order {
		add(t, by[t])
	}
	return s
}

// bucketLabel names a size bucket for the figure's axis: "< MTU (9 KB)",
// "MTU to BDP", "BDP to 5 BDP", ">= 5 BDP (1.02 MB)".
func bucketLabel(b analysis.FCTBucket) string {
	switch {
	case b.LoByte == 0:
		return fmt.Sprintf("%s (%s)", b.Name, units.FormatBytes(float64(b.HiByte)))
	case b.HiByte < 0:
		return fmt.Sprintf("%s (%s)", b.Name, units.FormatBytes(float64(b.LoByte)))
	}
	return b.Name
}

func valueOrNaN(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// cnpBins is the cnp_over_time figure's input: the CNPs and rate cuts per bin.
func cnpBins(e *analysis.EventSeries) plots.CNPBins {
	c := plots.CNPBins{Start: e.StartPs, BinWidth: max(e.BinPs, 1)}
	for k, kind := range e.Kinds {
		vals := make([]float64, len(e.Counts[k]))
		for b, n := range e.Counts[k] {
			vals[b] = float64(n)
		}
		switch kind {
		case records.EventCNP.String():
			c.CNPs = vals
		case records.EventRateCut.String():
			c.RateCuts = vals
		}
	}
	return c
}

func dropBins(r analysis.DropRate) plots.DropBins {
	d := plots.DropBins{Start: r.StartPs, BinWidth: max(r.BinPs, 1)}
	for i, reason := range r.Reasons {
		c := make([]float64, len(r.Counts[i]))
		for b, n := range r.Counts[i] {
			c[b] = float64(n)
		}
		d.Reasons = append(d.Reasons, plots.ReasonCounts{Reason: reason.String(), Counts: c})
	}
	return d
}

func pauseGrid(t *analysis.PauseTimeline) plots.PauseGrid {
	if t == nil {
		return plots.PauseGrid{BinWidth: 1}
	}
	g := plots.PauseGrid{Start: t.StartPs, BinWidth: max(t.BinPs, 1), MaxRows: max(len(t.Ports), 1)}
	for i, p := range t.Ports {
		g.Rows = append(g.Rows, plots.PauseRow{Node: p.Node, Port: int(p.Port), TC: int(p.TC), Paused: t.Paused[i]})
	}
	return g
}

// poolOccupancy draws each kept (switch, pool) series' ingress occupancy (shared +
// headroom) per time bin. A bin of analysis.BufferSeries that no sample fell into
// reads 0; with the sample period known (BufferStatsReportInterval), such bins are
// left out rather than drawn as a drop to zero.
func poolOccupancy(series []analysis.BufferSeries, periodPs units.Time) plots.PoolOccupancy {
	var po plots.PoolOccupancy
	for _, s := range series {
		var xy plotter.XYs
		for b, v := range s.Ingress {
			lo := s.StartPs + units.Time(b)*s.BinPs
			if len(s.TimesPs) == len(s.Ingress) {
				lo = s.TimesPs[b]
			}
			hi := lo + s.BinPs
			if periodPs > 0 && s.BinPs < periodPs && !holdsMultiple(lo, hi, periodPs) {
				continue
			}
			xy = append(xy, plotter.XY{X: float64(lo), Y: float64(v)})
		}
		po.Series = append(po.Series, plots.PoolSeries{Node: s.Node, Pool: "pool " + strconv.Itoa(int(s.Pool)), Samples: xy})
	}
	po.MaxSeries = max(len(po.Series), 1)
	if len(series) > 0 { // consecutive samples are a bin or a sample period apart, whichever is longer
		po.Join = max(series[0].BinPs, periodPs) * 3 / 2
	}
	return po
}

// holdsMultiple reports whether [lo, hi) contains a multiple of p (> 0).
func holdsMultiple(lo, hi, p units.Time) bool {
	first := (lo + p - 1) / p * p
	return first < hi
}

// ecmpLoad is the ecmp_member_load figure's input: the judged sets (JudgedSet: at
// least MinFlowsPerMember flows per member), whose shares say something about the
// hash; unjudged counts the sets with traffic it leaves out.
func ecmpLoad(r *analysis.ImbalanceResult) (l plots.ECMPLoad, unjudged int) {
	if r == nil {
		return l, 0
	}
	for _, s := range r.Sets {
		if !s.Judged {
			if s.Bytes.Total > 0 {
				unjudged++
			}
			continue
		}
		l.Sets = append(l.Sets, plots.ECMPSet{Node: s.Node, Set: strconv.Itoa(s.Set), Name: s.Label, Bytes: plotter.Values(s.BytesLoad)})
	}
	return l, unjudged
}

func ecnMarks(e analysis.ECNSummary) plots.ECNMarks {
	var m plots.ECNMarks
	for _, q := range e.Queues {
		m.Queues = append(m.Queues, plots.QueueMarks{Node: q.Node, Port: int(q.Port), TC: int(q.TC), Marked: float64(q.Marked), Packets: float64(q.TxPackets)})
	}
	if t := e.OverTime; t != nil && len(t.Delivered) > 0 {
		m.Start, m.BinWidth = t.StartPs, max(t.BinPs, 1)
		for b := range t.Delivered {
			m.Marked = append(m.Marked, float64(t.Marked[b]))
			m.Packets = append(m.Packets, float64(t.Delivered[b]))
		}
	}
	return m
}

func delayClasses(cs []analysis.DelayClass, lossless []int) []plots.DelayClass {
	var out []plots.DelayClass
	for _, c := range cs {
		label := "TC " + strconv.Itoa(int(c.TC))
		if slices.Contains(lossless, int(c.TC)) {
			label += " (lossless)"
		}
		dc := plots.DelayClass{Label: label}
		for _, b := range c.Buckets {
			dc.Buckets = append(dc.Buckets, plots.DelayBucket{Lo: b.LoPs, Hi: b.HiPs, Packets: float64(b.Packets)})
		}
		out = append(out, dc)
	}
	return out
}

// comparisonMetrics are the panels of the hash_comparison figure, in order: per tier
// the byte max/mean, then polarization (AMI), drops, CE-marked deliveries, pause time
// and the packet p99 delay. (All metrics are in summary.json and the table.)
func comparisonMetrics(c *analysis.Comparison) []string {
	var ms []string
	for _, m := range c.Metrics {
		if strings.HasPrefix(m, "imbalance.tiers.") && strings.HasSuffix(m, ".max_mean") {
			ms = append(ms, m)
		}
	}
	for _, m := range []string{analysis.MetricAMI, analysis.MetricDrops, analysis.MetricCEFraction, analysis.MetricPausedPs, analysis.MetricP99Delay,
		analysis.MetricSlowdownP50, analysis.MetricSlowdownP99, analysis.MetricCompleteFraction} {
		if slices.Contains(c.Metrics, m) {
			ms = append(ms, m)
		}
	}
	return ms
}

// metricCI is a comparison metric as the figure takes it: its quantity (so its unit),
// direction, values with intervals, and the method marked best (none on a tie or an
// unranked metric).
func metricCI(c *analysis.Comparison, metric string) plots.MetricCI {
	mc := plots.MetricCI{Name: metricLabel(metric)}
	switch analysis.MetricDirection(metric) {
	case analysis.LowerIsBetter:
		mc.Better = plots.Lower
	case analysis.HigherIsBetter:
		mc.Better = plots.Higher
	}
	switch analysis.MetricUnit(metric) {
	case "ps":
		mc.Quantity = plots.Duration
	case "fraction":
		mc.Quantity = plots.Share
	case "packets", "episodes", "intervals":
		mc.Quantity, mc.Unit = plots.Count, analysis.MetricUnit(metric)
	}
	if b := c.Best[metric]; b.Ranked && !b.Tie {
		mc.Marked = b.Method
	}
	for _, m := range c.Methods {
		e := c.ByMethod[m].Metrics[metric]
		v := plots.MethodValue{Method: m, Value: e.Value, Lo: math.NaN(), Hi: math.NaN()}
		if e.HasCI {
			v.Lo, v.Hi = e.Lo, e.Hi
		}
		if e.Unfinished() { // among the unfinished: no point to draw, the name says so
			v.Method, v.Value, v.Lo, v.Hi = unfinishedMark+m, math.NaN(), math.NaN(), math.NaN()
		}
		mc.Values = append(mc.Values, v)
	}
	return mc
}

// unfinishedMark starts the name of a run whose value in a comparison panel is
// unfinished (a quantile among its unfinished flows or undelivered packets): not drawn.
const unfinishedMark = "∞ "

func comparisonFigure(c *analysis.Comparison) plots.Comparison {
	pc := plots.Comparison{Title: c.Title()}
	for _, metric := range comparisonMetrics(c) {
		pc.Metrics = append(pc.Metrics, metricCI(c, metric))
	}
	return pc
}

// metricLabel names a comparison metric for people, short enough for a figure panel
// title (plots cuts them at 30 characters).
func metricLabel(metric string) string {
	if rest, ok := strings.CutPrefix(metric, "imbalance.tiers."); ok {
		tier, m, _ := strings.Cut(rest, ".")
		names := map[string]string{
			"max_mean": "max/mean bytes", "cov": "CoV bytes", "jain": "Jain's index bytes",
			"chi2_p": "chi-square p flows", "idle_fraction": "idle members",
		}
		if n, ok := names[m]; ok {
			return tier + " " + n
		}
		return tier + " " + m
	}
	switch metric {
	case analysis.MetricAMI:
		return "AMI rack vs fabric"
	case analysis.MetricAMIByRack:
		return "AMI within source racks"
	case analysis.MetricNMI:
		return "NMI (I/min H) rack vs fabric"
	case analysis.MetricNMIByRack:
		return "NMI (I/min H) within racks"
	case analysis.MetricDrops:
		return "dropped packets"
	case analysis.MetricLossless:
		return "lossless (headroom) drops"
	case analysis.MetricDeliveredCE:
		return "delivered CE-marked"
	case analysis.MetricCEFraction:
		return "CE-marked share of delivered"
	case analysis.MetricECNMarked:
		return "CE marks at queues"
	case analysis.MetricPausedPs:
		return "PFC paused time"
	case analysis.MetricStorms:
		return "PFC storms"
	case analysis.MetricP99Delay:
		return "p99 one-way delay of packets"
	case analysis.MetricFlowMeanP99:
		return "p99 over flows of mean delay"
	case analysis.MetricSlowdownP50:
		return "FCT slowdown p50"
	case analysis.MetricSlowdownP99:
		return "FCT slowdown p99"
	case analysis.MetricCompleteFraction:
		return "flows completed"
	case analysis.MetricPauseIntervals:
		return "PFC pause intervals"
	}
	return metric
}

// unsampledQueues turns the buffer figure's "buffers stayed empty" into what it means
// when switch queues did fill: they emptied between the buffer samples, taken every
// period. err is BufferOccupancy's error, returned unchanged otherwise.
func unsampledQueues(err error, queues []analysis.QueueCounters, nodes analysis.Nodes, period units.Time) error {
	var nd *plots.NoDataError
	if !errors.As(err, &nd) {
		return err
	}
	var top *analysis.QueueCounters
	for i := range queues {
		q := &queues[i]
		if q.Tier != records.TierHost && q.WatermarkBytes > 0 && (top == nil || q.WatermarkBytes > top.WatermarkBytes) {
			top = q
		}
	}
	if top == nil {
		return err
	}
	return &plots.NoDataError{Figure: nd.Figure, Reason: fmt.Sprintf(
		"no occupancy at the %s sampling interval (BufferStatsReportInterval): queues held packets only between samples (the largest egress queue watermark was %s, at %s)",
		units.FormatPs(float64(period)), units.FormatBytes(float64(top.WatermarkBytes)), nodes.Port(top.PortClass))}
}
