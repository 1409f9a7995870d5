package plots

import (
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/tracefabric/tracefabric/switchmodel/units"
)

// Drop reasons with a fixed colour and stacking position (bottom first), so
// figures of different runs read alike. Other reasons stack above them in name
// order.
var knownReasons = []struct {
	name  string
	color color.Color
}{
	{"headroom", color.RGBA{0xe4, 0x1a, 0x1c, 0xff}},     // lossless drops: alarm red
	{"egress-limit", color.RGBA{0xd9, 0x5f, 0x02, 0xff}}, // orange
	{"pool-full", color.RGBA{0x75, 0x70, 0xb3, 0xff}},    // purple
	{"oversize", color.RGBA{0x1b, 0x9e, 0x77, 0xff}},     // teal
}

// DropBins holds drop counts per time bin, one series per drop reason.
type DropBins struct {
	Start    units.Time // start of the first bin (ps)
	BinWidth units.Time // width of every bin (ps), > 0
	Reasons  []ReasonCounts
}

// ReasonCounts is the number of dropped packets per bin for one reason. Every
// series of a DropBins has the same number of bins.
type ReasonCounts struct {
	Reason string
	Counts []float64 // dropped packets in bin i, >= 0
}

// DropsOverTime draws drops per time bin as an area stacked by reason. It returns
// a NoDataError ("no drops") when every count is zero or there are no bins.
func DropsOverTime(d DropBins, o Options) (*Figure, error) {
	o = o.withDefaults()
	if d.BinWidth <= 0 {
		return nil, fmt.Errorf("plots: %s: BinWidth %d ps must be > 0", NameDropsOverTime, d.BinWidth)
	}
	bins := -1
	type series struct {
		reason string
		counts []float64
		total  float64
		rank   int
	}
	var ss []series
	for _, r := range d.Reasons {
		if bins >= 0 && len(r.Counts) != bins {
			return nil, fmt.Errorf("plots: %s: reason %q has %d bins, reason %q has %d",
				NameDropsOverTime, r.Reason, len(r.Counts), d.Reasons[0].Reason, bins)
		}
		bins = len(r.Counts)
		var total float64
		for j, c := range r.Counts {
			if !finite(c) || c < 0 {
				return nil, fmt.Errorf("plots: %s: reason %q bin %d: count %v must be finite and >= 0",
					NameDropsOverTime, r.Reason, j, c)
			}
			total += c
		}
		if total == 0 {
			continue
		}
		rank := len(knownReasons)
		for k, kr := range knownReasons {
			if kr.name == r.Reason {
				rank = k
			}
		}
		ss = append(ss, series{reason: r.Reason, counts: r.Counts, total: total, rank: rank})
	}
	if len(ss) == 0 {
		return nil, noData(NameDropsOverTime, "no drops")
	}
	slices.SortStableFunc(ss, func(a, b series) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		if a.reason < b.reason {
			return -1
		}
		if a.reason > b.reason {
			return 1
		}
		return 0
	})

	start := float64(d.Start)
	width := float64(d.BinWidth)
	div, unit := timeScale(width * float64(bins))
	p := newPlot("", "time ("+unit+")", "dropped packets per "+durationText(width)+" bin")
	gridLines(p, false)

	// Cumulative tops, drawn from the top layer down so each area covers the one
	// below only where it is taller: no seams between layers.
	cum := make([]float64, bins)
	layers := make([]*plotter.Line, len(ss))
	other := 0
	for k, s := range ss {
		xys := make(plotter.XYs, bins+1)
		for j := range bins {
			cum[j] += s.counts[j]
			xys[j].X = (start + float64(j)*width) / div
			xys[j].Y = cum[j]
		}
		xys[bins].X = (start + float64(bins)*width) / div
		xys[bins].Y = cum[bins-1]
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", NameDropsOverTime, err)
		}
		l.StepStyle = plotter.PostStep
		var c color.Color
		if s.rank < len(knownReasons) {
			c = knownReasons[s.rank].color
		} else {
			c = seriesColor(4 + other) // past Dark2's first four, used above
			other++
		}
		l.FillColor = c
		l.LineStyle.Width = 0
		layers[k] = l
	}
	leg := newLegend()
	for k := len(layers) - 1; k >= 0; k-- {
		p.Add(layers[k])
		leg.Add(fmt.Sprintf("%s (%s)", safeText(ss[k].reason, 24), countText(ss[k].total)), layers[k])
	}
	p.X.Min = start / div
	p.X.Max = (start + float64(bins)*width) / div
	p.Y.Min = 0

	var total float64
	for _, s := range ss {
		total += s.total
	}
	pg := &page{
		title:       "Drops over time by reason",
		note:        fmt.Sprintf("%s dropped packets, stacked by reason; bin = %s", countText(total), durationText(width)),
		grid:        [][]*plot.Plot{{p}},
		legend:      &leg,
		legendTitle: "reason (drops)",
	}
	return pg.figure(NameDropsOverTime, o), nil
}
