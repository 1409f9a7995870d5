package records

import "math/bits"

// DelaySubBuckets is the number of delay.arrow buckets per power of two: a bucket
// [lo, hi) is at most lo/16 wide (6.25%), and delays below 16 ps are exact.
const DelaySubBuckets = 16

const (
	subBits      = 4 // log2(DelaySubBuckets)
	delayBuckets = DelaySubBuckets * (64 - subBits + 1)
)

// DelayHistogram counts one-way delays per traffic class in the logarithmic buckets
// of delay.arrow. Add allocates nothing; the zero value is ready to use.
type DelayHistogram struct {
	counts [8][delayBuckets]int64
}

// DelayBucket returns the bucket [lo, hi) holding delay d >= 0 (ps) and its index.
// Buckets are contiguous: bucket i's hi is bucket i+1's lo.
func DelayBucket(d int64) (index int, lo, hi int64) {
	d = max(d, 0)
	if d < DelaySubBuckets {
		index = int(d)
	} else {
		e := bits.Len64(uint64(d)) - 1 // 2^e <= d < 2^(e+1), e >= subBits
		shift := e - subBits
		index = DelaySubBuckets*(shift+1) + int((d>>shift)&(DelaySubBuckets-1))
	}
	lo, hi = bucketBounds(index)
	return index, lo, hi
}

// Add counts one delivered packet of class tc (0..7; other values are ignored) with
// one-way delay d ps (negative delays count as 0).
func (h *DelayHistogram) Add(tc uint8, d int64) {
	if tc < 8 {
		i, _, _ := DelayBucket(d)
		h.counts[tc][i]++
	}
}

// Rows appends to dst the histogram's non-empty buckets as delay.arrow rows, ordered
// by class then lo_ps.
func (h *DelayHistogram) Rows(dst []DelayRow) []DelayRow {
	for tc := range h.counts {
		for i, n := range h.counts[tc] {
			if n == 0 {
				continue
			}
			lo, hi := bucketBounds(i)
			dst = append(dst, DelayRow{TC: uint8(tc), LoPs: lo, HiPs: hi, Packets: n})
		}
	}
	return dst
}

// bucketBounds inverts DelayBucket's index.
func bucketBounds(i int) (lo, hi int64) {
	if i < DelaySubBuckets {
		return int64(i), int64(i) + 1
	}
	shift := i/DelaySubBuckets - 1
	sub := int64(i % DelaySubBuckets)
	lo = (DelaySubBuckets + sub) << shift
	hi = lo + 1<<shift
	if hi < lo { // the last bucket ends past MaxInt64
		hi = 1<<63 - 1
	}
	return lo, hi
}

// WriteRows appends the histogram's rows to w.
func (h *DelayHistogram) WriteRows(w *DelayWriter) error {
	for _, r := range h.Rows(nil) {
		if err := w.Append(&r); err != nil {
			return err
		}
	}
	return nil
}
