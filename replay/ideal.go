package replay

import (
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// The ideal flow completion time (docs/model.md#flow-completion): the same flow alone
// in the empty fabric, with the same application timing, on the path its first packet
// took. Store and forward per hop: packet i leaves link k's sender at
// D_k(i) = max(A_k(i), D_k(i-1) + s_k(i-1)) and reaches the next node at
// A_{k+1}(i) = D_k(i) + s_k(i) + p_k (+ ForwardingLatency at a switch), A_0(i) being
// its availability; ideal = A_h(last) - A_0(first). In the Clos every member of an
// equal-cost set has the same link, so the path's links follow from the two hosts:
// same rack 2 links, same pod 4, across pods 6.

// maxPathLinks is the longest Clos path, in links.
const maxPathLinks = 6

// pathLinks are the links of one kind of path, in order from the source host.
type pathLinks struct {
	n         int
	psPerByte [maxPathLinks]units.Time    // exact serialization per wire byte, 0 when not exact
	speed     [maxPathLinks]units.BitRate // for the inexact case
	after     [maxPathLinks]units.Time    // propagation, plus ForwardingLatency when a switch receives
}

// idealPaths returns the path kinds of a Clos: index 0 same rack, 1 same pod, 2 across
// pods.
func idealPaths(t *config.Topology, fwd units.Time) [3]pathLinks {
	mk := func(links ...config.Link) pathLinks {
		var p pathLinks
		p.n = len(links)
		for k, l := range links {
			if (8*int64(units.Second))%int64(l.Speed) == 0 {
				p.psPerByte[k] = units.Time(8 * int64(units.Second) / int64(l.Speed))
			}
			p.speed[k] = l.Speed
			p.after[k] = l.PropagationDelay
			if k < len(links)-1 {
				p.after[k] += fwd
			}
		}
		return p
	}
	h, rf, fs := t.HostLink, t.RackFabricLink, t.FabricSpineLink
	return [3]pathLinks{mk(h, h), mk(h, rf, rf, h), mk(h, rf, fs, fs, rf, h)}
}

// idealState follows one flow's ideal schedule.
type idealState struct {
	free [maxPathLinks]units.Time // D_k(i-1) + s_k(i-1): when link k is free again
	last units.Time               // A_h of the latest packet
}

// add schedules a packet of IPv4 length l available at avail.
func (st *idealState) add(p *pathLinks, avail units.Time, l int32) {
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
}

// pathKind returns the index into idealPaths for hosts src and dst.
func (g HostGrid) pathKind(src, dst int32) uint8 {
	rs, rd := int(src)/g.HostsPerRack, int(dst)/g.HostsPerRack
	switch {
	case rs == rd:
		return 0
	case rs/g.RacksPerPod == rd/g.RacksPerPod:
		return 1
	}
	return 2
}
