package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Number formatting for the report: counts with thousands separators, times in
// human units from picoseconds, sizes in decimal units from bytes, fractions in %.

func fmtCount(n int64) string {
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

// fmtPs formats a time in picoseconds with three significant digits.
func fmtPs(ps float64) string {
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

// fmtTimePs formats an instant of simulated time in ps as ms from the start of the
// run, to the nanosecond (more digits than a duration, so that storm starts can be
// told apart), thousands separated: "1,000.119321 ms".
func fmtTimePs(ps int64) string {
	sign := ""
	if ps < 0 {
		sign, ps = "-", -ps
	}
	ns := (ps + 500) / 1000 // rounded to the nanosecond
	return fmt.Sprintf("%s%s.%06d ms", sign, fmtCount(ns/1e6), ns%1e6)
}

// protoName names the common IP protocols ("TCP"), others by number.
func protoName(p uint8) string {
	switch p {
	case 1:
		return "ICMP"
	case 6:
		return "TCP"
	case 17:
		return "UDP"
	}
	return strconv.Itoa(int(p))
}

// fmtBytes formats a size in bytes (decimal units).
func fmtBytes(b float64) string {
	a := math.Abs(b)
	switch {
	case a >= 1e9:
		return fmt.Sprintf("%.3g GB", b/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3g MB", b/1e6)
	case a >= 1e3:
		return fmt.Sprintf("%.3g KB", b/1e3)
	}
	return fmt.Sprintf("%.0f B", b)
}

// fmtFrac formats a fraction in [0, 1] as a percentage.
func fmtFrac(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return fmt.Sprintf("%.3g%%", 100*f)
}

// fmtFloat formats a dimensionless value with three significant digits.
func fmtFloat(f float64) string {
	if math.IsNaN(f) {
		return "-"
	}
	return fmt.Sprintf("%.3g", f)
}

// fmtShare is a count and its share of a total: "5,483 (24.8%)".
func fmtShare(n, total int64) string {
	if total <= 0 {
		return fmtCount(n)
	}
	return fmt.Sprintf("%s (%s)", fmtCount(n), fmtFrac(float64(n)/float64(total)))
}
