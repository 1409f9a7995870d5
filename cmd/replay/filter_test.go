package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/records"
)

// --filter on inspect, run and sweep: the same packets kept, the rest counted
// filtered, the expression recorded in run.json and sweep.json options, and a bad
// expression one line that points at the token (exit 2).
func TestFilterFlag(t *testing.T) {
	const expr = "udp dst port 4791 or dscp ef"
	code, out, stderr := runCmd("inspect", "--json", "--filter", expr, demo)
	var s struct {
		IPv4    int64            `json:"ipv4_packets"`
		Packets int64            `json:"packets"`
		Skipped map[string]int64 `json:"skipped"`
	}
	if code != exitOK || json.Unmarshal([]byte(out), &s) != nil {
		t.Fatalf("inspect: exit %d, %s", code, stderr)
	}
	if s.IPv4 == 0 || s.IPv4+s.Skipped["filtered"] != 22151 || s.Packets != 22151 {
		t.Fatalf("inspect --filter: %d kept + %d filtered, want 22151 in all", s.IPv4, s.Skipped["filtered"])
	}
	dir := t.TempDir()
	code, _, stderr = runCmd("run", "-q", "--filter", expr, demo, "-o", filepath.Join(dir, "run"))
	if code != exitOK || !strings.Contains(stderr, "(not replayed: "+strconv.FormatInt(s.Skipped["filtered"], 10)+" filtered)") {
		t.Fatalf("run: exit %d, stderr %q", code, stderr)
	}
	run := readRun(t, filepath.Join(dir, "run"))
	if run.Options.Filter != expr || run.Simulation.Injected != s.IPv4 {
		t.Errorf("run.json: options.filter %q, injected %d; want %q and %d", run.Options.Filter, run.Simulation.Injected, expr, s.IPv4)
	}
	sweepFile := filepath.Join(dir, "s.yaml")
	os.WriteFile(sweepFile, []byte("axes: {speedup: [1, 2]}\n"), 0o644)
	code, _, stderr = runCmd("sweep", "-q", "-c", sweepFile, "--filter", expr, demo, "-o", filepath.Join(dir, "sweep"))
	if code != exitOK {
		t.Fatalf("sweep: exit %d, %s", code, stderr)
	}
	sw, err := os.ReadFile(filepath.Join(dir, "sweep", records.SweepFile))
	if err != nil || !strings.Contains(string(sw), `"filter": "`+expr+`"`) {
		t.Errorf("sweep.json lacks the filter (%v)", err)
	}
	for _, p := range []string{"p0000", "p0001"} {
		if r := readRun(t, filepath.Join(dir, "sweep", p)); r.Options.Filter != expr || r.Simulation.Injected != s.IPv4 {
			t.Errorf("%s: options.filter %q, injected %d", p, r.Options.Filter, r.Simulation.Injected)
		}
	}
	code, _, stderr = runCmd("run", "--filter", "udp and prot 4791", demo, "-o", filepath.Join(dir, "bad"))
	if want := "replay run: --filter \"udp and prot 4791\": column 9, \"prot\": unknown word (did you mean port?) (see 'replay run --help')\n"; code != exitUsage || stderr != want {
		t.Errorf("bad filter: exit %d, stderr %q, want %q", code, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad")); err == nil {
		t.Error("a bad filter left an output directory")
	}
}

func readRun(t *testing.T, dir string) *records.Run {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, records.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	var r records.Run
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}
