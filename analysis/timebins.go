package analysis

// Time series bin over the span where their events happen, not over the whole run:
// a 3 ms PFC storm in a 3 s run then spans most of its figure instead of one bin of
// 15 ms. The series are built while the records stream past, before that span is
// known, so each keeps FineBins fine bins whose width (a power of ten picoseconds)
// grows tenfold, merging bins, whenever an event falls outside the range they cover.
// At the end, Window picks the displayed bins: at most TimeBins bins of a 1-2-5 width
// over the events' span padded by 5% on each side (at least MinWindowPs wide),
// aligned to multiples of their width, each the exact sum (or maximum) of whole fine
// bins.

// FineBins is the number of fine bins a streamed time series keeps: the events' span
// is covered by at least FineBins/10 of them.
const FineBins = 2000

// MinWindowPs is the narrowest time window a series is shown over (1 us), so that a
// lone event does not give bins of a few picoseconds.
const MinWindowPs = 1_000_000

// fineMinWidth is the first fine bin width (1 ps).
const fineMinWidth = 1

// fineSeries is a set of rows of fine time bins sharing one time axis: fine bin i of
// every row covers [(origin+i)*width, (origin+i+1)*width) ps. Rows combine values by
// sum, or by maximum when useMax.
type fineSeries struct {
	width, origin int64
	used          bool
	lo, hi        int64 // first and last event time
	useMax        bool
	rows          [][]int64
}

func newFineSeries(rows int, useMax bool) *fineSeries {
	f := &fineSeries{useMax: useMax, width: fineMinWidth}
	for range rows {
		f.addRow()
	}
	return f
}

// addRow adds a row of zeros and returns its index.
func (f *fineSeries) addRow() int {
	f.rows = append(f.rows, make([]int64, FineBins))
	return len(f.rows) - 1
}

// index returns the fine bin of an event at t (ps, negative read as 0), widening the
// bins until it fits.
func (f *fineSeries) index(t int64) int {
	t = max(t, 0)
	if !f.used {
		f.used, f.lo, f.hi = true, t, t
		f.origin = t / f.width
	}
	f.lo, f.hi = min(f.lo, t), max(f.hi, t)
	for {
		a := t / f.width
		if a >= f.origin && a < f.origin+FineBins {
			return int(a - f.origin)
		}
		f.grow()
	}
}

// grow makes the bins ten times wider, merging each run of ten into one.
func (f *fineSeries) grow() {
	no := f.origin / 10
	for _, r := range f.rows {
		for i := range r {
			j := int((f.origin+int64(i))/10 - no) // j <= i: merged in place
			v := r[i]
			r[i] = 0
			if f.useMax {
				r[j] = max(r[j], v)
			} else {
				r[j] += v
			}
		}
	}
	f.origin, f.width = no, f.width*10
}

// window is the displayed bins of one or several series: bin b covers
// [Start + b*Width, Start + (b+1)*Width).
type window struct {
	start, width int64
	bins         int
}

// niceSteps are the multiples of a power of ten a displayed bin width can take.
var niceSteps = []int64{1, 2, 5}

// chooseWindow returns the displayed bins over the events in [lo, hi] (ps) of a run of
// simPs ps (0: unknown): the span padded by 5% on each side, at least MinWindowPs (or
// the run) wide, within [0, max(simPs, hi+1)); a 1-2-5 bin width that is a multiple
// of unit (> 0); at most bins bins, aligned to multiples of the width.
func chooseWindow(lo, hi, unit int64, bins int, simPs int64) window {
	span := hi - lo + 1
	minSpan := int64(MinWindowPs)
	if simPs > 0 {
		minSpan = min(minSpan, simPs)
	}
	pad := max(span/20, (minSpan-span+1)/2, 0)
	end := hi + 1
	if simPs > end {
		end = simPs
	}
	from, to := max(lo-pad, 0), min(hi+1+pad, end)
	for scale := max(unit, 1); ; scale *= 10 {
		for _, k := range niceSteps {
			w := k * scale
			start := from / w * w
			n := (to - start + w - 1) / w
			if n <= int64(bins) {
				return window{start: start, width: w, bins: int(max(n, 1))}
			}
		}
	}
}

// wholeRun is the window of a series without events: bins equal bins over simPs.
func wholeRun(simPs int64, bins int) window {
	bins = max(bins, 1)
	simPs = max(simPs, 1)
	w := (simPs + int64(bins) - 1) / int64(bins)
	return window{width: w, bins: int((simPs + w - 1) / w)}
}

// collect returns row r in the window's bins (sum or maximum of the fine bins in
// each); the window's width must be a multiple of f.width and its start too.
func (f *fineSeries) collect(r int, w window) []int64 {
	out := make([]int64, w.bins)
	if !f.used {
		return out
	}
	for i, v := range f.rows[r] {
		if v == 0 {
			continue
		}
		t := (f.origin + int64(i)) * f.width
		if t < w.start {
			continue
		}
		b := (t - w.start) / w.width
		if b >= int64(w.bins) {
			continue
		}
		if f.useMax {
			out[b] = max(out[b], v)
		} else {
			out[b] += v
		}
	}
	return out
}

// ownWindow is the window over this series' own events in at most bins bins
// (wholeRun when it has none).
func (f *fineSeries) ownWindow(simPs int64, bins int) window {
	if !f.used {
		return wholeRun(simPs, bins)
	}
	return chooseWindow(f.lo, f.hi, f.width, bins, simPs)
}
