package switchmodel

import "github.com/tracefabric/tracefabric/internal/units"

// sampler emits buffer samples of its switches every interval while the network holds
// packets; it stops when the network is empty (so draining terminates) and Inject wakes
// it at the next multiple of the interval.
type sampler struct {
	net      *Network
	h        HandlerID
	interval units.Time
	switches []*Switch
	idle     bool
}

func (sm *sampler) wake(now units.Time) {
	sm.idle = false
	next := (now/sm.interval + 1) * sm.interval
	sm.net.eng.Schedule(next, sm.h, evSample, 0)
}

func (sm *sampler) Handle(now units.Time, kind int32, arg int64) {
	for _, s := range sm.switches {
		s.sample(now)
	}
	if sm.net.live() > 0 {
		sm.net.eng.Schedule(now+sm.interval, sm.h, evSample, 0)
	} else {
		sm.idle = true
	}
}

// live is the number of packets the network holds: its arena's, or, while it runs
// partitioned (at a barrier, the cut links' frames delivered), its partitions'.
func (n *Network) live() int {
	if n.parts == nil {
		return n.arena.live
	}
	l := 0
	for _, v := range n.parts {
		l += v.arena.live
	}
	return l
}
