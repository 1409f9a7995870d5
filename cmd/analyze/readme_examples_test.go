package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracefabric/tracefabric/cmd/internal/readmetest"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/replay"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

var update = flag.Bool("update", false, "rewrite README.md's analyze examples")

// readmeRuns are the run directories the README's analyze examples read, made as the
// README says: out/demo by `replay run testdata/pcaps/demo.pcap -o out/demo`, out/cmp
// by `replay run testdata/pcaps/many-flows.pcap -o out/cmp --hash all`, out/tcp-open
// and out/tcp-closed by `replay run testdata/pcaps/tcp-incast.pcap -o out/tcp-open`
// and the same with `--transport closed`.
var readmeRuns = map[string]struct {
	trace       string
	all, closed bool
}{
	"out/demo":       {"testdata/pcaps/demo.pcap", false, false},
	"out/cmp":        {"testdata/pcaps/many-flows.pcap", true, false},
	"out/tcp-open":   {"testdata/pcaps/tcp-incast.pcap", false, false},
	"out/tcp-closed": {"testdata/pcaps/tcp-incast.pcap", false, true},
}

// TestREADMEExamples: the README's printed examples of analyze are what it prints on
// the runs the README makes (go test ./cmd/analyze -run TestREADMEExamples -update
// rewrites them).
func TestREADMEExamples(t *testing.T) {
	readmetest.Check(t, filepath.Join("..", "..", "README.md"), "./cmd/analyze", func(t *testing.T, args []string) string {
		for _, a := range args {
			r, ok := readmeRuns[a]
			if _, err := os.Stat(a); !ok || err == nil {
				continue
			}
			cfg := config.Default()
			if r.closed {
				cfg.Transport.Mode = config.TransportClosed
			}
			pr, err := replay.Prepare(replay.Options{Traces: []string{r.trace}, Config: &cfg, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			methods := []string{""}
			if r.all {
				methods = methods[:0]
				for _, m := range ecmp.AllMethods {
					methods = append(methods, m.String())
				}
			}
			for _, m := range methods {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(a, m)), 0o755); err != nil {
					t.Fatal(err)
				}
				if _, err := pr.Run(filepath.Join(a, m), m); err != nil {
					t.Fatal(err)
				}
			}
		}
		code, stdout, stderr := runCmd(args...)
		if code != exitOK {
			t.Fatalf("analyze %v: exit %d: %s", args, code, stderr)
		}
		return stdout
	}, func(line string) string { return line }, *update)
}
