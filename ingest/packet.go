package ingest

import (
	"fmt"
	"net/netip"
)

// Packet is one IPv4 packet read from a capture, decoded from its outer IPv4 header.
//
// It is a small value with no pointers into read buffers: copy it, keep it, put it
// in a queue. Addresses are in network byte order as they appear on the wire.
type Packet struct {
	// Timestamp is the capture time in nanoseconds since the Unix epoch (UTC).
	// Timestamps outside int64 nanoseconds (years before 1678 or after 2262) wrap
	// as two's complement, the way a signed 64-bit pcapng timestamp does.
	Timestamp int64
	// Index is the record's 0-based position in its file. It counts ALL records
	// (IPv6, ARP, ... included), so it matches tshark's frame.number - 1 and an
	// error or warning can name the record.
	Index int64
	// FileIndex is the position of the packet's file in the list given to Open.
	FileIndex int
	// CapLen is the number of bytes the capture kept of the whole frame, link
	// header included.
	CapLen uint32
	// Src and Dst are the outer IPv4 source and destination addresses.
	Src, Dst [4]byte
	// TotalLen is the IPv4 header's total length in bytes (header + payload), so a
	// snaplen-truncated capture keeps the packet's real size. A total length of 0
	// (TSO captures) is replaced by the frame's wire length minus the link header.
	TotalLen uint16
	// SrcPort and DstPort are the TCP or UDP ports, and 0 for other protocols, for
	// non-first fragments, and when the capture cut the first 4 bytes of the L4
	// header off.
	SrcPort, DstPort uint16
	// FragOffset is the fragment offset in bytes (the header field times 8).
	FragOffset uint16
	// Proto is the IPv4 protocol number (6 TCP, 17 UDP, 1 ICMP, 47 GRE, ...).
	Proto uint8
	// DSCP is the DiffServ code point: the top 6 bits of the ToS byte (0..63).
	DSCP uint8
	// ECN is the ECN field: the low 2 bits of the ToS byte (0 Not-ECT, 1 ECT(1),
	// 2 ECT(0), 3 CE).
	ECN uint8
	// Fragment is true when the packet is an IPv4 fragment: more-fragments set or
	// a non-zero fragment offset. A first fragment has Fragment && FragOffset == 0.
	Fragment bool
	// IHL is the IPv4 header length in 32-bit words (5..15).
	IHL uint8
	// TCPDataOffset is the TCP header length in 32-bit words (5..15) and TCPFlags its
	// flag bits (FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10, ...); both 0 when
	// the packet is not TCP, not a first fragment, or the capture cut the TCP header
	// before its flags. TCPPayload uses them.
	TCPDataOffset, TCPFlags uint8
	// UDPPayload0 is the first byte of a UDP payload (a RoCEv2 packet's BTH opcode),
	// valid when HasUDPPayload0: the packet is a UDP first fragment that carries a
	// payload and the capture kept its first byte.
	UDPPayload0    uint8
	HasUDPPayload0 bool
}

// TCP flag bits (Packet.TCPFlags).
const (
	TCPFin uint8 = 0x01
	TCPSyn uint8 = 0x02
	TCPRst uint8 = 0x04
	TCPAck uint8 = 0x10
)

// TCPPayload returns the TCP payload length, TotalLen - IHL*4 - TCPDataOffset*4, and
// whether the TCP header was captured (false: its length is unknown, and the payload
// is computed for a 20-byte header). 0 for packets that are not TCP.
func (p *Packet) TCPPayload() (n int, known bool) {
	if p.Proto != 6 || p.Fragment && p.FragOffset != 0 {
		return 0, false
	}
	doff := int(p.TCPDataOffset)
	known = doff != 0
	if !known {
		doff = 5
	}
	return max(0, int(p.TotalLen)-4*int(p.IHL)-4*doff), known
}

// FiveTuple identifies a directional flow: source and destination address, IPv4
// protocol and ports (0 where Packet's ports are 0). It is comparable and
// allocation-free, so it serves as a map key.
type FiveTuple struct {
	Src, Dst         [4]byte
	SrcPort, DstPort uint16
	Proto            uint8
}

// Tuple returns the packet's directional five-tuple.
func (p *Packet) Tuple() FiveTuple {
	return FiveTuple{Src: p.Src, Dst: p.Dst, SrcPort: p.SrcPort, DstPort: p.DstPort, Proto: p.Proto}
}

// Multicast reports whether the packet goes to a multicast or broadcast destination,
// which a replay does not simulate (reason "multicast"; see docs/model.md#replay).
// The checks per address family sit side by side here.
func (p *Packet) Multicast() bool {
	return multicast4(p.Dst)
}

// multicast4 reports whether an IPv4 destination is multicast (224.0.0.0/4) or the
// limited broadcast address 255.255.255.255. (A directed broadcast such as
// 10.0.0.255 cannot be told from a host address without the subnet's prefix.)
func multicast4(dst [4]byte) bool {
	return dst[0]&0xF0 == 0xE0 || dst == [4]byte{255, 255, 255, 255}
}

// SrcAddr returns the source address as a netip.Addr.
func (p *Packet) SrcAddr() netip.Addr { return netip.AddrFrom4(p.Src) }

// DstAddr returns the destination address as a netip.Addr.
func (p *Packet) DstAddr() netip.Addr { return netip.AddrFrom4(p.Dst) }

// String formats the tuple as "src:sport > dst:dport proto N".
func (t FiveTuple) String() string {
	return fmt.Sprintf("%s:%d > %s:%d proto %d",
		netip.AddrFrom4(t.Src), t.SrcPort, netip.AddrFrom4(t.Dst), t.DstPort, t.Proto)
}

// Reason says why a record was not delivered as an IPv4 packet.
type Reason uint8

// Skip reasons. Decode returns OK for an IPv4 packet; the Reader counts every other
// record under one of the rest.
const (
	OK                  Reason = iota // an IPv4 packet, not skipped
	SkipIPv6                          // "ipv6": IPv6 (any link type)
	SkipARP                           // "arp": ARP (EtherType 0x0806)
	SkipOtherEtherType                // "other-ethertype": LLC, LLDP, MPLS, ..., or a cut link header
	SkipUnsupportedLink               // "unsupported-linktype": link type not decoded
	SkipTruncatedIPv4                 // "truncated-ipv4-header": fewer than 20 IPv4 header bytes captured
	SkipBadIPv4                       // "bad-ipv4-header": version != 4, IHL < 5, or total length < header length
	SkipOutOfOrder                    // "out-of-order": IPv4 packet earlier than the reorder window allows
	SkipOutOfWindow                   // "out-of-window": IPv4 packet outside Options.Window
	// SkipMulticast ("multicast") counts IPv4 packets to a multicast or broadcast
	// destination (Packet.Multicast). The Reader delivers them (they are IPv4
	// packets); Summarize counts them, and a replay skips them: a data-center fabric
	// model has no multicast routing.
	SkipMulticast
	numReasons
)

var reasonNames = [numReasons]string{
	OK:                  "ok",
	SkipIPv6:            "ipv6",
	SkipARP:             "arp",
	SkipOtherEtherType:  "other-ethertype",
	SkipUnsupportedLink: "unsupported-linktype",
	SkipTruncatedIPv4:   "truncated-ipv4-header",
	SkipBadIPv4:         "bad-ipv4-header",
	SkipOutOfOrder:      "out-of-order",
	SkipOutOfWindow:     "out-of-window",
	SkipMulticast:       "multicast",
}

// String returns the reason's name as used in counters and JSON ("ipv6", "arp", ...).
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// SkipReasons lists every skip reason in a fixed order (OK excluded).
func SkipReasons() []Reason {
	return []Reason{SkipIPv6, SkipARP, SkipOtherEtherType, SkipUnsupportedLink,
		SkipTruncatedIPv4, SkipBadIPv4, SkipOutOfOrder, SkipOutOfWindow, SkipMulticast}
}

// notIPv4 reports whether records skipped for r are not IPv4 packets (r is a
// decoding reason, not out-of-order, out-of-window or multicast).
func (r Reason) notIPv4() bool {
	return r != OK && r != SkipOutOfOrder && r != SkipOutOfWindow && r != SkipMulticast && r < numReasons
}

// Counts holds the counters of one file or of all files together.
type Counts struct {
	// Records counts every packet record read (IPv4 or not).
	Records int64
	// IPv4 counts the IPv4 packets delivered by Next.
	IPv4 int64
	// Skipped counts records not delivered, by Reason (index OK is unused).
	Skipped [numReasons]int64
}

// NonIPv4 returns the number of records that are not IPv4 packets (every skip
// reason except out-of-order, out-of-window and multicast, which count IPv4 packets).
func (c *Counts) NonIPv4() int64 {
	var n int64
	for r := SkipIPv6; r < numReasons; r++ {
		if r.notIPv4() {
			n += c.Skipped[r]
		}
	}
	return n
}

func (c *Counts) add(o *Counts) {
	c.Records += o.Records
	c.IPv4 += o.IPv4
	for i := range c.Skipped {
		c.Skipped[i] += o.Skipped[i]
	}
}
