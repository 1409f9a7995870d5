package ingest

import (
	"fmt"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

// Packet is one IPv4 or IPv6 packet read from a capture, decoded from the frame's
// outer IP header (docs/model.md#ipv6 for the IPv6 rules).
//
// It is a small value with no pointers into read buffers: copy it, keep it, put it
// in a queue.
type Packet struct {
	// Timestamp is the capture time in nanoseconds since the Unix epoch (UTC).
	// Timestamps outside int64 nanoseconds (years before 1678 or after 2262) wrap
	// as two's complement, the way a signed 64-bit pcapng timestamp does.
	Timestamp int64
	// Index is the record's 0-based position in its file. It counts ALL records
	// (ARP, LLDP, ... included), so it matches tshark's frame.number - 1 and an
	// error or warning can name the record.
	Index int64
	// FileIndex is the position of the packet's file in the list given to Open.
	FileIndex int
	// CapLen is the number of bytes the capture kept of the whole frame, link
	// header included.
	CapLen uint32
	// TotalLen is the packet's size L in bytes: the IPv4 header's total length, or 40
	// plus the IPv6 Payload Length, so a snaplen-truncated capture keeps the packet's
	// real size. An IPv4 total length of 0 (TSO captures) is replaced by the frame's
	// wire length minus the link header.
	TotalLen uint32
	// HeaderLen is the length in bytes of the IP header: IHL*4 for IPv4 (20..60), 40
	// plus the extension headers walked for IPv6. The upper-layer header (TCP, UDP)
	// starts HeaderLen bytes into the packet.
	HeaderLen uint32
	// Src and Dst are the outer IP header's source and destination addresses; their
	// family is the packet's.
	Src, Dst ipaddr.Addr
	// SrcPort and DstPort are the TCP or UDP ports, and 0 for other protocols, for
	// non-first fragments, and when the capture cut the first 4 bytes of the L4
	// header (or, for IPv6, an extension header before it) off.
	SrcPort, DstPort uint16
	// FragOffset is the fragment offset in bytes (the header field times 8).
	FragOffset uint16
	// Proto is the upper-layer protocol (6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6, 47 GRE, ...):
	// IPv4's protocol field; for IPv6 the Next Header that ends the extension header
	// walk (docs/model.md#ipv6).
	Proto uint8
	// DSCP is the DiffServ code point: the top 6 bits of the IPv4 ToS byte or IPv6
	// Traffic Class (0..63).
	DSCP uint8
	// ECN is the ECN field: the low 2 bits of that byte (0 Not-ECT, 1 ECT(1),
	// 2 ECT(0), 3 CE).
	ECN uint8
	// Fragment is true when the packet is a fragment: IPv4 more-fragments set or a
	// non-zero fragment offset; for IPv6 the same in a Fragment header. A first
	// fragment has Fragment && FragOffset == 0.
	Fragment bool
	// TCPDataOffset is the TCP header length in 32-bit words (5..15) and TCPFlags its
	// flag bits (FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10, ...); both 0 when
	// the packet is not TCP, not a first fragment, or the capture cut the TCP header
	// before its flags. TCPPayload uses them.
	TCPDataOffset, TCPFlags uint8
	// TCPMSS is the Maximum Segment Size option of a SYN (RFC 9293 3.7.1), 0 when the
	// packet is not a SYN, has no MSS option, or the capture cut it.
	TCPMSS uint16
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

// Family returns the packet's address family.
func (p *Packet) Family() ipaddr.Family { return p.Src.Family() }

// TCPPayload returns the TCP payload length, TotalLen - HeaderLen - TCPDataOffset*4
// (for IPv6: the Payload Length less the extension headers and the TCP header), and
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
	return max(0, int(p.TotalLen)-int(p.HeaderLen)-4*doff), known
}

// FiveTuple identifies a directional flow: source and destination address (their
// family is the flow's), upper-layer protocol and ports (0 where Packet's ports are
// 0). It is comparable and allocation-free, so it serves as a map key.
type FiveTuple struct {
	Src, Dst         ipaddr.Addr
	SrcPort, DstPort uint16
	Proto            uint8
}

// Tuple returns the packet's directional five-tuple.
func (p *Packet) Tuple() FiveTuple {
	return FiveTuple{Src: p.Src, Dst: p.Dst, SrcPort: p.SrcPort, DstPort: p.DstPort, Proto: p.Proto}
}

// Family returns the flow's address family.
func (t FiveTuple) Family() ipaddr.Family { return t.Src.Family() }

// Multicast reports whether the packet goes to a multicast or broadcast destination,
// which a replay does not simulate (reason "multicast"; see docs/model.md#replay):
// IPv4 224.0.0.0/4 and 255.255.255.255, IPv6 ff00::/8 (ipaddr.Addr.IsMulticast).
func (p *Packet) Multicast() bool {
	return p.Dst.IsMulticast()
}

// String formats the tuple as "src:sport > dst:dport proto N" ("[src]:sport" for
// IPv6).
func (t FiveTuple) String() string {
	if t.Src.Is6() {
		return fmt.Sprintf("[%s]:%d > [%s]:%d proto %d", t.Src, t.SrcPort, t.Dst, t.DstPort, t.Proto)
	}
	return fmt.Sprintf("%s:%d > %s:%d proto %d", t.Src, t.SrcPort, t.Dst, t.DstPort, t.Proto)
}

// Reason says why a record was not delivered as an IP packet.
type Reason uint8

// Skip reasons. Decode returns OK for an IPv4 or IPv6 packet; the Reader counts
// every other record under one of the rest.
const (
	OK                  Reason = iota // an IPv4 or IPv6 packet, not skipped
	SkipARP                           // "arp": ARP (EtherType 0x0806)
	SkipOtherEtherType                // "other-ethertype": LLC, LLDP, MPLS, ..., or a cut link header
	SkipUnsupportedLink               // "unsupported-linktype": link type not decoded
	SkipTruncatedIPv4                 // "truncated-ipv4-header": fewer than 20 IPv4 header bytes captured
	SkipBadIPv4                       // "bad-ipv4-header": version != 4, IHL < 5, or total length < header length
	SkipTruncatedIPv6                 // "truncated-ipv6-header": fewer than the 40 bytes of the fixed IPv6 header captured
	SkipBadIPv6                       // "bad-ipv6-header": version != 6, or Payload Length 0 (a jumbogram)
	SkipOutOfOrder                    // "out-of-order": IP packet earlier than the reorder window allows
	SkipOutOfWindow                   // "out-of-window": IP packet outside Options.Window
	// SkipMulticast ("multicast") counts IP packets to a multicast or broadcast
	// destination (Packet.Multicast). The Reader delivers them (they are IP
	// packets); Summarize counts them, and a replay skips them: a data-center fabric
	// model has no multicast routing.
	SkipMulticast
	// SkipFamilyFiltered ("family-filtered") counts the IP packets of the family
	// that Options.Family leaves out.
	SkipFamilyFiltered
	// SkipFiltered ("filtered") counts the IP packets that Options.Filter (--filter)
	// does not match.
	SkipFiltered
	numReasons
)

var reasonNames = [numReasons]string{
	OK:                  "ok",
	SkipARP:             "arp",
	SkipOtherEtherType:  "other-ethertype",
	SkipUnsupportedLink: "unsupported-linktype",
	SkipTruncatedIPv4:   "truncated-ipv4-header",
	SkipBadIPv4:         "bad-ipv4-header",
	SkipTruncatedIPv6:   "truncated-ipv6-header",
	SkipBadIPv6:         "bad-ipv6-header",
	SkipOutOfOrder:      "out-of-order",
	SkipOutOfWindow:     "out-of-window",
	SkipMulticast:       "multicast",
	SkipFamilyFiltered:  "family-filtered",
	SkipFiltered:        "filtered",
}

// String returns the reason's name as used in counters and JSON ("arp", ...).
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", uint8(r))
}

// SkipReasons lists every skip reason in a fixed order (OK excluded).
func SkipReasons() []Reason {
	return []Reason{SkipARP, SkipOtherEtherType, SkipUnsupportedLink,
		SkipTruncatedIPv4, SkipBadIPv4, SkipTruncatedIPv6, SkipBadIPv6,
		SkipOutOfOrder, SkipOutOfWindow, SkipMulticast, SkipFamilyFiltered, SkipFiltered}
}

// notIP reports whether records skipped for r are not IP packets (r is a decoding
// reason, not out-of-order, out-of-window, multicast, family-filtered or filtered).
func (r Reason) notIP() bool {
	return r != OK && r < SkipOutOfOrder
}

// Counts holds the counters of one file or of all files together.
type Counts struct {
	// Records counts every packet record read (IP or not).
	Records int64
	// IPv4 and IPv6 count the packets of each family delivered by Next.
	IPv4, IPv6 int64
	// Skipped counts records not delivered, by Reason (index OK is unused).
	Skipped [numReasons]int64
}

// IP returns the packets delivered by Next, both families.
func (c *Counts) IP() int64 { return c.IPv4 + c.IPv6 }

// Of returns the packets of family f delivered by Next.
func (c *Counts) Of(f ipaddr.Family) int64 {
	if f == ipaddr.IPv6 {
		return c.IPv6
	}
	return c.IPv4
}

// count adds n packets of family f.
func (c *Counts) count(f ipaddr.Family, n int64) {
	if f == ipaddr.IPv6 {
		c.IPv6 += n
	} else {
		c.IPv4 += n
	}
}

// NonIP returns the number of records that are not IP packets (every decoding
// reason; out-of-order, out-of-window, multicast, family-filtered and filtered
// records are IP packets).
func (c *Counts) NonIP() int64 {
	var n int64
	for r := OK + 1; r < numReasons; r++ {
		if r.notIP() {
			n += c.Skipped[r]
		}
	}
	return n
}

func (c *Counts) add(o *Counts) {
	c.Records += o.Records
	c.IPv4 += o.IPv4
	c.IPv6 += o.IPv6
	for i := range c.Skipped {
		c.Skipped[i] += o.Skipped[i]
	}
}
