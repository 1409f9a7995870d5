package switchmodel

import "github.com/tracefabric/tracefabric/switchmodel/units"

// FlowKey is the 13-byte ECMP hash key of SPEC 3.6.
type FlowKey = [13]byte

// MemberView lets a Selector look at the ports of an equal-cost set: member i is the
// set's i-th port.
type MemberView interface {
	// EgressBytes is the bytes queued on the member's port, all classes (cells*CellSize).
	EgressBytes(member int) int64
	// Paused reports whether the member's port is PFC-paused for class tc.
	Paused(member int, tc uint8) bool
}

// Selector chooses the member of an equal-cost set: the seam to the load balancer
// (package ecmp). The switch registers each set of two or more ports with AddSet and
// asks Select for every packet routed to it; sets of one port never reach it.
type Selector interface {
	AddSet(n int) int
	Select(now units.Time, set int, key *FlowKey, tc uint8, bytes int, view MemberView) int
}

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
