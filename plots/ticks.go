package plots

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// niceTicks places about n labelled ticks at "nice" values (1, 2, 2.5 or 5 times a
// power of ten) with unlabelled minor ticks between them. gonum's DefaultTicks
// aims at 3 labels, too few to read values off a wide figure.
type niceTicks struct {
	n           int
	nonNegative bool // drop ticks below zero
}

func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	n := max(t.n, 2)
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return plot.DefaultTicks{}.Ticks(lo, lo+1)
	}
	step, minor, prec := niceStep(lo, hi, n)
	first := math.Ceil(lo/minor-1e-9) * minor
	var ticks []plot.Tick
	for i := 0; ; i++ {
		v := first + float64(i)*minor
		if v > hi+minor*1e-9 {
			break
		}
		if math.Abs(v) < minor*1e-9 {
			v = 0
		}
		if t.nonNegative && v < 0 {
			continue
		}
		k := v / step
		if math.Abs(k-math.Round(k)) < 1e-6 {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
		} else {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	return ticks
}

// niceStep returns the smallest nice step (1, 2, 2.5 or 5 times a power of ten)
// that puts at most n labels in [lo, hi], its minor step and the number of
// decimals its labels need.
func niceStep(lo, hi float64, n int) (step, minor float64, prec int) {
	raw := (hi - lo) / float64(n-1)
	base := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, c := range []struct{ m, sub float64 }{{1, 5}, {2, 4}, {2.5, 5}, {5, 5}, {10, 5}, {20, 4}, {25, 5}, {50, 5}} {
		step, minor = c.m*base, c.m*base/c.sub
		if math.Floor(hi/step+1e-9)-math.Ceil(lo/step-1e-9)+1 <= float64(n) {
			break
		}
	}
	prec = int(max(0, -math.Floor(math.Log10(step)+1e-9)))
	if m := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9)); math.Abs(m-2.5) < 1e-9 && step < 10 {
		prec++
	}
	return step, minor, prec
}

// logTicks is plot.LogTicks with the 2 and 5 of each decade labelled too when the
// axis spans at most two decades.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	if hi/lo > 100.0001 {
		return ts
	}
	for i, t := range ts {
		if t.Label != "" {
			continue
		}
		m := t.Value / math.Pow(10, math.Floor(math.Log10(t.Value)+1e-9))
		if math.Abs(m-2) < 1e-6 || math.Abs(m-5) < 1e-6 {
			ts[i].Label = strconv.FormatFloat(t.Value, 'g', -1, 64)
		}
	}
	return ts
}
