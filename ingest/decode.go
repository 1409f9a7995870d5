package ingest

import (
	"encoding/binary"
	"fmt"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

// LinkType is a pcap/pcapng LINKTYPE_ value (the full 16 bits; gopacket v1.1.19's
// layers.LinkType is only 8 bits wide and cannot hold LINUX_SLL2 = 276).
type LinkType uint16

// Link types that Decode understands.
const (
	LinkNull      LinkType = 0   // BSD loopback: 4-byte address family in host byte order
	LinkEthernet  LinkType = 1   // Ethernet II / 802.3, 802.1Q and 802.1ad tags at any depth
	LinkRaw       LinkType = 101 // raw IP: IPv4 or IPv6 by the version nibble
	LinkLoop      LinkType = 108 // OpenBSD loopback: 4-byte address family, network byte order
	LinkLinuxSLL  LinkType = 113 // Linux cooked capture v1 (16-byte header)
	LinkIPv4      LinkType = 228 // raw IPv4
	LinkIPv6      LinkType = 229 // raw IPv6
	LinkLinuxSLL2 LinkType = 276 // Linux cooked capture v2 (20-byte header)
)

var linkNames = map[LinkType]string{
	LinkNull: "NULL", LinkEthernet: "ETHERNET", LinkRaw: "RAW", LinkLoop: "LOOP",
	LinkLinuxSLL: "LINUX_SLL", LinkIPv4: "IPV4", LinkIPv6: "IPV6", LinkLinuxSLL2: "LINUX_SLL2",
}

// String returns the tcpdump.org name with the number, e.g. "LINUX_SLL(113)".
func (l LinkType) String() string {
	if n, ok := linkNames[l]; ok {
		return fmt.Sprintf("%s(%d)", n, uint16(l))
	}
	return fmt.Sprintf("LINKTYPE(%d)", uint16(l))
}

// EtherTypes and address families the decoder recognises.
const (
	etherIPv4   = 0x0800
	etherARP    = 0x0806
	etherIPv6   = 0x86DD
	etherVLAN   = 0x8100 // 802.1Q C-tag
	etherQinQ   = 0x88A8 // 802.1ad S-tag
	etherQinQ91 = 0x9100 // pre-standard QinQ
	etherQinQ92 = 0x9200 // pre-standard QinQ
)

// Decode decodes one captured frame of the given link type into p.
//
// frame is the captured bytes (it may be shorter than the frame on the wire);
// wireLen is the frame's original length, used only when the IPv4 total length is 0
// (TSO/GRO captures). Decode fills p's IP fields and CapLen and leaves Timestamp,
// Index and FileIndex alone. It returns OK for an IPv4 or IPv6 packet and otherwise
// the reason the frame is skipped; p is then unspecified. Decode never retains frame
// and never allocates.
//
// Only the outer IP header counts: IP inside GRE, VXLAN, MPLS, ICMP errors, IPv6 in
// IPv4 (protocol 41) or IPv4 in IPv6 is not looked at. MPLS (0x8847) is
// "other-ethertype". The fixed IP header (20 bytes for IPv4, 40 for IPv6) must be
// captured; options or extension headers cut by the snaplen only lose the ports.
func Decode(link LinkType, frame []byte, wireLen uint32, p *Packet) Reason {
	switch link {
	case LinkEthernet:
		if len(frame) < 14 {
			return SkipOtherEtherType
		}
		return decodeEther(frame, binary.BigEndian.Uint16(frame[12:14]), 14, wireLen, p)
	case LinkLinuxSLL:
		if len(frame) < 16 {
			return SkipOtherEtherType
		}
		return decodeEther(frame, binary.BigEndian.Uint16(frame[14:16]), 16, wireLen, p)
	case LinkLinuxSLL2:
		if len(frame) < 20 {
			return SkipOtherEtherType
		}
		return decodeEther(frame, binary.BigEndian.Uint16(frame[0:2]), 20, wireLen, p)
	case LinkRaw:
		if len(frame) > 0 && frame[0]>>4 == 6 {
			return decodeIPv6(frame, 0, p)
		}
		return decodeIPv4(frame, 0, wireLen, p)
	case LinkIPv4:
		return decodeIPv4(frame, 0, wireLen, p)
	case LinkIPv6:
		return decodeIPv6(frame, 0, p)
	case LinkNull, LinkLoop:
		if len(frame) < 4 {
			return SkipOtherEtherType
		}
		// The family is in the capturing host's byte order for NULL and in network
		// order for LOOP; writers disagree, so accept either order for both.
		fam := binary.BigEndian.Uint32(frame[0:4])
		if fam > 0xFFFF {
			fam = binary.LittleEndian.Uint32(frame[0:4])
		}
		switch fam {
		case 2: // AF_INET everywhere
			return decodeIPv4(frame, 4, wireLen, p)
		case 10, 24, 28, 30: // AF_INET6: Linux, NetBSD/OpenBSD, FreeBSD, Darwin
			return decodeIPv6(frame, 4, p)
		}
		return SkipOtherEtherType
	}
	return SkipUnsupportedLink
}

// decodeEther follows 802.1Q/802.1ad tags from an EtherType whose payload starts at
// off, then dispatches on the final EtherType.
func decodeEther(frame []byte, et uint16, off int, wireLen uint32, p *Packet) Reason {
	for et == etherVLAN || et == etherQinQ || et == etherQinQ91 || et == etherQinQ92 {
		// A tag is 2 bytes of TCI followed by the next EtherType.
		if len(frame) < off+4 {
			return SkipOtherEtherType
		}
		et = binary.BigEndian.Uint16(frame[off+2 : off+4])
		off += 4
	}
	switch et {
	case etherIPv4:
		return decodeIPv4(frame, off, wireLen, p)
	case etherIPv6:
		return decodeIPv6(frame, off, p)
	case etherARP:
		return SkipARP
	}
	return SkipOtherEtherType
}

// decodeIPv4 decodes the IPv4 header at frame[off:].
func decodeIPv4(frame []byte, off int, wireLen uint32, p *Packet) Reason {
	ip := frame[off:]
	if len(ip) == 0 {
		return SkipTruncatedIPv4
	}
	if ip[0]>>4 != 4 {
		return SkipBadIPv4
	}
	if len(ip) < 20 {
		return SkipTruncatedIPv4
	}
	hl := int(ip[0]&0x0F) * 4
	if hl < 20 {
		return SkipBadIPv4
	}
	tl := int(binary.BigEndian.Uint16(ip[2:4]))
	if tl == 0 {
		// TSO/GRO captures leave the total length 0: take the size from the wire.
		tl = int(wireLen) - off
		if tl > 0xFFFF {
			tl = 0xFFFF
		}
		if tl < hl {
			return SkipBadIPv4
		}
	} else if tl < hl {
		return SkipBadIPv4
	}
	ff := binary.BigEndian.Uint16(ip[6:8])
	fragOff := (ff & 0x1FFF) << 3
	p.CapLen = uint32(len(frame))
	p.TotalLen = uint32(tl)
	p.HeaderLen = uint32(hl)
	p.DSCP = ip[1] >> 2
	p.ECN = ip[1] & 3
	p.Proto = ip[9]
	p.Fragment = ff&0x2000 != 0 || fragOff != 0
	p.FragOffset = fragOff
	p.Src = ipaddr.FromUint32(binary.BigEndian.Uint32(ip[12:16]))
	p.Dst = ipaddr.FromUint32(binary.BigEndian.Uint32(ip[16:20]))
	p.SrcPort, p.DstPort = 0, 0
	p.TCPDataOffset, p.TCPFlags, p.TCPMSS = 0, 0, 0
	p.UDPPayload0, p.HasUDPPayload0 = 0, false
	if fragOff == 0 && (p.Proto == 6 || p.Proto == 17) {
		// transport, written out: the IPv4 hot path saves the call.
		end := len(ip)
		if tl < end {
			end = tl // Ethernet padding is not payload
		}
		if hl+4 <= end {
			p.SrcPort = binary.BigEndian.Uint16(ip[hl : hl+2])
			p.DstPort = binary.BigEndian.Uint16(ip[hl+2 : hl+4])
		}
		switch {
		case p.Proto == 6 && hl+14 <= end:
			if doff := ip[hl+12] >> 4; doff >= 5 {
				p.TCPDataOffset, p.TCPFlags = doff, ip[hl+13]
				if p.TCPFlags&TCPSyn != 0 && doff > 5 {
					p.TCPMSS = tcpMSS(ip[hl+20 : max(hl+20, min(hl+4*int(doff), end))])
				}
			}
		case p.Proto == 17 && hl+9 <= end:
			p.UDPPayload0, p.HasUDPPayload0 = ip[hl+8], true
		}
	}
	return OK
}

// tcpMSS returns the value of the MSS option (kind 2, length 4) among the TCP options
// opts (what the capture kept of them), 0 if there is none or it was cut.
func tcpMSS(opts []byte) uint16 {
	for i := 0; i < len(opts); {
		switch kind := opts[i]; kind {
		case 0: // end of options
			return 0
		case 1: // no-operation
			i++
			continue
		}
		if i+1 >= len(opts) || opts[i+1] < 2 {
			return 0
		}
		n := int(opts[i+1])
		if opts[i] == 2 && n == 4 && i+4 <= len(opts) {
			return uint16(opts[i+2])<<8 | uint16(opts[i+3])
		}
		i += n
	}
	return 0
}

// IPv6 extension headers that the walk follows (docs/model.md#ipv6).
const (
	ipv6HopByHop = 0
	ipv6Routing  = 43
	ipv6Fragment = 44
	ipv6AH       = 51
	ipv6DstOpts  = 60
)

// decodeIPv6 decodes the IPv6 header at frame[off:] and walks its extension headers
// to the upper-layer protocol: Hop-by-Hop Options, Routing and Destination Options
// ((Hdr Ext Len + 1) * 8 bytes), Fragment (8 bytes; a non-first fragment ends the
// walk with its Next Header and no ports) and Authentication ((Payload Len + 2) * 4
// bytes). Any other Next Header (TCP, UDP, ICMPv6, ESP 50, No Next Header 59, an
// unknown value) ends the walk as the packet's protocol. A header that runs past the
// captured bytes (or past the Payload Length) ends the walk with its own type as the
// protocol and no ports, as an IPv4 header whose L4 ports were cut.
func decodeIPv6(frame []byte, off int, p *Packet) Reason {
	ip := frame[off:]
	if len(ip) == 0 {
		return SkipTruncatedIPv6
	}
	if ip[0]>>4 != 6 {
		return SkipBadIPv6
	}
	if len(ip) < 40 {
		return SkipTruncatedIPv6
	}
	pl := int(binary.BigEndian.Uint16(ip[4:6]))
	if pl == 0 {
		return SkipBadIPv6 // a jumbogram (RFC 2675): the length is in a Hop-by-Hop option
	}
	tc := ip[0]<<4 | ip[1]>>4
	p.CapLen = uint32(len(frame))
	p.TotalLen = 40 + uint32(pl)
	p.DSCP = tc >> 2
	p.ECN = tc & 3
	p.Src = ipaddr.FromSlice16(ip[8:24])
	p.Dst = ipaddr.FromSlice16(ip[24:40])
	p.Fragment, p.FragOffset = false, 0
	end := min(len(ip), 40+pl) // Ethernet padding is not payload
	nh, at := ip[6], 40
	first := true // not a non-first fragment
walk:
	for {
		var n int // the extension header's length
		switch nh {
		case ipv6HopByHop, ipv6Routing, ipv6DstOpts:
			if at+2 > end {
				break walk
			}
			n = (int(ip[at+1]) + 1) * 8
		case ipv6AH:
			if at+2 > end {
				break walk
			}
			n = (int(ip[at+1]) + 2) * 4
		case ipv6Fragment:
			if at+8 > end {
				break walk
			}
			fo := binary.BigEndian.Uint16(ip[at+2 : at+4])
			p.FragOffset = fo &^ 7
			p.Fragment = p.Fragment || fo&1 != 0 || p.FragOffset != 0
			n = 8
			if p.FragOffset != 0 {
				first = false
			}
		default:
			break walk
		}
		if at+n > end {
			break walk
		}
		nh = ip[at]
		at += n
		if !first {
			break
		}
	}
	p.Proto = nh
	p.HeaderLen = uint32(at)
	if at > end {
		at = end
	}
	transport(ip, at, end, first, p)
	return OK
}

// transport fills p's port and TCP/UDP fields from the upper-layer header at ip[hl:]
// of a packet of protocol p.Proto whose bytes end at end (the captured bytes or the
// IP length, whichever is shorter): none for other protocols and for non-first
// fragments (first false), and what the capture kept otherwise.
func transport(ip []byte, hl, end int, first bool, p *Packet) {
	p.SrcPort, p.DstPort = 0, 0
	p.TCPDataOffset, p.TCPFlags, p.TCPMSS = 0, 0, 0
	p.UDPPayload0, p.HasUDPPayload0 = 0, false
	if !first || p.Proto != 6 && p.Proto != 17 {
		return
	}
	if hl+4 <= end {
		p.SrcPort = binary.BigEndian.Uint16(ip[hl : hl+2])
		p.DstPort = binary.BigEndian.Uint16(ip[hl+2 : hl+4])
	}
	switch {
	case p.Proto == 6 && hl+14 <= end:
		if doff := ip[hl+12] >> 4; doff >= 5 {
			p.TCPDataOffset, p.TCPFlags = doff, ip[hl+13]
			if p.TCPFlags&TCPSyn != 0 && doff > 5 {
				p.TCPMSS = tcpMSS(ip[hl+20 : max(hl+20, min(hl+4*int(doff), end))])
			}
		}
	case p.Proto == 17 && hl+9 <= end:
		p.UDPPayload0, p.HasUDPPayload0 = ip[hl+8], true
	}
}
