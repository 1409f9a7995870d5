package fabric

import (
	"math"
	"slices"
	"unsafe"
)

// MaxWCMPTable is the largest group table of a weighted set (docs/model.md#routing):
// members are replicated in proportion to their capacity, weights reduced by their
// greatest common divisor; when the reduced weights still add up to more than this,
// each becomes max(1, round(weight * MaxWCMPTable / sum)).
const MaxWCMPTable = 256

// State is what routing avoids (issue 23's failures and drains): links and nodes
// down, switches drained (never transit, still reachable as a destination's rack).
// The zero State is the healthy fabric.
type State struct {
	LinkDown []bool // by link id
	NodeDown []bool // by node index
	Drained  []bool // by node index
}

func (s *State) linkDown(id int32) bool {
	return s != nil && int(id) < len(s.LinkDown) && s.LinkDown[id]
}
func (s *State) nodeDown(n int32) bool { return s != nil && int(n) < len(s.NodeDown) && s.NodeDown[n] }
func (s *State) drained(n int32) bool  { return s != nil && int(n) < len(s.Drained) && s.Drained[n] }

// NextHops is a weighted next-hop set: ports in port order and, when their
// capacities differ, their WCMP weights (nil: equal weights).
type NextHops struct {
	Ports   []int32
	Weights []int32
}

// Table returns the group table of the set: member indices (into Ports), each
// replicated Weights[i] times, in member order; nil for an equal-weight set.
func (h *NextHops) Table() []int32 {
	if h.Weights == nil {
		return nil
	}
	var t []int32
	for m, w := range h.Weights {
		for range w {
			t = append(t, int32(m))
		}
	}
	return t
}

// Member returns the member of the set that hash picks: hash mod the number of
// members, or for a weighted set the member of group-table slot hash mod the table
// size (Table, without building it).
func (h *NextHops) Member(hash uint32) int {
	if h.Weights == nil {
		return int(hash % uint32(len(h.Ports)))
	}
	var total uint32
	for _, w := range h.Weights {
		total += uint32(w)
	}
	slot := int32(hash % total)
	for m, w := range h.Weights {
		if slot < w {
			return m
		}
		slot -= w
	}
	return len(h.Weights) - 1
}

// Routes are the forwarding tables of every switch: toward each rack (switch with
// hosts, Fabric.Racks) one next-hop set, deduplicated per switch. A switch reaches
// its own hosts through their host ports.
type Routes struct {
	f *Fabric
	// Sets[s - Hosts] are switch s's distinct sets; ByRack[s - Hosts][r] the index in
	// them of the set toward rack r (-1: unreachable).
	Sets   [][]NextHops
	ByRack [][]int32
	// Dist[s - Hosts][r] is the hop count from switch s to rack r's switch (-1:
	// unreachable).
	Dist [][]int16

	adj [][]adjPort // switchAdj(f), shared by the routes Reroute derives
}

// Route computes shortest-path (hop count) equal-cost routing from every switch to
// every rack, avoiding what state marks down or drained, with WCMP weights where
// members' link speeds differ (docs/model.md#routing).
func Route(f *Fabric, state *State) *Routes {
	sw := len(f.Nodes) - f.Hosts
	rt := &Routes{f: f, Sets: make([][]NextHops, sw), ByRack: make([][]int32, sw), Dist: make([][]int16, sw)}
	nr := len(f.Racks)
	distAll := make([]int16, sw*nr)
	byAll := make([]int32, sw*nr)
	for i := range sw {
		rt.Dist[i] = distAll[i*nr : (i+1)*nr : (i+1)*nr]
		rt.ByRack[i] = byAll[i*nr : (i+1)*nr : (i+1)*nr]
	}
	rt.adj = switchAdj(f)
	dist := make([]int16, len(f.Nodes))
	queue := make([]int32, 0, sw)
	for r := range f.Racks {
		rt.bfs(state, r, dist, queue)
		for i := range sw {
			rt.Dist[i][r] = dist[f.Hosts+i]
		}
	}
	// Next hops: the ports to a neighbour one hop closer (not drained unless it is
	// the rack itself), in port order.
	var ports []int32
	for i := range sw {
		n := int32(f.Hosts + i)
		seen := map[string]int32{}
		for r := range f.Racks {
			ports = rt.hops(state, i, r, ports)
			if len(ports) == 0 {
				rt.ByRack[i][r] = -1
				continue
			}
			key := unsafe.String((*byte)(unsafe.Pointer(&ports[0])), 4*len(ports))
			set, ok := seen[key]
			if !ok {
				set = int32(len(rt.Sets[i]))
				h := NextHops{Ports: slices.Clone(ports)}
				h.Weights = wcmp(f, n, h.Ports)
				rt.Sets[i] = append(rt.Sets[i], h)
				seen[string([]byte(key))] = set
			}
			rt.ByRack[i][r] = set
		}
	}
	return rt
}

// adjPort is a switch-to-switch port: its index, the peer switch and the link.
type adjPort struct{ port, peer, link int32 }

// switchAdj returns the switch-to-switch ports of every switch (hosts are never
// transit), by switch index.
func switchAdj(f *Fabric) [][]adjPort {
	sw := len(f.Nodes) - f.Hosts
	adj := make([][]adjPort, sw)
	for i := range sw {
		for pi, p := range f.Nodes[f.Hosts+i].Ports {
			if p.Peer >= int32(f.Hosts) {
				adj[i] = append(adj[i], adjPort{int32(pi), p.Peer, p.Link})
			}
		}
	}
	return adj
}

// bfs fills dist (by node) with the hop counts to rack r's switch under state (-1:
// unreachable): a breadth-first search from the rack over the links up, never
// through a switch down, never onward from a drained switch other than the rack.
func (rt *Routes) bfs(state *State, r int, dist []int16, queue []int32) {
	f := rt.f
	H := int32(f.Hosts)
	rack := f.Racks[r]
	for i := range dist {
		dist[i] = -1
	}
	queue = queue[:0]
	if !state.nodeDown(rack.Node) {
		dist[rack.Node] = 0
		queue = append(queue, rack.Node)
	}
	for qi := 0; qi < len(queue); qi++ {
		n := queue[qi]
		if qi > 0 && state.drained(n) {
			continue // a drained switch is no transit
		}
		for _, p := range rt.adj[n-H] {
			if dist[p.peer] >= 0 || state.linkDown(p.link) || state.nodeDown(p.peer) {
				continue
			}
			dist[p.peer] = dist[n] + 1
			queue = append(queue, p.peer)
		}
	}
}

// hops returns in ports[:0] the next hops of switch i (index among switches) toward
// rack r under state and rt.Dist: the ports up to a neighbour one hop closer, not
// drained unless it is the rack itself, in port order; none when the rack is i's own
// or unreachable, or i is down.
func (rt *Routes) hops(state *State, i, r int, ports []int32) []int32 {
	f := rt.f
	H := int32(f.Hosts)
	ports = ports[:0]
	d := rt.Dist[i][r]
	if d <= 0 || state.nodeDown(H+int32(i)) {
		return ports
	}
	rack := f.Racks[r].Node
	for _, p := range rt.adj[i] {
		if state.linkDown(p.link) {
			continue
		}
		if pd := rt.Dist[p.peer-H][r]; pd == d-1 && (p.peer == rack || !state.drained(p.peer)) {
			ports = append(ports, p.port)
		}
	}
	return ports
}

// wcmp returns the weights of ports by link speed, nil when all are equal.
func wcmp(f *Fabric, n int32, ports []int32) []int32 {
	if len(ports) < 2 {
		return nil
	}
	speeds := make([]int64, len(ports))
	same := true
	for i, p := range ports {
		speeds[i] = int64(f.Links[f.Nodes[n].Ports[p].Link].Speed)
		same = same && speeds[i] == speeds[0]
	}
	if same {
		return nil
	}
	return WCMPWeights(speeds)
}

// WCMPWeights reduces capacities to group-table weights (docs/model.md#routing):
// divided by their greatest common divisor; scaled to MaxWCMPTable entries and
// rounded to nearest (at least 1) when they add up to more.
func WCMPWeights(capacity []int64) []int32 {
	g := capacity[0]
	for _, c := range capacity[1:] {
		g = gcd(g, c)
	}
	var sum int64
	for _, c := range capacity {
		sum += c / g
	}
	w := make([]int32, len(capacity))
	for i, c := range capacity {
		if sum <= MaxWCMPTable {
			w[i] = int32(c / g)
		} else {
			w[i] = int32(max(1, math.Round(float64(c/g)*MaxWCMPTable/float64(sum))))
		}
	}
	return w
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// NextHops returns the set of switch node toward host dst: its host port when dst is
// under it, else the set toward dst's rack; ok is false when dst is unreachable.
func (rt *Routes) NextHops(node int32, dst int32) (NextHops, bool) {
	f := rt.f
	r := f.hostRack[dst]
	if f.Racks[r].Node == node {
		return NextHops{Ports: []int32{f.HostPort(dst)}}, true
	}
	s := rt.ByRack[node-int32(f.Hosts)][r]
	if s < 0 {
		return NextHops{}, false
	}
	return rt.Sets[node-int32(f.Hosts)][s], true
}

// SetCount is the number of distinct sets over all switches (host ports excluded).
func (rt *Routes) SetCount() int {
	n := 0
	for _, s := range rt.Sets {
		n += len(s)
	}
	return n
}

// Bytes estimates the memory of the tables.
func (rt *Routes) Bytes() int64 {
	var b int64
	for i := range rt.Sets {
		b += int64(len(rt.ByRack[i]))*4 + int64(len(rt.Dist[i]))*2
		for _, s := range rt.Sets[i] {
			b += int64(len(s.Ports)+len(s.Weights))*4 + 48
		}
	}
	return b
}

// Path is a host-to-host path: the links in order from the source host.
type Path []int32

// LongestPath returns the longest host-to-host path of the routing by hop count
// and, among those, one of the largest total cost (cost of a link: for BaseRTT its
// round trip, docs/model.md#fabric-bdp). The Clos's is
// host-rack-fabric-spine-fabric-rack-host. A fabric of one host has none (nil).
func (rt *Routes) LongestPath(cost func(l *Link) int64) Path {
	f := rt.f
	H := int32(f.Hosts)
	costs := make([]int64, len(f.Links))
	for i := range f.Links {
		costs[i] = cost(&f.Links[i])
	}
	// Per destination rack r: the best (cost) continuation from every switch, in
	// increasing distance order.
	best := make([]int64, len(f.Nodes))
	next := make([]int32, len(f.Nodes)) // port chosen
	order := make([]int32, 0, len(f.Nodes))
	type pick struct {
		hops      int
		cost      int64
		src, rack int32
		dstHost   int32
		cont      []int32 // ports from the source rack switch
	}
	var top pick
	top.hops = -1
	hostCost := func(h int32) int64 { return costs[f.Nodes[h].Ports[0].Link] }
	top2 := map[int32][2]int32{} // per rack switch its two hosts of largest host-link cost
	for _, rack := range f.Racks {
		t := [2]int32{-1, -1}
		for _, h := range rack.Hosts {
			switch {
			case t[0] < 0 || hostCost(h) > hostCost(t[0]):
				t[1], t[0] = t[0], h
			case t[1] < 0 || hostCost(h) > hostCost(t[1]):
				t[1] = h
			}
		}
		top2[rack.Node] = t
	}
	for r, rack := range f.Racks {
		order = order[:0]
		for i := range len(f.Nodes) - f.Hosts {
			if rt.Dist[i][r] >= 0 {
				order = append(order, H+int32(i))
			}
		}
		slices.SortStableFunc(order, func(a, b int32) int { return int(rt.Dist[a-H][r]) - int(rt.Dist[b-H][r]) })
		// The destination host of largest host-link cost.
		dh := top2[rack.Node][0]
		for _, n := range order {
			if n == rack.Node {
				best[n], next[n] = 0, -1
				continue
			}
			h := rt.Sets[n-H][rt.ByRack[n-H][r]]
			best[n] = -1
			for _, pi := range h.Ports {
				p := f.Nodes[n].Ports[pi]
				if c := costs[p.Link] + best[p.Peer]; c > best[n] {
					best[n], next[n] = c, pi
				}
			}
		}
		for _, src := range f.Racks {
			d := rt.Dist[src.Node-H][r]
			if d < 0 {
				continue
			}
			{
				sh := top2[src.Node][0]
				if sh == dh {
					sh = top2[src.Node][1]
				}
				if sh < 0 {
					continue
				}
				c := hostCost(sh) + best[src.Node] + hostCost(dh)
				hops := int(d) + 2
				if hops > top.hops || (hops == top.hops && c > top.cost) {
					top = pick{hops: hops, cost: c, src: sh, rack: int32(r), dstHost: dh}
					top.cont = top.cont[:0]
					for n := src.Node; n != rack.Node; {
						pi := next[n]
						top.cont = append(top.cont, f.Nodes[n].Ports[pi].Link)
						n = f.Nodes[n].Ports[pi].Peer
					}
				}
			}
		}
	}
	if top.hops < 0 {
		return nil
	}
	p := Path{f.Nodes[top.src].Ports[0].Link}
	p = append(p, top.cont...)
	return append(p, f.Nodes[top.dstHost].Ports[0].Link)
}
