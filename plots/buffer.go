package plots

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
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
	tmin, tmax := math.Inf(1), math.Inf(-1)
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
		tmin = math.Min(tmin, xys[0].X)
		tmax = math.Max(tmax, xys[len(xys)-1].X)
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

	tdiv, tunit := axisTimeScale(tmin, tmax)
	bdiv, bunit := byteScale(ss[0].peak)
	p := newPlot("", timeAxisLabel(tunit), "occupied bytes, shared + headroom ("+bunit+")")
	gridLines(p, false)
	leg := newLegend()
	for i, s := range ss {
		pts := decimate(s.xys, maxLinePoints)
		for k := range pts {
			pts[k].X /= tdiv
			pts[k].Y /= bdiv
		}
		// Stroked in short pieces: one long zigzag path is quadratic in the PNG
		// rasterizer (freetype's cell search), pieces of 64 points are not.
		var first *plotter.Line
		for a := 0; a < len(pts)-1 || a == 0; a += lineChunk {
			l, err := plotter.NewLine(pts[a:min(len(pts), a+lineChunk+1)])
			if err != nil {
				return nil, fmt.Errorf("plots: %s: pool %s: %w", NameBufferOccupancy, s.label, err)
			}
			l.LineStyle.Color = seriesColor(i)
			l.LineStyle.Width = vg.Points(1.5)
			l.LineStyle.Dashes = seriesDash(i)
			p.Add(l)
			if first == nil {
				first = l
			}
		}
		l := first
		leg.Add(fmt.Sprintf("%s (peak %s %s)", s.label, trimFloat(roundSig(s.peak/bdiv, 3)), bunit), l)
	}
	p.X.Min, p.X.Max = tmin/tdiv, tmax/tdiv
	p.Y.Min = 0

	note := fmt.Sprintf("%s pools", countText(float64(all)))
	if all > len(ss) {
		note = fmt.Sprintf("%s busiest of %s pools, by peak occupancy", countText(float64(len(ss))), countText(float64(all)))
	}
	if all == 1 {
		note = "1 pool"
	}
	pg := &page{
		title:       "Buffer occupancy of the busiest pools",
		note:        note,
		grid:        [][]*plot.Plot{{p}},
		legend:      &leg,
		legendTitle: "switch/pool",
	}
	return pg.figure(NameBufferOccupancy, o), nil
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
