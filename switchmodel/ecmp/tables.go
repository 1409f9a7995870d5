package ecmp

import "hash/crc32"

// Every method is affine over GF(2) in the key bytes: for a fixed message length,
//
//	h(k) = c XOR t[0][k[0]] XOR t[1][k[1]] XOR ... XOR t[12][k[12]]
//
// (a CRC is linear in the message plus a constant set by its init and xorout; XOR16
// and Toeplitz are linear). The package precomputes t per method once, so a hash is
// 13 independent table loads and XORs: fast, branch-free and allocation-free. The
// CRC-32 tables are derived from the standard library's hash/crc32 (its
// ChecksumIEEE is not used per packet because it makes its argument escape, i.e.
// would allocate the key on every call); the CRC-16 tables from the byte-wise
// table-driven CRC-16s below, which no standard library package offers.

// keyTable is the per-position table of an affine hash of the 13-byte key.
type keyTable [KeyLen][256]uint32

// hash returns c XOR the contributions of the 13 key bytes.
func (t *keyTable) hash(c uint32, k *Key) uint32 {
	return c ^ t[0][k[0]] ^ t[1][k[1]] ^ t[2][k[2]] ^ t[3][k[3]] ^
		t[4][k[4]] ^ t[5][k[5]] ^ t[6][k[6]] ^ t[7][k[7]] ^ t[8][k[8]] ^
		t[9][k[9]] ^ t[10][k[10]] ^ t[11][k[11]] ^ t[12][k[12]]
}

// saltedLen is the length of the crc32WithSalt message: 4 salt bytes + the key.
const saltedLen = 4 + KeyLen

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

// keyTable returns the per-position table of the CRC of a message that ends with the
// 13-byte key (whatever precedes it only changes the constant).
func (tc *tailCRC) keyTable() *keyTable {
	var kt keyTable
	for i := range KeyLen {
		kt[i] = tc.t[KeyLen-1-i]
	}
	return &kt
}

// saltConst returns the constant of crc32WithSalt for a salt: the CRC of the 4-byte
// big-endian salt followed by 13 zero bytes.
func (tc *tailCRC) saltConst(salt uint32) uint32 {
	return tc.zero[saltedLen] ^ tc.t[saltedLen-1][byte(salt>>24)] ^ tc.t[saltedLen-2][byte(salt>>16)] ^
		tc.t[saltedLen-3][byte(salt>>8)] ^ tc.t[saltedLen-4][byte(salt)]
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

// toeplitzInput maps the 12 Toeplitz input bytes (src IP, dst IP, src port, dst port)
// to their key positions; the protocol byte (8) is not hashed.
var toeplitzInput = [12]int{0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12}

var (
	crc32Tail   *tailCRC // CRC-32/IEEE, messages up to 17 bytes
	arcTail     *tailCRC // CRC-16/ARC, up to 13 bytes
	ccittTail   *tailCRC // CRC-16/CCITT-FALSE, up to 13 bytes
	methodTable [NumMethods]*keyTable
	methodConst [NumMethods]uint32 // unused for CRC32WithSalt (depends on the salt)
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
	crc32Tail = newTailCRC(saltedLen, crc32IEEE)
	arcTail = newTailCRC(KeyLen, func(p []byte) uint32 { return uint32(crc16ARC(p)) })
	ccittTail = newTailCRC(KeyLen, func(p []byte) uint32 { return uint32(crc16CCITTFalse(p)) })

	crcKey := crc32Tail.keyTable()
	methodTable[CRC32], methodConst[CRC32] = crcKey, crc32Tail.zero[KeyLen]
	methodTable[CRC32WithSalt] = crcKey
	methodTable[CRC16], methodConst[CRC16] = arcTail.keyTable(), arcTail.zero[KeyLen]
	methodTable[CRC16CCITT], methodConst[CRC16CCITT] = ccittTail.keyTable(), ccittTail.zero[KeyLen]

	var x keyTable // XOR16: even key bytes are the high byte of a 16-bit word
	for i := range KeyLen {
		for v := range 256 {
			if i%2 == 0 {
				x[i][v] = uint32(v) << 8
			} else {
				x[i][v] = uint32(v)
			}
		}
	}
	methodTable[XOR16] = &x

	var tz keyTable
	for j, pos := range toeplitzInput {
		for v := range 256 {
			var h uint32
			for bit := range 8 {
				if v&(0x80>>bit) != 0 {
					h ^= rssWindow(8*j + bit)
				}
			}
			tz[pos][v] = h
		}
	}
	methodTable[Toeplitz] = &tz
}
