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
	if sm.net.arena.live > 0 {
		sm.net.eng.Schedule(now+sm.interval, sm.h, evSample, 0)
	} else {
		sm.idle = true
	}
}
