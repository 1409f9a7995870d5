package config

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	suggestpkg "github.com/tracefabric/tracefabric/internal/suggest"
	"github.com/tracefabric/tracefabric/internal/units"
)

// Load reads the configuration: the YAML file at path decoded onto Default (path ""
// = the defaults alone; unset attributes keep their defaults), then each --set
// override "Attr=Value" in order (see Config.Set), then, with Transport.DcqcnVariant
// paper, the paper's defaults for the attributes neither set
// (Transport.UsePaperDefaults), then Validate. Decoding is strict:
// an unknown attribute is an error naming its path and line, with a suggestion.
// Every problem found is reported in one *Error (wrapping ErrInvalid), each naming
// "file:line: Attr: rule" where the attribute was set. The warnings are those of
// Config.Warnings (e.g. a fixed headroom below the formula of docs/model.md#headroom-sizing).
func Load(path string, sets []string) (*Config, []string, error) {
	var data []byte
	if path != "" {
		var err error
		data, err = os.ReadFile(path)
		if err != nil {
			return nil, nil, &Error{Violations: []Violation{{Rule: "cannot read the configuration: " + err.Error()}}, cause: err}
		}
	}
	return Parse(data, path, sets)
}

// Parse is Load on YAML text already in memory; source names it in messages (a file
// name, or "" for none).
func Parse(data []byte, source string, sets []string) (*Config, []string, error) {
	c := Default()
	d := newDecoder(source)
	if len(bytes.TrimSpace(data)) > 0 {
		d.decodeDocument(data, &c)
	}
	for _, s := range sets {
		d.source = "--set"
		d.set(&c, s)
	}
	d.resolveProfiles(&c)
	d.resolveTopologyFile(&c)
	if err := d.errs.errOrNil(); err != nil {
		return nil, nil, err
	}
	if c.Transport.DcqcnVariant == DcqcnPaper {
		c.Transport.UsePaperDefaults(func(attr string) bool { _, ok := d.set_[attr]; return ok })
	}
	if err := c.Validate(); err != nil {
		var e *Error
		if errors.As(err, &e) {
			d.locate(e)
		}
		return nil, nil, err
	}
	return &c, c.Warnings(), nil
}

// Set applies one override "Attr=Value" to c (without validating). Attr is a dotted
// path such as "Switch.BufferSize", "Topology.HostLink.Speed" or
// "Switch.Pools[1].Size", or its tail when that names one attribute: "BufferSize",
// "Pods", "HostLink.Speed", "Pools[1].Size". A bare name that matches several
// attributes resolves to the one outside lists and maps (EcnMinThreshold is
// Switch.EcnMinThreshold, not an EcnClasses override) or else is an error listing
// them (Speed). Value is YAML in the file's spelling: "32MiB", "auto", "[3, 4]"
// (lists of TCs also as "3,4"), "{Speed: 25G, PropagationDelay: 2us}".
func (c *Config) Set(assignment string) error {
	d := newDecoder("--set")
	d.set(c, assignment)
	d.resolveProfiles(c)
	return d.errs.errOrNil()
}

// YAML prints the configuration in the file's spelling (human units), each attribute
// with a short comment (unit, choices, meaning of zero); Load of the result gives back
// an equal Config.
func (c *Config) YAML() ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(c); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	comment(&n, "")
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return b.Bytes(), nil
}

// origin is where an attribute was set.
type origin struct {
	source string
	line   int
}

type decoder struct {
	source string
	errs   *Error
	set_   map[string]origin // attribute path -> where it was last set
	// profiles are the overrides of each switch profile, in order (profiles.go).
	profiles     map[string][]profileOverride
	profileNames []string
}

func newDecoder(source string) *decoder {
	return &decoder{source: source, errs: &Error{}, set_: map[string]origin{}}
}

func (d *decoder) fail(line int, attr, format string, args ...any) {
	if d.source == "--set" {
		line = 0
	}
	d.errs.Violations = append(d.errs.Violations, Violation{
		Source: d.source, Line: line, Attr: attr, Rule: fmt.Sprintf(format, args...),
	})
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// tabLine returns the first line from line on (1-based) whose indentation holds a
// tab: the YAML parser reports a tab that violates indentation at the line before.
func tabLine(data []byte, line int) int {
	for i, l := range strings.Split(string(data), "\n") {
		if i+1 < line {
			continue
		}
		if indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]; strings.Contains(indent, "\t") {
			return i + 1
		}
	}
	return line
}

func (d *decoder) decodeDocument(data []byte, c *Config) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return
		}
		msg := err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			if strings.Contains(m[2], "tab character") {
				line = tabLine(data, line)
			}
			d.fail(line, "", "YAML syntax: %s", m[2])
		} else {
			d.fail(0, "", "YAML syntax: %s", strings.TrimPrefix(msg, "yaml: "))
		}
		return
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.fail(extra.Line, "", "a configuration file holds one YAML document (found a second)")
		return
	}
	n := &root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return
		}
		n = n.Content[0]
	}
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, "", "the file must be a mapping of sections (Seed, Switch, Topology)")
		return
	}
	d.decode(n, reflect.ValueOf(c).Elem(), "")
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

// decode stores node n into v (addressable), reporting problems under path.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	d.set_[path] = origin{d.source, n.Line}
	if v.Kind() != reflect.Pointer && v.Addr().Type().Implements(textUnmarshalerType) {
		if n.Kind != yaml.ScalarNode || isNull(n) {
			d.fail(n.Line, path, "needs a value (%s)", describe(v.Type()))
			return
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
			d.fail(n.Line, path, "%v", err)
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.Pointer:
		if isNull(n) {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		d.decode(n, p.Elem(), path)
		v.Set(p)
	default:
		d.decodeScalar(n, v, path)
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		return // "Switch:" with nothing under it keeps the defaults
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, path, "needs a mapping of attributes (%s), not %s", strings.Join(fieldNames(v.Type()), ", "), kindName(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		name := k.Value
		at := join(path, name)
		if first, dup := seen[name]; dup {
			d.fail(k.Line, at, "set twice (first on line %d)", first)
			continue
		}
		seen[name] = k.Line
		f, ok := fieldByName(v.Type(), name)
		if !ok {
			d.fail(k.Line, at, "unknown attribute%s", suggest(name, fieldNames(v.Type())))
			continue
		}
		if at == "Switches" {
			d.addProfiles(val) // resolved over Switch at the end (profiles.go)
			d.set_[at] = origin{d.source, k.Line}
			continue
		}
		d.decode(val, v.FieldByIndex(f.Index), at)
		d.set_[at] = origin{d.source, k.Line} // point at the key, not the value's first line
	}
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		v.SetZero()
		return
	}
	elem := v.Type().Elem()
	var items []*yaml.Node
	switch {
	case n.Kind == yaml.SequenceNode:
		items = n.Content
	case n.Kind == yaml.ScalarNode && elem.Kind() == reflect.Int:
		// "3,4" or "3": a list of TCs written inline (handy with --set).
		for _, s := range strings.Split(n.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				items = append(items, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: s, Line: n.Line, Column: n.Column})
			}
		}
	default:
		d.fail(n.Line, path, "needs a list, not %s", kindName(n))
		return
	}
	if len(items) == 0 {
		v.SetZero()
		return
	}
	s := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, it := range items {
		d.decode(it, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if isNull(n) {
		v.SetZero()
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, path, "needs a mapping, not %s", kindName(n))
		return
	}
	if len(n.Content) == 0 {
		v.SetZero()
		return
	}
	m := reflect.MakeMap(v.Type())
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := reflect.New(v.Type().Key()).Elem()
		at := fmt.Sprintf("%s[%s]", path, k.Value)
		if first, dup := seen[k.Value]; dup {
			d.fail(k.Line, at, "set twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		if !d.decodeScalar(k, key, at) {
			continue
		}
		if m.MapIndex(key).IsValid() {
			d.fail(k.Line, at, "set twice (the same key spelled differently)")
			continue
		}
		ev := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, ev, at)
		m.SetMapIndex(key, ev)
	}
	v.Set(m)
}

// decodeScalar stores a scalar into an int, uint, float, bool or string value.
func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		d.fail(n.Line, path, "needs a value (%s), not %s", describe(v.Type()), kindName(n))
		return false
	}
	s := strings.TrimSpace(n.Value)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, err := strconv.ParseInt(s, 0, v.Type().Bits())
		if err != nil {
			d.fail(n.Line, path, "%q is not an integer", n.Value)
			return false
		}
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		x, err := strconv.ParseUint(s, 0, v.Type().Bits())
		if err != nil {
			d.fail(n.Line, path, "%q is not an unsigned %d-bit integer (e.g. 12345 or 0x1234abcd)", n.Value, v.Type().Bits())
			return false
		}
		v.SetUint(x)
	case reflect.Float32, reflect.Float64:
		x, err := units.ParseFraction(s)
		if err != nil {
			d.fail(n.Line, path, "%q is not a number (e.g. 0.125 or 12.5%%)", n.Value)
			return false
		}
		v.SetFloat(float64(x))
	case reflect.Bool:
		x, err := strconv.ParseBool(s)
		if err != nil {
			d.fail(n.Line, path, "%q is not true or false", n.Value)
			return false
		}
		v.SetBool(x)
	case reflect.String:
		v.SetString(n.Value)
	default:
		d.fail(n.Line, path, "cannot hold a %s value", v.Type())
		return false
	}
	return true
}

func kindName(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}

func describe(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[units.Bytes]():
		return `a size, e.g. "32MiB", "400KB", "9000"`
	case reflect.TypeFor[units.Time]():
		return `a duration, e.g. "1us", "500ns"`
	case reflect.TypeFor[units.BitRate]():
		return `a speed, e.g. "100Gbps", "25G"`
	case reflect.TypeFor[PoolSize]():
		return `a share "60%" or a size "12MiB"`
	case reflect.TypeFor[Headroom]():
		return `"auto" or a size`
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Uint32, reflect.Uint64:
		return "an unsigned integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	}
	return t.String()
}

// yamlName returns the attribute name of a struct field (its yaml tag name).
func yamlName(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return f.Name
	}
	return name
}

func fieldByName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.IsExported() && yamlName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() {
			names = append(names, yamlName(f))
		}
	}
	return names
}

// suggest returns " (did you mean X?)" for the closest known name when it is close
// (internal/suggest), or else the list of known names when there are few, and where
// to find them when there are many.
func suggest(name string, known []string) string {
	if best, ok := suggestpkg.Nearest(name, known); ok {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	if len(known) <= 10 {
		return fmt.Sprintf(" (known: %s)", strings.Join(known, ", "))
	}
	return " (replay config --defaults prints every attribute)"
}

// locate fills in where each violated attribute was set (the longest recorded prefix
// of its path), so validation errors point at the file line or the --set.
func (d *decoder) locate(e *Error) {
	for i := range e.Violations {
		v := &e.Violations[i]
		if v.Source != "" {
			continue
		}
		found := false
		for _, p := range append([]string{v.Attr}, v.related...) {
			if o, ok := d.set_[p]; ok {
				v.Source, v.Line, found = o.source, o.line, true
				if o.source == "--set" {
					v.Line = 0
				}
				break
			}
		}
		for p := v.Attr; p != "" && !found; p = parentPath(p) {
			if o, ok := d.set_[p]; ok {
				v.Source, v.Line = o.source, o.line
				if o.source == "--set" {
					v.Line = 0
				}
				break
			}
		}
	}
	rank := func(v Violation) int {
		switch v.Source {
		case "":
			return 2 // a default
		case "--set":
			return 1
		}
		return 0 // the file
	}
	sort.SliceStable(e.Violations, func(i, j int) bool {
		a, b := e.Violations[i], e.Violations[j]
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		return a.Line < b.Line
	})
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// resolveTopologyFile makes Topology.File absolute: a path written in a
// configuration file is relative to that file's directory, one from --set (or
// --topology) to the working directory.
func (d *decoder) resolveTopologyFile(c *Config) {
	f := c.Topology.File
	if f == "" || filepath.IsAbs(f) {
		return
	}
	if o, ok := d.set_["Topology.File"]; ok && o.source != "--set" && o.source != "" {
		f = filepath.Join(filepath.Dir(o.source), f)
	}
	abs, err := filepath.Abs(f)
	if err != nil {
		d.fail(0, "Topology.File", "%v", err)
		return
	}
	c.Topology.File = abs
}
