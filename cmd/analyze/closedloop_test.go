package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
)

var (
	modesOnce sync.Map // trace -> *sync.Once
	modesDirs sync.Map // trace -> [2]string
)

// openClosedRuns replays a committed trace open and closed loop into
// fixtureRoot/<name>/open and .../closed (once per test binary).
func openClosedRuns(t *testing.T, trace string) (open, closed string) {
	t.Helper()
	name := strings.TrimSuffix(trace, ".pcap")
	once, _ := modesOnce.LoadOrStore(name, new(sync.Once))
	once.(*sync.Once).Do(func() {
		var dirs [2]string
		for i, mode := range []config.TransportMode{config.TransportOpen, config.TransportClosed} {
			cfg, _, err := config.Load("", nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Transport.Mode = mode
			pr, err := replay.Prepare(replay.Options{Traces: []string{filepath.Join("..", "..", "testdata", "pcaps", trace)}, Config: cfg, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			dirs[i] = filepath.Join(fixtureRoot, name, []string{"open", "closed"}[i])
			if _, err := pr.Run(dirs[i], ""); err != nil {
				t.Fatal(err)
			}
		}
		modesDirs.Store(name, dirs)
	})
	d, ok := modesDirs.Load(name)
	if !ok {
		t.Fatalf("replays of %s failed earlier", trace)
	}
	dirs := d.([2]string)
	return dirs[0], dirs[1]
}

// An open and a closed replay of tcp-incast.pcap compare like two hash methods: named
// by transport, the closed run drops fewer packets, and every metric of each run is
// the number its single-run analysis gives under the same name (slowdown p50 and p99
// included, and the per-run slowdown rows are the single run's fct.rows). The two
// runs' flows differ in size (open loop counts the captured ACKs the closed loop
// replaces), which must not make them incomparable.
func TestCompareOpenClosed(t *testing.T) {
	open, closed := openClosedRuns(t, "tcp-incast.pcap")
	out := filepath.Join(t.TempDir(), "cmp")
	code, stdout, stderr := runCmd(open, closed, "-o", out, "-q", "--bootstrap", "200")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	cmp := readJSON(t, filepath.Join(out, "summary.json"))
	if got := stringsAt(t, cmp, "comparison_info", "methods"); strings.Join(got, ",") != "open,closed" {
		t.Errorf("runs named %v, want open and closed", got)
	}
	if by, _ := lookup(cmp, "comparison_info", "named_by"); by != "transport" {
		t.Errorf("named_by %v", by)
	}
	dOpen := number(t, cmp, "comparison", "open", "drops", "total", "value")
	dClosed := number(t, cmp, "comparison", "closed", "drops", "total", "value")
	if !(dClosed < dOpen) {
		t.Errorf("drops: open %v, closed %v; want fewer closed loop", dOpen, dClosed)
	}
	// Independent counts: run.json's drops of each run.
	if rj := readRunJSON(t, open); float64(rj.Simulation.DroppedTotal()) != dOpen {
		t.Errorf("open drops %v, run.json %d", dOpen, rj.Simulation.DroppedTotal())
	}
	if !strings.Contains(stdout, "Lowest FCT slowdown p99 (unfinished flows rank slowest): closed (") || !strings.Contains(stdout, "Dropped packets per run: open ") {
		t.Errorf("summary lines:\n%s", stdout)
	}
	metrics := stringsAt(t, cmp, "comparison_info", "metrics")
	for _, want := range []string{"fct.slowdown_p50", "fct.slowdown_p99", "pfc.pause_intervals", "pfc.paused_ps", "pfc.storm_count", "drops.lossless", "ecn.delivered_ce"} {
		if !containsString(metrics, want) {
			t.Errorf("comparison lacks %s (metrics %v)", want, metrics)
		}
	}
	for _, c := range []struct{ dir, name string }{{open, "open"}, {closed, "closed"}} {
		aloneOut := filepath.Join(t.TempDir(), c.name)
		if code, _, stderr := runCmd(c.dir, "-o", aloneOut, "-q", "--bootstrap", "200"); code != exitOK {
			t.Fatalf("%s alone: exit %d: %s", c.name, code, stderr)
		}
		alone := readJSON(t, filepath.Join(aloneOut, "summary.json"))
		for _, m := range metrics {
			in, _ := lookup(cmp, append([]string{"comparison", c.name}, append(strings.Split(m, "."), "value")...)...)
			single, ok := lookup(alone, strings.Split(m, ".")...)
			if !ok {
				t.Errorf("%s: %s is not a summary.json key of the run alone", c.name, m)
				continue
			}
			if in != single {
				t.Errorf("%s %s: %v alone, %v in the comparison", c.name, m, single, in)
			}
		}
		rowsIn, _ := lookup(cmp, "comparison", c.name, "fct", "rows")
		rowsAlone, _ := lookup(alone, "fct", "rows")
		if a, b := jsonOf(t, rowsIn), jsonOf(t, rowsAlone); a != b || a == "null" {
			t.Errorf("%s: fct.rows in the comparison %s, alone %s", c.name, a, b)
		}
	}
	// Flow completion per run in the report, with the caveat about pure ACKs.
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Open and closed loop compared", "## Flow completion", "| open | all | all |", "| closed | all | all |", "pure ACKs included", "## Closed loop", "**PFC per run**"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// The closed loop of incast.pcap (RoCE under DCQCN, TCP under DCTCP): the transport
// summary's events are transport.arrow's (counted here from the file), its CNPs are
// the CNPs run.json says the receivers generated, cnp_over_time is drawn and its
// table sums to the same counts; compared with the open run, the report's PFC table
// shows both runs' pause intervals and storms.
func TestClosedLoopIncast(t *testing.T) {
	open, closed := openClosedRuns(t, "incast.pcap")
	out := filepath.Join(t.TempDir(), "closed")
	if code, _, stderr := runCmd(closed, "-o", out, "-q", "--bootstrap", "50"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sum := readJSON(t, filepath.Join(out, "summary.json"))
	rd, err := records.OpenTransport(filepath.Join(closed, records.TransportFile))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	var row records.TransportRow
	for rd.Next(&row) {
		counts[row.Event.String()]++
	}
	rd.Close()
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if counts["cnp"] == 0 || counts["rate_cut"] == 0 {
		t.Fatalf("the incast's closed loop should send CNPs and cut rates: %v", counts)
	}
	for k := range records.TransportEventKind(records.NumTransportEventKinds) {
		if got := number(t, sum, "transport", "events", k.String()); got != counts[k.String()] {
			t.Errorf("transport.events.%s = %v, transport.arrow holds %v", k, got, counts[k.String()])
		}
	}
	rj := readRunJSON(t, closed)
	if gen := rj.Simulation.ControlPackets[records.KindCNP].Generated; float64(gen) != counts["cnp"] ||
		number(t, sum, "transport", "control_packets", "cnp", "generated") != float64(gen) {
		t.Errorf("CNPs: run.json generated %d, transport.arrow %v", gen, counts["cnp"])
	}
	if !containsString(stringsAt(t, sum, "figures"), "cnp_over_time") {
		t.Errorf("cnp_over_time not drawn: %v", stringsAt(t, sum, "figures"))
	}
	tab := readCSV(t, filepath.Join(out, "tables", "transport_events_over_time.csv"))
	col := map[string]int{}
	for i, h := range tab[0] {
		col[h] = i
	}
	binned := map[string]float64{}
	for _, r := range tab[1:] {
		for _, k := range []string{"cnp", "rate_cut", "rate_increase", "window_cut"} {
			binned[k] += atof(t, r[col[k]])
		}
	}
	for _, k := range []string{"cnp", "rate_cut", "rate_increase", "window_cut"} {
		if binned[k] != counts[k] {
			t.Errorf("transport_events_over_time %s sums to %v, transport.arrow holds %v", k, binned[k], counts[k])
		}
	}
	// Side by side: PFC with and without DCQCN.
	cmpOut := filepath.Join(t.TempDir(), "cmp")
	if code, _, stderr := runCmd(open, closed, "-o", cmpOut, "-q", "--bootstrap", "50"); code != exitOK {
		t.Fatalf("comparison: exit %d: %s", code, stderr)
	}
	md, err := os.ReadFile(filepath.Join(cmpOut, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	pfc := string(md)[strings.Index(string(md), "**PFC per run**"):]
	for _, run := range []string{open, closed} {
		rj := readRunJSON(t, run)
		name := filepath.Base(run)
		line := "| " + name + " | " + name + " | "
		if !strings.Contains(pfc, line) {
			t.Errorf("PFC per run lacks the %s run (%q)", name, line)
			continue
		}
		l := pfc[strings.Index(pfc, line):]
		l = l[:strings.Index(l, "\n")]
		if !strings.Contains(l, " | "+formatCount(rj.Simulation.PFCFrames)+" | ") {
			t.Errorf("PFC per run, %s: %q lacks its %d PFC frames", name, l, rj.Simulation.PFCFrames)
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("%s: %v (%d rows)", path, err, len(rows))
	}
	return rows
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func formatCount(n int64) string { return units.FormatCount(n) }

// A closed-loop run whose receivers' ACKs are dropped too (tcp-incast at 4x speed in
// 5 MiB of buffer): drops.total is the data packets dropped, as run.json and
// flows.arrow count them, the same alone and in a comparison; drops.control holds
// the ACKs, as drops.arrow's kind column (counted here) and run.json's control
// packets say; no consistency warning; the headline names them.
func TestClosedLoopControlDrops(t *testing.T) {
	cfg, _, err := config.Load("", []string{"Transport.Mode=closed", "BufferSize=5MiB"})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := replay.Prepare(replay.Options{Traces: []string{filepath.Join("..", "..", "testdata", "pcaps", "tcp-incast.pcap")}, Config: cfg, Speedup: 4, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "closed5")
	if _, err := pr.Run(dir, ""); err != nil {
		t.Fatal(err)
	}
	rows, _, err := records.ReadAll(records.OpenDrops(filepath.Join(dir, records.DropsFile)))
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[records.PacketKind]int64{}
	for _, r := range rows {
		byKind[r.Kind]++
	}
	rj := readRunJSON(t, dir)
	if byKind[records.KindAck] == 0 || byKind[records.KindAck] != rj.Simulation.ControlPackets[records.KindAck].Dropped {
		t.Fatalf("drops.arrow holds %d ACK drops, run.json %d: the scenario needs some", byKind[records.KindAck], rj.Simulation.ControlPackets[records.KindAck].Dropped)
	}
	if byKind[records.KindData] != rj.Simulation.DroppedTotal() {
		t.Fatalf("drops.arrow holds %d data drops, run.json %d", byKind[records.KindData], rj.Simulation.DroppedTotal())
	}
	out := filepath.Join(t.TempDir(), "alone")
	code, stdout, stderr := runCmd(dir, "-o", out, "-q", "--bootstrap", "100")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sum := readJSON(t, filepath.Join(out, "summary.json"))
	if got := number(t, sum, "drops", "total"); got != float64(byKind[records.KindData]) {
		t.Errorf("drops.total %v, want the %d data drops", got, byKind[records.KindData])
	}
	if got := number(t, sum, "drops", "control", "ack"); got != float64(byKind[records.KindAck]) {
		t.Errorf("drops.control.ack %v, want %d", got, byKind[records.KindAck])
	}
	if w := stringsAt(t, sum, "warnings"); len(w) != 0 {
		t.Errorf("warnings: %v", w)
	}
	if want := formatCount(byKind[records.KindAck]) + " ACK"; !strings.Contains(stdout, "Closed-loop control packets dropped too (not counted above): "+want) {
		t.Errorf("headline does not name the %s drops:\n%s", want, stdout)
	}
	open, _ := openClosedRuns(t, "tcp-incast.pcap")
	cmpOut := filepath.Join(t.TempDir(), "cmp")
	if code, _, stderr := runCmd(open, dir, "-o", cmpOut, "-q", "--bootstrap", "100"); code != exitOK {
		t.Fatalf("comparison: exit %d: %s", code, stderr)
	}
	cmp := readJSON(t, filepath.Join(cmpOut, "summary.json"))
	names := stringsAt(t, cmp, "comparison_info", "methods")
	if len(names) != 2 {
		t.Fatalf("runs named %v", names)
	}
	if got := number(t, cmp, "comparison", names[1], "drops", "total", "value"); got != float64(byKind[records.KindData]) {
		t.Errorf("drops.total in the comparison %v, alone %d", got, byKind[records.KindData])
	}
}

// rewriteFlows copies run directory src and edits every row of its flows.arrow (the
// same rows, the same flows: only what edit changes).
func rewriteFlows(t *testing.T, src, name string, edit func(i int, r *records.FlowRow)) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dst, records.AnalysisDir))
	path := filepath.Join(dst, records.FlowsFile)
	r, err := records.OpenFlows(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []records.FlowRow
	var row records.FlowRow
	for r.Next(&row) {
		rows = append(rows, row)
	}
	nodes := r.Nodes()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	w, err := records.NewFlowsWriter(path, records.Dictionaries{Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		edit(i, &rows[i])
		if err := w.Append(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// End to end, on two run directories of the demo trace whose flows.arrow is edited
// to known numbers: crc16 left 27% of its 632 flows unfinished (the first 171) and
// completed the others at slowdown 1.1; xor16 completed every flow at
// slowdown 2. Over the completed flows alone crc16 would have the lowest p99; it never
// ranks first on the p99 or on completion, and the report says why.
func TestUnfinishedRunNeverRanksFirst(t *testing.T) {
	cmp := cmpRun(t)
	edit := func(unfinished int, slowdown float64) func(int, *records.FlowRow) {
		return func(i int, r *records.FlowRow) {
			r.Completion, r.FctPs = records.CompletionComplete, int64(float64(r.IdealFctPs)*slowdown)
			if i < unfinished {
				r.Completion, r.FctPs = records.CompletionDropped, 0
			}
		}
	}
	a := rewriteFlows(t, filepath.Join(cmp, "crc16"), "crc16", edit(171, 1.1))
	b := rewriteFlows(t, filepath.Join(cmp, "xor16"), "xor16", edit(0, 2))
	out := filepath.Join(t.TempDir(), "cmp")
	code, stdout, stderr := runCmd(a, b, "-o", out, "-q", "--bootstrap", "200")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sum := readJSON(t, filepath.Join(out, "summary.json"))
	for _, m := range []string{"fct.slowdown_p99", "fct.complete_fraction"} {
		if best, _ := lookup(sum, "comparison_info", "best", m, "method"); best != "xor16" {
			t.Errorf("best %s: %v, want xor16", m, best)
		}
		if clear, _ := lookup(sum, "comparison_info", "best", m, "clear"); clear != true {
			t.Errorf("%s: xor16 not clearly ahead", m)
		}
	}
	if u, _ := lookup(sum, "comparison", "crc16", "fct", "slowdown_p99", "unfinished"); u != true {
		t.Errorf("crc16's p99 is not unfinished in summary.json")
	}
	if f := number(t, sum, "comparison", "crc16", "fct", "complete_fraction", "value"); f != float64(632-171)/632 {
		t.Errorf("crc16 completed %v, want %v", f, float64(632-171)/632)
	}
	if !strings.Contains(stdout, "Lowest FCT slowdown p99 (unfinished flows rank slowest): xor16 (2 [") ||
		!strings.Contains(stdout, "clearly ahead of crc16, whose 99th percentile falls among the unfinished flows, which rank slowest: 27.1% of the 632 flows with data did not complete.") {
		t.Errorf("summary:\n%s", stdout)
	}
	md := readFile(t, filepath.Join(out, "report.md"))
	if !strings.Contains(md, `| FCT slowdown p99 | unfinished \[unfinished, unfinished\] | 2 \[2, 2\] | xor16 (clear) |`) {
		t.Errorf("the comparison table does not show crc16's p99 unfinished and xor16 clearly best:\n%s", md)
	}
}
