package main

import "testing"

func TestFormat(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{fmtTimePs(1_000_119_321_000), "1,000.119321 ms"},
		{fmtTimePs(1_000_119_320_600), "1,000.119321 ms"}, // rounded to the ns
		{protoName(6), "TCP"}, {protoName(47), "47"},
		{fmtTimePs(2_995_004_076_123), "2,995.004076 ms"},
		{fmtTimePs(260_000_000), "0.260000 ms"},
		{fmtTimePs(-1_500_000_000), "-1.500000 ms"},
		{fmtCount(3560), "3,560"},
		{fmtCount(-1234567), "-1,234,567"},
		{fmtCount(999), "999"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
