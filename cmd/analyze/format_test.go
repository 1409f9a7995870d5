package main

import (
	"testing"

	"github.com/tracefabric/tracefabric/analysis"
)

func TestProtoName(t *testing.T) {
	for _, c := range []struct{ got, want string }{{protoName(6), "TCP"}, {protoName(17), "UDP"}, {protoName(1), "ICMP"}, {protoName(58), "ICMPv6"}, {protoName(47), "47"}} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestFamilyMix: the report's "trace families" line (Run section), from run.json's
// trace.ipv4_packets and trace.ipv6_packets; tls-browsing's mix (expected.tsv and
// tshark: 3,011 IPv4 and 4,440 IPv6 packets) as the example.
func TestFamilyMix(t *testing.T) {
	for _, c := range []struct {
		v4, v6 int64
		want   string
	}{
		{3011, 4440, "IPv4 3,011 (40.4%), IPv6 4,440 (59.6%)"},
		{22151, 0, "IPv4 22,151 (100%), IPv6 0 (0%)"},
		{0, 0, "-"},
	} {
		if got := familyMix(analysis.RunInfo{TraceIPv4: c.v4, TraceIPv6: c.v6}); got != c.want {
			t.Errorf("familyMix(%d, %d) = %q, want %q", c.v4, c.v6, got, c.want)
		}
	}
}
