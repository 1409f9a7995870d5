package switchmodel

import (
	"fmt"

	"github.com/tracefabric/tracefabric/internal/units"
)

// PFC deadlock detection (docs/model.md#pfc-deadlock). The wait-for graph: a switch
// ingress port i that pauses its upstream for pool P waits on every egress port e of
// its switch that holds packets of P that arrived on i while e's peer pauses e for
// their class; e in turn waits on the peer's ingress port that pauses it. A cycle of
// such waits never drains by itself: a deadlock. The graph is walked from a pausing
// ingress port at each refresh of its pause once the pause has lasted two refresh
// periods (a deadlocked port keeps pausing, so every deadlock is found within three
// refresh periods of its forming; transient congestion is not walked at all). A cycle
// is reported once, with its ports in order and the time, until one of its ports
// resumes (deadlock_resolved).

// Deadlock is one cycle of paused ports found by the detection.
type Deadlock struct {
	// Ports are the cycle's egress ports, each paused by the next one's switch, in
	// cycle order from the one whose node and port are smallest.
	Ports []Hop
	// TC is the paused class (the first paused class of the pool at each port).
	TC       uint8
	Detected units.Time
	Resolved units.Time // -1 while it lasts
}

// Deadlocks returns the deadlocks found so far, in the order found.
func (n *Network) Deadlocks() []Deadlock {
	out := make([]Deadlock, len(n.deadlocks))
	for i, d := range n.deadlocks {
		out[i] = d
		out[i].Ports = append([]Hop(nil), d.Ports...)
	}
	return out
}

// DeadlockUndrained counts the data packets that deadlock i holds: those queued at
// its ports and, one hop upstream, at every port (a switch's or a host NIC's) that a
// switch of the cycle pauses, in the paused classes; each port counted once.
func (n *Network) DeadlockUndrained(i int) int64 {
	d := &n.deadlocks[i]
	var c int64
	seen := map[*port]bool{}
	count := func(pt *port, vec uint8) {
		if seen[pt] {
			return
		}
		seen[pt] = true
		for tc := range NumTC {
			if vec&(1<<tc) != 0 {
				c += int64(pt.tc[tc].q.n)
			}
		}
	}
	for _, h := range d.Ports {
		pt := n.nodes[h.Node].core().ports[h.Port]
		sw := pt.core.self.(*Switch)
		count(pt, sw.pools[sw.tcPool[d.TC]].vector)
	}
	for _, h := range d.Ports {
		sw := n.nodes[h.Node].core().self.(*Switch)
		for _, in := range sw.ports {
			for P := range sw.pools {
				if in.pausing[P] {
					count(in.peer, in.peer.paused&sw.pools[P].vector)
				}
			}
		}
	}
	return c
}

// holdsFrom reports whether egress port e holds a packet of pool P (of a class in
// vec) that arrived on ingress port in, and returns that class.
func (n *Network) holdsFrom(e *port, in int32, P uint8, vec uint8) (uint8, bool) {
	for tc := NumTC - 1; tc >= 0; tc-- {
		if vec&e.paused&(1<<tc) == 0 {
			continue
		}
		for id := e.tc[tc].q.head; id != NoPacket; {
			p := n.arena.get(id)
			if p.inPort == in && p.pool == P {
				return uint8(tc), true
			}
			id = p.next
		}
	}
	return 0, false
}

// checkDeadlock walks the wait-for graph from switch s's ingress port start, pausing
// for pool P, and records the first cycle through it.
func (s *Switch) checkDeadlock(now units.Time, start *port, P int) {
	if par := s.net.par; par != nil {
		// The walk reads other switches: not in a partition's window (stage 1).
		par.err = fmt.Errorf("%w: a pause at %s lasted long enough to check for a PFC deadlock at %v", ErrNotPartitioned, s.name, now)
		s.net.eng.Stop()
		return
	}
	n := s.net
	n.dlEpoch++
	stack := n.dlStack[:0]
	path := n.dlPath[:0] // egress ports taken, with their class
	stack = append(stack, dlFrame{sw: s, in: start, pool: uint8(P)})
	start.dlMark = n.dlEpoch
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next >= len(f.sw.ports) {
			stack = stack[:len(stack)-1]
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
			continue
		}
		e := f.sw.ports[f.next]
		f.next++
		if e == f.in || e.paused == 0 {
			continue
		}
		vec := f.sw.pools[f.pool].vector
		tc, ok := n.holdsFrom(e, f.in.idx, f.pool, vec)
		if !ok {
			continue
		}
		nx := e.peer
		nsw, isSw := nx.core.self.(*Switch)
		if !isSw {
			continue // a host pauses: a storm, not a deadlock
		}
		np := nsw.tcPool[tc]
		if !nx.pausing[np] {
			continue
		}
		if nx == start {
			path = append(path, dlStep{e, tc})
			n.reportDeadlock(now, path)
			break
		}
		if nx.dlMark == n.dlEpoch {
			continue
		}
		nx.dlMark = n.dlEpoch
		path = append(path, dlStep{e, tc})
		stack = append(stack, dlFrame{sw: nsw, in: nx, pool: np})
	}
	n.dlStack, n.dlPath = stack[:0], path[:0]
}

type dlFrame struct {
	sw   *Switch
	in   *port
	pool uint8
	next int
}

type dlStep struct {
	e  *port
	tc uint8
}

// reportDeadlock records the cycle of egress ports path (each paused by the next
// one's switch) unless its ports are already in a deadlock that lasts.
func (n *Network) reportDeadlock(now units.Time, path []dlStep) {
	for _, st := range path {
		if st.e.dlCycle != 0 {
			return
		}
	}
	// Rotate to start at the smallest (node, port).
	first := 0
	for i, st := range path {
		a, b := st.e, path[first].e
		if a.core.id < b.core.id || (a.core.id == b.core.id && a.idx < b.idx) {
			first = i
		}
	}
	d := Deadlock{TC: path[0].tc, Detected: now, Resolved: -1}
	for k := range path {
		st := path[(first+k)%len(path)]
		d.Ports = append(d.Ports, Hop{Node: st.e.core.id, Port: st.e.idx})
		st.e.dlCycle = int32(len(n.deadlocks) + 1)
	}
	n.deadlocks = append(n.deadlocks, d)
	n.activeDeadlocks++
	for _, h := range d.Ports {
		pt := n.nodes[h.Node].core().ports[h.Port]
		n.pfcEvent(now, pt, d.TC, PFCDeadlock, 0)
	}
}

// resolveDeadlock ends the deadlock that port pt is on: one of its ports resumed.
func (n *Network) resolveDeadlock(now units.Time, pt *port) {
	i := pt.dlCycle - 1
	d := &n.deadlocks[i]
	d.Resolved = now
	n.activeDeadlocks--
	for _, h := range d.Ports {
		q := n.nodes[h.Node].core().ports[h.Port]
		q.dlCycle = 0
		n.pfcEvent(now, q, d.TC, PFCDeadlockResolved, 0)
	}
}
