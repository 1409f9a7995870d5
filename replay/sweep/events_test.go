package sweep

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
)

// TestEventsAxis: Events as a sweep axis (docs/sweeps.md), a healthy point and each
// of two spines of plane 0 failed in turn: three runs, the healthy one with no events
// in run.json, each failed one with exactly its own switch-down on its own spine,
// which moved flows, and every run conserving its packets.
func TestEventsAxis(t *testing.T) {
	dir := t.TempDir()
	src := `axes:
  set:
    Events:
      - []
      - [{At: 1s, Kind: switch-down, Node: spine-s0-0}]
      - [{At: 1s, Kind: switch-down, Node: spine-s0-1}]
`
	f, err := Parse([]byte(src), filepath.Join(dir, "sweep.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Expand(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Points) != 3 {
		t.Fatalf("%d points, want 3", len(pl.Points))
	}
	out := filepath.Join(dir, "out")
	res, err := Run(pl, Options{Run: replay.Options{Traces: []string{demo}, Version: "test"}, Dir: out, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	down := map[string]int{}
	healthy := 0
	for _, p := range res.Sweep.Points {
		run, err := records.ReadRun(filepath.Join(out, p.Dir))
		if err != nil {
			t.Fatal(err)
		}
		var cfg config.Config
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			t.Fatal(err)
		}
		if len(cfg.Events) != len(run.Events) {
			t.Errorf("%s: %d configured events, %d in run.json", p.Dir, len(cfg.Events), len(run.Events))
		}
		c := &run.Simulation
		if c.Injected != c.Delivered+c.DroppedTotal()+c.UndrainedTotal() {
			t.Errorf("%s: injected %d != delivered %d + dropped %d + undrained %d", p.Dir, c.Injected, c.Delivered, c.DroppedTotal(), c.UndrainedTotal())
		}
		switch len(run.Events) {
		case 0:
			healthy++
		case 1:
			e := run.Events[0]
			if e.Kind != "switch-down" || len(e.Nodes) != 1 || e.Nodes[0] != e.Target || e.TimePs <= 0 {
				t.Errorf("%s: event %+v, want one switch-down of its target", p.Dir, e)
			}
			if e.FlowsMoved == 0 || e.SetsChanged == 0 {
				t.Errorf("%s: %s down moved %d flows in %d sets, want some", p.Dir, e.Target, e.FlowsMoved, e.SetsChanged)
			}
			down[e.Target]++
		default:
			t.Errorf("%s: %d events", p.Dir, len(run.Events))
		}
	}
	if healthy != 1 || down["spine-s0-0"] != 1 || down["spine-s0-1"] != 1 {
		t.Errorf("healthy points %d, failed spines %v; want 1 and one point each of spine-s0-0 and spine-s0-1", healthy, down)
	}
}
