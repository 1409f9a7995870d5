package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/records"
)

var mixed = filepath.Join("..", "..", "testdata", "pcaps", "mixed.pcap")

// inspect --family keeps one family and counts the other family-filtered; both
// families by default (mixed.pcap: 6,146 IPv4 and 6,220 IPv6 packets, 412 flows
// each, testdata/pcaps/README.md).
func TestInspectFamily(t *testing.T) {
	type fam struct{ Packets, Flows int64 }
	var s struct {
		IPv4     int64                    `json:"ipv4_packets"`
		IPv6     int64                    `json:"ipv6_packets"`
		Flows    int64                    `json:"flows"`
		Skipped  map[string]int64         `json:"skipped"`
		ByFamily struct{ IPv4, IPv6 fam } `json:"by_family"`
	}
	for _, c := range []struct {
		family           string
		v4, v6, filtered int64
	}{{"all", 6146, 6220, 0}, {"ipv4", 6146, 0, 6220}, {"ipv6", 0, 6220, 6146}} {
		code, out, stderr := runCmd("inspect", "--json", "--family", c.family, mixed)
		if code != exitOK || json.Unmarshal([]byte(out), &s) != nil {
			t.Fatalf("--family %s: exit %d %s", c.family, code, stderr)
		}
		if s.IPv4 != c.v4 || s.IPv6 != c.v6 || s.Skipped["family-filtered"] != c.filtered ||
			s.ByFamily.IPv4.Packets != c.v4 || s.ByFamily.IPv6.Packets != c.v6 || s.Flows != s.ByFamily.IPv4.Flows+s.ByFamily.IPv6.Flows {
			t.Errorf("--family %s: %+v", c.family, s)
		}
	}
	code, out, _ := runCmd("inspect", mixed)
	if code != exitOK || !strings.Contains(out, "IPv4 packets     6146 (412 flows)\nIPv6 packets     6220 (412 flows)\n") {
		t.Errorf("inspect: exit %d\n%s", code, out)
	}
	if code, _, stderr := runCmd("inspect", "--family", "ipv5", mixed); code != exitUsage || !strings.Contains(stderr, `--family "ipv5": want ipv4, ipv6 or all`) {
		t.Errorf("--family ipv5: exit %d %q", code, stderr)
	}
}

// run --family replays one family and records it in run.json's inputs; path --run
// maps the run's IPv6 endpoints as the run did; --rack-prefix6 is checked.
func TestRunFamilyAndPathIPv6(t *testing.T) {
	dir := t.TempDir()
	v6 := filepath.Join(dir, "v6")
	code, _, stderr := runCmd("run", mixed, "-o", v6, "-q", "--family", "ipv6")
	if code != exitOK || !strings.Contains(stderr, "6220 IPv6 packets to replay (not replayed: 6146 family-filtered)") {
		t.Fatalf("run --family ipv6: exit %d %s", code, stderr)
	}
	run, err := records.ReadRun(v6)
	if err != nil {
		t.Fatal(err)
	}
	if run.Options.Family != "ipv6" || run.Options.RackPrefix6 != 64 || run.Simulation.Injected != 6220 {
		t.Errorf("run.json options %+v, injected %d", run.Options, run.Simulation.Injected)
	}
	flows, nodes, err := records.ReadAll(records.OpenFlows(filepath.Join(v6, records.FlowsFile)))
	if err != nil {
		t.Fatal(err)
	}
	// --family ipv6 maps the IPv6 endpoints alone: fd00:0:P:R::(h+1) on host-pP-rR-hh.
	f := flows[0]
	if !f.Src.Is6() || !strings.HasSuffix(nodes[f.SrcHost], "-h"+itoa(int(f.Src.As16()[15])-1)) {
		t.Errorf("flow 0: %v on %s", f.Src, nodes[f.SrcHost])
	}
	code, stdout, stderr := runCmd("path", "--run", v6, f.Src.String(), f.Dst.String(), map[uint8]string{6: "tcp", 17: "udp"}[f.Proto], itoa(int(f.Sport)), itoa(int(f.Dport)))
	want := f.Src.String() + " -> " + nodes[f.SrcHost] + "\n" + f.Dst.String() + " -> " + nodes[f.DstHost] + "\n"
	if code != exitOK || !strings.HasPrefix(stdout, want) {
		t.Errorf("path --run: exit %d %s\n%s\nwant it to start with\n%s", code, stderr, stdout, want)
	}
	// Without a trace the two endpoints are the whole trace: one /64 each.
	code, stdout, _ = runCmd("path", "--hash", "toeplitz", "fd00:0:0:2::1", "fd00:0:1:1::1", "udp", "49152", "4791")
	if code != exitOK || !strings.HasPrefix(stdout, "fd00:0:0:2::1 -> host-p0-r0-h0\nfd00:0:1:1::1 -> host-p0-r1-h0\n") || !strings.Contains(stdout, "rack-p0-r0") {
		t.Errorf("path IPv6: exit %d\n%s", code, stdout)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"path", "2001:db8::1", "10.0.0.1", "tcp", "1", "2"}, "one family"},
		{[]string{"path", "fe80::1%eth0", "fe80::2", "tcp", "1", "2"}, "want an IPv4 or IPv6 address"},
		{[]string{"run", mixed, "-o", filepath.Join(dir, "x"), "--rack-prefix6", "129"}, "--rack-prefix6 129: want a prefix length 0..128"},
		{[]string{"run", mixed, "-o", filepath.Join(dir, "y"), "--family", "v6"}, `--family "v6"`},
	} {
		if code, _, stderr := runCmd(c.args...); code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
