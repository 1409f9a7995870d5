package main

import (
	"math"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/records"
)

// TestFailuresSection: the section's event row says the failure drops by reason, the
// window counts, the reconvergence and the most loaded member; the watchdog's storm and
// the deadlock's cycle are named.
func TestFailuresSection(t *testing.T) {
	f := &analysis.Failures{WindowPs: analysis.EventWindowPs,
		Events: []analysis.EventImpact{{Kind: "link-down", Target: "rack-p0-r0 fabric-p0-f1", Cycle: -1, TimePs: 2_000_000_000, LocalRepairPs: 2_000_000_000,
			ReconvergedPs: 52_000_000_000, FailureDrops: map[records.DropReason]int64{records.ReasonLinkDown: 3, records.ReasonNoRoute: 2},
			DropsBefore: 1, DropsAfter: 5, PausesBefore: 0, PausesAfter: 4, FlowsMoved: 9, BytesRerouted: 3000,
			MostLoaded: &records.EventMember{Node: "rack-p0-r0", Port: 17, Peer: "fabric-p0-f2", Share: 0.5}, MaxMean: 1.5,
			SlowdownBefore: &analysis.WindowSlowdown{Messages: 40, Complete: 40, P50: 1.25, P99: 2},
			SlowdownAfter:  &analysis.WindowSlowdown{Messages: 38, Complete: 30, P50: 3.5, P99: math.Inf(1), Unfinished: []string{"slowdown_p99"}}}},
		Watchdog:  &records.Watchdog{Action: "drop", DetectionTimePs: 2e9, RestorationTimePs: 2e9, Storms: []records.Storm{{Node: "s0", Port: 1, Peer: "s1", TC: 3, DetectedPs: 5e9, RestoredPs: -1, Dropped: 7}}},
		Deadlocks: []records.Deadlock{{Ports: []records.DeadlockPort{{Node: "s0", Port: 1, Peer: "s1"}, {Node: "s1", Port: 2, Peer: "s0"}}, TC: 3, DetectedPs: 4e9, ResolvedPs: 5e9}},
	}
	sec := failuresSection(f)
	var text []string
	for _, b := range sec.Blocks {
		if b.Table != nil {
			for _, r := range b.Table.Rows {
				text = append(text, strings.Join(r, " | "))
			}
		}
		text = append(text, b.Paragraph, b.NoData)
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{
		"link-down | rack-p0-r0 fabric-p0-f1 | 3 link-down, 2 no-route | 1 / 5 | 0 / 4 |",
		"| 9 | 3 KB | rack-p0-r0:17 > fabric-p0-f2 (50% of its set) | 1.5x | 1.25 / 2.00 (40) | 3.50 / unfinished (38)",
		"s0:1 | s1 | 3 |",
		"| still at the end | 7",
		"PFC deadlock 1 (TC 3), detected at",
		"the cycle s0:1 > s1, s1:2 > s0.",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("section lacks %q:\n%s", want, all)
		}
	}
}

// TestEventImbalanceBlocks: the comparison after an event is one table with the flows
// per run, a row per tier with each run's value and interval, and the best run.
func TestEventImbalanceBlocks(t *testing.T) {
	fm := analysis.AfterMetric("fabric")
	c := &analysis.Comparison{Methods: []string{"crc32", "xor16"}, Events: []analysis.EventImbalance{{Kind: "switch-down", Target: "spine-s0-0",
		TimePs: 1e12, FromPs: 1.05e12, ToPs: 3e12, Flows: map[string]int{"crc32": 389, "xor16": 389}, Metrics: []string{fm},
		ByMethod: map[string]map[string]analysis.Estimate{"crc32": {fm: {Value: 2, Lo: 1.5, Hi: 2.1, HasCI: true}}, "xor16": {fm: {Value: math.NaN()}}},
		Best:     map[string]analysis.Best{fm: {Method: "crc32", Clear: true}}}}}
	blocks := eventImbalanceBlocks(c)
	if len(blocks) != 2 || blocks[0].Table == nil {
		t.Fatalf("blocks %+v", blocks)
	}
	tb := blocks[0].Table
	got := []string{tb.Caption}
	for _, r := range tb.Rows {
		got = append(got, strings.Join(r, " | "))
	}
	want := []string{"Imbalance after switch-down spine-s0-0 at 1,000.000000 ms (flows started from 1,050.000000 ms to 3,000.000000 ms)",
		"flows in the window | 389 | 389 | ", "fabric | 2 [1.5, 2.1] | - | crc32 (clear)"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if eventImbalanceBlocks(&analysis.Comparison{}) != nil {
		t.Error("blocks without events")
	}
}
