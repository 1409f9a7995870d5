package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestTopologyCommand: replay topology describes a topology file and draws it. By
// hand from testdata/topologies/rail-optimized.yaml: 16 servers x 8 rails = 128
// hosts on 2 groups x 8 = 16 rail leaves, joined to 4 spines: 148 nodes, 128 host
// links + 16 x 4 spine links = 192 links; the longest path host - leaf - spine - leaf
// - host has 5 nodes. --svg and --png write an SVG document and a PNG file.
func TestTopologyCommand(t *testing.T) {
	dir := t.TempDir()
	svg, png := filepath.Join(dir, "rail.svg"), filepath.Join(dir, "rail.png")
	file := filepath.Join("..", "..", "testdata", "topologies", "rail-optimized.yaml")
	code, out, errs := runCmd("topology", "--topology", file, "--json", "--svg", svg, "--png", png)
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	var d struct {
		Shape   string   `json:"shape"`
		Hosts   int      `json:"hosts"`
		Nodes   int      `json:"nodes"`
		Links   int      `json:"links"`
		Longest []string `json:"longest_path"`
		Roles   []struct {
			Role  string `json:"role"`
			Count int    `json:"count"`
		} `json:"roles"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	count := map[string]int{}
	for _, r := range d.Roles {
		count[r.Role] = r.Count
	}
	if d.Hosts != 128 || d.Nodes != 148 || d.Links != 192 || len(d.Longest) != 5 || count["spine"] != 4 || len(d.Roles) != 3 {
		t.Errorf("described %+v; want 128 hosts, 148 nodes, 192 links, a 5-node longest path, 4 spines, 3 roles", d)
	}
	s, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(s, []byte("<svg")) || !bytes.HasSuffix(bytes.TrimSpace(s), []byte("</svg>")) {
		t.Errorf("%s is not an SVG document: %.80q", svg, s)
	}
	p, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(p, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("%s is not a PNG file: %.16q", png, p)
	}
}

// TestTopologyErrorsExit2: a bad topology file stops replay topology and replay run
// with exit 2 and one line naming the file, the line and the rule, and writes no
// picture and no run directory.
func TestTopologyErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	text := "Switches:\n  - {Role: leaf, Name: leaf}\n  - {Role: spine, Name: spine}\nHosts:\n  - {Switches: leaf, PerSwitch: 2}\nLinks:\n  - {From: leaf, To: spin, Speed: 100Gbps}\n"
	if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	hpcc := filepath.Join(dir, "topology.txt")
	if err := os.WriteFile(hpcc, []byte("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0.01\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	svg, runDir := filepath.Join(dir, "bad.svg"), filepath.Join(dir, "run")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"topology unknown node", []string{"topology", "--topology", bad, "--svg", svg}, "bad.yaml:7:"},
		{"topology argument", []string{"topology", bad}, "bad.yaml:7:"},
		{"run unknown node", []string{"run", "-q", demo, "-o", runDir, "--topology", bad}, "bad.yaml:7:"},
		{"hpcc error rate", []string{"topology", "--topology", hpcc}, "topology.txt:4: link 1 - 2: error_rate 0.01"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCmd(c.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", code, exitUsage, errs)
			}
			if strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) || out != "" {
				t.Errorf("stdout %q, stderr %q: want one line naming %q", out, errs, c.want)
			}
		})
	}
	for _, p := range []string{svg, runDir} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after the error", p)
		}
	}
}

// TestTopologyThreads: replay topology --threads N prints the partition plan after
// the description. The default Clos into 2 (fabric.TestPartitionDefaultClos derives
// it by hand): two partitions of 64 hosts and 16 switches (a pod's 4 racks and 4
// fabric switches, 8 spines) of 19200Gbps each, 16 cut links from fabric-p0-f2 -
// spine-s2-0 on, lookahead 1us, imbalance 1. One thread, and spine links of delay
// 0, are sequential with the reason; --json carries the same plan; -1 is a usage
// error.
func TestTopologyThreads(t *testing.T) {
	code, out, errs := runCmd("topology", "--threads", "2")
	if code != exitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	want := `partitions for 2 threads: 2 (whole pods, spines by plane)
  partition 0: 80 nodes (64 hosts, 16 switches), weight 19200Gbps (50.0%)
  partition 1: 80 nodes (64 hosts, 16 switches), weight 19200Gbps (50.0%)
  cut: 16 links (fabric-p0-f2 - spine-s2-0, fabric-p0-f2 - spine-s2-1, fabric-p0-f2 - spine-s2-2, fabric-p0-f2 - spine-s2-3, fabric-p0-f3 - spine-s3-0, fabric-p0-f3 - spine-s3-1 and 10 more)
  lookahead 1us (the smallest delay of a cut link)
  imbalance 1.000 (the heaviest partition's weight over the mean)
`
	if !strings.HasSuffix(out, want) || !strings.HasPrefix(out, "fabric: clos") {
		t.Errorf("output ends\n%s\nwant\n%s", out[max(0, len(out)-len(want)-200):], want)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--threads", "1"}, "partitions for 1 thread: 1, sequential (1 thread)\n"},
		{[]string{"--threads", "2", "--set", "Topology.FabricSpineLink.PropagationDelay=0"},
			"partitions for 2 threads: 1, sequential (lookahead 0: link fabric-p0-f2 - spine-s2-0 has delay 0)\n"},
	} {
		code, out, errs := runCmd(append([]string{"topology"}, c.args...)...)
		if code != exitOK || !strings.HasSuffix(out, c.want) {
			t.Errorf("%v: exit %d, stderr %q, output ends %q; want %q", c.args, code, errs, out[max(0, len(out)-120):], c.want)
		}
	}
	code, out, errs = runCmd("topology", "--threads", "2", "--json")
	if code != exitOK {
		t.Fatalf("--json: exit %d, stderr %q", code, errs)
	}
	var d struct {
		Hosts int `json:"hosts"`
		Plan  struct {
			Parts int `json:"partitions"`
			Of    []struct {
				Hosts, Switches int
			} `json:"parts"`
			Cut  []string `json:"cut_links"`
			Look int64    `json:"lookahead_ps"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if d.Hosts != 128 || d.Plan.Parts != 2 || len(d.Plan.Of) != 2 || d.Plan.Of[1].Hosts != 64 || d.Plan.Of[1].Switches != 16 ||
		len(d.Plan.Cut) != 16 || d.Plan.Cut[15] != "fabric-p1-f1 - spine-s1-3" || d.Plan.Look != 1_000_000 {
		t.Errorf("--json: %+v", d)
	}
	if code, _, errs := runCmd("topology", "--threads", "-1"); code != exitUsage || !strings.Contains(errs, "--threads -1") {
		t.Errorf("--threads -1: exit %d, stderr %q", code, errs)
	}
	// 0: the CPUs the process may use.
	cpus := fmt.Sprintf("partitions for %d thread", runtime.GOMAXPROCS(0))
	if code, out, _ := runCmd("topology", "--threads", "0"); code != exitOK || !strings.Contains(out, cpus) {
		t.Errorf("--threads 0: exit %d, output without %q", code, cpus)
	}
	if code, out, _ := runCmd("topology"); code != exitOK || strings.Contains(out, "partitions for") {
		t.Errorf("without --threads: exit %d, a plan printed", code)
	}
}
