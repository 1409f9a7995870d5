package fabric

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tracefabric/tracefabric/internal/config"
)

// Names are a generator's name patterns, one per role; "{x}" placeholders are
// replaced by the node's numbers (docs/topology.md#names). An empty pattern keeps
// the generator's default.
type Names map[string]string

// name expands pattern with the placeholder values kv (name, value, name, value...).
func name(pattern string, kv ...any) string {
	if !strings.Contains(pattern, "{") {
		return pattern
	}
	var b strings.Builder
	b.Grow(len(pattern) + 8)
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '{' {
			if j := strings.IndexByte(pattern[i:], '}'); j > 0 {
				key := pattern[i+1 : i+j]
				found := false
				for k := 0; k+1 < len(kv); k += 2 {
					if kv[k].(string) == key {
						switch x := kv[k+1].(type) {
						case int:
							b.WriteString(strconv.Itoa(x))
						case string:
							b.WriteString(x)
						}
						found = true
						break
					}
				}
				if found {
					i += j
					continue
				}
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

func (n Names) get(role, def string) string {
	if p := n[role]; p != "" {
		return p
	}
	return def
}

// Clos is the three-tier Clos of docs/model.md#clos-builder (Pods 1: two tiers): the
// default fabric, generated from the configuration's Topology attributes or from a
// file's "Generator: clos". Roles rack, fabric, spine; names host-p0-r1-h5,
// rack-p0-r1, fabric-p0-f2, spine-s2-3 unless Names says otherwise.
type Clos struct {
	config.Topology
	Names Names
	// Roles renames the roles (five-stage: leaf, spine, super-spine).
	Roles [3]string
	// AllSpines joins every fabric switch of a pod to every spine (no planes).
	AllSpines bool
	Shape     string
}

// Clos name patterns and placeholders: {pod}, {rack}, {h} (host in rack), {f}
// (fabric switch in pod), {plane}, {s} (spine in plane).
var closNames = Names{
	RoleHost:   "host-p{pod}-r{rack}-h{h}",
	RoleRack:   "rack-p{pod}-r{rack}",
	RoleFabric: "fabric-p{pod}-f{f}",
	RoleSpine:  "spine-s{plane}-{s}",
}

// FromConfig builds the default fabric: the Clos of the configuration's Topology.
func FromConfig(t config.Topology) (*Fabric, error) {
	return Clos{Topology: t}.Build("", 0)
}

// Build generates the Clos; source and line locate errors (a file's Generator line).
func (c Clos) Build(source string, line int) (*Fabric, error) {
	t := c.Topology
	shape := c.Shape
	if shape == "" {
		shape = ShapeClos
	}
	b := newBuilder(shape, source)
	b.f.UpDown = true
	if t.Pods < 1 || t.RacksPerPod < 1 || t.HostsPerRack < 1 || t.FabricPerPod < 1 || (t.Pods > 1 && t.SpinesPerPlane < 1) {
		b.failf(line, "%s: Pods, RacksPerPod, HostsPerRack, FabricPerPod (and SpinesPerPlane with Pods > 1) must be >= 1, got %d, %d, %d, %d, %d",
			shape, t.Pods, t.RacksPerPod, t.HostsPerRack, t.FabricPerPod, t.SpinesPerPlane)
		return nil, b.err()
	}
	if n := c.nodes(); n > config.MaxNodes {
		b.failf(line, "%s: %d nodes, hosts and switches (at most %d)", shape, n, config.MaxNodes)
		return nil, b.err()
	}
	roles := c.Roles
	def := [3]string{RoleRack, RoleFabric, RoleSpine}
	for i := range roles {
		if roles[i] == "" {
			roles[i] = def[i]
		}
	}
	names := Names{}
	for _, r := range []string{RoleHost, RoleRack, RoleFabric, RoleSpine} {
		names[r] = closNames[r]
	}
	if c.Shape == ShapeFiveStage {
		names = Names{RoleHost: "host-p{pod}-l{rack}-h{h}", RoleRack: "leaf-p{pod}-l{rack}", RoleFabric: "spine-p{pod}-s{f}", RoleSpine: "super-{plane}-{s}"}
	}
	for i, r := range []string{RoleRack, RoleFabric, RoleSpine} {
		if p := c.Names[roles[i]]; p != "" {
			names[r] = p
		}
	}
	if p := c.Names[RoleHost]; p != "" {
		names[RoleHost] = p
	}
	for p := 0; p < t.Pods; p++ {
		for r := 0; r < t.RacksPerPod; r++ {
			for h := 0; h < t.HostsPerRack; h++ {
				b.node(Node{Name: name(names[RoleHost], "pod", p, "rack", r, "h", h), Role: RoleHost, Group: RoleHost, Pod: p, Plane: -1, Line: line})
			}
		}
	}
	firstRack := int32(len(b.f.Nodes))
	for p := 0; p < t.Pods; p++ {
		for r := 0; r < t.RacksPerPod; r++ {
			b.node(Node{Name: name(names[RoleRack], "pod", p, "rack", r), Role: roles[0], Group: roles[0], Pod: p, Plane: -1, Index: r, Line: line})
		}
	}
	firstFabric := int32(len(b.f.Nodes))
	for p := 0; p < t.Pods; p++ {
		for f := 0; f < t.FabricPerPod; f++ {
			b.node(Node{Name: name(names[RoleFabric], "pod", p, "f", f), Role: roles[1], Group: roles[1], Pod: p, Plane: f, Index: f, Line: line})
		}
	}
	firstSpine := int32(len(b.f.Nodes))
	planes, perPlane := t.FabricPerPod, t.SpinesPerPlane
	if t.Pods > 1 {
		for s := 0; s < planes; s++ {
			for i := 0; i < perPlane; i++ {
				plane := s
				if c.AllSpines {
					plane = -1
				}
				b.node(Node{Name: name(names[RoleSpine], "plane", s, "s", i), Role: roles[2], Group: roles[2], Pod: -1, Plane: plane, Index: i, Line: line})
			}
		}
	}
	if err := b.err(); err != nil {
		return nil, err
	}
	// Links in the port order of docs/model.md#clos-builder: hosts, rack uplinks,
	// fabric uplinks.
	hosts := t.Pods * t.RacksPerPod * t.HostsPerRack
	for h := 0; h < hosts; h++ {
		b.connect(int32(h), firstRack+int32(h/t.HostsPerRack), t.HostLink, "HostLink", line)
	}
	for r := 0; r < t.Pods*t.RacksPerPod; r++ {
		for f := 0; f < t.FabricPerPod; f++ {
			b.connect(firstRack+int32(r), firstFabric+int32((r/t.RacksPerPod)*t.FabricPerPod+f), t.RackFabricLink, "RackFabricLink", line)
		}
	}
	if t.Pods > 1 {
		for p := 0; p < t.Pods; p++ {
			for f := 0; f < t.FabricPerPod; f++ {
				if c.AllSpines {
					for s := 0; s < planes*perPlane; s++ {
						b.connect(firstFabric+int32(p*t.FabricPerPod+f), firstSpine+int32(s), t.FabricSpineLink, "FabricSpineLink", line)
					}
					continue
				}
				for i := 0; i < perPlane; i++ {
					b.connect(firstFabric+int32(p*t.FabricPerPod+f), firstSpine+int32(f*perPlane+i), t.FabricSpineLink, "FabricSpineLink", line)
				}
			}
		}
	}
	return b.finish()
}

func (c Clos) nodes() int {
	t := c.Topology
	racks := t.Pods * t.RacksPerPod
	n := racks*t.HostsPerRack + racks + t.Pods*t.FabricPerPod
	if t.Pods > 1 {
		n += t.FabricPerPod * t.SpinesPerPlane
	}
	return n
}

// LeafSpine is a two-tier leaf-spine: Leaves leaf switches of HostsPerLeaf hosts,
// each joined to every spine by LinksPerSpine parallel uplinks. Names: host-{leaf}-{h},
// leaf-{leaf}, spine-{spine}.
type LeafSpine struct {
	Leaves, Spines, HostsPerLeaf int
	LinksPerSpine                int
	HostLink, SpineLink          config.Link
	Names                        Names
}

// Build generates the leaf-spine.
func (g LeafSpine) Build(source string, line int) (*Fabric, error) {
	b := newBuilder(ShapeLeafSpine, source)
	b.f.UpDown = true
	if g.LinksPerSpine == 0 {
		g.LinksPerSpine = 1
	}
	if g.Leaves < 1 || g.Spines < 0 || g.HostsPerLeaf < 1 || g.LinksPerSpine < 1 || (g.Leaves > 1 && g.Spines < 1) {
		b.failf(line, "leaf-spine: Leaves and HostsPerLeaf must be >= 1, Spines >= 1 with two leaves or more, LinksPerSpine >= 1; got %d, %d, %d, %d",
			g.Leaves, g.HostsPerLeaf, g.Spines, g.LinksPerSpine)
		return nil, b.err()
	}
	if n := g.Leaves*(g.HostsPerLeaf+1) + g.Spines; n > config.MaxNodes {
		b.failf(line, "leaf-spine: %d nodes (at most %d)", n, config.MaxNodes)
		return nil, b.err()
	}
	hostN, leafN, spineN := g.Names.get(RoleHost, "host-{leaf}-{h}"), g.Names.get("leaf", "leaf-{leaf}"), g.Names.get(RoleSpine, "spine-{spine}")
	for l := 0; l < g.Leaves; l++ {
		for h := 0; h < g.HostsPerLeaf; h++ {
			b.node(Node{Name: name(hostN, "leaf", l, "h", h), Role: RoleHost, Group: RoleHost, Pod: -1, Plane: -1, Line: line})
		}
	}
	first := int32(len(b.f.Nodes))
	for l := 0; l < g.Leaves; l++ {
		b.node(Node{Name: name(leafN, "leaf", l), Role: "leaf", Group: "leaf", Pod: 0, Plane: -1, Index: l, Line: line})
	}
	for s := 0; s < g.Spines; s++ {
		b.node(Node{Name: name(spineN, "spine", s), Role: RoleSpine, Group: RoleSpine, Pod: -1, Plane: s, Index: s, Line: line})
	}
	if err := b.err(); err != nil {
		return nil, err
	}
	for h := 0; h < g.Leaves*g.HostsPerLeaf; h++ {
		b.connect(int32(h), first+int32(h/g.HostsPerLeaf), g.HostLink, "HostLink", line)
	}
	for l := 0; l < g.Leaves; l++ {
		for s := 0; s < g.Spines; s++ {
			for k := 0; k < g.LinksPerSpine; k++ {
				b.connect(first+int32(l), first+int32(g.Leaves+s), g.SpineLink, "SpineLink", line)
			}
		}
	}
	return b.finish()
}

// RailOptimized is the rail-optimized fabric of AI clusters: Servers servers of
// Rails NICs each, in rail groups of ServersPerGroup servers; NIC i of every server
// of group g is a host on rail leaf i of group g (so a rail leaf has ServersPerGroup
// hosts); every rail leaf is joined to every spine by LinksPerSpine uplinks. Host id
// = server*Rails + rail. Names: srv{server}-nic{rail}, rail-g{group}-r{rail},
// spine-{spine}.
type RailOptimized struct {
	Servers, Rails, ServersPerGroup, Spines int
	LinksPerSpine                           int
	HostLink, SpineLink                     config.Link
	Names                                   Names
}

// Build generates the rail-optimized fabric.
func (g RailOptimized) Build(source string, line int) (*Fabric, error) {
	b := newBuilder(ShapeRailOptimized, source)
	b.f.UpDown = true
	if g.LinksPerSpine == 0 {
		g.LinksPerSpine = 1
	}
	if g.ServersPerGroup == 0 {
		g.ServersPerGroup = g.Servers
	}
	if g.Servers < 1 || g.Rails < 1 || g.ServersPerGroup < 1 || g.Spines < 0 || g.LinksPerSpine < 1 || g.Servers%max(g.ServersPerGroup, 1) != 0 {
		b.failf(line, "rail-optimized: Servers, Rails, ServersPerGroup and LinksPerSpine must be >= 1 and Servers a multiple of ServersPerGroup; got %d, %d, %d, %d",
			g.Servers, g.Rails, g.ServersPerGroup, g.LinksPerSpine)
		return nil, b.err()
	}
	groups := g.Servers / g.ServersPerGroup
	if groups*g.Rails > 1 && g.Spines < 1 {
		b.failf(line, "rail-optimized: %d rail leaves need Spines >= 1 to reach each other", groups*g.Rails)
		return nil, b.err()
	}
	if n := g.Servers*g.Rails + groups*g.Rails + g.Spines; n > config.MaxNodes {
		b.failf(line, "rail-optimized: %d nodes (at most %d)", n, config.MaxNodes)
		return nil, b.err()
	}
	hostN := g.Names.get(RoleHost, "srv{server}-nic{rail}")
	leafN := g.Names.get("leaf", "rail-g{group}-r{rail}")
	spineN := g.Names.get(RoleSpine, "spine-{spine}")
	for s := 0; s < g.Servers; s++ {
		for r := 0; r < g.Rails; r++ {
			b.node(Node{Name: name(hostN, "server", s, "rail", r, "group", s/g.ServersPerGroup), Role: RoleHost, Group: RoleHost,
				Pod: s / g.ServersPerGroup, Plane: r, Line: line})
		}
	}
	first := int32(len(b.f.Nodes))
	for gr := 0; gr < groups; gr++ {
		for r := 0; r < g.Rails; r++ {
			b.node(Node{Name: name(leafN, "group", gr, "rail", r), Role: "leaf", Group: "leaf", Pod: gr, Plane: r, Index: gr*g.Rails + r, Line: line})
		}
	}
	for s := 0; s < g.Spines; s++ {
		b.node(Node{Name: name(spineN, "spine", s), Role: RoleSpine, Group: RoleSpine, Pod: -1, Plane: -1, Index: s, Line: line})
	}
	if err := b.err(); err != nil {
		return nil, err
	}
	for s := 0; s < g.Servers; s++ {
		for r := 0; r < g.Rails; r++ {
			b.connect(int32(s*g.Rails+r), first+int32((s/g.ServersPerGroup)*g.Rails+r), g.HostLink, "HostLink", line)
		}
	}
	leaves := groups * g.Rails
	for l := 0; l < leaves; l++ {
		for s := 0; s < g.Spines; s++ {
			for k := 0; k < g.LinksPerSpine; k++ {
				b.connect(first+int32(l), first+int32(leaves+s), g.SpineLink, "SpineLink", line)
			}
		}
	}
	return b.finish()
}

// String names a fabric's size: "clos: 128 hosts, 32 switches, 192 links".
func (f *Fabric) String() string {
	return fmt.Sprintf("%s: %d hosts, %d switches, %d links", f.Shape, f.Hosts, len(f.Nodes)-f.Hosts, len(f.Links))
}
