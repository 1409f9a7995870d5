package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
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

// TestHashAllEvents: replay run --hash all --events prepares once for every method
// (Options.Runs is the number of methods, so the trace is kept in memory for them,
// where one method's run streams the plain capture a second time), and every
// method's run.json holds the same event, acted on at the same time.
func TestHashAllEvents(t *testing.T) {
	dir := t.TempDir()
	ev := filepath.Join(dir, "spine.yaml")
	if err := os.WriteFile(ev, []byte("- {At: 1s, Kind: switch-down, Node: spine-s0-0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var runs []int
	var cached []bool
	preparedHook = func(pr *replay.Prepared) { runs, cached = append(runs, pr.Opt.Runs), append(cached, pr.Cached()) }
	defer func() { preparedHook = nil }()
	out := filepath.Join(dir, "all")
	if code, _, stderr := runCmd("run", demo, "--hash", "all", "-q", "--events", ev, "-o", out); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	one := filepath.Join(dir, "one")
	if code, _, stderr := runCmd("run", demo, "-q", "--events", ev, "-o", one); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	n := len(ecmp.AllMethods)
	if !slices.Equal(runs, []int{n, 1}) || !slices.Equal(cached, []bool{true, false}) {
		t.Errorf("prepared with Runs %v, trace kept %v; want [%d 1] and [true false]", runs, cached, n)
	}
	for _, m := range ecmp.AllMethods {
		run, err := records.ReadRun(filepath.Join(out, m.String()))
		if err != nil {
			t.Fatal(err)
		}
		if len(run.Events) != 1 || run.Events[0].Kind != "switch-down" || run.Events[0].TimePs != 1_000_000_000_000 || run.Events[0].SetsChanged == 0 {
			t.Errorf("%s: events %+v, want the switch-down at 1 s changing sets", m, run.Events)
		}
		if h, _ := run.HashMethod.MarshalText(); string(h) != m.String() {
			t.Errorf("%s: run.json hash_method %s", m, h)
		}
	}
}
