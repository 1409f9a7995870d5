package plots

import (
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tracefabric/tracefabric/internal/units"
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

// DropsOverTime draws drops per time bin as bars stacked by reason (headroom at
// the bottom). More than 600 bins are merged into wider ones. It returns a
// NoDataError ("no drops") when every count is zero or there are no bins.
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

	// More bins than the figure has pixels for are merged (the figure then says
	// the merged bin width).
	tb := newTimeBins(d.Start, d.BinWidth, bins)
	p := newPlot("", timeAxisLabel(tb.unit), "dropped packets per "+units.FormatPs(tb.width)+" bin")
	gridLines(p, false)

	st := &stackedBins{edges: tb.edges}
	cum := make([]float64, tb.n)
	other := 0
	for _, s := range ss {
		for j, c := range tb.sum(s.counts) {
			cum[j] += c
		}
		st.tops = append(st.tops, slices.Clone(cum))
		var c color.Color
		if s.rank < len(knownReasons) {
			c = knownReasons[s.rank].color
		} else {
			c = seriesColor(4 + other) // past Dark2's first four, used above
			other++
		}
		st.colors = append(st.colors, c)
	}
	p.Add(st)
	leg := newLegend()
	for k := len(ss) - 1; k >= 0; k-- {
		label := safeText(ss[k].reason, 24)
		if ss[k].reason == knownReasons[0].name {
			label += ", lossless" // headroom drops: a PFC sizing failure
		}
		leg.Add(fmt.Sprintf("%s (%s)", label, units.FormatNumber(ss[k].total)), swatch{st.colors[k]})
	}
	p.X.Min, p.X.Max = tb.edges[0], tb.edges[tb.n]
	p.Y.Min = 0

	var total float64
	for _, s := range ss {
		total += s.total
	}
	pg := &page{
		title:       "Drops over time by reason",
		note:        fmt.Sprintf("%s dropped packets, stacked by reason; bin = %s", units.FormatNumber(total), units.FormatPs(tb.width)),
		grid:        [][]*plot.Plot{{p}},
		legend:      &leg,
		legendTitle: "reason (drops)",
	}
	return pg.figure(NameDropsOverTime, o), nil
}

// stackedBins draws stacked bars per time bin: layer k (bottom first) reaches
// tops[k][j] in bin j. Each layer is drawn from zero up to its top, from the
// top layer down, so layers overlap instead of meeting edge to edge; runs of
// equal bins are merged and each bar overlaps its right neighbour by a hairline,
// so no anti-aliasing seam shows between bins. (One polygon per layer would be
// simpler but is quadratic in gonum's PNG rasterizer.)
type stackedBins struct {
	edges  []float64 // n+1 bin edges, data units
	tops   [][]float64
	colors []color.Color
}

func (s *stackedBins) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	overlap := vg.Points(0.4)
	y0 := trY(0)
	for k := len(s.tops) - 1; k >= 0; k-- {
		top := s.tops[k]
		c.SetColor(s.colors[k])
		for j := 0; j < len(top); {
			e := j + 1
			for e < len(top) && top[e] == top[j] {
				e++
			}
			if top[j] > 0 {
				x2 := trX(s.edges[e])
				if e < len(top) && top[e] > 0 {
					x2 += overlap
				}
				c.Fill(rectPath(trX(s.edges[j]), y0, x2, trY(top[j])))
			}
			j = e
		}
	}
}

func (s *stackedBins) DataRange() (xmin, xmax, ymin, ymax float64) {
	if len(s.tops) > 0 {
		ymax = slices.Max(s.tops[len(s.tops)-1])
	}
	return s.edges[0], s.edges[len(s.edges)-1], 0, ymax
}

// swatch is a legend thumbnail: a filled square.
type swatch struct{ color color.Color }

func (w swatch) Thumbnail(c *draw.Canvas) {
	c.SetColor(w.color)
	c.Fill(c.Rectangle.Path())
}
