package fabric

import (
	"fmt"
	"slices"
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
