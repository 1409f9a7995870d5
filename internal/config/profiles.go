package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// Switch profiles (docs/topology.md#profiles): Switches.NAME is the full Switch set,
// every attribute it does not set inherited from Switch. The decoder keeps each
// profile's overrides (its mapping in the file, then its --set assignments, in
// order) and applies them to a copy of the final Switch once everything is decoded,
// so a later Switch attribute (or --set Switch.X) reaches every profile that does
// not set X itself.

// profileOverride is one override of a profile: a file mapping (segs nil) or one
// --set assignment (segs: the attribute's path inside Switch).
type profileOverride struct {
	source string
	node   *yaml.Node
	segs   []segment
	line   int
}

// profileFromSet splits "Switches.NAME.Attr" or "Switches[NAME].Attr"; ok is false
// for any other attribute.
func profileFromSet(attr string) (name, rest string, ok bool) {
	switch {
	case strings.HasPrefix(attr, "Switches."):
		name, rest, _ = strings.Cut(strings.TrimPrefix(attr, "Switches."), ".")
	case strings.HasPrefix(attr, "Switches["):
		var after string
		name, after, ok = strings.Cut(strings.TrimPrefix(attr, "Switches["), "]")
		if !ok {
			return "", "", false
		}
		rest = strings.TrimPrefix(after, ".")
	default:
		return "", "", false
	}
	return name, rest, name != ""
}

// addProfiles records the file's Switches mapping.
func (d *decoder) addProfiles(n *yaml.Node) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, "Switches", "needs a mapping of profile names to Switch attributes, not %s", kindName(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if first, dup := seen[k.Value]; dup {
			d.fail(k.Line, "Switches."+k.Value, "set twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		if !validProfileName(k.Value) {
			d.fail(k.Line, "Switches."+k.Value, "a profile name is letters, digits, '-' and '_'")
			continue
		}
		d.profileOrder(k.Value)
		d.profiles[k.Value] = append(d.profiles[k.Value], profileOverride{source: d.source, node: v, line: k.Line})
	}
}

func validProfileName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func (d *decoder) profileOrder(name string) {
	if d.profiles == nil {
		d.profiles = map[string][]profileOverride{}
	}
	if _, ok := d.profiles[name]; !ok {
		d.profileNames = append(d.profileNames, name)
		d.profiles[name] = nil
	}
}

// setProfile records a --set of a profile's attribute.
func (d *decoder) setProfile(name, rest, value string) {
	at := "Switches." + name
	if !validProfileName(name) {
		d.fail(0, at, "a profile name is letters, digits, '-' and '_'")
		return
	}
	var segs []segment
	if rest != "" {
		var err error
		if segs, err = parseAttr(rest); err != nil {
			d.fail(0, at+"."+rest, "%v", err)
			return
		}
	}
	d.profileOrder(name)
	d.profiles[name] = append(d.profiles[name], profileOverride{source: "--set", node: valueNode(value), segs: segs})
}

// resolveProfiles builds c.Switches from the recorded overrides over c.Switch.
func (d *decoder) resolveProfiles(c *Config) {
	if len(d.profileNames) == 0 {
		return
	}
	if c.Switches == nil {
		c.Switches = map[string]Switch{}
	}
	for _, name := range d.profileNames {
		s := c.Switch.Clone()
		if old, ok := c.Switches[name]; ok {
			s = old.Clone() // a profile already resolved (Config.Set after Parse)
		}
		path := "Switches." + name
		for _, o := range d.profiles[name] {
			d.source = o.source
			if o.segs == nil {
				d.set_[path] = origin{o.source, o.line}
				if o.source == "--set" {
					d.apply(reflect.ValueOf(&s).Elem(), nil, path, o.node)
				} else {
					d.decode(o.node, reflect.ValueOf(&s).Elem(), path)
					d.set_[path] = origin{o.source, o.line}
				}
				continue
			}
			d.set_[path] = origin{"--set", 0}
			d.apply(reflect.ValueOf(&s).Elem(), o.segs, path, o.node)
		}
		c.Switches[name] = s
	}
}

// Clone returns a deep copy of s (its lists, maps and salt are its own).
func (s Switch) Clone() Switch {
	c := s
	c.Pools = slices.Clone(s.Pools)
	for i := range c.Pools {
		c.Pools[i].TrafficClasses = slices.Clone(s.Pools[i].TrafficClasses)
	}
	c.PfcEnabled = slices.Clone(s.PfcEnabled)
	c.EcnEnabled = slices.Clone(s.EcnEnabled)
	c.EcnClasses = maps.Clone(s.EcnClasses)
	if s.HashSalt != nil {
		v := *s.HashSalt
		c.HashSalt = &v
	}
	return c
}

// Profile returns the switch attributes of profile name ("" = Switch) and whether
// it exists.
func (c *Config) Profile(name string) (*Switch, bool) {
	if name == "" {
		return &c.Switch, true
	}
	s, ok := c.Switches[name]
	if !ok {
		return nil, false
	}
	return &s, true
}

// ProfileNames lists the profiles in name order.
func (c *Config) ProfileNames() []string { return slices.Sorted(maps.Keys(c.Switches)) }

// SwitchFor returns the attributes of a switch whose topology assigns it profile
// (""): none) and whose role is role: the assigned profile, else the profile named
// after the role, else Switch; with the profile's name ("" for Switch). It is an
// error when an assigned profile does not exist.
func (c *Config) SwitchFor(profile, role string) (*Switch, string, error) {
	if profile != "" {
		s, ok := c.Profile(profile)
		if !ok {
			return nil, "", fmt.Errorf("profile %q does not exist (Switches: has %s)", profile, profileList(c))
		}
		return s, profile, nil
	}
	if s, ok := c.Switches[role]; ok {
		return &s, role, nil
	}
	return &c.Switch, "", nil
}

func profileList(c *Config) string {
	if len(c.Switches) == 0 {
		return "no profiles"
	}
	return strings.Join(c.ProfileNames(), ", ")
}

// ECMPFor is ECMP with the attributes of s (a profile) instead of Switch.
func (c *Config) ECMPFor(s *Switch, switchName string) ecmpConfig {
	return ecmpFor(s, switchName, c.Seed)
}

// SetHashMethod sets the ECMP hash method of Switch and of every profile (--hash,
// a --hash all run's method): a run compares methods fabric-wide.
func (c *Config) SetHashMethod(m ecmp.Method) {
	c.Switch.EcmpHashMethod = m
	if len(c.Switches) == 0 {
		return
	}
	ps := make(map[string]Switch, len(c.Switches))
	for k, s := range c.Switches {
		s = s.Clone()
		s.EcmpHashMethod = m
		ps[k] = s
	}
	c.Switches = ps
}
