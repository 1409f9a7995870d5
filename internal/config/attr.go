package config

import (
	"reflect"
	"strings"
)

// Attribute resolves an attribute name as --set spells it ("Switch.BufferSize", or a
// tail such as "BufferSize" or "Pools[1].Size") to its full dotted path without
// indexes ("Switch.BufferSize", "Switch.Pools.Size") and the Go type of its value
// (units.Bytes, units.Time, int, ...). A sweep uses it to say which attributes are
// numeric and in which unit (docs/sweeps.md). The error (an *Error, wrapping ErrInvalid) names the
// attribute and suggests the closest known one, as Load does.
func Attribute(attr string) (path string, typ reflect.Type, err error) {
	attr = strings.TrimSpace(attr)
	fail := func(rule string) error { return &Error{Violations: []Violation{{Attr: attr, Rule: rule}}} }
	if name, rest, ok := profileFromSet(attr); ok {
		// Switches.NAME.Attr: Switch's attribute Attr of profile NAME.
		if rest == "" {
			return "", nil, fail("name an attribute of the profile, e.g. Switches." + name + ".BufferSize")
		}
		p, t, err := Attribute("Switch." + rest)
		if err != nil {
			return "", nil, fail(strings.TrimPrefix(err.Error(), "Switch."+rest+": "))
		}
		return "Switches." + name + strings.TrimPrefix(p, "Switch"), t, nil
	}
	segs, err := parseAttr(attr)
	if err != nil {
		return "", nil, fail(err.Error())
	}
	p, err := resolve(segs)
	if err != nil {
		return "", nil, fail(err.Error())
	}
	t := reflect.TypeFor[Config]()
	for _, name := range p.names {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		f, ok := fieldByName(t, name)
		if !ok {
			return "", nil, fail("unknown attribute")
		}
		t = f.Type
	}
	return p.String(), t, nil
}
