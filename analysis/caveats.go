package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// FallbackHeadlineShare is the share of a closed-loop run's flows that, replayed open
// loop because closed loop cannot re-send them (run.json closed_loop.fallback), makes
// the headline say so (docs/analysis.md#headline-caveats). Below it the report's Run
// section still counts them.
const FallbackHeadlineShare = 0.01

// Caveats are the lines that qualify every other number of a run, first in its
// headline (docs/analysis.md#headline-caveats): the host mapping's warning (every
// endpoint on one rack, or on one host: run.json host_mapping.warning), a run whose
// every replayed packet had both ends on one host (nothing entered the fabric), and,
// closed loop, the flows that fell back to open loop when they are at least
// FallbackHeadlineShare of the flows. None for a run without such a caveat.
func Caveats(info RunInfo) []string {
	var out []string
	if m := info.HostMapping; m != nil && m.Warning != "" {
		out = append(out, "Host mapping: "+m.Warning+".")
	} else if info.Injected == 0 && info.IntraHost > 0 {
		hosts := info.Options.Hosts
		if hosts == "" {
			hosts = "the host mapping"
		} else {
			hosts = "--hosts " + hosts
		}
		out = append(out, fmt.Sprintf("Host mapping: %s put both ends of every one of the %s replayed packets on one host: nothing entered the fabric; map the endpoints onto distinct hosts (--hosts spread, --hosts subnet, or another CSV file).",
			hosts, units.FormatCount(info.IntraHost)))
	}
	if line := FallbackLine(info.ClosedLoopFlows); line != "" {
		out = append(out, line)
	}
	return out
}

// FallbackLine is the headline's caveat of a closed-loop run whose flows were
// replayed open loop because closed loop cannot re-send them, with why: "Closed loop
// fell back to open loop for 4 of 13 flows (30.8%): 3 control-without-sender, 1
// fragmented; ...". "" for an open-loop run (c nil) and when fewer than
// FallbackHeadlineShare of the flows fell back (none included).
func FallbackLine(c *records.ClosedLoop) string {
	n, why := Fallbacks(c)
	if n == 0 || float64(n) < FallbackHeadlineShare*float64(c.Flows) {
		return ""
	}
	return fmt.Sprintf("Closed loop fell back to open loop for %s of %s flow%s (%s): %s; these entered the fabric at their captured times whatever it did (docs/model.md#application-model).",
		units.FormatCount(n), units.FormatCount(c.Flows), plural(int(c.Flows)), pct(n, c.Flows), why)
}

// Fallbacks counts the flows of closed_loop.fallback and lists them by reason, most
// first ("3 control-without-sender, 1 fragmented"; reasons in
// records.FallbackReasons order on ties, reasons of a newer replay after them).
func Fallbacks(c *records.ClosedLoop) (n int64, why string) {
	if c == nil {
		return 0, ""
	}
	reasons := slices.Clone(records.FallbackReasons)
	for _, r := range slices.Sorted(maps.Keys(c.Fallback)) {
		if !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	slices.SortStableFunc(reasons, func(a, b string) int { return cmp.Compare(c.Fallback[b], c.Fallback[a]) })
	var parts []string
	for _, r := range reasons {
		if k := c.Fallback[r]; k > 0 {
			n += k
			parts = append(parts, fmt.Sprintf("%s %s", units.FormatCount(k), r))
		}
	}
	return n, strings.Join(parts, ", ")
}
