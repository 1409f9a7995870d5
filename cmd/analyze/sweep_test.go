package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
	"github.com/tracefabric/tracefabric/replay/sweep"
)

// runSweep runs the sweep file src over the demo trace into dir (through package
// sweep, as `replay sweep` does).
func runSweep(t *testing.T, src, dir string) { t.Helper(); runSweepOf(t, src, dir, demo) }

// runSweepOf runs the sweep file src over traces into dir.
func runSweepOf(t *testing.T, src, dir string, traces ...string) {
	t.Helper()
	f, err := sweep.Parse([]byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := sweep.Expand(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sweep.Run(pl, sweep.Options{Run: replay.Options{Traces: traces, Version: "test"}, Dir: dir, Jobs: 2}); err != nil {
		t.Fatal(err)
	}
}

// analyze of the 12-point demo sweep (4 hashes x 3 buffer sizes) answers "smallest
// BufferSize with no drop" for every hash as the points' own run.json say, in
// summary.json and in the headline; tables/sweep.csv holds run.json's drops; a
// figure per metric.
func TestAnalyzeSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("12 replays")
	}
	dir := filepath.Join(t.TempDir(), "sweep")
	hashes := []string{"crc32", "crc16", "xor16", "crc32WithSalt"}
	sizes := []string{"64MiB", "112MiB", "128MiB"}
	runSweep(t, "axes:\n  hash: ["+strings.Join(hashes, ", ")+"]\n  set:\n    Switch.BufferSize: ["+strings.Join(sizes, ", ")+"]\n", dir)

	// The answers from the points' run.json: per hash, the first size (they grow)
	// whose run dropped nothing.
	want := map[string]string{}
	drops := map[string]int64{}
	var lossless int64
	for k := range 12 {
		p := records.PointDir(k)
		run, err := records.ReadRun(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		h, size := hashes[k/3], sizes[k%3]
		if run.HashMethod.String() != h {
			t.Fatalf("%s: hash %s", p, run.HashMethod)
		}
		drops[p] = run.Simulation.DroppedTotal()
		lossless += run.Simulation.LosslessDrops
		if _, ok := want[h]; !ok && drops[p] == 0 {
			want[h] = size
		}
	}
	distinct := map[string]bool{}
	for _, h := range hashes {
		distinct[want[h]] = true
	}
	if len(distinct) < 2 {
		t.Fatalf("the sweep does not tell the hashes apart (answers %v): choose other sizes", want)
	}

	code, stdout, stderr := runCmd(dir, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum struct {
		Headline []string
		Figures  []string
		NoData   map[string]string `json:"no_data"`
		Sweep    struct {
			Answers []struct {
				Metric, Axis, Value string
				LineAxes            []string `json:"line_axes"`
				LineValues          []string `json:"line_values"`
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "analysis", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range sum.Sweep.Answers {
		if a.Metric == "drops" && a.Axis == "Switch.BufferSize" {
			if len(a.LineAxes) != 1 || a.LineAxes[0] != "hash" || len(a.LineValues) != 1 {
				t.Fatalf("answer line %q %q", a.LineAxes, a.LineValues)
			}
			got[a.LineValues[0]] = a.Value
		}
	}
	for _, h := range hashes {
		if got[h] != want[h] {
			t.Errorf("smallest BufferSize with no drop at hash=%s: analyze says %q, run.json says %q", h, got[h], want[h])
		}
	}
	var sentence string
	for _, l := range sum.Headline {
		if strings.HasPrefix(l, "Smallest Switch.BufferSize with no drop: ") {
			sentence = l
		}
	}
	// The sentence groups the hashes by answer: "112MiB at hash=crc16; 128MiB at
	// hash=crc32/xor16/crc32WithSalt" (first appearance order).
	byAnswer := map[string][]string{}
	var order []string
	for _, h := range hashes {
		if _, ok := byAnswer[want[h]]; !ok {
			order = append(order, want[h])
		}
		byAnswer[want[h]] = append(byAnswer[want[h]], h)
	}
	var parts []string
	for _, w := range order {
		parts = append(parts, w+" at hash="+strings.Join(byAnswer[w], "/"))
	}
	if exp := "Smallest Switch.BufferSize with no drop: " + strings.Join(parts, "; ") + "."; sentence != exp {
		t.Errorf("headline %q, want %q", sentence, exp)
	}
	if !strings.Contains(stdout, sentence) {
		t.Errorf("the printed summary lacks the headline:\n%s", stdout)
	}
	// tables/sweep.csv: one row per point, drops as run.json says.
	f, err := os.Open(filepath.Join(dir, "analysis", "tables", "sweep.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 13 {
		t.Fatalf("sweep.csv: %d rows, %v", len(rows), err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, r := range rows[1:] {
		if r[col["drops"]] != strconv.FormatInt(drops[r[col["point"]]], 10) {
			t.Errorf("%s: drops %s in sweep.csv, %d in run.json", r[col["point"]], r[col["drops"]], drops[r[col["point"]]])
		}
	}
	for _, name := range []string{"sweep_drops", "sweep_pfc_paused_ps"} {
		if _, err := os.Stat(filepath.Join(dir, "analysis", "plots", name+".png")); err != nil || !strings.Contains(strings.Join(sum.Figures, " "), name) {
			t.Errorf("figure %s: %v (figures %v)", name, err, sum.Figures)
		}
	}
	// No point had a lossless drop (run.json): its figure, a line at 0, is not drawn.
	if lossless != 0 {
		t.Fatalf("the demo sweep had %d lossless drops: choose another metric for this check", lossless)
	}
	if _, err := os.Stat(filepath.Join(dir, "analysis", "plots", "sweep_lossless_drops.png")); err == nil || sum.NoData["sweep_lossless_drops"] != "0 at every point" ||
		!strings.Contains(stdout, "not drawn: sweep_lossless_drops (0 at every point)") {
		t.Errorf("the all-zero lossless drops figure: drawn %v, no_data %q", err == nil, sum.NoData["sweep_lossless_drops"])
	}
	if html, err := os.ReadFile(filepath.Join(dir, "analysis", "report.html")); err != nil || !strings.Contains(string(html), "smallest Switch.BufferSize with no drop") {
		t.Errorf("report.html: %v", err)
	}

	// p0004 (crc16 at 112MiB) failed: without --partial the sweep is refused, with a
	// hint; with it, the 11 other points are analyzed and p0004 is named.
	failPoint(t, dir, 4, "replay: the reason p0004 failed")
	code, _, stderr = runCmd(dir, "-q")
	if code != exitUsage || !strings.Contains(stderr, "1 of 12 points not done (p0004 failed;") || !strings.Contains(stderr, "analyze --partial analyzes the 11 done") {
		t.Errorf("a sweep with a failed point: exit %d, stderr %q", code, stderr)
	}
	code, stdout, stderr = runCmd(dir, "-q", "--partial")
	if code != exitOK {
		t.Fatalf("--partial: exit %d: %s", code, stderr)
	}
	part := readJSON(t, filepath.Join(dir, "analysis", "summary.json"))
	head, _ := lookup(part, "headline")
	first := head.([]any)[0].(string)
	if want := "Partial sweep: 11 of 12 points analyzed; not done: p0004 (hash=crc16, Switch.BufferSize=112MiB) failed: replay: the reason p0004 failed."; first != want || !strings.Contains(stdout, want) {
		t.Errorf("--partial headline %q, want %q", first, want)
	}
	if pts, _ := lookup(part, "sweep", "points"); len(pts.([]any)) != 11 {
		t.Errorf("--partial analyzed %d points, want 11", len(pts.([]any)))
	}
	nd, _ := lookup(part, "sweep", "not_done")
	if l, ok := nd.([]any); !ok || len(l) != 1 || l[0].(map[string]any)["dir"] != "p0004" || l[0].(map[string]any)["status"] != "failed" {
		t.Errorf("sweep.not_done %v", nd)
	}
	ans, _ := lookup(part, "sweep", "answers")
	for _, a := range ans.([]any) {
		a := a.(map[string]any)
		if a["axis"] != "Switch.BufferSize" {
			continue
		}
		na, _ := a["not_analyzed"].([]any)
		if line := a["line_values"].([]any)[0]; (line == "crc16") != (len(na) == 1 && na[0] == "112MiB") {
			t.Errorf("answer at hash=%v: not analyzed %v", line, na)
		}
	}
	if md := readFile(t, filepath.Join(dir, "analysis", "report.md")); !strings.Contains(md, "| p0004 | hash=crc16, Switch.BufferSize=112MiB | failed | replay: the reason p0004 failed |") {
		t.Error("the report does not list the point left out")
	}
}

// failPoint marks point k failed in dir's sweep.json, as the process whose replay of
// it failed does, and removes its run directory.
func failPoint(t *testing.T, dir string, k int, reason string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, records.PointDir(k))); err != nil {
		t.Fatal(err)
	}
	sw, err := records.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	sw.Points[k].Status, sw.Points[k].Detail = records.StatusFailed, reason
	if err := records.WriteSweep(dir, sw); err != nil {
		t.Fatal(err)
	}
}

// A sweep of one categorical axis reads like the comparison of `replay run --hash
// all`; an incomplete sweep is refused (exit 2) and says which points are missing.
func TestAnalyzeSweepOfOneAxis(t *testing.T) {
	if testing.Short() {
		t.Skip("2 replays")
	}
	dir := filepath.Join(t.TempDir(), "sweep")
	runSweep(t, "set: {Topology.Pods: 1, Topology.HostsPerRack: 32}\naxes:\n  hash: [crc32, crc32WithSalt]\n", dir)
	if code, _, stderr := runCmd(dir, "-q"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum struct {
		Comparison map[string]any
		Runs       []struct{ Dir, Method string }
	}
	data, err := os.ReadFile(filepath.Join(dir, "analysis", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Runs) != 2 || sum.Runs[0].Method != "crc32" || sum.Runs[1].Method != "crc32WithSalt" || sum.Comparison["crc32"] == nil {
		t.Errorf("runs %+v, comparison of %d methods", sum.Runs, len(sum.Comparison))
	}
	os.RemoveAll(filepath.Join(dir, "p0001"))
	code, _, stderr := runCmd(dir, "-q")
	if code != exitUsage || !strings.Contains(stderr, "1 of 2 points not done (p0001 missing;") || !strings.Contains(stderr, "analyze --partial") ||
		strings.Count(stderr, "\n") != 1 {
		t.Errorf("incomplete sweep: exit %d, stderr %q", code, stderr)
	}
	// --partial: the done point alone, the other named.
	code, stdout, stderr := runCmd(dir, "-q", "--partial")
	if code != exitOK || !strings.Contains(stdout, "Partial sweep: 1 of 2 points analyzed; not done: p0001 (hash=crc32WithSalt) missing.") {
		t.Errorf("--partial: exit %d\n%s%s", code, stdout, stderr)
	}
	nd, _ := lookup(readJSON(t, filepath.Join(dir, "analysis", "summary.json")), "not_done")
	if l, ok := nd.([]any); !ok || len(l) != 1 || l[0].(map[string]any)["dir"] != "p0001" {
		t.Errorf("not_done %v", nd)
	}
	// --partial is for sweeps.
	if code, _, stderr := runCmd(filepath.Join(dir, "p0000"), "-q", "--partial"); code != exitUsage || !strings.Contains(stderr, "--partial goes with a sweep directory") {
		t.Errorf("--partial on a run: exit %d, stderr %q", code, stderr)
	}
}

// A sweep over transport x replicate x target_load (8 points) of midconn.pcap merged
// with one TCP stream that can load a host link (9000 B every 8 us for 10 ms): both
// load axes are numeric (series against 1, 2 and 20, 60); each point's speedup is the
// one its run.json options record, and higher at 60% than at 20%; the closed-loop
// points' fallbacks (midconn's 4 of its 13 flows, by its README, among 14 flows; 8 of
// 28 with two copies) head the headline with the points they concern.
func TestAnalyzeSweepLoadAxes(t *testing.T) {
	stream := tinyTrace(t, "sweep-load", tracegen.Stream{Src: tracegen.HostAddr(0, 2, 7), Dst: tracegen.HostAddr(1, 3, 7), Class: tracegen.TCPData,
		Start: 0, Duration: 10 * units.Millisecond, Length: 9000, Interval: 8 * units.Microsecond})
	dir := filepath.Join(t.TempDir(), "sweep")
	runSweepOf(t, "axes:\n  transport: [open, closed]\n  replicate: [1, 2]\n  target_load: [20, 60]\n", dir, midconn, stream)
	code, stdout, stderr := runCmd(dir, "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum struct {
		Headline []string
		Figures  []string
		Sweep    analysis.SweepSummary
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "analysis", "summary.json"))), &sum); err != nil {
		t.Fatal(err)
	}
	// Points in product order: transport, replicate, target_load (the last fastest).
	one := "Closed loop fell back to open loop for 4 of 14 flows (28.6%): 3 control-without-sender, 1 fragmented;"
	two := "Closed loop fell back to open loop for 8 of 28 flows (28.6%): 6 control-without-sender, 2 fragmented;"
	for k, p := range sum.Sweep.Points {
		want := map[int]string{4: one, 5: one, 6: two, 7: two}[k]
		if got := strings.Join(p.Caveats, " "); !strings.HasPrefix(got, want) || want == "" && got != "" {
			t.Errorf("%s (%v): caveats %q, want %q", p.Dir, p.Values, got, want)
		}
		run := readRunJSON(t, filepath.Join(dir, p.Dir))
		if v := p.Metrics[analysis.SweepSpeedup]; v == nil || *v != run.Options.Speedup || run.Options.TargetLoad == 0 {
			t.Errorf("%s: speedup metric %v, run.json options.speedup %v (target %v)", p.Dir, v, run.Options.Speedup, run.Options.TargetLoad)
		}
		if k%2 == 1 && *p.Metrics[analysis.SweepSpeedup] <= *sum.Sweep.Points[k-1].Metrics[analysis.SweepSpeedup] {
			t.Errorf("%s: speedup %v at target_load 60, not above %v at 20", p.Dir, *p.Metrics[analysis.SweepSpeedup], *sum.Sweep.Points[k-1].Metrics[analysis.SweepSpeedup])
		}
	}
	if len(sum.Headline) < 2 || !strings.HasPrefix(sum.Headline[0], "p0004, p0005: "+one) || !strings.HasPrefix(sum.Headline[1], "p0006, p0007: "+two) ||
		!strings.Contains(stdout, sum.Headline[0]) {
		t.Errorf("headline %q", sum.Headline)
	}
	axes := map[string][]float64{}
	for _, ser := range sum.Sweep.Series {
		if ser.Metric == analysis.SweepSpeedup {
			if ser.Categorical {
				t.Errorf("speedup against %s drawn as categories", ser.Axis)
			}
			axes[ser.Axis] = ser.X
		}
	}
	if !slices.Equal(axes["replicate"], []float64{1, 2}) || !slices.Equal(axes["target_load"], []float64{20, 60}) {
		t.Errorf("speedup series x: %v", axes)
	}
	if !slices.Contains(sum.Figures, "sweep_speedup") {
		t.Errorf("no sweep_speedup figure (figures %v)", sum.Figures)
	}
	if head := strings.SplitN(readFile(t, filepath.Join(dir, "analysis", "tables", "sweep.csv")), "\n", 2)[0]; !strings.Contains(head, ",speedup,") && !strings.HasSuffix(head, ",speedup") {
		t.Errorf("sweep.csv header %q has no speedup column", head)
	}
}

// A replicate axis alone, as categories (copies per trace of two traces), gets the
// sweep report: its points hold different flows (the copies'), which a comparison
// would refuse to pair.
func TestAnalyzeSweepReplicateCategories(t *testing.T) {
	second := tinyTrace(t, "second", tracegen.Stream{Src: tracegen.HostAddr(0, 2, 5), Dst: tracegen.HostAddr(1, 2, 5), Class: tracegen.TCPData,
		Start: 0, Duration: 100 * units.Microsecond, Length: 1500, Interval: 5 * units.Microsecond})
	dir := filepath.Join(t.TempDir(), "sweep")
	runSweepOf(t, "axes:\n  replicate: [\"2,1\", \"1,2\"]\n", dir, midconn, second)
	if code, _, stderr := runCmd(dir, "-q"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sum := readJSON(t, filepath.Join(dir, "analysis", "summary.json"))
	if pts, _ := lookup(sum, "sweep", "points"); len(pts.([]any)) != 2 {
		t.Fatalf("sweep.points %v, want the 2 points", pts)
	}
	if _, ok := lookup(sum, "comparison"); ok {
		t.Error("compared as runs")
	}
}
