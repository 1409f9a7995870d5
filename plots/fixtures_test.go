package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot/plotter"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Deterministic sample inputs shared by the golden, determinism and example tests.

func sampleDrops() DropBins {
	const bins = 60
	d := DropBins{Start: 0, BinWidth: 100 * units.Microsecond}
	mk := func(f func(i int) float64) []float64 {
		c := make([]float64, bins)
		for i := range c {
			c[i] = math.Max(0, math.Round(f(i)))
		}
		return c
	}
	d.Reasons = []ReasonCounts{
		{Reason: "oversize", Counts: mk(func(i int) float64 { return float64(i % 7 / 6) })},
		{Reason: "egress-limit", Counts: mk(func(i int) float64 { return 40 * math.Exp(-math.Pow(float64(i-20)/6, 2)) })},
		{Reason: "pool-full", Counts: mk(func(i int) float64 { return 25 * math.Exp(-math.Pow(float64(i-38)/5, 2)) })},
		{Reason: "headroom", Counts: mk(func(i int) float64 { return 8 * math.Exp(-math.Pow(float64(i-40)/2, 2)) })},
		{Reason: "ttl", Counts: make([]float64, bins)},
	}
	return d
}

// samplePauses has nrows port-classes over 80 bins of 50 us: a storm spreading
// upstream from a few leaf ports, and some rows never paused.
func samplePauses(nrows int) PauseGrid {
	const bins = 80
	g := PauseGrid{Start: 2 * units.Millisecond, BinWidth: 50 * units.Microsecond}
	for r := range nrows {
		row := PauseRow{Node: fmt.Sprintf("leaf%d", r%9), Port: r % 13, TC: 3, Paused: make([]float64, bins)}
		if r%5 == 4 { // never paused
			g.Rows = append(g.Rows, row)
			continue
		}
		onset := 10 + (r*7)%30
		length := 5 + (r*11)%25
		for j := onset; j < min(bins, onset+length); j++ {
			row.Paused[j] = math.Min(1, 0.15+0.85*math.Abs(math.Sin(float64(j*(r+1))/7)))
		}
		g.Rows = append(g.Rows, row)
	}
	return g
}

func sampleBuffers() PoolOccupancy {
	var b PoolOccupancy
	for s := range 10 {
		var xys plotter.XYs
		for i := range 200 {
			t := float64(i) * 10e6 // 10 us samples, ps
			y := float64(s+1) * 40e3 * math.Exp(-math.Pow(float64(i-60-s*9)/(18+float64(s)), 2))
			xys = append(xys, plotter.XY{X: t, Y: math.Round(y)})
		}
		b.Series = append(b.Series, PoolSeries{Node: fmt.Sprintf("spine%d", s%4), Pool: fmt.Sprintf("lossless%d", s/4), Samples: xys})
	}
	b.Series = append(b.Series, PoolSeries{Node: "leaf9", Pool: "idle", Samples: plotter.XYs{{X: 0, Y: 0}, {X: 1e9, Y: 0}}})
	return b
}

func sampleECMP() ECMPLoad {
	var l ECMPLoad
	for s := range 8 {
		n := 4 + 4*(s%3)
		members := make([]string, n)
		bytes := make(plotter.Values, n)
		for m := range n {
			members[m] = fmt.Sprintf("p%d", 32+m)
			bytes[m] = 1e6 * (1 + float64(s%4)*math.Pow(math.Sin(float64(m*(s+3))), 2))
		}
		l.Sets = append(l.Sets, ECMPSet{Node: fmt.Sprintf("leaf%d", s), Set: "0", Members: members, Bytes: bytes})
	}
	return l
}

func sampleComparison() Comparison {
	methods := []string{"crc32", "xor", "toeplitz", "random"}
	mk := func(name string, q Quantity, better Better, base, spread float64) MetricCI {
		m := MetricCI{Name: name, Quantity: q, Better: better}
		for i, meth := range methods {
			v := base * (1 + spread*math.Sin(float64(i*3+1)))
			w := base * spread * 0.2 * float64(i+1) / 2
			m.Values = append(m.Values, MethodValue{Method: meth, Value: v, Lo: v - w, Hi: v + w})
		}
		return m
	}
	cov := mk("CoV of member bytes", Number, Lower, 0.3, 0.5)
	cov.Marked = "xor"
	return Comparison{Metrics: []MetricCI{
		cov,
		mk("Jain's index", Number, Higher, 0.85, 0.1),
		mk("max/mean", Number, Lower, 1.6, 0.3),
		mk("polarization NMI", Number, Lower, 0.2, 0.8),
		mk("drops", Count, Lower, 1200, 0.6),
		mk("p99 one-way delay", Duration, Lower, 85e6, 0.3),
	}}
}

func sampleDelay() []DelayClass {
	var cs []DelayClass
	for tc, c := range []struct {
		label string
		mu    float64
	}{{"TC 0", 2.2}, {"TC 3 (lossless)", 1.6}, {"TC 5", 1.1}, {"TC 6", 0}} {
		dc := DelayClass{Label: c.label}
		lo := units.Time(0)
		for k := range 40 {
			hi := units.Time(math.Round(1e6 * math.Pow(10, float64(k+1)/10))) // 10 buckets per decade from 1 us
			pk := 0.0
			if c.mu > 0 {
				pk = math.Round(1e4 * math.Exp(-math.Pow(float64(k)/10-c.mu, 2)/0.08) * float64(tc+1))
			}
			dc.Buckets = append(dc.Buckets, DelayBucket{Lo: lo, Hi: hi, Packets: pk})
			lo = hi
		}
		cs = append(cs, dc)
	}
	return cs
}

func sampleECN() ECNMarks {
	m := ECNMarks{Start: 0, BinWidth: 200 * units.Microsecond}
	for q := range 30 {
		sent := float64(1000 + 37*q)
		m.Queues = append(m.Queues, QueueMarks{Node: fmt.Sprintf("leaf%d", q%6), Port: q % 11, TC: 3,
			Packets: sent, Marked: math.Round(sent * math.Pow(float64(q%13)/13, 2) * 0.6)})
	}
	for i := range 50 {
		sent := 5000.0
		m.Packets = append(m.Packets, sent)
		m.Marked = append(m.Marked, math.Round(sent*0.3*math.Exp(-math.Pow(float64(i-25)/8, 2))))
	}
	return m
}

func sampleSlowdown() Slowdown {
	nan := math.NaN()
	return Slowdown{
		Buckets: []string{"< MTU (9 KB)", "MTU to BDP", "BDP to 5 BDP", ">= 5 BDP (1.02 MB)"},
		Series: []SlowdownSeries{
			{Label: "open", P50: []float64{1, 1.4, 3.2, 8}, P99: []float64{2.5, 45.9, 60, 120}, Complete: []float64{200, 150, 40, 26}},
			{Label: "dctcp", P50: []float64{1, 1.1, nan, 2.2}, P99: []float64{1.3, 3.5, nan, 4.1}, Complete: []float64{180, 160, 0, 40}},
			{Label: "newreno", P50: []float64{nan, 1.2, nan, nan}, P99: []float64{nan, 9.5, nan, nan}, Complete: []float64{0, 24, 0, 0}},
		},
	}
}

func sampleCNPs() CNPBins {
	const bins = 120
	c := CNPBins{Start: 2 * units.Millisecond, BinWidth: 50 * units.Microsecond, CNPs: make([]float64, bins), RateCuts: make([]float64, bins)}
	for i := range bins {
		c.CNPs[i] = math.Round(60 * math.Exp(-math.Pow(float64(i-30)/12, 2)))
		c.RateCuts[i] = math.Round(0.9 * c.CNPs[i])
	}
	return c
}
