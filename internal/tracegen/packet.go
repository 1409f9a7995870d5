package tracegen

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/units"
)

// ECN codepoints (docs/model.md#classification: the two low bits of the IPv4 TOS byte or IPv6 Traffic
// Class).
const (
	NotECT uint8 = 0
	ECT1   uint8 = 1
	ECT0   uint8 = 2
	CE     uint8 = 3
)

// Sizes used by the encoder and the scenarios.
const (
	// DefaultSnaplen is the number of frame bytes captured per packet: Ethernet (14),
	// IPv4 (20) and TCP (20) or UDP (8) fit, and the first payload bytes (all zero;
	// where a RoCEv2 packet's 12-byte InfiniBand BTH would be).
	DefaultSnaplen = 64
	// Snaplen6 is the snaplen of the traces with IPv6 packets: Ethernet (14), IPv6 (40)
	// and TCP (20) fit, and the first payload bytes. MinSnaplen6 is the least that
	// keeps an IPv6 packet's TCP header.
	Snaplen6    = 80
	MinSnaplen6 = 14 + 40 + 20
	// MaxLength is the scenarios' jumbo packet size L (the default fabric's 9000-byte
	// MTU).
	MaxLength = 9000
	// MaxSuperFrame is the largest packet size L the encoder writes: an IPv4 packet's
	// largest total length, what a TSO or GRO capture holds (a super-frame that
	// replay splits into MTU pieces).
	MaxSuperFrame = 65535
	// RoCELength is the IPv4 total length of a full RoCEv2 packet at a 4096-byte RDMA
	// MTU: 20 IPv4 + 8 UDP + 12 BTH + 4096 payload + 4 ICRC; RoCELength6 its IPv6 size
	// L: 40 IPv6 + the same.
	RoCELength  = 4140
	RoCELength6 = 4160
	// WireOverhead is what a packet of size L adds on the wire: 14-byte Ethernet
	// header, 4-byte FCS, 8-byte preamble and SFD, 12-byte inter-frame gap.
	WireOverhead = 38
	// LineRate is the default fabric's host link speed.
	LineRate = 100 * units.Gbps
	// RoCEPort is the RoCEv2 UDP destination port.
	RoCEPort = 4791
)

// Class is a kind of traffic: its transport protocol, DiffServ code point, ECN
// codepoint, and the destination port its flows use (0: drawn at random per flow).
type Class struct {
	Name    string
	Proto   layers.IPProtocol
	DSCP    uint8
	ECN     uint8
	DstPort uint16
}

// TC is the class's traffic class under docs/model.md#classification's default map
// (DSCP >> 3).
func (c Class) TC() int { return int(c.DSCP >> 3) }

// The traffic classes of the committed scenarios.
var (
	RoCEv2    = Class{Name: "rocev2", Proto: layers.IPProtocolUDP, DSCP: 26, ECN: ECT0, DstPort: RoCEPort}
	TCPData   = Class{Name: "tcp", Proto: layers.IPProtocolTCP, DSCP: 0, ECN: ECT0}
	Expedited = Class{Name: "ef", Proto: layers.IPProtocolUDP, DSCP: 46, ECN: NotECT}
	UDPData   = Class{Name: "udp", Proto: layers.IPProtocolUDP, DSCP: 0, ECN: NotECT}
)

// Packet is one synthetic IPv4 or IPv6 packet before encoding.
type Packet struct {
	Time             units.Time // since the scenario's epoch
	Src, Dst         netip.Addr // both IPv4 or both IPv6
	Proto            layers.IPProtocol
	SrcPort, DstPort uint16
	DSCP, ECN        uint8
	Length           int    // size L, bytes: IPv4 total length, or 40 + IPv6 payload length
	Seq              uint32 // TCP sequence number (ignored for UDP)
	// TCPFlags are the TCP flag bits; 0 means ACK|PSH (a data segment). A pure ACK is
	// Length MinLength(TCP) (40, or 60 for IPv6) with TCPFlags TCPAck.
	TCPFlags uint8
	// Opcode is the first byte of a UDP payload: a RoCEv2 packet's BTH opcode
	// (0x00 send first, 0x11 acknowledge, 0x81 CNP).
	Opcode uint8
	// MoreFragments makes an IPv4 packet a first fragment: flag MF instead of DF,
	// offset 0 (the rest of the datagram is not written).
	MoreFragments bool
	// MSS, when not 0, gives a TCP packet an MSS option (4 bytes of TCP header, so
	// Length is at least MinLength + 4): what a SYN announces.
	MSS uint16
}

// TCP flag bits of Packet.TCPFlags.
const (
	TCPFin uint8 = 0x01
	TCPSyn uint8 = 0x02
	TCPRst uint8 = 0x04
	TCPPsh uint8 = 0x08
	TCPAck uint8 = 0x10
)

// RoCEv2 BTH opcodes of Packet.Opcode (InfiniBand RC).
const (
	OpcodeSendFirst   uint8 = 0x00
	OpcodeAcknowledge uint8 = 0x11
	OpcodeCNP         uint8 = 0x81
)

// ErrPacket is wrapped by every error about a packet or flow that cannot be encoded.
var ErrPacket = errors.New("tracegen: invalid packet")

// MinLength is the smallest size L of a packet of protocol proto (TCP or UDP, no
// payload): 40 and 28 bytes for IPv4, 60 and 48 for IPv6.
func MinLength(proto layers.IPProtocol, ipv6 bool) int {
	n := 28
	if proto == layers.IPProtocolTCP {
		n = 40
	}
	if ipv6 {
		n += 20
	}
	return n
}

// minLength is MinLength for IPv4.
func minLength(proto layers.IPProtocol) int { return MinLength(proto, false) }

// checkPacket validates the fields the encoder relies on.
func checkPacket(p *Packet) error {
	v6 := p.Src.Is6()
	switch {
	case !p.Src.IsValid() || !p.Dst.IsValid() || p.Src.Is4() != p.Dst.Is4() || p.Src.Zone() != "" || p.Dst.Zone() != "":
		return fmt.Errorf("%w: addresses %v -> %v must be both IPv4 or both IPv6", ErrPacket, p.Src, p.Dst)
	case p.Proto != layers.IPProtocolTCP && p.Proto != layers.IPProtocolUDP:
		return fmt.Errorf("%w: protocol %d: only TCP (6) and UDP (17)", ErrPacket, p.Proto)
	case p.Length < MinLength(p.Proto, v6) || p.Length > MaxSuperFrame:
		return fmt.Errorf("%w: packet size %d outside [%d, %d] for protocol %d",
			ErrPacket, p.Length, MinLength(p.Proto, v6), MaxSuperFrame, p.Proto)
	case p.DSCP > 63:
		return fmt.Errorf("%w: DSCP %d > 63", ErrPacket, p.DSCP)
	case p.ECN > 3:
		return fmt.Errorf("%w: ECN %d > 3", ErrPacket, p.ECN)
	case p.MoreFragments && v6:
		return fmt.Errorf("%w: MoreFragments is for IPv4 packets (IPv6 fragments need a Fragment header)", ErrPacket)
	case p.MSS != 0 && (p.Proto != layers.IPProtocolTCP || p.Length < MinLength(p.Proto, v6)+4):
		return fmt.Errorf("%w: an MSS option needs a TCP packet of at least %d bytes (size %d)", ErrPacket, MinLength(p.Proto, v6)+4, p.Length)
	}
	return nil
}

// zeros is the (read-only) payload of every packet.
var zeros [MaxSuperFrame]byte

// Encoder turns Packets into captured frame bytes with gopacket's layers. It reuses
// its buffers: an Encoder is not safe for concurrent use, and the bytes Encode returns
// are valid until the next call.
type Encoder struct {
	snaplen int
	buf     gopacket.SerializeBuffer
	opts    gopacket.SerializeOptions
	eth     layers.Ethernet
	ip      layers.IPv4
	tcp     layers.TCP
	udp     layers.UDP
	ip6     layers.IPv6
	tcp6    layers.TCP // TCP and UDP with the IPv6 pseudo-header in their checksums
	udp6    layers.UDP
	payload gopacket.Payload
	opcode  []byte // a UDP payload starting with Packet.Opcode
	srcMAC  [6]byte
	dstMAC  [6]byte
	srcIP   [4]byte
	dstIP   [4]byte
	srcIP6  [16]byte
	dstIP6  [16]byte
	withTCP []gopacket.SerializableLayer
	withUDP []gopacket.SerializableLayer
	with6   [2][]gopacket.SerializableLayer // IPv6: [0] UDP, [1] TCP
}

// NewEncoder returns an encoder that captures the first snaplen bytes of each frame
// (DefaultSnaplen if snaplen <= 0; at least 54, so every IPv4 header fits; IPv6
// packets need MinSnaplen6).
func NewEncoder(snaplen int) (*Encoder, error) {
	if snaplen <= 0 {
		snaplen = DefaultSnaplen
	}
	if snaplen < 54 {
		return nil, fmt.Errorf("%w: snaplen %d < 54 would cut the TCP header", ErrPacket, snaplen)
	}
	e := &Encoder{
		snaplen: snaplen,
		buf:     gopacket.NewSerializeBufferExpectedSize(64, MaxLength+14),
		opts:    gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
	}
	e.eth = layers.Ethernet{SrcMAC: net.HardwareAddr(e.srcMAC[:]), DstMAC: net.HardwareAddr(e.dstMAC[:]),
		EthernetType: layers.EthernetTypeIPv4}
	e.ip = layers.IPv4{Version: 4, IHL: 5, TTL: 64, Flags: layers.IPv4DontFragment,
		SrcIP: net.IP(e.srcIP[:]), DstIP: net.IP(e.dstIP[:])}
	e.tcp = layers.TCP{Window: 65535, Ack: 1}
	if err := e.tcp.SetNetworkLayerForChecksum(&e.ip); err != nil {
		return nil, err
	}
	if err := e.udp.SetNetworkLayerForChecksum(&e.ip); err != nil {
		return nil, err
	}
	e.ip6 = layers.IPv6{Version: 6, HopLimit: 64, SrcIP: net.IP(e.srcIP6[:]), DstIP: net.IP(e.dstIP6[:])}
	e.tcp6 = layers.TCP{Window: 65535, Ack: 1}
	if err := e.tcp6.SetNetworkLayerForChecksum(&e.ip6); err != nil {
		return nil, err
	}
	if err := e.udp6.SetNetworkLayerForChecksum(&e.ip6); err != nil {
		return nil, err
	}
	e.withTCP = []gopacket.SerializableLayer{&e.eth, &e.ip, &e.tcp, &e.payload}
	e.withUDP = []gopacket.SerializableLayer{&e.eth, &e.ip, &e.udp, &e.payload}
	e.with6 = [2][]gopacket.SerializableLayer{{&e.eth, &e.ip6, &e.udp6, &e.payload}, {&e.eth, &e.ip6, &e.tcp6, &e.payload}}
	return e, nil
}

// Snaplen is the number of frame bytes the encoder captures.
func (e *Encoder) Snaplen() int { return e.snaplen }

// Encode serializes p as a whole Ethernet frame and returns its first Snaplen bytes
// (aliasing the encoder's buffer until the next call) and the frame's full length
// (packet size L + 14, or 60 for a padded minimum frame). An IPv6 packet has no
// extension headers, hop limit 64 and flow label 0.
func (e *Encoder) Encode(p *Packet) (captured []byte, frameLen int, err error) {
	if err := checkPacket(p); err != nil {
		return nil, 0, err
	}
	v6 := p.Src.Is6()
	if v6 && e.snaplen < MinSnaplen6 {
		return nil, 0, fmt.Errorf("%w: snaplen %d < %d would cut an IPv6 packet's TCP header", ErrPacket, e.snaplen, MinSnaplen6)
	}
	tcp, udp := &e.tcp, &e.udp
	ls := e.withUDP
	if v6 {
		e.srcIP6, e.dstIP6 = p.Src.As16(), p.Dst.As16()
		copy(e.srcIP[:], e.srcIP6[12:]) // the MAC addresses end with the last 4 bytes
		copy(e.dstIP[:], e.dstIP6[12:])
		e.eth.EthernetType = layers.EthernetTypeIPv6
		e.ip6.TrafficClass = p.DSCP<<2 | p.ECN
		e.ip6.NextHeader = p.Proto
		tcp, udp, ls = &e.tcp6, &e.udp6, e.with6[0]
	} else {
		e.srcIP, e.dstIP = p.Src.As4(), p.Dst.As4()
		e.eth.EthernetType = layers.EthernetTypeIPv4
		e.ip.TOS = p.DSCP<<2 | p.ECN
		e.ip.Protocol = p.Proto
		e.ip.Flags = layers.IPv4DontFragment
		if p.MoreFragments {
			e.ip.Flags = layers.IPv4MoreFragments
		}
	}
	e.srcMAC = [6]byte{0x02, 0x00, e.srcIP[0], e.srcIP[1], e.srcIP[2], e.srcIP[3]}
	e.dstMAC = [6]byte{0x02, 0x00, e.dstIP[0], e.dstIP[1], e.dstIP[2], e.dstIP[3]}
	hdr := MinLength(p.Proto, v6)
	if p.Proto == layers.IPProtocolTCP {
		tcp.SrcPort, tcp.DstPort = layers.TCPPort(p.SrcPort), layers.TCPPort(p.DstPort)
		tcp.Seq = p.Seq
		f := p.TCPFlags
		if f == 0 {
			f = TCPAck | TCPPsh
		}
		tcp.FIN, tcp.SYN, tcp.RST = f&TCPFin != 0, f&TCPSyn != 0, f&TCPRst != 0
		tcp.PSH, tcp.ACK = f&TCPPsh != 0, f&TCPAck != 0
		tcp.Options = tcp.Options[:0]
		if p.MSS != 0 {
			tcp.Options = append(tcp.Options, layers.TCPOption{OptionType: layers.TCPOptionKindMSS, OptionLength: 4,
				OptionData: []byte{byte(p.MSS >> 8), byte(p.MSS)}})
			hdr += 4
		}
		e.payload = zeros[:p.Length-hdr]
		ls = e.withTCP
		if v6 {
			ls = e.with6[1]
		}
	} else {
		udp.SrcPort, udp.DstPort = layers.UDPPort(p.SrcPort), layers.UDPPort(p.DstPort)
		e.payload = zeros[:p.Length-hdr]
		if p.Opcode != 0 && len(e.payload) > 0 {
			e.opcode = append(append(e.opcode[:0], p.Opcode), zeros[:len(e.payload)-1]...)
			e.payload = e.opcode
		}
	}
	if err := gopacket.SerializeLayers(e.buf, e.opts, ls...); err != nil {
		return nil, 0, fmt.Errorf("tracegen: serialize %v -> %v: %w", p.Src, p.Dst, err)
	}
	frame := e.buf.Bytes()
	return frame[:min(e.snaplen, len(frame))], len(frame), nil
}
