package tracegen

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// record is one decoded packet of a written trace.
type record struct {
	at               time.Time
	capLen, origLen  int
	src, dst         netip.Addr
	proto            layers.IPProtocol
	sport, dport     uint16
	dscp, ecn        uint8
	totalLen         int    // size L (IPv6: 40 + payload length)
	v6               bool   // an IPv6 packet
	ipHeader, l4Head []byte // as captured
	raw              []byte // the captured frame
}

// readTrace decodes a written trace with gopacket, independently of the encoder's
// code, and checks the file header.
func readTrace(t *testing.T, data []byte, snaplen int) []record {
	t.Helper()
	r, err := pcapgo.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if r.LinkType() != layers.LinkTypeEthernet || r.Snaplen() != uint32(snaplen) ||
		binary.LittleEndian.Uint32(data) != 0xA1B23C4D {
		t.Fatalf("file header: link type %v, snaplen %d, magic %#x; want Ethernet, %d, nanosecond pcap",
			r.LinkType(), r.Snaplen(), binary.LittleEndian.Uint32(data), snaplen)
	}
	var out []record
	for i := 0; ; i++ {
		b, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		pkt := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.NoCopy)
		var rec record
		switch ip := pkt.NetworkLayer().(type) {
		case *layers.IPv4:
			rec = record{src: netip.AddrFrom4([4]byte(ip.SrcIP.To4())), dst: netip.AddrFrom4([4]byte(ip.DstIP.To4())),
				proto: ip.Protocol, dscp: ip.TOS >> 2, ecn: ip.TOS & 3, totalLen: int(ip.Length), ipHeader: b[14:34]}
		case *layers.IPv6:
			rec = record{src: netip.AddrFrom16([16]byte(ip.SrcIP)), dst: netip.AddrFrom16([16]byte(ip.DstIP)),
				proto: ip.NextHeader, dscp: ip.TrafficClass >> 2, ecn: ip.TrafficClass & 3, totalLen: 40 + int(ip.Length),
				v6: true, ipHeader: b[14:54]}
		default:
			t.Fatalf("packet %d: no IPv4 or IPv6 layer", i)
		}
		rec.at, rec.capLen, rec.origLen, rec.raw = ci.Timestamp, ci.CaptureLength, ci.Length, b
		l4 := 14 + len(rec.ipHeader)
		tl := pkt.TransportLayer()
		if ip, ok := pkt.NetworkLayer().(*layers.IPv4); ok && ip.Flags&layers.IPv4MoreFragments != 0 && ip.FragOffset == 0 {
			// A first fragment (midconn.pcap): gopacket leaves it undecoded; its TCP
			// header is all there.
			if p := gopacket.NewPacket(b[l4:], layers.LayerTypeTCP, gopacket.NoCopy); p.TransportLayer() != nil {
				tl = p.TransportLayer()
			}
		}
		switch tl := tl.(type) {
		case *layers.TCP:
			rec.sport, rec.dport = uint16(tl.SrcPort), uint16(tl.DstPort)
			rec.l4Head = b[l4 : l4+4*int(tl.DataOffset)] // options included (a SYN's MSS)
		case *layers.UDP:
			rec.sport, rec.dport = uint16(tl.SrcPort), uint16(tl.DstPort)
			rec.l4Head = b[l4 : l4+8]
		default:
			t.Fatalf("packet %d: no TCP or UDP layer", i)
		}
		out = append(out, rec)
	}
	return out
}

// onesSum is the RFC 1071 one's-complement sum of data, folded to 16 bits.
func onesSum(sum uint32, data []byte) uint32 {
	for i := 0; i+1 < len(data); i += 2 {
		sum += uint32(data[i])<<8 | uint32(data[i+1])
	}
	if len(data)%2 == 1 {
		sum += uint32(data[len(data)-1]) << 8
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return sum
}

// l4ChecksumOK verifies the TCP/UDP checksum of a packet whose payload beyond the
// captured bytes is all zeros (as the encoder builds them): the sum over the
// pseudo-header (with the real L4 length), the header and the captured payload (zero
// but for a RoCEv2 opcode) must be 0xffff.
// For IPv6 the pseudo-header is RFC 8200's: addresses, upper-layer length (32 bits),
// zeros and the next header.
func l4ChecksumOK(rec *record) bool {
	if rec.v6 {
		var ph [40]byte
		copy(ph[0:32], rec.ipHeader[8:40])
		binary.BigEndian.PutUint32(ph[32:], uint32(rec.totalLen-40))
		ph[39] = byte(rec.proto)
		return onesSum(onesSum(onesSum(0, ph[:]), rec.l4Head), rec.payload()) == 0xffff
	}
	var ph [12]byte
	copy(ph[0:4], rec.ipHeader[12:16])
	copy(ph[4:8], rec.ipHeader[16:20])
	ph[9] = byte(rec.proto)
	binary.BigEndian.PutUint16(ph[10:], uint16(rec.totalLen-20))
	return onesSum(onesSum(onesSum(0, ph[:]), rec.l4Head), rec.payload()) == 0xffff
}

// payload is the captured part of the packet's L4 payload.
func (rec *record) payload() []byte { return rec.raw[14+len(rec.ipHeader)+len(rec.l4Head):] }

// pos is a host position in the default Clos.
type pos struct{ pod, rack, host int }

// subnetMap places endpoints as the default subnet mapping (docs/model.md#host-mapping)
// does for the default 2 pods x 4 racks x 16 hosts: endpoints sorted numerically, IPv4
// first (netip's order), and grouped by /24 (IPv4) or /64 (IPv6); group i goes to
// rack i mod 8 (racks in name order: pod, then rack), its endpoints to the rack's
// hosts in order after those taken before. It fails the test when a rack would get
// more than 16.
func subnetMap(t *testing.T, endpoints map[netip.Addr]bool) (m map[netip.Addr]pos, groups int) {
	t.Helper()
	var addrs []netip.Addr
	for a := range endpoints {
		addrs = append(addrs, a)
	}
	slices.SortFunc(addrs, func(a, b netip.Addr) int { return a.Compare(b) })
	m = make(map[netip.Addr]pos, len(addrs))
	used := make([]int, Pods*RacksPerPod)
	var last netip.Prefix
	for _, a := range addrs {
		bits := 24
		if a.Is6() {
			bits = 64
		}
		p := netip.PrefixFrom(a, bits).Masked()
		if p != last {
			groups++
			last = p
		}
		rack := (groups - 1) % (Pods * RacksPerPod)
		if used[rack] == HostsPerRack {
			t.Fatalf("subnet mapping: rack %d gets more than %d endpoints (at %v)", rack, HostsPerRack, a)
		}
		m[a] = pos{rack / RacksPerPod, rack % RacksPerPod, used[rack]}
		used[rack]++
	}
	return m, groups
}

func newTestRand() *rand.Rand { return rand.New(rand.NewPCG(7, 7)) }
