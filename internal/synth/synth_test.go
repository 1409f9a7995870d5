package synth

import (
	"path/filepath"
	"testing"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/records"
)

// TestWriteLoads: a small synthetic run is a complete run that analysis loads, with
// the sizes asked for and consistent totals.
func TestWriteLoads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	sz := Size{Flows: 2000, PFCEvents: 1000, Drops: 300}
	rj, err := Write(dir, sz, 7)
	if err != nil {
		t.Fatal(err)
	}
	if got := rj.Records[records.FlowsFile]; got != 2000 {
		t.Errorf("flows.arrow rows %d", got)
	}
	if got := rj.Records[records.PFCFile]; got != 1000 {
		t.Errorf("pfc.arrow rows %d, want 1000 (50 chains of 20)", got)
	}
	run, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Drops.Total != 300 || run.FlowTotals.Dropped != 300 {
		t.Errorf("drops: records %d, flows %d, want 300", run.Drops.Total, run.FlowTotals.Dropped)
	}
	// 250 pauses (4 events each); two chains overlapping on one port-class merge
	// into one interval (a refresh), which the random placement allows now and then.
	if got := len(run.Intervals); got > 250 || got < 200 {
		t.Errorf("%d pause intervals, want 200..250", got)
	}
	deep := 0
	for _, e := range run.Episodes {
		deep = max(deep, e.Depth)
	}
	if deep < hopsPerChain {
		t.Errorf("deepest episode %d hops, want >= %d (every chain is %d hops)", deep, hopsPerChain, hopsPerChain)
	}
	if pol := run.Flows.Polarization(); pol.Flows != 2000 {
		t.Errorf("%v flows cross rack and fabric, want all 2000", pol.Flows)
	}
}
