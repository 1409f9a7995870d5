package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/plots"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The report says what ran: open loop in plain words, the run's options, the fabric
// (the default rack tier is 16 host ports over 4 uplinks of 100 Gb/s: 4:1; auto
// headroom at 100 Gb/s and 1 us is 236,032 B, 922 cells of 256 B, per docs/model.md),
// the storm rule in the spec's words, sets named by what they are, and the peak
// occupancy table in peak order as its title says.
func TestReportSaysWhatRan(t *testing.T) {
	out := filepath.Join(t.TempDir(), "a")
	if code, _, stderr := runCmd(demoRun(t), "-o", out, "-q"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	md := readFile(t, filepath.Join(out, "report.md"))
	html := readFile(t, filepath.Join(out, "report.html"))
	for _, want := range []string{
		"Open loop: the replay injected every captured packet at its captured time",
		"| transport | open |", "| speedup | 1 |", "| host mapping | subnet (/24 per rack) |", "| oversize packets | split |",
		"| load balancing | none |", "| not injected as captured | none: every packet of the trace entered the fabric as captured |",
		"## Fabric",
		"| rack | 8 | 16 x 100Gbps | 4 x 100Gbps | 4:1 | 236,032 B (922 cells) |",
		"| fabric | 8 | 4 x 100Gbps | 4 x 100Gbps | 1:1 | 236,032 B (922 cells) |",
		"| spine | 16 | 2 x 100Gbps | - | - (no uplinks) |",
		"| lossless classes (PFC) | 3, 4 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// The storm definition, as the spec words it.
	const rule = "A storm episode is a connected set of pause intervals that overlap in time and are linked either hop by hop (the paused sender's node is itself pausing its own upstream) or as siblings (paused by the same node, on any of its ports: one congestion event fanning out); its depth is the longest hop-by-hop chain."
	if !strings.Contains(html, strings.ReplaceAll(rule, "'", "&#39;")) {
		t.Errorf("report.html does not state the storm rule in the spec's words")
	}
	if strings.Contains(md, "linked hop by hop (the paused node itself pausing its upstream)") {
		t.Error("report.md still states the hop-by-hop-only rule")
	}
	// Sets are named by what they are.
	if !regexp.MustCompile(`\| (rack|fabric)-p\d-[rf]\d uplinks \(`).MatchString(md) {
		t.Error("the tier table does not name the worst set as a switch's uplinks")
	}
	// The peak occupancy table lists the highest peak first.
	i := strings.Index(md, "**Peak occupancy")
	if i < 0 {
		t.Fatal("no peak occupancy table")
	}
	var peaks []float64
	for _, line := range strings.Split(md[i:], "\n")[4:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		f := strings.Fields(cells[3])
		v, _ := strconv.ParseFloat(f[0], 64)
		peaks = append(peaks, v*map[string]float64{"B": 1, "KB": 1e3, "MB": 1e6}[f[1]])
	}
	for k := 1; k < len(peaks); k++ {
		if peaks[k] > peaks[k-1] {
			t.Errorf("peak occupancy not in peak order: %v", peaks)
		}
	}
	if len(peaks) < 2 {
		t.Errorf("peaks %v", peaks)
	}
}

// writeMixedTrace writes tracegen.WriteNotInjected's capture: two packets replayed as
// captured, one intra-host, one split by an MTU of 1500, one ARP record.
func writeMixedTrace(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "mixed.pcap")
	if err := tracegen.WriteNotInjected(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// The Run table lists every packet of the trace not injected as captured, by reason,
// and a capture of 3 flows is too small to judge balance (and none crosses both tiers
// for polarization): the report and summary.json say so instead of printing numbers.
func TestReportNotInjectedAndGuards(t *testing.T) {
	cfg := config.Default()
	cfg.Switch.Mtu = 1500
	pr, err := replay.Prepare(replay.Options{Traces: []string{writeMixedTrace(t)}, Config: &cfg, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(t.TempDir(), "run")
	if _, err := pr.Run(runDir, ""); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "a")
	code, stdout, stderr := runCmd(runDir, "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	md := readFile(t, filepath.Join(out, "report.md"))
	for _, want := range []string{
		"| not injected: arp (skipped by the reader) | 1 |",
		"| not injected: intra-host (both ends on one host) | 1 |",
		"| not injected as captured: oversize, split | 1 into 3 packets |",
		"| trace families | IPv4 4 (100%), IPv6 0 (0%) |",
		"No flow crossed both the rack and the fabric tier: no polarization to measure.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if !strings.Contains(stdout, "Too few flows (") || !strings.Contains(stdout, "to judge balance") {
		t.Errorf("the headline does not say too few flows to judge balance:\n%s", stdout)
	}
	sum := readJSON(t, filepath.Join(out, "summary.json"))
	for _, path := range [][]string{{"imbalance", "tiers", "rack"}, {"polarization"}} {
		if j, _ := lookup(sum, append(path, "judged")...); j != false {
			t.Errorf("%v judged %v, want false", path, j)
		}
	}
	if v, ok := lookup(sum, "polarization", "ami"); !ok || v != nil {
		t.Errorf("polarization.ami %v, want null", v)
	}
}

// A comparison report: "clear" is said as the rule it is (the paired difference's
// interval excludes 0), a tie marks no method in the table or the figure, p-values
// are not ranked, the ECN section covers every method, and a duration has the same
// unit in the table as on its figure panel.
func TestComparisonReportWords(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cmp")
	if code, _, stderr := runCmd(cmpRun(t), "-o", out, "-q", "--bootstrap", "200"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	md := readFile(t, filepath.Join(out, "report.md"))
	if !strings.Contains(md, "of the paired difference between the best method and the runner-up (the same resampled flows in both runs) excludes 0") || strings.Contains(md, "does not overlap") {
		t.Error("the report does not state the clear rule as the paired difference's interval excluding 0")
	}
	if !strings.Contains(md, "and the difference is a practical one: at least 5% of the runner-up's value") || !strings.Contains(md, `"statistically": the interval excludes 0 but the difference is smaller than that`) {
		t.Error("the report does not state the practical threshold of clear")
	}
	if !regexp.MustCompile(`\| lossless \(headroom\) drops \|( 0 \|){6} tie \|`).MatchString(md) {
		t.Error("six methods with 0 lossless drops: the row does not say tie")
	}
	if !regexp.MustCompile(`\| rack chi-square p flows \|[^\n]*\| not ranked \|`).MatchString(md) {
		t.Error("the chi-square p-value row is ranked")
	}
	if n := strings.Count(md[strings.Index(md, "**CE marking per method**"):], "\n| crc"); n != 4 {
		t.Errorf("the ECN section lists %d crc methods, want 4 (every method)", n)
	}
	// The figure marks nothing on a tie or a p-value; durations share their unit.
	sum := readJSON(t, filepath.Join(out, "summary.json"))
	if b, _ := lookup(sum, "comparison_info", "best", "drops.lossless"); b == nil {
		t.Fatal("no best for drops.lossless")
	} else if m, _ := lookup(b, "method"); m != nil {
		t.Errorf("a tie names a best method: %v", b)
	} else if tie, _ := lookup(b, "tie"); tie != true {
		t.Errorf("tie not set: %v", b)
	}
	runs := make([]*analysis.Run, 0, 6)
	for _, d := range []string{"crc32", "crc32WithSalt"} {
		r, err := analysis.Load(filepath.Join(cmpRun(t), d))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	c, err := analysis.Compare(runs, analysis.Options{Bootstrap: 50, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{analysis.MetricLossless, analysis.TierMetric("fabric", "chi2_p")} {
		if mc := metricCI(c, m); mc.Marked != "" {
			t.Errorf("%s: the figure marks %s", m, mc.Marked)
		}
	}
	_, unit := metricFormat(c, analysis.MetricP99Delay)
	if _, axis := plots.AxisUnit(metricCI(c, analysis.MetricP99Delay)); unit != axis || unit == "" {
		t.Errorf("p99 delay: table unit %q, figure unit %q", unit, axis)
	}
}

// With one fabric switch per pod a rack crosses to the fabric through a single uplink:
// flows.arrow records member 0 there, loadbalance.arrow has no set (nothing to
// balance), and the analysis takes those flows in: polarization counts every flow
// that crossed both tiers and, the rack choice being always 0, says it cannot judge
// (an entropy of 0) instead of leaving the flows out or reading NMI 0.
func TestSingleUplinkRun(t *testing.T) {
	cfg := config.Default()
	cfg.Topology.FabricPerPod = 1
	pr, err := replay.Prepare(replay.Options{Traces: []string{demo}, Config: &cfg, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(t.TempDir(), "run")
	if _, err := pr.Run(runDir, ""); err != nil {
		t.Fatal(err)
	}
	run, err := analysis.Load(runDir)
	if err != nil {
		t.Fatal(err)
	}
	crossed := 0
	for _, f := range run.Flows.Flows {
		if f.RackMember == 0 && f.FabricMember >= 0 {
			crossed++
		}
	}
	s, err := analysis.Analyze(run, analysis.Options{Bootstrap: 50})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Polarization
	if crossed == 0 || p.Flows != float64(crossed) || p.Judged || !strings.Contains(p.Reason, "same rack member") {
		t.Errorf("%d flows crossed both tiers; polarization %+v", crossed, p)
	}
}

// "Buffers stayed empty" is said only when no queue held a packet: queues that filled
// between the buffer samples make it "no occupancy at the sampling interval".
func TestUnsampledQueues(t *testing.T) {
	empty := &plots.NoDataError{Figure: plots.NameBufferOccupancy, Reason: "buffers stayed empty"}
	nodes := analysis.Nodes{"host-p0-r0-h0", "rack-p0-r0"}
	queues := []analysis.QueueCounters{
		{PortClass: analysis.PortClass{Node: 0, Port: 0, TC: 0}, Tier: records.TierHost, WatermarkBytes: 9000}, // a host NIC: not a switch buffer
		{PortClass: analysis.PortClass{Node: 1, Port: 3, TC: 0}, Tier: records.TierRack, WatermarkBytes: 1280},
	}
	err := unsampledQueues(empty, queues, nodes, 100*units.Microsecond)
	want := "no occupancy at the 100 us sampling interval (BufferStatsReportInterval): queues held packets only between samples (the largest egress queue watermark was 1.28 KB, at rack-p0-r0:3/tc0)"
	if nd, ok := err.(*plots.NoDataError); !ok || nd.Reason != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if err := unsampledQueues(empty, queues[:1], nodes, 100*units.Microsecond); err != empty {
		t.Errorf("no switch queue held a packet: got %v, want the figure's own reason", err)
	}
}
