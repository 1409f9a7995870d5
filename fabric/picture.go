package fabric

import (
	"fmt"
	"slices"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Picture is a fabric laid out by layers for drawing (docs/topology.md#picture):
// layer 0 holds the hosts, one box per rack (its hosts collapsed), layer k the
// switches of level k in node order. Links between the same two boxes are one line
// carrying every link id.
type Picture struct {
	Shape  string
	Layers [][]PictureNode
	Links  []PictureLink
}

// PictureNode is one box: a switch, or the hosts of one rack.
type PictureNode struct {
	Label string
	Role  string
	Nodes []int32 // the nodes it stands for
}

// PictureLink joins two boxes ([layer, index]) and stands for Links (link ids).
type PictureLink struct {
	A, B  [2]int
	Links []int32
	Speed int64 // total speed of the links, bit/s (one direction)
}

// Picture lays f out by layers.
func (f *Fabric) Picture() Picture {
	p := Picture{Shape: f.Shape}
	levels := 0
	for i := range f.Nodes {
		levels = max(levels, f.Nodes[i].Level)
	}
	p.Layers = make([][]PictureNode, levels+1)
	box := make([][2]int, len(f.Nodes))
	for _, r := range f.Racks {
		idx := len(p.Layers[0])
		p.Layers[0] = append(p.Layers[0], PictureNode{Label: fmt.Sprintf("%d hosts", len(r.Hosts)), Role: RoleHost, Nodes: r.Hosts})
		for _, h := range r.Hosts {
			box[h] = [2]int{0, idx}
		}
	}
	for i := f.Hosts; i < len(f.Nodes); i++ {
		n := &f.Nodes[i]
		box[i] = [2]int{n.Level, len(p.Layers[n.Level])}
		p.Layers[n.Level] = append(p.Layers[n.Level], PictureNode{Label: n.Name, Role: n.Role, Nodes: []int32{int32(i)}})
	}
	type key struct{ a, b [2]int }
	at := map[key]int{}
	for id := range f.Links {
		l := &f.Links[id]
		a, b := box[l.A.Node], box[l.B.Node]
		if a[0] > b[0] || (a[0] == b[0] && a[1] > b[1]) {
			a, b = b, a
		}
		k := key{a, b}
		i, ok := at[k]
		if !ok {
			i = len(p.Links)
			at[k] = i
			p.Links = append(p.Links, PictureLink{A: a, B: b})
		}
		p.Links[i].Links = append(p.Links[i].Links, int32(id))
		p.Links[i].Speed += int64(l.Speed)
	}
	for i := range p.Links {
		slices.Sort(p.Links[i].Links)
	}
	return p
}

// SwitchInfo and LinkInfo are a recorded fabric (run.json's topology): enough to
// rebuild its graph for a picture.
type SwitchInfo struct {
	ID    int32
	Role  string
	Level int
}

// LinkInfo is one recorded link.
type LinkInfo struct {
	A, APort, B, BPort int32
	Speed              int64
	Delay              int64
}

// Rebuild makes the graph of a recorded fabric: nodes named names (hosts first,
// hosts of them), the switches' roles and levels, the links with their ports. It
// checks only what the picture needs (ids and ports in range).
func Rebuild(shape string, names []string, hosts int, switches []SwitchInfo, links []LinkInfo) (*Fabric, error) {
	f := &Fabric{Shape: shape, Hosts: hosts, Nodes: make([]Node, len(names)), byName: map[string]int32{}}
	for i, n := range names {
		f.Nodes[i] = Node{Name: n, Pod: -1, Plane: -1}
		if i < hosts {
			f.Nodes[i].Role = RoleHost
		}
		f.byName[n] = int32(i)
	}
	for _, s := range switches {
		if s.ID < int32(hosts) || int(s.ID) >= len(names) || s.Level < 1 {
			return nil, fmt.Errorf("%w: switch id %d, level %d", ErrInvalid, s.ID, s.Level)
		}
		f.Nodes[s.ID].Role, f.Nodes[s.ID].Level = s.Role, s.Level
	}
	for id, l := range links {
		for _, e := range [][2]int32{{l.A, l.APort}, {l.B, l.BPort}} {
			if e[0] < 0 || int(e[0]) >= len(names) || e[1] < 0 || e[1] > 1<<16 {
				return nil, fmt.Errorf("%w: link %d names node %d port %d", ErrInvalid, id, e[0], e[1])
			}
			n := &f.Nodes[e[0]]
			for int(e[1]) >= len(n.Ports) {
				n.Ports = append(n.Ports, Port{Peer: -1})
			}
		}
		f.Nodes[l.A].Ports[l.APort] = Port{Peer: l.B, PeerPort: l.BPort, Link: int32(id)}
		f.Nodes[l.B].Ports[l.BPort] = Port{Peer: l.A, PeerPort: l.APort, Link: int32(id)}
		f.Links = append(f.Links, Link{A: End{l.A, l.APort}, B: End{l.B, l.BPort}, Speed: units.BitRate(l.Speed), Delay: units.Time(l.Delay)})
	}
	rackOf := map[int32]int{}
	f.hostRack = make([]int32, hosts)
	for h := 0; h < hosts; h++ {
		if len(f.Nodes[h].Ports) != 1 || f.Nodes[h].Ports[0].Peer < 0 {
			return nil, fmt.Errorf("%w: host %s has no link", ErrInvalid, names[h])
		}
		sw := f.Nodes[h].Ports[0].Peer
		r, ok := rackOf[sw]
		if !ok {
			r = len(f.Racks)
			rackOf[sw] = r
			f.Racks = append(f.Racks, Rack{Node: sw})
		}
		f.Racks[r].Hosts = append(f.Racks[r].Hosts, int32(h))
	}
	slices.SortFunc(f.Racks, func(a, b Rack) int { return int(a.Node - b.Node) })
	for r, rack := range f.Racks {
		for _, h := range rack.Hosts {
			f.hostRack[h] = int32(r)
		}
	}
	return f, nil
}
