package ecmp

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// chiSquareP returns the p-value of the chi-square goodness-of-fit test of counts
// against the uniform distribution.
func chiSquareP(counts []int) float64 {
	total := 0
	for _, c := range counts {
		total += c
	}
	e := float64(total) / float64(len(counts))
	var x float64
	for _, c := range counts {
		d := float64(c) - e
		x += d * d / e
	}
	return distuv.ChiSquared{K: float64(len(counts) - 1)}.Survival(x)
}

// randomFlows returns n flows with uniformly random addresses and ports, TCP or UDP.
func randomFlows(seed uint64, n int) []Key {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	keys := make([]Key, n)
	for i := range keys {
		proto := ProtoTCP
		if r.IntN(2) == 0 {
			proto = ProtoUDP
		}
		u, v := r.Uint32(), r.Uint32()
		keys[i] = MakeKey([4]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)},
			[4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)},
			proto, uint16(r.Uint32()), uint16(r.Uint32()), false)
	}
	return keys
}

func memberCounts(m Method, salt uint32, keys []Key, n int) []int {
	c := make([]int, n)
	for i := range keys {
		c[Member(m, salt, &keys[i], n)]++
	}
	return c
}

// TestDistribution: 100k random flows over 2..16 members are uniform by a chi-square
// test (p > 0.001) for every method. All six are linear maps onto their output
// space, so uniformly random keys give uniform hashes; xor16 included (its weakness
// is structure, TestXor16Structure).
func TestDistribution(t *testing.T) {
	keys := randomFlows(1, 100_000)
	for _, m := range AllMethods {
		t.Run(m.String(), func(t *testing.T) {
			for n := 2; n <= 16; n++ {
				c := memberCounts(m, 0x1234_5678, keys, n)
				if p := chiSquareP(c); p <= 0.001 {
					t.Errorf("n=%d: chi-square p = %.3g <= 0.001, counts %v", n, p, c)
				}
			}
		})
	}
}

// TestXor16Structure pins what xor16 does: it sees only src XOR dst and sport XOR
// dport (16-bit folded), so it is symmetric in direction, maps a whole grid of host
// pairs onto few values, and sends a "shift" permutation (each host of pod 0 to the
// host in the same position in pod 1, same ports: a common collective pattern) to a
// single member, where every other method spreads it.
func TestXor16Structure(t *testing.T) {
	a, b := [4]byte{10, 0, 1, 5}, [4]byte{10, 1, 2, 7}
	fwd := MakeKey(a, b, ProtoUDP, 49152, 4791, false)
	rev := MakeKey(b, a, ProtoUDP, 4791, 49152, false)
	if XOR16.Hash(0, &fwd) != XOR16.Hash(0, &rev) {
		t.Errorf("xor16 is not symmetric: %#x vs %#x", XOR16.Hash(0, &fwd), XOR16.Hash(0, &rev))
	}

	// All-to-all among 128 hosts 10.p.r.h (2 pods x 4 racks x 16), fixed ports.
	host := func(i int) [4]byte { return [4]byte{10, byte(i / 64), byte(i / 16 % 4), byte(i % 16)} }
	var all []Key
	for i := range 128 {
		for j := range 128 {
			if i != j {
				all = append(all, MakeKey(host(i), host(j), ProtoUDP, 49152, 4791, false))
			}
		}
	}
	for _, m := range AllMethods {
		distinct := map[uint32]bool{}
		for i := range all {
			distinct[m.Hash(1, &all[i])] = true
		}
		// Every other method is injective on this set. xor16 sees only src XOR dst,
		// folded into 16 bits: the pod byte (low byte of word 0 / word 2) and the
		// host byte (low byte of word 1 / word 3) land on the same 8 bits (16
		// values), the rack byte on the high 8 (4 values): 64 distinct hashes.
		want := len(all)
		if m == XOR16 {
			want = 64
		}
		if len(distinct) != want {
			t.Errorf("%v: %d distinct hashes over %d all-to-all flows, want %d", m, len(distinct), len(all), want)
		}
	}

	// Shift permutation: host (r, h) of pod 0 to host (r, h) of pod 1. xor16 gives
	// all 64 flows one hash. crc16 (CRC-16/ARC) gives 64 distinct hashes whose two
	// low bits are all equal (the same small delta in src and dst, 4 bytes apart,
	// cancels there), so mod 4 they also share one member: observed, pinned here.
	var shift []Key
	for i := range 64 {
		shift = append(shift, MakeKey(host(i), host(i+64), ProtoUDP, 49152, 4791, false))
	}
	for _, m := range AllMethods {
		distinct := map[uint32]bool{}
		for i := range shift {
			distinct[m.Hash(1, &shift[i])] = true
		}
		used := 0
		for _, c := range memberCounts(m, 1, shift, 4) {
			if c > 0 {
				used++
			}
		}
		wantDistinct, wantUsed := 64, 4
		switch m {
		case XOR16:
			wantDistinct, wantUsed = 1, 1
		case CRC16:
			wantUsed = 1
		}
		if len(distinct) != wantDistinct || used != wantUsed {
			t.Errorf("%v on the shift permutation: %d distinct hashes, %d of 4 members used; want %d, %d",
				m, len(distinct), used, wantDistinct, wantUsed)
		}
	}
}
