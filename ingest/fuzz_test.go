package ingest

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// maxSeed bounds the size of a capture file used as a fuzz seed.
const maxSeed = 64 << 10

// seedFiles returns small capture files: generated ones, the project's
// testdata/pcaps and the real captures in ../shared/pcaps (when present).
func seedFiles(t testing.TB) [][]byte {
	frame := ether(t, ipSpec{src: "10.0.0.1", dst: "10.0.0.2", sport: 1, dport: 4791, proto: layers.IPProtocolUDP, tos: 26<<2 | 2, payload: 8})
	tagged := ether(t, ipSpec{tags: []layers.EthernetType{layers.EthernetTypeQinQ, layers.EthernetTypeDot1Q}, flags: layers.IPv4MoreFragments})
	frame6 := etherFrame(t, nil, layers.EthernetTypeIPv6, ipv6Packet(v6Spec{tc: 26<<2 | 2, exts: []v6Ext{{typ: 0}}, proto: 17, sport: 1, dport: 4791, payload: 8}))
	pc := pcapFile(t, LinkEthernet, false, 65535, rec{ts: at(1), frame: frame}, rec{ts: at(3), frame: tagged, caplen: 40}, rec{ts: at(2), frame: frame},
		rec{ts: at(4), frame: frame6}, rec{ts: at(5), frame: frame6, caplen: 50})
	b := &ngb{}
	b.shb().idb(LinkEthernet, 0, 9).idb(LinkLinuxSLL, 128, 6)
	b.epb(0, 5, frame, 0).epb(1, 3, sll(0x0800, frame[14:]), 0).block(5, make([]byte, 8)).spb(tagged, 0)
	seeds := [][]byte{pc, pcapFile(t, LinkLinuxSLL2, true, 65535, rec{ts: at(1), frame: sll2(0x0800, frame[14:])}),
		swapPcap(t, pc), b.out, gz(t, pc), gz(t, b.out)}
	for _, dir := range []string{"../testdata/pcaps", sharedPcaps} {
		for _, pat := range []string{"*.pcap", "*.pcapng", "*.gz"} {
			names, _ := filepath.Glob(filepath.Join(dir, pat))
			for _, n := range names {
				if st, err := os.Stat(n); err == nil && st.Size() <= maxSeed {
					if data, err := os.ReadFile(n); err == nil {
						seeds = append(seeds, data)
					}
				}
			}
		}
	}
	return seeds
}

// FuzzReader feeds whole files to the reader: it must not panic, must account for
// every record and must deliver packets in time order.
func FuzzReader(f *testing.F) {
	for _, s := range seedFiles(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pkts, r, _, err := readAll(t, Options{}, data)
		if r == nil || err != nil {
			return
		}
		for i := 1; i < len(pkts); i++ {
			if pkts[i].Timestamp < pkts[i-1].Timestamp {
				t.Fatalf("packet %d goes back in time", i)
			}
		}
		fs := r.Files()[0]
		if fs.Records != fs.IP()+fs.NonIP()+fs.Skipped[SkipOutOfOrder] || fs.IP() != int64(len(pkts)) {
			t.Fatalf("counts do not add up: %+v, %d packets", fs.Counts, len(pkts))
		}
		// In file order the same records are read and nothing is out of order.
		pkts2, r2, _, err := readAll(t, Options{ReorderWindow: -1}, data)
		if err != nil {
			t.Fatalf("file order: %v", err)
		}
		fs2 := r2.Files()[0]
		if fs2.Records != fs.Records || int64(len(pkts2)) != fs.IP()+fs.Skipped[SkipOutOfOrder] {
			t.Fatalf("file order read %+v, window read %+v", fs2.Counts, fs.Counts)
		}
		// Known in order: the same packets without the reorder buffer; known in order
		// but not: an error.
		pkts3, r3, _, err := readAll(t, Options{InOrder: []bool{true}}, data)
		if fs.InOrder != (err == nil) || fs2.InOrder != fs.InOrder {
			t.Fatalf("InOrder %v (file order %v), read as in order: %v", fs.InOrder, fs2.InOrder, err)
		}
		if err == nil && (!reflect.DeepEqual(pkts3, pkts) || r3.Files()[0].Counts != fs.Counts) {
			t.Fatalf("read as in order: %d packets %+v, want %d %+v", len(pkts3), r3.Files()[0].Counts, len(pkts), fs.Counts)
		}
	})
}

// FuzzDecode feeds frames to Decode: it must not panic, its fields must be
// consistent, and for Ethernet frames it must agree with gopacket's layers.
func FuzzDecode(f *testing.F) {
	ip := ipv4Bytes(f, ipSpec{src: "1.2.3.4", dst: "5.6.7.8", proto: layers.IPProtocolUDP, sport: 7, dport: 4791, tos: 26<<2 | 2, payload: 4})
	f.Add(uint16(LinkEthernet), ether(f, ipSpec{tags: []layers.EthernetType{layers.EthernetTypeDot1Q}, sport: 1, dport: 2, options: true}), uint32(0))
	f.Add(uint16(LinkEthernet), ether(f, ipSpec{proto: layers.IPProtocolUDP, fragOff: 10}), uint32(0))
	f.Add(uint16(LinkRaw), ip, uint32(0))
	f.Add(uint16(LinkIPv4), ip[:30], uint32(9000))
	f.Add(uint16(LinkLinuxSLL), sll(0x8100, append([]byte{0, 1, 8, 0}, ip...)), uint32(0))
	f.Add(uint16(LinkLinuxSLL2), sll2(0x0800, ip), uint32(0))
	f.Add(uint16(LinkNull), loopback(binary.LittleEndian, 2, ip), uint32(0))
	f.Add(uint16(LinkLoop), loopback(binary.BigEndian, 24, ip), uint32(0))
	f.Fuzz(func(t *testing.T, link uint16, frame []byte, wire uint32) {
		var p Packet
		r := Decode(LinkType(link), frame, wire, &p)
		if r >= numReasons || r == SkipOutOfOrder {
			t.Fatalf("reason %v", r)
		}
		if r != OK {
			return
		}
		if p.DSCP > 63 || p.ECN > 3 || p.CapLen != uint32(len(frame)) || p.TotalLen < 20 || p.HeaderLen < 20 || !p.Src.IsValid() || p.Src.Family() != p.Dst.Family() {
			t.Fatalf("fields out of range: %+v", p)
		}
		if (p.SrcPort != 0 || p.DstPort != 0) && (p.FragOffset != 0 || p.Proto != 6 && p.Proto != 17) {
			t.Fatalf("ports on a packet that has none: %+v", p)
		}
		if p.FragOffset != 0 && !p.Fragment {
			t.Fatalf("fragment offset without fragment flag: %+v", p)
		}
		if LinkType(link) != LinkEthernet || p.Src.Is6() {
			return // FuzzDecodeIPv6 checks IPv6 against gopacket
		}
		// Differential check against gopacket's own decoding.
		gp := gopacket.NewPacket(frame, layers.LinkTypeEthernet, gopacket.Default)
		ip4, ok := gp.NetworkLayer().(*layers.IPv4)
		if !ok || gp.ErrorLayer() != nil {
			// gopacket keeps a layer whose decoding failed (for example a TCP
			// header cut by the snaplen) with zero fields: compare only clean
			// decodes.
			return
		}
		if [4]byte(ip4.SrcIP.To4()) != p.Src.As4() || [4]byte(ip4.DstIP.To4()) != p.Dst.As4() || ip4.TOS != p.DSCP<<2|p.ECN || uint8(ip4.Protocol) != p.Proto {
			t.Fatalf("gopacket sees %v > %v tos %d proto %d; we decoded %+v", ip4.SrcIP, ip4.DstIP, ip4.TOS, ip4.Protocol, p)
		}
		if ip4.Protocol != layers.IPProtocolTCP && ip4.Protocol != layers.IPProtocolUDP {
			// gopacket follows tunnels (6in4, IP-in-IP, GRE) to an inner TCP/UDP
			// layer; the outer header has no ports by our rule.
			return
		}
		switch l4 := gp.TransportLayer().(type) {
		case *layers.TCP:
			if uint16(l4.SrcPort) != p.SrcPort || uint16(l4.DstPort) != p.DstPort {
				t.Fatalf("gopacket TCP ports %d>%d; we decoded %+v", l4.SrcPort, l4.DstPort, p)
			}
		case *layers.UDP:
			if uint16(l4.SrcPort) != p.SrcPort || uint16(l4.DstPort) != p.DstPort {
				t.Fatalf("gopacket UDP ports %d>%d; we decoded %+v", l4.SrcPort, l4.DstPort, p)
			}
		}
	})
}

// ipv6Wrappers put an IPv6 packet in each link type that carries one (FuzzDecodeIPv6
// picks one by its wrap argument).
var ipv6Wrappers = []struct {
	link LinkType
	wrap func(pkt []byte) []byte
}{
	{LinkIPv6, func(b []byte) []byte { return b }},
	{LinkEthernet, ether6},
	{LinkEthernet, func(b []byte) []byte { // 802.1Q
		return append([]byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x81, 0x00, 0, 7, 0x86, 0xDD}, b...)
	}},
	{LinkLinuxSLL, func(b []byte) []byte { return sll(0x86DD, b) }},
	{LinkLinuxSLL2, func(b []byte) []byte { return sll2(0x86DD, b) }},
	{LinkNull, func(b []byte) []byte { return loopback(binary.LittleEndian, 30, b) }},
	{LinkLoop, func(b []byte) []byte { return loopback(binary.BigEndian, 24, b) }},
}

// FuzzDecodeIPv6 feeds IPv6 packets, in every link type that carries one, to
// Decode: it must not panic; it must skip only as truncated-ipv6-header or
// bad-ipv6-header, for the reasons of docs/model.md#ipv6; a decoded packet's fields
// must agree with the bytes (addresses, Traffic Class, L = 40 + Payload Length, the
// header length within the packet, ports only for a TCP or UDP first fragment); and
// where gopacket decodes the packet cleanly down to a TCP or UDP header right after
// the extension headers, the ports must be gopacket's.
func FuzzDecodeIPv6(f *testing.F) {
	for i, s := range []v6Spec{
		{tc: 26<<2 | 2, proto: 17, sport: 49152, dport: 4791, payload: 16},
		{tc: 0xB9, flow: 0x12345, proto: 6, sport: 443, dport: 50000, payload: 10, tcpFlags: 0x18},
		{exts: []v6Ext{{typ: 0}, {typ: 43, n: 24}, {typ: 60}, {typ: 51}}, proto: 6, sport: 1, dport: 2},
		{exts: []v6Ext{{typ: 44, more: true}}, proto: 17, sport: 3, dport: 4, payload: 32},
		{exts: []v6Ext{{typ: 44, off: 1448}}, proto: 17, payload: 32},
		{exts: []v6Ext{{typ: 60}}, proto: 50, payload: 24},
		{proto: 59},
		{exts: []v6Ext{{typ: 0, n: 64}}, proto: 6, plen: 16},
		{proto: 58, payload: 8},
		{dst: "ff02::16", exts: []v6Ext{{typ: 0}}, proto: 58, payload: 20},
	} {
		f.Add(ipv6Packet(s), uint8(i))
	}
	f.Add(ipv6Packet(v6Spec{proto: 6, sport: 1, dport: 2})[:45], uint8(1))
	f.Add(ipv6Packet(v6Spec{proto: 6})[:39], uint8(2))
	f.Fuzz(func(t *testing.T, pkt []byte, wrap uint8) {
		w := ipv6Wrappers[int(wrap)%len(ipv6Wrappers)]
		frame := w.wrap(pkt)
		var p Packet
		r := Decode(w.link, frame, uint32(len(frame)), &p)
		switch {
		case len(pkt) == 0 || pkt[0]>>4 == 6 && len(pkt) < 40:
			if r != SkipTruncatedIPv6 {
				t.Fatalf("%d bytes: reason %v, want truncated-ipv6-header", len(pkt), r)
			}
			return
		case pkt[0]>>4 != 6:
			if r != SkipBadIPv6 {
				t.Fatalf("version %d: reason %v, want bad-ipv6-header", pkt[0]>>4, r)
			}
			return
		case binary.BigEndian.Uint16(pkt[4:6]) == 0:
			if r != SkipBadIPv6 {
				t.Fatalf("payload length 0: reason %v, want bad-ipv6-header", r)
			}
			return
		case r != OK:
			t.Fatalf("reason %v for a whole IPv6 header", r)
		}
		pl := int(binary.BigEndian.Uint16(pkt[4:6]))
		tc := pkt[0]<<4 | pkt[1]>>4
		end := min(len(pkt), 40+pl)
		switch {
		case p.Src.As16() != [16]byte(pkt[8:24]) || p.Dst.As16() != [16]byte(pkt[24:40]) || !p.Src.Is6() || !p.Dst.Is6():
			t.Fatalf("addresses %v > %v", p.Src, p.Dst)
		case p.DSCP != tc>>2 || p.ECN != tc&3:
			t.Fatalf("dscp %d ecn %d from traffic class %#x", p.DSCP, p.ECN, tc)
		case p.TotalLen != uint32(40+pl) || p.CapLen != uint32(len(frame)):
			t.Fatalf("L %d caplen %d, payload length %d, frame %d bytes", p.TotalLen, p.CapLen, pl, len(frame))
		case p.HeaderLen < 40 || int(p.HeaderLen) > end:
			t.Fatalf("header length %d outside [40, %d]", p.HeaderLen, end)
		case p.HeaderLen == 40 && p.Proto != pkt[6]:
			t.Fatalf("no extension header walked, but protocol %d != next header %d", p.Proto, pkt[6])
		case (p.SrcPort != 0 || p.DstPort != 0 || p.TCPDataOffset != 0 || p.HasUDPPayload0) &&
			(p.Proto != 6 && p.Proto != 17 || p.FragOffset != 0 || int(p.HeaderLen)+4 > end):
			t.Fatalf("ports on a packet that has none: %+v", p)
		case p.FragOffset != 0 && !p.Fragment:
			t.Fatalf("fragment offset without fragment: %+v", p)
		}
		if (p.Proto == 6 || p.Proto == 17) && p.FragOffset == 0 && int(p.HeaderLen)+4 <= end {
			h := pkt[p.HeaderLen:]
			if p.SrcPort != binary.BigEndian.Uint16(h[0:2]) || p.DstPort != binary.BigEndian.Uint16(h[2:4]) {
				t.Fatalf("ports %d > %d, the header at %d holds %x", p.SrcPort, p.DstPort, p.HeaderLen, h[:4])
			}
		}
		// Differential check against gopacket, where it decodes the whole chain.
		gp := gopacket.NewPacket(pkt, layers.LayerTypeIPv6, gopacket.Default)
		if gp.ErrorLayer() != nil || len(pkt) > 40+pl {
			return
		}
		ls := gp.Layers()
		if ip6, ok := ls[0].(*layers.IPv6); !ok || !ip6.SrcIP.Equal(p.Src.Netip().AsSlice()) || ip6.TrafficClass != tc {
			t.Fatalf("gopacket's IPv6 layer %v differs from %+v", ls[0], p)
		}
		i := 1
		for i < len(ls) {
			switch ls[i].LayerType() {
			case layers.LayerTypeIPv6HopByHop, layers.LayerTypeIPv6Routing, layers.LayerTypeIPv6Destination, layers.LayerTypeIPSecAH:
				i++
				continue
			}
			break
		}
		if i == len(ls) {
			return
		}
		switch l4 := ls[i].(type) {
		case *layers.TCP:
			if p.Proto != 6 || uint16(l4.SrcPort) != p.SrcPort || uint16(l4.DstPort) != p.DstPort || l4.DataOffset != p.TCPDataOffset {
				t.Fatalf("gopacket TCP %d>%d offset %d after %d layers; we decoded %+v", l4.SrcPort, l4.DstPort, l4.DataOffset, i, p)
			}
		case *layers.UDP:
			if p.Proto != 17 || uint16(l4.SrcPort) != p.SrcPort || uint16(l4.DstPort) != p.DstPort {
				t.Fatalf("gopacket UDP %d>%d after %d layers; we decoded %+v", l4.SrcPort, l4.DstPort, i, p)
			}
		}
	})
}
