package records

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
)

func TestDelayBucketBounds(t *testing.T) {
	for _, tc := range []struct {
		d, lo, hi int64
		index     int
	}{
		{-5, 0, 1, 0}, {0, 0, 1, 0}, {15, 15, 16, 15}, {16, 16, 17, 16}, {31, 31, 32, 31},
		{32, 32, 34, 32}, {33, 32, 34, 32}, {34, 34, 36, 33},
		{1_000_000, 983_040, 1_015_808, 16*16 + 14}, // 1 us: 2^19 <= d < 2^20, width 2^15: [30*2^15, 31*2^15)
		{math.MaxInt64, 31 << 58, math.MaxInt64, 16*59 + 15},
	} {
		i, lo, hi := DelayBucket(tc.d)
		if i != tc.index || lo != tc.lo || hi != tc.hi {
			t.Errorf("DelayBucket(%d) = %d [%d, %d), want %d [%d, %d)", tc.d, i, lo, hi, tc.index, tc.lo, tc.hi)
		}
	}
}

// TestDelayBucketProperties: buckets are contiguous, hold their values and are at
// most lo/16 wide.
func TestDelayBucketProperties(t *testing.T) {
	prevHi := int64(0)
	for i := range delayBuckets {
		lo, hi := bucketBounds(i)
		if i > 16*59+15 {
			break
		}
		if lo != prevHi || hi <= lo || (lo >= DelaySubBuckets && (hi-lo)*DelaySubBuckets > lo) {
			t.Fatalf("bucket %d [%d, %d) after hi %d", i, lo, hi, prevHi)
		}
		prevHi = hi
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		d := rng.Int64N(1 << uint(rng.IntN(62)+1))
		i, lo, hi := DelayBucket(d)
		if d < lo || d >= hi && hi != math.MaxInt64 {
			t.Fatalf("DelayBucket(%d) = %d [%d, %d) does not hold it", d, i, lo, hi)
		}
		if l2, h2 := bucketBounds(i); l2 != lo || h2 != hi {
			t.Fatalf("bucketBounds(%d) = [%d, %d), DelayBucket said [%d, %d)", i, l2, h2, lo, hi)
		}
	}
}

func TestDelayHistogramRows(t *testing.T) {
	var h DelayHistogram
	h.Add(3, 1_000_000)
	h.Add(3, 1_000_001)
	h.Add(3, 5)
	h.Add(0, 2_000_000)
	h.Add(9, 1) // no such class: ignored
	want := []DelayRow{
		{TC: 0, LoPs: 1_966_080, HiPs: 2_031_616, Packets: 1},
		{TC: 3, LoPs: 5, HiPs: 6, Packets: 1},
		{TC: 3, LoPs: 983_040, HiPs: 1_015_808, Packets: 2},
	}
	if got := h.Rows(nil); !reflect.DeepEqual(got, want) {
		t.Fatalf("Rows = %+v, want %+v", got, want)
	}
	path := filepath.Join(t.TempDir(), DelayFile)
	w, err := NewDelayWriter(path, Dictionaries{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.WriteRows(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows, _, err := ReadAll(OpenDelay(path))
	if err != nil || !reflect.DeepEqual(rows, want) {
		t.Fatalf("read back %+v, %v", rows, err)
	}
}

func BenchmarkDelayHistogramAdd(b *testing.B) {
	var h DelayHistogram
	b.ReportAllocs()
	for i := range b.N {
		h.Add(uint8(i&7), int64(i)*7919)
	}
}
