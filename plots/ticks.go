package plots

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// niceTicks places about n labelled ticks at "nice" values (1, 2, 2.5 or 5 times a
// power of ten) with unlabelled minor ticks between them. gonum's DefaultTicks
// aims at 3 labels, too few to read values off a wide figure.
type niceTicks struct{ n int }

func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	n := max(t.n, 2)
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return plot.DefaultTicks{}.Ticks(lo, lo+1)
	}
	step, minor, prec := niceStep((hi - lo) / float64(n-1))
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
		k := v / step
		if math.Abs(k-math.Round(k)) < 1e-6 {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
		} else {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	return ticks
}

// niceStep rounds raw up to a nice step and returns it with its minor step and the
// number of decimals its labels need.
func niceStep(raw float64) (step, minor float64, prec int) {
	mag := math.Floor(math.Log10(raw))
	base := math.Pow(10, mag)
	f := raw / base
	var m, sub float64
	switch {
	case f <= 1:
		m, sub = 1, 5
	case f <= 2:
		m, sub = 2, 4
	case f <= 2.5:
		m, sub = 2.5, 5
	case f <= 5:
		m, sub = 5, 5
	default:
		m, sub = 10, 5
	}
	step = m * base
	prec = int(max(0, -math.Floor(math.Log10(step)+1e-9)))
	if m == 2.5 && step < 10 {
		prec++
	}
	return step, step / sub, prec
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
