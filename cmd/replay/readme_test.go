package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/tracefabric/tracefabric/cmd/internal/readmetest"
)

// wallTime matches the wall-time figures of the run summary and of export, which change
// from run to run: the README shows one run's, the comparison masks them.
var wallTime = regexp.MustCompile(`in [0-9.]+ s wall, [0-9.]+ M packet-hops/s|took [0-9.]+ s`)

// TestREADMEExamples: the README's printed examples of replay (the run summary,
// inspect, path) are what the commands print (go test ./cmd/replay -run
// TestREADMEExamples -update rewrites them).
func TestREADMEExamples(t *testing.T) {
	readmetest.Check(t, filepath.Join("..", "..", "README.md"), "./cmd/replay", func(t *testing.T, args []string, merged bool) (string, int) {
		var out, errb bytes.Buffer
		stderr := &errb
		if merged {
			stderr = &out // in the order written, as a terminal shows them
		}
		code := run(args, &out, stderr)
		if code != exitOK && !merged {
			t.Logf("replay %v: exit %d: %s", args, code, errb.String())
		}
		return out.String(), code
	}, func(line string) string { return wallTime.ReplaceAllString(line, "in (wall time)") }, *update)
}
