package plots

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

func sweepFixture() SweepMetric {
	return SweepMetric{Name: "drops", Title: "drops", Unit: "packets", Panels: []SweepPanel{{
		Axis: "Switch.BufferSize", X: []float64{16 << 20, 32 << 20, 64 << 20}, Labels: []string{"16MiB", "32MiB", "64MiB"},
		LineAxes: []string{"hash"},
		Lines: []SweepLine{
			{Values: []string{"crc16"}, X: []float64{16 << 20, 32 << 20, 64 << 20}, Y: []float64{90, 20, 0}},
			{Values: []string{"xor16"}, X: []float64{16 << 20, 32 << 20, 64 << 20}, Y: []float64{80, math.NaN(), 3}},
		},
	}}}
}

// A sweep figure renders as PNG and SVG under its name, sweep_<metric>, with the
// other axes' values in the legend.
func TestSweepFigure(t *testing.T) {
	f, err := Sweep(sweepFixture(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "sweep_drops" || f.Title != "Sweep: drops" {
		t.Errorf("name %q title %q", f.Name, f.Title)
	}
	png, err := f.Render(PNG)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("png: %v", err)
	}
	svg, err := f.Render(SVG)
	if err != nil || !strings.Contains(string(svg), "xor16") || !strings.Contains(string(svg), "32MiB") {
		t.Errorf("svg lacks the legend or the ticks (%v)", err)
	}
	// Two panels: each with its own legend.
	m := sweepFixture()
	m.Panels = append(m.Panels, SweepPanel{Axis: "speedup", X: []float64{1, 2}, Labels: []string{"1", "2"}, LineAxes: []string{"hash"},
		Lines: []SweepLine{{Values: []string{"crc32"}, X: []float64{1, 2}, Y: []float64{1, 2}}}})
	f, err = Sweep(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if svg, err := f.Render(SVG); err != nil || !strings.Contains(string(svg), "crc32") || !strings.Contains(string(svg), "lines: hash") {
		t.Errorf("two panels: %v", err)
	}
}

func TestSweepFigureRefuses(t *testing.T) {
	m := sweepFixture()
	for i := range m.Panels[0].Lines {
		for k := range m.Panels[0].Lines[i].Y {
			m.Panels[0].Lines[i].Y[k] = math.NaN()
		}
	}
	if _, err := Sweep(m, Options{}); !errors.Is(err, ErrNoData) {
		t.Errorf("no values: %v", err)
	}
	m = sweepFixture()
	m.Panels[0].Lines[0].Y = m.Panels[0].Lines[0].Y[:2]
	if _, err := Sweep(m, Options{}); err == nil || errors.Is(err, ErrNoData) {
		t.Errorf("2 y for 3 x: %v", err)
	}
	m = sweepFixture()
	m.Name = "Drops Total"
	if _, err := Sweep(m, Options{}); err == nil {
		t.Error("a metric name that is no file name was accepted")
	}
}
