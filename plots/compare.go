package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Quantity says what a metric's values measure, so the figure can choose a unit.
type Quantity int

const (
	// Number is a dimensionless value shown as is (CoV, Jain's index, NMI,
	// max/mean); MetricCI.Unit, when set, is shown on the axis.
	Number Quantity = iota
	// Duration values are picoseconds, shown in ns, us, ms or s.
	Duration
	// Size values are bytes, shown in B, KB or MB.
	Size
	// Share values are fractions in [0, 1], shown in %.
	Share
	// Count values are whole counts (packets, episodes), shown as they are.
	Count
)

// Better says which direction of a metric is better.
type Better int

const (
	NoBetter Better = iota // no preferred direction
	Lower                  // lower values are better (CoV, drops, delay)
	Higher                 // higher values are better (Jain's index)
)

// Comparison holds metrics measured for several hash methods (runs of one trace), or
// runs of one trace that differ otherwise (Title says how; "" means "Hash methods
// compared").
type Comparison struct {
	Title   string
	Metrics []MetricCI
}

// MetricCI is one metric with its value per method and 95% confidence interval.
// Marked is the method drawn as best (in green); "" marks none (a tie, a metric that
// is not ranked, or no method clearly best: the caller decides).
type MetricCI struct {
	Name     string // e.g. "CoV of member bytes (fabric)"
	Quantity Quantity
	Unit     string // for Number and Count, e.g. "packets"; empty: none
	Better   Better
	Marked   string
	Values   []MethodValue
}

// AxisUnit returns how a metric's values are shown on its panel: divided by div, in
// unit. Durations take the unit suiting the largest value or interval bound
// (units.TimeScale), sizes likewise, shares %; a table beside the figure that shows
// the same metric uses it too, so that one quantity has one unit.
func AxisUnit(m MetricCI) (div float64, unit string) {
	peak := 0.0
	for _, v := range m.Values {
		for _, x := range []float64{v.Value, v.Hi} {
			if finite(x) {
				peak = math.Max(peak, math.Abs(x))
			}
		}
	}
	switch m.Quantity {
	case Duration:
		return units.TimeScale(peak)
	case Size:
		return units.ByteScale(peak)
	case Share:
		return 0.01, "%"
	}
	return 1, m.Unit
}

// MethodValue is a metric's value for one method with its 95% confidence interval
// [Lo, Hi]. Lo and Hi are NaN when there is no interval.
type MethodValue struct {
	Method        string
	Value, Lo, Hi float64
}

var (
	colorPoint = color.RGBA{0x37, 0x4a, 0x6d, 0xff} // slate blue
	colorBest  = color.RGBA{0x1b, 0x9e, 0x77, 0xff} // Dark2 teal
)

// HashComparison draws one panel per metric: each method's value as a point with
// its 95% confidence interval as an error bar, the Marked method in green. Panels of
// counts, durations, sizes and shares start at 0. It returns a NoDataError ("no
// metrics to compare") when no metric has a finite value.
func HashComparison(c Comparison, o Options) (*Figure, error) {
	o = o.withDefaults()
	type metric struct {
		m    MetricCI
		best int
	}
	var ms []metric
	for _, m := range c.Metrics {
		ok := false
		for _, v := range m.Values {
			if math.IsInf(v.Value, 0) {
				return nil, fmt.Errorf("plots: %s: metric %q method %q: infinite value",
					NameHashComparison, m.Name, v.Method)
			}
			if finite(v.Lo) && finite(v.Hi) && !(v.Lo <= v.Hi) {
				return nil, fmt.Errorf("plots: %s: metric %q method %q: interval [%v, %v] is reversed",
					NameHashComparison, m.Name, v.Method, v.Lo, v.Hi)
			}
			ok = ok || finite(v.Value)
		}
		if ok {
			ms = append(ms, metric{m: m, best: slices.IndexFunc(m.Values, func(v MethodValue) bool { return m.Marked != "" && v.Method == m.Marked })})
		}
	}
	if len(ms) == 0 {
		return nil, noData(NameHashComparison, "no metrics to compare")
	}
	cols := min(3, len(ms))
	rows := (len(ms) + cols - 1) / cols
	if need := 0.9*vg.Inch + vg.Length(rows)*2.3*vg.Inch; rows > 1 && need > o.Height {
		o.Height = need
	}
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	for k, mt := range ms {
		p, err := comparisonPanel(mt.m, mt.best)
		if err != nil {
			return nil, err
		}
		grid[k/cols][k%cols] = p
	}
	title := c.Title
	if title == "" {
		title = "Hash methods compared"
	}
	pg := &page{
		title: title,
		note:  "points: value; bars: 95% bootstrap confidence interval; green: the best method (none on a tie or an unranked metric)",
		grid:  grid,
	}
	return pg.figure(NameHashComparison, o), nil
}

func comparisonPanel(m MetricCI, best int) (*plot.Plot, error) {
	// Unit of the axis.
	div, unit := AxisUnit(m)
	title := safeText(m.Name, 30)
	switch m.Better {
	case Lower:
		title += "\n(lower is better)"
	case Higher:
		title += "\n(higher is better)"
	}
	ylabel := ""
	if unit != "" {
		ylabel = "value (" + unit + ")"
	}
	p := newPlot(title, "", ylabel)
	p.Title.TextStyle.Font.Size = vg.Points(10)
	gridLines(p, false)

	names := make([]string, len(m.Values))
	var pts, bestPts plotter.XYs
	var errPts plotter.XYs
	var errs plotter.YErrors
	for i, v := range m.Values {
		names[i] = safeText(v.Method, 14)
		if !finite(v.Value) {
			continue
		}
		pt := plotter.XY{X: float64(i), Y: v.Value / div}
		if i == best {
			bestPts = append(bestPts, pt)
		} else {
			pts = append(pts, pt)
		}
		if finite(v.Lo) && finite(v.Hi) {
			errPts = append(errPts, pt)
			errs = append(errs, struct{ Low, High float64 }{
				Low: pt.Y - v.Lo/div, High: v.Hi/div - pt.Y,
			})
		}
	}
	if len(errPts) > 0 {
		eb, err := plotter.NewYErrorBars(struct {
			plotter.XYs
			plotter.YErrors
		}{errPts, errs})
		if err != nil {
			return nil, fmt.Errorf("plots: %s: metric %q: %w", NameHashComparison, m.Name, err)
		}
		eb.LineStyle.Width = vg.Points(1.2)
		eb.LineStyle.Color = colorRef
		eb.CapWidth = vg.Points(8)
		p.Add(eb)
	}
	for _, set := range []struct {
		xys plotter.XYs
		c   color.Color
	}{{pts, colorPoint}, {bestPts, colorBest}} {
		if len(set.xys) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(set.xys)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: metric %q: %w", NameHashComparison, m.Name, err)
		}
		sc.GlyphStyle.Color = set.c
		sc.GlyphStyle.Radius = vg.Points(4)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		p.Add(sc)
	}
	p.NominalX(names...)
	p.X.Tick.Label.Font.Size = vg.Points(8)
	if len(names) > 4 {
		p.X.Tick.Label.Rotation = math.Pi / 4
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YTop
	}
	// Room around the points so end caps and glyphs are not clipped.
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	fromZero := m.Quantity != Number // counts, durations, sizes and shares start at 0
	switch {
	case fromZero:
		p.Y.Min = 0
		p.Y.Max = math.Max(p.Y.Max, 0)
		if p.Y.Max == 0 {
			p.Y.Max = 1
		}
		p.Y.Max *= 1.08
		p.Y.Tick.Marker = niceTicks{n: 6, nonNegative: true}
	case p.Y.Min == p.Y.Max:
		p.Y.Min -= 0.5
		p.Y.Max += 0.5
	default:
		pad := (p.Y.Max - p.Y.Min) * 0.08
		if p.Y.Min >= 0 && p.Y.Min-pad < 0 {
			// A non-negative ratio gets no negative tick labels (the axis still
			// reaches a little below its lowest value so points there are not cut).
			p.Y.Tick.Marker = niceTicks{n: 6, nonNegative: true}
		}
		p.Y.Min -= pad
		p.Y.Max += pad
	}
	return p, nil
}
