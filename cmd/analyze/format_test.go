package main

import (
	"testing"

	"github.com/tracefabric/tracefabric/analysis"
)

func TestFormat(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{fmtTimePs(1_000_119_321_000), "1,000.119321 ms"},
		{fmtTimePs(1_000_119_320_600), "1,000.119321 ms"}, // rounded to the ns
		{protoName(6), "TCP"}, {protoName(47), "47"},
		{fmtTimePs(2_995_004_076_123), "2,995.004076 ms"},
		{fmtTimePs(260_000_000), "0.260000 ms"},
		{fmtTimePs(-1_500_000_000), "-1.500000 ms"},
		{fmtCount(3560), "3,560"},
		{fmtCount(-1234567), "-1,234,567"},
		{fmtCount(999), "999"},
	} {
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
