package units

import (
	"math"
	"testing"
)

func TestHumanFormats(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{FormatCount(0), "0"}, {FormatCount(999), "999"}, {FormatCount(1000), "1,000"}, {FormatCount(-1234567), "-1,234,567"},
		{FormatNumber(1234567), "1,234,567"}, {FormatNumber(-4321), "-4,321"}, {FormatNumber(2.5), "2.5"},
		{FormatDecimal(2.50049), "2.5"}, {FormatDecimal(-0.0001), "0"}, {FormatDecimal(3), "3"},
		{FormatFloat(1.40797), "1.41"}, {FormatFloat(math.NaN()), "-"},
		{FormatFraction(0.2476), "24.8%"}, {FormatFraction(math.NaN()), "-"},
		{FormatShare(5483, 22151), "5,483 (24.8%)"}, {FormatShare(3, 0), "3"},
		{FormatPs(800), "800 ps"}, {FormatPs(1_210_000_000), "1.21 ms"}, {FormatPs(16_378_560), "16.4 us"},
		{FormatPs(-2.5e12), "-2.5 s"}, {FormatPs(math.NaN()), "-"}, {FormatPs(1e8), "100 us"}, {FormatPs(500e3), "500 ns"},
		{FormatInstantPs(1_000_119_321_000), "1,000.119321 ms"}, {FormatInstantPs(1_000_119_320_600), "1,000.119321 ms"},
		{FormatInstantPs(260_000_000), "0.260000 ms"}, {FormatInstantPs(-1_500_000_000), "-1.500000 ms"},
		{FormatBytes(512), "512 B"}, {FormatBytes(3.2e6), "3.2 MB"}, {FormatBytes(236032), "236 KB"}, {FormatBytes(4.5e9), "4.5 GB"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	for _, c := range []struct {
		span float64
		div  float64
		unit string
	}{{1e6, 1e3, "ns"}, {5e6, 1e6, "us"}, {1.99e9, 1e6, "us"}, {2e9, 1e9, "ms"}, {5e12, 1e9, "ms"}, {2e13, 1e12, "s"}} {
		if div, unit := TimeScale(c.span); div != c.div || unit != c.unit {
			t.Errorf("TimeScale(%g) = %g %s, want %g %s", c.span, div, unit, c.div, c.unit)
		}
	}
	for _, c := range []struct {
		max  float64
		div  float64
		unit string
	}{{999, 1, "B"}, {1000, 1e3, "KB"}, {999999, 1e3, "KB"}, {1e6, 1e6, "MB"}, {3.2e7, 1e6, "MB"}} {
		if div, unit := ByteScale(c.max); div != c.div || unit != c.unit {
			t.Errorf("ByteScale(%g) = %g %s, want %g %s", c.max, div, unit, c.div, c.unit)
		}
	}
}
