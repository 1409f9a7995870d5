package main

import (
	"encoding/json"
	"strings"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/records"
)

// version is the tool version recorded in summary.json.
const version = "0.1.0"

// summaryJSON is summary.json: every number the report states. The body is the
// analysis.Summary of the run the report details (its keys at the top level: drops,
// pfc, ecn, imbalance, polarization, delay, buffer, flows, run, warnings), with the
// report's headline, what was drawn and, when comparing, the comparison.
type summaryJSON struct {
	*analysis.Summary
	Tool     string   `json:"tool"`
	Headline []string `json:"headline"` // the sentences at the top of the report
	// Runs are the run directories analyzed, with their method names.
	Runs []runRef `json:"runs"`
	// Reference is the method of the run whose details the top-level keys hold
	// (comparisons only).
	Reference string `json:"reference,omitempty"`
	// Figures drawn (plots/NAME.png and .svg), and the figures not drawn with why.
	Figures []string          `json:"figures"`
	NoData  map[string]string `json:"no_data"`
	Tables  []string          `json:"tables"`
	// Comparison maps each method to the same metrics as the top-level keys, nested
	// the same way (drops.total, imbalance.tiers.<tier>.max_mean, ...), each as
	// {"value", "lo", "hi"} (lo and hi only with a bootstrap interval).
	Comparison map[string]map[string]any `json:"comparison,omitempty"`
	// ComparisonInfo holds the comparison's order, bootstrap settings, the best
	// method per metric and its headline.
	ComparisonInfo *comparisonInfo `json:"comparison_info,omitempty"`
	// NotDone: the points of a sweep that `analyze --partial` left out (a sweep of
	// one categorical axis, compared as runs are).
	NotDone []records.PointState `json:"not_done,omitempty"`
}

type runRef struct {
	Dir       string `json:"dir"`
	Method    string `json:"method"`
	Transport string `json:"transport"`
}

type comparisonInfo struct {
	Methods    []string                 `json:"methods"`
	NamedBy    string                   `json:"named_by"` // what the names are: hash method, transport, ... (analysis.NamedBy*)
	Differs    []string                 `json:"differs"`  // what differs between the runs (analysis.Trait*)
	Metrics    []string                 `json:"metrics"`
	Bootstrap  int                      `json:"bootstrap"`
	Seed       uint64                   `json:"seed"`
	Level      float64                  `json:"level"`
	Interval   string                   `json:"interval"`           // the default interval method (BCa)
	IntervalBy map[string]string        `json:"interval_by_metric"` // metrics whose interval is another
	Best       map[string]analysis.Best `json:"best"`
	Headline   []string                 `json:"headline"`
	// Events compares the runs after each event (analysis.EventImbalance), when
	// they replayed the same events.
	Events []analysis.EventImbalance `json:"events,omitempty"`
}

// comparisonJSON nests each method's metrics by the dots of their names.
func comparisonJSON(c *analysis.Comparison) (map[string]map[string]any, *comparisonInfo) {
	out := map[string]map[string]any{}
	for _, m := range c.Methods {
		mm := c.ByMethod[m]
		obj := map[string]any{"dir": mm.Dir, "flows": mm.Flows, "run": mm.Traits}
		for name, est := range mm.Metrics {
			setPath(obj, strings.Split(name, "."), est)
		}
		setPath(obj, []string{"fct", "rows"}, mm.FCT.Rows) // as the single run's fct.rows
		out[m] = obj
	}
	info := &comparisonInfo{Methods: c.Methods, NamedBy: c.By, Differs: c.Differs, Metrics: c.Metrics, Bootstrap: c.B, Seed: c.Seed, Level: c.Level,
		Interval: c.Interval, IntervalBy: c.IntervalBy, Best: c.Best, Headline: c.Headline, Events: c.Events}
	return out, info
}

// setPath sets obj[p0][p1]...[pn] = v, making the intermediate objects.
func setPath(obj map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := obj[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[k] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = v
}

func marshalSummary(s *summaryJSON) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
