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

// The demo trace through the default fabric (testdata/pcaps/README.md: 22,151 IPv4
// packets in 632 flows, a lossless RoCE incast and a lossy TCP incast): every packet
// enters, and each is delivered, dropped or left undrained; auto headroom loses no
// lossless packet; the lossy incast drops only at egress (the queue limit), the
// lossless one sends PFC frames; each delivered packet crossed at least its two host
// links.
func TestRunDemo(t *testing.T) {
	run, _ := runTrace(t, "testdata/pcaps/demo.pcap", nil)
	s := run.Simulation
	if s.Injected != 22151 || run.Records[records.FlowsFile] != 632 {
		t.Errorf("injected %d packets in %d flows, want the trace's 22151 in 632", s.Injected, run.Records[records.FlowsFile])
	}
	if s.Injected != s.Delivered+s.DroppedTotal()+s.UndrainedTotal() {
		t.Errorf("injected %d != delivered %d + dropped %d + undrained %d", s.Injected, s.Delivered, s.DroppedTotal(), s.UndrainedTotal())
	}
	if s.LosslessDrops != 0 || s.DroppedTotal() == 0 || s.DroppedTotal() != s.Dropped[records.ReasonEgressLimit] {
		t.Errorf("drops %v, lossless %d: want egress-limit drops only", s.Dropped, s.LosslessDrops)
	}
	if s.PFCFrames == 0 || s.PacketHops < 2*s.Delivered {
		t.Errorf("PFC frames %d, packet-hops %d for %d deliveries", s.PFCFrames, s.PacketHops, s.Delivered)
	}
}
