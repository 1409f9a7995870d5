package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// headline writes the sentences at the top of the report.
func headline(s *Summary) []string {
	var h []string
	quiet := !s.Congestion.Congested
	if quiet { // one line instead of "No packets were dropped.", "No PFC pauses.", ...
		h = append(h, quietLine(s.Congestion, s.Run.SimPs))
	}
	d := s.Drops
	inj := s.Run.Injected
	if inj == 0 {
		inj = s.Flows.Packets
	}
	switch {
	case d.Total == 0 && quiet:
	case d.Total == 0:
		h = append(h, "No packets were dropped.")
	default:
		line := fmt.Sprintf("%s packets dropped%s: %s.", units.FormatCount(d.Total), pctOf(d.Total, inj, " of %s injected"), byReason(d.ByReason))
		if d.Lossless > 0 {
			line += fmt.Sprintf(" %s lossless (headroom) drop%s: the lossless class's headroom is undersized.", units.FormatCount(d.Lossless), plural(int(d.Lossless)))
		} else {
			line += " No lossless (headroom) drops."
		}
		h = append(h, line)
	}
	if c := controlDrops(d.Control); c != "" {
		h[len(h)-1] += " Closed-loop control packets dropped too (not counted above): " + c + "."
	}
	p := s.PFC
	switch {
	case p.PauseIntervals == 0 && quiet:
	case p.PauseIntervals == 0:
		h = append(h, "No PFC pauses.")
	default:
		classes := "port-classes"
		if p.PausedPorts == 1 {
			classes = "port-class"
		}
		line := fmt.Sprintf("PFC paused %s %s in %s interval%s, %s paused in total (summed over port-classes), longest interval %s;",
			units.FormatCount(int64(p.PausedPorts)), classes, units.FormatCount(int64(p.PauseIntervals)), plural(p.PauseIntervals), units.FormatPs(float64(p.PausedPs)), units.FormatPs(float64(p.LongestPs)))
		if len(p.Storms) == 0 {
			line += fmt.Sprintf(" no storms (no pause spread upstream or lasted %s).", units.FormatPs(float64(p.StormDurationPs)))
		} else {
			deep, long := 0, int64(0)
			for _, e := range p.Storms {
				deep = max(deep, e.Depth)
				long = max(long, e.DurationPs)
			}
			line += fmt.Sprintf(" %s storm%s (deepest %d hop%s, longest %s), %s victim flow%s.", units.FormatCount(int64(len(p.Storms))), plural(len(p.Storms)), deep, plural(deep), units.FormatPs(float64(long)), units.FormatCount(int64(p.StormVictims)), plural(p.StormVictims))
		}
		h = append(h, line)
	}
	h = append(h, balanceLine(s.Imbalance))
	if line := polarizationLine(s.Polarization, rackFabricRoles(s.PolarizationStages)); line != "" {
		h = append(h, line)
	}
	h = append(h, stageLines(s.PolarizationStages, s.Polarization)...)
	switch {
	case s.ECN.Marked == 0 && s.ECN.DeliveredCE == 0 && quiet:
	case s.ECN.Marked == 0 && s.ECN.DeliveredCE == 0:
		h = append(h, "No packets were ECN-marked.")
	default:
		h = append(h, fmt.Sprintf("ECN: %s mark%s at %s queue%s; %s of delivered packets arrived CE-marked.", units.FormatCount(s.ECN.Marked), plural(int(s.ECN.Marked)), units.FormatCount(int64(len(s.ECN.Queues))), plural(len(s.ECN.Queues)), pct(s.ECN.DeliveredCE, s.ECN.Delivered)))
	}
	if s.Delay.All.Packets > 0 {
		h = append(h, fmt.Sprintf("One-way delay: p50 %s, p99 %s over %s delivered packets.", units.FormatPs(s.Delay.All.P50Ps), units.FormatPs(s.Delay.All.P99Ps), units.FormatCount(s.Delay.All.Packets)))
	}
	if s.MessageFCT != nil && s.MessageFCT.Flows > 0 {
		h = append(h, fctLine(*s.MessageFCT, "Completion per message", "messages"))
		if line := fctLine(s.FCT, "Per direction (flows.arrow, one 5-tuple direction each)", "flows"); line != "" {
			h = append(h, line)
		}
	} else if line := fctLine(s.FCT, "Flow completion", "flows"); line != "" {
		h = append(h, line)
	}
	if line := closedLoopLine(s.Transport); line != "" {
		h = append(h, line)
	}
	return h
}

// fctLine says how many flows (or messages: what) completed and their slowdown,
// overall and in the largest size bucket with completed ones; "" without any that
// carried data.
func fctLine(f FCTSummary, label, what string) string {
	if f.Flows == 0 {
		return ""
	}
	line := fmt.Sprintf("%s: %s of %s %s complete", label, units.FormatCount(f.Complete), units.FormatCount(f.Flows), what)
	var why []string
	for c := records.Completion(0); c < records.NumCompletions; c++ {
		if n := f.ByCompletion[c.String()]; c != records.CompletionComplete && n > 0 {
			why = append(why, fmt.Sprintf("%s %s", units.FormatCount(n), c))
		}
	}
	if len(why) > 0 {
		line += " (" + strings.Join(why, ", ") + ")"
	}
	if f.Complete == 0 || len(f.Rows) == 0 {
		return line + ": no slowdown to report."
	}
	all := f.Rows[len(f.Rows)-5:] // transport "all": the four buckets, then "all"
	largest := ""
	for k := 3; k >= 0; k-- {
		if r := all[k]; r.P99 != nil {
			largest = fmt.Sprintf(" (%s %s: p99 %s)", what, bucketWords(r.FCTBucket), FormatSlowdown(*r.P99))
			break
		}
	}
	if f.Complete == f.Flows {
		return line + fmt.Sprintf("; slowdown p50 %s, p99 %s%s.", FormatSlowdown(f.SlowdownP50), FormatSlowdown(f.SlowdownP99), largest)
	}
	// Some unfinished: the ranked quantiles count them as slowest; the rows describe
	// the completed flows.
	return line + fmt.Sprintf("; slowdown with the unfinished %s ranked slowest: p50 %s, p99 %s; of the completed %s: p99 %s%s.",
		what, FormatSlowdown(f.SlowdownP50), FormatSlowdown(f.SlowdownP99), what, FormatSlowdown(*all[4].P99), largest)
}

// bucketWords names a size bucket in a sentence: "< 9 KB", "9 KB to 205 KB", ">= 1.02 MB".
func bucketWords(b FCTBucket) string {
	switch {
	case b.HiByte < 0:
		return ">= " + units.FormatBytes(float64(b.LoByte))
	case b.LoByte == 0:
		return "< " + units.FormatBytes(float64(b.HiByte))
	}
	return units.FormatBytes(float64(b.LoByte)) + " to " + units.FormatBytes(float64(b.HiByte))
}

// closedLoopLine summarises what a closed-loop run's senders did; "" for open loop.
func closedLoopLine(t *TransportSummary) string {
	if t == nil {
		return ""
	}
	var parts []string
	if n := t.CNPsPerFlow.Flows; n > 0 {
		parts = append(parts, fmt.Sprintf("%s CNP%s (%s of %s DCQCN flows got any), %s rate cut%s",
			units.FormatCount(t.Events["cnp"]), plural(int(t.Events["cnp"])), units.FormatCount(t.CNPsPerFlow.WithAny), units.FormatCount(n),
			units.FormatCount(t.Events["rate_cut"]), plural(int(t.Events["rate_cut"]))))
	}
	if n := t.ECEPerFlow.Flows; n > 0 {
		parts = append(parts, fmt.Sprintf("%s DCTCP window cut%s", units.FormatCount(t.Events["window_cut"]), plural(int(t.Events["window_cut"]))))
	}
	parts = append(parts, fmt.Sprintf("%s retransmitted packet%s, %s timeout%s",
		units.FormatCount(t.Retransmits), plural(int(t.Retransmits)), units.FormatCount(t.Timeouts), plural(int(t.Timeouts))))
	return "Closed loop: " + strings.Join(parts, "; ") + "."
}

// balanceLine names the worst judged equal-cost set, or says why none is judged.
func balanceLine(imb *ImbalanceResult) string {
	if imb == nil || len(imb.Tiers) == 0 {
		return "No equal-cost set carried traffic: no hash imbalance to report."
	}
	var worst *TierImbalance
	var flows float64
	var few []string
	for _, t := range imb.TierNames() {
		ti := imb.Tiers[t]
		flows += ti.FlowCount
		if ti.Judged && (worst == nil || ti.Bytes.Worst.MaxMean > worst.Bytes.Worst.MaxMean) {
			worst = ti
		}
		if !ti.Judged && ti.FlowCount > 0 {
			few = append(few, fmt.Sprintf("%s at the %s tier", units.FormatNumber(ti.FlowCount), t))
		}
	}
	switch {
	case worst != nil:
		return fmt.Sprintf("Worst ECMP imbalance at the %s tier: the busiest of %s carries %.2fx the mean member load in bytes (tier: max/mean %.2f, Jain %.3f, idle members %.0f%%, flow chi-square p = %.3g).",
			worst.Tier, worst.Bytes.Worst.MaxMeanSet, worst.Bytes.Worst.MaxMean, worst.MaxMean, worst.Jain, 100*worst.IdleFraction, worst.Chi2P)
	case flows == 0:
		return "No equal-cost set carried traffic: no hash imbalance to report."
	}
	return fmt.Sprintf("Too few flows (%s) to judge balance: every equal-cost set carried fewer than %d flows per member.", strings.Join(few, ", "), MinFlowsPerMember)
}

// rackFabricRoles names the roles of the rack and fabric choices, "rack" and
// "fabric" for the Clos, from the stages 1 and 2 pair (a topology file's roles).
func rackFabricRoles(stages []StagePolarization) [2]string {
	for _, sp := range stages {
		if sp.From == 1 && len(sp.FromRoles) > 0 && len(sp.ToRoles) > 0 {
			return [2]string{joinRoles(sp.FromRoles), joinRoles(sp.ToRoles)}
		}
	}
	return [2]string{"rack", "fabric"}
}

// polarizationLine says how much the fabric's member choice depends on the rack's
// (AMI with its interval), or why it is not judged; roles name the two choices.
func polarizationLine(pol Polarization, roles [2]string) string {
	switch {
	case pol.Flows == 0:
		return ""
	case !pol.Judged:
		return sentenceCase(pol.Reason) + "."
	}
	line := fmt.Sprintf("Polarization between %s and %s choices: AMI %s over %s flows (%s)", roles[0], roles[1], pol.AMIEstimate, units.FormatNumber(pol.Flows),
		polWord(pol.AMIEstimate, fmt.Sprintf("the %s choice follows the %s choice", roles[1], roles[0])))
	if e := pol.AMIByRackEstimate; e.Defined() {
		line += fmt.Sprintf("; within each source rack %s", e)
	}
	return line + "."
}

// polWord describes an AMI with its interval: polarized only when the interval lies
// above 0 (strongly from 0.5 on), else consistent with independent choices.
func polWord(e Estimate, follows string) string {
	switch {
	case e.HasCI && e.Lo <= 0 || !e.HasCI && e.Value < 0.1:
		return "consistent with independent choices"
	case e.Value >= 0.5:
		return "strongly polarized: " + follows
	}
	return "partly polarized"
}

// stageLines say how much each ECMP stage's choice depends on the previous stage's,
// for the stage pairs that polarizationLine does not already cover: every pair
// from stages.arrow but stages 1 and 2 when they are the rack and fabric choices.
// Pairs without enough flows are left to the report.
func stageLines(stages []StagePolarization, pol Polarization) []string {
	var h []string
	for _, sp := range stages {
		if !sp.FromStagesArrow || sp.From == 1 && pol.Flows > 0 || !sp.Judged {
			continue
		}
		line := fmt.Sprintf("Polarization between the choices of %s: AMI %s over %s flows (%s)", sp.Name(), sp.AMIEstimate, units.FormatNumber(sp.Flows),
			polWord(sp.AMIEstimate, fmt.Sprintf("the stage-%d choice follows the stage-%d choice", sp.To, sp.From)))
		if e := sp.AMIBySwitchEstimate; e.Defined() {
			line += fmt.Sprintf("; within each stage-%d switch %s", sp.From, e)
		}
		h = append(h, line+".")
	}
	return h
}

// sentenceCase capitalizes the first letter of s.
func sentenceCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func byReason(m map[records.DropReason]int64) string {
	keys := make([]records.DropReason, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i].String() < keys[j].String()
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %s", units.FormatCount(m[k]), k)
	}
	return strings.Join(parts, ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func pct(a, b int64) string {
	if b == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.3g%%", 100*float64(a)/float64(b))
}

func pctOf(a, b int64, tail string) string {
	if b == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s"+tail+")", pct(a, b), units.FormatCount(b))
}

// controlDrops is "3 ACKs, 1 CNP" ("" when none was dropped).
func controlDrops(m map[records.PacketKind]int64) string {
	var parts []string
	for k := range records.PacketKind(records.NumPacketKinds) {
		if n := m[k]; n > 0 && k != records.KindData {
			parts = append(parts, fmt.Sprintf("%s %s%s", units.FormatCount(n), strings.ToUpper(k.String()), plural(int(n))))
		}
	}
	return strings.Join(parts, ", ")
}
