package main

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tracefabric/tracefabric/analysis"
)

// Number formatting for the report: counts with thousands separators, times in
// human units from picoseconds, sizes in decimal units from bytes, fractions in %.

var (
	fmtCount = analysis.FormatCount
	fmtPs    = analysis.FormatPs
)

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
