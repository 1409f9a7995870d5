package ingest

import (
	"encoding/binary"
	"testing"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

// TestDecodeIPv6 covers the IPv6 rules of docs/model.md#ipv6 case by case: the
// Traffic Class, L = 40 + Payload Length, every extension header of the walk
// (Hop-by-Hop 0, Routing 43, Fragment 44, Destination Options 60, Authentication 51),
// the headers that end it (ESP 50, No Next Header 59, unknown), chains cut by the
// snaplen or by the Payload Length, and the skip reasons. Frames are built byte by
// byte (ipv6Packet); the expectations are the fields the case wrote.
func TestDecodeIPv6(t *testing.T) {
	src, dst := ipaddr.MustParse("2001:db8::1"), ipaddr.MustParse("2001:db8:1::2")
	type want struct {
		reason       Reason
		proto        uint8
		sport, dport uint16
		dscp, ecn    uint8
		totalLen     uint32
		headerLen    uint32
		frag         bool
		fragOff      uint16
		doff, flags  uint8 // TCP
		udp0         bool  // HasUDPPayload0
	}
	type tc struct {
		name string
		spec v6Spec
		cut  int // captured bytes of the IPv6 packet (0: all)
		want want
	}
	tcp := func(exts ...v6Ext) v6Spec {
		return v6Spec{tc: 26<<2 | 2, exts: exts, proto: 6, sport: 4000, dport: 80, payload: 100, tcpFlags: 0x10}
	}
	udp := func(exts ...v6Ext) v6Spec {
		return v6Spec{tc: 46<<2 | 3, exts: exts, proto: 17, sport: 50000, dport: 4791, payload: 1000}
	}
	tcpW := func(ext uint32) want {
		return want{proto: 6, sport: 4000, dport: 80, dscp: 26, ecn: 2, totalLen: 40 + ext + 20 + 100, headerLen: 40 + ext, doff: 5, flags: 0x10}
	}
	udpW := func(ext uint32) want {
		return want{proto: 17, sport: 50000, dport: 4791, dscp: 46, ecn: 3, totalLen: 40 + ext + 8 + 1000, headerLen: 40 + ext, udp0: true}
	}
	with := func(w want, f func(*want)) want { f(&w); return w }
	noPorts := func(w want) want { w.sport, w.dport, w.doff, w.flags, w.udp0 = 0, 0, 0, 0, false; return w }
	cases := []tc{
		{"tcp", tcp(), 0, tcpW(0)},
		{"udp", udp(), 0, udpW(0)},
		{"traffic class spans two bytes, flow label ignored", v6Spec{tc: 0xB9, flow: 0xFFFFF, proto: 17, sport: 1, dport: 2},
			0, want{proto: 17, sport: 1, dport: 2, dscp: 46, ecn: 1, totalLen: 48, headerLen: 40}},
		{"icmpv6 has no ports", v6Spec{proto: 58, payload: 56}, 0, want{proto: 58, totalLen: 40 + 8 + 56, headerLen: 40}},
		{"hop-by-hop", tcp(v6Ext{typ: 0}), 0, tcpW(8)},
		{"hop-by-hop of 24 bytes", udp(v6Ext{typ: 0, n: 24}), 0, udpW(24)},
		{"routing", tcp(v6Ext{typ: 43, n: 24}), 0, tcpW(24)},
		{"destination options", udp(v6Ext{typ: 60, n: 16}), 0, udpW(16)},
		{"authentication", tcp(v6Ext{typ: 51, n: 24}), 0, tcpW(24)},
		{"hop-by-hop, routing, destination options, authentication", udp(v6Ext{typ: 0}, v6Ext{typ: 43, n: 24}, v6Ext{typ: 60}, v6Ext{typ: 51}), 0, udpW(8 + 24 + 8 + 12)},
		{"first fragment keeps ports", udp(v6Ext{typ: 44, more: true}), 0, with(udpW(8), func(w *want) { w.frag = true })},
		{"atomic fragment (offset 0, M 0) is not a fragment", tcp(v6Ext{typ: 44}), 0, tcpW(8)},
		{"middle fragment has no ports", udp(v6Ext{typ: 44, off: 1448, more: true}), 0,
			with(noPorts(udpW(8)), func(w *want) { w.frag, w.fragOff = true, 1448 })},
		{"last fragment has no ports", tcp(v6Ext{typ: 0}, v6Ext{typ: 44, off: 2896}), 0,
			with(noPorts(tcpW(16)), func(w *want) { w.frag, w.fragOff = true, 2896 })},
		{"a non-first fragment ends the walk at the fragment header", tcp(v6Ext{typ: 44, off: 8}, v6Ext{typ: 60}), 0,
			with(noPorts(tcpW(16)), func(w *want) { w.proto, w.headerLen, w.frag, w.fragOff = 60, 48, true, 8 })},
		{"ESP ends the walk", v6Spec{exts: []v6Ext{{typ: 0}}, proto: 50, payload: 40}, 0, want{proto: 50, totalLen: 40 + 8 + 8 + 40, headerLen: 48}},
		{"no next header ends the walk", v6Spec{proto: 59}, 0, want{proto: 59, totalLen: 48, headerLen: 40}},
		{"an unknown header ends the walk", v6Spec{exts: []v6Ext{{typ: 60}, {typ: 253, n: 16}}, proto: 6, sport: 1, dport: 2}, 0,
			want{proto: 253, totalLen: 40 + 8 + 16 + 20, headerLen: 48}},
		{"mobility header ends the walk", v6Spec{exts: []v6Ext{{typ: 135}}, proto: 17, sport: 1, dport: 2}, 0,
			want{proto: 135, totalLen: 40 + 8 + 8, headerLen: 40}},
		{"IPv4 in IPv6 is IPv6 (outer header only)", v6Spec{proto: 4, payload: 12}, 0, want{proto: 4, totalLen: 40 + 8 + 12, headerLen: 40}},
		{"IPv6 in IPv6 is the outer header", v6Spec{proto: 41, payload: 32}, 0, want{proto: 41, totalLen: 40 + 8 + 32, headerLen: 40}},

		{"snaplen keeps the ports (4 bytes of TCP)", tcp(v6Ext{typ: 0}), 40 + 8 + 4, with(tcpW(8), func(w *want) { w.doff, w.flags = 0, 0 })},
		{"snaplen cuts the ports", tcp(v6Ext{typ: 0}), 40 + 8 + 3, noPorts(tcpW(8))},
		{"snaplen cuts an extension header: ports 0, its type the protocol", udp(v6Ext{typ: 0}, v6Ext{typ: 43, n: 24}), 40 + 8 + 20,
			with(noPorts(udpW(32)), func(w *want) { w.proto, w.headerLen = 43, 48 })},
		{"snaplen leaves 1 byte of an extension header", tcp(v6Ext{typ: 60}), 40 + 1,
			with(noPorts(tcpW(8)), func(w *want) { w.proto, w.headerLen = 60, 40 })},
		{"snaplen at the fixed header's end", udp(v6Ext{typ: 44, more: true}), 40,
			with(noPorts(udpW(8)), func(w *want) { w.proto, w.headerLen = 44, 40 })},
		{"snaplen cuts the fragment header", udp(v6Ext{typ: 44, off: 8}), 40 + 7,
			with(noPorts(udpW(8)), func(w *want) { w.proto, w.headerLen = 44, 40 })},
		{"an extension header longer than the payload length ends the walk", v6Spec{exts: []v6Ext{{typ: 0, n: 64}}, proto: 6, plen: 16}, 0,
			want{proto: 0, totalLen: 56, headerLen: 40}},
		{"padding after the payload length is not payload", v6Spec{proto: 17, sport: 7, dport: 9, payload: 30, plen: 4}, 0,
			want{proto: 17, sport: 7, dport: 9, totalLen: 44, headerLen: 40}},
		{"payload length cuts the ports", v6Spec{proto: 6, sport: 7, dport: 9, plen: 3}, 0, want{proto: 6, totalLen: 43, headerLen: 40}},

		{"fixed header cut by the snaplen", udp(), 39, want{reason: SkipTruncatedIPv6}},
		{"no IPv6 bytes", udp(), -1, want{reason: SkipTruncatedIPv6}},
		{"payload length 0 (jumbogram)", v6Spec{exts: []v6Ext{{typ: 0}}, proto: 6, plen: -1}, 0, want{reason: SkipBadIPv6}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pkt := ipv6Packet(c.spec)
			if c.spec.plen < 0 {
				binary.BigEndian.PutUint16(pkt[4:6], 0)
			}
			switch {
			case c.cut > 0:
				pkt = pkt[:c.cut]
			case c.cut < 0:
				pkt = pkt[:0]
			}
			frame := ether6(pkt) // unpadded: the snaplen cases cut the packet itself
			var p Packet
			p.SrcPort, p.DstPort, p.Fragment, p.FragOffset = 99, 99, true, 99 // must be reset
			r := Decode(LinkEthernet, frame, uint32(len(frame)), &p)
			if r != c.want.reason {
				t.Fatalf("reason = %v, want %v", r, c.want.reason)
			}
			if r != OK {
				return
			}
			w := c.want
			if p.Src != src || p.Dst != dst || p.Family() != ipaddr.IPv6 {
				t.Errorf("addresses %v > %v (%v), want %v > %v (ipv6)", p.Src, p.Dst, p.Family(), src, dst)
			}
			if p.Proto != w.proto || p.SrcPort != w.sport || p.DstPort != w.dport {
				t.Errorf("proto %d ports %d > %d, want %d, %d > %d", p.Proto, p.SrcPort, p.DstPort, w.proto, w.sport, w.dport)
			}
			if p.DSCP != w.dscp || p.ECN != w.ecn {
				t.Errorf("dscp/ecn = %d/%d, want %d/%d", p.DSCP, p.ECN, w.dscp, w.ecn)
			}
			if p.TotalLen != w.totalLen || p.HeaderLen != w.headerLen {
				t.Errorf("L = %d, header length %d; want %d, %d", p.TotalLen, p.HeaderLen, w.totalLen, w.headerLen)
			}
			if p.Fragment != w.frag || p.FragOffset != w.fragOff {
				t.Errorf("fragment = %v/%d, want %v/%d", p.Fragment, p.FragOffset, w.frag, w.fragOff)
			}
			if p.TCPDataOffset != w.doff || p.TCPFlags != w.flags || p.HasUDPPayload0 != w.udp0 {
				t.Errorf("tcp data offset %d flags %#x, udp payload byte %v; want %d, %#x, %v", p.TCPDataOffset, p.TCPFlags, p.HasUDPPayload0, w.doff, w.flags, w.udp0)
			}
			if p.CapLen != uint32(len(frame)) {
				t.Errorf("caplen = %d, want %d", p.CapLen, len(frame))
			}
		})
	}
}

// TestTCPPayloadIPv6: the TCP payload of an IPv6 packet is its Payload Length less
// the extension headers and the TCP header (docs/model.md#ipv6).
func TestTCPPayloadIPv6(t *testing.T) {
	cases := []struct {
		name  string
		spec  v6Spec
		cut   int
		n     int
		known bool
	}{
		{"no extension header", v6Spec{proto: 6, payload: 1000, tcpFlags: 0x18}, 0, 1000, true},
		{"pure ACK", v6Spec{proto: 6, tcpFlags: 0x10}, 0, 0, true},
		{"hop-by-hop and destination options", v6Spec{exts: []v6Ext{{typ: 0}, {typ: 60, n: 16}}, proto: 6, payload: 1000, tcpFlags: 0x18}, 0, 1000, true},
		{"TCP options (data offset 8)", v6Spec{proto: 6, doff: 8, payload: 500, tcpFlags: 0x18}, 0, 500, true},
		{"TCP header cut: a 20-byte header assumed", v6Spec{exts: []v6Ext{{typ: 60}}, proto: 6, doff: 8, payload: 500}, 40 + 8 + 10, 512, false},
		{"first fragment", v6Spec{exts: []v6Ext{{typ: 44, more: true}}, proto: 6, payload: 1200, tcpFlags: 0x18}, 0, 1200, true},
		{"non-first fragment: not TCP data", v6Spec{exts: []v6Ext{{typ: 44, off: 1280}}, proto: 6, payload: 1200}, 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pkt := ipv6Packet(c.spec)
			if c.cut > 0 {
				pkt = pkt[:c.cut]
			}
			var p Packet
			if r := Decode(LinkIPv6, pkt, 0, &p); r != OK {
				t.Fatalf("reason %v", r)
			}
			if n, known := p.TCPPayload(); n != c.n || known != c.known {
				t.Errorf("TCPPayload = %d, %v; want %d, %v", n, known, c.n, c.known)
			}
		})
	}
}

// ether6 puts an IPv6 packet in an Ethernet frame as captured: no padding to the
// 60-byte minimum (a capture cut by the snaplen has none after its last byte).
func ether6(pkt []byte) []byte {
	return append([]byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xDD}, pkt...)
}
