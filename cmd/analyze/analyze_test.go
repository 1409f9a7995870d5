package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/plots"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// allFigures are the figures of a single-run report.
var allFigures = []string{plots.NameFabricHeat, plots.NameDropsOverTime, plots.NamePFCPauseTimeline, plots.NameBufferOccupancy,
	plots.NameECMPMemberLoad, plots.NameECNMarking, plots.NameDelayCDF, plots.NameFCTSlowdown}

// stringsAt returns the list of strings at path of summary.json.
func stringsAt(t *testing.T, v any, path ...string) []string {
	t.Helper()
	x, ok := lookup(v, path...)
	list, isList := x.([]any)
	if !ok || !isList {
		t.Fatalf("summary.json: %v is %v (%T), want a list", path, x, x)
	}
	var out []string
	for _, e := range list {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

// checkOutputs checks the files of an analysis against its summary.json: every
// figure listed is drawn (PNG and SVG), referenced by report.md and embedded in
// report.html; figures not drawn have no files and no reference; every table listed
// is a CSV. It returns summary.json.
func checkOutputs(t *testing.T, out string) map[string]any {
	t.Helper()
	sum := readJSON(t, filepath.Join(out, "summary.json"))
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	figs := stringsAt(t, sum, "figures")
	for _, f := range figs {
		for _, ext := range []string{".png", ".svg"} {
			if fi, err := os.Stat(filepath.Join(out, "plots", f+ext)); err != nil || fi.Size() == 0 {
				t.Errorf("figure %s%s: %v", f, ext, err)
			}
		}
		if !strings.Contains(string(md), "(plots/"+f+".png)") {
			t.Errorf("report.md does not show plots/%s.png", f)
		}
	}
	if n := strings.Count(string(html), "data:image/png;base64,"); n != len(figs) {
		t.Errorf("report.html embeds %d PNG figures, want %d (%v)", n, len(figs), figs)
	}
	if strings.Contains(string(html), "src=\"http") || strings.Contains(string(html), "<script") {
		t.Error("report.html is not self-contained")
	}
	noData, _ := lookup(sum, "no_data")
	for name := range noData.(map[string]any) {
		if slices.Contains(figs, name) {
			t.Errorf("figure %s both drawn and not drawn", name)
		}
		if _, err := os.Stat(filepath.Join(out, "plots", name+".png")); err == nil {
			t.Errorf("figure %s has no data but plots/%s.png exists", name, name)
		}
		if strings.Contains(string(md), "plots/"+name+".png") {
			t.Errorf("report.md references %s, which has no data", name)
		}
	}
	for _, tb := range stringsAt(t, sum, "tables") {
		data, err := os.ReadFile(filepath.Join(out, "tables", tb+".csv"))
		if err != nil || len(data) == 0 {
			t.Errorf("table %s: %v", tb, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".partial-") {
			t.Errorf("leftover temporary directory %s", e.Name())
		}
	}
	return sum
}

// stableKeys are the summary.json keys issue 6 promises.
var stableKeys = [][]string{
	{"drops", "total"}, {"drops", "lossless"}, {"drops", "by_reason"},
	{"pfc", "pause_intervals"}, {"pfc", "paused_ps"}, {"pfc", "storms"}, {"pfc", "storm_count"}, {"pfc", "storm_rule"},
	{"ecn", "marked"}, {"ecn", "delivered_ce"}, {"ecn", "delivered_ce_fraction"}, {"imbalance", "tiers"},
	{"polarization", "ami"}, {"polarization", "ami_by_rack"}, {"polarization", "judged"}, {"polarization", "nmi"},
	{"polarization", "nmi_normalization"}, {"delay", "p99_ps"}, {"delay", "flow_mean_p99_ps"}, {"bootstrap", "interval"}, {"headline"},
	{"fct", "slowdown_p50"}, {"fct", "slowdown_p99"}, {"fct", "rows"}, {"fct", "by_completion"}, {"fct", "complete"}, {"fct", "flows"},
	{"fct", "mtu_bytes"}, {"fct", "bdp_bytes"}, {"transport"},
}

func checkStableKeys(t *testing.T, sum map[string]any) {
	t.Helper()
	for _, k := range stableKeys {
		if _, ok := lookup(sum, k...); !ok {
			t.Errorf("summary.json has no %s", strings.Join(k, "."))
		}
	}
	storms, _ := lookup(sum, "pfc", "storms")
	if _, ok := storms.([]any); !ok {
		t.Errorf("pfc.storms is %T, want a list (empty when none)", storms)
	}
	for i, s := range storms.([]any) {
		for _, k := range []string{"start_ps", "duration_ps", "ports", "depth", "root"} {
			if _, ok := lookup(s, k); !ok {
				t.Errorf("pfc.storms[%d] has no %s", i, k)
			}
		}
	}
	tiers, _ := lookup(sum, "imbalance", "tiers")
	if len(tiers.(map[string]any)) == 0 {
		t.Error("imbalance.tiers is empty")
	}
	for _, v := range tiers.(map[string]any) {
		judged, _ := lookup(v, "judged")
		for _, k := range []string{"max_mean", "cov", "jain", "chi2_p", "idle_fraction"} {
			if judged == true {
				number(t, v, k)
			} else if x, ok := lookup(v, k); !ok || x != nil {
				t.Errorf("a tier not judged has %s = %v, want null", k, x)
			}
		}
		if judged != true {
			if r, _ := lookup(v, "reason"); r == nil || r == "" {
				t.Errorf("a tier not judged gives no reason: %v", v)
			}
		}
	}
}

// TestDemoReport analyzes a replay of the demo trace: everything is written, every
// figure has data and is in the report, and the report's numbers are run.json's.
func TestDemoReport(t *testing.T) {
	runDir := demoRun(t)
	out := filepath.Join(t.TempDir(), "report")
	code, stdout, stderr := runCmd(runDir, "-o", out)
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.HasPrefix(stdout, "wrote "+out+": report.html") {
		t.Errorf("summary does not say what was written:\n%s", stdout)
	}
	sum := checkOutputs(t, out)
	checkStableKeys(t, sum)
	figs := stringsAt(t, sum, "figures")
	for _, f := range allFigures {
		if !slices.Contains(figs, f) {
			t.Errorf("demo: figure %s not drawn (figures %v)", f, figs)
		}
	}
	if len(figs) != len(allFigures) {
		t.Errorf("demo: figures %v, want %v", figs, allFigures)
	}

	rj := readRunJSON(t, runDir)
	sim := rj.Simulation
	if sim.DroppedTotal() == 0 || sim.PFCFrames == 0 {
		t.Fatalf("the demo replay should drop and pause: %+v", sim)
	}
	if got := number(t, sum, "drops", "total"); got != float64(sim.DroppedTotal()) {
		t.Errorf("drops.total %v, run.json %d", got, sim.DroppedTotal())
	}
	if got := number(t, sum, "drops", "lossless"); got != float64(sim.LosslessDrops) {
		t.Errorf("drops.lossless %v, run.json %d", got, sim.LosslessDrops)
	}
	for reason, n := range sim.Dropped {
		if n == 0 {
			continue
		}
		if got := number(t, sum, "drops", "by_reason", reason.String()); got != float64(n) {
			t.Errorf("drops.by_reason.%s %v, run.json %d", reason, got, n)
		}
	}
	if got := number(t, sum, "run", "pfc_frames"); got != float64(sim.PFCFrames) {
		t.Errorf("run.pfc_frames %v, run.json %d", got, sim.PFCFrames)
	}
	if got := number(t, sum, "ecn", "marked"); got != float64(sim.CEMarked) {
		t.Errorf("ecn.marked %v, run.json ce_marked %d", got, sim.CEMarked)
	}

	// The report states the same numbers, formatted.
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	head := stringsAt(t, sum, "headline")
	if len(head) == 0 || !strings.Contains(head[0], units.FormatCount(sim.DroppedTotal())+" packets dropped") {
		t.Errorf("headline does not start with the drops (%s): %q", units.FormatCount(sim.DroppedTotal()), head)
	}
	for _, h := range head {
		if !strings.Contains(string(md), mdEscapeForTest(h)) {
			t.Errorf("report.md lacks the headline sentence %q", h)
		}
	}
	for key, want := range map[string]int64{
		"dropped packets": sim.DroppedTotal(), "lossless drops": sim.LosslessDrops, "PFC frames": sim.PFCFrames,
		"injected packets": sim.Injected, "delivered packets": sim.Delivered, "CE marks (at egress queues)": sim.CEMarked,
	} {
		row := "| " + key + " | " + units.FormatCount(want) + " |"
		if !strings.Contains(string(md), row) {
			t.Errorf("report.md lacks the row %q", row)
		}
	}
	storms := number(t, sum, "pfc", "storm_duration_ps")
	if storms != 1e9 {
		t.Errorf("default storm duration %v ps, want 1 ms", storms)
	}
	if strings.Contains(string(md), "## Hash methods compared") {
		t.Error("a single run's report has a comparison section")
	}
	if _, ok := lookup(sum, "comparison"); ok {
		t.Error("a single run's summary.json has a comparison")
	}

	// Determinism: the same run analyzed again gives the same bytes.
	out2 := filepath.Join(t.TempDir(), "again")
	if code, _, stderr := runCmd(runDir, "-o", out2); code != exitOK {
		t.Fatalf("second analysis: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"summary.json", "report.md", "report.html", "plots/pfc_pause_timeline.png", "plots/delay_cdf.svg", "tables/pfc_storms.csv"} {
		a, err1 := os.ReadFile(filepath.Join(out, f))
		b, err2 := os.ReadFile(filepath.Join(out2, f))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two analyses of one run (%v, %v)", f, err1, err2)
		}
	}
}

// mdEscapeForTest mirrors the Markdown escaping of plots/report closely enough to
// find a sentence: it checks the words, not the escapes.
func mdEscapeForTest(s string) string {
	// Headline sentences may contain characters report.md escapes; compare on a
	// prefix up to the first such character.
	if i := strings.IndexAny(s, `\*_[]<>|#.`); i > 0 {
		return s[:i]
	}
	return s
}

// TestJSONAndDefaultOutput: without -o the analysis goes to RUN_DIR/analysis;
// --json prints summary.json; a second analysis replaces the first.
func TestJSONAndDefaultOutput(t *testing.T) {
	runDir := copyDir(t, demoRun(t))
	code, stdout, stderr := runCmd("--json", "--storm-duration", "5ms", runDir)
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	out := filepath.Join(runDir, "analysis")
	file, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if stdout != string(file) {
		t.Error("--json output differs from summary.json")
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatal(err)
	}
	if got := number(t, sum, "pfc", "storm_duration_ps"); got != 5e9 {
		t.Errorf("--storm-duration 5ms: storm_duration_ps %v", got)
	}
	// Again, replacing the previous analysis.
	if code, _, stderr := runCmd(runDir, "-q"); code != exitOK {
		t.Fatalf("second analysis: exit %d: %s", code, stderr)
	}
	checkOutputs(t, out)
}

// TestReplayOverAnalyzedRun: replaying into a run directory that analyze wrote its
// default output into (RUN/analysis) replaces the run and drops the stale analysis.
func TestReplayOverAnalyzedRun(t *testing.T) {
	runDir := copyDir(t, quietRun(t))
	if code, _, stderr := runCmd(runDir, "-q"); code != exitOK {
		t.Fatalf("analyze: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(runDir, records.AnalysisDir, summaryFile)); err != nil {
		t.Fatal(err)
	}
	replayInto(t, runDir, []string{filepath.Join(fixtureRoot, "quiet.pcap")})
	if _, err := os.Stat(filepath.Join(runDir, records.AnalysisDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale analysis after the rerun: %v", err)
	}
	if _, err := records.ReadRun(runDir); err != nil {
		t.Fatal(err)
	}
	// And analyze again.
	if code, _, stderr := runCmd(runDir, "-q"); code != exitOK {
		t.Fatalf("analyze after the rerun: exit %d: %s", code, stderr)
	}
}

// TestComparison analyzes the six runs of `replay run --hash all`.
func TestComparison(t *testing.T) {
	dir := copyTree(t, cmpRun(t))
	code, stdout, stderr := runCmd(dir, "--bootstrap", "200", "--seed", "3")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	out := filepath.Join(dir, "analysis")
	if !strings.HasPrefix(stdout, "wrote "+out) {
		t.Errorf("default output of a --hash all directory: %s", stdout)
	}
	sum := checkOutputs(t, out)
	checkStableKeys(t, sum)
	if !slices.Contains(stringsAt(t, sum, "figures"), plots.NameHashComparison) {
		t.Error("no hash_comparison figure")
	}
	if _, err := os.Stat(filepath.Join(out, "tables", "hash_comparison.csv")); err != nil {
		t.Error(err)
	}
	if got := number(t, sum, "comparison_info", "bootstrap"); got != 200 {
		t.Errorf("bootstrap %v", got)
	}
	if got := number(t, sum, "comparison_info", "seed"); got != 3 {
		t.Errorf("seed %v", got)
	}
	for _, m := range ecmp.AllMethods {
		name := m.String()
		rj := readRunJSON(t, filepath.Join(dir, name))
		if got := number(t, sum, "comparison", name, "drops", "total", "value"); got != float64(rj.Simulation.DroppedTotal()) {
			t.Errorf("comparison.%s.drops.total %v, run.json %d", name, got, rj.Simulation.DroppedTotal())
		}
		lo := number(t, sum, "comparison", name, "drops", "total", "lo")
		hi := number(t, sum, "comparison", name, "drops", "total", "hi")
		if !(lo <= hi) {
			t.Errorf("comparison.%s.drops.total interval [%v, %v]", name, lo, hi)
		}
		number(t, sum, "comparison", name, "drops", "lossless", "value")
		number(t, sum, "comparison", name, "polarization", "ami", "value")
		number(t, sum, "comparison", name, "polarization", "nmi", "value")
		number(t, sum, "comparison", name, "pfc", "paused_ps", "value")
		number(t, sum, "comparison", name, "ecn", "delivered_ce_fraction", "value")
		for _, tier := range []string{"rack", "fabric"} {
			for _, k := range []string{"max_mean", "cov", "jain", "chi2_p", "idle_fraction"} {
				number(t, sum, "comparison", name, "imbalance", "tiers", tier, k, "value")
			}
		}
	}
	best, _ := lookup(sum, "comparison_info", "best", "polarization.ami", "method")
	head := strings.Join(stringsAt(t, sum, "headline"), "\n")
	if b, _ := best.(string); b == "" || !strings.Contains(head, "Least polarized: "+b) {
		t.Errorf("headline does not name the least polarized hash %v:\n%s", best, head)
	}
	if !strings.Contains(head, "Best hash for the fabric tier") {
		t.Errorf("headline has no best hash per tier:\n%s", head)
	}
	if got, _ := lookup(sum, "reference"); got != "crc32WithSalt" {
		t.Errorf("reference run %v, want the default hash crc32WithSalt", got)
	}
}

// copyTree copies a --hash all directory (one level of run directories).
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			d := copyDir(t, filepath.Join(src, e.Name()))
			if err := os.Rename(d, filepath.Join(dst, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dst
}

// TestQuietRun: a run without drops, PFC pauses or ECN marks says so instead of
// drawing empty axes.
func TestQuietRun(t *testing.T) {
	runDir := quietRun(t)
	rj := readRunJSON(t, runDir)
	if s := rj.Simulation; s.DroppedTotal() != 0 || s.PFCFrames != 0 || s.CEMarked != 0 || s.Delivered == 0 {
		t.Fatalf("the quiet trace is not quiet: %+v", s)
	}
	out := filepath.Join(t.TempDir(), "a")
	code, stdout, stderr := runCmd(runDir, "-o", out)
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	sum := checkOutputs(t, out)
	checkStableKeys(t, sum)
	noData, _ := lookup(sum, "no_data")
	for fig, reason := range map[string]string{plots.NameDropsOverTime: "no drops", plots.NamePFCPauseTimeline: "no PFC pauses", plots.NameECNMarking: "no ECN marks"} {
		if got, _ := lookup(noData, fig); got != reason {
			t.Errorf("no_data.%s = %v, want %q", fig, got, reason)
		}
	}
	figs := stringsAt(t, sum, "figures")
	if !slices.Contains(figs, plots.NameDelayCDF) {
		t.Errorf("figure %s not drawn (figures %v)", plots.NameDelayCDF, figs)
	}
	// Two flows over 4-member sets: no set is judged, so the member load figure, which
	// shows judged sets only, is not drawn, and says why.
	if got, _ := lookup(noData, plots.NameECMPMemberLoad); slices.Contains(figs, plots.NameECMPMemberLoad) ||
		!strings.HasPrefix(fmt.Sprint(got), "no equal-cost set carried enough flows to be judged (at least 5 per member; the ") {
		t.Errorf("ecmp_member_load over unjudged sets: drawn %v, no_data %v", slices.Contains(figs, plots.NameECMPMemberLoad), got)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"No drops", "No PFC pauses", "No ECN marks"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md does not say %q", want)
		}
	}
	// Nothing congested, in one line with the busiest host link's load. The busiest
	// host link is that of the host sending the 9000-byte flow (flows.arrow: one flow
	// per sending host). With run.json offered_load (1 ms bins of wire bytes, IPv4
	// bytes + 38 per packet), the run lasts less than one bin, so peak = p99 = its wire
	// bytes over 1 ms at 100 Gbps.
	var busiestFrame, busiestWire float64
	fr, err := records.OpenFlows(filepath.Join(runDir, records.FlowsFile))
	if err != nil {
		t.Fatal(err)
	}
	var row records.FlowRow
	for fr.Next(&row) {
		busiestFrame = max(busiestFrame, float64(row.Bytes+18*row.Packets))
		busiestWire = max(busiestWire, float64(row.Bytes+38*row.Packets))
	}
	fr.Close()
	if rj.Simulation.SimTimePs >= 1e9 {
		t.Fatalf("the quiet run lasts %d ps, more than one 1 ms bin", rj.Simulation.SimTimePs)
	}
	binShare := units.FormatFraction(busiestWire * 8 / 1e-3 / 100e9)
	want := fmt.Sprintf("Nothing congested: no drop, PFC pause or ECN mark; the busiest host link, host-p0-r1-h0, peaked at %s of its 100Gbps in 1 ms bins (p99 %s; run.json offered_load).", binShare, binShare)
	if head := stringsAt(t, sum, "headline"); head[0] != want || slices.Contains(head, "No packets were dropped.") {
		t.Errorf("headline %q, want it to open with %q", head, want)
	}
	// Without offered_load (a run directory of an older replay): its frame bytes over
	// the simulated time, from ports.arrow, and the line says so.
	old := copyDir(t, runDir)
	var doc map[string]any
	b, err := os.ReadFile(filepath.Join(old, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "offered_load")
	if b, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "run.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	oldOut := filepath.Join(t.TempDir(), "old")
	if code, _, stderr := runCmd(old, "-o", oldOut); code != exitOK {
		t.Fatalf("older run: exit %d, stderr %q", code, stderr)
	}
	share := busiestFrame * 8 / (float64(rj.Simulation.SimTimePs) * 1e-12) / 100e9
	want = fmt.Sprintf("Nothing congested: no drop, PFC pause or ECN mark; the busiest host link, host-p0-r1-h0 to rack-p0-r1, carried %s of its 100Gbps on average over the %s simulated (ports.arrow; ",
		units.FormatFraction(share), units.FormatPs(float64(rj.Simulation.SimTimePs)))
	if head := stringsAt(t, checkOutputs(t, oldOut), "headline"); !strings.HasPrefix(head[0], want) {
		t.Errorf("older run: headline %q, want it to open with %q", head, want)
	}
	if number(t, sum, "drops", "total") != 0 || number(t, sum, "pfc", "pause_intervals") != 0 {
		t.Error("quiet run: drops or pauses in summary.json")
	}
	if !strings.Contains(stdout, "not drawn: drops_over_time (no drops), pfc_pause_timeline (no PFC pauses)") {
		t.Errorf("summary does not list the figures not drawn:\n%s", stdout)
	}
	// Two flows (the four /24s of the trace map to the four racks of pod 0): too few to
	// judge balance, said in the headline and the section, null in summary.json.
	for _, want := range []string{"Too few flows (2 at the rack tier) to judge balance: every equal-cost set carried fewer than 5 flows per member."} {
		if !strings.Contains(stdout, want) || !strings.Contains(string(md), want) {
			t.Errorf("the summary and report.md do not say %q:\n%s\n%s", want, stdout, md)
		}
	}
	if v, _ := lookup(sum, "imbalance", "tiers", "rack", "max_mean"); v != nil {
		t.Errorf("imbalance.tiers.rack.max_mean over 2 flows is %v, want null", v)
	}
}

// TestBadInput: unusable input exits 2 with one line on stderr naming the file and
// the rule, and writes nothing.
func TestBadInput(t *testing.T) {
	demoDir := demoRun(t)
	truncated := copyDir(t, demoDir)
	drops := filepath.Join(truncated, records.DropsFile)
	fi, err := os.Stat(drops)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(drops, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	incomplete := copyDir(t, demoDir)
	editRunJSON(t, incomplete, func(m map[string]any) { m["complete"] = false })
	otherVersion := copyDir(t, demoDir)
	editRunJSON(t, otherVersion, func(m map[string]any) { m["schema_version"] = 99 })
	notJSON := copyDir(t, demoDir)
	if err := os.WriteFile(filepath.Join(notJSON, records.RunFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	noVersion := copyDir(t, demoDir)
	editRunJSON(t, noVersion, func(m map[string]any) { delete(m, "schema_version") })
	missingFile := copyDir(t, demoDir)
	if err := os.Remove(filepath.Join(missingFile, records.PFCFile)); err != nil {
		t.Fatal(err)
	}
	foreignOut := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreignOut, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	missing := filepath.Join(t.TempDir(), "nope")
	analyzed := copyDir(t, demoDir) // with an analysis/ of its own
	if err := os.Mkdir(filepath.Join(analyzed, records.AnalysisDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(analyzed, records.AnalysisDir, records.AnalysisSummaryFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name string
		args []string
		want []string // substrings of the error line
	}{
		{"missing directory", []string{missing}, []string{missing + ": no such file or directory"}},
		{"run.json given", []string{filepath.Join(analyzed, records.RunFile)}, []string{"is a file of the run directory " + analyzed, "(analyze " + analyzed + ")"}},
		{"a record file given", []string{filepath.Join(analyzed, records.FlowsFile)}, []string{"(analyze " + analyzed + ")"}},
		{"an analysis given", []string{filepath.Join(analyzed, records.AnalysisDir)}, []string{"is an analysis written by analyze, of the run directory " + analyzed + ": analyze " + analyzed}},
		{"no runs in directory", []string{empty}, []string{empty, "run.json"}},
		{"truncated drops.arrow", []string{truncated}, []string{"drops.arrow"}},
		{"missing pfc.arrow", []string{missingFile}, []string{"pfc.arrow"}},
		{"incomplete run", []string{incomplete}, []string{"run.json", "complete"}},
		{"other schema version", []string{otherVersion}, []string{"run.json", "schema_version 99"}},
		{"run.json not JSON", []string{notJSON}, []string{"run.json"}},
		{"run.json without schema_version", []string{noVersion}, []string{"run.json", "schema_version"}},
		{"different traces", []string{demoDir, quietRun(t), "-o", filepath.Join(t.TempDir(), "o")}, []string{"not comparable"}},
		{"output not an analysis", []string{demoDir, "-o", foreignOut}, []string{foreignOut, "summary.json"}},
		{"output is a run directory", []string{demoDir, "-o", demoDir}, []string{demoDir}},
		{"no arguments", nil, []string{"RUN_DIR", "--help"}},
		{"bad storm duration", []string{demoDir, "--storm-duration", "soon"}, []string{"--storm-duration"}},
		{"zero bootstrap", []string{demoDir, "--bootstrap", "0"}, []string{"--bootstrap"}},
		{"unknown flag", []string{demoDir, "--colour"}, []string{"--colour"}},
		{"several parents without -o", []string{demoDir, truncated}, []string{"-o"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCmd(c.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q", stdout)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "analyze: ") {
				t.Errorf("stderr is not one line: %q", stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not mention %q", stderr, w)
				}
			}
			if len(c.args) == 1 && strings.Count(stderr, c.args[0]) > 1 && !strings.Contains(c.name, "given") {
				t.Errorf("stderr %q names %s more than once", stderr, c.args[0])
			}
		})
	}
	for _, d := range []string{truncated, incomplete, otherVersion, noVersion, missingFile} {
		if _, err := os.Stat(filepath.Join(d, "analysis")); err == nil {
			t.Errorf("%s/analysis written for a bad input", d)
		}
	}
	if _, err := os.Stat(filepath.Join(demoDir, records.RunFile)); err != nil {
		t.Errorf("the run directory was damaged: %v", err)
	}
}

func editRunJSON(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, records.RunFile)
	m := readJSON(t, path)
	edit(m)
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestIntraRackRun: traffic that never meets an equal-cost set (both ends in one
// rack) has no imbalance or polarization to show; the report says so.
func TestIntraRackRun(t *testing.T) {
	runDir := tinyRun(t, "intra-rack",
		tracegen.Stream{Src: tracegen.HostAddr(0, 2, 0), Dst: tracegen.HostAddr(0, 2, 1), Class: tracegen.RoCEv2,
			Start: 0, Duration: 50 * units.Microsecond, Length: 4140, Interval: 1 * units.Microsecond})
	out := filepath.Join(t.TempDir(), "a")
	code, _, stderr := runCmd(runDir, "-o", out)
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	sum := checkOutputs(t, out)
	if got, _ := lookup(sum, "no_data", plots.NameECMPMemberLoad); got == nil {
		t.Errorf("ecmp_member_load drawn for intra-rack traffic (no_data %v)", sum["no_data"])
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"No traffic on equal-cost sets", "no polarization to measure"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md does not say %q", want)
		}
	}
}

// A second analysis of other runs into the same output directory does not silently
// replace the first: it is refused (exit 2, naming both and --force) unless --force;
// the analysis of the same runs again replaces it.
func TestOtherAnalysisNotReplaced(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	demo, quiet := demoRun(t), quietRun(t)
	if code, _, stderr := runCmd(demo, "-o", out, "-q", "--bootstrap", "20"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd(quiet, "-o", out, "-q", "--bootstrap", "20")
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "output directory "+out+" holds the analysis of other runs ("+demo) ||
		!strings.Contains(stderr, "not of "+quiet) || !strings.Contains(stderr, "--force") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("another run into the same -o: exit %d, stderr %q", code, stderr)
	}
	if d, _ := lookup(readJSON(t, filepath.Join(out, "summary.json")), "dir"); d != demo {
		t.Errorf("the first analysis was replaced: dir %v", d)
	}
	if code, _, stderr := runCmd(demo, "-o", out, "-q", "--bootstrap", "20"); code != exitOK {
		t.Errorf("the same run again: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCmd(quiet, "-o", out, "-q", "--bootstrap", "20", "--force"); code != exitOK {
		t.Errorf("--force: exit %d: %s", code, stderr)
	}
	if d, _ := lookup(readJSON(t, filepath.Join(out, "summary.json")), "dir"); d != quiet {
		t.Errorf("--force did not replace the analysis: dir %v", d)
	}
}
