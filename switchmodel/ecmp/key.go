package ecmp

// KeyLen is the length of the ECMP hash key in bytes.
const KeyLen = 13

// Key is the 13-byte ECMP hash key, big-endian: source IPv4 address (bytes 0-3),
// destination IPv4 address (4-7), IP protocol (8), source port (9-10) and destination
// port (11-12). Build it with MakeKey so the port rule is applied. Key is comparable
// and can be used as a map key.
type Key [KeyLen]byte

// Protocol numbers whose ports enter the key.
const (
	ProtoTCP uint8 = 6
	ProtoUDP uint8 = 17
)

// MakeKey builds the hash key of a packet. The ports are set to 0 for protocols other
// than TCP (6) and UDP (17), and for non-first fragments (fragment offset > 0), which
// carry no transport header; a first fragment (offset 0, more-fragments set) keeps
// its ports.
func MakeKey(src, dst [4]byte, proto uint8, sport, dport uint16, nonFirstFragment bool) Key {
	var k Key
	copy(k[0:4], src[:])
	copy(k[4:8], dst[:])
	k[8] = proto
	if (proto == ProtoTCP || proto == ProtoUDP) && !nonFirstFragment {
		k[9], k[10] = byte(sport>>8), byte(sport)
		k[11], k[12] = byte(dport>>8), byte(dport)
	}
	return k
}

// Src returns the source IPv4 address.
func (k *Key) Src() [4]byte { return [4]byte(k[0:4]) }

// Dst returns the destination IPv4 address.
func (k *Key) Dst() [4]byte { return [4]byte(k[4:8]) }

// Proto returns the IP protocol number.
func (k *Key) Proto() uint8 { return k[8] }

// SrcPort returns the source port (0 where the rule in MakeKey zeroed it).
func (k *Key) SrcPort() uint16 { return uint16(k[9])<<8 | uint16(k[10]) }

// DstPort returns the destination port (0 where the rule in MakeKey zeroed it).
func (k *Key) DstPort() uint16 { return uint16(k[11])<<8 | uint16(k[12]) }
