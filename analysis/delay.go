package analysis

import (
	"sort"

	"github.com/tracefabric/tracefabric/internal/units"
)

// DelayBucket is one bucket of a one-way delay histogram (a delay.arrow row without
// its class): Packets delivered with a delay in [LoPs, HiPs).
type DelayBucket struct {
	LoPs    units.Time
	HiPs    units.Time
	Packets int64
}

// CDFPoint is one point of a delay CDF: Fraction of the packets had a delay below
// DelayPs.
type CDFPoint struct {
	DelayPs  float64 `json:"delay_ps"`
	Fraction float64 `json:"fraction"`
}

// DelayCDF is the one-way delay distribution of one traffic class. Points holds one
// point at the low edge of the first non-empty bucket (fraction 0) and one at the high
// edge of every non-empty bucket (the exact CDF there); the percentiles are
// interpolated (see DelayQuantile). All delays are ps.
type DelayCDF struct {
	TC      uint8      `json:"tc"`
	Packets int64      `json:"packets"`
	P50Ps   float64    `json:"p50_ps"`
	P90Ps   float64    `json:"p90_ps"`
	P99Ps   float64    `json:"p99_ps"`
	P999Ps  float64    `json:"p999_ps"`
	MaxPs   float64    `json:"max_ps"` // high edge of the last non-empty bucket (an upper bound)
	Points  []CDFPoint `json:"points"`
}

// sortBuckets returns the buckets ordered by LoPs (a copy when not already ordered).
func sortBuckets(b []DelayBucket) []DelayBucket {
	if sort.SliceIsSorted(b, func(i, j int) bool { return b[i].LoPs < b[j].LoPs }) {
		return b
	}
	c := append([]DelayBucket(nil), b...)
	sort.Slice(c, func(i, j int) bool { return c[i].LoPs < c[j].LoPs })
	return c
}

// DelayQuantile returns the p-quantile (0 <= p <= 1) of a bucketed delay distribution,
// in ps. With N packets, the rank r = p*N falls in the first bucket k whose cumulative
// count C_k reaches r; the delay is interpolated linearly inside it (packets assumed
// spread evenly over [lo, hi), as Prometheus' histogram_quantile does):
//
//	q = lo_k + (hi_k - lo_k) * (r - C_{k-1}) / n_k
//
// p = 0 gives the low edge of the first non-empty bucket, p = 1 the high edge of the
// last. An empty histogram gives 0. The error is at most one bucket width.
func DelayQuantile(buckets []DelayBucket, p float64) float64 {
	buckets = sortBuckets(buckets)
	var n int64
	for _, b := range buckets {
		n += b.Packets
	}
	if n == 0 {
		return 0
	}
	p = min(max(p, 0), 1)
	r := p * float64(n)
	var cum int64
	for _, b := range buckets {
		if b.Packets <= 0 {
			continue
		}
		if float64(cum+b.Packets) >= r {
			frac := (r - float64(cum)) / float64(b.Packets)
			return float64(b.LoPs) + float64(b.HiPs-b.LoPs)*frac
		}
		cum += b.Packets
	}
	return float64(buckets[len(buckets)-1].HiPs)
}

// NewDelayCDF builds the CDF of one class from its buckets.
func NewDelayCDF(tc uint8, buckets []DelayBucket) DelayCDF {
	buckets = sortBuckets(buckets)
	c := DelayCDF{TC: tc}
	for _, b := range buckets {
		c.Packets += b.Packets
	}
	if c.Packets == 0 {
		return c
	}
	var cum int64
	for _, b := range buckets {
		if b.Packets <= 0 {
			continue
		}
		if cum == 0 {
			c.Points = append(c.Points, CDFPoint{float64(b.LoPs), 0})
		}
		cum += b.Packets
		c.Points = append(c.Points, CDFPoint{float64(b.HiPs), float64(cum) / float64(c.Packets)})
		c.MaxPs = float64(b.HiPs)
	}
	c.P50Ps = DelayQuantile(buckets, 0.5)
	c.P90Ps = DelayQuantile(buckets, 0.9)
	c.P99Ps = DelayQuantile(buckets, 0.99)
	c.P999Ps = DelayQuantile(buckets, 0.999)
	return c
}

// Len and XY make a DelayCDF a gonum/plot plotter.XYer (x: delay in ps, y: fraction)
// without this package importing plot.
func (c DelayCDF) Len() int { return len(c.Points) }

// XY returns point i (delay ps, cumulative fraction).
func (c DelayCDF) XY(i int) (x, y float64) { return c.Points[i].DelayPs, c.Points[i].Fraction }
