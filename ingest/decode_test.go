package ingest

import (
	"encoding/binary"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

func TestDecode(t *testing.T) {
	tcp := ipSpec{src: "10.1.2.3", dst: "10.4.5.6", tos: 26<<2 | 2, sport: 4000, dport: 80, payload: 100}
	udp := ipSpec{src: "192.168.7.1", dst: "192.168.9.2", tos: 46<<2 | 3, proto: layers.IPProtocolUDP, sport: 50000, dport: 4791, payload: 1000}
	ip := func(s ipSpec) []byte { return ipv4Bytes(t, s) }
	withTags := func(s ipSpec, tags ...layers.EthernetType) ipSpec { s.tags = tags; return s }
	v6 := ipv6Packet(v6Spec{proto: 59}) // an IPv6 header with No Next Header
	arp := make([]byte, 28)
	cut := func(b []byte, n int) []byte { return b[:n] }
	patch := func(b []byte, off int, v ...byte) []byte {
		b = append([]byte(nil), b...)
		copy(b[off:], v)
		return b
	}

	type want struct {
		reason           Reason
		src, dst         [4]byte
		sport, dport     uint16
		proto, dscp, ecn uint8
		totalLen         uint32
		frag             bool
		fragOff          uint16
		src6, dst6       ipaddr.Addr // an IPv6 packet's addresses (src and dst unused)
	}
	tcpWant := want{src: [4]byte{10, 1, 2, 3}, dst: [4]byte{10, 4, 5, 6}, sport: 4000, dport: 80, proto: 6, dscp: 26, ecn: 2, totalLen: 20 + 20 + 100}
	udpWant := want{src: [4]byte{192, 168, 7, 1}, dst: [4]byte{192, 168, 9, 2}, sport: 50000, dport: 4791, proto: 17, dscp: 46, ecn: 3, totalLen: 20 + 8 + 1000}
	v6Want := want{src6: ipaddr.MustParse("2001:db8::1"), dst6: ipaddr.MustParse("2001:db8:1::2"), proto: 59, totalLen: 40 + 8}
	noPorts := func(w want) want { w.sport, w.dport = 0, 0; return w }
	skip := func(r Reason) want { return want{reason: r} }

	cases := []struct {
		name  string
		link  LinkType
		frame []byte
		wire  uint32
		want  want
	}{
		{"ethernet/tcp", LinkEthernet, ether(t, tcp), 0, tcpWant},
		{"ethernet/udp", LinkEthernet, ether(t, udp), 0, udpWant},
		{"ethernet/icmp has no ports", LinkEthernet, ether(t, ipSpec{src: "10.1.2.3", dst: "10.4.5.6", proto: layers.IPProtocolICMPv4}),
			0, want{src: [4]byte{10, 1, 2, 3}, dst: [4]byte{10, 4, 5, 6}, proto: 1, totalLen: 28}},
		{"ethernet/ip options shift ports", LinkEthernet, ether(t, ipSpec{src: "10.1.2.3", dst: "10.4.5.6", tos: 26<<2 | 2, sport: 4000, dport: 80, payload: 100, options: true}),
			0, func() want { w := tcpWant; w.totalLen += 4; return w }()},
		{"802.1Q", LinkEthernet, ether(t, withTags(tcp, layers.EthernetTypeDot1Q)), 0, tcpWant},
		{"QinQ 802.1ad+802.1Q", LinkEthernet, ether(t, withTags(udp, layers.EthernetTypeQinQ, layers.EthernetTypeDot1Q)), 0, udpWant},
		{"QinQ 802.1Q+802.1Q", LinkEthernet, ether(t, withTags(udp, layers.EthernetTypeDot1Q, layers.EthernetTypeDot1Q)), 0, udpWant},
		{"three tags", LinkEthernet, ether(t, withTags(tcp, layers.EthernetTypeQinQ, layers.EthernetTypeDot1Q, layers.EthernetTypeDot1Q)), 0, tcpWant},
		{"tag cut off", LinkEthernet, cut(ether(t, withTags(tcp, layers.EthernetTypeDot1Q, layers.EthernetTypeDot1Q)), 16), 0, skip(SkipOtherEtherType)},
		{"ethernet header cut", LinkEthernet, make([]byte, 13), 0, skip(SkipOtherEtherType)},
		{"tagged ARP", LinkEthernet, etherFrame(t, []layers.EthernetType{layers.EthernetTypeDot1Q}, layers.EthernetTypeARP, arp), 0, skip(SkipARP)},
		{"ARP", LinkEthernet, etherFrame(t, nil, layers.EthernetTypeARP, arp), 0, skip(SkipARP)},
		{"IPv6", LinkEthernet, etherFrame(t, nil, layers.EthernetTypeIPv6, v6), 0, v6Want},
		{"tagged IPv6", LinkEthernet, etherFrame(t, []layers.EthernetType{layers.EthernetTypeQinQ, layers.EthernetTypeDot1Q}, layers.EthernetTypeIPv6, v6), 0, v6Want},
		{"LLDP", LinkEthernet, etherFrame(t, nil, layers.EthernetTypeLinkLayerDiscovery, make([]byte, 40)), 0, skip(SkipOtherEtherType)},
		{"MPLS carrying IPv4", LinkEthernet, etherFrame(t, nil, layers.EthernetTypeMPLSUnicast, append([]byte{0, 0, 1, 64}, ip(tcp)...)), 0, skip(SkipOtherEtherType)},
		{"802.3 length field (LLC)", LinkEthernet, etherFrame(t, nil, layers.EthernetType(46), make([]byte, 46)), 0, skip(SkipOtherEtherType)},

		{"raw 101 IPv4", LinkRaw, ip(udp), 0, udpWant},
		{"raw 101 IPv6", LinkRaw, v6, 0, v6Want},
		{"raw 101 empty", LinkRaw, nil, 0, skip(SkipTruncatedIPv4)},
		{"raw 228 IPv4", LinkIPv4, ip(tcp), 0, tcpWant},
		{"raw 228 IPv6 version", LinkIPv4, v6, 0, skip(SkipBadIPv4)},
		{"raw 229 IPv6", LinkIPv6, v6, 0, v6Want},
		{"raw 229 IPv4 version", LinkIPv6, ip(tcp), 0, skip(SkipBadIPv6)},

		{"SLL IPv4", LinkLinuxSLL, sll(0x0800, ip(tcp)), 0, tcpWant},
		{"SLL ARP", LinkLinuxSLL, sll(0x0806, arp), 0, skip(SkipARP)},
		{"SLL IPv6", LinkLinuxSLL, sll(0x86DD, v6), 0, v6Want},
		{"SLL2 IPv6", LinkLinuxSLL2, sll2(0x86DD, v6), 0, v6Want},
		{"SLL 802.2 LLC", LinkLinuxSLL, sll(0x0004, make([]byte, 20)), 0, skip(SkipOtherEtherType)},
		{"SLL with VLAN tag", LinkLinuxSLL, sll(0x8100, append([]byte{0, 5, 8, 0}, ip(udp)...)), 0, udpWant},
		{"SLL header cut", LinkLinuxSLL, make([]byte, 15), 0, skip(SkipOtherEtherType)},
		{"SLL2 IPv4", LinkLinuxSLL2, sll2(0x0800, ip(udp)), 0, udpWant},
		{"SLL2 ARP", LinkLinuxSLL2, sll2(0x0806, arp), 0, skip(SkipARP)},
		{"SLL2 header cut", LinkLinuxSLL2, make([]byte, 19), 0, skip(SkipOtherEtherType)},

		{"NULL little-endian AF_INET", LinkNull, loopback(binary.LittleEndian, 2, ip(tcp)), 0, tcpWant},
		{"NULL big-endian AF_INET", LinkNull, loopback(binary.BigEndian, 2, ip(tcp)), 0, tcpWant},
		{"NULL AF_INET6 (NetBSD/OpenBSD 24)", LinkNull, loopback(binary.LittleEndian, 24, v6), 0, v6Want},
		{"NULL AF_INET6 (FreeBSD 28)", LinkNull, loopback(binary.LittleEndian, 28, v6), 0, v6Want},
		{"NULL AF_INET6 (Darwin 30)", LinkNull, loopback(binary.LittleEndian, 30, v6), 0, v6Want},
		{"NULL AF_INET6 big-endian (Darwin 30)", LinkNull, loopback(binary.BigEndian, 30, v6), 0, v6Want},
		{"NULL unknown family", LinkNull, loopback(binary.LittleEndian, 17, v6), 0, skip(SkipOtherEtherType)},
		{"LOOP AF_INET", LinkLoop, loopback(binary.BigEndian, 2, ip(udp)), 0, udpWant},
		{"LOOP AF_INET6", LinkLoop, loopback(binary.BigEndian, 28, v6), 0, v6Want},
		{"LOOP AF_INET6 (24)", LinkLoop, loopback(binary.BigEndian, 24, v6), 0, v6Want},
		{"LOOP cut", LinkLoop, []byte{0, 0}, 0, skip(SkipOtherEtherType)},

		{"unsupported link type (802.11)", LinkType(105), ip(tcp), 0, skip(SkipUnsupportedLink)},

		{"first fragment keeps ports", LinkEthernet, ether(t, ipSpec{src: "10.1.2.3", dst: "10.4.5.6", tos: 46<<2 | 3, proto: layers.IPProtocolUDP, sport: 50000, dport: 4791, payload: 1000, flags: layers.IPv4MoreFragments}),
			0, func() want {
				w := udpWant
				w.src, w.dst, w.frag = [4]byte{10, 1, 2, 3}, [4]byte{10, 4, 5, 6}, true
				return w
			}()},
		{"middle fragment has no ports", LinkEthernet, ether(t, ipSpec{src: "10.1.2.3", dst: "10.4.5.6", proto: layers.IPProtocolUDP, sport: 50000, dport: 4791, payload: 200, flags: layers.IPv4MoreFragments, fragOff: 185}),
			0, want{src: [4]byte{10, 1, 2, 3}, dst: [4]byte{10, 4, 5, 6}, proto: 17, totalLen: 228, frag: true, fragOff: 1480}},
		{"last fragment has no ports", LinkEthernet, ether(t, ipSpec{src: "10.1.2.3", dst: "10.4.5.6", proto: layers.IPProtocolTCP, sport: 1, dport: 2, payload: 10, fragOff: 370}),
			0, want{src: [4]byte{10, 1, 2, 3}, dst: [4]byte{10, 4, 5, 6}, proto: 6, totalLen: 50, frag: true, fragOff: 2960}},
		{"DF is not a fragment", LinkEthernet, ether(t, ipSpec{src: "10.1.2.3", dst: "10.4.5.6", tos: 26<<2 | 2, sport: 4000, dport: 80, payload: 100, flags: layers.IPv4DontFragment}), 0, tcpWant},

		{"snaplen keeps ports (4 L4 bytes)", LinkEthernet, cut(ether(t, tcp), 14+20+4), 0, tcpWant},
		{"snaplen cut L4 ports", LinkEthernet, cut(ether(t, tcp), 14+20+3), 0, noPorts(tcpWant)},
		{"snaplen at IPv4 header end", LinkEthernet, cut(ether(t, udp), 14+20), 0, noPorts(udpWant)},
		{"snaplen cut IPv4 options", LinkEthernet, cut(ether(t, ipSpec{src: "10.1.2.3", dst: "10.4.5.6", tos: 26<<2 | 2, sport: 4000, dport: 80, payload: 100, options: true}), 14+22),
			0, func() want { w := noPorts(tcpWant); w.totalLen += 4; return w }()},
		{"snaplen cut IPv4 header", LinkEthernet, cut(ether(t, tcp), 14+19), 0, skip(SkipTruncatedIPv4)},
		{"no IPv4 bytes", LinkEthernet, cut(ether(t, tcp), 14), 0, skip(SkipTruncatedIPv4)},
		{"version 6 under 0x0800", LinkEthernet, patch(ether(t, tcp), 14, 0x65), 0, skip(SkipBadIPv4)},
		{"IHL 4", LinkEthernet, patch(ether(t, tcp), 14, 0x44), 0, skip(SkipBadIPv4)},
		{"total length under header", LinkEthernet, patch(ether(t, tcp), 16, 0, 19), 0, skip(SkipBadIPv4)},
		{"total length 0 (TSO) takes wire length", LinkEthernet, patch(ether(t, tcp), 16, 0, 0), 9014, func() want { w := tcpWant; w.totalLen = 9000; return w }()},
		{"padding is not payload", LinkEthernet, patch(ether(t, tcp), 16, 0, 22), 0, func() want { w := noPorts(tcpWant); w.totalLen = 22; return w }()},
		{"IHL 15 beyond captured bytes", LinkEthernet, cut(patch(ether(t, tcp), 14, 0x4F), 14+40), 0, noPorts(tcpWant)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p Packet
			p.SrcPort, p.DstPort = 99, 99 // must be reset
			got := Decode(c.link, c.frame, c.wire, &p)
			if got != c.want.reason {
				t.Fatalf("reason = %v, want %v", got, c.want.reason)
			}
			if got != OK {
				return
			}
			w := c.want
			src, dst := ipaddr.From4(w.src), ipaddr.From4(w.dst)
			if w.src6.IsValid() {
				src, dst = w.src6, w.dst6
			}
			if p.Src != src || p.Dst != dst || p.SrcPort != w.sport || p.DstPort != w.dport || p.Proto != w.proto {
				t.Errorf("tuple = %v, want %v", p.Tuple(), FiveTuple{src, dst, w.sport, w.dport, w.proto})
			}
			if p.DSCP != w.dscp || p.ECN != w.ecn {
				t.Errorf("dscp/ecn = %d/%d, want %d/%d", p.DSCP, p.ECN, w.dscp, w.ecn)
			}
			if p.TotalLen != w.totalLen {
				t.Errorf("total length = %d, want %d", p.TotalLen, w.totalLen)
			}
			if p.Fragment != w.frag || p.FragOffset != w.fragOff {
				t.Errorf("fragment = %v/%d, want %v/%d", p.Fragment, p.FragOffset, w.frag, w.fragOff)
			}
			if p.CapLen != uint32(len(c.frame)) {
				t.Errorf("caplen = %d, want %d", p.CapLen, len(c.frame))
			}
		})
	}
}

func TestDecodeAllocs(t *testing.T) {
	frame := ether(t, ipSpec{tags: []layers.EthernetType{layers.EthernetTypeDot1Q}, proto: layers.IPProtocolUDP, sport: 1, dport: 4791})
	var p Packet
	if n := testing.AllocsPerRun(100, func() { Decode(LinkEthernet, frame, 0, &p) }); n != 0 {
		t.Errorf("Decode allocates %v times per call", n)
	}
	frame6 := etherFrame(t, []layers.EthernetType{layers.EthernetTypeDot1Q}, layers.EthernetTypeIPv6,
		ipv6Packet(v6Spec{exts: []v6Ext{{typ: 0, n: 8}, {typ: 44}}, proto: 17, sport: 1, dport: 4791, payload: 100}))
	if n := testing.AllocsPerRun(100, func() { Decode(LinkEthernet, frame6, 0, &p) }); n != 0 {
		t.Errorf("Decode allocates %v times per IPv6 call", n)
	}
}

func TestReasonNames(t *testing.T) {
	want := []string{"arp", "other-ethertype", "unsupported-linktype", "truncated-ipv4-header", "bad-ipv4-header",
		"truncated-ipv6-header", "bad-ipv6-header", "out-of-order", "out-of-window", "multicast", "family-filtered", "filtered"}
	if len(SkipReasons()) != len(want) {
		t.Fatalf("%d reasons, want %d", len(SkipReasons()), len(want))
	}
	for i, r := range SkipReasons() {
		if r.String() != want[i] {
			t.Errorf("reason %d = %q, want %q", i, r, want[i])
		}
	}
}
