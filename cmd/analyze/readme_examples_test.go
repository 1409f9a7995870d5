package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tracefabric/tracefabric/cmd/internal/readmetest"
)

var update = flag.Bool("update", false, "rewrite README.md's analyze examples")

// TestREADMEExamples: the README's printed examples of analyze are what it prints on
// the runs the README makes: a run directory an example reads is written first by the
// README's own `replay run ... -o DIR` command (readmetest.CommandWriting), run with
// the replay binary built from this tree (go test ./cmd/analyze -run
// TestREADMEExamples -update rewrites them).
func TestREADMEExamples(t *testing.T) {
	readme := filepath.Join("..", "..", "README.md")
	text, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	bin := buildReplay(t)
	readmetest.Check(t, readme, "./cmd/analyze", func(t *testing.T, args []string, merged bool) (string, int) {
		for _, a := range args {
			if _, err := os.Stat(a); err == nil {
				continue
			}
			rargs, ok, err := readmetest.CommandWriting(string(text), "./cmd/replay", a)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				continue
			}
			cmd := exec.Command(bin, append(rargs, "-q")...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("replay %q (the README's command writing %s): %v\n%s", rargs, a, err, out)
			}
		}
		var out, errb bytes.Buffer
		stderr := &errb
		if merged {
			stderr = &out
		}
		code := run(args, &out, stderr)
		if code != exitOK && !merged {
			t.Logf("analyze %v: exit %d: %s", args, code, errb.String())
		}
		return out.String(), code
	}, func(line string) string { return line }, *update)
}

// buildReplay builds the replay command of this tree into the test's temporary
// directory.
func buildReplay(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "replay")
	if out, err := exec.Command(goTool, "build", "-o", bin, "github.com/tracefabric/tracefabric/cmd/replay").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/replay: %v\n%s", err, out)
	}
	return bin
}
