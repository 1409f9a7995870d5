package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/tracefabric/tracefabric/switchmodel/units"
)

// DelayClass is the one-way delay histogram of one traffic class (delay.arrow).
type DelayClass struct {
	Label   string // e.g. "TC 3 (lossless)"
	Buckets []DelayBucket
}

// DelayBucket counts the packets whose one-way delay was in [Lo, Hi).
type DelayBucket struct {
	Lo, Hi  units.Time
	Packets float64
}

// DelayCDF draws the cumulative distribution of one-way delay per class from its
// histogram: the share of packets with delay up to each bucket's upper edge, on a
// logarithmic time axis in microseconds, with the 99th percentile level marked.
// It returns a NoDataError ("no delivered packets") when no bucket holds packets.
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
		var total float64
		for i, b := range c.Buckets {
			if !finite(b.Packets) || b.Packets < 0 {
				return nil, fmt.Errorf("plots: %s: class %q bucket %d: %v packets must be finite and >= 0",
					NameDelayCDF, c.Label, i, b.Packets)
			}
			if b.Hi <= b.Lo || b.Lo < 0 {
				return nil, fmt.Errorf("plots: %s: class %q bucket %d: [%d, %d) ps is not a valid range",
					NameDelayCDF, c.Label, i, b.Lo, b.Hi)
			}
			if i > 0 && b.Lo < c.Buckets[i-1].Hi {
				return nil, fmt.Errorf("plots: %s: class %q bucket %d: starts at %d ps, before the previous bucket ends (%d ps)",
					NameDelayCDF, c.Label, i, b.Lo, c.Buckets[i-1].Hi)
			}
			total += b.Packets
		}
		if total == 0 {
			continue
		}
		// Skip leading and trailing empty buckets; start the curve at 0% at the
		// first occupied bucket's lower edge (or its upper edge when that is 0 ps,
		// which a log axis cannot show).
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
		leg.Add(fmt.Sprintf("%s: %s packets", safeText(c.Label, 24), countText(total)), l)
		drawn++
	}
	if drawn == 0 {
		return nil, noData(NameDelayCDF, "no delivered packets")
	}
	// Whole decades, so the axis always has labelled ticks.
	p.X.Min = math.Pow(10, math.Floor(math.Log10(xmin)+1e-9))
	p.X.Max = math.Pow(10, math.Ceil(math.Log10(xmax)-1e-9))
	if p.X.Max <= p.X.Min {
		p.X.Max = p.X.Min * 10
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
