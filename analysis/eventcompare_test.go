package analysis

import (
	"math"
	"testing"

	"github.com/tracefabric/tracefabric/records"
)

// afterTable is a rack set (node r0, 2 members, cells 0-1) and a fabric set (node f0,
// 4 members, cells 2-5) crossed by five flows of frame bytes (no packets, so the
// frame estimate is the bytes): first_ps 5, 10, 15, 19, 20 with 1000, 300, 100, 200,
// 5000 bytes; fabric cells fab[i] (rack cells 0, 0, 1, 1, 0).
func afterTable(fab [5]int32) *Run {
	bytes := [5]float64{1000, 300, 100, 200, 5000}
	first := [5]int64{5, 10, 15, 19, 20}
	rack := [5]int32{0, 0, 1, 1, 0}
	ft := FlowTable{Sets: []SetDef{{Node: 0, Tier: records.TierRack, Set: 0, Members: 2, Offset: 0}, {Node: 1, Tier: records.TierFabric, Set: 0, Members: 4, Offset: 2}},
		CellBytes: make([]float64, 6), CellFlows: make([]float64, 6)}
	for i := range 5 {
		ft.Flows = append(ft.Flows, FlowSample{FirstPs: first[i], Bytes: bytes[i], RackCell: rack[i], FabricCell: fab[i], Data: true})
	}
	return &Run{Nodes: Nodes{"r0", "f0"}, Flows: ft, Info: RunInfo{SimPs: 100}}
}

// TestAfterStat: the flows of [10, 20) are flows 1-3. Rack set: 300 + 0 and 100 + 200
// bytes, [300, 300], max/mean 1. Fabric set with member 0 (cell 2) dead: live
// [300, 100, 200], mean 200, max/mean 1.5 (with the dead member counted it would be
// 300 / 150 = 2). Flow 1 counted twice: rack [600, 300] -> 600 / 450 = 4/3, fabric
// [600, 100, 200] -> 600 / 300 = 2.
func TestAfterStat(t *testing.T) {
	r := afterTable([5]int32{2, 3, 4, 5, 2})
	tiers := []Role{TierRole(records.TierRack), TierRole(records.TierFabric)}
	stat := r.Flows.AfterStat(tiers, 10, 20, map[int32]bool{2: true})()
	out := make([]float64, 2)
	stat([]float64{1, 1, 1, 1, 1}, out)
	if out[0] != 1 || out[1] != 1.5 {
		t.Errorf("weights 1: %v, want [1 1.5]", out)
	}
	stat([]float64{1, 2, 1, 1, 1}, out)
	if math.Abs(out[0]-4.0/3) > 1e-12 || out[1] != 2 {
		t.Errorf("flow 1 twice: %v, want [4/3 2]", out)
	}
	all := r.Flows.AfterStat(tiers, 10, 20, nil)()
	all([]float64{1, 1, 1, 1, 1}, out)
	if out[1] != 2 {
		t.Errorf("no dead member: fabric %v, want 2", out[1])
	}
	none := r.Flows.AfterStat(tiers, 50, 60, nil)()
	none([]float64{1, 1, 1, 1, 1}, out)
	if !math.IsNaN(out[0]) || !math.IsNaN(out[1]) {
		t.Errorf("an empty window: %v, want NaN", out)
	}
}

// TestEventImbalances: two runs of the same event (a switch-down at 8, reconverged at
// 10, the next event at 20), run "a" spreading flows 1-3 over the fabric set's live
// members (1.5, as TestAfterStat) and run "b" putting them all on one member (600 on
// one of 3 live: 3); "a" is best on the fabric metric, runner-up "b", difference -1.5.
// An event that changed no set has no comparison; runs with other events none.
func TestEventImbalances(t *testing.T) {
	after := &records.EventAfter{Sets: []records.EventSet{{Node: "f0", Set: 0, Members: []records.EventMember{{Member: 0, Live: false}, {Member: 1, Live: true}, {Member: 2, Live: true}, {Member: 3, Live: true}}}}}
	events := []records.Event{{Kind: "switch-down", Target: "s0", TimePs: 8, ReconvergedPs: 10, After: after}, {Kind: "drain", Target: "s1", TimePs: 20, ReconvergedPs: -1}}
	a, b := afterTable([5]int32{2, 3, 4, 5, 2}), afterTable([5]int32{2, 3, 3, 3, 2})
	a.Events, b.Events = events, events
	c := &Comparison{Methods: []string{"a", "b"}}
	tiers := []Role{TierRole(records.TierRack), TierRole(records.TierFabric)}
	got := c.eventImbalances([]*Run{a, b}, tiers, Options{Bootstrap: 200, Seed: 1})
	if len(got) != 1 {
		t.Fatalf("%d event comparisons, want 1 (the drain changed no set)", len(got))
	}
	e := got[0]
	fm := AfterMetric(TierRole(records.TierFabric))
	if e.FromPs != 10 || e.ToPs != 20 || e.Flows["a"] != 3 || e.ByMethod["a"][fm].Value != 1.5 || e.ByMethod["b"][fm].Value != 3 {
		t.Fatalf("comparison %+v", e)
	}
	best := e.Best[fm]
	if best.Method != "a" || best.RunnerUp != "b" || best.Difference.Value != -1.5 || !best.Difference.HasCI {
		t.Errorf("best %+v, want a ahead of b by -1.5 with an interval", best)
	}
	if rm := e.Best[AfterMetric(TierRole(records.TierRack))]; !rm.Tie {
		t.Errorf("rack metric %+v: both runs have 1, a tie", rm)
	}
	b.Events = events[:1]
	if got := c.eventImbalances([]*Run{a, b}, tiers, Options{Bootstrap: 200, Seed: 1}); got != nil {
		t.Errorf("runs of other events compared: %+v", got)
	}
}
