package sweep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
)

// TestTopologyAndProfileAxes: a sweep over two topology files (relative to the sweep
// file) and a spine profile's buffer: four points, each run through its own fabric
// (run.json's topology names the file and shape) with its profile's buffer; the
// fabrics are prepared once per file.
func TestTopologyAndProfileAxes(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"ls.yaml": "Generator: leaf-spine\nLeaves: 8\nSpines: 2\nHostsPerLeaf: 16\n",
		"fs.yaml": "Generator: five-stage\nPods: 2\nLeavesPerPod: 4\nHostsPerLeaf: 16\nSpinesPerPod: 2\nSuperSpinesPerPlane: 1\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sweepFile := filepath.Join(dir, "sweep.yaml")
	src := "axes:\n  set:\n    Topology.File: [ls.yaml, fs.yaml]\n    Switches.spine.BufferSize: [64MiB, 1GiB]\n"
	f, err := Parse([]byte(src), sweepFile)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Expand(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Points) != 4 {
		t.Fatalf("%d points", len(pl.Points))
	}
	out := filepath.Join(dir, "out")
	res, err := Run(pl, Options{Run: replay.Options{Traces: []string{demo}, Version: "test"}, Dir: out, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	shapes := map[string]int{}
	buffers := map[units.Bytes]int{}
	for _, p := range res.Sweep.Points {
		run, err := records.ReadRun(filepath.Join(out, p.Dir))
		if err != nil {
			t.Fatal(err)
		}
		var cfg config.Config
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			t.Fatal(err)
		}
		buffers[cfg.Switches["spine"].BufferSize]++
		shapes[run.Topology.Shape]++
		var spines int
		for _, s := range run.Topology.Switches {
			if s.Role == "spine" {
				spines++
				if s.Profile != "spine" {
					t.Errorf("%s: spine %s has profile %q", p.Dir, s.Name, s.Profile)
				}
			}
		}
		if spines == 0 || run.Topology.File == "" || filepath.Dir(run.Topology.File) != dir {
			t.Errorf("%s: %d spines, file %q", p.Dir, spines, run.Topology.File)
		}
	}
	if shapes["leaf-spine"] != 2 || shapes["five-stage"] != 2 || buffers[64*units.MiB] != 2 || buffers[units.GiB] != 2 {
		t.Errorf("shapes %v, spine buffers %v", shapes, buffers)
	}
}
