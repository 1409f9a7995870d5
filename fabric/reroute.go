package fabric

import "slices"

// Change names what an event changed in a State: the links whose LinkDown changed
// and the nodes whose NodeDown or Drained changed (docs/model.md#local-repair-and-reconvergence).
type Change struct {
	Links []int32
	Nodes []int32
}

// Reroute returns the routes of state, given rt, the routes of the state before
// change, and the switches (node indices, in order) whose next hops toward some rack
// differ from rt's. The result equals Route(f, state) in distances and in every
// switch's next hops toward every rack (set indices may differ: a new next-hop list
// is appended to the switch's sets, old ones stay). rt is not modified: rows of the
// switches that did not change are shared.
//
// The cost is that of what changed, not of the fabric: per rack, the old distances
// at the changed elements tell whether the rack is touched at all (a link between two
// switches at one distance from it, or a switch it never reaches, changes nothing);
// a touched rack whose distances stay (every switch that lost a next hop keeps
// another; a returning link or switch shortens no path) costs the next hops of the
// few switches next to the change; only a rack whose distances change is searched
// again (one breadth-first search and its next hops, as Route does per rack).
func (rt *Routes) Reroute(state *State, change Change) (*Routes, []int32) {
	f := rt.f
	H := int32(f.Hosts)
	sw := len(f.Nodes) - f.Hosts
	nt := &Routes{f: f, adj: rt.adj, Sets: slices.Clone(rt.Sets), ByRack: slices.Clone(rt.ByRack), Dist: slices.Clone(rt.Dist)}
	e := &rerouter{old: rt, rt: nt, state: state, ownD: make(map[int]bool), ownB: make(map[int]bool), ownS: make(map[int]bool), changed: make(map[int]bool)}
	// The switch ends of the changed links; the changed switches.
	type swLink struct{ u, v int32 } // switch indices
	var links []swLink
	for _, l := range change.Links {
		lk := &f.Links[l]
		if lk.A.Node >= H && lk.B.Node >= H {
			links = append(links, swLink{lk.A.Node - H, lk.B.Node - H})
		}
	}
	var nodes []int32
	for _, n := range change.Nodes {
		if n >= H {
			nodes = append(nodes, n-H)
		}
	}
	if len(links) == 0 && len(nodes) == 0 {
		return nt, nil
	}
	var dist []int16
	var queue []int32
	for r := range f.Racks {
		e.r, e.bfs, e.cand = r, false, e.cand[:0]
		rackSw := f.Racks[r].Node - H
		for _, l := range links {
			e.link(l.u, l.v)
		}
		for _, n := range nodes {
			if n == rackSw {
				e.bfs = true
				continue
			}
			e.node(n)
		}
		if e.bfs {
			if dist == nil {
				dist = make([]int16, len(f.Nodes))
				queue = make([]int32, 0, sw)
			}
			nt.bfs(state, r, dist, queue)
			for i := range sw {
				e.setDist(i, dist[f.Hosts+i])
			}
			for i := range sw {
				e.update(i)
			}
			continue
		}
		for _, i := range e.cand {
			e.update(int(i))
		}
	}
	out := make([]int32, 0, len(e.changed))
	for i := range e.changed {
		out = append(out, H+int32(i))
	}
	slices.Sort(out)
	return nt, out
}

// rerouter is one Reroute: the routes being made (rows copied on first write) and,
// for the rack r at hand, whether it needs a search (bfs) or the switches whose next
// hops to recompute (cand).
type rerouter struct {
	old, rt          *Routes
	state            *State
	ownD, ownB, ownS map[int]bool
	changed          map[int]bool
	r                int
	bfs              bool
	cand             []int32
	ports            []int32
}

func (e *rerouter) d(i int32) int16 { return e.rt.Dist[i][e.r] }

func (e *rerouter) setDist(i int, d int16) {
	if e.rt.Dist[i][e.r] == d {
		return
	}
	if !e.ownD[i] {
		e.ownD[i] = true
		e.rt.Dist[i] = slices.Clone(e.rt.Dist[i])
	}
	e.rt.Dist[i][e.r] = d
}

// expands reports whether switch i passes routes on toward rack r: up and not
// drained, or the rack itself.
func (e *rerouter) expands(i int32) bool {
	n := int32(e.rt.f.Hosts) + i
	return !e.state.nodeDown(n) && (n == e.rt.f.Racks[e.r].Node || !e.state.drained(n))
}

// parented reports whether switch c still has a next hop at its distance under the
// new state (its distance then stays).
func (e *rerouter) parented(c int32) bool {
	d := e.d(c)
	if d <= 0 {
		return true
	}
	H := int32(e.rt.f.Hosts)
	for _, p := range e.rt.adj[c] {
		if !e.state.linkDown(p.link) && e.d(p.peer-H) == d-1 && e.expands(p.peer-H) {
			return true
		}
	}
	return false
}

// lost: switch c lost a next hop; it is recomputed, and the rack is searched again
// unless c keeps another.
func (e *rerouter) lost(c int32) {
	e.cand = append(e.cand, c)
	if !e.parented(c) {
		e.bfs = true
	}
}

// link handles the link between switches u and v for the rack at hand.
func (e *rerouter) link(u, v int32) {
	du, dv := e.d(u), e.d(v)
	if du == dv {
		return // never on a shortest path, before or after
	}
	if du < 0 || dv < 0 {
		// One end unreachable: the link was on no shortest path; coming up, it
		// may reach the unreachable end.
		var a int32
		if du < 0 {
			a = v
		} else {
			a = u
		}
		if e.linkUp(u, v) && e.expands(a) {
			e.bfs = true
		}
		return
	}
	if du < dv {
		u, v, du, dv = v, u, dv, du // v is the closer end
	}
	if du == dv+1 {
		// u's next hops gain or lose v; distances stay unless u lost its last.
		e.lost(u)
		return
	}
	// Farther than one hop: the closer end passes nothing on (drained), so the link
	// was on no shortest path; coming up it may shorten paths.
	if e.linkUp(u, v) && e.expands(v) {
		e.bfs = true
	}
}

// linkUp reports whether some link between switches u and v is up.
func (e *rerouter) linkUp(u, v int32) bool {
	H := int32(e.rt.f.Hosts)
	for _, p := range e.rt.adj[u] {
		if p.peer-H == v && !e.state.linkDown(p.link) {
			return true
		}
	}
	return false
}

// node handles switch n (not the rack's own) for the rack at hand.
func (e *rerouter) node(n int32) {
	H := int32(e.rt.f.Hosts)
	dn := e.d(n)
	if e.state.nodeDown(H + n) {
		if dn < 0 {
			return // it reached nothing: nothing went through it
		}
		// Down: it is unreachable, and its neighbours one hop farther lose it.
		e.setDist(int(n), -1)
		e.cand = append(e.cand, n)
		for _, p := range e.rt.adj[n] {
			if c := p.peer - H; e.d(c) == dn+1 {
				e.lost(c)
			}
		}
		return
	}
	if dn < 0 {
		// Up (or unreachable before): its distance is one more than its nearest
		// neighbour that passes routes on.
		best := int16(-1)
		for _, p := range e.rt.adj[n] {
			c := p.peer - H
			if dc := e.d(c); !e.state.linkDown(p.link) && dc >= 0 && e.expands(c) && (best < 0 || dc+1 < best) {
				best = dc + 1
			}
		}
		if best < 0 {
			return // still unreachable
		}
		e.setDist(int(n), best)
		e.cand = append(e.cand, n)
		dn = best
	}
	// Drained: its neighbours one hop farther lose it; up or undrained: a neighbour
	// farther than one hop (or unreachable) gets a shorter path, one hop farther
	// gains it.
	drained := !e.expands(n)
	for _, p := range e.rt.adj[n] {
		c := p.peer - H
		if e.state.linkDown(p.link) || e.state.nodeDown(H+c) {
			continue
		}
		dc := e.d(c)
		switch {
		case dc == dn+1 && drained:
			e.lost(c)
		case dc == dn+1:
			e.cand = append(e.cand, c)
		case !drained && (dc < 0 || dc > dn+1):
			e.bfs = true
		}
	}
}

// update recomputes switch i's next hops toward the rack at hand and records it
// changed when they differ from the old routes'.
func (e *rerouter) update(i int) {
	rt, old := e.rt, e.old
	e.ports = rt.hops(e.state, i, e.r, e.ports)
	var was []int32
	if s := old.ByRack[i][e.r]; s >= 0 {
		was = old.Sets[i][s].Ports
	}
	cur := rt.ByRack[i][e.r]
	var now []int32
	if cur >= 0 {
		now = rt.Sets[i][cur].Ports
	}
	if slices.Equal(now, e.ports) {
		return
	}
	if !slices.Equal(was, e.ports) {
		e.changed[i] = true
	}
	if !e.ownB[i] {
		e.ownB[i] = true
		rt.ByRack[i] = slices.Clone(rt.ByRack[i])
	}
	if len(e.ports) == 0 {
		rt.ByRack[i][e.r] = -1
		return
	}
	for s := range rt.Sets[i] {
		if slices.Equal(rt.Sets[i][s].Ports, e.ports) {
			rt.ByRack[i][e.r] = int32(s)
			return
		}
	}
	if !e.ownS[i] {
		e.ownS[i] = true
		rt.Sets[i] = slices.Clip(rt.Sets[i])
	}
	h := NextHops{Ports: slices.Clone(e.ports)}
	h.Weights = wcmp(rt.f, int32(rt.f.Hosts+i), h.Ports)
	rt.ByRack[i][e.r] = int32(len(rt.Sets[i]))
	rt.Sets[i] = append(rt.Sets[i], h)
}
