package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/tracefabric/tracefabric/internal/units"
)

// DelayClass is the one-way delay distribution of one traffic class, given
// either as a histogram (Buckets, as in delay.arrow) or as CDF points.
type DelayClass struct {
	Label   string // e.g. "TC 3 (lossless)"
	Buckets []DelayBucket
	// CDF, used when Buckets is empty: X = delay (ps, > 0, increasing), Y = fraction
	// of packets with delay <= X (in [0, 1], non-decreasing).
	CDF plotter.XYer
	// Packets is the number of packets, shown in the legend; computed from Buckets
	// when they are given.
	Packets float64
}

// DelayBucket counts the packets whose one-way delay was in [Lo, Hi).
type DelayBucket struct {
	Lo, Hi  units.Time
	Packets float64
}

// DelayCDF draws the cumulative distribution of one-way delay per class (from its
// histogram: the share of packets with delay up to each bucket's upper edge; or
// from its CDF points) on a logarithmic time axis in microseconds, with the 99%
// level marked. Classes without packets are left out; it returns a NoDataError
// ("no delivered packets") when no class has any.
func DelayCDF(classes []DelayClass, o Options) (*Figure, error) {
	o = o.withDefaults()
	p := newPlot("", "one-way delay (us, log scale)", "packets with delay <= x (%)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	gridLines(p, true)
	leg := newLegend()
	xmin, xmax := math.Inf(1), math.Inf(-1)
	drawn := 0
	for _, c := range classes {
		xys, total, err := delayPoints(c)
		if err != nil {
			return nil, err
		}
		if len(xys) == 0 {
			continue
		}
		xmin = math.Min(xmin, xys[0].X)
		xmax = math.Max(xmax, xys[len(xys)-1].X)
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: class %q: %w", NameDelayCDF, c.Label, err)
		}
		l.LineStyle.Color = seriesColor(drawn)
		l.LineStyle.Dashes = seriesDash(drawn)
		l.LineStyle.Width = vg.Points(1.8)
		p.Add(l)
		if total > 0 {
			leg.Add(fmt.Sprintf("%s: %s packets", safeText(c.Label, 24), units.FormatNumber(total)), l)
		} else {
			leg.Add(safeText(c.Label, 24), l)
		}
		drawn++
	}
	if drawn == 0 {
		return nil, noData(NameDelayCDF, "no delivered packets")
	}
	// Start at a whole decade; end at one too unless the curves already span two
	// labelled decades, so the axis always has labelled ticks.
	p.X.Min = math.Pow(10, math.Floor(math.Log10(xmin)+1e-9))
	p.X.Max = math.Pow(10, math.Ceil(math.Log10(xmax)-1e-9))
	if p.X.Max <= p.X.Min {
		p.X.Max = p.X.Min * 10
	}
	if xmax*1.05 >= p.X.Min*100 {
		p.X.Max = xmax * 1.05
	}
	p.Y.Min, p.Y.Max = 0, 100
	p99 := plotter.NewFunction(func(float64) float64 { return 99 })
	p99.Color = colorRef
	p99.Width = vg.Points(0.8)
	p99.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
	p.Add(p99)

	pg := &page{
		title:       "One-way delay distribution per traffic class",
		note:        "CDF from the delay histogram's bucket edges; dotted line: 99%",
		grid:        [][]*plot.Plot{{p}},
		legend:      &leg,
		legendTitle: "class",
	}
	return pg.figure(NameDelayCDF, o), nil
}

// delayPoints returns the CDF of a class in us and %, and its packet count; no
// points when the class has no packets.
func delayPoints(c DelayClass) (plotter.XYs, float64, error) {
	if len(c.Buckets) == 0 {
		if c.CDF == nil || c.CDF.Len() == 0 {
			return nil, 0, nil
		}
		xys, err := plotter.CopyXYs(c.CDF)
		if err != nil {
			return nil, 0, fmt.Errorf("plots: %s: class %q: %w", NameDelayCDF, c.Label, err)
		}
		for i, p := range xys {
			if p.X <= 0 || p.Y < 0 || p.Y > 1+1e-9 || (i > 0 && (p.X < xys[i-1].X || p.Y < xys[i-1].Y)) {
				return nil, 0, fmt.Errorf("plots: %s: class %q point %d (%v ps, %v): want delay > 0 and fraction in [0, 1], both non-decreasing",
					NameDelayCDF, c.Label, i, p.X, p.Y)
			}
			xys[i].X = p.X / 1e6
			xys[i].Y = 100 * p.Y
		}
		if xys[len(xys)-1].Y == 0 {
			return nil, 0, nil
		}
		return xys, c.Packets, nil
	}
	var total float64
	for i, b := range c.Buckets {
		if !finite(b.Packets) || b.Packets < 0 {
			return nil, 0, fmt.Errorf("plots: %s: class %q bucket %d: %v packets must be finite and >= 0",
				NameDelayCDF, c.Label, i, b.Packets)
		}
		if b.Hi <= b.Lo || b.Lo < 0 {
			return nil, 0, fmt.Errorf("plots: %s: class %q bucket %d: [%d, %d) ps is not a valid range",
				NameDelayCDF, c.Label, i, b.Lo, b.Hi)
		}
		if i > 0 && b.Lo < c.Buckets[i-1].Hi {
			return nil, 0, fmt.Errorf("plots: %s: class %q bucket %d: starts at %d ps, before the previous bucket ends (%d ps)",
				NameDelayCDF, c.Label, i, b.Lo, c.Buckets[i-1].Hi)
		}
		total += b.Packets
	}
	if total == 0 {
		return nil, 0, nil
	}
	// Skip leading and trailing empty buckets; start the curve at 0% at the first
	// occupied bucket's lower edge (unless that is 0 ps, which a log axis cannot
	// show).
	first, last := 0, len(c.Buckets)-1
	for c.Buckets[first].Packets == 0 {
		first++
	}
	for c.Buckets[last].Packets == 0 {
		last--
	}
	var xys plotter.XYs
	if lo := c.Buckets[first].Lo; lo > 0 {
		xys = append(xys, plotter.XY{X: float64(lo) / 1e6, Y: 0})
	}
	cum := 0.0
	for _, b := range c.Buckets[first : last+1] {
		cum += b.Packets
		xys = append(xys, plotter.XY{X: float64(b.Hi) / 1e6, Y: 100 * cum / total})
	}
	return xys, total, nil
}
