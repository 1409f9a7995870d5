package tracegen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/replay"
)

func TestScratchReplay(t *testing.T) {
	files := os.Getenv("SCRATCH_FILES")
	if files == "" {
		t.Skip()
	}
	for _, f := range filepath.SplitList(files) {
		pr, err := replay.Prepare(replay.Options{Traces: []string{f}})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		run, err := pr.Run(out, "")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(run.Simulation, "", " ")
		t.Logf("%s: %s", f, b)
		if d := os.Getenv("SCRATCH_KEEP"); d != "" {
			os.RemoveAll(filepath.Join(d, filepath.Base(f)))
			os.Rename(out, filepath.Join(d, filepath.Base(f)))
		}
	}
}

func TestScratchAnalyze(t *testing.T) {
	dirs := os.Getenv("SCRATCH_RUNS")
	if dirs == "" {
		t.Skip()
	}
	for _, d := range filepath.SplitList(dirs) {
		run, err := analysis.Load(d)
		if err != nil {
			t.Fatal(err)
		}
		s, err := analysis.Analyze(run, analysis.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		s.PFC.Timeline = nil
		s.PFC.Ports = nil
		s.Drops.Rate = analysis.DropRate{}
		pfc, _ := json.MarshalIndent(s.PFC, "", " ")
		if len(pfc) > 6000 {
			pfc = pfc[:6000]
		}
		dr, _ := json.MarshalIndent(s.Drops, "", " ")
		if len(dr) > 4000 {
			dr = dr[:4000]
		}
		t.Logf("%s\nPFC %s\nDROPS %s", d, pfc, dr)
	}
}
