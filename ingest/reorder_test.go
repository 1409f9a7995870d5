package ingest

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortBufChunks pushes packets with occasional late ones through the chunked
// reorder buffer, with pops interleaved, across many chunk boundaries, and checks
// every pop against a plain slice kept stably sorted by timestamp.
func TestSortBufChunks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hold      int // pop while more than this many are held
		lateEvery int
		lateBy    int64
	}{
		{"in order, window of 3 chunks", 3*chunkLen + 17, 0, 0},
		{"late within 2 chunks", 2*chunkLen + 5, 50, 2 * chunkLen},
		{"late by 1, tiny window", 1, 3, 1},
		{"many equal timestamps", chunkLen / 2, 7, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			var b sortBuf
			var ref []Packet
			ts := int64(0)
			pops := 0
			pop := func() {
				var p Packet
				b.popInto(&p)
				if p != ref[0] {
					t.Fatalf("pop %d: got ts %d index %d, want ts %d index %d", pops, p.Timestamp, p.Index, ref[0].Timestamp, ref[0].Index)
				}
				ref = ref[1:]
				pops++
			}
			for i := 0; i < 12*chunkLen; i++ {
				if tc.lateEvery == 0 || i%tc.lateEvery != 0 || tc.lateBy == 0 {
					ts += int64(rng.IntN(3)) // equal timestamps happen
				}
				pts := ts
				if tc.lateEvery > 0 && i%tc.lateEvery == 0 {
					pts -= rng.Int64N(tc.lateBy + 1)
				}
				q := b.slot()
				*q = Packet{Timestamp: pts, Index: int64(i)}
				b.commit()
				k, _ := slices.BinarySearchFunc(ref, pts+1, func(p Packet, t int64) int { return int(p.Timestamp - t) })
				for k > 0 && ref[k-1].Timestamp > pts {
					k--
				}
				ref = slices.Insert(ref, k, Packet{Timestamp: pts, Index: int64(i)})
				if b.len() != len(ref) {
					t.Fatalf("after push %d: len %d, want %d", i, b.len(), len(ref))
				}
				for b.len() > tc.hold {
					pop()
				}
				if b.len() > 0 && *b.front() != ref[0] {
					t.Fatalf("after push %d: front index %d, want %d", i, b.front().Index, ref[0].Index)
				}
			}
			for b.len() > 0 {
				pop()
			}
			if len(ref) != 0 {
				t.Fatalf("%d packets lost", len(ref))
			}
			if len(b.cs)+len(b.spare) > tc.hold/chunkLen+2 {
				t.Errorf("%d chunks for at most %d packets held", len(b.cs)+len(b.spare), tc.hold+1)
			}
			b.release()
			if len(b.cs) != 0 || len(b.spare) != 0 || b.len() != 0 {
				t.Errorf("release left %d chunks, %d spares, %d packets", len(b.cs), len(b.spare), b.len())
			}
		})
	}
}

// TestSortBufSteadyStateAllocs: a buffer that holds a window of packets and moves
// on allocates nothing once it has its chunks.
func TestSortBufSteadyStateAllocs(t *testing.T) {
	var b sortBuf
	ts := int64(0)
	step := func() {
		ts++
		q := b.slot()
		*q = Packet{Timestamp: ts}
		b.commit()
		if b.len() > 3*chunkLen {
			var p Packet
			b.popInto(&p)
		}
	}
	for i := 0; i < 10*chunkLen; i++ {
		step()
	}
	if a := testing.AllocsPerRun(5*chunkLen, step); a != 0 {
		t.Errorf("%v allocations per packet in steady state, want 0", a)
	}
}
