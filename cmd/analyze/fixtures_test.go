package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// demo is the committed demo trace, relative to this package's directory.
var demo = filepath.Join("..", "..", "testdata", "pcaps", "demo.pcap")

// fixtureRoot holds the replays the tests share (made once per test binary).
var fixtureRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "analyze-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureRoot = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// replayInto replays traces with the default configuration into out, once per
// method ("" = the configured one) into out/<method> when there are several.
func replayInto(t testing.TB, out string, traces []string, methods ...string) {
	t.Helper()
	cfg, _, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := replay.Prepare(replay.Options{Traces: traces, Config: cfg, Command: []string{"replay", "run", "(test)"}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(methods) == 0 {
		methods = []string{""}
	}
	for _, m := range methods {
		dir := out
		if len(methods) > 1 {
			dir = filepath.Join(out, m)
		}
		if _, err := pr.Run(dir, m); err != nil {
			t.Fatalf("replay %s: %v", dir, err)
		}
	}
}

var (
	demoOnce, cmpOnce, quietOnce, flowletOnce sync.Once
	demoDir, cmpDir, quietDir, flowletDir     string
)

// demoRun is a replay of the demo trace with the default configuration.
func demoRun(t testing.TB) string {
	demoOnce.Do(func() {
		d := filepath.Join(fixtureRoot, "demo")
		replayInto(t, d, []string{demo})
		demoDir = d
	})
	if demoDir == "" {
		t.Fatal("demo replay failed earlier")
	}
	return demoDir
}

// cmpRun is `replay run --hash all` on the demo trace: six runs in subdirectories.
func cmpRun(t testing.TB) string {
	cmpOnce.Do(func() {
		d := filepath.Join(fixtureRoot, "cmp")
		var methods []string
		for _, m := range ecmp.AllMethods {
			methods = append(methods, m.String())
		}
		replayInto(t, d, []string{demo}, methods...)
		cmpDir = d
	})
	if cmpDir == "" {
		t.Fatal("comparison replay failed earlier")
	}
	return cmpDir
}

// flowletRun is the demo trace replayed with flowlet load balancing.
func flowletRun(t testing.TB) string {
	flowletOnce.Do(func() {
		cfg, _, err := config.Load("", nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Switch.LoadBalancingMethod = ecmp.Flowlet
		pr, err := replay.Prepare(replay.Options{Traces: []string{demo}, Config: cfg, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(fixtureRoot, "flowlet")
		if _, err := pr.Run(d, ""); err != nil {
			t.Fatal(err)
		}
		flowletDir = d
	})
	if flowletDir == "" {
		t.Fatal("flowlet replay failed earlier")
	}
	return flowletDir
}

// quietRun replays a tiny trace written here: two light TCP streams between pods,
// far below line rate, so nothing drops, pauses or gets marked.
func quietRun(t testing.TB) string {
	quietOnce.Do(func() {
		quietDir = tinyRun(t, "quiet",
			tracegen.Stream{Src: tracegen.HostAddr(0, 0, 0), Dst: tracegen.HostAddr(1, 1, 0), Class: tracegen.TCPData,
				Start: 0, Duration: 200 * units.Microsecond, Length: 1500, Interval: 2 * units.Microsecond},
			tracegen.Stream{Src: tracegen.HostAddr(0, 1, 0), Dst: tracegen.HostAddr(1, 0, 0), Class: tracegen.TCPData,
				Start: 10 * units.Microsecond, Duration: 200 * units.Microsecond, Length: 9000, Interval: 5 * units.Microsecond})
	})
	if quietDir == "" {
		t.Fatal("quiet replay failed earlier")
	}
	return quietDir
}

// tinyRun writes a trace of the given streams (tinyTrace) and replays it with the
// default configuration into fixtureRoot/name.
func tinyRun(t testing.TB, name string, streams ...tracegen.Stream) string {
	d := filepath.Join(fixtureRoot, name)
	replayInto(t, d, []string{tinyTrace(t, name, streams...)})
	return d
}

// tinyTrace writes a trace of the given streams into fixtureRoot/name.pcap (the
// subnet mapping puts its /24 groups on the racks in address order,
// docs/model.md#host-mapping).
func tinyTrace(t testing.TB, name string, streams ...tracegen.Stream) string {
	trace := filepath.Join(fixtureRoot, name+".pcap")
	s := &tracegen.Scenario{Name: name + ".pcap", Seed: 7, Epoch: time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)}
	for i := range streams {
		s.Generators = append(s.Generators, &streams[i])
	}
	if _, err := s.WriteFile(trace); err != nil {
		t.Fatal(err)
	}
	return trace
}

// replayWith replays opt (the default configuration when opt.Config is nil) into dir
// with the configured hash method.
func replayWith(t testing.TB, dir string, opt replay.Options) *records.Run {
	t.Helper()
	if opt.Config == nil {
		cfg, _, err := config.Load("", nil)
		if err != nil {
			t.Fatal(err)
		}
		opt.Config = cfg
	}
	opt.Version = "test"
	pr, err := replay.Prepare(opt)
	if err != nil {
		t.Fatal(err)
	}
	run, err := pr.Run(dir, "")
	if err != nil {
		t.Fatalf("replay %s: %v", dir, err)
	}
	return run
}

// copyDir copies a run directory (files only) to a new temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err == nil {
			_, err = io.Copy(out, in)
			out.Close()
		}
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// readJSON reads a JSON file into a generic value.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// lookup follows a path of object keys; ok is false when a key is missing.
func lookup(v any, path ...string) (any, bool) {
	for _, k := range path {
		m, isObj := v.(map[string]any)
		if !isObj {
			return nil, false
		}
		if v, isObj = m[k]; !isObj {
			return nil, false
		}
	}
	return v, true
}

// number returns the float at path, failing the test when it is missing.
func number(t *testing.T, v any, path ...string) float64 {
	t.Helper()
	x, ok := lookup(v, path...)
	f, isNum := x.(float64)
	if !ok || !isNum {
		t.Fatalf("summary.json: %v is %v (%T), want a number", path, x, x)
	}
	return f
}

func readRunJSON(t *testing.T, dir string) *records.Run {
	t.Helper()
	r, err := records.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
