package replay

import "testing"

func TestDelayBuckets(t *testing.T) {
	prevHi := int64(0)
	for i := 0; i < 16+40*delaySub; i++ {
		lo, hi := delayBounds(i)
		if lo != prevHi || hi <= lo {
			t.Fatalf("bucket %d = [%d, %d), previous ended at %d", i, lo, hi, prevHi)
		}
		for _, d := range []int64{lo, hi - 1, (lo + hi) / 2} {
			if got := delayBucket(d); got != i {
				t.Fatalf("delayBucket(%d) = %d, want %d ([%d, %d))", d, got, i, lo, hi)
			}
		}
		if i >= 16 && float64(hi-lo)/float64(lo) > 0.125+1e-12 {
			t.Fatalf("bucket %d [%d,%d) wider than 12.5%%", i, lo, hi)
		}
		prevHi = hi
	}
	if delayBucket(-5) != 0 {
		t.Error("negative delay not in bucket 0")
	}
	if b := delayBucket(1<<62 + 12345); b >= delayBuckets {
		t.Errorf("huge delay bucket %d out of range %d", b, delayBuckets)
	}
}
