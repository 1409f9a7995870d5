package plots

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tracefabric/tracefabric/internal/units"
)

// DefaultMaxPools is the number of pools a buffer occupancy figure shows when
// PoolOccupancy.MaxSeries is zero.
const DefaultMaxPools = 8

// maxLinePoints bounds the points drawn per line; longer series are reduced to
// the minimum and maximum of each of maxLinePoints/2 time buckets, which keeps
// every peak and keeps the SVG small.
const maxLinePoints = 1200

// lineChunk is the number of segments stroked as one path.
const lineChunk = 64

// PoolOccupancy is the buffer occupancy of switch pools over time.
type PoolOccupancy struct {
	Series []PoolSeries
	// MaxSeries caps the pools drawn: those with the highest peak are kept and the
	// figure says "8 busiest of 24 pools". Zero: DefaultMaxPools.
	MaxSeries int
	// Join is the longest time between two samples of a series that a line joins
	// (typically the sampling period or the bin width, whichever is longer): samples
	// farther apart are not joined, a sample alone is drawn as a point, and a gap of
	// ten times Join starts a panel of its own. Zero: every sample is joined.
	Join units.Time
}

// PoolSeries is one pool of one switch. Samples hold X = sample time in
// picoseconds (non-decreasing) and Y = occupied bytes (shared + headroom).
type PoolSeries struct {
	Node, Pool string
	Samples    plotter.XYer
}

// Label is "node/pool".
func (s PoolSeries) Label() string { return s.Node + "/" + s.Pool }

// BufferOccupancy draws one line per pool: occupied bytes over time for the
// busiest pools (highest peak first in the legend). It returns a NoDataError
// ("buffers stayed empty") when no sample is above zero.
func BufferOccupancy(b PoolOccupancy, o Options) (*Figure, error) {
	o = o.withDefaults()
	maxSeries := b.MaxSeries
	if maxSeries <= 0 {
		maxSeries = DefaultMaxPools
	}
	type series struct {
		label string
		xys   plotter.XYs
		peak  float64
	}
	var ss []series
	for _, s := range b.Series {
		if s.Samples == nil || s.Samples.Len() == 0 {
			continue
		}
		xys, err := plotter.CopyXYs(s.Samples)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: pool %s: %w", NameBufferOccupancy, s.Label(), err)
		}
		peak := 0.0
		for i, p := range xys {
			if p.Y < 0 {
				return nil, fmt.Errorf("plots: %s: pool %s sample %d: %v bytes must be >= 0",
					NameBufferOccupancy, s.Label(), i, p.Y)
			}
			if i > 0 && p.X < xys[i-1].X {
				return nil, fmt.Errorf("plots: %s: pool %s sample %d: time %v ps before the previous %v ps",
					NameBufferOccupancy, s.Label(), i, p.X, xys[i-1].X)
			}
			peak = math.Max(peak, p.Y)
		}
		if peak > 0 {
			ss = append(ss, series{label: safeText(s.Label(), 28), xys: xys, peak: peak})
		}
	}
	if len(ss) == 0 {
		return nil, noData(NameBufferOccupancy, "buffers stayed empty")
	}
	slices.SortStableFunc(ss, func(a, b series) int {
		if c := cmp.Compare(b.peak, a.peak); c != 0 {
			return c
		}
		return cmp.Compare(a.label, b.label)
	})
	all := len(ss)
	ss = ss[:min(len(ss), maxSeries)]

	// Bursts of samples separated by long gaps get a panel each (same scales).
	var xs []float64
	for _, s := range ss {
		for _, p := range s.xys {
			xs = append(xs, p.X)
		}
	}
	panels := timePanels(xs, maxBufferPanels, 10*float64(b.Join))
	for i := range panels { // a panel around a lone sample is Join wide on each side
		if j := float64(b.Join); j > 0 && panels[i][1]-panels[i][0] < 2*j {
			mid := (panels[i][0] + panels[i][1]) / 2
			panels[i] = [2]float64{mid - j, mid + j}
		}
	}
	tdiv, tunit := axisTimeScale(panels[0][0], panels[len(panels)-1][1])
	for _, pn := range panels {
		if d, u := axisTimeScale(pn[0], pn[1]); d > tdiv {
			tdiv, tunit = d, u
		}
	}
	bdiv, bunit := units.ByteScale(ss[0].peak)
	yLabel := "occupied bytes, shared + headroom (" + bunit + ")"
	var row []*plot.Plot
	leg := newLegend()
	for k, pn := range panels {
		p := newPlot("", timeAxisLabel(tunit), yLabel)
		if k > 0 {
			p.Y.Label.Text = ""
		}
		if len(panels) > 1 { // narrower panels: fewer labels (labels like 2000.5 are wide)
			p.X.Tick.Marker = niceTicks{n: max(2, 6/len(panels))}
		}
		if len(panels) > 1 {
			p.Title.Text = fmt.Sprintf("%s to %s %s", units.FormatDecimal(roundSig(pn[0]/tdiv, 6)), units.FormatDecimal(roundSig(pn[1]/tdiv, 6)), tunit)
		}
		gridLines(p, false)
		for i, s := range ss {
			var in plotter.XYs
			for _, q := range s.xys {
				if q.X >= pn[0] && q.X <= pn[1] {
					in = append(in, q)
				}
			}
			if len(in) == 0 {
				continue
			}
			pts := decimate(in, maxLinePoints/len(panels))
			for _, run := range joined(pts, float64(b.Join)) {
				if err := addRun(p, run, i, tdiv, bdiv); err != nil {
					return nil, fmt.Errorf("plots: %s: pool %s: %w", NameBufferOccupancy, s.label, err)
				}
			}
		}
		p.X.Min, p.X.Max = pn[0]/tdiv, pn[1]/tdiv
		p.Y.Min, p.Y.Max = 0, ss[0].peak/bdiv*1.02
		row = append(row, p)
	}
	for i, s := range ss {
		leg.Add(fmt.Sprintf("%s (peak %s %s)", s.label, units.FormatDecimal(roundSig(s.peak/bdiv, 3)), bunit), lineThumb(i))
	}
	note := fmt.Sprintf("%s pools", units.FormatNumber(float64(all)))
	if all > len(ss) {
		note = fmt.Sprintf("%s busiest of %s pools, by peak occupancy", units.FormatNumber(float64(len(ss))), units.FormatNumber(float64(all)))
	}
	if all == 1 {
		note = "1 pool"
	}
	if len(panels) > 1 {
		note += fmt.Sprintf("; %d bursts, the idle time between them left out", len(panels))
	}
	pg := &page{
		title:       "Buffer occupancy of the busiest pools",
		note:        note,
		grid:        [][]*plot.Plot{row},
		legend:      &leg,
		legendTitle: "switch/pool",
	}
	return pg.figure(NameBufferOccupancy, o), nil
}

// maxBufferPanels bounds the panels of a buffer occupancy figure.
const maxBufferPanels = 3

// lineThumb is the legend thumbnail of series i's line.
func lineThumb(i int) plot.Thumbnailer {
	l := &plotter.Line{XYs: plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}}}
	l.LineStyle.Color = seriesColor(i)
	l.LineStyle.Width = vg.Points(1.5)
	l.LineStyle.Dashes = seriesDash(i)
	return l
}

// joined splits a series (in time order) into runs of samples at most join apart
// (join <= 0: one run).
func joined(pts plotter.XYs, join float64) []plotter.XYs {
	var runs []plotter.XYs
	start := 0
	for k := 1; k <= len(pts); k++ {
		if k == len(pts) || join > 0 && pts[k].X-pts[k-1].X > join {
			runs = append(runs, pts[start:k])
			start = k
		}
	}
	return runs
}

// addRun draws one run of samples of series i, scaled by tdiv and bdiv: a line, or a
// point for a lone sample.
func addRun(p *plot.Plot, run plotter.XYs, i int, tdiv, bdiv float64) error {
	pts := make(plotter.XYs, len(run))
	for j, q := range run {
		pts[j] = plotter.XY{X: q.X / tdiv, Y: q.Y / bdiv}
	}
	if len(pts) == 1 {
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = seriesColor(i)
		sc.GlyphStyle.Radius = vg.Points(3)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		p.Add(sc)
		return nil
	}
	// Stroked in short pieces: one long zigzag path is quadratic in the PNG
	// rasterizer (freetype's cell search), pieces of 64 points are not.
	for a := 0; a < len(pts)-1; a += lineChunk {
		l, err := plotter.NewLine(pts[a:min(len(pts), a+lineChunk+1)])
		if err != nil {
			return err
		}
		l.LineStyle.Color = seriesColor(i)
		l.LineStyle.Width = vg.Points(1.5)
		l.LineStyle.Dashes = seriesDash(i)
		p.Add(l)
	}
	return nil
}

// timePanels splits sample times (ps, any order) into at most max time ranges
// [lo, hi]: a gap between consecutive times longer than a tenth of the whole span
// and than minGap (when > 0; else ten times the typical, median, step between
// samples) starts a new range; with more ranges than max, those across the shortest
// gaps are merged. Bursts of activity far apart (a PFC storm at 1 s, an incast at 2 s)
// then each fill a panel instead of two spikes on one long axis.
func timePanels(xs []float64, max int, minGap float64) [][2]float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	xs = slices.Compact(xs)
	if len(xs) < 2 {
		x := 0.0
		if len(xs) == 1 {
			x = xs[0]
		}
		return [][2]float64{{x, x + 1}}
	}
	steps := make([]float64, len(xs)-1)
	for i := range steps {
		steps[i] = xs[i+1] - xs[i]
	}
	sorted := slices.Clone(steps)
	slices.Sort(sorted)
	step := 10 * sorted[len(sorted)/2]
	if minGap > 0 {
		step = minGap
	}
	limit := math.Max((xs[len(xs)-1]-xs[0])/10, step)
	panels := [][2]float64{{xs[0], xs[0]}}
	var gaps []float64
	for i, st := range steps {
		if st > limit {
			panels = append(panels, [2]float64{xs[i+1], xs[i+1]})
			gaps = append(gaps, st)
		} else {
			panels[len(panels)-1][1] = xs[i+1]
		}
	}
	for len(panels) > max {
		k := 0
		for i := range gaps {
			if gaps[i] < gaps[k] {
				k = i
			}
		}
		panels[k][1] = panels[k+1][1]
		panels = slices.Delete(panels, k+1, k+2)
		gaps = slices.Delete(gaps, k, k+1)
	}
	for i := range panels {
		if panels[i][1] <= panels[i][0] {
			panels[i][1] = panels[i][0] + 1
		}
	}
	return panels
}

// decimate returns a copy of xys, or when longer than limit points, the minimum
// and maximum points (in time order) of each of limit/2 equal time buckets.
func decimate(xys plotter.XYs, limit int) plotter.XYs {
	if len(xys) <= limit {
		return slices.Clone(xys)
	}
	buckets := limit / 2
	t0, t1 := xys[0].X, xys[len(xys)-1].X
	span := t1 - t0
	out := make(plotter.XYs, 0, limit+2)
	i := 0
	for k := range buckets {
		end := t0 + span*float64(k+1)/float64(buckets)
		if i >= len(xys) {
			break
		}
		lo, hi := i, i
		j := i
		for j < len(xys) && (xys[j].X <= end || k == buckets-1) {
			if xys[j].Y < xys[lo].Y {
				lo = j
			}
			if xys[j].Y > xys[hi].Y {
				hi = j
			}
			j++
		}
		if j == i {
			continue
		}
		a, b := min(lo, hi), max(lo, hi)
		out = append(out, xys[a])
		if b != a {
			out = append(out, xys[b])
		}
		i = j
	}
	return out
}

// roundSig rounds v to n significant digits.
func roundSig(v float64, n int) float64 {
	if v == 0 || !finite(v) {
		return v
	}
	e := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*e) / e
}
