package replay

import (
	"path/filepath"
	"testing"
)

// BenchmarkReplayDemo replays testdata/pcaps/demo.pcap end to end (records included)
// and reports packets/s and packet-hops/s.
func BenchmarkReplayDemo(b *testing.B) {
	pr, err := Prepare(Options{Traces: []string{repoPath(b, "testdata/pcaps/demo.pcap")}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var hops, pkts int64
	for i := 0; i < b.N; i++ {
		run, err := pr.Run(filepath.Join(b.TempDir(), "run"), "")
		if err != nil {
			b.Fatal(err)
		}
		hops += run.Simulation.PacketHops
		pkts += run.Simulation.Injected
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(pkts)/s, "packets/s")
	b.ReportMetric(float64(hops)/s, "hops/s")
}
