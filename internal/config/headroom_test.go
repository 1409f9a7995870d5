package config

import (
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

func TestResponseQuanta(t *testing.T) {
	cases := []struct {
		speed units.BitRate
		want  int
	}{
		{1 * units.Gbps, 67}, {10 * units.Gbps, 67}, {25 * units.Gbps, 80}, {40 * units.Gbps, 118},
		{50 * units.Gbps, 147}, {100 * units.Gbps, 394}, {200 * units.Gbps, 453},
		{400 * units.Gbps, 905}, {30 * units.Gbps, 118}, {101 * units.Gbps, 453},
		{800 * units.Gbps, 1810}, {401 * units.Gbps, 908}, // ceil(905*401/400) = ceil(907.26)
	}
	for _, c := range cases {
		if got := ResponseQuanta(c.speed); got != c.want {
			t.Errorf("ResponseQuanta(%v) = %d, want %d", c.speed, got, c.want)
		}
	}
}

func TestCellFactor(t *testing.T) {
	cases := []struct {
		mtu, cell units.Bytes
		num, den  int64
	}{
		{9000, 256, 256, 84},  // 64-byte frames: 1 cell for 84 wire bytes
		{1500, 128, 256, 149}, // 129-byte frames take 2 cells of 128
		{9000, 64, 128, 85},   // 65-byte frames take 2 cells of 64: 128/85 > 64/84
		{9000, 80, 160, 101},
	}
	for _, c := range cases {
		num, den := CellFactor(c.mtu, c.cell)
		if num*c.den != c.num*den {
			t.Errorf("CellFactor(%d, %d) = %d/%d, want %d/%d", c.mtu, c.cell, num, den, c.num, c.den)
		}
	}
	// Brute force: no frame size beats the returned ratio.
	for _, cell := range []units.Bytes{64, 80, 96, 128, 200, 256, 384} {
		num, den := CellFactor(1500, cell)
		for f := int64(64); f <= 1518; f++ {
			n := (f + int64(cell) - 1) / int64(cell) * int64(cell)
			if n*den > num*(f+20) {
				t.Fatalf("cell %d: frame %d has ratio %d/%d above %d/%d", cell, f, n, f+20, num, den)
			}
		}
	}
}

// TestAutoHeadroomWorkedExample pins the worked example of docs/model.md#headroom-sizing
// (it counts the frame whose arrival triggers the pause: 3 jumbo wire frames).
func TestAutoHeadroomWorkedExample(t *testing.T) {
	if w := PeakArrival(100*units.Gbps, units.Microsecond, 9000); w != 77414 {
		t.Fatalf("W = %d, want 77,414 = 27,114 + 84 + 25,000 + 25,216", w)
	}
	h := AutoHeadroom(100*units.Gbps, units.Microsecond, 9000, 256)
	if h != 236032 || h/256 != 922 {
		t.Fatalf("AutoHeadroom(100G, 1us, 9000, 256) = %d B, want 236,032 B (922 cells)", h)
	}
}

func TestAutoHeadroomTable(t *testing.T) {
	// W = 3*(Mtu+38) + 84 + 2*ceil(C*d/8) + R*64, headroom = ceil(W*256/84/256)*256.
	cases := []struct {
		speed units.BitRate
		delay units.Time
		mtu   units.Bytes
		w     units.Bytes
		cells int64
	}{
		// 10G, 1us: 27114 + 84 + 2*1250 + 67*64=4288 -> 33986; 33986/84 = 404.6 -> 405 cells.
		{10 * units.Gbps, units.Microsecond, 9000, 33986, 405},
		// 25G, 1us: 27114 + 84 + 6250 + 5120 = 38568; 38568/84 = 459.1 -> 460.
		{25 * units.Gbps, units.Microsecond, 9000, 38568, 460},
		// 400G, 1us: 27114 + 84 + 100000 + 57920 = 185118; /84 = 2203.8 -> 2204.
		{400 * units.Gbps, units.Microsecond, 9000, 185118, 2204},
		// 100G, 500ns, MTU 1500: 4614 + 84 + 12500 + 25216 = 42414; /84 = 504.9 -> 505.
		{100 * units.Gbps, 500 * units.Nanosecond, 1500, 42414, 505},
		// 100G, 0 delay: 27114 + 84 + 0 + 25216 = 52414; /84 = 623.98 -> 624.
		{100 * units.Gbps, 0, 9000, 52414, 624},
		// 10G, 333ps: C*d/8 = 0.41625 -> 1 byte each way; 31488/84 = 374.9 -> 375.
		{10 * units.Gbps, 333, 9000, 27114 + 84 + 2 + 4288, 375},
		// 10G, 1001ns: C*d/8 = 1251.25 -> 1252 each way; 33990/84 = 404.6 -> 405.
		{10 * units.Gbps, 1001 * units.Nanosecond, 9000, 27114 + 84 + 2504 + 4288, 405},
	}
	for _, c := range cases {
		if w := PeakArrival(c.speed, c.delay, c.mtu); w != c.w {
			t.Errorf("PeakArrival(%v, %v, %d) = %d, want %d", c.speed, c.delay, c.mtu, w, c.w)
		}
		if h := AutoHeadroom(c.speed, c.delay, c.mtu, 256); h != units.Bytes(c.cells*256) {
			t.Errorf("AutoHeadroom(%v, %v, %d) = %d B (%d cells), want %d cells", c.speed, c.delay, c.mtu, h, h/256, c.cells)
		}
	}
}

func TestHeadroomForWarnsBelowFormula(t *testing.T) {
	s := Default().Switch
	h, warn := s.HeadroomFor(100*units.Gbps, units.Microsecond)
	if h != 236032 || warn != "" {
		t.Fatalf("auto: %d, %q", h, warn)
	}
	s.Headroom = FixedHeadroom(100 * units.KiB)
	h, warn = s.HeadroomFor(100*units.Gbps, units.Microsecond)
	if h != 100*units.KiB || !strings.Contains(warn, "Switch.Headroom") || !strings.Contains(warn, "236032") {
		t.Fatalf("fixed 100KiB: %d, %q", h, warn)
	}
	s.Headroom = FixedHeadroom(236032)
	if _, warn = s.HeadroomFor(100*units.Gbps, units.Microsecond); warn != "" {
		t.Fatalf("fixed = formula warned: %q", warn)
	}
}

// TestHeadroomForwardingLatency: a ForwardingLatency delays the pause decision, so the
// bytes arriving meanwhile are added to W (20 us at 100 Gb/s: 250,000 B more).
func TestHeadroomForwardingLatency(t *testing.T) {
	s := Default().Switch
	base, _ := s.HeadroomFor(100*units.Gbps, units.Microsecond)
	s.ForwardingLatency = 20 * units.Microsecond
	got, _ := s.HeadroomFor(100*units.Gbps, units.Microsecond)
	num, den := CellFactor(s.Mtu, s.CellSize)
	// W = 77,414 + 250,000 = 327,414 wire bytes; x 256/84 -> cells, rounded up.
	w := int64(327414)
	cells := (w*num + den*256 - 1) / (den * 256)
	if got != units.Bytes(cells*256) || got <= base {
		t.Errorf("headroom with 20us forwarding latency = %d B, want %d B (base %d B)", got, cells*256, base)
	}
}
