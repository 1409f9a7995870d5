package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/records"
)

// TestRunDemo: the demo replay does what its trace was built to do
// (testdata/pcaps/README.md, from the generator's scenario, not from the simulator):
// every one of its 22,151 IPv4 packets is injected (nothing is split or intra-host);
// every drop is an egress-limit drop of the lossy incast (TC 0, 16 senders to
// 10.1.3.1 from t = 2 s for 400 us) at rack-p1-r3's port to that receiver; PFC pauses
// only the lossless classes (3 and 4) and only from the lossless incast at t = 1 s;
// no lossless packet is dropped; and the counts add up.
func TestRunDemo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	code, stdout, stderr := runCmd("run", demo, "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(stdout, out+" [crc32WithSalt]: injected 22151 packets,") {
		t.Errorf("summary does not say the 22,151 packets were injected:\n%s", stdout)
	}
	run, err := records.ReadRun(filepath.Join(out, records.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	s := run.Simulation
	if !run.Complete || s.Injected != 22151 {
		t.Fatalf("complete %v, injected %d, want 22151", run.Complete, s.Injected)
	}
	if s.Delivered+s.DroppedTotal()+s.UndrainedTotal() != s.Injected || s.UndrainedTotal() != 0 {
		t.Errorf("delivered %d + dropped %d + undrained %d != injected %d", s.Delivered, s.DroppedTotal(), s.UndrainedTotal(), s.Injected)
	}
	if s.LosslessDrops != 0 || s.Dropped[records.ReasonHeadroom] != 0 {
		t.Errorf("%d lossless drops under Headroom auto", s.LosslessDrops)
	}
	drops, nodes, err := records.ReadAll(records.OpenDrops(filepath.Join(out, records.DropsFile)))
	if err != nil {
		t.Fatal(err)
	}
	ports, pnodes, err := records.ReadAll(records.OpenPorts(filepath.Join(out, records.PortsFile)))
	if err != nil {
		t.Fatal(err)
	}
	peer := map[[2]string]string{} // (node, port) -> peer
	for _, p := range ports {
		peer[[2]string{pnodes[p.Node], strconv.Itoa(int(p.Port))}] = pnodes[p.Peer]
	}
	if len(drops) == 0 || int64(len(drops)) != s.DroppedTotal() {
		t.Fatalf("%d drop rows, run.json %d: the lossy incast must drop", len(drops), s.DroppedTotal())
	}
	const t2 = 2_000_000_000_000 // 2 s in ps
	for _, d := range drops {
		where := [2]string{nodes[d.Node], strconv.Itoa(int(d.Port))}
		if d.Reason != records.ReasonEgressLimit || where[0] != "rack-p1-r3" || peer[where] != "host-p1-r3-h0" || d.TC != 0 ||
			d.Dst != ipaddr.MustParse("10.1.3.1") || d.TimePs < t2 || d.TimePs > t2+10_000_000_000 {
			t.Fatalf("drop %+v at %v (peer %s): not the lossy incast's egress-limit drop at rack-p1-r3 toward host-p1-r3-h0", d, where, peer[where])
		}
	}
	pfc, _, err := records.ReadAll(records.OpenPFC(filepath.Join(out, records.PFCFile)))
	if err != nil {
		t.Fatal(err)
	}
	if len(pfc) == 0 || s.PFCFrames == 0 {
		t.Fatal("the lossless incast must pause")
	}
	for _, e := range pfc {
		if (e.TC != 3 && e.TC != 4) || e.TimePs < t2/2 {
			t.Fatalf("PFC event %+v: only classes 3 and 4 pause, from t = 1 s on", e)
		}
	}
	// Running again over a previous run replaces it.
	if code, _, stderr := runCmd("run", demo, "-o", out, "--json", "--seed", "2"); code != exitOK {
		t.Fatalf("rerun: exit %d: %s", code, stderr)
	}
	run2, err := records.ReadRun(filepath.Join(out, records.RunFile))
	if err != nil || run2.Seed != 2 {
		t.Fatalf("rerun: seed %v, %v", run2, err)
	}
}

func TestRunHashAll(t *testing.T) {
	if testing.Short() {
		t.Skip("six runs")
	}
	out := filepath.Join(t.TempDir(), "cmp")
	code, stdout, stderr := runCmd("run", demo, "-o", out, "--hash", "all", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var runs map[string]records.Run
	if err := json.Unmarshal([]byte(stdout), &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6 {
		t.Fatalf("%d runs, want 6", len(runs))
	}
	// A comparison written by analyze describes these runs; a new --hash all removes it.
	stale := filepath.Join(out, records.AnalysisDir)
	os.MkdirAll(stale, 0o755)
	os.WriteFile(filepath.Join(stale, records.AnalysisSummaryFile), []byte("{}"), 0o644)
	if code, _, stderr := runCmd("run", demo, "-o", out, "--hash", "all", "-q"); code != exitOK || !strings.Contains(stderr, "removed") {
		t.Fatalf("rerun: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale comparison %s survived a new --hash all (%v)", stale, err)
	}
	for m, r := range runs {
		if r.HashMethod.String() != m {
			t.Errorf("%s/ holds a %s run", m, r.HashMethod)
		}
		if _, err := records.ReadRun(filepath.Join(out, m, records.RunFile)); err != nil {
			t.Errorf("%s: %v", m, err)
		}
		if r.Simulation.Injected != runs["crc32"].Simulation.Injected {
			t.Errorf("%s injected %d, crc32 %d", m, r.Simulation.Injected, runs["crc32"].Simulation.Injected)
		}
	}
}

// TestRunBadInput: every bad input exits 2 with one line naming the culprit.
func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	typo := write("typo.yaml", "Switch:\n  BufferSze: 16MiB\n")
	over := write("over.yaml", "Switch:\n  BufferSize: 1MiB\n  Headroom: 512KiB\n")
	garbage := write("garbage.pcap", "this is not a capture file at all, not even close")
	hostsCSV := write("few.csv", "10.0.0.0/24,host-p0-r0-h0\n")
	readonly := filepath.Join(dir, "ro")
	os.Mkdir(readonly, 0o555)
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown config key", []string{"run", demo, "-o", filepath.Join(dir, "a"), "-c", typo}, []string{"typo.yaml:2", "BufferSze"}},
		{"over-committed buffer", []string{"run", demo, "-o", filepath.Join(dir, "b"), "-c", over}, []string{"BufferSize"}},
		{"bad --set", []string{"run", demo, "-o", filepath.Join(dir, "c"), "--set", "EcnWeight=2"}, []string{"EcnWeight"}},
		{"too many endpoints", []string{"run", demo, "-o", filepath.Join(dir, "d"), "--set", "Topology.HostsPerRack=4"}, []string{"endpoints", "hosts", "--hosts hash"}},
		{"unreadable capture", []string{"run", garbage, "-o", filepath.Join(dir, "e")}, []string{"garbage.pcap"}},
		{"missing capture", []string{"run", filepath.Join(dir, "nope.pcap"), "-o", filepath.Join(dir, "f")}, []string{"nope.pcap"}},
		{"output not writable", []string{"run", demo, "-o", filepath.Join(readonly, "sub", "out")}, []string{"-o ", "cannot"}},
		{"unknown hash", []string{"run", demo, "-o", filepath.Join(dir, "g"), "--hash", "md5"}, []string{"md5"}},
		{"bad speedup", []string{"run", demo, "-o", filepath.Join(dir, "h"), "--speedup", "-1"}, []string{"speedup"}},
		{"speedup 0", []string{"run", demo, "-o", filepath.Join(dir, "h"), "--speedup", "0"}, []string{"--speedup 0: want a finite number > 0"}},
		{"bad --start", []string{"run", demo, "-o", filepath.Join(dir, "j"), "--start", "soon"}, []string{`--start "soon"`}},
		{"bad RFC 3339 --start", []string{"run", demo, "-o", filepath.Join(dir, "j"), "--start", "2024-13-01T00:00:00Z"}, []string{"not an RFC 3339 time"}},
		{"zero --duration", []string{"run", demo, "-o", filepath.Join(dir, "j"), "--duration", "0s"}, []string{"--duration"}},
		{"zero --max-idle", []string{"run", demo, "-o", filepath.Join(dir, "j"), "--max-idle", "0"}, []string{"--max-idle"}},
		{"window past the end", []string{"run", demo, "-o", filepath.Join(dir, "j"), "--start", "1h"}, []string{"no IP unicast packets to replay", "outside the window"}},
		{"CSV without every endpoint", []string{"run", demo, "-o", filepath.Join(dir, "i"), "--hosts", hostsCSV}, []string{"few.csv"}},
		{"no trace", []string{"run"}, []string{"missing TRACE: the captures to replay"}},
		{"bad --replicate", []string{"run", demo, "-o", filepath.Join(dir, "k"), "--replicate", "0"}, []string{`--replicate "0"`, "1..1024"}},
		{"--replicate per trace", []string{"run", demo, "-o", filepath.Join(dir, "k"), "--replicate", "2,1"}, []string{"one per trace (1 traces)"}},
		{"bad --replicate-jitter", []string{"run", demo, "-o", filepath.Join(dir, "k"), "--replicate", "2", "--replicate-jitter", "soon"}, []string{"--replicate-jitter"}},
		{"--target-load and --speedup", []string{"run", demo, "-o", filepath.Join(dir, "k"), "--target-load", "80", "--speedup", "2"}, []string{"not both"}},
		{"--target-load 0", []string{"run", demo, "-o", filepath.Join(dir, "k"), "--target-load", "0"}, []string{"--target-load 0"}},
		{"unreachable --target-load", []string{"run", "../../testdata/pcaps/many-flows.pcap", "-o", filepath.Join(dir, "k"), "--target-load", "80"}, []string{"cannot reach 80%", "--replicate"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "output not writable" && os.Geteuid() == 0 {
				// root writes anywhere; make the parent a file instead.
				f := write("file", "x")
				c.args[3] = filepath.Join(f, "out")
			}
			code, _, stderr := runCmd(c.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want 2; stderr %q", code, stderr)
			}
			if strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr is not one line: %q", stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}

func TestConfigCmd(t *testing.T) {
	code, out, stderr := runCmd("config", "--defaults")
	if code != exitOK || !strings.Contains(out, "BufferSize: 32MiB") || !strings.Contains(out, "Pods: 2") {
		t.Fatalf("exit %d stderr %q out:\n%s", code, stderr, out)
	}
	code, out, _ = runCmd("config", "--set", "Pods=1", "--hash", "crc16")
	if code != exitOK || !strings.Contains(out, "Pods: 1") || !strings.Contains(out, "crc16") {
		t.Errorf("config with overrides: exit %d:\n%s", code, out)
	}
	if code, _, stderr := runCmd("config", "--set", "Nope=1"); code != exitUsage || !strings.Contains(stderr, "Nope") {
		t.Errorf("unknown attribute: exit %d %q", code, stderr)
	}
}

func TestPathCmd(t *testing.T) {
	code, out, stderr := runCmd("path", "--json", "10.0.0.1", "10.0.4.1", "udp", "1000", "4791")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var one struct {
		Hops []struct {
			Node    string `json:"node"`
			SetSize int    `json:"set_size"`
			Hash    string `json:"hash"`
			Member  int    `json:"member"`
			Port    int    `json:"port"`
			Next    string `json:"next"`
		} `json:"hops"`
	}
	if err := json.Unmarshal([]byte(out), &one); err != nil || len(one.Hops) != 4 {
		t.Fatalf("%v: %s", err, out)
	}
	if one.Hops[1].SetSize != 4 || !strings.HasPrefix(one.Hops[1].Hash, "0x") || one.Hops[1].Port != 16+one.Hops[1].Member {
		t.Errorf("rack hop %+v", one.Hops[1])
	}
	code, out, stderr = runCmd("path", "--json", "--hash", "all", "--trace", demo, "10.0.0.1", "10.1.0.1", "tcp", "40000", "80")
	if code != exitOK {
		t.Fatalf("--hash all: exit %d: %s", code, stderr)
	}
	var all struct {
		Methods map[string]json.RawMessage `json:"methods"`
	}
	if err := json.Unmarshal([]byte(out), &all); err != nil || len(all.Methods) != 6 {
		t.Fatalf("--hash all: %v: %s", err, out)
	}
	for _, bad := range [][]string{
		{"path", "10.0.0.1", "10.0.4.1", "udp", "1000"},
		{"path", "10.0.0.1", "fe80::1", "udp", "1", "2"},
		{"path", "10.0.0.1", "10.0.4.1", "udp", "1", "70000"},
	} {
		if code, _, _ := runCmd(bad...); code != exitUsage {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// TestThreadShares pins section 5's rule of docs/parallel.md by hand: the slots are
// the runs at once, each gets floor(T / slots), the first T mod slots one more, and
// a run gets at least one thread.
func TestThreadShares(t *testing.T) {
	for _, c := range []struct {
		threads, runs, cpus int
		want                []int
	}{
		{2, 6, 2, []int{1, 1}},
		{8, 6, 8, []int{2, 2, 1, 1, 1, 1}},
		{16, 6, 16, []int{3, 3, 3, 3, 2, 2}},
		{1, 6, 2, []int{1, 1}},
		{32, 1, 32, []int{32}},
		{7, 3, 4, []int{3, 2, 2}},
		{0, 6, 4, []int{1, 1, 1, 1}},
	} {
		got := threadShares(c.threads, c.runs, c.cpus)
		if !slices.Equal(got, c.want) {
			t.Errorf("threadShares(%d, %d, %d) = %v, want %v", c.threads, c.runs, c.cpus, got, c.want)
		}
	}
}
