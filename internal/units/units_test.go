package units

import (
	"errors"
	"math"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestParseTime(t *testing.T) {
	cases := []struct {
		in   string
		want Time
		err  bool
	}{
		{"1us", Microsecond, false},
		{"500ns", 500 * Nanosecond, false},
		{"1.5ms", 1500 * Microsecond, false},
		{"2s", 2 * Second, false},
		{"0", 0, false},
		{"7ps", 7, false},
		{"1µs", Microsecond, false},
		{"0.5ps", 0, true},
		{"10", 0, true},
		{"1 hour", 0, true},
		{"", 0, true},
		{"us", 0, true},
		{"1e3ns", Microsecond, false},
		{"1e100000s", 0, true},
		{"1e-100000s", 0, true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseTime(c.in)
			if (err != nil) != c.err {
				t.Fatalf("ParseTime(%q) err = %v, want error %v", c.in, err, c.err)
			}
			if err != nil && !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v does not wrap ErrSyntax", err)
			}
			if got != c.want {
				t.Fatalf("ParseTime(%q) = %d, want %d", c.in, got, c.want)
			}
		})
	}
}

func TestParseBytesAndRates(t *testing.T) {
	bc := map[string]Bytes{"32MiB": 32 << 20, "400KB": 400000, "256B": 256, "9000": 9000, "1.5KiB": 1536, "1GB": 1e9}
	for in, want := range bc {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := ParseBytes("1.5B"); err == nil {
		t.Error("ParseBytes(1.5B) accepted a fractional byte")
	}
	rc := map[string]BitRate{"100Gbps": 100 * Gbps, "25G": 25 * Gbps, "400Gbps": 400 * Gbps, "10Mbps": 10 * Mbps, "1000": 1000}
	for in, want := range rc {
		got, err := ParseBitRate(in)
		if err != nil || got != want {
			t.Errorf("ParseBitRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	fc := map[string]Fraction{"40%": 0.4, "0.125": 0.125, "100%": 1}
	for in, want := range fc {
		got, err := ParseFraction(in)
		if err != nil || got != want {
			t.Errorf("ParseFraction(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseFraction("lots"); err == nil {
		t.Error("ParseFraction(lots) accepted")
	}
}

func TestStringRoundTrip(t *testing.T) {
	for _, v := range []Time{0, 1, Microsecond, 1500 * Microsecond, 335544320 * Picosecond, 3 * Second} {
		got, err := ParseTime(v.String())
		if err != nil || got != v {
			t.Errorf("Time %d -> %q -> %d, %v", int64(v), v.String(), got, err)
		}
	}
	for _, v := range []Bytes{0, 1, 256, 9000, 400 * KB, 32 * MiB, 208384} {
		got, err := ParseBytes(v.String())
		if err != nil || got != v {
			t.Errorf("Bytes %d -> %q -> %d, %v", int64(v), v.String(), got, err)
		}
	}
	if s := (32 * MiB).String(); s != "32MiB" {
		t.Errorf("32MiB prints as %q", s)
	}
	for v, want := range map[Bytes]string{9000: "9000B", 4608: "4608B", 256: "256B", 8192: "8192B", 10 * KB: "10KB", 400 * KB: "400KB", 208384: "208384B", 64 * KiB: "64KiB"} {
		if s := v.String(); s != want {
			t.Errorf("Bytes(%d) prints as %q, want %q", int64(v), s, want)
		}
	}
	if s := (100 * Gbps).String(); s != "100Gbps" {
		t.Errorf("100Gbps prints as %q", s)
	}
	if s := Microsecond.String(); s != "1us" {
		t.Errorf("1us prints as %q", s)
	}
}

func TestSerializationTime(t *testing.T) {
	cases := []struct {
		bytes int64
		rate  BitRate
		want  Time
	}{
		{84, 100 * Gbps, 6720},                // 672 bits / 100e9 = 6.72 ns
		{1538, 100 * Gbps, 123040},            // 12304 bits
		{84, 25 * Gbps, 26880},                // exact
		{84, 400 * Gbps, 1680},                // exact
		{1, 3 * Gbps, 2667},                   // 8/3e9 s = 2666.67 ps, rounded up
		{9038, 10 * Gbps, 7230400},            // jumbo at 10G
		{1 << 40, 1 * Gbps, 8796093022208000}, // large: no overflow
	}
	for _, c := range cases {
		if got := SerializationTime(c.bytes, c.rate); got != c.want {
			t.Errorf("SerializationTime(%d, %v) = %d, want %d", c.bytes, c.rate, got, c.want)
		}
	}
	if got := SerializationTime(math.MaxInt64/4, 1); got != math.MaxInt64 {
		t.Errorf("SerializationTime overflow = %d, want saturation", got)
	}
	if got := BytesIn(math.MaxInt64, math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("BytesIn overflow = %d, want saturation", got)
	}
	if got := BytesIn(-1, Second); got != 0 {
		t.Errorf("BytesIn(-1, 1s) = %d", got)
	}
	if got := BytesIn(100*Gbps, Microsecond); got != 12500 {
		t.Errorf("BytesIn(100G, 1us) = %d, want 12500", got)
	}
}

func TestYAML(t *testing.T) {
	type cfg struct {
		Delay Time     `yaml:"Delay"`
		Size  Bytes    `yaml:"Size"`
		Speed BitRate  `yaml:"Speed"`
		Share Fraction `yaml:"Share"`
	}
	var c cfg
	if err := yaml.Unmarshal([]byte("Delay: 1us\nSize: 32MiB\nSpeed: 100Gbps\nShare: 40%\n"), &c); err != nil {
		t.Fatal(err)
	}
	want := cfg{Microsecond, 32 * MiB, 100 * Gbps, 0.4}
	if c != want {
		t.Fatalf("decoded %+v, want %+v", c, want)
	}
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back cfg
	if err := yaml.Unmarshal(out, &back); err != nil || back != c {
		t.Fatalf("round trip %q -> %+v, %v", out, back, err)
	}
	if err := yaml.Unmarshal([]byte("Delay: 5 parsecs\n"), &c); err == nil {
		t.Fatal("bad unit accepted")
	}
}

func TestFractionStringRoundTrip(t *testing.T) {
	cases := []struct {
		f    Fraction
		want string
	}{
		{0.4, "40%"}, {0.6, "60%"}, {0.07, "7%"}, {0.29, "29%"}, {0.57, "57%"},
		{0.125, "12.5%"}, {1, "100%"}, {0, "0%"}, {1.0 / 3, "0.3333333333333333"},
	}
	for _, c := range cases {
		s := c.f.String()
		if s != c.want {
			t.Errorf("Fraction(%v).String() = %q, want %q", float64(c.f), s, c.want)
		}
		back, err := ParseFraction(s)
		if err != nil || back != c.f {
			t.Errorf("Fraction %v -> %q -> %v, %v: not exact", float64(c.f), s, float64(back), err)
		}
	}
}
