package plots

import (
	"cmp"
	"fmt"
	"image/color"
	"slices"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/brewer"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tracefabric/tracefabric/internal/units"
)

// DefaultMaxPauseRows is the number of port-classes a pause timeline shows when
// PauseGrid.MaxRows is zero.
const DefaultMaxPauseRows = 40

// PauseGrid is the paused fraction of each time bin for each port-class that
// received PFC pauses.
type PauseGrid struct {
	Start    units.Time // start of the first bin (ps)
	BinWidth units.Time // width of every bin (ps), > 0
	Rows     []PauseRow
	// MaxRows caps the rows drawn: the port-classes with the most paused time are
	// kept and the figure says "top N of M". Zero: DefaultMaxPauseRows.
	MaxRows int
	// Total is the number of paused port-classes when Rows holds only the most paused
	// of them (the figure then says "top N of Total"); 0: Rows are all of them.
	Total int
}

// PauseRow is one paused port-class: the fraction of each bin, in [0, 1], during
// which its transmission of class TC was paused. Every row of a PauseGrid has the
// same number of bins.
type PauseRow struct {
	Node     string
	Port, TC int
	Paused   []float64
}

// Label is "node:port/tcN".
func (r PauseRow) Label() string { return fmt.Sprintf("%s:%d/tc%d", r.Node, r.Port, r.TC) }

// pauseColors maps a paused percentage (0 to 100) to light yellow through dark
// red (ColorBrewer YlOrRd with luminance interpolated linearly, so equal steps
// look equal).
var pauseColors = sync.OnceValues(func() (palette.ColorMap, error) {
	p, err := brewer.GetPalette(brewer.TypeSequential, "YlOrRd", 9)
	if err != nil {
		return nil, err
	}
	// From the second colour: the first (#ffffcc) is too close to white for a
	// briefly paused cell to show.
	cs := slices.Clone(p.Colors()[1:])
	slices.Reverse(cs) // dark to light: increasing luminance, as NewLuminance wants
	cm, err := moreland.NewLuminance(cs)
	if err != nil {
		return nil, err
	}
	cm = palette.Reverse(cm)
	cm.SetMin(0)
	cm.SetMax(100)
	return cm, nil
})

// PFCPauseTimeline draws a heatmap of paused port-classes (rows, most paused at
// the top) by time bin, coloured by the paused fraction of the bin, with a colour
// bar. More than 600 bins are merged into wider ones. Rows never paused are left out; past MaxRows the least paused are left out
// and the figure says so. It returns a NoDataError ("no PFC pauses") when no row
// was paused.
func PFCPauseTimeline(g PauseGrid, o Options) (*Figure, error) {
	o = o.withDefaults()
	if g.BinWidth <= 0 {
		return nil, fmt.Errorf("plots: %s: BinWidth %d ps must be > 0", NamePFCPauseTimeline, g.BinWidth)
	}
	maxRows := g.MaxRows
	if maxRows <= 0 {
		maxRows = DefaultMaxPauseRows
	}
	type row struct {
		label  string
		paused []float64
		total  float64
	}
	bins := -1
	var rows []row
	for i, r := range g.Rows {
		if bins >= 0 && len(r.Paused) != bins {
			return nil, fmt.Errorf("plots: %s: row %s has %d bins, row %s has %d",
				NamePFCPauseTimeline, r.Label(), len(r.Paused), g.Rows[0].Label(), bins)
		}
		bins = len(r.Paused)
		var total float64
		for j, v := range r.Paused {
			if !finite(v) || v < 0 || v > 1+1e-9 {
				return nil, fmt.Errorf("plots: %s: row %s bin %d: paused fraction %v must be in [0, 1]",
					NamePFCPauseTimeline, r.Label(), j, v)
			}
			total += v
		}
		if total > 0 {
			rows = append(rows, row{label: safeText(g.Rows[i].Label(), 34), paused: r.Paused, total: total})
		}
	}
	if len(rows) == 0 {
		return nil, noData(NamePFCPauseTimeline, "no PFC pauses")
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		if c := cmp.Compare(b.total, a.total); c != 0 {
			return c
		}
		return cmp.Compare(a.label, b.label)
	})
	all := max(len(rows), g.Total)
	if len(rows) > maxRows {
		rows = rows[:maxRows]
	}
	cm, err := pauseColors()
	if err != nil {
		return nil, fmt.Errorf("plots: %s: colour map: %w", NamePFCPauseTimeline, err)
	}

	// More bins than the figure has pixels for are merged: a merged cell shows
	// the paused fraction of the merged bin.
	tb := newTimeBins(g.Start, g.BinWidth, bins)
	p := newPlot("", timeAxisLabel(tb.unit), "")
	cells := &cellGrid{edges: tb.edges, cmap: cm}
	n := len(rows)
	ticks := make([]plot.Tick, n)
	for r, rw := range rows {
		cells.rows = append(cells.rows, tb.mean(rw.paused))
		ticks[r] = plot.Tick{Value: float64(n-r) - 0.5, Label: rw.label}
	}
	p.Add(cells)
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Length = vg.Points(3)
	if n > 24 {
		p.Y.Tick.Label.Font.Size = vg.Points(7)
	}
	p.Y.Min, p.Y.Max = 0, float64(n)
	p.Y.Padding = 0
	p.X.Padding = 0
	p.X.Min, p.X.Max = tb.edges[0], tb.edges[tb.n]

	// A taller page when there are many rows, so labels stay legible.
	rowH := vg.Points(10)
	if need := vg.Inch*1.7 + vg.Length(n)*rowH; need > o.Height {
		o.Height = need
	}

	note := fmt.Sprintf("%s paused port-classes", units.FormatNumber(float64(all)))
	if all > n {
		note = fmt.Sprintf("top %s of %s paused port-classes, by paused time", units.FormatNumber(float64(n)), units.FormatNumber(float64(all)))
	}
	note += "; bin = " + units.FormatPs(tb.width)
	pg := &page{
		title:       "PFC pause timeline (rows: paused node:port/tc)",
		note:        note,
		grid:        [][]*plot.Plot{{p}},
		legendTitle: "",
		sideWidth:   colorBarWidth(pauseBarLabel),
		side: func(strip, data draw.Canvas) {
			colorBar(strip, data, cm, pauseBarLabel)
		},
	}
	return pg.figure(NamePFCPauseTimeline, o), nil
}

const pauseBarLabel = "paused\n(% of bin)"

func colorBarHead() text.Style {
	head := textStyle(fontSansBold, sizeLegend, colorText)
	head.XAlign, head.YAlign = draw.XLeft, draw.YTop
	return head
}

// colorBarWidth is the strip width a colour bar with this label needs.
func colorBarWidth(label string) vg.Length {
	return max(colorBarHead().Width(label), vg.Points(44))
}

// colorBar draws a vertical colour bar for cm in the strip, as tall as the data
// area, with its label above.
func colorBar(strip, data draw.Canvas, cm palette.ColorMap, label string) {
	head := colorBarHead()
	strip.FillText(head, vg.Point{X: strip.Min.X, Y: data.Max.Y}, label)
	top := data.Max.Y - head.Height(label) - vg.Points(6)

	cb := newPlot("", "", "")
	cb.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true, Colors: 256})
	cb.HideX()
	cb.Y.Tick.Marker = niceTicks{n: 6}
	cb.Y.Padding = 0
	cb.Y.Tick.Length = vg.Points(3)
	c := strip
	c.Max.Y = top
	c.Min.Y = data.Min.Y
	c.Max.X = c.Min.X + vg.Points(42)
	// Tick labels on the left; keep the bar itself 12 pt wide at the right.
	cb.Draw(c)
}

// cellGrid draws rows of coloured cells (row 0 at the top) as vector rectangles.
// Runs of cells of the same colour are merged, zero cells are left blank, and each
// rectangle overlaps its right and upper neighbours by a hairline: neighbours
// then cover each other's anti-aliased edges, leaving no seams (gonum's HeatMap
// shows seams unrasterized and blurs cells rasterized).
type cellGrid struct {
	rows  [][]float64 // fractions in [0, 1]
	edges []float64   // bin edges in data x, one more than bins
	cmap  palette.ColorMap
}

const cellLevels = 64 // colour steps; adjacent cells within a step merge

func (g *cellGrid) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(g.rows)
	overlap := vg.Points(0.4)
	for r, vals := range g.rows {
		yTop := float64(n - r)
		for j := 0; j < len(vals); {
			lv := level(vals[j])
			k := j + 1
			for k < len(vals) && level(vals[k]) == lv {
				k++
			}
			if lv > 0 {
				col, err := g.cmap.At(100 * float64(lv) / cellLevels)
				if err != nil {
					col = color.Black
				}
				x1, x2 := trX(g.edges[j]), trX(g.edges[k])
				y1, y2 := trY(yTop-1), trY(yTop)
				if k < len(vals) {
					x2 += overlap
				}
				if r > 0 {
					y2 += overlap
				}
				c.SetColor(col)
				c.Fill(rectPath(x1, y1, x2, y2))
			}
			j = k
		}
	}
}

// level quantizes a fraction in [0, 1] to 0..cellLevels; any positive fraction is
// at least level 1, so a briefly paused cell is never drawn blank.
func level(v float64) int {
	if v <= 0 {
		return 0
	}
	return max(1, min(cellLevels, int(v*cellLevels+0.5)))
}

func (g *cellGrid) DataRange() (xmin, xmax, ymin, ymax float64) {
	return g.edges[0], g.edges[len(g.edges)-1], 0, float64(len(g.rows))
}

func rectPath(x1, y1, x2, y2 vg.Length) vg.Path {
	var pa vg.Path
	pa.Move(vg.Point{X: x1, Y: y1})
	pa.Line(vg.Point{X: x2, Y: y1})
	pa.Line(vg.Point{X: x2, Y: y2})
	pa.Line(vg.Point{X: x1, Y: y2})
	pa.Close()
	return pa
}
