package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/records"
)

// buildBinary builds the command of the package being tested into dir.
func buildBinary(t *testing.T, dir, name string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("skipping: no go tool to build the binary: %v", err)
	}
	bin := filepath.Join(dir, name)
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// waitFor polls until cond holds or the child exits; it reports whether cond held.
func waitFor(t *testing.T, done <-chan struct{}, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		select {
		case <-done:
			return cond()
		case <-time.After(2 * time.Millisecond):
		}
	}
	return false
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestInterrupt sends SIGINT (and SIGTERM) to a real replay run in the middle of a
// long replay: it stops promptly, removes its partial output directory, prints one
// line and exits 130.
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds the binary and replays 2M packets")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir, "replay")
	trace := filepath.Join(dir, "big.pcap")
	if _, err := tracegen.WriteBenchmarkFile(trace, tracegen.Benchmark{Packets: 2_000_000, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			outs := t.TempDir()
			out := filepath.Join(outs, "run")
			var stdout, stderr bytes.Buffer
			// SIGINT stops a partitioned run (the feed checks the context at every
			// barrier), SIGTERM a sequential one.
			threads := map[syscall.Signal]string{syscall.SIGINT: "2", syscall.SIGTERM: "1"}[sig]
			cmd := exec.Command(bin, "run", trace, "-o", out, "-q", "--threads", threads)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			var waitErr error
			go func() { waitErr = cmd.Wait(); close(done) }()
			// The run is under way once its partial directory exists.
			partial := func() bool {
				for _, n := range entries(t, outs) {
					if strings.HasPrefix(n, "run.partial-") {
						return true
					}
				}
				return false
			}
			if !waitFor(t, done, partial) {
				<-done
				t.Fatalf("no partial directory appeared; exit %v, stderr %q", waitErr, stderr.String())
			}
			time.Sleep(100 * time.Millisecond) // well into the simulation
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatal("still running 30 s after the signal")
			}
			took := time.Since(sent)
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Fatalf("exit %d, want 130; stderr %q", code, stderr.String())
			}
			msg := stderr.String()
			lines := strings.Split(strings.TrimSuffix(msg, "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasSuffix(msg, "\n") || last != "replay run: interrupted ("+sigName(sig)+"); partial outputs removed" {
				t.Errorf("stderr %q: want its last line to say the run was interrupted", msg)
			}
			if len(lines) != 2 { // the line before the replay, and the interrupt's
				t.Errorf("stderr has %d lines: %q", len(lines), msg)
			}
			if left := entries(t, outs); len(left) != 0 {
				t.Errorf("left behind %q", left)
			}
			if took > 5*time.Second {
				t.Errorf("took %v to stop", took)
			}
			t.Logf("%v: stopped %v after the signal", sig, took)
		})
	}
}

func sigName(s syscall.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// deadPID returns the PID of a process that has exited.
func deadPID(t *testing.T) string {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Skipf("skipping: cannot start a child: %v", err)
	}
	return strconv.Itoa(c.Process.Pid)
}

// A killed process's partial directories (SIGKILL, power loss) never block a later
// run, and the next run into the same place removes them: an analysis partial left
// inside a run directory, a run partial beside it.
func TestStalePartials(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	if code, _, stderr := runCmd("run", demo, "-o", out, "-q"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	dead := deadPID(t)
	analysisPartial := filepath.Join(out, ".analysis.partial-"+dead+"-123")
	runPartial := out + ".partial-" + dead + "-456"
	for _, d := range []string{analysisPartial, runPartial} {
		if err := os.MkdirAll(filepath.Join(d, "plots"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "plots", "x.png"), []byte("partial"), 0o644)
	}
	code, _, stderr := runCmd("run", demo, "-o", out, "-q", "--seed", "2")
	if code != exitOK {
		t.Fatalf("a stale analysis partial blocked the run: exit %d: %s", code, stderr)
	}
	for _, d := range []string{analysisPartial, runPartial} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s survived the next run (%v)", d, err)
		}
	}
	if run, err := records.ReadRun(out); err != nil || run.Seed != 2 {
		t.Errorf("the new run: %v %v", run, err)
	}
}
