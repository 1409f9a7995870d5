package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// One number per name: a run's numbers are the same alone and inside a comparison,
// for a hash run and a flowlet run (whose flows move between members: the comparison
// used to place each flow on its first packet's member and reversed the verdict).
// Every metric of the comparison is also the summary.json key of the same number, its
// interval included where the single run has one.
func TestOneNumberPerName(t *testing.T) {
	hash := filepath.Join(cmpRun(t), "crc32WithSalt")
	flowlet := flowletRun(t)
	cmpOut := filepath.Join(t.TempDir(), "cmp")
	if code, _, stderr := runCmd(hash, flowlet, "-o", cmpOut, "-q", "--bootstrap", "300"); code != exitOK {
		t.Fatalf("comparison: exit %d: %s", code, stderr)
	}
	cmp := readJSON(t, filepath.Join(cmpOut, "summary.json"))
	metrics := stringsAt(t, cmp, "comparison_info", "metrics")
	if len(metrics) < 20 {
		t.Fatalf("comparison metrics %v", metrics)
	}
	// Named by what differs: the load balancing, from run.json.
	if names := stringsAt(t, cmp, "comparison_info", "methods"); strings.Join(names, " ") != "lb=none lb=flowlet" {
		t.Errorf("runs named %q, want lb=none and lb=flowlet", names)
	}
	if md := readFile(t, filepath.Join(cmpOut, "report.md")); !strings.Contains(md, "Runs compared by load balancing") {
		t.Error("the comparison's title does not say what differs")
	}
	for _, c := range []struct{ dir, method string }{{hash, "lb=none"}, {flowlet, "lb=flowlet"}} {
		out := filepath.Join(t.TempDir(), "alone")
		if code, _, stderr := runCmd(c.dir, "-o", out, "-q", "--bootstrap", "300"); code != exitOK {
			t.Fatalf("%s alone: exit %d: %s", c.method, code, stderr)
		}
		alone := readJSON(t, filepath.Join(out, "summary.json"))
		for _, m := range metrics {
			in, ok := lookup(cmp, append([]string{"comparison", c.method}, append(strings.Split(m, "."), "value")...)...)
			if !ok {
				t.Fatalf("comparison.%s.%s has no value", c.method, m)
			}
			single, ok := lookup(alone, strings.Split(m, ".")...)
			if !ok {
				t.Errorf("%s: the comparison's %s is not a summary.json key of a single run", c.method, m)
				continue
			}
			if in != single {
				t.Errorf("%s %s: %v alone, %v in the comparison", c.method, m, single, in)
			}
		}
		for _, k := range []string{"lo", "hi"} {
			a, _ := lookup(alone, "polarization", "ami_interval", k)
			b, _ := lookup(cmp, "comparison", c.method, "polarization", "ami", k)
			if a == nil || a != b {
				t.Errorf("%s AMI interval %s: %v alone, %v in the comparison", c.method, k, a, b)
			}
		}
	}
}
