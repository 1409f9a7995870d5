package units

import (
	"testing"
	"time"
)

func TestHumanSeconds(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want string
	}{
		{0, "0 s"},
		{750e-12, "750 ps"},
		{1e-12, "1 ps"},
		{16.379e-6, "16.38 us"},
		{999.96e-6, "1 ms"}, // rounds up into the next unit
		{1.35e-3, "1.35 ms"},
		{2.995, "2.995 s"},
		{59.99996, "1 min"},
		{270, "4 min 30 s"},
		{3599.7, "1 h"},
		{3*3600 + 4*60, "3 h 4 min"},
		{3*86400 + 4*3600, "3 d 4 h"},
		{53*86400 + 9*3600 + 700, "53 d 9 h"},
		{1.2 * 365.25 * 86400, "1.2 years"},
		{365.25 * 86400, "1 year"},
		{142449834.964568, "4.51 years"}, // web-client-508-flows-qinq.pcap's span
		{-1422528503, "-45.1 years"},     // timestamps that go backwards
		{-1.35e-3, "-1.35 ms"},
	} {
		if got := HumanSeconds(c.s); got != c.want {
			t.Errorf("HumanSeconds(%g) = %q, want %q", c.s, got, c.want)
		}
	}
	if got := (1350 * Microsecond).Human(); got != "1.35 ms" {
		t.Errorf("Time.Human = %q", got)
	}
	if got := HumanNanos(-1500); got != "-1.5 us" {
		t.Errorf("HumanNanos(-1500) = %q", got)
	}
}

func TestParseSpan(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30s", 30 * time.Second, true},
		{"1.5ms", 1500 * time.Microsecond, true},
		{"1h30m", 90 * time.Minute, true},
		{"10min", 10 * time.Minute, true},
		{"3d", 72 * time.Hour, true},
		{"1.5 days", 36 * time.Hour, true},
		{"0", 0, true},
		{"-2s", -2 * time.Second, true},
		{"1500ps", 0, false}, // not whole nanoseconds
		{"soon", 0, false},
		{"d", 0, false},
		{"1e3d", 0, false},
	} {
		got, err := ParseSpan(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseSpan(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}
