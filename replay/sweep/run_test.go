package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
)

var demo = filepath.Join("..", "..", "testdata", "pcaps", "demo.pcap")

func plan(t *testing.T, src string) *Plan {
	t.Helper()
	f, err := Parse([]byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Expand(f)
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func ids(ps []*Point) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.ID)
	}
	return out
}

// --index I --of N runs exactly the points k with k mod N == I; sweep.json is
// complete once every index ran; a point whose directory is complete is not run
// again, one that is missing is.
func TestRunPartitionAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the demo trace 7 times")
	}
	pl := plan(t, "axes:\n  hash: [crc16, xor16]\n  set:\n    BufferSize: [32MiB, 64MiB, 128MiB]\n")
	dir := filepath.Join(t.TempDir(), "sw")
	opt := Options{Run: replay.Options{Traces: []string{demo}, Version: "test"}, Dir: dir, Jobs: 2, Index: 1, Of: 2}
	res, err := Run(pl, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.Ran); !slices.Equal(got, []int{1, 3, 5}) || len(res.Skipped) != 0 {
		t.Fatalf("index 1 of 2 ran %v (skipped %v), want [1 3 5]", got, ids(res.Skipped))
	}
	s, err := records.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Complete || s.Counts[records.StatusDone] != 3 || s.Counts[records.StatusMissing] != 3 {
		t.Errorf("after index 1: complete %v counts %v", s.Complete, s.Counts)
	}
	for _, p := range s.Points {
		_, err := os.Stat(filepath.Join(dir, p.Dir))
		if done := p.ID%2 == 1; (err == nil) != done || (p.Status == records.StatusDone) != done {
			t.Errorf("%s: stat %v status %s", p.Dir, err, p.Status)
		}
	}
	opt.Index = 0
	if res, err = Run(pl, opt); err != nil {
		t.Fatal(err)
	}
	if got := ids(res.Ran); !slices.Equal(got, []int{0, 2, 4}) {
		t.Fatalf("index 0 of 2 ran %v", got)
	}
	if !res.Sweep.Complete {
		t.Errorf("sweep.json after both indexes: complete false, counts %v", res.Sweep.Counts)
	}
	// Each point's run.json holds its settings.
	for _, p := range pl.Points {
		run, err := records.ReadRun(filepath.Join(dir, p.Dir()))
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct{ Switch struct{ BufferSize string } }
		if err := json.Unmarshal(run.Config, &cfg); err != nil {
			t.Fatal(err)
		}
		if run.HashMethod.String() != p.Values[0] || cfg.Switch.BufferSize != p.Values[1] {
			t.Errorf("%s: run.json hash %s, buffer %s, want %v", p.Dir(), run.HashMethod, cfg.Switch.BufferSize, p.Values)
		}
	}
	// Resume: remove one point, run everything: only it runs.
	if err := os.RemoveAll(filepath.Join(dir, "p0004")); err != nil {
		t.Fatal(err)
	}
	opt.Index, opt.Of = 0, 0
	if res, err = Run(pl, opt); err != nil {
		t.Fatal(err)
	}
	if got := ids(res.Ran); !slices.Equal(got, []int{4}) || len(res.Skipped) != 5 || !res.Sweep.Complete {
		t.Errorf("resume ran %v, skipped %v, complete %v", got, ids(res.Skipped), res.Sweep.Complete)
	}
}

// A directory that holds something else, or another sweep, is refused before
// anything runs; a point directory holding a run of other settings is run again.
func TestRunRefusesOthersDirectories(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the demo trace")
	}
	pl := plan(t, "set: {Topology.Pods: 1, Topology.HostsPerRack: 32}\naxes:\n  hash: [crc16, xor16]\n")
	opt := Options{Run: replay.Options{Traces: []string{demo}, Version: "test"}, Jobs: 1}

	opt.Dir = t.TempDir()
	os.WriteFile(filepath.Join(opt.Dir, "notes.txt"), []byte("mine"), 0o644)
	if _, err := Run(pl, opt); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), `"notes.txt"`) {
		t.Errorf("a directory of notes: %v", err)
	}

	opt.Dir = filepath.Join(t.TempDir(), "sw")
	if _, err := Run(pl, opt); err != nil {
		t.Fatal(err)
	}
	other := plan(t, "set: {Topology.Pods: 1, Topology.HostsPerRack: 32}\naxes:\n  hash: [crc16, crc32]\n")
	if _, err := Run(other, opt); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "describes another sweep (other axes)") {
		t.Errorf("another sweep into the same directory: %v", err)
	}
	// p0001 replaced by p0000's run: a mismatch, run again.
	p1 := filepath.Join(opt.Dir, "p0001")
	os.RemoveAll(p1)
	if err := os.CopyFS(p1, os.DirFS(filepath.Join(opt.Dir, "p0000"))); err != nil {
		t.Fatal(err)
	}
	s, _ := records.ReadSweep(opt.Dir)
	s.Scan(opt.Dir)
	if s.Points[1].Status != records.StatusMismatch {
		t.Fatalf("p0001 holding p0000's run: status %s", s.Points[1].Status)
	}
	res, err := Run(pl, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.Ran); !slices.Equal(got, []int{1}) {
		t.Errorf("ran %v, want p0001 again", got)
	}
	if run, err := records.ReadRun(p1); err != nil || run.HashMethod.String() != "xor16" {
		t.Errorf("p0001 after the rerun: %v %v", run, err)
	}
}

// Points replay the trace from memory (Options.Cache): one copy per topology, open
// and closed loop together, the same records, byte for byte, as points that each
// read the capture; a cache that does not fit is not made.
func TestRunCachedTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the demo trace 16 times")
	}
	pl := plan(t, "axes:\n  hash: [crc16, xor16]\n  transport: [open, closed]\n  speedup: [1, 2]\n")
	root := t.TempDir()
	run := func(name string, cache int64) *Result {
		opt := Options{Run: replay.Options{Traces: []string{demo}, Version: "test"}, Dir: filepath.Join(root, name), Jobs: 2, Cache: cache}
		res, err := Run(pl, opt)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Ran) != len(pl.Points) {
			t.Fatalf("%s: ran %d of %d points", name, len(res.Ran), len(pl.Points))
		}
		return res
	}
	cached, streamed, small := run("cached", 1<<30), run("streamed", 0), run("small", 1000)
	// The demo trace: 22,151 packets, 632 flows, once for both transport modes.
	want := 22151*replay.CacheEntryBytes + 632*replay.CacheFlowBytes
	if cached.Cached != want || streamed.Cached != 0 || small.Cached != 0 {
		t.Errorf("cache of %d, %d and %d bytes; want %d, 0 and 0", cached.Cached, streamed.Cached, small.Cached, want)
	}
	for _, p := range pl.Points {
		for _, name := range records.Files() {
			x, errx := os.ReadFile(filepath.Join(root, "cached", p.Dir(), name))
			y, erry := os.ReadFile(filepath.Join(root, "streamed", p.Dir(), name))
			if os.IsNotExist(errx) && os.IsNotExist(erry) {
				continue
			}
			if errx != nil || erry != nil || !bytes.Equal(x, y) {
				t.Errorf("%s %s: the cached and the streamed point differ (%v, %v)", p.Dir(), name, errx, erry)
			}
		}
	}
}

// A point whose replay fails is recorded failed, with its reason, in sweep.json; the
// other points run; a later scan keeps it failed (it is not merely missing) until a
// run of it completes; the same command runs it again.
func TestRunFailedPoint(t *testing.T) {
	if testing.Short() {
		t.Skip("replays the demo trace 3 times")
	}
	pl := plan(t, "set: {Topology.Pods: 1, Topology.HostsPerRack: 32}\naxes:\n  hash: [crc16, xor16]\n")
	dir := filepath.Join(t.TempDir(), "sw")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A regular file where p0001's run directory goes: its replay cannot write.
	blocker := filepath.Join(dir, "p0001")
	if err := os.WriteFile(blocker, []byte("in the way"), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := Options{Run: replay.Options{Traces: []string{demo}, Version: "test"}, Dir: dir, Jobs: 1}
	res, err := Run(pl, opt)
	if err == nil || !strings.Contains(err.Error(), "p0001") {
		t.Fatalf("a failing point: error %v, want one naming p0001", err)
	}
	if got := ids(res.Ran); !slices.Equal(got, []int{0}) {
		t.Errorf("ran %v, want [0] (the other point still runs)", got)
	}
	check := func(when string, s *records.Sweep) {
		t.Helper()
		p := s.Points[1]
		if p.Status != records.StatusFailed || !strings.Contains(p.Detail, "p0001") || !strings.Contains(p.Detail, "not a directory") {
			t.Errorf("%s: p0001 status %s, detail %q; want failed with the replay's reason", when, p.Status, p.Detail)
		}
		if s.Points[0].Status != records.StatusDone || s.Counts[records.StatusFailed] != 1 || s.Counts[records.StatusDone] != 1 || s.Complete {
			t.Errorf("%s: counts %v, complete %v", when, s.Counts, s.Complete)
		}
	}
	check("the sweep's result", res.Sweep)
	s, err := records.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	check("sweep.json", s)
	s.Scan(dir) // as replay sweep --status does
	check("a later scan", s)
	// Out of the way: the same command runs it again and the sweep completes.
	os.Remove(blocker)
	res, err = Run(pl, opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(res.Ran); !slices.Equal(got, []int{1}) || !res.Sweep.Complete || res.Sweep.Points[1].Detail != "" {
		t.Errorf("rerun ran %v, complete %v, p0001 %+v", got, res.Sweep.Complete, res.Sweep.Points[1])
	}
}

// replicate and target_load axes: each point replays its own copies at the speedup
// its target load gives (run.json offered_load within 1% of the target), the
// replicated point with twice the packets; sweep.json records both per point, and a
// second run finds every point done (nothing replays again).
func TestRunLoadAxes(t *testing.T) {
	pl := plan(t, "axes:\n  replicate: [1, 2]\n  target_load: [40]\n")
	if a := pl.File.Axes; len(a) != 2 || a[0].Kind != records.KindNumber || a[1].Kind != records.KindNumber {
		t.Fatalf("axes %+v", a)
	}
	dir := filepath.Join(t.TempDir(), "sw")
	incast := filepath.Join("..", "..", "testdata", "pcaps", "incast.pcap")
	opt := Options{Run: replay.Options{Traces: []string{incast}, Version: "test"}, Dir: dir, Jobs: 2, Cache: 1 << 30}
	res, err := Run(pl, opt)
	if err != nil {
		t.Fatal(err)
	}
	var injected [2]int64
	for i, p := range res.Sweep.Points {
		run, err := records.ReadRun(filepath.Join(dir, p.Dir))
		if err != nil {
			t.Fatal(err)
		}
		ol := run.OfferedLoad
		if p.TargetLoad != 40 || !slices.Equal(p.Replicate, [][]int{nil, {2}}[i]) || run.Options.TargetLoad != 40 ||
			ol.P99Share < 0.396 || ol.P99Share > 0.404 || ol.Speedup != run.Options.Speedup {
			t.Errorf("%s: point %+v, options %+v, offered_load %+v", p.Dir, p, run.Options, ol)
		}
		injected[i] = run.Simulation.Injected
	}
	if injected[1] != 2*injected[0] {
		t.Errorf("injected %v: the replicated point should have twice the packets", injected)
	}
	res, err = Run(pl, opt)
	if err != nil || len(res.Ran) != 0 || len(res.Skipped) != 2 {
		t.Errorf("second run: ran %v, skipped %v, %v", ids(res.Ran), ids(res.Skipped), err)
	}
	if _, err := Parse([]byte("axes:\n  speedup: [1, 2]\n  target_load: [40]\n"), ""); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("speedup and target_load: %v", err)
	}
	for _, bad := range []string{"axes: {replicate: [0]}", "axes: {replicate: [2x]}", "axes: {target_load: [-5]}"} {
		if _, err := Parse([]byte(bad), ""); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	if f, err := Parse([]byte("axes: {replicate: [\"3,1\", 2]}"), ""); err != nil || f.Axes[0].Kind != records.KindCategory {
		t.Errorf("per-trace counts: %v, %+v", err, f)
	}
}
