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
	d := s.Drops
	inj := s.Run.Injected
	if inj == 0 {
		inj = s.Flows.Packets
	}
	switch {
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
	p := s.PFC
	switch {
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
	if s.Imbalance == nil || len(s.Imbalance.Tiers) == 0 {
		h = append(h, "No equal-cost set carried traffic: no hash imbalance to report.")
	} else {
		var worst *TierImbalance
		for _, t := range s.Imbalance.TierNames() {
			ti := s.Imbalance.Tiers[t]
			if ti.Sets > 0 && (worst == nil || ti.Bytes.Worst.MaxMean > worst.Bytes.Worst.MaxMean) {
				worst = ti
			}
		}
		if worst == nil {
			h = append(h, "No equal-cost set carried traffic: no hash imbalance to report.")
		} else {
			ti := worst
			h = append(h, fmt.Sprintf("Worst ECMP imbalance at the %s tier: set %s carries %.2fx the mean member load in bytes (tier: max/mean %.2f, Jain %.3f, idle members %.0f%%, flow chi-square p = %.3g).",
				ti.Tier, ti.Bytes.Worst.MaxMeanSet, ti.Bytes.Worst.MaxMean, ti.MaxMean, ti.Jain, 100*ti.IdleFraction, ti.Chi2P))
		}
	}
	if pol := s.Polarization; pol.Flows > 0 {
		h = append(h, fmt.Sprintf("Polarization between rack and fabric choices: NMI %.3g over %s flows (%s); within each source rack %.3g.", pol.NMI, units.FormatCount(int64(pol.Flows)), polWord(pol.NMI), pol.NMIByRack))
	}
	if s.ECN.Marked == 0 && s.ECN.DeliveredCE == 0 {
		h = append(h, "No packets were ECN-marked.")
	} else {
		h = append(h, fmt.Sprintf("ECN: %s mark%s at %s queue%s; %s of delivered packets arrived CE-marked.", units.FormatCount(s.ECN.Marked), plural(int(s.ECN.Marked)), units.FormatCount(int64(len(s.ECN.Queues))), plural(len(s.ECN.Queues)), pct(s.ECN.DeliveredCE, s.ECN.Delivered)))
	}
	if s.Delay.All.Packets > 0 {
		h = append(h, fmt.Sprintf("One-way delay: p50 %s, p99 %s over %s delivered packets.", units.FormatPs(s.Delay.All.P50Ps), units.FormatPs(s.Delay.All.P99Ps), units.FormatCount(s.Delay.All.Packets)))
	}
	return h
}

// polWord describes an NMI: >= 0.5 strong, >= 0.1 partial, else independent.
func polWord(nmi float64) string {
	switch {
	case nmi >= 0.5:
		return "strongly polarized: the fabric choice follows the rack choice"
	case nmi >= 0.1:
		return "partly polarized"
	default:
		return "independent choices"
	}
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
