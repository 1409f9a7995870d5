package config

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// attrPath is one attribute of the configuration's type, as attribute names from the
// root; container is true when the path passes through a list or a map (it then needs
// an index, e.g. Switch.Pools[1].Size).
type attrPath struct {
	names     []string
	container bool
}

func (p attrPath) String() string { return strings.Join(p.names, ".") }

var allPaths = func() []attrPath {
	var out []attrPath
	enumerate(reflect.TypeFor[Config](), nil, false, &out)
	return out
}()

func enumerate(t reflect.Type, prefix []string, container bool, out *[]attrPath) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		names := append(append([]string(nil), prefix...), yamlName(f))
		*out = append(*out, attrPath{names, container})
		if len(prefix) == 0 && names[0] == "Switches" {
			continue // a profile's attributes are Switch's (Switches.NAME.Attr, profiles.go)
		}
		ft := f.Type
		inner := container
		if ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map {
			ft, inner = ft.Elem(), true
		}
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && !reflect.PointerTo(ft).Implements(textUnmarshalerType) {
			enumerate(ft, names, inner, out)
		}
	}
}

// segment is one dotted part of a --set attribute: "Pools" or "Pools[1]".
type segment struct {
	name   string
	index  string
	hasIdx bool
}

func parseAttr(attr string) ([]segment, error) {
	var segs []segment
	for _, part := range strings.Split(attr, ".") {
		s := segment{name: part}
		if i := strings.IndexByte(part, '['); i >= 0 {
			if !strings.HasSuffix(part, "]") || i == 0 {
				return nil, fmt.Errorf("%q: want Name or Name[index]", part)
			}
			s.name, s.index, s.hasIdx = part[:i], part[i+1:len(part)-1], true
			if strings.ContainsAny(s.index, "[]") || s.index == "" {
				return nil, fmt.Errorf("%q: want Name or Name[index]", part)
			}
		}
		if s.name == "" {
			return nil, fmt.Errorf("empty name in %q", attr)
		}
		segs = append(segs, s)
	}
	return segs, nil
}

// resolve finds the attribute path that attr's segments name (a full path or a tail).
func resolve(segs []segment) (attrPath, error) {
	var cands []attrPath
	for _, p := range allPaths {
		if len(p.names) < len(segs) {
			continue
		}
		tail := p.names[len(p.names)-len(segs):]
		ok := true
		for k, s := range segs {
			if tail[k] != s.name {
				ok = false
				break
			}
		}
		if ok {
			cands = append(cands, p)
		}
	}
	if len(cands) > 1 {
		var plain []attrPath
		for _, p := range cands {
			if !p.container {
				plain = append(plain, p)
			}
		}
		if len(plain) == 1 {
			cands = plain
		}
	}
	switch len(cands) {
	case 0:
		// Suggest in the form typed: "Topology.Pod" -> "Topology.Pods", "Pod" -> "Pods".
		var known []string
		typed := make([]string, len(segs))
		for i, sg := range segs {
			typed[i] = sg.name
		}
		for _, p := range allPaths {
			if len(p.names) >= len(segs) {
				known = append(known, strings.Join(p.names[len(p.names)-len(segs):], "."))
			}
		}
		return attrPath{}, fmt.Errorf("unknown attribute%s", suggest(strings.Join(typed, "."), dedupe(known)))
	case 1:
		return cands[0], nil
	}
	names := make([]string, len(cands))
	for i, p := range cands {
		names[i] = p.String()
	}
	return attrPath{}, fmt.Errorf("ambiguous attribute: it names %s; qualify it", strings.Join(names, ", "))
}

func dedupe(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// set applies one "Attr=Value" override, recording problems in d.errs.
func (d *decoder) set(c *Config, assignment string) {
	attr, value, ok := strings.Cut(assignment, "=")
	attr = strings.TrimSpace(attr)
	if !ok || attr == "" {
		d.fail(0, "", "%q: want Attr=Value, e.g. Switch.BufferSize=16MiB", assignment)
		return
	}
	if name, rest, ok := profileFromSet(attr); ok {
		d.setProfile(name, rest, value)
		return
	}
	segs, err := parseAttr(attr)
	if err != nil {
		d.fail(0, attr, "%v", err)
		return
	}
	p, err := resolve(segs)
	if err != nil {
		d.fail(0, attr, "%v", err)
		return
	}
	// Full segments: the path's leading names the user left out, then theirs.
	full := make([]segment, 0, len(p.names))
	for _, n := range p.names[:len(p.names)-len(segs)] {
		full = append(full, segment{name: n})
	}
	full = append(full, segs...)
	node := valueNode(value)
	d.apply(reflect.ValueOf(c).Elem(), full, "", node)
}

// valueNode parses a --set value as YAML (so lists and mappings work); a value that
// is not valid YAML is taken as a plain string.
func valueNode(value string) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err == nil {
		if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
			return doc.Content[0]
		}
		if doc.Kind == 0 || (doc.Kind == yaml.DocumentNode && len(doc.Content) == 0) {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}
		}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: strings.TrimSpace(value)}
}

// apply walks v along segs and decodes node into the attribute at the end.
func (d *decoder) apply(v reflect.Value, segs []segment, path string, node *yaml.Node) {
	if len(segs) == 0 {
		for k := range d.set_ {
			if strings.HasPrefix(k, path+".") || strings.HasPrefix(k, path+"[") {
				delete(d.set_, k)
			}
		}
		d.decode(node, v, path)
		return
	}
	s := segs[0]
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	f, ok := fieldByName(v.Type(), s.name)
	if !ok {
		d.fail(0, join(path, s.name), "unknown attribute%s", suggest(s.name, fieldNames(v.Type())))
		return
	}
	path = join(path, s.name)
	fv := v.FieldByIndex(f.Index)
	if !s.hasIdx {
		if len(segs) > 1 && (fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) {
			d.fail(0, path, "is a list or map: name an element, e.g. %s[0].%s", path, segs[1].name)
			return
		}
		d.apply(fv, segs[1:], path, node)
		return
	}
	path = fmt.Sprintf("%s[%s]", path, s.index)
	switch fv.Kind() {
	case reflect.Slice:
		i, err := strconv.Atoi(s.index)
		if err != nil || i < 0 || i >= fv.Len() {
			d.fail(0, path, "no such element (the list has %d: indexes 0..%d)", fv.Len(), fv.Len()-1)
			return
		}
		d.apply(fv.Index(i), segs[1:], path, node)
	case reflect.Map:
		key := reflect.New(fv.Type().Key()).Elem()
		if !d.decodeScalar(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s.index}, key, path) {
			return
		}
		if fv.IsNil() {
			fv.Set(reflect.MakeMap(fv.Type()))
		}
		elem := reflect.New(fv.Type().Elem()).Elem()
		if old := fv.MapIndex(key); old.IsValid() {
			elem.Set(old)
		}
		d.apply(elem, segs[1:], path, node)
		fv.SetMapIndex(key, elem)
	default:
		d.fail(0, path, "is not a list or map: it takes no index")
	}
}
