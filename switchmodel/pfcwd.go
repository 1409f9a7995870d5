package switchmodel

import (
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// The PFC watchdog (docs/model.md#pfc-watchdog), SONiC pfcwd's semantics without its
// polling: a switch port's lossless class that its peer keeps paused, continuously,
// with packets waiting for DetectionTime is in a storm (storm_detected). The action
// then applies: drop discards the class's queue (reason pfc-watchdog) and every later
// arrival for it and ignores its pauses; forward ignores its pauses; alert only
// records. When RestorationTime has passed without a pause frame received for the
// class, the storm is over (storm_restored) and the class obeys pauses again.

// Event kinds of a switch's watchdog; arg = port | tc<<32 | gen<<40.
const (
	evDetect   int32 = evSample + 1 + iota // a (port, class) may have been paused with packets waiting for DetectionTime
	evRestore                              // a stormed (port, class) may have had no pause for RestorationTime
	evStall                                // host: a stalled NIC re-sends its pause
	evDeadlock                             // switch: check the wait-for graph from a (port, pool)
)

// wdState is one (port, class)'s watchdog state.
type wdState struct {
	since     units.Time // paused with packets waiting since (-1: not)
	lastPause units.Time // last pause frame received (in a storm)
	gen       uint32     // the pending detection event's generation
	storm     bool
}

type watchdog struct {
	detect, restore units.Time
	action          config.WatchdogAction
	st              []wdState // port*NumTC + tc
	// The watchdog is an event handler of its own, so that a switch's Handle (on
	// every packet's path) has no case for it.
	sw *Switch
	h  HandlerID
}

// Handle runs the watchdog's detection and restoration events.
func (w *watchdog) Handle(now units.Time, kind int32, arg int64) {
	if kind == evDetect {
		w.sw.wdDetect(now, arg)
	} else {
		w.sw.wdRestore(now, arg)
	}
}

func newWatchdog(c *config.PfcWatchdog, ports int) *watchdog {
	w := &watchdog{detect: c.DetectionTime, restore: c.RestorationTime, action: c.Action, st: make([]wdState, ports*NumTC)}
	for i := range w.st {
		w.st[i].since = -1
	}
	return w
}

func (w *watchdog) of(pt *port, tc int) *wdState { return &w.st[int(pt.idx)*NumTC+tc] }

// ignores reports whether pauses of (pt, tc) are ignored: a storm under drop or
// forward.
func (w *watchdog) ignores(pt *port, tc int) bool {
	return w.action != config.WatchdogAlert && w.of(pt, tc).storm
}

// arm starts the detection clock of (pt, tc) if it is paused with packets waiting and
// not already counting.
func (s *Switch) wdArm(now units.Time, pt *port, tc int) {
	st := s.wd.of(pt, tc)
	if st.storm || st.since >= 0 || pt.paused&(1<<tc) == 0 || pt.tc[tc].q.n == 0 {
		return
	}
	st.since = now
	st.gen++
	s.net.eng.Schedule(now+s.wd.detect, s.wd.h, evDetect, int64(pt.idx)|int64(tc)<<32|int64(st.gen)<<40)
}

// wdDisarm stops the detection clock of (pt, tc): it resumed, or its queue emptied.
func (s *Switch) wdDisarm(pt *port, tc int) {
	if st := s.wd.of(pt, tc); st.since >= 0 {
		st.since = -1
		st.gen++
	}
}

func (s *Switch) wdDetect(now units.Time, arg int64) {
	pt := s.ports[int32(arg)]
	tc := int(arg>>32) & 0xff
	st := s.wd.of(pt, tc)
	if st.since < 0 || st.gen&0xffffff != uint32(arg>>40)&0xffffff {
		return
	}
	st.since, st.storm, st.lastPause = -1, true, now
	s.net.pfcEvent(now, pt, uint8(tc), PFCStormDetected, 0)
	switch s.wd.action {
	case config.WatchdogDrop:
		s.net.unpause(now, pt, tc)
		pt.pauseEvAt[tc] = -1
		s.net.discard(now, pt, tc, DropPFCWatchdog)
	case config.WatchdogForward:
		s.net.unpause(now, pt, tc)
		pt.pauseEvAt[tc] = -1
		s.net.kick(now, pt)
	}
	s.net.eng.Schedule(now+s.wd.restore, s.wd.h, evRestore, int64(pt.idx)|int64(tc)<<32)
}

func (s *Switch) wdRestore(now units.Time, arg int64) {
	pt := s.ports[int32(arg)]
	tc := int(arg>>32) & 0xff
	st := s.wd.of(pt, tc)
	if !st.storm {
		return
	}
	if due := st.lastPause + s.wd.restore; due > now {
		s.net.eng.Schedule(due, s.wd.h, evRestore, arg)
		return
	}
	st.storm = false
	s.net.pfcEvent(now, pt, uint8(tc), PFCStormRestored, 0)
	s.wdArm(now, pt, tc) // under alert the class may still be paused with packets waiting
}

// wdPauseRx notes a pause frame received for (pt, tc) during a storm; it reports
// whether the pause is to be ignored.
func (s *Switch) wdPauseRx(now units.Time, pt *port, tc int) bool {
	st := s.wd.of(pt, tc)
	if !st.storm {
		return false
	}
	st.lastPause = now
	return s.wd.action != config.WatchdogAlert
}

// dropsArrivals reports whether the watchdog discards arrivals for (e, tc): a storm
// under drop.
func (w *watchdog) dropsArrivals(e *port, tc uint8) bool {
	return w.action == config.WatchdogDrop && w.st[int(e.idx)*NumTC+int(tc)].storm
}

// Stall makes host h's NIC stop draining (stalled true): it pauses its link's peer
// for the classes of vector with PFCQuanta quanta now and every half pause time, as a
// receiver that never drains does, until Stall(false), which sends one resume
// (quanta 0). Hosts otherwise never send PFC; this is how a PFC storm is made
// (docs/model.md#pfc-watchdog).
func (n *Network) Stall(h *Host, vector uint8, stalled bool) {
	if stalled == h.stalled {
		return
	}
	h.stalled = stalled
	h.stallGen++
	now := n.eng.Now()
	pt := h.ports[0]
	if !stalled {
		n.sendPFC(now, pt, h.stallVector, 0)
		return
	}
	h.stallVector = vector
	n.sendPFC(now, pt, vector, PFCQuanta)
	n.eng.Schedule(now+pt.halfPause, h.h, evStall, int64(h.stallGen))
}

func (h *Host) stallRefresh(now units.Time, gen int64) {
	if !h.stalled || uint32(gen) != h.stallGen {
		return
	}
	pt := h.ports[0]
	h.net.sendPFC(now, pt, h.stallVector, PFCQuanta)
	h.net.eng.Schedule(now+pt.halfPause, h.h, evStall, gen)
}
