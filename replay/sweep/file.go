package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// ErrInput is wrapped by every error in a sweep's input: the sweep file, a point's
// configuration, the sweep directory. The command maps it to exit status 2.
var ErrInput = errors.New("bad sweep input")

// inputError is an error in the sweep's input (errors.Is(err, ErrInput)) that prints
// only its own message.
type inputError struct{ err error }

func (e inputError) Error() string        { return e.err.Error() }
func (e inputError) Unwrap() error        { return e.err }
func (e inputError) Is(target error) bool { return target == ErrInput }

func inputErrf(format string, args ...any) error { return inputError{fmt.Errorf(format, args...)} }

// The axes a sweep file may name besides set, in point-numbering order.
const (
	AxisHash      = "hash"      // Switch.EcmpHashMethod
	AxisLB        = "lb"        // Switch.LoadBalancingMethod
	AxisTransport = "transport" // Transport.Mode
	AxisSpeedup   = "speedup"   // replay's --speedup
	// AxisReplicate is replay's --replicate (N, or one count per trace: "3,1");
	// AxisTargetLoad its --target-load, percent.
	AxisReplicate  = "replicate"
	AxisTargetLoad = "target_load"
	axisSet        = "set"
)

var fixedAxes = []string{AxisHash, AxisLB, AxisTransport, AxisSpeedup, AxisReplicate, AxisTargetLoad}

// replayAxes are the fixed axes that set a replay option, not a configuration
// attribute.
var replayAxes = map[string]bool{AxisSpeedup: true, AxisReplicate: true, AxisTargetLoad: true}

// axisAttribute is the configuration attribute each fixed axis sets ("" for speedup).
var axisAttribute = map[string]string{
	AxisHash:      "Switch.EcmpHashMethod",
	AxisLB:        "Switch.LoadBalancingMethod",
	AxisTransport: "Transport.Mode",
}

// File is a parsed sweep file (docs/sweeps.md):
//
//	config: fabric.yaml        # optional: the configuration every point starts from
//	set:                       # optional: attributes every point shares
//	  Topology.Pods: 1
//	axes:                      # every axis optional; the grid is their product
//	  hash: [crc32WithSalt, crc16]   # or [all]
//	  lb: [none, flowlet]
//	  transport: [open, closed]
//	  speedup: [1, 2, 4]
//	  set:                     # any attribute, values as --set spells them
//	    Switch.BufferSize: [16MiB, 32MiB]
type File struct {
	// Path is the sweep file as given ("" for text parsed from memory).
	Path string
	// Config is the base configuration file, resolved against the sweep file's
	// directory ("" = the built-in defaults).
	Config string
	// Set are the base overrides, "Attr=Value", in file order.
	Set []string
	// Axes are the axes in point-numbering order: hash, lb, transport, speedup, then
	// the set attributes in file order.
	Axes []records.SweepAxis
}

// ParseFile reads and checks the sweep file at path.
func ParseFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, inputErrf("sweep file: %w", err)
	}
	return Parse(data, path)
}

// Parse checks a sweep file's text; source names it in messages and locates its
// relative config path. Every problem is reported, each as "source:line: key: rule",
// joined by "; ".
func Parse(data []byte, source string) (*File, error) {
	p := &parser{source: source}
	f := &File{Path: source}
	p.file(data, f)
	if len(p.errs) > 0 {
		return nil, inputError{errors.New(strings.Join(p.errs, "; "))}
	}
	return f, nil
}

type parser struct {
	source string
	errs   []string
}

func (p *parser) fail(n *yaml.Node, key, format string, args ...any) {
	loc := p.source
	if loc == "" {
		loc = "sweep file"
	}
	if n != nil && n.Line > 0 {
		loc += ":" + strconv.Itoa(n.Line)
	}
	msg := loc + ": "
	if key != "" {
		msg += key + ": "
	}
	p.errs = append(p.errs, msg+fmt.Sprintf(format, args...))
}

func (p *parser) file(data []byte, f *File) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			p.fail(nil, "", "empty sweep file (want axes: with at least one axis)")
			return
		}
		p.fail(nil, "", "YAML syntax: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		return
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		p.fail(root, "", "want a mapping with axes: (and optionally config: and set:)")
		return
	}
	var axes *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "axes":
			axes = v
		case "config":
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				p.fail(v, "config", "want the path of a configuration file")
				continue
			}
			f.Config = v.Value
			if !filepath.IsAbs(f.Config) && p.source != "" {
				f.Config = filepath.Join(filepath.Dir(p.source), f.Config)
			}
		case "set":
			if v.Kind != yaml.MappingNode {
				p.fail(v, "set", "want a mapping of attributes to one value each, e.g. Topology.Pods: 1")
				continue
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				f.Set = append(f.Set, v.Content[j].Value+"="+nodeText(v.Content[j+1]))
			}
		default:
			p.fail(k, k.Value, "unknown key (want axes, config or set)")
		}
	}
	if axes == nil {
		p.fail(root, "", "no axes: (want e.g. axes: {hash: [all]})")
		return
	}
	p.axes(axes, f)
}

// axes reads the axes mapping into f.Axes in point-numbering order.
func (p *parser) axes(n *yaml.Node, f *File) {
	if n.Kind != yaml.MappingNode {
		p.fail(n, "axes", "want a mapping of axes (hash, lb, transport, speedup, replicate, target_load, set)")
		return
	}
	fixed := map[string]*yaml.Node{}
	var set *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case k.Value == axisSet:
			set = v
		case axisAttribute[k.Value] != "" || replayAxes[k.Value]:
			if fixed[k.Value] != nil {
				p.fail(k, "axes."+k.Value, "given twice")
			}
			fixed[k.Value] = v
		default:
			p.fail(k, "axes."+k.Value, "unknown axis (want hash, lb, transport, speedup, replicate, target_load, or set: for configuration attributes)")
		}
	}
	if fixed[AxisSpeedup] != nil && fixed[AxisTargetLoad] != nil {
		p.fail(fixed[AxisTargetLoad], "axes."+AxisTargetLoad, "target_load chooses each point's speedup: give it or a speedup axis, not both")
	}
	taken := map[string]string{} // attribute path -> axis name
	for _, name := range fixedAxes {
		v := fixed[name]
		if v == nil {
			continue
		}
		a, ok := p.fixedAxis(name, v)
		if ok {
			f.Axes = append(f.Axes, a)
			if a.Attribute != "" {
				taken[a.Attribute] = name
			}
		}
	}
	if set == nil {
		return
	}
	if set.Kind != yaml.MappingNode {
		p.fail(set, "axes.set", "want a mapping of attributes to lists of values, e.g. Switch.BufferSize: [16MiB, 32MiB]")
		return
	}
	for i := 0; i+1 < len(set.Content); i += 2 {
		k, v := set.Content[i], set.Content[i+1]
		key := "axes.set." + k.Value
		path, typ, err := config.Attribute(k.Value)
		if err != nil {
			p.fail(k, key, "%s", ruleOf(err))
			continue
		}
		if other, dup := taken[path]; dup {
			p.fail(k, key, "%s is already an axis (%s)", path, other)
			continue
		}
		taken[path] = k.Value
		values := p.values(v, key)
		if values == nil {
			continue
		}
		if path == "Topology.File" && p.source != "" {
			// Topology files are relative to the sweep file, as its config: is.
			for i, f := range values {
				if f != "" && !filepath.IsAbs(f) {
					values[i] = filepath.Join(filepath.Dir(p.source), f)
				}
			}
		}
		a := records.SweepAxis{Name: k.Value, Attribute: path, Values: values, Kind: records.KindCategory}
		a.Kind, a.Numeric = numericKind(typ, values)
		f.Axes = append(f.Axes, a)
	}
}

// ruleOf is the rule of a configuration error without the attribute (the caller
// names it with its own key).
func ruleOf(err error) string {
	var ce *config.Error
	if errors.As(err, &ce) && len(ce.Violations) == 1 {
		return ce.Violations[0].Rule
	}
	return err.Error()
}

// values reads a list of distinct values (nil after reporting a problem).
func (p *parser) values(n *yaml.Node, key string) []string {
	if n.Kind != yaml.SequenceNode {
		p.fail(n, key, "want a list of values, e.g. [a, b]")
		return nil
	}
	if len(n.Content) == 0 {
		p.fail(n, key, "want at least one value")
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, v := range n.Content {
		s := nodeText(v)
		if seen[s] {
			p.fail(v, key, "%q given twice (two identical points)", s)
			return nil
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// fixedAxis reads one of hash, lb, transport and speedup and checks its values.
func (p *parser) fixedAxis(name string, n *yaml.Node) (records.SweepAxis, bool) {
	key := "axes." + name
	values := p.values(n, key)
	if values == nil {
		return records.SweepAxis{}, false
	}
	a := records.SweepAxis{Name: name, Attribute: axisAttribute[name], Values: values, Kind: records.KindCategory}
	ok := true
	bad := func(i int, format string, args ...any) {
		p.fail(n.Content[i], key, format, args...)
		ok = false
	}
	switch name {
	case AxisHash:
		if len(values) == 1 && values[0] == "all" {
			a.Values = a.Values[:0]
			for _, m := range ecmp.AllMethods {
				a.Values = append(a.Values, m.String())
			}
			break
		}
		for i, v := range values {
			if _, err := ecmp.ParseMethod(v); err != nil {
				var names []string
				for _, m := range ecmp.AllMethods {
					names = append(names, m.String())
				}
				if v == "all" {
					bad(i, "all stands alone ([all] is the six methods)")
				} else {
					bad(i, "%q is not a hash method (want %s, or [all])", v, strings.Join(names, ", "))
				}
			}
		}
	case AxisLB:
		for i, v := range values {
			if _, err := ecmp.ParseLoadBalancing(v); err != nil {
				bad(i, "%q: want none or flowlet", v)
			}
		}
	case AxisTransport:
		for i, v := range values {
			if _, err := config.ParseTransportMode(v); err != nil {
				bad(i, "%q: %s", v, config.WantTransportMode(v))
			}
		}
	case AxisSpeedup, AxisTargetLoad:
		a.Kind = records.KindNumber
		for i, v := range values {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x > 0) || math.IsInf(x, 0) {
				what := "a finite number > 0"
				if name == AxisTargetLoad {
					what = "a percentage > 0 (80 is 80% of the busiest host link's speed)"
				}
				bad(i, "%q: want %s", v, what)
				continue
			}
			a.Numeric = append(a.Numeric, x)
		}
	case AxisReplicate:
		// Numbers of copies; a value with one count per trace ("3,1") makes the axis a
		// category.
		a.Kind = records.KindNumber
		for i, v := range values {
			counts, err := replay.ParseReplicate(v)
			if err != nil {
				bad(i, "%s", err)
				continue
			}
			if len(counts) == 1 {
				a.Numeric = append(a.Numeric, float64(counts[0]))
			}
		}
		if len(a.Numeric) != len(values) {
			a.Kind, a.Numeric = records.KindCategory, nil
		}
	}
	return a, ok
}

// nodeText is a YAML value as --set spells it: a scalar as written, a list or a
// mapping in flow style ("[3, 4]", "{Speed: 25G}").
func nodeText(n *yaml.Node) string {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	c := *n
	flow(&c)
	b, err := yaml.Marshal(&c)
	if err != nil {
		return fmt.Sprint(n.Value)
	}
	return strings.TrimSpace(string(b))
}

func flow(n *yaml.Node) {
	n.Style |= yaml.FlowStyle
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for i, c := range n.Content {
		cc := *c
		flow(&cc)
		n.Content[i] = &cc
	}
}

// numericKind says whether an attribute's values are numbers, and in which unit:
// from the attribute's type (units.Bytes, units.Time, units.BitRate, numbers) and,
// for the other types (a pool size, the headroom), from the values when they all
// read as sizes or shares. Anything else is a category.
func numericKind(t reflect.Type, values []string) (string, []float64) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	try := func(kind string, parse func(string) (float64, error)) (string, []float64, bool) {
		out := make([]float64, len(values))
		for i, v := range values {
			x, err := parse(v)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return "", nil, false
			}
			out[i] = x
		}
		return kind, out, true
	}
	bytesOf := func(s string) (float64, error) { b, err := units.ParseBytes(s); return float64(b), err }
	timeOf := func(s string) (float64, error) { d, err := units.ParseTime(s); return float64(d), err }
	rateOf := func(s string) (float64, error) { r, err := units.ParseBitRate(s); return float64(r), err }
	number := func(s string) (float64, error) { return strconv.ParseFloat(strings.TrimSpace(s), 64) }
	share := func(s string) (float64, error) {
		if !strings.HasSuffix(strings.TrimSpace(s), "%") {
			return number(s)
		}
		f, err := units.ParseFraction(s)
		return float64(f), err
	}
	var cands []func() (string, []float64, bool)
	switch {
	case t == reflect.TypeFor[units.Bytes]():
		cands = append(cands, func() (string, []float64, bool) { return try(records.KindBytes, bytesOf) })
	case t == reflect.TypeFor[units.Time]():
		cands = append(cands, func() (string, []float64, bool) { return try(records.KindTime, timeOf) })
	case t == reflect.TypeFor[units.BitRate]():
		cands = append(cands, func() (string, []float64, bool) { return try(records.KindRate, rateOf) })
	case t == reflect.TypeFor[units.Fraction]():
		cands = append(cands, func() (string, []float64, bool) { return try(records.KindFraction, share) })
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		if t.Implements(reflect.TypeFor[fmt.Stringer]()) {
			break // an enumeration (a method, a mode)
		}
		cands = append(cands, func() (string, []float64, bool) { return try(records.KindNumber, number) })
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		cands = append(cands,
			func() (string, []float64, bool) { return try(records.KindNumber, number) },
			func() (string, []float64, bool) { return try(records.KindFraction, share) })
	case t.Kind() == reflect.Struct:
		// PoolSize ("60%" or "12MiB"), Headroom ("auto" or a size): numeric when
		// every value is of one kind.
		percent := func(s string) (float64, error) {
			if !strings.HasSuffix(strings.TrimSpace(s), "%") {
				return 0, units.ErrSyntax
			}
			return share(s)
		}
		cands = append(cands,
			func() (string, []float64, bool) { return try(records.KindFraction, percent) },
			func() (string, []float64, bool) { return try(records.KindBytes, bytesOf) })
	}
	for _, c := range cands {
		if kind, xs, ok := c(); ok {
			return kind, xs
		}
	}
	return records.KindCategory, nil
}
