package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/plots/report"
	"github.com/tracefabric/tracefabric/records"
)

// failuresSection is the report's "Failures and operations" (docs/analysis.md#failures-and-operations):
// a timeline of the run's events with the drops and pauses around each and what each
// moved, the PFC watchdog's storms and the deadlocks found.
func failuresSection(f *analysis.Failures) report.Section {
	sec := report.Section{Title: "Failures and operations", ID: "failures"}
	w := units.FormatPs(float64(f.WindowPs))
	if len(f.Events) > 0 {
		t := report.Table{Caption: "Events",
			Columns: []string{"time", "event", "target", "failure drops", "drops " + w + " before / after", "pauses " + w + " before / after",
				"reconverged", "flows moved", "bytes rerouted", "most loaded member after", "its load / mean",
				"message slowdown p50 / p99 " + w + " before", "after"},
			Align: []report.Align{report.AlignRight, report.AlignLeft, report.AlignLeft}}
		for _, e := range f.Events {
			kind := e.Kind
			if e.Cycle >= 0 {
				kind += " (flap " + strconv.Itoa(e.Cycle) + ")"
			}
			var fd []string
			for _, r := range []records.DropReason{records.ReasonLinkDown, records.ReasonNoRoute, records.ReasonPFCWatchdog} {
				if n := e.FailureDrops[r]; n > 0 {
					fd = append(fd, units.FormatCount(n)+" "+r.String())
				}
			}
			if len(fd) == 0 {
				fd = []string{"0"}
			}
			rec := "-"
			if e.ReconvergedPs >= 0 {
				rec = units.FormatInstantPs(e.ReconvergedPs)
			}
			ml, ratio := "-", "-"
			if m := e.MostLoaded; m != nil {
				ml = fmt.Sprintf("%s:%d > %s (%s of its set)", m.Node, m.Port, m.Peer, units.FormatFraction(m.Share))
				if e.MaxMean > 0 {
					ratio = fmt.Sprintf("%.3gx", e.MaxMean)
				}
			}
			t.Rows = append(t.Rows, []string{units.FormatInstantPs(e.TimePs), kind, e.Target, strings.Join(fd, ", "),
				units.FormatCount(e.DropsBefore) + " / " + units.FormatCount(e.DropsAfter),
				units.FormatCount(e.PausesBefore) + " / " + units.FormatCount(e.PausesAfter),
				rec, units.FormatCount(e.FlowsMoved), units.FormatBytes(float64(e.BytesRerouted)), ml, ratio,
				windowSlowdownCell(e.SlowdownBefore), windowSlowdownCell(e.SlowdownAfter)})
		}
		sec.Blocks = append(sec.Blocks, report.TableBlock(t), report.ParagraphBlock(
			"Failure drops are the link-down, no-route and PFC watchdog drops from the event to the next. "+
				"Drops count every data drop, pauses the PFC pause intervals that began, in the "+w+" before and after the event (simulated time). "+
				"Flows moved are the flows whose member the set changes moved; bytes rerouted what they then sent through the changed sets. "+
				"The most loaded member is the changed sets' member that carried the most bytes from the reconvergence to the next event; its load / mean is over its set's live members. "+
				"Message slowdown is fct / ideal of the messages that started in the "+w+" before and after the event (p50 / p99, an unfinished message ranked slowest, with the count of messages)."))
	}
	if wd := f.Watchdog; wd != nil {
		if len(wd.Storms) == 0 {
			sec.Blocks = append(sec.Blocks, report.NoDataBlock(fmt.Sprintf("PFC watchdog (%s, detection %s, restoration %s): no storm detected.",
				wd.Action, units.FormatPs(float64(wd.DetectionTimePs)), units.FormatPs(float64(wd.RestorationTimePs)))))
		} else {
			t := report.Table{Caption: fmt.Sprintf("PFC watchdog storms (%s, detection %s, restoration %s)", wd.Action,
				units.FormatPs(float64(wd.DetectionTimePs)), units.FormatPs(float64(wd.RestorationTimePs))),
				Columns: []string{"node:port", "paused by", "tc", "detected", "restored", "dropped"}}
			for _, s := range wd.Storms {
				res := "still at the end"
				if s.RestoredPs >= 0 {
					res = units.FormatInstantPs(s.RestoredPs)
				}
				t.Rows = append(t.Rows, []string{fmt.Sprintf("%s:%d", s.Node, s.Port), s.Peer, strconv.Itoa(int(s.TC)),
					units.FormatInstantPs(s.DetectedPs), res, units.FormatCount(s.Dropped)})
			}
			sec.Blocks = append(sec.Blocks, report.TableBlock(t))
		}
	}
	for i, d := range f.Deadlocks {
		var ports []string
		for _, p := range d.Ports {
			ports = append(ports, fmt.Sprintf("%s:%d > %s", p.Node, p.Port, p.Peer))
		}
		res := fmt.Sprintf("unresolved at the end, holding %s undrained packets", units.FormatCount(d.Undrained))
		if d.ResolvedPs >= 0 {
			res = "resolved at " + units.FormatInstantPs(d.ResolvedPs)
		}
		sec.Blocks = append(sec.Blocks, report.ParagraphBlock(fmt.Sprintf("PFC deadlock %d (TC %d), detected at %s, %s: the cycle %s.",
			i+1, d.TC, units.FormatInstantPs(d.DetectedPs), res, strings.Join(ports, ", "))))
	}
	if len(f.Deadlocks) == 0 {
		sec.Blocks = append(sec.Blocks, report.NoDataBlock("No PFC deadlock: no cycle of paused ports was found."))
	}
	return sec
}

// windowSlowdownCell formats a window's message slowdowns: "p50 / p99 (n)", an
// unfinished quantile "unfinished", "-" without messages.arrow or a message.
func windowSlowdownCell(w *analysis.WindowSlowdown) string {
	if w == nil || w.Messages == 0 {
		return "-"
	}
	f := func(v float64) string {
		if math.IsInf(v, 1) {
			return "unfinished"
		}
		return analysis.FormatSlowdown(v)
	}
	return fmt.Sprintf("%s / %s (%s)", f(w.P50), f(w.P99), units.FormatCount(w.Messages))
}
