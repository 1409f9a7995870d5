package plots

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tracefabric/tracefabric/internal/units"
)

// NameSweepPrefix starts the name of a sweep figure: sweep_<metric>.
const NameSweepPrefix = "sweep_"

// SweepMetric is one metric of a sweep (`replay sweep`, `analyze DIR`) against the
// sweep's axes: one panel per axis, one line per combination of the other axes.
type SweepMetric struct {
	Name  string // metric name, the figure is sweep_<Name>
	Title string // e.g. "drops"
	// Unit of the values: "ps" values are shown in a time unit; anything else is
	// shown as is and named on the axis ("packets", "ratio").
	Unit   string
	Panels []SweepPanel
}

// SweepPanel is the metric against one axis. X holds the axis values in base units
// (bytes, ps, ...; for a categorical axis their positions 0, 1, ...), Labels the
// same values as the sweep file wrote them: the ticks are at the values and say
// them.
type SweepPanel struct {
	Axis   string
	X      []float64
	Labels []string
	// LineAxes name the other axes, whose values tell the lines apart (none: one
	// line).
	LineAxes []string
	Lines    []SweepLine
}

// SweepLine is one line of a panel: the metric at some of the panel's X (NaN where
// undefined), for one combination of the other axes (Values, one per LineAxes).
type SweepLine struct {
	Values []string
	X, Y   []float64
}

// Sweep draws a sweep metric: per panel, each line's values against the axis, with
// markers at the points, and the combination of the other axes each line holds in
// a legend. It returns a NoDataError when no line has a finite value.
func Sweep(m SweepMetric, o Options) (*Figure, error) {
	o = o.withDefaults()
	name := NameSweepPrefix + m.Name
	if !figureNameOK(name) {
		return nil, fmt.Errorf("plots: sweep metric %q: not usable as a file name", m.Name)
	}
	peak := 0.0
	any := false
	for _, pn := range m.Panels {
		if len(pn.X) != len(pn.Labels) {
			return nil, fmt.Errorf("plots: %s: panel %q: %d values for %d labels", name, pn.Axis, len(pn.X), len(pn.Labels))
		}
		for _, l := range pn.Lines {
			if len(l.X) != len(l.Y) || len(l.Values) != len(pn.LineAxes) {
				return nil, fmt.Errorf("plots: %s: line %q: %d x for %d y, %d values for %d axes", name, l.Values, len(l.X), len(l.Y), len(l.Values), len(pn.LineAxes))
			}
			for _, y := range l.Y {
				if finite(y) {
					peak, any = math.Max(peak, math.Abs(y)), true
				}
			}
		}
	}
	if !any {
		return nil, noData(name, "no point has a value")
	}
	div, unit := 1.0, m.Unit
	if m.Unit == "ps" {
		div, unit = units.TimeScale(peak)
	}
	ylabel := safeText(m.Title, 30)
	if unit != "" {
		ylabel += " (" + unit + ")"
	}
	// One panel: the legend in the right strip, titled by the other axes' names;
	// several: each panel's own inside it (their lines are combinations of different
	// axes), the axes' names in the panel's title. Entries hold the values.
	leg := newLegend()
	entries := 0
	cols := min(2, len(m.Panels))
	rows := (len(m.Panels) + cols - 1) / cols
	if need := 1.2*vg.Inch + vg.Length(rows)*3*vg.Inch; rows > 1 && need > o.Height {
		o.Height = need
	}
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	for k, pn := range m.Panels {
		title := ""
		if len(m.Panels) > 1 && len(pn.LineAxes) > 0 {
			title = safeText("lines: "+strings.Join(pn.LineAxes, ", "), 60)
		}
		p := newPlot(title, safeText(pn.Axis, 40), ylabel)
		gridLines(p, true)
		p.Y.Tick.Marker = niceTicks{n: 6, nonNegative: true}
		var ticks []plot.Tick
		for i, x := range pn.X {
			ticks = append(ticks, plot.Tick{Value: x, Label: safeText(pn.Labels[i], 12)})
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range pn.X {
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
		if lo > 0 && hi/lo >= 16 {
			p.X.Scale = plot.LogScale{}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		if len(ticks) > 5 {
			p.X.Tick.Label.Rotation = math.Pi / 6
			p.X.Tick.Label.XAlign = draw.XRight
		}
		ymax := math.Inf(-1)
		for i, l := range pn.Lines {
			var xys plotter.XYs
			for k, y := range l.Y {
				if finite(y) {
					xys = append(xys, plotter.XY{X: l.X[k], Y: y / div})
					ymax = math.Max(ymax, y/div)
				}
			}
			if len(xys) == 0 {
				continue
			}
			ln, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, fmt.Errorf("plots: %s: line %q: %w", name, l.Values, err)
			}
			ln.LineStyle.Color = seriesColor(i)
			ln.LineStyle.Dashes = seriesDash(i)
			ln.LineStyle.Width = vg.Points(1.6)
			pts.GlyphStyle.Color = seriesColor(i)
			pts.GlyphStyle.Radius = vg.Points(2.5)
			pts.GlyphStyle.Shape = draw.CircleGlyph{}
			p.Add(ln, pts)
			if len(l.Values) > 0 {
				label := safeText(strings.Join(l.Values, ", "), 32)
				if len(m.Panels) == 1 {
					leg.Add(label, ln, pts)
					entries++
				} else {
					p.Legend.Add(label, ln, pts)
				}
			}
		}
		if p.Y.Min > 0 {
			p.Y.Min = 0 // counts and times: from zero, so that "none" reads as the axis
		}
		if len(m.Panels) > 1 && len(pn.Lines) > 1 {
			// Room above the lines for the legend inside the panel.
			p.Legend.Left = false
			p.Legend.TextStyle.Font.Size = vg.Points(8)
			if finite(ymax) {
				p.Y.Max = math.Max(p.Y.Max, ymax*(1+0.09*float64(len(pn.Lines))))
			}
		}
		if lo == hi {
			p.X.Min, p.X.Max = lo-0.5, hi+0.5
		}
		if p.Y.Max <= p.Y.Min {
			p.Y.Max = p.Y.Min + 1
		}
		grid[k/cols][k%cols] = p
	}
	pg := &page{
		title: "Sweep: " + safeText(m.Title, 60),
		note:  "one line per combination of the other axes; a point per run",
		grid:  grid,
	}
	if entries > 0 {
		pg.legend, pg.legendTitle = &leg, safeText(strings.Join(m.Panels[0].LineAxes, ", "), 40)
	}
	return pg.figure(name, o), nil
}

// figureNameOK reports whether name can be a figure file's base name (the report's
// rule: lower-case letters, digits, '_' and '-').
func figureNameOK(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
