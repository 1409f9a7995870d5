package ecmp

import (
	"encoding/binary"
	"net/netip"
)

// Key lengths in bytes: the 13-byte IPv4 key and the 37-byte IPv6 key.
const (
	KeyLen  = 13
	KeyLen6 = 37
)

// Key is the ECMP hash key (docs/model.md#ecmp-hashing), big-endian, of one of two
// lengths:
//
//	IPv4, 13 bytes: src (0-3), dst (4-7), protocol (8), src port (9-10), dst port (11-12)
//	IPv6, 37 bytes: src (0-15), dst (16-31), upper-layer protocol (32), src port (33-34), dst port (35-36)
//
// Build it with MakeKey or MakeKey6 so the port rule is applied. Key is comparable
// and can be used as a map key; the zero Key is the IPv4 key of 13 zero bytes.
type Key struct {
	// b holds the key's bytes (an IPv4 key's bytes 13.. are 0), then 0 in 37 and 38
	// and the family flag in 39 (1 for IPv6): 40 bytes, so Equal compares five
	// words and the hash reads bytes by plain loads.
	b [keySize]byte
}

const (
	keySize = 40
	v6Flag  = keySize - 1 // index of the family flag in Key.b
)

// Protocol numbers whose ports enter the key.
const (
	ProtoTCP uint8 = 6
	ProtoUDP uint8 = 17
)

// MakeKey builds the hash key of an IPv4 packet. The ports are set to 0 for protocols
// other than TCP (6) and UDP (17), and for non-first fragments (fragment offset > 0),
// which carry no transport header; a first fragment (offset 0, more-fragments set)
// keeps its ports.
func MakeKey(src, dst [4]byte, proto uint8, sport, dport uint16, nonFirstFragment bool) Key {
	var k Key
	copy(k.b[0:4], src[:])
	copy(k.b[4:8], dst[:])
	k.b[8] = proto
	if (proto == ProtoTCP || proto == ProtoUDP) && !nonFirstFragment {
		k.b[9], k.b[10] = byte(sport>>8), byte(sport)
		k.b[11], k.b[12] = byte(dport>>8), byte(dport)
	}
	return k
}

// MakeKey6 builds the 37-byte hash key of an IPv6 packet: its addresses, its
// upper-layer protocol (the Next Header that ends the extension headers) and its
// ports, under MakeKey's port rule.
func MakeKey6(src, dst [16]byte, proto uint8, sport, dport uint16, nonFirstFragment bool) Key {
	var k Key
	copy(k.b[0:16], src[:])
	copy(k.b[16:32], dst[:])
	k.b[32] = proto
	if (proto == ProtoTCP || proto == ProtoUDP) && !nonFirstFragment {
		k.b[33], k.b[34] = byte(sport>>8), byte(sport)
		k.b[35], k.b[36] = byte(dport>>8), byte(dport)
	}
	k.b[v6Flag] = 1
	return k
}

// word returns the key's bytes 8i..8i+7 as a little-endian word (i < 5).
func (k *Key) word(i int) uint64 { return binary.LittleEndian.Uint64(k.b[8*i : 8*i+8]) }

// tail returns the key's bytes 16-39 (Balancer keeps the first 16 with the flow).
func (k *Key) tail() keyTail { return keyTail{k.word(2), k.word(3), k.word(4)} }

// keyOfWords is the key whose word(0), word(1) and tail are w0, w1 and t.
func keyOfWords(w0, w1 uint64, t keyTail) Key {
	var k Key
	le := binary.LittleEndian
	le.PutUint64(k.b[0:8], w0)
	le.PutUint64(k.b[8:16], w1)
	le.PutUint64(k.b[16:24], t[0])
	le.PutUint64(k.b[24:32], t[1])
	le.PutUint64(k.b[32:40], t[2])
	return k
}

// Equal reports whether k and o are the same key (k == o, in five word comparisons
// where == on the 40-byte array calls runtime.memequal).
func (k *Key) Equal(o *Key) bool {
	le := binary.LittleEndian
	return le.Uint64(k.b[0:8]) == le.Uint64(o.b[0:8]) &&
		le.Uint64(k.b[8:16]) == le.Uint64(o.b[8:16]) &&
		le.Uint64(k.b[16:24]) == le.Uint64(o.b[16:24]) &&
		le.Uint64(k.b[24:32]) == le.Uint64(o.b[24:32]) &&
		le.Uint64(k.b[32:40]) == le.Uint64(o.b[32:40])
}

// IPv6 reports whether k is an IPv6 key.
func (k *Key) IPv6() bool { return k.b[v6Flag] != 0 }

// Len is the key's length in bytes: KeyLen or KeyLen6.
func (k *Key) Len() int {
	if k.IPv6() {
		return KeyLen6
	}
	return KeyLen
}

// Bytes returns the key's bytes (Len of them), aliasing k.
func (k *Key) Bytes() []byte { return k.b[:k.Len()] }

// addrLen is the length of one address in the key.
func (k *Key) addrLen() int {
	if k.IPv6() {
		return 16
	}
	return 4
}

// Src returns the source address.
func (k *Key) Src() netip.Addr {
	if k.IPv6() {
		return netip.AddrFrom16([16]byte(k.b[0:16]))
	}
	return netip.AddrFrom4([4]byte(k.b[0:4]))
}

// Dst returns the destination address.
func (k *Key) Dst() netip.Addr {
	if k.IPv6() {
		return netip.AddrFrom16([16]byte(k.b[16:32]))
	}
	return netip.AddrFrom4([4]byte(k.b[4:8]))
}

// Proto returns the IP protocol number (IPv6: the upper-layer protocol).
func (k *Key) Proto() uint8 { return k.b[2*k.addrLen()] }

// SrcPort returns the source port (0 where the rule in MakeKey zeroed it).
func (k *Key) SrcPort() uint16 {
	i := 2*k.addrLen() + 1
	return uint16(k.b[i])<<8 | uint16(k.b[i+1])
}

// DstPort returns the destination port (0 where the rule in MakeKey zeroed it).
func (k *Key) DstPort() uint16 {
	i := 2*k.addrLen() + 3
	return uint16(k.b[i])<<8 | uint16(k.b[i+1])
}
