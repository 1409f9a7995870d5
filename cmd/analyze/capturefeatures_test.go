package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
)

// This file checks that analyze states what replay records of real captures
// (issue 25): closed-loop fallbacks, the host mapping, the copies of --replicate,
// --target-load and offered_load, --max-idle, and sweeps over those axes.

// midconn is the committed trace of flows caught mid-connection; testdata/pcaps/README.md
// says, flow by flow, what closed loop makes of them.
var midconn = filepath.Join("..", "..", "testdata", "pcaps", "midconn.pcap")

// analyzeInto analyzes dirs into a new output directory and returns summary.json and
// report.md.
func analyzeInto(t *testing.T, dirs ...string) (sum map[string]any, md string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "a")
	if code, _, stderr := runCmd(append(dirs, "-o", out, "-q", "--bootstrap", "20")...); code != exitOK {
		t.Fatalf("analyze %v: exit %d: %s", dirs, code, stderr)
	}
	sum = checkOutputs(t, out)
	b, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	return sum, string(b)
}

// section is report.md's section titled title, up to the next one.
func section(md, title string) string {
	_, rest, ok := strings.Cut(md, "\n## "+title+"\n")
	if !ok {
		return ""
	}
	before, _, _ := strings.Cut(rest, "\n## ")
	return before
}

// midconn.pcap closed loop, by its README's table: 13 flows, 6 re-sent, 2 control
// only, 1 open loop (UDP), 4 fallbacks (3 control-without-sender, 1 fragmented).
// summary.json run.closed_loop holds them, the Run section and the Closed loop
// section say them, and as 4 of 13 is more than 1% the headline opens with them.
func TestReportNamesClosedLoopFallbacks(t *testing.T) {
	_, closed := openClosedRuns(t, "midconn.pcap")
	sum, md := analyzeInto(t, closed)
	want := map[string]float64{"flows": 13, "closed": 6, "control_only": 2, "open": 1}
	for k, v := range want {
		if got := number(t, sum, "run", "closed_loop", k); got != v {
			t.Errorf("run.closed_loop.%s = %v, want %v", k, got, v)
		}
	}
	for k, v := range map[string]float64{"fragmented": 1, "control-without-sender": 3, "too-many-segments": 0} {
		if got := number(t, sum, "run", "closed_loop", "fallback", k); got != v {
			t.Errorf("run.closed_loop.fallback.%s = %v, want %v", k, got, v)
		}
	}
	line := "Closed loop fell back to open loop for 4 of 13 flows (30.8%): 3 control-without-sender, 1 fragmented; these entered the fabric at their captured times whatever it did (docs/model.md#application-model)."
	if head := stringsAt(t, sum, "headline"); head[0] != line {
		t.Errorf("headline %q, want it to open with %q", head, line)
	}
	row := "| closed-loop flows | 6 of 13 flows re-sent closed loop; 2 control only (left out: the simulated receivers send their own); 1 open loop (no closed-loop sender for their protocol); 4 fell back to open loop (3 control-without-sender, 1 fragmented: closed loop cannot re-send them) |"
	if !strings.Contains(section(md, "Run"), row) {
		t.Errorf("the Run section lacks %q:\n%s", row, section(md, "Run"))
	}
	if cl := section(md, "Closed loop"); !strings.Contains(cl, "6 of 13 flows re-sent closed loop; 2 control only") {
		t.Errorf("the Closed loop section does not say what became of the flows:\n%s", cl)
	}

	// The threshold: the same 4 fallbacks among 400 flows (1%) are in the headline,
	// among 401 (0.998%) only in the Run section.
	for _, c := range []struct {
		flows    int
		headline bool
	}{{400, true}, {401, false}} {
		dir := copyDir(t, closed)
		editRunJSON(t, dir, func(r map[string]any) { r["closed_loop"].(map[string]any)["flows"] = c.flows })
		sum, md := analyzeInto(t, dir)
		head := strings.Join(stringsAt(t, sum, "headline"), "\n")
		want := fmt.Sprintf("Closed loop fell back to open loop for 4 of %d flows", c.flows)
		if strings.Contains(head, want) != c.headline {
			t.Errorf("%d flows: headline %q; want the fallbacks named: %v", c.flows, head, c.headline)
		}
		if !strings.Contains(section(md, "Run"), fmt.Sprintf("| closed-loop flows | 6 of %d flows re-sent closed loop;", c.flows)) {
			t.Errorf("%d flows: the Run section does not count them", c.flows)
		}
	}
}

// Open against closed loop of midconn.pcap: the closed run's fallbacks are named in
// the comparison's headline, once, for the closed run; the open run has none.
func TestComparisonNamesEveryRunsCaveats(t *testing.T) {
	open, closed := openClosedRuns(t, "midconn.pcap")
	sum, _ := analyzeInto(t, open, closed)
	head := stringsAt(t, sum, "headline")
	want := "closed run: Closed loop fell back to open loop for 4 of 13 flows (30.8%)"
	var n int
	for _, h := range head {
		if strings.Contains(h, "Closed loop fell back") {
			n++
			if !strings.HasPrefix(h, want) {
				t.Errorf("headline line %q, want it to start %q", h, want)
			}
		}
	}
	if n != 1 || !strings.HasPrefix(head[0], want) {
		t.Errorf("headline %q: want the closed run's fallbacks first and once", head)
	}
}

// midconn.pcap's 16 endpoints are two per /24, one /24 per rack: the default mapping
// puts two on each of the 8 racks; grouped by /8 they are one group of 16, which
// fits the 16 hosts of the first rack, so the mapping warns that nothing crosses the
// fabric beyond it. The report's Run section tables the endpoints per rack, the
// headline opens with the warning.
func TestReportShowsHostMapping(t *testing.T) {
	open, _ := openClosedRuns(t, "midconn.pcap")
	sum, md := analyzeInto(t, open)
	racks, _ := lookup(sum, "run", "host_mapping", "racks")
	if list, _ := racks.([]any); len(list) != 8 {
		t.Fatalf("run.host_mapping.racks = %v, want the 8 racks", racks)
	}
	for _, r := range racks.([]any) {
		if e, h := number(t, r, "endpoints"), number(t, r, "hosts_used"); e != 2 || h != 2 {
			t.Errorf("rack %v: %v endpoints on %v hosts, want 2 on 2", r.(map[string]any)["name"], e, h)
		}
	}
	run := section(md, "Run")
	for _, want := range []string{"**Endpoints per rack (--hosts subnet: 16 endpoints on 8 of 8 racks, 16 hosts)**", "| rack-p0-r0 | 16 | 2 | 2 |", "| rack-p1-r3 | 16 | 2 | 2 |",
		"subnet groups (/24 IPv4, /64 IPv6): 8, 0 moved whole to another rack than their own, 0 split over several racks;"} {
		if !strings.Contains(run, want) {
			t.Errorf("the Run section lacks %q:\n%s", want, run)
		}
	}
	if strings.Contains(strings.Join(stringsAt(t, sum, "headline"), " "), "Host mapping") || strings.Contains(run, "racks without an endpoint") {
		t.Error("a mapping over every rack warns")
	}

	oneRack := filepath.Join(fixtureRoot, "midconn-slash8")
	replayWith(t, oneRack, replay.Options{Traces: []string{midconn}, RackPrefix: 8})
	sum, md = analyzeInto(t, oneRack)
	warning := "--hosts subnet maps all 16 endpoints to rack rack-p0-r0: no packet crosses the fabric beyond that rack; spread them over the racks with --hosts spread, or give each address a group of its own with --rack-prefix 32 (--rack-prefix6 128), or map them with a CSV file (--hosts FILE)"
	if head := stringsAt(t, sum, "headline"); head[0] != "Host mapping: "+warning+"." {
		t.Errorf("headline %q, want it to open with the mapping's warning", head)
	}
	run = section(md, "Run")
	for _, want := range []string{"| rack-p0-r0 | 16 | 16 | 16 |", "16 endpoints on 1 of 8 racks, 16 hosts",
		"racks without an endpoint: rack-p0-r1, rack-p0-r2, rack-p0-r3, rack-p1-r0, rack-p1-r1, rack-p1-r2, rack-p1-r3;",
		"Host mapping warning: " + warning + "."} {
		if !strings.Contains(run, want) {
			t.Errorf("one rack: the Run section lacks %q:\n%s", want, run)
		}
	}

	// A CSV that puts every endpoint on one host: nothing enters the fabric, and the
	// quiet line says no packet reached a host link (offered_load has no busiest link).
	csv := filepath.Join(t.TempDir(), "one.csv")
	if err := os.WriteFile(csv, []byte("0.0.0.0/0,host-p0-r0-h0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oneHost := filepath.Join(t.TempDir(), "one-host")
	if rj := replayWith(t, oneHost, replay.Options{Traces: []string{midconn}, Hosts: csv}); rj.Simulation.Injected != 0 || rj.OfferedLoad.BusiestLink != "" {
		t.Fatalf("one host: injected %d, busiest link %q", rj.Simulation.Injected, rj.OfferedLoad.BusiestLink)
	}
	sum, _ = analyzeInto(t, oneHost)
	head := stringsAt(t, sum, "headline")
	if !strings.HasPrefix(head[0], "Host mapping: --hosts "+csv+" maps all 16 endpoints to one host: every packet is intra-host and nothing enters the fabric;") ||
		head[1] != "Nothing congested: no drop, PFC pause or ECN mark; no packet crossed a host link (run.json offered_load)." {
		t.Errorf("one host: headline %q", head)
	}
}

// A run of a small trace loaded with --replicate 4, --max-idle and --target-load:
// the Run section says each with its numbers, computed here from the trace: stream A
// sends 1,250 packets (10 ms every 8 us, the last at 9.992 ms), stream B 25 from
// 10 s, so --max-idle 1ms shortens one gap of 10 s - 9.992 ms to 1 ms (9.989 s
// removed); 4 copies of the 8 racks rotate by 0, 2, 4 and 6 racks and inject
// 4 x 1,275 packets; the busiest host link's p99 is 50% of its speed.
func TestReportShowsLoadOptions(t *testing.T) {
	trace := tinyTrace(t, "load",
		tracegen.Stream{Src: tracegen.HostAddr(0, 0, 0), Dst: tracegen.HostAddr(1, 0, 0), Class: tracegen.TCPData,
			Start: 0, Duration: 10 * units.Millisecond, Length: 9000, Interval: 8 * units.Microsecond},
		tracegen.Stream{Src: tracegen.HostAddr(0, 1, 0), Dst: tracegen.HostAddr(1, 1, 0), Class: tracegen.TCPData,
			Start: 10 * units.Second, Duration: 200 * units.Microsecond, Length: 1500, Interval: 8 * units.Microsecond})
	dir := filepath.Join(t.TempDir(), "load")
	rj := replayWith(t, dir, replay.Options{Traces: []string{trace}, Replicate: []int{4}, MaxIdle: time.Millisecond, TargetLoad: 50})
	sum, md := analyzeInto(t, dir)
	run := section(md, "Run")
	speedup := units.FormatDecimal(rj.Options.Speedup)
	for _, want := range []string{
		"| speedup | " + speedup + " (found by --target-load 50%) |",
		"| idle gaps (--max-idle) | every gap without a packet longer than 1 ms shortened to it: 1 gap shortened, 9.989 s of capture time removed |",
		"| copies (--replicate) | 4 copies of the capture's traffic, copy k on the racks rotated by the k-th of 0, 2, 4, 6 and on addresses whose leading bits rise by k x ",
		"; 5,100 packets injected from them all |",
		"| target load (--target-load) | 50% of the busiest host link's speed at its p99 in 1 ms bins: speedup " + speedup + " |",
		"| offered load (busiest host link) | " + rj.OfferedLoad.BusiestLink + " " + rj.OfferedLoad.Direction + ": p99 50% of its speed in 1 ms bins, peak ",
		// 4 endpoints in 4 /24s on racks 0-3; copy k's rotated by 2k racks, so every
		// rack holds two copies' endpoints on its host h0.
		"4 endpoints (16 with the copies) on 8 of 8 racks, 8 hosts", "| rack-p1-r3 | 16 | 2 | 1 |",
	} {
		if !strings.Contains(run, want) {
			t.Errorf("the Run section lacks %q:\n%s", want, run)
		}
	}
	if got := number(t, sum, "run", "offered_load", "speedup"); got != rj.Options.Speedup {
		t.Errorf("summary.json run.offered_load.speedup %v, run.json options.speedup %v", got, rj.Options.Speedup)
	}
	if got := number(t, sum, "run", "replication", "copies"); got != 4 {
		t.Errorf("summary.json run.replication.copies %v, want 4", got)
	}
	if got := number(t, sum, "run", "idle_gaps", "shortened"); got != 1 {
		t.Errorf("summary.json run.idle_gaps.shortened %v, want 1", got)
	}
}

// The rows of what part of the capture ran, from run.json options alone (hand-made).
func TestCaptureRows(t *testing.T) {
	for _, c := range []struct {
		name string
		info analysis.RunInfo
		want []string
	}{
		{"nothing", analysis.RunInfo{Options: records.RunOptions{Family: "all"}}, nil},
		{"family, filter", analysis.RunInfo{Options: records.RunOptions{Family: "ipv6", Filter: "tcp port 443"}},
			[]string{"address family (--family): ipv6", "filter (--filter): tcp port 443"}},
		{"offset window", analysis.RunInfo{Options: records.RunOptions{WindowStartNs: 20e9, WindowNs: 1.5e9}},
			[]string{"window (--start, --duration): from 20 s after the first packet, for 1.5 s"}},
		{"absolute window to the end", analysis.RunInfo{Options: records.RunOptions{WindowStartNs: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC).UnixNano(), WindowAbsolute: true}},
			[]string{"window (--start, --duration): from 2024-05-01T12:00:00Z to the end"}},
		{"jitter", analysis.RunInfo{Options: records.RunOptions{ReplicateJitterNs: 1e6},
			Replication: &records.Replication{Copies: 2, PerTrace: []int{2}, AddressStep: 1, OffsetsNs: []int64{0, 250e3}, RackShift: []int{0, 4}, Packets: 10}},
			[]string{"copies (--replicate): 2 copies of the capture's traffic, copy k on the racks rotated by the k-th of 0, 4 and on addresses whose leading bits rise by k x 1; 10 packets injected from them all",
				"copy offsets (--replicate-jitter 1 ms): 0 s, 250 us"}},
	} {
		var got []string
		for _, kv := range captureRows(c.info) {
			got = append(got, kv.Key+": "+kv.Value)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: rows\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}
