package units

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Durations for people. Records and run.json keep exact numbers (picoseconds, or
// seconds as floats); what a person reads (inspect, a run's summary, progress,
// errors and warnings) goes through HumanSeconds, so that a 53-day span reads
// "53 d 9 h" rather than "1281h0m0s" or "4595155966.605 ms".

// year is a Julian year (365.25 days), in seconds.
const year = 365.25 * 86400

// subMinute are the units of durations below a minute, largest first.
var subMinute = []struct {
	scale float64
	name  string
}{{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}, {1e-12, "ps"}}

// HumanSeconds formats a duration given in seconds: below a minute with 4 significant
// digits in the largest unit that keeps the number at least 1 ("750 ps", "16.38 us",
// "1.35 ms", "2.995 s"); then in two whole units ("4 min 30 s", "3 h 4 min",
// "3 d 4 h"); from a year (365.25 days) on, in years with 3 significant digits
// ("1.2 years", "4.51 years"). A negative duration prints with a minus sign
// ("-45.1 years"); zero is "0 s".
func HumanSeconds(s float64) string {
	switch {
	case math.IsNaN(s):
		return "NaN"
	case math.IsInf(s, 1):
		return "forever"
	case math.IsInf(s, -1):
		return "-forever"
	case s < 0:
		return "-" + HumanSeconds(-s)
	case s == 0:
		return "0 s"
	}
	if r := roundSig(s, 4); r < 60 {
		for _, u := range subMinute {
			if r >= u.scale || u.name == "ps" {
				return strconv.FormatFloat(roundSig(s/u.scale, 4), 'f', -1, 64) + " " + u.name
			}
		}
	}
	switch {
	case s < 3600-0.5:
		sec := int64(math.Round(s))
		return twoUnits(sec/60, "min", sec%60, "s")
	case s < 86400-30:
		min := int64(math.Round(s / 60))
		return twoUnits(min/60, "h", min%60, "min")
	case s < year-1800:
		h := int64(math.Round(s / 3600))
		return twoUnits(h/24, "d", h%24, "h")
	}
	y := strconv.FormatFloat(roundSig(s/year, 3), 'f', -1, 64)
	if y == "1" {
		return "1 year"
	}
	return y + " years"
}

// HumanNanos is HumanSeconds of a duration in nanoseconds (capture timestamps).
func HumanNanos(ns int64) string { return HumanSeconds(float64(ns) / 1e9) }

// Human is HumanSeconds of t.
func (t Time) Human() string { return HumanSeconds(float64(t) / float64(Second)) }

func twoUnits(a int64, an string, b int64, bn string) string {
	if b == 0 {
		return fmt.Sprintf("%d %s", a, an)
	}
	return fmt.Sprintf("%d %s %d %s", a, an, b, bn)
}

// roundSig rounds v > 0 to n significant digits.
func roundSig(v float64, n int) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	return r
}

// ParseSpan reads a duration of capture time, in whole nanoseconds: the spellings
// of ParseTime ("30s", "1.5ms", "500us"), Go's ("1h30m", "2h"), minutes ("10min")
// and days ("3d", "1.5d"). Spans may be negative only where the caller allows it.
func ParseSpan(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if d, err := time.ParseDuration(in); err == nil {
		return d, nil
	}
	for _, u := range []struct {
		suffix string
		scale  int64
	}{{"days", 86400e9}, {"day", 86400e9}, {"d", 86400e9}, {"min", 60e9}} {
		if num, ok := strings.CutSuffix(in, u.suffix); ok {
			num = strings.TrimSpace(num)
			r, ok := new(big.Rat).SetString(num)
			if !ok || num == "" || strings.ContainsAny(num, "eE/") {
				break
			}
			r.Mul(r, new(big.Rat).SetInt64(u.scale))
			if !r.IsInt() || !r.Num().IsInt64() {
				return 0, fmt.Errorf("%w: %q is out of range or not a whole number of nanoseconds", ErrSyntax, s)
			}
			return time.Duration(r.Num().Int64()), nil
		}
	}
	t, err := ParseTime(in)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a duration (want e.g. \"30s\", \"1.5ms\", \"2h\", \"3d\")", ErrSyntax, s)
	}
	if t%Nanosecond != 0 {
		return 0, fmt.Errorf("%w: %q is not a whole number of nanoseconds", ErrSyntax, s)
	}
	return time.Duration(t / Nanosecond), nil
}
