package ecmp

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// randomKeys returns n distinct random TCP keys from a seeded generator.
func randomKeys(n int, seed uint64) []Key {
	r := rand.New(rand.NewPCG(seed, 7))
	seen := map[Key]bool{}
	var out []Key
	for len(out) < n {
		var s, d [4]byte
		for i := range s {
			s[i], d[i] = byte(r.Uint32()), byte(r.Uint32())
		}
		k := MakeKey(s, d, ProtoTCP, uint16(r.Uint32()), uint16(r.Uint32()), false)
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// binomialBounds is the two-sided 99.9% normal-approximation interval of the count
// of successes in n trials of probability p, in counts (z = 3.2905).
func binomialBounds(n int, p float64) (lo, hi float64) {
	sd := math.Sqrt(float64(n) * p * (1 - p))
	return float64(n)*p - 3.2905*sd, float64(n)*p + 3.2905*sd
}

// TestRehashModuloVersusResilient: an 8-member set loses member 5. Under modulo
// hashing the member is the (h mod 7)-th live member, so a flow keeps its member only
// when h mod 8 = live[h mod 7]: by the Chinese remainder theorem (h mod 56 uniform)
// one pair in eight, and 7/8 of the flows move. Under a resilient table only the lost
// member's 32 buckets of 256 move: 1/8 of the flows. Both fractions are checked
// against binomial 99.9% bounds over 4,000 random flows, and SetLive's count against
// the members the flows' next packets take.
func TestRehashModuloVersusResilient(t *testing.T) {
	const flows, n, lost = 4000, 8, 5
	keys := randomKeys(flows, 3)
	for _, tc := range []struct {
		table HashTable
		p     float64
	}{{Modulo, 7.0 / 8}, {Resilient, 1.0 / 8}} {
		t.Run(tc.table.String(), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Salt, cfg.Table = 0x1234, tc.table
			b := mustBalancer(t, cfg)
			set := b.AddSet(n)
			before := make([]int, flows)
			for i := range keys {
				before[i] = b.Select(units.Time(i), set, &keys[i], 0, 100, nil)
			}
			live := []bool{true, true, true, true, true, false, true, true}
			moved := b.SetLive(set, live, 0)
			changed := 0
			for i := range keys {
				m := b.Select(units.Time(flows+i), set, &keys[i], 0, 100, nil)
				if m == lost {
					t.Fatalf("flow %d took the lost member", i)
				}
				if m != before[i] {
					changed++
				} else if before[i] == lost {
					t.Fatalf("flow %d stayed on the lost member", i)
				}
			}
			if int64(changed) != moved {
				t.Errorf("SetLive counted %d moved flows, the next packets changed member for %d", moved, changed)
			}
			lo, hi := binomialBounds(flows, tc.p)
			if float64(changed) < lo || float64(changed) > hi {
				t.Errorf("%d of %d flows changed member, outside [%.0f, %.0f] of p = %.4f", changed, flows, lo, hi, tc.p)
			}
			var in, out int64
			for _, r := range b.Records() {
				in += r.FlowsMovedIn
				out += r.FlowsMovedOut
			}
			if in != moved || out != moved {
				t.Errorf("FlowsMovedIn %d, FlowsMovedOut %d, want %d each", in, out, moved)
			}
			fl, by := b.Rerouted()
			if fl[0] != moved || by[0] != 100*moved {
				t.Errorf("Rerouted: %d flows %d bytes, want %d and %d", fl[0], by[0], moved, 100*moved)
			}
		})
	}
}

// TestResilientTable pins the bucket algorithm of docs/model.md#rehashing on 256
// buckets of 8 members: bucket i starts on member i mod 8; a lost member's 32
// buckets go, in bucket order, to the live member with the fewest (4 or 5 each, 36
// or 37 in all), no other bucket moves; a second loss moves only the second
// member's buckets (its own and those it took); the members' return gives back the
// initial table exactly.
func TestResilientTable(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Table = Resilient
	b := mustBalancer(t, cfg)
	set := b.AddSet(8)
	initial := b.Buckets(set)
	for i, m := range initial {
		if int(m) != i%8 {
			t.Fatalf("bucket %d starts on member %d, want %d", i, m, i%8)
		}
	}
	count := func(tab []int32) []int {
		c := make([]int, 8)
		for _, m := range tab {
			c[m]++
		}
		return c
	}
	live := []bool{true, true, true, false, true, true, true, true}
	b.SetLive(set, live, 0)
	one := b.Buckets(set)
	for i := range one {
		if initial[i] != 3 && one[i] != initial[i] {
			t.Fatalf("bucket %d of live member %d moved to %d", i, initial[i], one[i])
		}
	}
	// The 32 orphans in order go to members 0,1,2,4,5,6,7,0,1,... (fewest, then lowest).
	order := []int32{0, 1, 2, 4, 5, 6, 7}
	k := 0
	for i := range one {
		if initial[i] == 3 {
			if one[i] != order[k%7] {
				t.Fatalf("orphan bucket %d went to %d, want %d", i, one[i], order[k%7])
			}
			k++
		}
	}
	if c := count(one); c[3] != 0 || slices.Max(c) != 37 || c[7] != 36 {
		t.Errorf("bucket counts after the loss %v, want 0 on member 3 and 36 or 37 elsewhere", c)
	}
	live[6] = false
	b.SetLive(set, live, 1)
	two := b.Buckets(set)
	for i := range two {
		if one[i] != 6 && two[i] != one[i] {
			t.Fatalf("second loss moved bucket %d from live member %d", i, one[i])
		}
		if two[i] == 3 || two[i] == 6 {
			t.Fatalf("bucket %d on a lost member", i)
		}
	}
	live[3], live[6] = true, true
	b.SetLive(set, live, 2)
	if got := b.Buckets(set); !slices.Equal(got, initial) {
		t.Errorf("after the return the table differs from the initial one")
	}
}

// TestFlowletAcrossSetChanges: flowlet balancing keeps working when a member is lost:
// a flow on the lost member starts a flowlet on a live member at its next packet even
// within the gap, never takes the lost member, and is counted moved once.
func TestFlowletAcrossSetChanges(t *testing.T) {
	b := mustBalancer(t, flowletConfig())
	set := b.AddSet(4)
	v := newView(0, 0, 0, 0)
	k := keyWithBase(b, 4, 2, 0)
	if m := b.Select(0, set, &k, 0, 64, v); m != 2 {
		t.Fatalf("first packet on %d, want 2 (hash base, all empty)", m)
	}
	moved := b.SetLive(set, []bool{true, true, false, true}, 0)
	if moved != 1 {
		t.Fatalf("moved %d flows, want 1", moved)
	}
	v.occ = []int64{512, 0, 0, 256}
	if m := b.Select(1, set, &k, 0, 64, v); m != 1 {
		t.Fatalf("after the loss, within the gap, the flow took %d, want 1 (least occupied live member)", m)
	}
	if r := rec(b, set, 1); r.FlowsMovedIn != 1 || r.Flowlets != 1 {
		t.Errorf("member 1: FlowsMovedIn %d Flowlets %d, want 1 and 1", r.FlowsMovedIn, r.Flowlets)
	}
	if r := rec(b, set, 2); r.FlowsMovedOut != 1 {
		t.Errorf("member 2: FlowsMovedOut %d, want 1", r.FlowsMovedOut)
	}
	// A new flow whose hash base is the lost member goes to a live one.
	k2 := keyWithBase(b, 4, 2, 1)
	v.occ = []int64{0, 0, 0, 0}
	if m := b.Select(2, set, &k2, 0, 64, v); m == 2 {
		t.Fatal("a new flow took the lost member")
	}
	// Everything lost: no member.
	b.SetLive(set, []bool{false, false, false, false}, 1)
	if m := b.Select(3, set, &k2, 0, 64, v); m != -1 {
		t.Fatalf("with no live member Select = %d, want -1", m)
	}
}
