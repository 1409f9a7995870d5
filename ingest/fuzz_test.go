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
	pc := pcapFile(t, LinkEthernet, false, 65535, rec{ts: at(1), frame: frame}, rec{ts: at(3), frame: tagged, caplen: 40}, rec{ts: at(2), frame: frame})
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
		if fs.Records != fs.IPv4+fs.NonIPv4()+fs.Skipped[SkipOutOfOrder] || fs.IPv4 != int64(len(pkts)) {
			t.Fatalf("counts do not add up: %+v, %d packets", fs.Counts, len(pkts))
		}
		// In file order the same records are read and nothing is out of order.
		pkts2, r2, _, err := readAll(t, Options{ReorderWindow: -1}, data)
		if err != nil {
			t.Fatalf("file order: %v", err)
		}
		fs2 := r2.Files()[0]
		if fs2.Records != fs.Records || int64(len(pkts2)) != fs.IPv4+fs.Skipped[SkipOutOfOrder] {
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
		if p.DSCP > 63 || p.ECN > 3 || p.CapLen != uint32(len(frame)) || p.TotalLen < 20 {
			t.Fatalf("fields out of range: %+v", p)
		}
		if (p.SrcPort != 0 || p.DstPort != 0) && (p.FragOffset != 0 || p.Proto != 6 && p.Proto != 17) {
			t.Fatalf("ports on a packet that has none: %+v", p)
		}
		if p.FragOffset != 0 && !p.Fragment {
			t.Fatalf("fragment offset without fragment flag: %+v", p)
		}
		if LinkType(link) != LinkEthernet {
			return
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
		if [4]byte(ip4.SrcIP.To4()) != p.Src || [4]byte(ip4.DstIP.To4()) != p.Dst || ip4.TOS != p.DSCP<<2|p.ECN || uint8(ip4.Protocol) != p.Proto {
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
