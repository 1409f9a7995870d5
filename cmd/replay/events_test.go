package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEventsFileErrors: replay run --events with a bad event exits 2 with one line per
// problem naming the events file, its line, the event and the rule; a good file runs
// and its events are in run.json.
func TestEventsFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown node", "- {At: 1ms, Kind: switch-down, Node: spine-s7-0}\n",
			`ev.yaml:1: Events[0].Node: "spine-s7-0" is no node and matches none (unknown node)`},
		{"before the trace", "Events:\n  - {At: -5us, Kind: drain, Node: spine-s0-0}\n",
			`ev.yaml:2: Events[0].At: -5us is before the trace`},
		{"overlapping", "- {At: 1ms, Kind: link-down, Link: [rack-p0-r0, fabric-p0-f0]}\n- {At: 1ms, Kind: speed, Link: [rack-p0-r0, fabric-p0-f0], Speed: 10Gbps}\n- {At: 2ms, Kind: link-down, Link: [fabric-p0-f0, rack-p0-r0]}\n",
			`ev.yaml:3: Events[2].At: link-down link rack-p0-r0 - fabric-p0-f0 at 2ms overlaps Events[0] (link-down at 1ms, not up again before): overlapping events on one link`},
		{"unknown attribute", "- {At: 1ms, Kind: drain, Nodes: spine-s0-0}\n", `ev.yaml:1: Events[0].Nodes: unknown attribute`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "ev.yaml")
			if err := os.WriteFile(p, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			code, _, stderr := runCmd("run", demo, "--events", p, "-o", out)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
				t.Errorf("stderr %q, want one line containing %q", stderr, tc.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s left behind", out)
			}
		})
	}
}
