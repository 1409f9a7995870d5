// Package ipaddr holds the IP addresses of both families as one small value: the
// representation that ingest's packets and five-tuples, the replay's arrivals and
// flow table and the records' rows share (docs/model.md#ipv6).
//
// An Addr is 17 bytes without pointers: the address in its 16-byte IPv6 form (an
// IPv4 address a.b.c.d as the IPv4-mapped ::ffff:a.b.c.d, RFC 4291 2.5.5.2) and its
// family. It is comparable (a map key, a field of a comparable five-tuple), costs no
// allocation to build or copy, and keeps the family apart from the bytes: an IPv6
// packet whose address happens to be ::ffff:10.0.0.1 is not the IPv4 endpoint
// 10.0.0.1. netip.Addr would do the same but holds a pointer (its zone), which the
// per-packet paths (decoding, the reorder buffer, the replay's feed) would then copy
// through the garbage collector's write barriers.
package ipaddr

import (
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
type Addr struct {
	b   [16]byte
	fam Family
}

// From4 returns the IPv4 address a.
func From4(a [4]byte) Addr {
	return Addr{b: [16]byte{10: 0xff, 11: 0xff, 12: a[0], 13: a[1], 14: a[2], 15: a[3]}, fam: IPv4}
}

// From16 returns the IPv6 address a (an IPv4-mapped a stays IPv6).
func From16(a [16]byte) Addr { return Addr{b: a, fam: IPv6} }

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

// As4 returns the 4 bytes of an IPv4 address (the last 4 bytes of an IPv6 one).
func (a Addr) As4() [4]byte { return [4]byte(a.b[12:16]) }

// As16 returns the address in its 16-byte form (IPv4-mapped for IPv4).
func (a Addr) As16() [16]byte { return a.b }

// Bytes returns the address's bytes in network order: 4 for IPv4, 16 for IPv6, none
// for the zero Addr.
func (a Addr) Bytes() []byte {
	switch a.fam {
	case IPv4:
		return a.b[12:16:16]
	case IPv6:
		return a.b[:]
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
		return netip.AddrFrom16(a.b)
	}
	return netip.Addr{}
}

// String returns the dotted quad of an IPv4 address and the RFC 5952 text of an IPv6
// address ("invalid IP" for the zero Addr, as netip).
func (a Addr) String() string { return a.Netip().String() }

// AppendTo appends String's text to b without allocating for IPv4 (netip's
// AppendTo).
func (a Addr) AppendTo(b []byte) []byte {
	if a.fam == 0 {
		return b
	}
	return a.Netip().AppendTo(b)
}

// Compare orders addresses: IPv4 before IPv6, then numerically (the zero Addr
// first). It returns -1, 0 or +1.
func (a Addr) Compare(b Addr) int {
	switch {
	case a.fam < b.fam:
		return -1
	case a.fam > b.fam:
		return 1
	}
	for i := range a.b {
		switch {
		case a.b[i] < b.b[i]:
			return -1
		case a.b[i] > b.b[i]:
			return 1
		}
	}
	return 0
}

// IsMulticast reports whether a is a multicast or broadcast destination, which a
// data-center fabric model does not route (docs/model.md#replay): IPv4 224.0.0.0/4
// and the limited broadcast 255.255.255.255 (a directed broadcast such as
// 10.0.0.255 cannot be told from a host address without its subnet's prefix), IPv6
// ff00::/8.
func (a Addr) IsMulticast() bool {
	switch a.fam {
	case IPv4:
		return a.b[12]&0xF0 == 0xE0 || a.b[12]&a.b[13]&a.b[14]&a.b[15] == 0xFF
	case IPv6:
		return a.b[0] == 0xFF
	}
	return false
}

// Masked returns a with all but its first bits bits cleared (bits counted in its
// family: 0..32 for IPv4, 0..128 for IPv6; clamped to that range).
func (a Addr) Masked(bits int) Addr {
	off := 0
	if a.fam == IPv4 {
		off = 96
	}
	bits = max(0, min(bits, a.BitLen())) + off
	for i := range a.b {
		switch {
		case (i+1)*8 <= bits:
		case i*8 >= bits:
			a.b[i] = 0
		default:
			a.b[i] &= byte(0xFF << (8 - bits%8))
		}
	}
	return a
}
