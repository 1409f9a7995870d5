package ecmp

import "hash/crc32"

// Every method is affine over GF(2) in the key bytes: for a fixed message length,
//
//	h(k) = c XOR t[0][k[0]] XOR t[1][k[1]] XOR ... XOR t[n-1][k[n-1]]
//
// (a CRC is linear in the message plus a constant set by its init and xorout; XOR16
// and Toeplitz are linear). The package precomputes t per method and key length (13
// bytes for IPv4, 37 for IPv6) once, so a hash is 13 (or 37) independent table loads
// and XORs: fast, branch-free and allocation-free. The CRC-32 tables are derived from
// the standard library's hash/crc32 (its ChecksumIEEE is not used per packet because
// it makes its argument escape, i.e. would allocate the key on every call); the
// CRC-16 tables from the byte-wise table-driven CRC-16s below, which no standard
// library package offers.

// keyTable is the per-position table of an affine hash of the 13-byte IPv4 key.
type keyTable [KeyLen][256]uint32

// hash returns c XOR the contributions of the 13 key bytes.
func (t *keyTable) hash(c uint32, k *Key) uint32 {
	return c ^ t[0][k.b[0]] ^ t[1][k.b[1]] ^ t[2][k.b[2]] ^ t[3][k.b[3]] ^
		t[4][k.b[4]] ^ t[5][k.b[5]] ^ t[6][k.b[6]] ^ t[7][k.b[7]] ^ t[8][k.b[8]] ^
		t[9][k.b[9]] ^ t[10][k.b[10]] ^ t[11][k.b[11]] ^ t[12][k.b[12]]
}

// keyTable6 is the per-position table of an affine hash of the 37-byte IPv6 key.
type keyTable6 [KeyLen6][256]uint32

// hash returns c XOR the contributions of the 37 key bytes.
func (t *keyTable6) hash(c uint32, k *Key) uint32 {
	for i := range KeyLen6 {
		c ^= t[i][k.b[i]]
	}
	return c
}

// affine is a method's affine form for one salt, for keys of both lengths.
type affine struct {
	t4 *keyTable
	c4 uint32
	t6 *keyTable6
	c6 uint32
}

// hash returns the affine hash of k (before the method's finalizer). Both lengths'
// lookups are written out here: a leaf function, without the stack frame that a call
// to keyTable6.hash would add to every IPv4 hash.
func (a *affine) hash(k *Key) uint32 {
	if k.IPv6() {
		t, c := a.t6, a.c6
		for i := range KeyLen6 {
			c ^= t[i][k.b[i]]
		}
		return c
	}
	t := a.t4
	return a.c4 ^ t[0][k.b[0]] ^ t[1][k.b[1]] ^ t[2][k.b[2]] ^ t[3][k.b[3]] ^
		t[4][k.b[4]] ^ t[5][k.b[5]] ^ t[6][k.b[6]] ^ t[7][k.b[7]] ^ t[8][k.b[8]] ^
		t[9][k.b[9]] ^ t[10][k.b[10]] ^ t[11][k.b[11]] ^ t[12][k.b[12]]
}

// saltedLen and saltedLen6 are the lengths of the crc32WithSalt message: 4 salt bytes
// + the key.
const (
	saltedLen  = 4 + KeyLen
	saltedLen6 = 4 + KeyLen6
)

// tailCRC is a CRC of messages of at most len(zero)-1 bytes in affine form.
type tailCRC struct {
	t    [][256]uint32 // t[d][v]: linear contribution of byte v followed by d more bytes
	zero []uint32      // zero[n]: the CRC of n zero bytes
}

// newTailCRC tabulates crc (any CRC) for messages up to maxLen bytes. A CRC's linear
// part ignores leading zero bytes, so a byte's contribution depends only on how many
// bytes follow it.
func newTailCRC(maxLen int, crc func([]byte) uint32) *tailCRC {
	tc := &tailCRC{t: make([][256]uint32, maxLen), zero: make([]uint32, maxLen+1)}
	buf := make([]byte, maxLen)
	for n := 0; n <= maxLen; n++ {
		tc.zero[n] = crc(buf[:n])
	}
	for d := 0; d < maxLen; d++ {
		for v := 0; v < 256; v++ {
			buf[0] = byte(v)
			tc.t[d][v] = crc(buf[:d+1]) ^ tc.zero[d+1]
		}
		buf[0] = 0
	}
	return tc
}

// sum returns the CRC of p from the tables; len(p) must not exceed the maxLen the
// tables were built for.
func (tc *tailCRC) sum(p []byte) uint32 {
	h := tc.zero[len(p)]
	for i, b := range p {
		h ^= tc.t[len(p)-1-i][b]
	}
	return h
}

// keyTables return the per-position tables of the CRC of a message that ends with the
// 13-byte (IPv4) or 37-byte (IPv6) key (whatever precedes it only changes the
// constant).
func (tc *tailCRC) keyTable() *keyTable {
	var kt keyTable
	for i := range KeyLen {
		kt[i] = tc.t[KeyLen-1-i]
	}
	return &kt
}

func (tc *tailCRC) keyTable6() *keyTable6 {
	var kt keyTable6
	for i := range KeyLen6 {
		kt[i] = tc.t[KeyLen6-1-i]
	}
	return &kt
}

// saltConst returns the constant of crc32WithSalt for a salt and a message of n
// bytes (saltedLen or saltedLen6): the CRC of the 4-byte big-endian salt followed by
// n-4 zero bytes.
func (tc *tailCRC) saltConst(salt uint32, n int) uint32 {
	return tc.zero[n] ^ tc.t[n-1][byte(salt>>24)] ^ tc.t[n-2][byte(salt>>16)] ^
		tc.t[n-3][byte(salt>>8)] ^ tc.t[n-4][byte(salt)]
}

func crc32IEEE(p []byte) uint32 { return crc32.ChecksumIEEE(p) }

// Byte-wise table-driven CRC-16s (the references the key tables are built from).
var arcTable, ccittTable [256]uint16

// crc16ARC is CRC-16/ARC (Broadcom "BISYNC"): poly 0x8005 reflected (0xA001), init 0,
// reflected in and out, xorout 0. Check("123456789") = 0xBB3D.
func crc16ARC(p []byte) uint16 {
	var c uint16
	for _, b := range p {
		c = c>>8 ^ arcTable[byte(c)^b]
	}
	return c
}

// crc16CCITTFalse is CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, not reflected,
// xorout 0. Check("123456789") = 0x29B1.
func crc16CCITTFalse(p []byte) uint16 {
	c := uint16(0xFFFF)
	for _, b := range p {
		c = c<<8 ^ ccittTable[byte(c>>8)^b]
	}
	return c
}

// rssKey is Microsoft's standard 40-byte RSS secret key.
var rssKey = [40]byte{
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
	0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
	0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
}

// rssWindow returns the 32 bits of rssKey starting at bit p (bit 0 = MSB of byte 0).
func rssWindow(p int) uint32 {
	var w uint32
	for i := range 32 {
		if q := p + i; rssKey[q/8]&(0x80>>(q%8)) != 0 {
			w |= 1 << (31 - i)
		}
	}
	return w
}

// toeplitzInput maps the Toeplitz input bytes (src IP, dst IP, src port, dst port) to
// their key positions; the protocol byte (8 in an IPv4 key, 32 in an IPv6 key) is
// not hashed.
var (
	toeplitzInput  = [12]int{0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12}
	toeplitzInput6 = func() (in [36]int) {
		for j := range in {
			in[j] = j
			if j >= 32 {
				in[j] = j + 1
			}
		}
		return in
	}()
)

var (
	crc32Tail *tailCRC // CRC-32/IEEE, messages up to 41 bytes (salt and IPv6 key)
	arcTail   *tailCRC // CRC-16/ARC, up to 37 bytes
	ccittTail *tailCRC // CRC-16/CCITT-FALSE, up to 37 bytes
	// methodFn is each method's affine form; CRC32WithSalt's constants depend on the
	// salt (Method.hasher).
	methodFn [NumMethods]affine
	// crcIndex is the unsalted CRC-32 without its constant, the balancer's flow
	// index hash for the 16-bit methods.
	crcIndex affine
)

func init() {
	for i := range 256 {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xA001
			} else {
				c >>= 1
			}
		}
		arcTable[i] = c
		c = uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		ccittTable[i] = c
	}
	crc32Tail = newTailCRC(saltedLen6, crc32IEEE)
	arcTail = newTailCRC(KeyLen6, func(p []byte) uint32 { return uint32(crc16ARC(p)) })
	ccittTail = newTailCRC(KeyLen6, func(p []byte) uint32 { return uint32(crc16CCITTFalse(p)) })

	crcKey, crcKey6 := crc32Tail.keyTable(), crc32Tail.keyTable6()
	methodFn[CRC32] = affine{crcKey, crc32Tail.zero[KeyLen], crcKey6, crc32Tail.zero[KeyLen6]}
	methodFn[CRC32WithSalt] = affine{t4: crcKey, t6: crcKey6}
	crcIndex = affine{t4: crcKey, t6: crcKey6}
	methodFn[CRC16] = affine{arcTail.keyTable(), arcTail.zero[KeyLen], arcTail.keyTable6(), arcTail.zero[KeyLen6]}
	methodFn[CRC16CCITT] = affine{ccittTail.keyTable(), ccittTail.zero[KeyLen], ccittTail.keyTable6(), ccittTail.zero[KeyLen6]}

	// XOR16: the key padded with a zero byte to 14 (38) bytes; even key bytes are the
	// high byte of a 16-bit word.
	xorRow := func(i, v int) uint32 {
		if i%2 == 0 {
			return uint32(v) << 8
		}
		return uint32(v)
	}
	var x keyTable
	var x6 keyTable6
	for v := range 256 {
		for i := range KeyLen {
			x[i][v] = xorRow(i, v)
		}
		for i := range KeyLen6 {
			x6[i][v] = xorRow(i, v)
		}
	}
	methodFn[XOR16] = affine{t4: &x, t6: &x6}

	// Toeplitz: input byte j, bit b (MSB first) XORs in the key window at bit 8j+b.
	toeplitzRow := func(j, v int) uint32 {
		var h uint32
		for bit := range 8 {
			if v&(0x80>>bit) != 0 {
				h ^= rssWindow(j*8 + bit)
			}
		}
		return h
	}
	var tz keyTable
	var tz6 keyTable6
	for v := range 256 {
		for j, pos := range toeplitzInput {
			tz[pos][v] = toeplitzRow(j, v)
		}
		for j, pos := range toeplitzInput6 {
			tz6[pos][v] = toeplitzRow(j, v)
		}
	}
	methodFn[Toeplitz] = affine{t4: &tz, t6: &tz6}
}
