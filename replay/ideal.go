package replay

import (
	"fmt"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// The ideal flow completion time (docs/model.md#flow-completion): the same flow alone
// in the empty fabric, with the same application timing, on the path its first packet
// took. Store and forward per hop: packet i leaves link k's sender at
// D_k(i) = max(A_k(i), D_k(i-1) + s_k(i-1)) and reaches the next node at
// A_{k+1}(i) = D_k(i) + s_k(i) + p_k (+ ForwardingLatency at a switch), A_0(i) being
// its availability; ideal = A_h(last) - A_0(first). The path's links are those the
// flow's key hashes to at each switch (member = hash mod set size, over the group
// table of a weighted set; under flowlet load balancing the first flowlet's member
// can differ). In the Clos every member of a set has the same link, so the path
// follows from the two hosts: same rack 2 links, same pod 4, across pods 6.

// maxPathLinks is the longest route a fabric may have, in links (NewTopology).
const maxPathLinks = switchmodel.MaxPath

// pathLinks are the links of one kind of path, in order from the source host.
type pathLinks struct {
	n         int
	psPerByte [maxPathLinks]units.Time    // exact serialization per wire byte, 0 when not exact
	speed     [maxPathLinks]units.BitRate // for the inexact case
	after     [maxPathLinks]units.Time    // propagation, plus ForwardingLatency when a switch receives
}

// idealPaths are the distinct path timings of the run's flows (in the Clos: three,
// same rack, same pod, across pods).
type idealPaths struct {
	paths []pathLinks
	index map[pathLinks]int32
}

// pathOf returns the index of the ideal path of a flow from src to dst with key:
// the links its key hashes to.
func (s *sim) pathOf(src, dst int32, key *ecmp.Key) int32 {
	t := s.pr.Topo
	var links, peers [maxPathLinks]int32
	for i := range links {
		links[i] = -1
	}
	n := 0
	node := src
	for node != dst && n < maxPathLinks {
		var port int32
		if node < int32(t.Hosts) {
			port = 0
		} else {
			h, _ := t.Routes.NextHops(node, dst)
			k := 0
			if len(h.Ports) > 1 {
				hash := s.net.Switches()[node-int32(t.Hosts)].Selector().(*ecmp.Balancer).HashOf(key)
				if h.Weights != nil {
					k = h.Member(hash)
				} else {
					k = int(hash % uint32(len(h.Ports)))
				}
			}
			port = h.Ports[k]
		}
		p := t.Nodes[node].Ports[port]
		links[n], peers[n] = p.Link, p.Peer
		n++
		node = p.Peer
	}
	if node != dst {
		s.setErr(fmt.Errorf("replay: the route from %s to %s is longer than %d links", t.Nodes[src].Name, t.Nodes[dst].Name, maxPathLinks))
	}
	var p pathLinks
	p.n = n
	for k := 0; k < n; k++ {
		l := &t.Links[links[k]]
		if (8*int64(units.Second))%int64(l.Speed) == 0 {
			p.psPerByte[k] = units.Time(8 * int64(units.Second) / int64(l.Speed))
		}
		p.speed[k] = l.Speed
		p.after[k] = l.Delay
		if k < n-1 { // a switch receives: its ForwardingLatency (its profile's)
			p.after[k] += s.net.Node(peers[k]).(*switchmodel.Switch).Config().ForwardingLatency
		}
	}
	if i, ok := s.ideal.index[p]; ok {
		return i
	}
	if s.ideal.index == nil {
		s.ideal.index = map[pathLinks]int32{}
	}
	i := int32(len(s.ideal.paths))
	s.ideal.paths = append(s.ideal.paths, p)
	s.ideal.index[p] = i
	return i
}

// idealState follows one flow's ideal schedule.
type idealState struct {
	free [maxPathLinks]units.Time // D_k(i-1) + s_k(i-1): when link k is free again
	last units.Time               // A_h of the latest packet
}

// add schedules a packet of IPv4 length l available at avail and returns its ideal
// arrival at the destination.
func (st *idealState) add(p *pathLinks, avail units.Time, l int32) units.Time {
	wire := int64(switchmodel.FrameSize(l)) + 20
	a := avail
	for k := 0; k < p.n; k++ {
		d := max(a, st.free[k])
		var s units.Time
		if p.psPerByte[k] > 0 {
			s = units.Time(wire) * p.psPerByte[k]
		} else {
			s = units.SerializationTime(wire, p.speed[k])
		}
		st.free[k] = d + s
		a = d + s + p.after[k]
	}
	st.last = max(st.last, a)
	return a
}
