package ingest

import (
	"reflect"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

// TestSummarizeFamilies: a capture of both families, summarized whole and with
// Options.Family (--family) keeping one; the expectations are counted by hand from
// the records below.
func TestSummarizeFamilies(t *testing.T) {
	v4 := func(src, dst string, tos uint8) []byte {
		return ether(t, ipSpec{src: src, dst: dst, proto: layers.IPProtocolUDP, sport: 1000, dport: 4791, tos: tos, payload: 72}) // L 100
	}
	v6 := func(src, dst string, tc uint8, exts ...v6Ext) []byte {
		return etherFrame(t, nil, layers.EthernetTypeIPv6, ipv6Packet(v6Spec{src: src, dst: dst, tc: tc, exts: exts, proto: 6, sport: 443, dport: 50000, payload: 140})) // L 200 + exts
	}
	path := writeTemp(t, "mixed.pcap", pcapFile(t, LinkEthernet, false, 65535,
		rec{ts: at(0), frame: v4("10.0.0.1", "10.0.0.2", 26<<2|2)},
		rec{ts: at(1), frame: v6("2001:db8::1", "2001:db8::2", 46<<2|1)},
		rec{ts: at(2), frame: v6("2001:db8::1", "2001:db8::2", 46<<2|3, v6Ext{typ: 60})}, // same flow, L 208
		rec{ts: at(3), frame: v6("2001:db8::2", "2001:db8::1", 0)},
		rec{ts: at(4), frame: etherFrame(t, nil, layers.EthernetTypeARP, make([]byte, 28))},
		rec{ts: at(5), frame: v4("10.0.0.2", "10.0.0.1", 0)},
		rec{ts: at(6), frame: etherFrame(t, nil, layers.EthernetTypeIPv6, make([]byte, 40))}, // version 0: bad-ipv6-header
	))
	check := func(name string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	ecn := func(n0, n1, n2, n3 int64) map[string]int64 {
		return map[string]int64{"0": n0, "1": n1, "2": n2, "3": n3}
	}

	s, err := Summarize([]string{path}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	check("packets", s.Packets, int64(7))
	check("ipv4", s.IPv4Packets, int64(2))
	check("ipv6", s.IPv6Packets, int64(3))
	check("non-ip", s.NonIPPackets, int64(2))
	check("skipped", []int64{s.Skipped["arp"], s.Skipped["bad-ipv6-header"], s.Skipped["family-filtered"]}, []int64{1, 1, 0})
	check("flows", s.Flows, int64(4))
	check("endpoints", s.Endpoints, int64(4))
	check("bytes", s.Bytes, int64(100+200+208+200+100))
	check("dscp", s.DSCP, map[string]int64{"0": 2, "26": 1, "46": 2})
	check("ecn", s.ECN, ecn(2, 1, 1, 1))
	check("by_family.ipv4", s.ByFamily.IPv4, FamilySummary{Packets: 2, Flows: 2, DSCP: map[string]int64{"0": 1, "26": 1}, ECN: ecn(1, 0, 1, 0)})
	check("by_family.ipv6", s.ByFamily.IPv6, FamilySummary{Packets: 3, Flows: 2, DSCP: map[string]int64{"0": 1, "46": 2}, ECN: ecn(1, 1, 0, 1)})
	check("unicast", s.Unicast, int64(5))

	for _, c := range []struct {
		fam                  ipaddr.Family
		ipv4, ipv6, filtered int64
		flows                int64
		first                string
		endpoints            []string
	}{
		{ipaddr.IPv4, 2, 0, 3, 2, FormatTime(at(0).UnixNano()), []string{"10.0.0.1", "10.0.0.2"}},
		{ipaddr.IPv6, 0, 3, 2, 2, FormatTime(at(1).UnixNano()), []string{"2001:db8::1", "2001:db8::2"}},
	} {
		t.Run(c.fam.String(), func(t *testing.T) {
			f, err := Summarize([]string{path}, Options{Family: c.fam})
			if err != nil {
				t.Fatal(err)
			}
			check("packets", f.Packets, int64(7))
			check("ipv4/ipv6/family-filtered", []int64{f.IPv4Packets, f.IPv6Packets, f.Skipped["family-filtered"]}, []int64{c.ipv4, c.ipv6, c.filtered})
			check("non-ip", f.NonIPPackets, int64(2))
			check("flows", f.Flows, c.flows)
			check("by_family of the family kept", *f.ByFamily.Of(c.fam), *s.ByFamily.Of(c.fam))
			check("first", f.FirstTS, c.first)
			var eps []string
			for _, a := range f.EndpointAddrs {
				eps = append(eps, a.String())
			}
			if len(eps) == 2 && eps[0] > eps[1] {
				eps[0], eps[1] = eps[1], eps[0]
			}
			check("endpoints", eps, c.endpoints)
			if f.Packets != f.IPv4Packets+f.IPv6Packets+f.NonIPPackets+f.Skipped["family-filtered"] {
				t.Errorf("packets %d != ipv4 + ipv6 + non-ip + family-filtered", f.Packets)
			}
		})
	}
}
