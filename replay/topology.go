package replay

import (
	"fmt"

	"github.com/tracefabric/tracefabric/internal/config"
)

// ClosPort is one port of a Clos node: the link to its peer.
type ClosPort struct {
	Peer     int // node index of the peer
	PeerPort int // port index on the peer
	Link     config.Link
}

// ClosNode is a host or switch of the Clos.
type ClosNode struct {
	Name  string
	Tier  config.Tier
	Pod   int // pod of a host, rack or fabric switch; the plane of a spine
	Index int // host id for hosts; rack or fabric index in its pod; spine index in its plane
	Ports []ClosPort
}

// Clos is the pure graph of a Clos fabric (docs/model.md#clos-builder) with its up/down routing
// (docs/model.md#routing); the replay builder turns it into simulated switches and hosts.
//
// Node numbering: hosts first, in host-id order (so node i < Hosts is host id i), then
// racks (pod, rack), fabric switches (pod, index), spines (plane, index).
//
// Port numbering: a host has port 0 to its rack. A rack has its hosts' ports
// 0..HostsPerRack-1, then its uplinks to fabric switches 0..FabricPerPod-1 of its pod.
// A fabric switch has its racks' ports 0..RacksPerPod-1, then (Pods > 1) its uplinks to
// spines 0..SpinesPerPlane-1 of its plane. A spine has one port per pod, to that pod's
// fabric switch of its plane. Equal-cost sets list their ports in port order.
type Clos struct {
	Topology    config.Topology
	Grid        HostGrid
	Nodes       []ClosNode
	firstRack   int
	firstFabric int
	firstSpine  int
}

// NewClos builds the graph of t. It rejects shapes with no hosts or non-positive
// counts; link attributes are validated by config.
func NewClos(t config.Topology) (*Clos, error) {
	if t.Pods < 1 || t.RacksPerPod < 1 || t.HostsPerRack < 1 || t.FabricPerPod < 1 || (t.Pods > 1 && t.SpinesPerPlane < 1) {
		return nil, fmt.Errorf("topology: Pods, RacksPerPod, HostsPerRack, FabricPerPod (and SpinesPerPlane with Pods > 1) must be >= 1, got %d, %d, %d, %d, %d",
			t.Pods, t.RacksPerPod, t.HostsPerRack, t.FabricPerPod, t.SpinesPerPlane)
	}
	g := HostGrid{Pods: t.Pods, RacksPerPod: t.RacksPerPod, HostsPerRack: t.HostsPerRack}
	c := &Clos{Topology: t, Grid: g}
	for h := 0; h < g.Hosts(); h++ {
		r := h / t.HostsPerRack
		c.Nodes = append(c.Nodes, ClosNode{Name: g.HostName(int32(h)), Tier: config.TierHost, Pod: r / t.RacksPerPod, Index: h})
	}
	c.firstRack = len(c.Nodes)
	for p := 0; p < t.Pods; p++ {
		for r := 0; r < t.RacksPerPod; r++ {
			c.Nodes = append(c.Nodes, ClosNode{Name: fmt.Sprintf("rack-p%d-r%d", p, r), Tier: config.TierRack, Pod: p, Index: r})
		}
	}
	c.firstFabric = len(c.Nodes)
	for p := 0; p < t.Pods; p++ {
		for f := 0; f < t.FabricPerPod; f++ {
			c.Nodes = append(c.Nodes, ClosNode{Name: fmt.Sprintf("fabric-p%d-f%d", p, f), Tier: config.TierFabric, Pod: p, Index: f})
		}
	}
	c.firstSpine = len(c.Nodes)
	if t.Pods > 1 {
		for s := 0; s < t.FabricPerPod; s++ {
			for i := 0; i < t.SpinesPerPlane; i++ {
				c.Nodes = append(c.Nodes, ClosNode{Name: fmt.Sprintf("spine-s%d-%d", s, i), Tier: config.TierSpine, Pod: s, Index: i})
			}
		}
	}
	// Links are added in port order of the lower tier's peer: hosts, then rack uplinks,
	// then fabric uplinks, which yields the port numbering documented above.
	for h := 0; h < g.Hosts(); h++ {
		c.connect(h, c.RackNode(h/t.HostsPerRack), t.HostLink)
	}
	for r := 0; r < g.Racks(); r++ {
		for f := 0; f < t.FabricPerPod; f++ {
			c.connect(c.RackNode(r), c.FabricNode(r/t.RacksPerPod, f), t.RackFabricLink)
		}
	}
	if t.Pods > 1 {
		for p := 0; p < t.Pods; p++ {
			for f := 0; f < t.FabricPerPod; f++ {
				for i := 0; i < t.SpinesPerPlane; i++ {
					c.connect(c.FabricNode(p, f), c.SpineNode(f, i), t.FabricSpineLink)
				}
			}
		}
	}
	return c, nil
}

func (c *Clos) connect(a, b int, l config.Link) {
	pa, pb := len(c.Nodes[a].Ports), len(c.Nodes[b].Ports)
	c.Nodes[a].Ports = append(c.Nodes[a].Ports, ClosPort{Peer: b, PeerPort: pb, Link: l})
	c.Nodes[b].Ports = append(c.Nodes[b].Ports, ClosPort{Peer: a, PeerPort: pa, Link: l})
}

// RackNode is the node index of global rack r (pod*RacksPerPod + rack).
func (c *Clos) RackNode(r int) int { return c.firstRack + r }

// FabricNode is the node index of fabric switch f of pod p.
func (c *Clos) FabricNode(p, f int) int { return c.firstFabric + p*c.Topology.FabricPerPod + f }

// SpineNode is the node index of spine i of plane s.
func (c *Clos) SpineNode(s, i int) int { return c.firstSpine + s*c.Topology.SpinesPerPlane + i }

// Links is the number of full-duplex links.
func (c *Clos) Links() int {
	n := 0
	for _, nd := range c.Nodes {
		n += len(nd.Ports)
	}
	return n / 2
}

// Switches lists the node indices of all switches in node order.
func (c *Clos) Switches() []int {
	var s []int
	for i := c.firstRack; i < len(c.Nodes); i++ {
		s = append(s, i)
	}
	return s
}

// NextHops returns the ports of node that lead toward host dst by docs/model.md#routing: one port,
// or an equal-cost set in port order. It is nil at the destination host itself.
func (c *Clos) NextHops(node int, dst int32) []int {
	t := c.Topology
	nd := &c.Nodes[node]
	dstRack := int(dst) / t.HostsPerRack
	dstPod := dstRack / t.RacksPerPod
	switch nd.Tier {
	case config.TierHost:
		if int32(node) == dst {
			return nil
		}
		return []int{0}
	case config.TierRack:
		if nd.Pod*t.RacksPerPod+nd.Index == dstRack {
			return []int{int(dst) % t.HostsPerRack}
		}
		return seq(t.HostsPerRack, t.FabricPerPod)
	case config.TierFabric:
		if nd.Pod == dstPod {
			return []int{dstRack % t.RacksPerPod}
		}
		return seq(t.RacksPerPod, t.SpinesPerPlane)
	case config.TierSpine:
		return []int{dstPod}
	}
	return nil
}

// UplinkSet returns a switch's equal-cost uplink ports (empty for spines): the one
// multi-member set a rack or fabric switch has.
func (c *Clos) UplinkSet(node int) []int {
	t := c.Topology
	switch c.Nodes[node].Tier {
	case config.TierRack:
		return seq(t.HostsPerRack, t.FabricPerPod)
	case config.TierFabric:
		if t.Pods > 1 {
			return seq(t.RacksPerPod, t.SpinesPerPlane)
		}
	}
	return nil
}

func seq(from, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = from + i
	}
	return s
}

// Bandwidth is the sum of a node's port speeds, each full-duplex port once (docs/model.md#switching-capacity).
func (c *Clos) Bandwidth(node int) int64 {
	var b int64
	for _, p := range c.Nodes[node].Ports {
		b += int64(p.Link.Speed)
	}
	return b
}
