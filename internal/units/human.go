package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Human formatting: the one home of the numbers that reports, figures, summaries
// and consoles print for people. Unlike the String methods (exact spellings that
// parse back), these round: counts get thousands separators, times and sizes three
// significant digits in a unit that suits them, NaN prints as "-".

// FormatCount formats an integer with thousands separators: "-1,234,567".
func FormatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// FormatNumber formats a whole number as FormatCount does and any other as
// FormatDecimal: "12,345", "2.5".
func FormatNumber(v float64) string {
	if v != math.Trunc(v) || math.Abs(v) >= 1e15 {
		return FormatDecimal(v)
	}
	return FormatCount(int64(v))
}

// FormatDecimal formats v with at most 3 decimals and no trailing zeros: "2.5", "0".
func FormatDecimal(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

// FormatFloat formats a dimensionless value with three significant digits: "1.41".
func FormatFloat(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return fmt.Sprintf("%.3g", f)
}

// FormatFraction formats a fraction (1 is 100%) as a percentage with three
// significant digits: "24.8%".
func FormatFraction(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return fmt.Sprintf("%.3g%%", 100*f)
}

// FormatShare is a count and its share of a total: "5,483 (24.8%)"; the count alone
// when the total is not positive.
func FormatShare(n, total int64) string {
	if total <= 0 {
		return FormatCount(n)
	}
	return fmt.Sprintf("%s (%s)", FormatCount(n), FormatFraction(float64(n)/float64(total)))
}

// FormatPs formats a duration in picoseconds with three significant digits in the
// largest unit (s, ms, us, ns, ps) that keeps it at least 1: "1.21 ms".
func FormatPs(ps float64) string {
	a := math.Abs(ps)
	switch {
	case math.IsNaN(ps):
		return "-"
	case a >= 1e12:
		return fmt.Sprintf("%.3g s", ps/1e12)
	case a >= 1e9:
		return fmt.Sprintf("%.3g ms", ps/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3g us", ps/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.3g ns", ps/1e3)
	}
	return fmt.Sprintf("%.3g ps", ps)
}

// FormatInstantPs formats an instant of simulated time (ps since the start of the
// run) as ms, to the nanosecond (more digits than a duration, so that nearby events
// can be told apart), thousands separated: "1,000.119321 ms".
func FormatInstantPs(ps int64) string {
	sign := ""
	if ps < 0 {
		sign, ps = "-", -ps
	}
	ns := (ps + 500) / 1000 // rounded to the nanosecond
	return fmt.Sprintf("%s%s.%06d ms", sign, FormatCount(ns/1e6), ns%1e6)
}

// FormatBytes formats a size in bytes in decimal units with three significant
// digits: "3.2 MB", "512 B".
func FormatBytes(b float64) string {
	a := math.Abs(b)
	switch {
	case math.IsNaN(b):
		return "-"
	case a >= 1e9:
		return fmt.Sprintf("%.3g GB", b/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3g MB", b/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.3g KB", b/1e3)
	}
	return fmt.Sprintf("%.0f B", b)
}

// TimeScale picks the unit that shows times up to spanPs picoseconds with readable
// numbers: ns below 2 us, us below 2 ms, ms below 10 s, s above. Values are shown
// divided by div. Figures and the tables beside them use it, so that one quantity
// has one unit in both.
func TimeScale(spanPs float64) (div float64, unit string) {
	switch {
	case spanPs < 2e6:
		return 1e3, "ns"
	case spanPs < 2e9:
		return 1e6, "us"
	case spanPs < 1e13:
		return 1e9, "ms"
	default:
		return 1e12, "s"
	}
}

// ByteScale picks B, KB or MB (decimal) for values up to maxBytes.
func ByteScale(maxBytes float64) (div float64, unit string) {
	switch {
	case maxBytes >= 1e6:
		return 1e6, "MB"
	case maxBytes >= 1e3:
		return 1e3, "KB"
	default:
		return 1, "B"
	}
}
