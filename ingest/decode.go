package ingest

import (
	"encoding/binary"
	"fmt"
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
	LinkIPv6      LinkType = 229 // raw IPv6 (always skipped as ipv6)
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
// (TSO/GRO captures). Decode fills p's IPv4 fields and CapLen and leaves Timestamp,
// Index and FileIndex alone. It returns OK for an IPv4 packet and otherwise the
// reason the frame is skipped; p is then unspecified. Decode never retains frame
// and never allocates.
//
// Only the outer IPv4 header counts: IPv4 inside GRE, VXLAN, MPLS or ICMP errors is
// not looked at. MPLS (0x8847) is "other-ethertype". The fixed 20-byte IPv4 header
// must be captured; options cut by the snaplen only lose the ports.
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
			return SkipIPv6
		}
		return decodeIPv4(frame, 0, wireLen, p)
	case LinkIPv4:
		return decodeIPv4(frame, 0, wireLen, p)
	case LinkIPv6:
		return SkipIPv6
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
			return SkipIPv6
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
		return SkipIPv6
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
	p.TotalLen = uint16(tl)
	p.DSCP = ip[1] >> 2
	p.ECN = ip[1] & 3
	p.Proto = ip[9]
	p.Fragment = ff&0x2000 != 0 || fragOff != 0
	p.FragOffset = fragOff
	p.Src = [4]byte(ip[12:16])
	p.Dst = [4]byte(ip[16:20])
	p.SrcPort, p.DstPort = 0, 0
	p.IHL = uint8(hl / 4)
	p.TCPDataOffset, p.TCPFlags = 0, 0
	p.UDPPayload0, p.HasUDPPayload0 = 0, false
	if fragOff == 0 && (p.Proto == 6 || p.Proto == 17) {
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
			}
		case p.Proto == 17 && hl+9 <= end:
			p.UDPPayload0, p.HasUDPPayload0 = ip[hl+8], true
		}
	}
	return OK
}
