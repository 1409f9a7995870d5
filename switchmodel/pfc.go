package switchmodel

import "github.com/tracefabric/tracefabric/internal/units"

// sendPFC queues a PFC frame with the given class-enable vector and quanta on port pt's
// PFC queue (docs/model.md#priority-flow-control) and starts it if the port is idle.
func (n *Network) sendPFC(now units.Time, pt *port, vector uint8, quanta uint16) {
	if pt.down {
		return // its link is down: nothing is sent
	}
	id, p := n.arena.alloc()
	p.Class = classPFC
	p.Frame = pfcFrameBytes
	p.vector = vector
	p.quanta = quanta
	pt.pfcq.push(&n.arena, id, p)
	n.kick(now, pt)
}

// txPFC counts and reports a PFC frame that starts transmitting on pt.
func (n *Network) txPFC(now units.Time, pt *port, p *Packet) {
	n.pfcFrames++
	kind := PFCTxPause
	if p.quanta == 0 {
		kind = PFCTxResume
	}
	for tc := 0; tc < NumTC; tc++ {
		if p.vector&(1<<tc) == 0 {
			continue
		}
		if kind == PFCTxPause {
			pt.stats[tc].PFCPauseTx++
		} else {
			pt.stats[tc].PFCResumeTx++
		}
		n.pfcEvent(now, pt, uint8(tc), kind, p.quanta)
	}
}

func (n *Network) pfcEvent(now units.Time, pt *port, tc uint8, kind PFCEventKind, quanta uint16) {
	if n.obs.PFC != nil {
		n.obs.PFC.PFC(PFCEvent{Time: now, Node: pt.core.id, Port: pt.idx, Peer: pt.peer.core.id,
			PeerPort: pt.peer.idx, TC: tc, Kind: kind, Quanta: quanta})
	}
}

// rxPFC applies a received PFC frame to port pt's transmitter: quanta n > 0 stops
// starting new frames of each enabled class until n*512 bit times at the port's speed
// have passed (a later frame overrides the timer); quanta 0 resumes at once.
func (n *Network) rxPFC(now units.Time, pt *port, p *Packet) {
	resumed := false
	var wd *Switch
	if sw, ok := pt.core.self.(*Switch); ok && sw.wd != nil {
		wd = sw
	}
	var dur units.Time
	if p.quanta > 0 {
		if p.quanta == PFCQuanta {
			dur = pt.pauseDur
		} else {
			dur = units.SerializationTime(int64(p.quanta)*64, pt.speed)
		}
	}
	for tc := 0; tc < NumTC; tc++ {
		bit := uint8(1) << tc
		if p.vector&bit == 0 {
			continue
		}
		if p.quanta == 0 {
			pt.stats[tc].PFCResumeRx++
			n.pfcEvent(now, pt, uint8(tc), PFCRxResume, 0)
			if pt.paused&bit != 0 {
				n.unpause(now, pt, tc)
				resumed = true
			}
			continue
		}
		pt.stats[tc].PFCPauseRx++
		n.pfcEvent(now, pt, uint8(tc), PFCRxPause, p.quanta)
		if wd != nil && wd.wdPauseRx(now, pt, tc) {
			continue // a storm: the watchdog ignores the class's pauses
		}
		if pt.paused&bit == 0 {
			pt.paused |= bit
			pt.pausedSince[tc] = now
			if wd != nil {
				wd.wdArm(now, pt, tc)
			}
		}
		until := now + dur
		pt.pauseUntil[tc] = until
		if ev := pt.pauseEvAt[tc]; ev < 0 || until < ev {
			pt.pauseEvAt[tc] = until
			n.eng.Schedule(until, pt.core.h, evExpire, int64(pt.idx)|int64(tc)<<32)
		}
	}
	if resumed {
		n.kick(now, pt)
	}
}

func (n *Network) unpause(now units.Time, pt *port, tc int) {
	if pt.paused&(1<<tc) == 0 {
		return
	}
	pt.paused &^= 1 << tc
	pt.stats[tc].PausedPs += now - pt.pausedSince[tc]
	if pt.dlCycle != 0 {
		n.resolveDeadlock(now, pt)
	}
	if sw, ok := pt.core.self.(*Switch); ok && sw.wd != nil {
		sw.wdDisarm(pt, tc)
	}
}

// expire handles a pause timer event of (pt, tc). Only the event whose time matches the
// pending one counts; if a later pause frame extended the timer it waits again.
func (n *Network) expire(now units.Time, pt *port, tc int) {
	if pt.pauseEvAt[tc] != now {
		return // superseded
	}
	pt.pauseEvAt[tc] = -1
	if pt.paused&(1<<tc) == 0 {
		return
	}
	if until := pt.pauseUntil[tc]; until > now {
		pt.pauseEvAt[tc] = until
		n.eng.Schedule(until, pt.core.h, evExpire, int64(pt.idx)|int64(tc)<<32)
		return
	}
	// Every class whose pause ends at this same instant (one frame paused the pool's
	// classes together) resumes before the scheduler looks, so strict priority holds:
	// a lower class must not start just because its expiry event came first.
	for c := tc; c < NumTC; c++ {
		if c != tc && (pt.paused&(1<<c) == 0 || pt.pauseEvAt[c] != now || pt.pauseUntil[c] > now) {
			continue
		}
		pt.pauseEvAt[c] = -1
		n.unpause(now, pt, c)
		n.pfcEvent(now, pt, uint8(c), PFCExpire, 0)
	}
	n.kick(now, pt)
}

// pause makes switch port pt pause its upstream for pool P: one pause frame now and a
// refresh every half pause time while (pt, P) stays paused.
func (s *Switch) pause(now units.Time, pt *port, pool int) {
	pt.pausing[pool] = true
	pt.refreshGen[pool]++
	pt.refreshes[pool] = 0
	s.net.sendPFC(now, pt, s.pools[pool].vector, PFCQuanta)
	s.net.eng.Schedule(now+pt.halfPause, s.h, evRefresh, int64(pt.idx)|int64(pool)<<32|int64(pt.refreshGen[pool])<<40)
}

// resume sends the single quanta-0 frame that ends (pt, P)'s pause.
func (s *Switch) resume(now units.Time, pt *port, pool int) {
	pt.pausing[pool] = false
	pt.refreshGen[pool]++
	s.net.sendPFC(now, pt, s.pools[pool].vector, 0)
}

func (s *Switch) refresh(now units.Time, arg int64) {
	pt := s.ports[int32(arg)]
	pool := int(arg>>32) & 0xff
	gen := uint32(arg >> 40)
	if !pt.pausing[pool] || pt.refreshGen[pool]&0xffffff != gen&0xffffff {
		return
	}
	if pt.ingShared[pool] == 0 && pt.ingHeadroom[pool] == 0 {
		// Nothing that arrived on pt is left in the pool (the packets that triggered
		// the pause were dropped), so no departure can ever resume it: resume now
		// instead of refreshing (the spec is silent; see the package doc).
		s.resume(now, pt, pool)
		return
	}
	s.net.sendPFC(now, pt, s.pools[pool].vector, PFCQuanta)
	s.net.eng.Schedule(now+pt.halfPause, s.h, evRefresh, arg)
	if pt.refreshes[pool] < 2 {
		pt.refreshes[pool]++
	} else {
		s.checkDeadlock(now, pt, pool)
	}
}
