package config

import "testing"

// BenchmarkParseDefault: decoding, validating and warning on the printed defaults
// (not a hot path; kept to notice regressions such as per-port work blowing up).
func BenchmarkParseDefault(b *testing.B) {
	c := Default()
	data, err := c.YAML()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse(data, "default.yaml", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateLargeTopology: validation of switches with MaxPorts-scale port
// counts (auto headroom per port).
func BenchmarkValidateLargeTopology(b *testing.B) {
	c := Default()
	c.Topology.HostsPerRack = 512
	c.Topology.RacksPerPod = 64
	c.Switch.BufferSize = 1 << 30
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}
