package replay

import "math/bits"

// The one-way delay histogram (delay.arrow) uses log buckets with 8 sub-buckets per
// power of two (each about 9% wide), exact in integer picoseconds: delays below 16 ps
// have one bucket per picosecond; a delay d >= 16 ps with bit length L falls in
// bucket [(8+s)<<(L-4), (9+s)<<(L-4)) where s is the 3 bits below d's top bit.
const delaySub = 8

const delayBuckets = 16 + (64-4)*delaySub

// delayBucket returns the bucket index of d (d < 0 counts as 0).
func delayBucket(d int64) int {
	if d < 16 {
		if d < 0 {
			return 0
		}
		return int(d)
	}
	l := bits.Len64(uint64(d))
	s := int(uint64(d)>>(l-4)) & (delaySub - 1)
	return 16 + (l-5)*delaySub + s
}

// delayBounds returns bucket i's [lo, hi) in picoseconds.
func delayBounds(i int) (lo, hi int64) {
	if i < 16 {
		return int64(i), int64(i) + 1
	}
	l := (i-16)/delaySub + 5
	s := int64((i - 16) % delaySub)
	return (8 + s) << (l - 4), (9 + s) << (l - 4)
}
