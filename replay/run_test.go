package replay

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tracefabric/tracefabric/records"
)

func repoPath(t testing.TB, rel string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", rel)
}

func runTrace(t *testing.T, trace string, mutate func(*Options)) (*records.Run, string) {
	t.Helper()
	opt := Options{Traces: []string{repoPath(t, trace)}, Warn: func(s string) { t.Log("warning:", s) }}
	if mutate != nil {
		mutate(&opt)
	}
	pr, err := Prepare(opt)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	run, err := pr.Run(out, "")
	if err != nil {
		t.Fatal(err)
	}
	return run, out
}

func TestRunDemo(t *testing.T) {
	run, _ := runTrace(t, "testdata/pcaps/demo.pcap", nil)
	s := run.Simulation
	t.Logf("injected %d delivered %d dropped %v undrained %v hops %d pfc %d ce %d sim %v events %d wall %.2fs",
		s.Injected, s.Delivered, s.Dropped, s.Undrained, s.PacketHops, s.PFCFrames, s.CEMarked, s.SimTimePs, s.Events, s.WallS)
	t.Logf("records %v", run.Records)
}
