package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/internal/synth"
)

// TestInterrupt sends SIGINT to a real analyze while it writes its output (its
// hidden partial directory exists inside the run directory): it stops, removes the
// partial directory, writes no analysis, prints one line and exits 130.
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds the binary and analyzes 300k flows")
	}
	dir := t.TempDir()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("skipping: no go tool to build the binary: %v", err)
	}
	bin := filepath.Join(dir, "analyze")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	runDir := filepath.Join(dir, "run")
	if _, err := synth.Write(runDir, synth.Size{Flows: 300_000, PFCEvents: 300_000, Drops: 30_000}, 1); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, runDir, "-q")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	partial := func() bool {
		es, _ := os.ReadDir(runDir)
		for _, e := range es {
			if strings.HasPrefix(e.Name(), ".analysis.partial-") {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(60 * time.Second)
	for !partial() {
		select {
		case <-done:
			t.Fatalf("analyze ended (exit %d) before writing its output could be interrupted; stderr %q", cmd.ProcessState.ExitCode(), stderr.String())
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no partial directory after 60 s")
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("still running 30 s after SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d, want 130; stderr %q", code, stderr.String())
	}
	if got := stderr.String(); got != "analyze: interrupted (SIGINT); partial outputs removed\n" {
		t.Errorf("stderr %q", got)
	}
	es, _ := os.ReadDir(runDir)
	for _, e := range es {
		if strings.HasPrefix(e.Name(), ".analysis") || e.Name() == "analysis" {
			t.Errorf("left behind %s", e.Name())
		}
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout %q", stdout.String())
	}
}

// An unwritable output place is bad input (exit 2), said in one line that suggests -o.
func TestUnwritableOutput(t *testing.T) {
	runDir := filepath.Join(t.TempDir(), "run")
	if _, err := synth.Write(runDir, synth.Size{Flows: 100, PFCEvents: 20, Drops: 10}, 1); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{"/proc/nope/analysis", "/sys/nope"} {
		if _, err := os.Stat(filepath.Dir(out)); err != nil && out != "/proc/nope/analysis" {
			continue
		}
		code, stdout, stderr := runCmd(runDir, "-o", out, "-q")
		if code != exitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "choose another -o") || stdout != "" {
			t.Errorf("-o %s: exit %d, stderr %q", out, code, stderr)
		}
		if strings.Contains(stderr, ".partial-") || strings.Contains(stderr, "mkdir") {
			t.Errorf("-o %s: stderr %q names temporary files", out, stderr)
		}
	}
}
