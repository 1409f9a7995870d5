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
	totalLen         int
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
		ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		if ip == nil {
			t.Fatalf("packet %d: no IPv4 layer", i)
		}
		rec := record{at: ci.Timestamp, capLen: ci.CaptureLength, origLen: ci.Length,
			src: netip.AddrFrom4([4]byte(ip.SrcIP.To4())), dst: netip.AddrFrom4([4]byte(ip.DstIP.To4())),
			proto: ip.Protocol, dscp: ip.TOS >> 2, ecn: ip.TOS & 3, totalLen: int(ip.Length),
			ipHeader: b[14:34], l4Head: b[34:], raw: b}
		switch l4 := pkt.TransportLayer().(type) {
		case *layers.TCP:
			rec.sport, rec.dport = uint16(l4.SrcPort), uint16(l4.DstPort)
			rec.l4Head = b[34:54]
		case *layers.UDP:
			rec.sport, rec.dport = uint16(l4.SrcPort), uint16(l4.DstPort)
			rec.l4Head = b[34:42]
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
// captured L4 header is all zeros (as the encoder builds them): the sum over the
// pseudo-header (with the real L4 length) and the header must be 0xffff.
func l4ChecksumOK(rec *record) bool {
	var ph [12]byte
	copy(ph[0:4], rec.ipHeader[12:16])
	copy(ph[4:8], rec.ipHeader[16:20])
	ph[9] = byte(rec.proto)
	binary.BigEndian.PutUint16(ph[10:], uint16(rec.totalLen-20))
	return onesSum(onesSum(0, ph[:]), rec.l4Head) == 0xffff
}

// pos is a host position in the default Clos.
type pos struct{ pod, rack, host int }

// subnetMap places endpoints as SPEC 5's default subnet mapping does for the default
// 2 pods x 4 racks x 16 hosts: endpoints sorted numerically and grouped by /24; group
// i goes to rack i mod 8 (racks in name order: pod, then rack), its endpoints to the
// rack's hosts in order. It fails the test when a rack would get more than 16.
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
		p := netip.PrefixFrom(a, 24).Masked()
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
