package switchmodel

import (
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// FlowKey is the ECMP hash key of docs/model.md#ecmp-hashing: 13 bytes for IPv4
// (ecmp.MakeKey), 37 for IPv6 (ecmp.MakeKey6).
type FlowKey = ecmp.Key

// KeyID names a FlowKey in a Network's key table (Network.AddKey). Packets carry it:
// the key itself does not fit a packet's first cache line.
type KeyID int32

// AddKey adds k to the network's key table and returns its id. A key serves every
// packet of its flow: add it once per flow (and once for the reverse direction a
// flow's control packets take), not per packet; the table only grows. KeyID 0 is the
// all-zero IPv4 key, there from the start.
func (n *Network) AddKey(k FlowKey) KeyID {
	n.keys = append(n.keys, k)
	return KeyID(len(n.keys) - 1)
}

// Key returns the key of id (valid until the next AddKey).
func (n *Network) Key(id KeyID) *FlowKey { return &n.keys[id] }

// MemberView lets a Selector look at the ports of an equal-cost set: member i is the
// set's i-th port. EgressBytes is the bytes queued on the member's port, all classes
// (cells*CellSize); Paused whether the port's peer paused class tc.
type MemberView = ecmp.MemberView

// Selector chooses the member of an equal-cost set: the seam to the load balancer.
// *ecmp.Balancer implements it (one per switch, holding its hash method, salt and
// flowlet table, and the load balancing records). The switch registers each set of two or more ports with AddSet and
// asks Select for every packet routed to it; sets of one port never reach it.
type Selector interface {
	AddSet(n int) int
	// Select returns the member, -1 when the set has no live member.
	Select(now units.Time, set int, key *FlowKey, tc uint8, bytes int, view MemberView) int
	// SetLive tells which members are live after change number change (failures,
	// docs/model.md#rehashing) and returns the flows it moved.
	SetLive(set int, live []bool, change int) int64
}

var _ Selector = (*ecmp.Balancer)(nil)

// Selector returns the switch's Selector (nil if none), e.g. to read an
// *ecmp.Balancer's Records at the end.
func (s *Switch) Selector() Selector { return s.sel }

// setView is a Switch's MemberView over one set; the switch passes a pointer to its
// single instance, so Select costs no allocation.
type setView struct {
	s   *Switch
	set []int32
}

func (v *setView) EgressBytes(member int) int64 { return v.s.ports[v.set[member]].egressTotal }

func (v *setView) Paused(member int, tc uint8) bool {
	return v.s.ports[v.set[member]].paused&(1<<tc) != 0
}

// SelectorSetPorts returns the ports of the set that the Selector knows as id (the
// Set of an ecmp.Record), in member order, or nil.
func (s *Switch) SelectorSetPorts(id int) []int {
	for i, sid := range s.selSet {
		if sid == id && id >= 0 {
			return s.EqualCostSet(i)
		}
	}
	return nil
}
