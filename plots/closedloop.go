package plots

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/tracefabric/tracefabric/internal/units"
)

// CNPBins is a closed-loop run's congestion notifications per time bin: the CNPs DCQCN
// receivers sent and the rate cuts DCQCN senders made.
type CNPBins struct {
	Start    units.Time // start of the first bin (ps)
	BinWidth units.Time // width of every bin (ps), > 0
	CNPs     []float64  // CNPs sent in bin i, >= 0
	RateCuts []float64  // rate cuts in bin i, >= 0 (as many bins as CNPs)
}

var (
	colorCNP     = color.RGBA{0x75, 0x70, 0xb3, 0xff} // purple
	colorRateCut = color.RGBA{0xd9, 0x5f, 0x02, 0xff} // orange
)

// CNPOverTime draws the CNPs and the rate cuts per time bin, one panel each on a
// shared time axis, counts from 0. More than 600 bins are merged into wider ones. It
// returns a NoDataError ("no CNPs or rate cuts") when both are zero everywhere.
func CNPOverTime(c CNPBins, o Options) (*Figure, error) {
	o = o.withDefaults()
	if c.BinWidth <= 0 {
		return nil, fmt.Errorf("plots: %s: BinWidth %d ps must be > 0", NameCNPOverTime, c.BinWidth)
	}
	if len(c.RateCuts) != len(c.CNPs) {
		return nil, fmt.Errorf("plots: %s: %d CNP bins but %d rate-cut bins", NameCNPOverTime, len(c.CNPs), len(c.RateCuts))
	}
	var totals [2]float64
	for k, vals := range [2][]float64{c.CNPs, c.RateCuts} {
		for i, v := range vals {
			if !finite(v) || v < 0 {
				return nil, fmt.Errorf("plots: %s: bin %d: count %v must be finite and >= 0", NameCNPOverTime, i, v)
			}
			totals[k] += v
		}
	}
	if totals[0] == 0 && totals[1] == 0 {
		return nil, noData(NameCNPOverTime, "no CNPs or rate cuts")
	}
	tb := newTimeBins(c.Start, c.BinWidth, len(c.CNPs))
	var grid [][]*plot.Plot
	for k, s := range []struct {
		title, what string
		vals        []float64
		color       color.Color
	}{
		{"CNPs sent by DCQCN receivers", "CNPs", c.CNPs, colorCNP},
		{"rate cuts of DCQCN senders", "rate cuts", c.RateCuts, colorRateCut},
	} {
		xlabel := ""
		if k == 1 {
			xlabel = timeAxisLabel(tb.unit)
		}
		p := newPlot(fmt.Sprintf("%s (%s in all)", s.title, units.FormatNumber(totals[k])), xlabel, s.what+" per "+units.FormatPs(tb.width)+" bin")
		gridLines(p, false)
		p.Add(&stackedBins{edges: tb.edges, tops: [][]float64{tb.sum(s.vals)}, colors: []color.Color{s.color}})
		p.X.Min, p.X.Max = tb.edges[0], tb.edges[tb.n]
		p.Y.Min = 0
		if totals[k] == 0 {
			p.Y.Max = 1
		}
		p.Y.Tick.Marker = niceTicks{n: 5, nonNegative: true}
		grid = append(grid, []*plot.Plot{p})
	}
	o.Height = max(o.Height, 5.5*vg.Inch)
	pg := &page{
		title: "Congestion notifications over time",
		note:  "closed loop: CNPs and DCQCN rate cuts per bin; bin = " + units.FormatPs(tb.width),
		grid:  grid,
	}
	return pg.figure(NameCNPOverTime, o), nil
}
