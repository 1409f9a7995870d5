package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/replay"
)

// TestEventsMakeOtherSets: events that make routing bounce through a lower tier (a
// drained fabric switch, a fabric switch that lost its link to a rack) give switches
// equal-cost sets beyond their up set, and flows.arrow records a flow's member, not
// its set. analyze loads such a run (it used to refuse it: "member 7 outside
// fabric-p1-f1's set 0 of 4 members"), counts those flows at no tier and says so in a
// warning; every flow is still in the table.
func TestEventsMakeOtherSets(t *testing.T) {
	cfg, _, err := config.Parse([]byte(`
Routing: {LocalRepairDelay: 10us, ReconvergenceDelay: 1ms}
Events:
  - {At: 200ms, Kind: link-down, Link: [rack-p0-r0, fabric-p0-f1]}
  - {At: 300ms, Kind: link-up, Link: [rack-p0-r0, fabric-p0-f1]}
  - {At: 400ms, Kind: switch-down, Node: spine-s1-2}
  - {At: 800ms, Kind: switch-up, Node: spine-s1-2}
  - {At: 500ms, Kind: drain, Node: fabric-p1-f3}
  - {At: 900ms, Kind: undrain, Node: fabric-p1-f3}
  - {At: 1000ms, Kind: flap, Link: ["fabric-p0-f2", "spine-s2-*"], Period: 200ms, Count: 3}
  - {At: 600ms, Kind: speed, Link: [rack-p1-r1, "fabric-p1-*"], Speed: 25Gbps}
  - {At: 1100ms, Kind: link-down, Link: [fabric-p1-f0, rack-p1-r2]}
`), "events.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	meta := replayWith(t, dir, replay.Options{Traces: []string{demo}, Config: cfg})
	run, err := analysis.Load(dir)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if run.OtherSetFlows == 0 {
		t.Fatal("no flow on a set an event made: the scenario no longer makes one")
	}
	if int64(len(run.Flows.Flows)) != meta.Records["flows.arrow"] {
		t.Errorf("%d flows in the table, flows.arrow has %d", len(run.Flows.Flows), meta.Records["flows.arrow"])
	}
	s, err := analysis.Analyze(run, analysis.Options{Bootstrap: 50})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range s.Warnings {
		found = found || strings.Contains(w, "flows took a member of an equal-cost set an event made")
	}
	if !found {
		t.Errorf("warnings %q lack the other sets' flows", s.Warnings)
	}
	t.Logf("%d flows on other sets", run.OtherSetFlows)
}
