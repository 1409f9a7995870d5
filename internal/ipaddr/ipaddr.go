package ipaddr

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// Family is an address family: IPv4 or IPv6. The zero Family is none (of an invalid
// Addr) or, as a filter, all families.
type Family uint8

// The two families.
const (
	IPv4 Family = 1
	IPv6 Family = 2
)

// Families lists the families in their output order: IPv4 first.
var Families = [2]Family{IPv4, IPv6}

// String returns "ipv4", "ipv6", or "all" for the zero Family (the filter that keeps
// both).
func (f Family) String() string {
	switch f {
	case IPv4:
		return "ipv4"
	case IPv6:
		return "ipv6"
	case 0:
		return "all"
	}
	return fmt.Sprintf("Family(%d)", uint8(f))
}

// Valid reports whether f is IPv4 or IPv6.
func (f Family) Valid() bool { return f == IPv4 || f == IPv6 }

// Index is 0 for IPv4 and 1 for IPv6 (arrays per family).
func (f Family) Index() int { return int(f) - 1 }

// ErrFamily is wrapped by ParseFamily's error.
var ErrFamily = errors.New("unknown address family")

// ParseFamily parses "ipv4", "ipv6" or "all" (the zero Family).
func ParseFamily(s string) (Family, error) {
	switch s {
	case "ipv4":
		return IPv4, nil
	case "ipv6":
		return IPv6, nil
	case "all":
		return 0, nil
	}
	return 0, fmt.Errorf("%q: %w (want ipv4, ipv6 or all)", s, ErrFamily)
}

// Addr is an IPv4 or IPv6 address (see the package documentation). The zero Addr is
// not a valid address.
//
// The 16 bytes are two words, hi and lo, rather than an array: a struct of at most
// four scalar fields lives in registers, so the value methods below (called per
// packet) cost no copy, and the words are stored and loaded whole (a [16]byte field
// is copied through memory, with narrow stores that 16-byte loads cannot forward
// from: a store-forwarding stall per address on the decoder's hot path).
type Addr struct {
	hi, lo uint64 // the 16 bytes, big-endian; IPv4 a.b.c.d: hi 0, lo 0xffff_<a.b.c.d>
	fam    Family
}

// From4 returns the IPv4 address a.
func From4(a [4]byte) Addr { return FromUint32(binary.BigEndian.Uint32(a[:])) }

// FromUint32 returns the IPv4 address whose 4 bytes in network order are v as a
// big-endian number (10.0.0.1 is 0x0a000001).
func FromUint32(v uint32) Addr { return Addr{lo: 0xffff<<32 | uint64(v), fam: IPv4} }

// From16 returns the IPv6 address a (an IPv4-mapped a stays IPv6).
func From16(a [16]byte) Addr { return FromSlice16(a[:]) }

// FromSlice16 returns the IPv6 address in b[0:16] (it panics if b is shorter).
func FromSlice16(b []byte) Addr {
	return Addr{hi: binary.BigEndian.Uint64(b[0:8]), lo: binary.BigEndian.Uint64(b[8:16]), fam: IPv6}
}

// FromNetip converts a netip.Addr: an IPv4 address is IPv4, any other valid address
// IPv6 (its zone dropped). The zero netip.Addr gives the zero Addr.
func FromNetip(a netip.Addr) Addr {
	switch {
	case a.Is4():
		return From4(a.As4())
	case a.Is6():
		return From16(a.As16())
	}
	return Addr{}
}

// ParseAddr parses an IPv4 dotted quad or an IPv6 address (RFC 4291 text; a zone is
// an error).
func ParseAddr(s string) (Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return Addr{}, err
	}
	if a.Zone() != "" {
		return Addr{}, fmt.Errorf("ipaddr: %q: a zone is not an address", s)
	}
	return FromNetip(a), nil
}

// MustParse is ParseAddr that panics on an error (tests and tables).
func MustParse(s string) Addr {
	a, err := ParseAddr(s)
	if err != nil {
		panic(err)
	}
	return a
}

// Family returns the address's family (0 for the zero Addr).
func (a Addr) Family() Family { return a.fam }

// IsValid reports whether a is an address (not the zero Addr).
func (a Addr) IsValid() bool { return a.fam != 0 }

// Is4 reports whether a is an IPv4 address.
func (a Addr) Is4() bool { return a.fam == IPv4 }

// Is6 reports whether a is an IPv6 address.
func (a Addr) Is6() bool { return a.fam == IPv6 }

// Uint32 returns the 4 bytes of an IPv4 address (the last 4 of an IPv6 one) as a
// big-endian number, the inverse of FromUint32.
func (a Addr) Uint32() uint32 { return uint32(a.lo) }

// Words returns the 16 bytes of the address's IPv6 form (IPv4-mapped for IPv4) as
// two big-endian words.
func (a Addr) Words() (hi, lo uint64) { return a.hi, a.lo }

// As4 returns the 4 bytes of an IPv4 address (the last 4 bytes of an IPv6 one).
func (a Addr) As4() (b [4]byte) {
	binary.BigEndian.PutUint32(b[:], uint32(a.lo))
	return b
}

// As16 returns the address in its 16-byte form (IPv4-mapped for IPv4).
func (a Addr) As16() (b [16]byte) {
	binary.BigEndian.PutUint64(b[0:8], a.hi)
	binary.BigEndian.PutUint64(b[8:16], a.lo)
	return b
}

// Bytes returns the address's bytes in network order: 4 for IPv4, 16 for IPv6, none
// for the zero Addr (a new slice).
func (a Addr) Bytes() []byte {
	switch a.fam {
	case IPv4:
		b := a.As4()
		return b[:]
	case IPv6:
		b := a.As16()
		return b[:]
	}
	return nil
}

// BitLen is 32 for IPv4, 128 for IPv6 and 0 for the zero Addr.
func (a Addr) BitLen() int {
	switch a.fam {
	case IPv4:
		return 32
	case IPv6:
		return 128
	}
	return 0
}

// Netip returns a as a netip.Addr (the zero netip.Addr for the zero Addr).
func (a Addr) Netip() netip.Addr {
	switch a.fam {
	case IPv4:
		return netip.AddrFrom4(a.As4())
	case IPv6:
		return netip.AddrFrom16(a.As16())
	}
	return netip.Addr{}
}

// String returns the dotted quad of an IPv4 address and the RFC 5952 text of an IPv6
// address ("invalid IP" for the zero Addr, as netip).
func (a Addr) String() string { return a.Netip().String() }

// AppendTo appends String's text to b without allocating (netip's AppendTo); nothing
// for the zero Addr.
func (a Addr) AppendTo(b []byte) []byte {
	if a.fam == 0 {
		return b
	}
	return a.Netip().AppendTo(b)
}

// Compare orders addresses: IPv4 before IPv6, then numerically (the zero Addr
// first). It returns -1, 0 or +1.
func (a Addr) Compare(b Addr) int {
	if c := cmp.Compare(a.fam, b.fam); c != 0 {
		return c
	}
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	return cmp.Compare(a.lo, b.lo)
}

// IsMulticast reports whether a is a multicast or broadcast destination, which a
// data-center fabric model does not route (docs/model.md#replay): IPv4 224.0.0.0/4
// and the limited broadcast 255.255.255.255 (a directed broadcast such as
// 10.0.0.255 cannot be told from a host address without its subnet's prefix), IPv6
// ff00::/8.
func (a Addr) IsMulticast() bool {
	switch a.fam {
	case IPv4:
		v := uint32(a.lo)
		return v>>28 == 0xE || v == 0xFFFFFFFF
	case IPv6:
		return a.hi>>56 == 0xFF
	}
	return false
}

// Masked returns a with all but its first bits bits cleared (bits counted in its
// family: 0..32 for IPv4, 0..128 for IPv6; clamped to that range).
func (a Addr) Masked(bits int) Addr {
	bits = max(0, min(bits, a.BitLen()))
	if a.fam == IPv4 {
		bits += 96
	}
	switch {
	case bits == 0:
		a.hi, a.lo = 0, 0
	case bits <= 64:
		a.hi &= ^uint64(0) << (64 - bits)
		a.lo = 0
	default:
		a.lo &= ^uint64(0) << (128 - bits)
	}
	return a
}
