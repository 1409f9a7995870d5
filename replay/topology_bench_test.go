package replay

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
)

// rail16K is a rail-optimized fabric of 16,384 hosts: 2,048 servers x 8 rails in
// groups of 32 servers (512 rail leaves of 32 hosts), 32 spines.
const rail16K = `Generator: rail-optimized
Servers: 2048
Rails: 8
ServersPerGroup: 32
Spines: 32
HostLink: {Speed: 400Gbps, PropagationDelay: 500ns}
SpineLink: {Speed: 400Gbps, PropagationDelay: 1us}
`

// BenchmarkTopology16K builds, routes and validates (profiles, buffer layout of
// every switch, longest path) the 16,384-host fabric; reports the routing tables'
// size and the heap the topology holds.
func BenchmarkTopology16K(b *testing.B) {
	file := filepath.Join(b.TempDir(), "rail.yaml")
	if err := os.WriteFile(file, []byte(rail16K), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, _, err := config.Parse([]byte("Switch: {BufferSize: 64MiB}\nSwitches:\n  spine: {BufferSize: 1GiB}\n"), "", []string{"Topology.File=" + file})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var topo *Topology
	var before, after runtime.MemStats
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		topo = nil
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		var err error
		if topo, err = NewTopology(cfg); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.StartTimer()
	}
	if topo.Hosts != 16384 {
		b.Fatalf("%d hosts", topo.Hosts)
	}
	b.ReportMetric(float64(topo.Routes.Bytes())/1e6, "route-MB")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "held-MB")
}
