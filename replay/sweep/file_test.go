package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// The grid is numbered in the product's order: hash, lb, transport, speedup, then
// the set attributes in file order, the last varying fastest, whatever order the
// file lists the axes in; each point's configuration and speedup carry its values.
func TestExpandOrder(t *testing.T) {
	src := `
axes:
  speedup: [1, 2.5]
  set:
    Switch.EcnMinThreshold: [100KB, 200KB, 300KB]
    Switch.BufferSize: [16MiB, 32MiB]
  transport: [open]
  lb: [none, flowlet]
  hash: [crc16, crc32]
`
	f, err := Parse([]byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range f.Axes {
		names = append(names, a.Name)
	}
	if got := strings.Join(names, " "); got != "hash lb transport speedup Switch.EcnMinThreshold Switch.BufferSize" {
		t.Fatalf("axes in order %q", got)
	}
	pl, err := Expand(f)
	if err != nil {
		t.Fatal(err)
	}
	// The same grid by nested loops, outermost first.
	type want struct {
		hash, lb, speedup, ecn, buf string
	}
	var grid []want
	for _, h := range []string{"crc16", "crc32"} {
		for _, lb := range []string{"none", "flowlet"} {
			for _, sp := range []string{"1", "2.5"} {
				for _, e := range []string{"100KB", "200KB", "300KB"} {
					for _, b := range []string{"16MiB", "32MiB"} {
						grid = append(grid, want{h, lb, sp, e, b})
					}
				}
			}
		}
	}
	if len(pl.Points) != len(grid) {
		t.Fatalf("%d points, want %d", len(pl.Points), len(grid))
	}
	for k, w := range grid {
		p := pl.Points[k]
		if p.ID != k || p.Dir() != "p"+strings.Repeat("0", 4-len(strconv.Itoa(k)))+strconv.Itoa(k) {
			t.Fatalf("point %d: id %d dir %s", k, p.ID, p.Dir())
		}
		got := strings.Join(p.Values, " ")
		if exp := strings.Join([]string{w.hash, w.lb, "open", w.speedup, w.ecn, w.buf}, " "); got != exp {
			t.Fatalf("point %d: values %q, want %q", k, got, exp)
		}
		c := p.Config
		ecn, _ := units.ParseBytes(w.ecn)
		buf, _ := units.ParseBytes(w.buf)
		sp, _ := strconv.ParseFloat(w.speedup, 64)
		if c.Switch.EcmpHashMethod.String() != w.hash || c.Switch.LoadBalancingMethod.String() != w.lb ||
			c.Switch.EcnMinThreshold != ecn || c.Switch.BufferSize != buf || p.Speedup != sp ||
			c.Transport.Mode != config.TransportOpen {
			t.Errorf("point %d (%s): config hash %v lb %v ecn %v buffer %v speedup %v", k, got,
				c.Switch.EcmpHashMethod, c.Switch.LoadBalancingMethod, c.Switch.EcnMinThreshold, c.Switch.BufferSize, p.Speedup)
		}
	}
	// Points differ in configuration exactly when their configurations differ.
	if pl.Points[0].ConfigSHA256 == pl.Points[1].ConfigSHA256 {
		t.Error("two buffer sizes, one configuration digest")
	}
	if pl.Points[0].ConfigSHA256 != pl.Points[6].ConfigSHA256 { // speedup 1 vs 2.5, same config
		t.Errorf("points 0 and 6 differ only in speedup, digests %s %s", pl.Points[0].ConfigSHA256, pl.Points[6].ConfigSHA256)
	}
}

// [all] is the six hash methods; the base config file (relative to the sweep file)
// and base set apply to every point, the axes after them.
func TestHashAllAndBase(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fabric.yaml"), []byte("Switch:\n  BufferSize: 8MiB\n  Mtu: 4200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(path, []byte("config: fabric.yaml\nset:\n  Topology.Pods: 1\n  BufferSize: 12MiB\naxes:\n  hash: [all]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Expand(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Points) != len(ecmp.AllMethods) {
		t.Fatalf("%d points", len(pl.Points))
	}
	for i, m := range ecmp.AllMethods {
		c := pl.Points[i].Config
		if c.Switch.EcmpHashMethod != m || c.Topology.Pods != 1 || c.Switch.BufferSize != 12*units.MiB || c.Switch.Mtu != 4200 {
			t.Errorf("point %d: hash %v pods %d buffer %v mtu %v", i, c.Switch.EcmpHashMethod, c.Topology.Pods, c.Switch.BufferSize, c.Switch.Mtu)
		}
	}
}

// Each mistake in a sweep file is one line naming the file, line and key, and the
// rule; errors.Is(err, ErrInput).
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"no axes", "set: {Pods: 1}\n", []string{"s.yaml:1: no axes"}},
		{"unknown key", "axis:\n  hash: [crc16]\n", []string{"s.yaml:1: axis: unknown key (want axes, config or set)"}},
		{"unknown axis", "axes:\n  hashes: [crc16]\n", []string{"s.yaml:2: axes.hashes: unknown axis"}},
		{"bad hash", "axes:\n  hash: [crc16, crc33]\n", []string{`s.yaml:2: axes.hash: "crc33" is not a hash method`}},
		{"all and more", "axes:\n  hash: [all, crc16]\n", []string{"all stands alone"}},
		{"bad lb", "axes:\n  lb: [none, ecmp]\n", []string{`s.yaml:2: axes.lb: "ecmp": want none or flowlet`}},
		{"bad transport", "axes:\n  transport: [opened]\n", []string{`axes.transport: "opened": want open or closed`}},
		{"bad speedup", "axes:\n  speedup: [1, 0]\n", []string{`s.yaml:2: axes.speedup: "0": want a finite number > 0`}},
		{"not a list", "axes:\n  speedup: 2\n", []string{"s.yaml:2: axes.speedup: want a list of values"}},
		{"empty list", "axes:\n  lb: []\n", []string{"axes.lb: want at least one value"}},
		{"duplicate", "axes:\n  set:\n    BufferSize: [16MiB, 16MiB]\n", []string{`s.yaml:3: axes.set.BufferSize: "16MiB" given twice`}},
		{"unknown attribute", "axes:\n  set:\n    Switch.BuferSize: [16MiB]\n", []string{"s.yaml:3: axes.set.Switch.BuferSize: unknown attribute", "BufferSize"}},
		{"ambiguous attribute", "axes:\n  set:\n    Speed: [25G]\n", []string{"axes.set.Speed: ambiguous attribute"}},
		{"attribute of an axis", "axes:\n  hash: [crc16]\n  set:\n    EcmpHashMethod: [crc32]\n", []string{"s.yaml:4: axes.set.EcmpHashMethod: Switch.EcmpHashMethod is already an axis (hash)"}},
		{"same attribute twice", "axes:\n  set:\n    BufferSize: [1MiB]\n    Switch.BufferSize: [2MiB]\n", []string{"axes.set.Switch.BufferSize: Switch.BufferSize is already an axis (BufferSize)"}},
		{"syntax", "axes: [\n", []string{"s.yaml: YAML syntax"}},
		{"two at once", "axes:\n  lb: [x]\n  speedup: [-1]\n", []string{`axes.lb: "x"`, `axes.speedup: "-1"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "s.yaml")
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrInput) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line matching ErrInput", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// Every point's configuration is checked before anything runs: the first point that
// breaks a rule is named with its settings and the attribute.
func TestExpandNamesTheBadPoint(t *testing.T) {
	src := "axes:\n  hash: [crc16, xor16]\n  set:\n    EcnMinThreshold: [100KB, 2000KB]\n"
	f, err := Parse([]byte(src), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Expand(f)
	if err == nil {
		t.Fatal("a point with EcnMinThreshold > EcnMaxThreshold was accepted")
	}
	want := "s.yaml: point p0001 (hash=crc16, EcnMinThreshold=2000KB): Switch.EcnMinThreshold: EcnMinThreshold 2MB is above EcnMaxThreshold"
	if !strings.HasPrefix(err.Error(), want) || !errors.Is(err, ErrInput) || strings.Contains(err.Error(), "--set") {
		t.Errorf("error %q: want it to start %q", err, want)
	}
	// A base that is wrong is named as the base.
	f, err = Parse([]byte("set: {BufferSize: 0}\naxes:\n  hash: [crc16]\n"), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Expand(f); err == nil || !strings.Contains(err.Error(), "the base configuration") || !strings.Contains(err.Error(), "BufferSize") {
		t.Errorf("bad base: %v", err)
	}
}

// Axes are numeric when their attribute's values are quantities, in base units.
func TestAxisKinds(t *testing.T) {
	src := `axes:
  hash: [crc16, crc32]
  speedup: [0.5, 2]
  set:
    BufferSize: [16MiB, 400KB]
    ForwardingLatency: [0, 1.5us]
    Topology.HostLink.Speed: [25G, 100Gbps]
    EcnMaxProbability: [0.1, 20%]
    Pods: [1, 2]
    Headroom: [auto, 100KB]
    Xoff: [1000, 2KB]
    Pools[1].Size: [30%, 40%]
    Mode: [open, closed]
`
	f, err := Parse([]byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		kind string
		x    []float64
	}{
		"hash":                    {records.KindCategory, nil},
		"speedup":                 {records.KindNumber, []float64{0.5, 2}},
		"BufferSize":              {records.KindBytes, []float64{16 << 20, 400_000}},
		"ForwardingLatency":       {records.KindTime, []float64{0, 1_500_000}},
		"Topology.HostLink.Speed": {records.KindRate, []float64{25e9, 100e9}},
		"EcnMaxProbability":       {records.KindFraction, []float64{0.1, 0.2}},
		"Pods":                    {records.KindNumber, []float64{1, 2}},
		"Headroom":                {records.KindCategory, nil},
		"Xoff":                    {records.KindBytes, []float64{1000, 2000}},
		"Pools[1].Size":           {records.KindFraction, []float64{0.3, 0.4}},
		"Mode":                    {records.KindCategory, nil},
	}
	if len(f.Axes) != len(want) {
		t.Fatalf("%d axes", len(f.Axes))
	}
	for _, a := range f.Axes {
		w := want[a.Name]
		if a.Kind != w.kind || len(a.Numeric) != len(w.x) {
			t.Errorf("%s: kind %s %v, want %s %v", a.Name, a.Kind, a.Numeric, w.kind, w.x)
			continue
		}
		for i := range w.x {
			if a.Numeric[i] != w.x[i] {
				t.Errorf("%s: %v, want %v", a.Name, a.Numeric, w.x)
			}
		}
		if a.IsNumeric() != (w.kind != records.KindCategory) {
			t.Errorf("%s: IsNumeric %v", a.Name, a.IsNumeric())
		}
	}
}

// A list value (PfcEnabled) reaches the configuration as --set spells it.
func TestListValues(t *testing.T) {
	f, err := Parse([]byte("axes:\n  set:\n    PfcEnabled: [[3, 4], []]\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Expand(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.Axes[0].Values, " | "); got != "[3, 4] | []" {
		t.Errorf("values %q", got)
	}
	for i, want := range [][]int{{3, 4}, {}} {
		got := pl.Points[i].Config.Switch.PfcEnabled
		if len(got) != len(want) || (len(want) > 0 && got[0] != want[0]) {
			t.Errorf("point %d: PfcEnabled %v, want %v", i, got, want)
		}
	}
}

// The DCQCN variant is a sweep axis like any attribute, and each point gets its
// variant's defaults (docs/model.md#dcqcn): the paper point runs the paper's timers,
// F and byte counter, the mlx point ConnectX's; an attribute the sweep sets applies
// to both.
func TestDcqcnVariantAxis(t *testing.T) {
	f, err := Parse([]byte("set:\n  Transport.MinRate: 2Gbps\naxes:\n  set:\n    Transport.DcqcnVariant: [mlx, paper]\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Expand(f)
	if err != nil {
		t.Fatal(err)
	}
	mlx, paper := pl.Points[0].Config.Transport, pl.Points[1].Config.Transport
	if mlx.DcqcnVariant != config.DcqcnMlx || mlx.RateIncreaseTimer != 300*units.Microsecond || mlx.FastRecoverySteps != 1 || mlx.ByteCounter != 0 {
		t.Errorf("mlx point: %+v", mlx)
	}
	if paper.DcqcnVariant != config.DcqcnPaper || paper.RateIncreaseTimer != 55*units.Microsecond || paper.FastRecoverySteps != 5 ||
		paper.ByteCounter != 10*units.MB || paper.CnpInterval != 50*units.Microsecond || !paper.ClampTargetRate {
		t.Errorf("paper point: %+v", paper)
	}
	if mlx.MinRate != 2*units.Gbps || paper.MinRate != 2*units.Gbps {
		t.Errorf("MinRate set by the sweep: %v and %v", mlx.MinRate, paper.MinRate)
	}
}
