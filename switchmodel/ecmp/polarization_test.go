package ecmp

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The plane of docs/model.md#clos-builder (defaults) seen from pod 0: racks rack-p0-r0..3 with 16 hosts
// each (10.0.r.h) pick one of the 4 fabric switches fabric-p0-f0..3 by hash mod 4;
// fabric switch f picks one of the 4 spines of plane f by hash mod 4. Flows go from
// pod 0 hosts to pod 1 hosts (10.1.r.h).

const planeFlows = 40_000

type planeLoad struct {
	up    [4][4]int   // flows on uplink fabric f -> spine s
	pairs [4][4]uint8 // bitmask of spines used by flows of rack r through fabric f
	total int         // flows
}

// choose returns the member (of 4) that switch sw picks for k.
type choose func(sw string, k *Key) int

func runPlane(seed uint64, pick choose) planeLoad {
	r := rand.New(rand.NewPCG(seed, 0x9a1e))
	var pl planeLoad
	for range planeFlows {
		rack := r.IntN(4)
		k := MakeKey([4]byte{10, 0, byte(rack), byte(r.IntN(16))}, [4]byte{10, 1, byte(r.IntN(4)), byte(r.IntN(16))},
			ProtoTCP, uint16(1024+r.IntN(64512)), []uint16{80, 443, 4791, 5201}[r.IntN(4)], false)
		f := pick(fmt.Sprintf("rack-p0-r%d", rack), &k)
		s := pick(fmt.Sprintf("fabric-p0-f%d", f), &k)
		pl.up[f][s]++
		pl.pairs[rack][f] |= 1 << s
		pl.total++
	}
	return pl
}

// TestPolarizationUnsalted: with the same unsalted method at both tiers, every fabric
// switch sends all its up traffic to ONE spine, spine f for fabric f: both tiers
// compute the same function of the same key with the same modulus, so this holds for
// every deterministic unsalted method, including xor16 and toeplitz.
func TestPolarizationUnsalted(t *testing.T) {
	for _, m := range AllMethods {
		if m.Salted() {
			continue
		}
		t.Run(m.String(), func(t *testing.T) {
			pl := runPlane(1, func(_ string, k *Key) int { return Member(m, 0, k, 4) })
			for f := range 4 {
				var used []int
				carried := 0
				for s := range 4 {
					if pl.up[f][s] > 0 {
						used = append(used, s)
					}
					carried += pl.up[f][s]
				}
				if carried == 0 {
					t.Fatalf("fabric-p0-f%d carried no up traffic: %v", f, pl.up)
				}
				if len(used) != 1 || used[0] != f {
					t.Errorf("fabric-p0-f%d up traffic on spines %v, want only spine %d: %v", f, used, f, pl.up)
				}
			}
		})
	}
}

func uplinkSpread(pl planeLoad) (maxDev float64, idle int) {
	mean := float64(pl.total) / 16
	for f := range 4 {
		for s := range 4 {
			d := float64(pl.up[f][s])/mean - 1
			if d < 0 {
				d = -d
			}
			maxDev = max(maxDev, d)
			if pl.up[f][s] == 0 {
				idle++
			}
		}
	}
	return maxDev, idle
}

// TestPolarizationSalted: crc32WithSalt de-correlates adjacent tiers (seed: "salts
// the hash per switch, which de-correlates the choices of adjacent tiers"). Every
// spine uplink of the plane carries a share within 20% of the mean, none is idle,
// and each (rack, fabric) pair spreads over all four spines.
//
// The first subtest pins why the fmix32 stage is needed: a CRC is affine, so the
// salted CRC alone, crc32(salt||key), is the unsalted CRC XOR a constant that only
// depends on the salt. Two switches' CRCs of any key differ by that constant, and
// mod 4 keeps two bits it merely permutes: every (rack, fabric) pair would still use
// one spine, and with the docs/model.md#clos-builder names 8 of the 16 uplinks would stay idle.
func TestPolarizationSalted(t *testing.T) {
	t.Run("salted CRC alone adds a constant", func(t *testing.T) {
		var zero Key
		crc := func(salt uint32, k *Key) uint32 { a := CRC32WithSalt.hasher(salt); return a.hash(k) }
		s1, s2 := DefaultSalt("rack-p0-r1", 1), DefaultSalt("fabric-p0-f2", 1)
		for _, k := range randomFlows(3, 1000) {
			if got, want := crc(s1, &k)^crc(s2, &k), crc(s1, &zero)^crc(s2, &zero); got != want {
				t.Fatalf("key % x: salted CRCs differ by %#x, not the constant %#x", k.Bytes(), got, want)
			}
		}
		pl := runPlane(1, func(sw string, k *Key) int { return int(crc(DefaultSalt(sw, 1), k) % 4) })
		if _, idle := uplinkSpread(pl); idle != 8 {
			t.Errorf("without fmix32: %d idle spine uplinks, want 8", idle)
		}
	})
	for _, seed := range []int64{1, 2, 7, 1 << 40} {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			pl := runPlane(1, func(sw string, k *Key) int {
				return Member(CRC32WithSalt, DefaultSalt(sw, seed), k, 4)
			})
			dev, idle := uplinkSpread(pl)
			t.Logf("uplink flows %v: max deviation from mean %.1f%%, %d idle", pl.up, 100*dev, idle)
			if dev > 0.20 || idle > 0 {
				t.Errorf("max deviation %.1f%% (want <= 20%%), %d idle uplinks", 100*dev, idle)
			}
			for r := range 4 {
				for f := range 4 {
					if n := onesCount(pl.pairs[r][f]); n != 4 {
						t.Errorf("rack-p0-r%d via fabric-p0-f%d used %d spines, want 4", r, f, n)
					}
				}
			}
		})
	}
}

func onesCount(b uint8) int {
	n := 0
	for ; b != 0; b &= b - 1 {
		n++
	}
	return n
}
