package ingest

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/google/gopacket/layers"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// exampleTrace builds testdata/example.pcap, the capture the Example functions
// read: RoCEv2 with ECT(0) and CE, a tagged TCP packet, ARP, an ICMP packet with
// DSCP 46, a non-first UDP fragment, an IPv6 RoCEv2 packet behind a Hop-by-Hop
// header; one timestamp is 1 us early (reordered);
// a snaplen of 96 keeps headers only while total lengths carry the real sizes.
func exampleTrace(t testing.TB) []byte {
	roce := func(src string, sport uint16, ecn uint8, payload int) []byte {
		return ether(t, ipSpec{src: src, dst: "10.2.0.1", proto: layers.IPProtocolUDP, sport: sport, dport: 4791, tos: 26<<2 | ecn, payload: payload})
	}
	return pcapFile(t, LinkEthernet, false, 96,
		rec{ts: at(0), frame: roce("10.1.0.1", 49152, 2, 1024), caplen: 96},
		rec{ts: at(3), frame: ether(t, ipSpec{src: "10.3.0.7", dst: "10.2.0.9", sport: 33000, dport: 80, tos: 2, payload: 1460,
			tags: []layers.EthernetType{layers.EthernetTypeDot1Q}}), caplen: 96},
		rec{ts: at(2), frame: roce("10.1.0.2", 50000, 3, 4096), caplen: 96},
		rec{ts: at(5), frame: etherFrame(t, nil, layers.EthernetTypeARP, make([]byte, 28))},
		rec{ts: at(10), frame: ether(t, ipSpec{src: "10.3.0.7", dst: "10.2.0.9", proto: layers.IPProtocolICMPv4, tos: 46 << 2, payload: 56})},
		rec{ts: at(11), frame: ether(t, ipSpec{src: "10.1.0.1", dst: "10.2.0.1", proto: layers.IPProtocolUDP, fragOff: 185, payload: 1480}), caplen: 96},
		rec{ts: at(12), frame: etherFrame(t, nil, layers.EthernetTypeIPv6, ipv6Packet(v6Spec{src: "fd00:1::1", dst: "fd00:2::1",
			tc: 26<<2 | 2, exts: []v6Ext{{typ: 0}}, proto: 17, sport: 49153, dport: 4791, payload: 1024})), caplen: 96},
	)
}

// TestExampleTraceGolden keeps testdata/example.pcap equal to what exampleTrace
// builds (go test -run ExampleTraceGolden -update rewrites it).
func TestExampleTraceGolden(t *testing.T) {
	want := exampleTrace(t)
	const path = "testdata/example.pcap"
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from exampleTrace; run go test -run ExampleTraceGolden -update", path)
	}
}
