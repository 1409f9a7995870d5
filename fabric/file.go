package fabric

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// Load reads a topology file (docs/topology.md): a YAML topology file, or an ns-3
// HPCC topology.txt (recognized by its first line of three integers).
func Load(file string) (*Fabric, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read the topology file: %v", ErrInvalid, err)
	}
	return Parse(data, file)
}

var hpccHeader = regexp.MustCompile(`^\s*\d+\s+\d+\s+\d+\s*$`)

// Parse is Load on a file's contents; source names it in messages.
func Parse(data []byte, source string) (*Fabric, error) {
	first, _, _ := bytes.Cut(bytes.TrimLeft(data, " \t\r\n"), []byte("\n"))
	if hpccHeader.Match(bytes.TrimRight(first, "\r")) {
		return ParseHPCC(data, source)
	}
	return parseYAML(data, source)
}

// fileDec decodes the YAML file's nodes, recording problems at their lines.
type fileDec struct{ b *builder }

func (d *fileDec) failf(n *yaml.Node, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	d.b.failf(line, format, args...)
}

// fields returns a mapping's values by key, rejecting unknown and repeated keys.
func (d *fileDec) fields(n *yaml.Node, what string, known ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return out
	}
	if n.Kind != yaml.MappingNode {
		d.failf(n, "%s needs a mapping of %s", what, strings.Join(known, ", "))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !slices.Contains(known, k.Value) {
			d.failf(k, "%s: unknown key %q%s", what, k.Value, suggest(k.Value, known))
			continue
		}
		if _, dup := out[k.Value]; dup {
			d.failf(k, "%s: %s set twice", what, k.Value)
			continue
		}
		out[k.Value] = n.Content[i+1]
	}
	return out
}

func suggest(name string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return fmt.Sprintf(" (did you mean %s?)", k)
		}
	}
	return fmt.Sprintf(" (known: %s)", strings.Join(known, ", "))
}

func (d *fileDec) scalar(n *yaml.Node, what string) (string, bool) {
	if n == nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.failf(n, "%s needs a value", what)
		return "", false
	}
	return strings.TrimSpace(n.Value), true
}

func (d *fileDec) intv(m map[string]*yaml.Node, key, what string, def int) int {
	s, ok := d.scalar(m[key], what+": "+key)
	if !ok {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		d.failf(m[key], "%s: %s %q is not an integer", what, key, s)
		return def
	}
	if v < 0 {
		d.failf(m[key], "%s: %s %d is negative", what, key, v)
		return def
	}
	return v
}

func (d *fileDec) str(m map[string]*yaml.Node, key, what, def string) string {
	if s, ok := d.scalar(m[key], what+": "+key); ok {
		return s
	}
	return def
}

// quantity decodes a scalar with parse (units.ParseBitRate, units.ParseTime), def
// when the key is absent.
func quantity[T any](d *fileDec, n *yaml.Node, what string, def T, parse func(string) (T, error)) T {
	s, ok := d.scalar(n, what)
	if !ok {
		return def
	}
	v, err := parse(s)
	if err != nil {
		d.failf(n, "%s: %v", what, err)
		return def
	}
	return v
}

func (d *fileDec) speed(n *yaml.Node, what string, def units.BitRate) units.BitRate {
	return quantity(d, n, what, def, units.ParseBitRate)
}

func (d *fileDec) delay(n *yaml.Node, what string, def units.Time) units.Time {
	return quantity(d, n, what, def, units.ParseTime)
}

// link decodes {Speed, PropagationDelay} over def.
func (d *fileDec) link(n *yaml.Node, what string, def config.Link) config.Link {
	m := d.fields(n, what, "Speed", "PropagationDelay")
	return config.Link{Speed: d.speed(m["Speed"], what+": Speed", def.Speed), PropagationDelay: d.delay(m["PropagationDelay"], what+": PropagationDelay", def.PropagationDelay)}
}

func (d *fileDec) names(n *yaml.Node, roles ...string) Names {
	out := Names{}
	for k, v := range d.fields(n, "Names", roles...) {
		out[k], _ = d.scalar(v, "Names: "+k)
	}
	return out
}

var defaultLink = config.Link{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond}

// Keys of a topology file by generator.
var generatorKeys = map[string][]string{
	ShapeClos:          {"Pods", "RacksPerPod", "HostsPerRack", "FabricPerPod", "SpinesPerPlane", "HostLink", "RackFabricLink", "FabricSpineLink"},
	ShapeFiveStage:     {"Pods", "LeavesPerPod", "HostsPerLeaf", "SpinesPerPod", "SuperSpinesPerPlane", "Planes", "HostLink", "LeafSpineLink", "SpineSuperLink"},
	ShapeLeafSpine:     {"Leaves", "Spines", "HostsPerLeaf", "LinksPerSpine", "HostLink", "SpineLink"},
	ShapeRailOptimized: {"Servers", "Rails", "ServersPerGroup", "Spines", "LinksPerSpine", "HostLink", "SpineLink"},
}

var generatorRoles = map[string][]string{
	ShapeClos:          {RoleHost, RoleRack, RoleFabric, RoleSpine},
	ShapeFiveStage:     {RoleHost, "leaf", "spine", "super-spine"},
	ShapeLeafSpine:     {RoleHost, "leaf", RoleSpine},
	ShapeRailOptimized: {RoleHost, "leaf", RoleSpine},
}

func parseYAML(data []byte, source string) (*Fabric, error) {
	b := newBuilder(ShapeExplicit, source)
	d := &fileDec{b: b}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		b.failf(0, "YAML syntax: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		return nil, b.err()
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		b.failf(0, "empty topology file (want Generator: or Switches:, Hosts: and Links:)")
		return nil, b.err()
	}
	top := root.Content[0]
	if top.Kind != yaml.MappingNode {
		b.failf(top.Line, "a topology file is a mapping (Generator: ... or Switches:, Hosts:, Links:)")
		return nil, b.err()
	}
	gen := ""
	var genNode *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "Generator" {
			genNode = top.Content[i+1]
			gen, _ = d.scalar(genNode, "Generator")
		}
	}
	common := []string{"Generator", "Names", "Profiles"}
	var f *Fabric
	var err error
	if genNode != nil {
		keys, ok := generatorKeys[gen]
		if !ok {
			d.failf(genNode, "Generator %q is unknown (want clos, leaf-spine, five-stage or rail-optimized; omit it for explicit Switches, Hosts and Links)", gen)
			return nil, b.err()
		}
		m := d.fields(top, "topology file (Generator "+gen+")", append(slices.Clone(common), keys...)...)
		names := d.names(m["Names"], generatorRoles[gen]...)
		line := genNode.Line
		if err := b.err(); err != nil {
			return nil, err
		}
		def := config.Default().Topology
		switch gen {
		case ShapeClos:
			t := config.Topology{
				Pods: d.intv(m, "Pods", gen, def.Pods), RacksPerPod: d.intv(m, "RacksPerPod", gen, def.RacksPerPod),
				HostsPerRack: d.intv(m, "HostsPerRack", gen, def.HostsPerRack), FabricPerPod: d.intv(m, "FabricPerPod", gen, def.FabricPerPod),
				SpinesPerPlane: d.intv(m, "SpinesPerPlane", gen, def.SpinesPerPlane),
				HostLink:       d.link(m["HostLink"], "HostLink", def.HostLink), RackFabricLink: d.link(m["RackFabricLink"], "RackFabricLink", def.RackFabricLink),
				FabricSpineLink: d.link(m["FabricSpineLink"], "FabricSpineLink", def.FabricSpineLink),
			}
			if err := b.err(); err != nil {
				return nil, err
			}
			f, err = Clos{Topology: t, Names: names}.Build(source, line)
		case ShapeFiveStage:
			t := config.Topology{
				Pods: d.intv(m, "Pods", gen, def.Pods), RacksPerPod: d.intv(m, "LeavesPerPod", gen, def.RacksPerPod),
				HostsPerRack: d.intv(m, "HostsPerLeaf", gen, def.HostsPerRack), FabricPerPod: d.intv(m, "SpinesPerPod", gen, def.FabricPerPod),
				SpinesPerPlane: d.intv(m, "SuperSpinesPerPlane", gen, def.SpinesPerPlane),
				HostLink:       d.link(m["HostLink"], "HostLink", def.HostLink), RackFabricLink: d.link(m["LeafSpineLink"], "LeafSpineLink", def.RackFabricLink),
				FabricSpineLink: d.link(m["SpineSuperLink"], "SpineSuperLink", def.FabricSpineLink),
			}
			planes := true
			if s, ok := d.scalar(m["Planes"], "Planes"); ok {
				if planes, err = strconv.ParseBool(s); err != nil {
					d.failf(m["Planes"], "Planes %q is not true or false", s)
				}
			}
			if t.Pods < 2 {
				d.failf(genNode, "five-stage: Pods %d: a five-stage fabric has 2 pods or more (use leaf-spine for one)", t.Pods)
			}
			if err := b.err(); err != nil {
				return nil, err
			}
			f, err = Clos{Topology: t, Names: names, Roles: [3]string{"leaf", "spine", "super-spine"}, Shape: ShapeFiveStage, AllSpines: !planes}.Build(source, line)
		case ShapeLeafSpine:
			g := LeafSpine{Leaves: d.intv(m, "Leaves", gen, 4), Spines: d.intv(m, "Spines", gen, 4), HostsPerLeaf: d.intv(m, "HostsPerLeaf", gen, 16),
				LinksPerSpine: d.intv(m, "LinksPerSpine", gen, 1), HostLink: d.link(m["HostLink"], "HostLink", defaultLink),
				SpineLink: d.link(m["SpineLink"], "SpineLink", defaultLink), Names: names}
			if err := b.err(); err != nil {
				return nil, err
			}
			f, err = g.Build(source, line)
		case ShapeRailOptimized:
			g := RailOptimized{Servers: d.intv(m, "Servers", gen, 16), Rails: d.intv(m, "Rails", gen, 8), ServersPerGroup: d.intv(m, "ServersPerGroup", gen, 8),
				Spines: d.intv(m, "Spines", gen, 4), LinksPerSpine: d.intv(m, "LinksPerSpine", gen, 1),
				HostLink: d.link(m["HostLink"], "HostLink", defaultLink), SpineLink: d.link(m["SpineLink"], "SpineLink", defaultLink), Names: names}
			if err := b.err(); err != nil {
				return nil, err
			}
			f, err = g.Build(source, line)
		}
		if err != nil {
			return nil, err
		}
		b = &builder{f: f, src: source}
		d.b = b
		d.profiles(m["Profiles"])
		if err := b.err(); err != nil {
			return nil, err
		}
		return f, nil
	}
	m := d.fields(top, "topology file", append(slices.Clone(common[1:]), "Switches", "Hosts", "Links")...)
	if m["Switches"] == nil || m["Hosts"] == nil || m["Links"] == nil {
		b.failf(top.Line, "a topology file without Generator lists Switches, Hosts and Links (docs/topology.md)")
		return nil, b.err()
	}
	if m["Names"] != nil {
		d.failf(m["Names"], "Names: only with a Generator (explicit entries name their nodes with Name)")
	}
	f, err = d.explicit(m)
	if err != nil {
		return nil, err
	}
	b = &builder{f: f, src: source}
	d.b = b
	d.profiles(m["Profiles"])
	if err := b.err(); err != nil {
		return nil, err
	}
	return f, nil
}

func (d *fileDec) list(n *yaml.Node, what string) []*yaml.Node {
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.failf(n, "%s needs a list of entries", what)
		return nil
	}
	return n.Content
}

type switchSpec struct {
	name, role, group, profile string
	pod, plane, index, line    int
}

// explicit builds a fabric from Switches, Hosts and Links.
func (d *fileDec) explicit(m map[string]*yaml.Node) (*Fabric, error) {
	b := d.b
	var sws []switchSpec
	groups := map[string][]int{} // group -> indices into sws
	for _, e := range d.list(m["Switches"], "Switches") {
		what := fmt.Sprintf("Switches entry (line %d)", e.Line)
		fm := d.fields(e, what, "Group", "Role", "Count", "Name", "Profile", "Pod", "Plane")
		role := d.str(fm, "Role", what, "")
		if role == "" {
			d.failf(e, "%s: Role is required (leaf, spine, ...: names the switch's role)", what)
			continue
		}
		if role == RoleHost {
			d.failf(fm["Role"], "%s: Role host is for Hosts entries", what)
			continue
		}
		group := d.str(fm, "Group", what, role)
		count := d.intv(fm, "Count", what, 1)
		pat := d.str(fm, "Name", what, "")
		switch {
		case pat == "":
			d.failf(e, "%s: Name is required (a name, or a pattern with {i} when Count > 1)", what)
			continue
		case count > 1 && !strings.Contains(pat, "{i}"):
			d.failf(fm["Name"], "%s: Count %d needs {i} in Name %q (the switches would share a name)", what, count, pat)
			continue
		case count < 1:
			d.failf(fm["Count"], "%s: Count must be >= 1", what)
			continue
		}
		pod, plane := d.intv(fm, "Pod", what, -1), d.intv(fm, "Plane", what, -1)
		prof := d.str(fm, "Profile", what, "")
		for i := range count {
			groups[group] = append(groups[group], len(sws))
			sws = append(sws, switchSpec{name: name(pat, "i", i), role: role, group: group, profile: prof, pod: pod, plane: plane, index: i, line: e.Line})
		}
	}
	swIndex := map[string]int{}
	for i, s := range sws {
		if _, dup := swIndex[s.name]; !dup {
			swIndex[s.name] = i
		}
	}
	// match resolves a pattern to switch indices: a name, a group, or a glob.
	match := func(n *yaml.Node, pat, what string) []int {
		if i, ok := swIndex[pat]; ok {
			return []int{i}
		}
		if g, ok := groups[pat]; ok {
			return g
		}
		var out []int
		if strings.ContainsAny(pat, "*?[") {
			for i, s := range sws {
				if ok, err := path.Match(pat, s.name); err != nil {
					d.failf(n, "%s: pattern %q: %v", what, pat, err)
					return nil
				} else if ok {
					out = append(out, i)
				}
			}
		}
		if len(out) == 0 {
			d.failf(n, "%s: %q is no switch, group or pattern matching a switch (unknown node)", what, pat)
		}
		return out
	}
	type hostSpec struct {
		name  string
		sw    int
		link  config.Link
		line  int
		group string
	}
	var hosts []hostSpec
	for _, e := range d.list(m["Hosts"], "Hosts") {
		what := fmt.Sprintf("Hosts entry (line %d)", e.Line)
		fm := d.fields(e, what, "Group", "Switches", "PerSwitch", "Name", "Link")
		pat := d.str(fm, "Switches", what, "")
		if pat == "" {
			d.failf(e, "%s: Switches is required (the switches the hosts hang from: a name, group or pattern)", what)
			continue
		}
		per := d.intv(fm, "PerSwitch", what, 1)
		npat := d.str(fm, "Name", what, "{switch}-h{i}")
		if per > 1 && !strings.Contains(npat, "{i}") && !strings.Contains(npat, "{n}") {
			d.failf(fm["Name"], "%s: PerSwitch %d needs {i} or {n} in Name %q", what, per, npat)
			continue
		}
		l := d.link(fm["Link"], what+": Link", defaultLink)
		group := d.str(fm, "Group", what, RoleHost)
		n := 0
		for _, si := range match(fm["Switches"], pat, what) {
			for i := range per {
				hosts = append(hosts, hostSpec{name: name(npat, "switch", sws[si].name, "i", i, "n", n), sw: si, link: l, line: e.Line, group: group})
				n++
			}
		}
	}
	if err := b.err(); err != nil {
		return nil, err
	}
	for _, h := range hosts {
		b.node(Node{Name: h.name, Role: RoleHost, Group: h.group, Pod: -1, Plane: -1, Line: h.line})
	}
	H := int32(len(b.f.Nodes))
	for _, s := range sws {
		b.node(Node{Name: s.name, Role: s.role, Group: s.group, Pod: s.pod, Plane: s.plane, Index: s.index, Profile: s.profile, Line: s.line})
		if s.profile != "" {
			b.f.Nodes[len(b.f.Nodes)-1].ProfileLine = s.line
		}
	}
	if err := b.err(); err != nil {
		return nil, err
	}
	for i, h := range hosts {
		b.connect(int32(i), H+int32(h.sw), h.link, "Hosts", h.line)
	}
	for _, e := range d.list(m["Links"], "Links") {
		what := fmt.Sprintf("Links entry (line %d)", e.Line)
		fm := d.fields(e, what, "From", "To", "Speed", "PropagationDelay", "Count")
		from, to := d.str(fm, "From", what, ""), d.str(fm, "To", what, "")
		if from == "" || to == "" {
			d.failf(e, "%s: From and To are required (switch names, groups or patterns)", what)
			continue
		}
		if _, ok := fm["Speed"]; !ok {
			d.failf(e, "%s: Speed is required", what)
			continue
		}
		l := config.Link{Speed: d.speed(fm["Speed"], what+": Speed", 0), PropagationDelay: d.delay(fm["PropagationDelay"], what+": PropagationDelay", units.Microsecond)}
		count := d.intv(fm, "Count", what, 1)
		if count < 1 {
			d.failf(fm["Count"], "%s: Count must be >= 1 (parallel links)", what)
			continue
		}
		as, bs := match(fm["From"], from, what), match(fm["To"], to, what)
		done := map[[2]int]bool{}
		for _, a := range as {
			for _, c := range bs {
				if a == c && len(as)*len(bs) > 1 {
					continue // a pattern pair skips a switch with itself
				}
				k := [2]int{min(a, c), max(a, c)}
				if done[k] {
					continue
				}
				done[k] = true
				for range count {
					b.connect(H+int32(a), H+int32(c), l, what, e.Line)
				}
			}
		}
	}
	return b.finish()
}

// profiles applies a file's Profiles rules: {Role|Group|Node: x, Profile: p}; a
// Node rule beats a Group rule, which beats a Role rule; among rules of one kind the
// later wins (docs/topology.md#profiles). A switch's Profile from its Switches entry
// counts as a Group rule of its line.
func (d *fileDec) profiles(n *yaml.Node) {
	f := d.b.f
	rank := make([]int, len(f.Nodes))
	for i := range f.Nodes {
		if f.Nodes[i].Profile != "" {
			rank[i] = 2
		}
	}
	for _, e := range d.list(n, "Profiles") {
		what := fmt.Sprintf("Profiles entry (line %d)", e.Line)
		fm := d.fields(e, what, "Role", "Group", "Node", "Profile")
		prof := d.str(fm, "Profile", what, "")
		if prof == "" {
			d.failf(e, "%s: Profile is required (a name under Switches: in the configuration)", what)
			continue
		}
		var kind, val string
		var r int
		for _, k := range []string{"Role", "Group", "Node"} {
			if v := d.str(fm, k, what, ""); v != "" {
				if kind != "" {
					d.failf(e, "%s: one of Role, Group or Node, not %s and %s", what, kind, k)
				}
				kind, val = k, v
				r = map[string]int{"Role": 1, "Group": 2, "Node": 3}[k]
			}
		}
		if kind == "" {
			d.failf(e, "%s: name the switches by Role, Group or Node", what)
			continue
		}
		hit := false
		for i := f.Hosts; i < len(f.Nodes); i++ {
			nd := &f.Nodes[i]
			var ok bool
			switch kind {
			case "Role":
				ok = nd.Role == val
			case "Group":
				ok = nd.Group == val
			default:
				ok = nd.Name == val
				if !ok && strings.ContainsAny(val, "*?[") {
					ok, _ = path.Match(val, nd.Name)
				}
			}
			if ok {
				hit = true
				if r >= rank[i] {
					rank[i] = r
					nd.Profile, nd.ProfileLine = prof, e.Line
				}
			}
		}
		if !hit {
			d.failf(fm[kind], "%s: %s %q matches no switch (unknown node)", what, kind, val)
		}
	}
}
