package main

import (
	"math"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/plots"
	"github.com/tracefabric/tracefabric/records"
)

// TestMetricLabels: every comparison metric has a label that fits a figure panel
// title (plots cuts titles at 30 characters).
func TestMetricLabels(t *testing.T) {
	metrics := []string{analysis.MetricAMI, analysis.MetricAMIByRack, analysis.MetricNMI, analysis.MetricNMIByRack, analysis.MetricDrops,
		analysis.MetricLossless, analysis.MetricDeliveredCE, analysis.MetricCEFraction, analysis.MetricECNMarked, analysis.MetricPausedPs,
		analysis.MetricStorms, analysis.MetricP99Delay, analysis.MetricFlowMeanP99}
	for _, tier := range []string{"rack", "fabric", "spine"} {
		for _, m := range analysis.TierMetricNames {
			metrics = append(metrics, "imbalance.tiers."+tier+"."+m)
		}
	}
	seen := map[string]string{}
	for _, m := range metrics {
		l := metricLabel(m)
		if l == m || len(l) > 30 {
			t.Errorf("metric %s: label %q (want a name for people, at most 30 characters)", m, l)
		}
		if prev, dup := seen[l]; dup {
			t.Errorf("metrics %s and %s share the label %q", prev, m, l)
		}
		seen[l] = m
	}
	// The flow p99 says what it is: a percentile over flows of their mean delays.
	if l := metricLabel(analysis.MetricFlowMeanP99); !strings.Contains(l, "over flows") || !strings.Contains(l, "mean delay") {
		t.Errorf("flow p99 label %q does not say it is over flows of their mean delay", l)
	}
}

// TestPoolOccupancyGaps: bins of the buffer series that no sample can fall in (bins
// shorter than the sample period) are left out instead of drawn as zero; with bins
// longer than the period every bin is kept.
func TestPoolOccupancyGaps(t *testing.T) {
	s := analysis.BufferSeries{Node: "rack-p0-r0", Pool: 1, BinPs: 40, Ingress: []int64{0, 0, 7, 0, 9, 0, 0, 5}}
	// Samples every 100 ps: at 100, 200, 300 -> bins [80,120), [200,240), [280,320).
	po := poolOccupancy([]analysis.BufferSeries{s}, 100)
	xy := po.Series[0].Samples
	var xs []float64
	for i := range xy.Len() {
		x, _ := xy.XY(i)
		xs = append(xs, x)
	}
	want := []float64{0, 80, 200, 280}
	if len(xs) != len(want) {
		t.Fatalf("kept bins at %v, want %v", xs, want)
	}
	for i := range want {
		if xs[i] != want[i] {
			t.Fatalf("kept bins at %v, want %v", xs, want)
		}
	}
	if got := poolOccupancy([]analysis.BufferSeries{s}, 10).Series[0].Samples.Len(); got != len(s.Ingress) {
		t.Errorf("bins longer than the period: kept %d of %d", got, len(s.Ingress))
	}
	if got := poolOccupancy([]analysis.BufferSeries{s}, 0).Series[0].Samples.Len(); got != len(s.Ingress) {
		t.Errorf("unknown period: kept %d of %d", got, len(s.Ingress))
	}
}

// The member load figure shows the judged sets only (at least 5 flows per member):
// an unjudged set's shares say nothing about the hash; it is counted, not drawn.
func TestECMPLoadJudgedOnly(t *testing.T) {
	r := analysis.ImbalanceOf([]analysis.SetLoad{
		{Node: 0, Tier: records.TierRack, Set: 0, Bytes: []float64{100, 300}, Flows: []float64{5, 5}},
		{Node: 1, Tier: records.TierRack, Set: 0, Bytes: []float64{500, 0}, Flows: []float64{1, 0}}, // too few flows
		{Node: 2, Tier: records.TierRack, Set: 0, Bytes: []float64{0, 0}, Flows: []float64{0, 0}},   // no traffic
	}, analysis.Nodes{"rack-p0-r0", "rack-p0-r1", "rack-p0-r2"})
	l, unjudged := ecmpLoad(r)
	if len(l.Sets) != 1 || l.Sets[0].Node != "rack-p0-r0" || unjudged != 1 {
		t.Errorf("figure sets %+v, %d unjudged; want rack-p0-r0 alone and 1 unjudged set with traffic", l.Sets, unjudged)
	}
}

// A comparison panel does not draw an unfinished value (+Inf): the run's name starts
// with the mark instead, and the others are drawn as they are.
func TestMetricCIUnfinished(t *testing.T) {
	m := analysis.MetricSlowdownP99
	c := &analysis.Comparison{Methods: []string{"crc16", "xor16"}, Best: map[string]analysis.Best{m: {Method: "xor16", Ranked: true}},
		ByMethod: map[string]*analysis.MethodMetrics{
			"crc16": {Metrics: map[string]analysis.Estimate{m: {Value: math.Inf(1), Lo: math.Inf(1), Hi: math.Inf(1), HasCI: true}}},
			"xor16": {Metrics: map[string]analysis.Estimate{m: {Value: 2, Lo: 1.9, Hi: math.Inf(1), HasCI: true}}},
		}}
	mc := metricCI(c, m)
	if v := mc.Values[0]; v.Method != "∞ crc16" || !math.IsNaN(v.Value) || !math.IsNaN(v.Hi) {
		t.Errorf("unfinished value drawn as %+v", v)
	}
	if v := mc.Values[1]; v.Method != "xor16" || v.Value != 2 || mc.Marked != "xor16" {
		t.Errorf("finished value %+v, marked %q", v, mc.Marked)
	}
	if _, err := plots.HashComparison(plots.Comparison{Metrics: []plots.MetricCI{mc}}, plots.Options{}); err != nil {
		t.Errorf("the panel with an unfinished run and an unbounded interval: %v", err)
	}
}
