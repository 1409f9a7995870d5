package plots

import (
	"math"

	"github.com/tracefabric/tracefabric/internal/units"
)

// maxDrawnBins bounds the time bins a figure draws: finer bins are merged, k
// adjacent bins at a time, since a bin narrower than a pixel shows nothing more.
const maxDrawnBins = 600

// timeBins maps source time bins to the bins a figure draws.
type timeBins struct {
	k     int       // source bins per drawn bin
	n     int       // drawn bins; the last may merge fewer than k source bins
	src   int       // source bins
	width float64   // drawn bin width (ps)
	div   float64   // ps per display unit
	unit  string    // display unit of time
	edges []float64 // n+1 drawn bin edges in display units; the last is the end of the source bins
}

// newTimeBins plans the drawing of bins source bins of width ps from start.
func newTimeBins(start, width units.Time, bins int) timeBins {
	k := 1
	if bins > maxDrawnBins {
		k = (bins + maxDrawnBins - 1) / maxDrawnBins
	}
	tb := timeBins{k: k, n: (bins + k - 1) / k, src: bins, width: float64(width) * float64(k)}
	s := float64(start)
	end := s + float64(width)*float64(bins)
	tb.div, tb.unit = axisTimeScale(s, end)
	tb.edges = make([]float64, tb.n+1)
	for j := range tb.edges {
		tb.edges[j] = math.Min(s+float64(j)*tb.width, end) / tb.div
	}
	return tb
}

// sum returns the drawn bins' totals of per-source-bin counts.
func (tb timeBins) sum(vals []float64) []float64 {
	out := make([]float64, tb.n)
	for i, v := range vals {
		out[i/tb.k] += v
	}
	return out
}

// mean returns the drawn bins' means of per-source-bin fractions (the fraction
// of the drawn bin, since source bins have equal widths).
func (tb timeBins) mean(vals []float64) []float64 {
	out := tb.sum(vals)
	for j := range out {
		out[j] /= float64(min(tb.k, tb.src-j*tb.k))
	}
	return out
}
