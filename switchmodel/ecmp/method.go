package ecmp

import (
	"errors"
	"fmt"
	"strings"
)

// Method is an ECMP hash method (the switch attribute EcmpHashMethod). The zero value
// is CRC32; DefaultConfig selects CRC32WithSalt, the model's default.
type Method uint8

// The six hash methods, in the order of docs/model.md#ecmp-hashing (also the order of AllMethods).
const (
	CRC32         Method = iota // crc32: CRC-32/IEEE of the key
	CRC32WithSalt               // crc32WithSalt: fmix32 of CRC-32/IEEE of the 4-byte big-endian salt, then the key (default)
	CRC16                       // crc16: CRC-16/ARC of the key
	CRC16CCITT                  // crc16Ccitt: CRC-16/CCITT-FALSE of the key
	XOR16                       // xor16: XOR of the big-endian 16-bit words of the key padded with a zero byte (to 14 or 38 bytes)
	Toeplitz                    // toeplitz: Microsoft RSS Toeplitz hash of src IP, dst IP, src port, dst port

	// NumMethods is the number of hash methods.
	NumMethods = iota
)

// DefaultMethod is the model's default hash method.
const DefaultMethod = CRC32WithSalt

// AllMethods lists every hash method in the order of docs/model.md#ecmp-hashing (for `--hash all`).
var AllMethods = [NumMethods]Method{CRC32, CRC32WithSalt, CRC16, CRC16CCITT, XOR16, Toeplitz}

var methodNames = [NumMethods]string{"crc32", "crc32WithSalt", "crc16", "crc16Ccitt", "xor16", "toeplitz"}

// ErrUnknownMethod is wrapped by the errors of ParseMethod and UnmarshalText.
var ErrUnknownMethod = errors.New("unknown hash method")

// Methods returns a new slice of the six hash methods in the order of docs/model.md#ecmp-hashing.
func Methods() []Method { return append([]Method(nil), AllMethods[:]...) }

// Valid reports whether m is one of the six methods.
func (m Method) Valid() bool { return m < NumMethods }

// Salted reports whether the method uses the switch's salt (only CRC32WithSalt).
func (m Method) Salted() bool { return m == CRC32WithSalt }

// String returns the method's configuration name: crc32, crc32WithSalt, crc16,
// crc16Ccitt, xor16 or toeplitz.
func (m Method) String() string {
	if m.Valid() {
		return methodNames[m]
	}
	return fmt.Sprintf("Method(%d)", uint8(m))
}

// ParseMethod parses a method name. Matching ignores case ("crc16ccitt" is
// accepted); the error names the valid spellings.
func ParseMethod(s string) (Method, error) {
	for i, n := range methodNames {
		if strings.EqualFold(s, n) {
			return Method(i), nil
		}
	}
	return 0, fmt.Errorf("ecmp: EcmpHashMethod %q: %w (valid: %s)", s, ErrUnknownMethod,
		strings.Join(methodNames[:], ", "))
}

// MarshalText implements encoding.TextMarshaler (JSON and YAML carry the name).
func (m Method) MarshalText() ([]byte, error) {
	if !m.Valid() {
		return nil, fmt.Errorf("ecmp: cannot marshal invalid Method(%d)", uint8(m))
	}
	return []byte(methodNames[m]), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *Method) UnmarshalText(b []byte) error {
	v, err := ParseMethod(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Set implements pflag.Value.
func (m *Method) Set(s string) error { return m.UnmarshalText([]byte(s)) }

// Type implements pflag.Value.
func (m *Method) Type() string { return "hashMethod" }

// Hash returns the method's hash of k, as docs/model.md#ecmp-hashing defines it; for CRC32WithSalt the
// salted CRC-32 then passes through the fmix32 finalizer (see the package doc: without
// it the salt cannot de-correlate tiers, as the seed requires). salt is used only by
// CRC32WithSalt. The 16-bit methods (CRC16, CRC16CCITT, XOR16) return values
// below 1<<16. It panics if m is not one of the six methods (a caller bug: names are
// checked by ParseMethod and NewBalancer). It does not allocate.
func (m Method) Hash(salt uint32, k *Key) uint32 {
	if !m.Valid() {
		panic(fmt.Sprintf("ecmp: invalid Method(%d)", uint8(m)))
	}
	a := &methodFn[m]
	if k.IPv6() {
		c := a.c6
		if m == CRC32WithSalt {
			c = crc32Tail.saltConst(salt, saltedLen6)
		}
		return m.finalize(a.t6.hash(c, k))
	}
	c := a.c4
	if m == CRC32WithSalt {
		c = crc32Tail.saltConst(salt, saltedLen)
	}
	return m.finalize(a.t4.hash(c, k))
}

// finalize is the method's output stage: CRC32WithSalt passes the salted CRC through
// fmix32; the other methods return the affine hash unchanged.
func (m Method) finalize(h uint32) uint32 {
	if m == CRC32WithSalt {
		return fmix32(h)
	}
	return h
}

// fmix32 is MurmurHash3's 32-bit finalizer: a non-linear bijection of uint32 whose
// every output bit depends on every input bit.
func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// hasher returns the affine form of the method for a given salt: every method is
// h(k) = c XOR t[0][k[0]] XOR ... XOR t[n-1][k[n-1]] over the key's n bytes (see
// tables.go).
func (m Method) hasher(salt uint32) affine {
	if !m.Valid() {
		panic(fmt.Sprintf("ecmp: invalid Method(%d)", uint8(m)))
	}
	a := methodFn[m]
	if m == CRC32WithSalt {
		a.c4, a.c6 = crc32Tail.saltConst(salt, saltedLen), crc32Tail.saltConst(salt, saltedLen6)
	}
	return a
}

// Member returns the member a set of n members (n > 0) gets under pure hashing:
// m.Hash(salt, k) mod n.
func Member(m Method, salt uint32, k *Key, n int) int {
	return int(m.Hash(salt, k) % uint32(n))
}

// Hop is one ECMP decision on a path: the switch's hash method and salt and the size
// of the equal-cost set it chooses from.
type Hop struct {
	Method  Method
	Salt    uint32
	Members int
}

// PathMembers appends to dst the member that each hop picks for k under
// LoadBalancing None (hash mod set size), in hop order, and returns the extended
// slice. It needs no switch: `replay path` and tests use it. A hop with Members < 1
// appends -1.
func PathMembers(dst []int, k *Key, hops []Hop) []int {
	for _, h := range hops {
		if h.Members < 1 {
			dst = append(dst, -1)
			continue
		}
		dst = append(dst, Member(h.Method, h.Salt, k, h.Members))
	}
	return dst
}

// DefaultSalt is a switch's default HashSalt: CRC-32/IEEE of its name XOR the low
// 32 bits of the run's seed.
func DefaultSalt(switchName string, seed int64) uint32 {
	return crc32IEEE([]byte(switchName)) ^ uint32(seed)
}
