package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
)

// MaxPoints bounds a grid: a sweep file whose product is larger is refused (a typo
// in a list, most likely).
const MaxPoints = 100_000

// Point is one point of a sweep's grid with its validated configuration.
type Point struct {
	ID int
	// Values holds the point's value of each axis of the file, in axis order.
	Values []string
	// Sets are the overrides that make its configuration: the file's base set, then
	// one per attribute axis ("Switch.EcmpHashMethod=crc16", "Switch.BufferSize=16MiB").
	Sets []string
	// Speedup is its --speedup (1 without a speedup axis).
	Speedup float64
	// Replicate and TargetLoad are its --replicate counts and --target-load (nil and 0
	// without those axes).
	Replicate  []int
	TargetLoad float64
	// Config is its effective configuration, validated; Warnings its warnings.
	Config   *config.Config
	Warnings []string
	// ConfigSHA256 identifies Config (records.ConfigSHA256 of its JSON).
	ConfigSHA256 string
}

// Dir is the point's run directory name (records.PointDir).
func (p *Point) Dir() string { return records.PointDir(p.ID) }

// Plan is a sweep file expanded into its points.
type Plan struct {
	File   *File
	Points []*Point
}

// Settings returns "axis=value" for each axis of point p, in axis order.
func (pl *Plan) Settings(p *Point) []string {
	out := make([]string, len(pl.File.Axes))
	for i, a := range pl.File.Axes {
		out[i] = a.Name + "=" + p.Values[i]
	}
	return out
}

// Label is "p0003 (hash=crc16, Switch.BufferSize=16MiB)": how messages name a point.
func (pl *Plan) Label(p *Point) string {
	if len(pl.File.Axes) == 0 {
		return "point " + p.Dir()
	}
	return "point " + p.Dir() + " (" + strings.Join(pl.Settings(p), ", ") + ")"
}

// Expand numbers the grid's points in the product's order (the last axis varying
// fastest) and validates every point's configuration before anything runs: the
// first point whose configuration breaks a rule is an error that names it, its
// settings and the attribute (errors.Is(err, ErrInput)).
func Expand(f *File) (*Plan, error) {
	n := 1
	for _, a := range f.Axes {
		n *= len(a.Values)
		if n > MaxPoints {
			return nil, inputErrf("%s: the grid has more than %d points", name(f), MaxPoints)
		}
	}
	var base []byte
	if f.Config != "" {
		var err error
		if base, err = os.ReadFile(f.Config); err != nil {
			return nil, inputErrf("%s: config: %w", name(f), err)
		}
	}
	if _, _, err := config.Parse(base, f.Config, f.Set); err != nil {
		return nil, inputErrf("%s: the base configuration (config: and set:): %s", name(f), pointRules(err))
	}
	pl := &Plan{File: f}
	idx := make([]int, len(f.Axes))
	for k := range n {
		// idx is k in the mixed radix of the axes' lengths, the last axis fastest.
		r := k
		for i := len(f.Axes) - 1; i >= 0; i-- {
			idx[i] = r % len(f.Axes[i].Values)
			r /= len(f.Axes[i].Values)
		}
		p := &Point{ID: k, Speedup: 1, Sets: append([]string(nil), f.Set...)}
		for i, a := range f.Axes {
			v := a.Values[idx[i]]
			p.Values = append(p.Values, v)
			switch a.Name {
			case AxisSpeedup:
				p.Speedup = a.Numeric[idx[i]]
				continue
			case AxisTargetLoad:
				p.TargetLoad = a.Numeric[idx[i]]
				continue
			case AxisReplicate:
				if p.Replicate, _ = replay.ParseReplicate(v); len(p.Replicate) == 1 && p.Replicate[0] == 1 {
					p.Replicate = nil // one copy: the capture itself, as run.json records it
				}
				continue
			}
			attr := a.Name
			if a.Attribute != "" && axisAttribute[a.Name] != "" {
				attr = a.Attribute
			}
			p.Sets = append(p.Sets, attr+"="+v)
		}
		cfg, warns, err := config.Parse(base, f.Config, p.Sets)
		if err != nil {
			return nil, inputErrf("%s: %s: %s", name(f), pl.Label(p), pointRules(err))
		}
		js, err := json.Marshal(cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name(f), pl.Label(p), err)
		}
		if p.ConfigSHA256, err = records.ConfigSHA256(js); err != nil {
			return nil, err
		}
		p.Config, p.Warnings = cfg, warns
		pl.Points = append(pl.Points, p)
	}
	return pl, nil
}

func name(f *File) string {
	if f.Path == "" {
		return "sweep file"
	}
	return f.Path
}

// pointRules prints a configuration error's violations with the attribute and rule;
// the "--set" source the sweep's overrides get is left out (the point names them).
func pointRules(err error) string {
	var ce *config.Error
	if !errors.As(err, &ce) {
		return err.Error()
	}
	parts := make([]string, len(ce.Violations))
	for i, v := range ce.Violations {
		if v.Source == "--set" {
			v.Source = ""
		}
		parts[i] = v.String()
	}
	return strings.Join(parts, "; ")
}

// groupKey says which points can share one replay.Prepared: those with the same
// topology (the fabric and the host mapping).
func groupKey(p *Point) string {
	b, _ := json.Marshal(p.Config.Topology)
	return string(b)
}
