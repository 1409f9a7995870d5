package fabric

import (
	"errors"
	"fmt"
	"slices"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// ErrInvalid is wrapped by every error about a topology (a file's or the
// configuration's): bad input, exit status 2.
var ErrInvalid = errors.New("invalid topology")

// Shapes of a fabric (Fabric.Shape).
const (
	ShapeClos          = "clos"
	ShapeLeafSpine     = "leaf-spine"
	ShapeFiveStage     = "five-stage"
	ShapeRailOptimized = "rail-optimized"
	ShapeExplicit      = "explicit"
	ShapeHPCC          = "hpcc"
)

// Role names of hosts and of the Clos shape's switches (a file names its own).
const (
	RoleHost   = "host"
	RoleRack   = "rack"
	RoleFabric = "fabric"
	RoleSpine  = "spine"
)

// Node is a host or a switch.
type Node struct {
	Name string
	// Role is "host" for hosts; a switch's role is the shape's ("rack", "fabric",
	// "spine" for the Clos; "leaf", "spine", "super-spine", ...) or the file's.
	Role string
	// Level is 0 for hosts; a switch's is its hop distance to the nearest host
	// (1: a leaf, a ToR). Tier follows from it: 1 rack, 2 fabric, 3 and more spine.
	Level int
	Tier  config.Tier
	// Group is the group the node was declared in (a file's Switches or Hosts entry,
	// a generator's role); Pod and Plane are the shape's labels (-1: none): the pod
	// of a Clos rack or fabric switch and the plane of a spine; the rail group and
	// rail of a rail leaf. The parallel engine partitions by them (issue 24).
	Group      string
	Pod, Plane int
	// Index is the host id of a host; a switch's index within its group.
	Index int
	// Profile names the switch profile (config.Switches) the topology file assigned,
	// at ProfileLine; "" is the profile named after the role if the configuration has
	// one, else Switch:.
	Profile     string
	ProfileLine int
	// Line is the topology file's line that declared the node (0: none).
	Line  int
	Ports []Port
}

// IsHost reports whether n is a host.
func (n *Node) IsHost() bool { return n.Level == 0 }

// Port is one port of a node: its link and the peer at the other end.
type Port struct {
	Peer     int32 // node index of the peer
	PeerPort int32 // port index on the peer
	Link     int32 // link id
}

// End is one end of a link: a node and its port.
type End struct{ Node, Port int32 }

// Link is a full-duplex link. Its id is its index in Fabric.Links; parallel links
// between two nodes have distinct ids and ports.
type Link struct {
	A, B  End
	Speed units.BitRate
	Delay units.Time // propagation delay, one way
	// Class names the link class it was made from ("HostLink", a file's Links entry);
	// Line is the file's line (0: generated from the configuration).
	Class string
	Line  int
}

// Other returns the end of l that is not node n (the first end when l joins n to
// itself, which Validate rejects).
func (l *Link) Other(n int32) End {
	if l.A.Node == n {
		return l.B
	}
	return l.A
}

// Rack is a switch with hosts: the host mapping places endpoints on racks in
// Fabric.Racks order, and each rack's hosts in id order.
type Rack struct {
	Node  int32
	Hosts []int32
}

// Fabric is the graph.
type Fabric struct {
	// Shape is the generator ("clos", ...), "explicit" or "hpcc".
	Shape string
	// Source is the topology file ("" when built from the configuration's Topology).
	Source string
	Nodes  []Node
	Links  []Link
	// Hosts is the number of hosts: nodes 0..Hosts-1.
	Hosts int
	// Racks lists the switches with hosts, in node order.
	Racks []Rack
	// UpDown is true for the generated Clos shapes, whose shortest paths are all
	// up/down paths (docs/model.md#routing).
	UpDown bool

	byName   map[string]int32
	hostRack []int32 // index in Racks of each host's switch
}

// Lookup returns the node named name.
func (f *Fabric) Lookup(name string) (int32, bool) {
	i, ok := f.byName[name]
	return i, ok
}

// HostRack returns the index in Racks of host h's switch.
func (f *Fabric) HostRack(h int32) int { return int(f.hostRack[h]) }

// HostPort returns the port of h's rack switch that leads to host h.
func (f *Fabric) HostPort(h int32) int32 { return f.Nodes[h].Ports[0].PeerPort }

// Switches lists the node indices of all switches in node order.
func (f *Fabric) Switches() []int32 {
	s := make([]int32, 0, len(f.Nodes)-f.Hosts)
	for i := f.Hosts; i < len(f.Nodes); i++ {
		s = append(s, int32(i))
	}
	return s
}

// Bandwidth is the sum of a node's port speeds, each full-duplex port once
// (docs/model.md#switching-capacity).
func (f *Fabric) Bandwidth(node int32) units.BitRate {
	var b units.BitRate
	for _, p := range f.Nodes[node].Ports {
		b += f.Links[p.Link].Speed
	}
	return b
}

// PortLinks returns the links of a node's ports, in port order, as buffer sizing
// needs them (config.PortSpec).
func (f *Fabric) PortLinks(node int32) []config.PortSpec {
	ps := make([]config.PortSpec, len(f.Nodes[node].Ports))
	for i, p := range f.Nodes[node].Ports {
		l := &f.Links[p.Link]
		ps[i] = config.PortSpec{Speed: l.Speed, PropagationDelay: l.Delay}
	}
	return ps
}

// Up reports whether node's port p leads up (to a switch of a higher level).
func (f *Fabric) Up(node int32, p int) bool {
	return f.Nodes[f.Nodes[node].Ports[p].Peer].Level > f.Nodes[node].Level
}

// builder assembles a Fabric: hosts first, then switches, then links.
type builder struct {
	f    *Fabric
	errs []string
	src  string
}

func newBuilder(shape, source string) *builder {
	return &builder{f: &Fabric{Shape: shape, Source: source, byName: map[string]int32{}}, src: source}
}

// failf records an error at line of the file ("" source: the configuration).
func (b *builder) failf(line int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	switch {
	case b.src != "" && line > 0:
		msg = fmt.Sprintf("%s:%d: %s", b.src, line, msg)
	case b.src != "":
		msg = b.src + ": " + msg
	}
	b.errs = append(b.errs, msg)
}

func (b *builder) err() error {
	if len(b.errs) == 0 {
		return nil
	}
	// One line per problem; the first ten.
	msg := b.errs[0]
	for i, e := range b.errs[1:] {
		if i == 9 {
			msg += fmt.Sprintf("\n(and %d more)", len(b.errs)-10)
			break
		}
		msg += "\n" + e
	}
	return fmt.Errorf("%w: %s", ErrInvalid, msg)
}

// node adds a node; hosts must all come before the first switch.
func (b *builder) node(n Node) int32 {
	f := b.f
	if prev, dup := f.byName[n.Name]; dup {
		where := ""
		if l := f.Nodes[prev].Line; l > 0 {
			where = fmt.Sprintf(" (first on line %d)", l)
		}
		b.failf(n.Line, "node %q: duplicate name%s: node names are unique", n.Name, where)
		return prev
	}
	if n.Name == "" {
		b.failf(n.Line, "a node with an empty name")
	}
	id := int32(len(f.Nodes))
	if n.Role == RoleHost {
		if f.Hosts != len(f.Nodes) {
			panic("fabric: host added after a switch")
		}
		n.Index = len(f.Nodes)
		n.Tier = config.TierHost
		f.Hosts++
	} else {
		n.Level = -1 // computed by finish
	}
	f.byName[n.Name] = id
	f.Nodes = append(f.Nodes, n)
	return id
}

// connect adds a link between a and b.
func (b *builder) connect(a, c int32, l config.Link, class string, line int) {
	f := b.f
	id := int32(len(f.Links))
	pa := int32(len(f.Nodes[a].Ports))
	pc := int32(len(f.Nodes[c].Ports))
	if a == c {
		pc++ // both ports on one node
	}
	f.Nodes[a].Ports = append(f.Nodes[a].Ports, Port{Peer: c, PeerPort: pc, Link: id})
	f.Nodes[c].Ports = append(f.Nodes[c].Ports, Port{Peer: a, PeerPort: pa, Link: id})
	f.Links = append(f.Links, Link{A: End{a, pa}, B: End{c, pc}, Speed: l.Speed, Delay: l.PropagationDelay, Class: class, Line: line})
}

// finish validates the graph and computes levels, tiers and racks.
func (b *builder) finish() (*Fabric, error) {
	f := b.f
	if err := b.err(); err != nil {
		return nil, err
	}
	if f.Hosts == 0 {
		b.failf(0, "the fabric has no hosts")
	}
	if len(f.Nodes) > config.MaxNodes {
		b.failf(0, "%d nodes, hosts and switches: at most %d", len(f.Nodes), config.MaxNodes)
	}
	for i := range f.Links {
		l := &f.Links[i]
		an, bn := &f.Nodes[l.A.Node], &f.Nodes[l.B.Node]
		what := fmt.Sprintf("link %s - %s", an.Name, bn.Name)
		switch {
		case l.A.Node == l.B.Node:
			b.failf(l.Line, "%s: a link from a node to itself", what)
		case an.Role == RoleHost && bn.Role == RoleHost:
			b.failf(l.Line, "%s: joins two hosts (a host links to a switch)", what)
		}
		switch {
		case l.Speed <= 0:
			b.failf(l.Line, "%s: speed %v is not positive", what, l.Speed)
		case l.Speed < config.MinSpeed:
			b.failf(l.Line, "%s: speed %v is below %v (a bare number is bits per second: write a unit, e.g. 100Gbps)", what, l.Speed, config.MinSpeed)
		case l.Speed > config.MaxSpeed:
			b.failf(l.Line, "%s: speed %v is above %v", what, l.Speed, config.MaxSpeed)
		}
		switch {
		case l.Delay < 0:
			b.failf(l.Line, "%s: propagation delay %v is negative", what, l.Delay)
		case l.Delay > config.MaxDelay:
			b.failf(l.Line, "%s: propagation delay %v is above %v", what, l.Delay, config.MaxDelay)
		}
	}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		switch {
		case n.Role == RoleHost && len(n.Ports) == 0:
			b.failf(n.Line, "host %s has no link (every host links to one switch)", n.Name)
		case n.Role == RoleHost && len(n.Ports) > 1:
			b.failf(n.Line, "host %s has %d links (a host is one NIC with one link; model a multi-NIC server as one host per NIC)", n.Name, len(n.Ports))
		case n.Role != RoleHost && len(n.Ports) == 0:
			b.failf(n.Line, "switch %s has no link", n.Name)
		case len(n.Ports) > config.MaxPorts:
			b.failf(n.Line, "switch %s has %d ports (at most %d)", n.Name, len(n.Ports), config.MaxPorts)
		}
	}
	if err := b.err(); err != nil {
		return nil, err
	}
	// Levels: BFS from every host.
	queue := make([]int32, 0, len(f.Nodes))
	for h := 0; h < f.Hosts; h++ {
		queue = append(queue, int32(h))
	}
	for qi := 0; qi < len(queue); qi++ {
		n := &f.Nodes[queue[qi]]
		for _, p := range n.Ports {
			if m := &f.Nodes[p.Peer]; m.Level < 0 {
				m.Level = n.Level + 1
				queue = append(queue, p.Peer)
			}
		}
	}
	// Connectivity: every node reached from host 0 over switches.
	seen := make([]bool, len(f.Nodes))
	seen[0] = true
	queue = append(queue[:0], 0)
	for qi := 0; qi < len(queue); qi++ {
		n := &f.Nodes[queue[qi]]
		if n.Role == RoleHost && qi > 0 {
			continue // hosts are not transit
		}
		for _, p := range n.Ports {
			if !seen[p.Peer] {
				seen[p.Peer] = true
				queue = append(queue, p.Peer)
			}
		}
	}
	if len(queue) != len(f.Nodes) {
		var cut []string
		for i := range f.Nodes {
			if !seen[i] {
				cut = append(cut, f.Nodes[i].Name)
			}
		}
		n := f.Nodes[slices.Index(seen, false)]
		more := ""
		if len(cut) > 3 {
			more = fmt.Sprintf(" and %d more", len(cut)-3)
			cut = cut[:3]
		}
		b.failf(n.Line, "disconnected fabric: %v%s cannot reach %s", cut, more, f.Nodes[0].Name)
		return nil, b.err()
	}
	rackOf := map[int32]int32{}
	f.hostRack = make([]int32, f.Hosts)
	for i := f.Hosts; i < len(f.Nodes); i++ {
		n := &f.Nodes[i]
		switch {
		case n.Level == 1:
			n.Tier = config.TierRack
		case n.Level == 2:
			n.Tier = config.TierFabric
		default:
			n.Tier = config.TierSpine
		}
		for _, p := range n.Ports {
			if p.Peer < int32(f.Hosts) {
				r, ok := rackOf[int32(i)]
				if !ok {
					r = int32(len(f.Racks))
					rackOf[int32(i)] = r
					f.Racks = append(f.Racks, Rack{Node: int32(i)})
				}
				f.Racks[r].Hosts = append(f.Racks[r].Hosts, p.Peer)
				f.hostRack[p.Peer] = r
			}
		}
	}
	for i := range f.Racks {
		slices.Sort(f.Racks[i].Hosts)
	}
	return f, nil
}

// Oversubscription is a switch's down-link bandwidth over its up-link bandwidth
// (links to a higher level), 0 without uplinks; links of ports with no peer (a
// rebuilt fabric's gaps) are left out.
func (f *Fabric) Oversubscription(node int32) float64 {
	var down, up float64
	for pi, p := range f.Nodes[node].Ports {
		if p.Peer < 0 {
			continue
		}
		if f.Up(node, pi) {
			up += float64(f.Links[p.Link].Speed)
		} else {
			down += float64(f.Links[p.Link].Speed)
		}
	}
	if up == 0 {
		return 0
	}
	return down / up
}
