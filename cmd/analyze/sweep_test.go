package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
	"github.com/tracefabric/tracefabric/replay/sweep"
)

// runSweep runs the sweep file src over the demo trace into dir (through package
// sweep, as `replay sweep` does).
func runSweep(t *testing.T, src, dir string) {
	t.Helper()
	f, err := sweep.Parse([]byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := sweep.Expand(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sweep.Run(pl, sweep.Options{Run: replay.Options{Traces: []string{demo}, Version: "test"}, Dir: dir, Jobs: 2}); err != nil {
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
