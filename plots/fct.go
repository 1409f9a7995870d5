package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Slowdown is the flow completion slowdown (FCT / ideal FCT, >= 1) per flow size
// bucket, one series per transport (or per run when comparing runs).
type Slowdown struct {
	Buckets []string // bucket names, smallest flows first, e.g. "< 9 KB"
	Series  []SlowdownSeries
	// Of names what the buckets hold on the x axis: "flow" (default) or "message".
	Of string
}

// SlowdownSeries is one transport's (or run's) median and 99th percentile slowdown per
// bucket (NaN where no flow of the bucket completed) and how many flows of the bucket
// completed.
type SlowdownSeries struct {
	Label    string
	P50, P99 []float64
	Complete []float64
}

// FCTSlowdown draws the slowdown per size bucket in two panels, the median and the
// 99th percentile, each series a line with a point per bucket where flows completed,
// on a logarithmic axis that starts at 1 (a flow alone in the empty fabric). It
// returns a NoDataError ("no flow completed") when no bucket of any series has a
// value.
func FCTSlowdown(s Slowdown, o Options) (*Figure, error) {
	o = o.withDefaults()
	n := len(s.Buckets)
	top, drawn := 1.0, 0
	for _, sr := range s.Series {
		if len(sr.P50) != n || len(sr.P99) != n || len(sr.Complete) != n {
			return nil, fmt.Errorf("plots: %s: series %q has %d, %d and %d values for %d buckets",
				NameFCTSlowdown, sr.Label, len(sr.P50), len(sr.P99), len(sr.Complete), n)
		}
		any := false
		for b := range n {
			for _, v := range [2]float64{sr.P50[b], sr.P99[b]} {
				if math.IsNaN(v) {
					continue
				}
				if math.IsInf(v, 0) || v <= 0 {
					return nil, fmt.Errorf("plots: %s: series %q bucket %d: slowdown %v must be finite and > 0", NameFCTSlowdown, sr.Label, b, v)
				}
				top = math.Max(top, v)
				any = true
			}
		}
		if any {
			drawn++
		}
	}
	if drawn == 0 {
		return nil, noData(NameFCTSlowdown, "no flow completed")
	}
	lo := 1.0
	for _, sr := range s.Series {
		for b := range n {
			for _, v := range [2]float64{sr.P50[b], sr.P99[b]} {
				if finite(v) {
					lo = math.Min(lo, v)
				}
			}
		}
	}
	// Decades from 1 (or below, for a value under 1) to the decade above the largest.
	ymin := math.Pow(10, math.Floor(math.Log10(lo)+1e-9))
	ymax := math.Pow(10, math.Ceil(math.Log10(top*1.15)-1e-9))
	names := make([]string, n)
	for b, name := range s.Buckets {
		names[b] = safeText(name, 22)
	}
	leg := newLegend()
	var panels []*plot.Plot
	for pi, title := range []string{"median slowdown (p50), log scale", "99th percentile (p99), log scale"} {
		of := s.Of
		if of == "" {
			of = "flow"
		}
		p := newPlot(title, of+" size", "")
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		gridLines(p, false)
		k := 0
		for _, sr := range s.Series {
			vals := sr.P50
			if pi == 1 {
				vals = sr.P99
			}
			var pts plotter.XYs
			for b, v := range vals {
				if finite(v) {
					pts = append(pts, plotter.XY{X: float64(b), Y: v})
				}
			}
			if len(pts) == 0 {
				continue
			}
			// Lines join adjacent buckets only: a bucket without completed flows leaves a gap.
			var line *plotter.Line
			for i := 0; i < len(pts); {
				j := i + 1
				for j < len(pts) && pts[j].X == pts[j-1].X+1 {
					j++
				}
				if j-i > 1 {
					l, err := plotter.NewLine(pts[i:j])
					if err != nil {
						return nil, fmt.Errorf("plots: %s: series %q: %w", NameFCTSlowdown, sr.Label, err)
					}
					l.LineStyle.Color = seriesColor(k)
					l.LineStyle.Dashes = seriesDash(k)
					l.LineStyle.Width = vg.Points(1.5)
					p.Add(l)
					line = l
				}
				i = j
			}
			sc, err := plotter.NewScatter(pts)
			if err != nil {
				return nil, fmt.Errorf("plots: %s: series %q: %w", NameFCTSlowdown, sr.Label, err)
			}
			sc.GlyphStyle.Color = seriesColor(k)
			sc.GlyphStyle.Radius = vg.Points(3.5)
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
			p.Add(sc)
			if pi == 0 {
				var complete float64
				for _, c := range sr.Complete {
					complete += c
				}
				label := fmt.Sprintf("%s (%s completed)", safeText(sr.Label, 20), units.FormatNumber(complete))
				if line != nil {
					leg.Add(label, line, sc)
				} else {
					leg.Add(label, sc)
				}
			}
			k++
		}
		p.NominalX(names...)
		p.X.Tick.Label.Font.Size = vg.Points(8)
		p.X.Tick.Label.Rotation = math.Pi / 8
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop
		p.X.Min, p.X.Max = -0.5, float64(n)-0.5
		p.Y.Min, p.Y.Max = ymin, ymax
		panels = append(panels, p)
	}
	pg := &page{
		title:       "Flow completion slowdown per flow size",
		note:        "slowdown = FCT / FCT alone in the empty fabric (1: not slowed), over the completed flows of each size bucket",
		grid:        [][]*plot.Plot{panels},
		legend:      &leg,
		legendTitle: "flows",
	}
	return pg.figure(NameFCTSlowdown, o), nil
}
