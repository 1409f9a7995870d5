package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/plots"
	"github.com/tracefabric/tracefabric/plots/report"
	"github.com/tracefabric/tracefabric/records"
)

// fctDefinition states what the Flow completion section's numbers are
// (docs/analysis.md#flow-completion).
const fctDefinition = "The flow completion time (FCT) is one way: from the time the flow's first packet was available to its sender (its captured time, divided by the speedup) to the delivery of its last byte at the receiver. The ideal FCT is the same flow alone in the empty fabric, with the same application timing, on the path its first packet took, store and forward at every hop. Slowdown = FCT / ideal FCT: 1 is a flow the fabric did not slow. Flows are bucketed by size (the captured IPv4 bytes of their data packets) as m3 does: below the MTU, from the MTU to the fabric BDP, from the BDP to 5 BDP, and 5 BDP or more. The quantiles are empirical (the p-quantile is the smallest slowdown with at least a fraction p of the flows at or below it). A flow that did not complete (open loop: packets dropped and never resent; packets still in the fabric at the end; closed loop: its sender still had data when the run stopped) has no FCT: the slowdown p50 and p99 of the Completion table (the numbers comparisons rank) count it as slower than every completed flow, so that a quantile among the unfinished flows reads \"unfinished\" and leaving flows unfinished never looks fast; the per-bucket table and figure describe the completed flows only (complete of flows)."

// openClosedCaveat is said when open- and closed-loop runs are compared.
const openClosedCaveat = "Open loop, a flow is every captured packet of its 5-tuple direction, pure ACKs included (its size and FCT count them); closed loop, captured pure ACKs are replaced by the simulated receivers' own, so a flow holds only its data (and a direction that carried only ACKs has no data and no FCT). The small-flow buckets of the two modes therefore hold partly different flows."

// fctSection is the report's Flow completion section: the slowdown figure, the
// completion counts, the slowdown per transport and size bucket (per run when
// comparing), and the definitions in words.
func fctSection(j *job, figs *figures) report.Section {
	sec := report.Section{Title: "Flow completion", ID: "fct"}
	type runFCT struct {
		name string
		f    analysis.FCTSummary
	}
	var runs []runFCT
	if j.cmp != nil {
		for _, m := range j.cmp.Methods {
			runs = append(runs, runFCT{m, j.cmp.ByMethod[m].FCT})
		}
	} else {
		runs = append(runs, runFCT{"", j.sum.FCT})
	}
	flows := int64(0)
	for _, r := range runs {
		flows += r.f.Flows
	}
	if flows == 0 {
		sec.Blocks = append(sec.Blocks, report.NoDataBlock("No flow carried data of its own: no flow completion to report."))
		return sec
	}
	sec.Blocks = append(sec.Blocks, figs.block(plots.NameFCTSlowdown))
	if j.cmp == nil && j.sum.MessageFCT != nil && j.sum.MessageFCT.Flows > 0 {
		sec.Blocks = append(sec.Blocks, messageBlocks(*j.sum.MessageFCT)...)
	}
	f0 := runs[0].f
	caption := "Completion"
	if j.cmp == nil && j.sum.MessageFCT != nil {
		caption = "Completion per direction (flows.arrow: one row per 5-tuple direction, for its whole lifetime)"
	}
	t := report.Table{Caption: caption, Columns: []string{"flows with data", "complete", "incomplete", "no data of their own", "slowdown p50 (unfinished slowest)", "slowdown p99 (unfinished slowest)"}}
	if j.cmp != nil {
		t.Columns = append([]string{"run"}, t.Columns...)
	}
	for _, r := range runs {
		var why []string
		for c := records.Completion(0); c < records.NumCompletions; c++ {
			if n := r.f.ByCompletion[c.String()]; c != records.CompletionComplete && n > 0 {
				why = append(why, fmt.Sprintf("%s %s", units.FormatCount(n), c))
			}
		}
		row := []string{units.FormatCount(r.f.Flows), units.FormatShare(r.f.Complete, r.f.Flows), firstNonEmpty(strings.Join(why, ", "), "0"),
			units.FormatCount(r.f.NoDataFlows), analysis.FormatSlowdown(r.f.SlowdownP50), analysis.FormatSlowdown(r.f.SlowdownP99)}
		if j.cmp != nil {
			row = append([]string{r.name}, row...)
		}
		t.Rows = append(t.Rows, row)
	}
	sec.Blocks = append(sec.Blocks, report.TableBlock(t))

	bucketCaption := "Slowdown per size bucket"
	if j.cmp == nil && j.sum.MessageFCT != nil {
		bucketCaption = "Slowdown per size bucket, per direction"
	}
	st := report.Table{Caption: bucketCaption, Source: "tables/fct_slowdown.csv",
		Columns: []string{"transport", "flow size", "flows", "complete", "p50", "p95", "p99", "max"}}
	if j.cmp != nil {
		st.Source = "tables/fct_slowdown_by_run.csv"
		st.Columns = append([]string{"run"}, st.Columns...)
	}
	for _, r := range runs {
		for _, row := range r.f.Rows {
			if row.Flows == 0 && row.Name != "all" {
				continue
			}
			cells := []string{row.Transport, sizeWords(row.FCTBucket), units.FormatCount(int64(row.Flows)), units.FormatCount(int64(row.Complete)),
				slowdownCell(row.P50), slowdownCell(row.P95), slowdownCell(row.P99), slowdownCell(row.Max)}
			if j.cmp != nil {
				cells = append([]string{r.name}, cells...)
			}
			st.Rows = append(st.Rows, cells)
		}
	}
	sec.Blocks = append(sec.Blocks, report.TableBlock(st))
	sec.Blocks = append(sec.Blocks, report.ParagraphBlock(fmt.Sprintf("%s Here the MTU is %s and the fabric BDP %s (run.json topology.bdp_bytes).",
		fctDefinition, units.FormatBytes(float64(f0.MTUBytes)), units.FormatBytes(float64(f0.BDPBytes)))))
	if j.cmp != nil && containsString(j.cmp.Differs, analysis.TraitTransport) {
		sec.Blocks = append(sec.Blocks, report.ParagraphBlock(openClosedCaveat))
	}
	return sec
}

// messageDefinition states what a message is (docs/model.md#messages).
const messageDefinition = "A message is a run of a flow's data between idle gaps of at least Transport.MessageGap (4 base RTTs by default) or a turn-around, where the other direction of the connection sent data in between: a request, a response, one transfer of a long-lived connection (messages.arrow). Its FCT runs from its first packet's availability to the delivery of its last byte, its ideal is the same bytes alone in the empty fabric from the same start, and messages are bucketed by their own size. Per message is the default slowdown: a flow of flows.arrow is one direction of a 5-tuple for its whole lifetime, whose FCT measures the application's lifetime as much as the network."

// messageBlocks are the per-message completion table and slowdown buckets.
func messageBlocks(m analysis.FCTSummary) []report.Block {
	var why []string
	for c := records.Completion(0); c < records.NumCompletions; c++ {
		if n := m.ByCompletion[c.String()]; c != records.CompletionComplete && n > 0 {
			why = append(why, fmt.Sprintf("%s %s", units.FormatCount(n), c))
		}
	}
	t := report.Table{Caption: "Completion per message (messages.arrow)", Columns: []string{"messages with data", "complete", "incomplete",
		"slowdown p50 (unfinished slowest)", "slowdown p99 (unfinished slowest)"},
		Rows: [][]string{{units.FormatCount(m.Flows), units.FormatShare(m.Complete, m.Flows), firstNonEmpty(strings.Join(why, ", "), "0"),
			analysis.FormatSlowdown(m.SlowdownP50), analysis.FormatSlowdown(m.SlowdownP99)}}}
	st := report.Table{Caption: "Slowdown per message size bucket", Source: "tables/message_slowdown.csv",
		Columns: []string{"transport", "message size", "messages", "complete", "p50", "p95", "p99", "max"}}
	for _, row := range m.Rows {
		if row.Flows == 0 && row.Name != "all" {
			continue
		}
		st.Rows = append(st.Rows, []string{row.Transport, sizeWords(row.FCTBucket), units.FormatCount(int64(row.Flows)), units.FormatCount(int64(row.Complete)),
			slowdownCell(row.P50), slowdownCell(row.P95), slowdownCell(row.P99), slowdownCell(row.Max)})
	}
	return []report.Block{report.TableBlock(t), report.TableBlock(st), report.ParagraphBlock(messageDefinition)}
}

// sizeWords names a size bucket with its bounds: "< MTU (< 9 KB)".
func sizeWords(b analysis.FCTBucket) string {
	switch {
	case b.Name == "all":
		return "all"
	case b.LoByte == 0:
		return fmt.Sprintf("%s (< %s)", b.Name, units.FormatBytes(float64(b.HiByte)))
	case b.HiByte < 0:
		return fmt.Sprintf("%s (>= %s)", b.Name, units.FormatBytes(float64(b.LoByte)))
	}
	return fmt.Sprintf("%s (%s to %s)", b.Name, units.FormatBytes(float64(b.LoByte)), units.FormatBytes(float64(b.HiByte)))
}

func slowdownCell(v *float64) string {
	if v == nil {
		return "-"
	}
	return analysis.FormatSlowdown(*v)
}

func containsString(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// closedLoopSection is the report's Closed loop section: what the replay replaced,
// the control packets, CNPs and rate cuts (over time), window cuts, retransmissions and
// timeouts, of the closed-loop run (closedRun), and every run's when comparing.
func closedLoopSection(j *job, figs *figures) report.Section {
	sec := report.Section{Title: "Closed loop", ID: "closed-loop"}
	i, tr := closedRun(j)
	name := ""
	if j.cmp != nil {
		name = methodName(j.cmp, i)
		sec.Blocks = append(sec.Blocks, closedPerRun(j))
		sec.Blocks = append(sec.Blocks, report.ParagraphBlock(fmt.Sprintf("The rest of this section details the %s run (%s).", name, j.inputs[i].dir)))
	}
	var senders []string
	for _, t := range slices.Sorted(maps.Keys(tr.FlowsByTransport)) {
		senders = append(senders, fmt.Sprintf("%s %s", units.FormatCount(tr.FlowsByTransport[t]), t))
	}
	var replaced []string
	var replacedN int64
	for _, k := range slices.Sorted(maps.Keys(tr.Replaced)) {
		if n := tr.Replaced[k]; n > 0 {
			replaced = append(replaced, fmt.Sprintf("%s %s", units.FormatCount(n), k))
			replacedN += n
		}
	}
	what := "no captured packet was replaced"
	if replacedN > 0 {
		what = fmt.Sprintf("%s captured control packets were not injected, the simulated receivers sending their own (%s)", units.FormatCount(replacedN), strings.Join(replaced, ", "))
	}
	sec.Blocks = append(sec.Blocks, report.ParagraphBlock(fmt.Sprintf(
		"Closed loop, TCP and RoCEv2 flows were re-sent by simulated senders (flows by sender: %s) and %s. Other traffic stayed open loop.",
		firstNonEmpty(strings.Join(senders, ", "), "none"), what)))

	ct := report.Table{Caption: "Control packets the receivers generated", Columns: []string{"kind", "generated", "delivered", "dropped", "undrained"}}
	for _, k := range slices.Sorted(maps.Keys(tr.ControlPackets)) {
		c := tr.ControlPackets[k]
		ct.Rows = append(ct.Rows, []string{k, units.FormatCount(c.Generated), units.FormatCount(c.Delivered), units.FormatCount(c.Dropped), units.FormatCount(c.Undrained)})
	}
	sec.Blocks = append(sec.Blocks, report.TableBlock(ct))

	if tr.Events["cnp"] > 0 || tr.Events["rate_cut"] > 0 {
		sec.Blocks = append(sec.Blocks, figs.block(plots.NameCNPOverTime))
	} else {
		sec.Blocks = append(sec.Blocks, report.NoDataBlock("No CNPs or rate cuts: no DCQCN flow was notified of congestion."))
	}
	kv := []report.KV{}
	for k := records.TransportEventKind(0); k < records.NumTransportEventKinds; k++ {
		kv = append(kv, report.KV{Key: "events: " + k.String(), Value: units.FormatCount(tr.Events[k.String()])})
	}
	perFlow := func(p analysis.PerFlow, what string) string {
		if p.Flows == 0 {
			return "-"
		}
		return fmt.Sprintf("%s of %s flows got any; mean %s, max %s %s per flow", units.FormatCount(p.WithAny), units.FormatCount(p.Flows),
			units.FormatFloat(p.Mean), units.FormatCount(p.Max), what)
	}
	kv = append(kv,
		report.KV{Key: "CNPs per DCQCN flow", Value: perFlow(tr.CNPsPerFlow, "CNPs")},
		report.KV{Key: "rate cuts per DCQCN flow", Value: perFlow(tr.RateCutsPerFlow, "cuts")},
		report.KV{Key: "ECE-marked ACKs per TCP flow", Value: perFlow(tr.ECEPerFlow, "ECE ACKs")},
		report.KV{Key: "retransmitted packets", Value: units.FormatCount(tr.Retransmits)},
		report.KV{Key: "timeouts", Value: units.FormatCount(tr.Timeouts)},
	)
	sec.Blocks = append(sec.Blocks, report.KeyValueBlock("Congestion control", kv...))
	sec.Blocks = append(sec.Blocks, report.ParagraphBlock("A CNP is sent by a DCQCN receiver for a CE-marked packet (at most one per flow every CnpInterval); a rate cut is a DCQCN sender's reaction to the CNPs of a rate-decrease period; a window cut is a DCTCP sender's reaction to ECE-marked ACKs (at most once per window); fast retransmits and timeouts are TCP's loss recovery (a timeout also RoCE's go-back-N after RoceTimeout without progress). Counts from transport.arrow; CNPs and ECE ACKs per flow from flows.arrow's congestion_signals; control packets, retransmissions and timeouts from run.json. Table transport_events_over_time bins every kind."))
	return sec
}

// closedPerRun is the comparison's table of what every run's senders did; open-loop
// runs have none.
func closedPerRun(j *job) report.Block {
	c := j.cmp
	t := report.Table{Caption: "Closed-loop senders per run", Columns: []string{"run", "transport", "CNPs", "rate cuts", "window cuts", "fast retransmits", "timeouts", "retransmitted packets"}}
	for _, m := range c.Methods {
		mm := c.ByMethod[m]
		tr := mm.ClosedLoop
		if tr == nil {
			t.Rows = append(t.Rows, []string{m, firstNonEmpty(mm.Traits.Transport, "-"), "-", "-", "-", "-", "-", "-"})
			continue
		}
		e := func(k records.TransportEventKind) string { return units.FormatCount(tr.Events[k.String()]) }
		t.Rows = append(t.Rows, []string{m, mm.Traits.Transport, e(records.EventCNP), e(records.EventRateCut), e(records.EventWindowCut),
			e(records.EventFastRetransmit), e(records.EventTimeout), units.FormatCount(tr.Retransmits)})
	}
	return report.TableBlock(t)
}

// pfcPerRun is the comparison's PFC table: per run its pause intervals, paused time,
// storms and PFC frames, so that PFC with and without congestion control (an open and
// a closed run) shows side by side.
func pfcPerRun(j *job) report.Block {
	c := j.cmp
	t := report.Table{Caption: "PFC per " + c.Noun(), Source: "tables/hash_comparison.csv",
		Columns: []string{c.Noun(), "transport", "PFC frames", "pause intervals", "paused time (sum over port-classes)", "storms"}}
	for i, m := range c.Methods {
		mm := c.ByMethod[m]
		t.Rows = append(t.Rows, []string{m, firstNonEmpty(mm.Traits.Transport, "-"), units.FormatCount(j.inputs[i].run.Info.PFCFrames),
			analysis.FormatEstimate(analysis.MetricPauseIntervals, mm.Metrics[analysis.MetricPauseIntervals]),
			analysis.FormatEstimate(analysis.MetricPausedPs, mm.Metrics[analysis.MetricPausedPs]),
			analysis.FormatEstimate(analysis.MetricStorms, mm.Metrics[analysis.MetricStorms])})
	}
	return report.TableBlock(t)
}
