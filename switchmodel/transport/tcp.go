package transport

import (
	"slices"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// TCP: NewReno and DCTCP (docs/model.md#tcp). Window arithmetic is in bytes of
// sequence space (float64, for congestion avoidance's fractional growth); segments
// are indexed, and a segment's sequence units are its payload bytes (at least 1).

const dupackThreshold = 3

// tcpSend sends available segments while the window allows: a segment goes if the
// bytes in flight plus its own fit in cwnd, or if nothing is in flight. A sender that
// has been idle for longer than its RTO first restarts its window (IdleRestart).
func (l *Layer) tcpSend(now units.Time, f *flow) {
	end := f.segs.end()
	una := f.una()
	if now-f.lastSend > f.rto && f.nxt == una && f.nxt < end && f.sent > 0 && f.segs.at(una).sends == 0 {
		l.idleRestart(now, f)
	}
	if f.nxt < end {
		unaStart := f.segs.startOf(una, f.endUnits)
		var flight int64
		held := false
		for f.nxt < end {
			s := f.segs.at(f.nxt)
			flight = s.start - unaStart
			if flight > 0 && float64(flight+int64(s.units)) > f.cwnd {
				held = true
				break
			}
			f.nxt++
			l.send(now, f, f.nxt-1)
			flight += int64(s.units)
		}
		f.cwndUsage(held, flight)
	}
	if f.rtoAt == 0 && f.nxt > una {
		l.armTimer(f, now+f.rto)
	}
}

// initialWindow is the initial window of n segments of smss bytes with a byte bound
// (RFC 6928 with n = 10 and bound 14,600: min(10 SMSS, max(2 SMSS, 14600))); bound 0
// is n segments.
func initialWindow(n int, smss float64, bound units.Bytes) float64 {
	if bound <= 0 {
		return float64(n) * smss
	}
	return min(float64(n)*smss, max(2*smss, float64(bound)))
}

// cwndUsage records, after a send attempt that left flight bytes in flight, whether
// the window limited the sender (it held a segment back, or the flight filled it) and
// the largest flight, per window of
// data: Linux's tcp_cwnd_validate. A new window of data starts when everything sent
// at the start of the last one is acknowledged.
func (f *flow) cwndUsage(held bool, flight int64) {
	limited := held || float64(flight) >= f.cwnd
	if f.una() >= f.usageEnd || limited || (!f.cwndLimited && flight > f.maxFlight) {
		f.cwndLimited = limited
		f.maxFlight = flight
		f.usageEnd = f.nxt
	}
}

// mayGrow: the window grows on an ACK only if the sender was cwnd-limited (RFC 7661):
// the window limited it in the current window of data, or, in slow start, the window
// is below twice the largest flight (Linux's tcp_is_cwnd_limited), so that an
// application that keeps only a few segments in flight does not open it.
func (f *flow) mayGrow() bool {
	return f.cwndLimited || f.cwnd < f.ssthresh && f.cwnd < 2*float64(f.maxFlight)
}

// idleRestart is the window's restart after an idle period longer than the RTO
// (docs/model.md#tcp): rfc5681 cwnd = min(cwnd, IW) (RFC 5681 4.1); linux halves cwnd
// once per RTO of the idle time, not below min(cwnd, IW), after raising ssthresh to
// 3/4 of cwnd outside recovery (tcp_cwnd_restart).
func (l *Layer) idleRestart(now units.Time, f *flow) {
	restart := min(f.iw, f.cwnd)
	switch l.cfg.IdleRestart {
	case config.IdleRfc5681:
		f.cwnd = restart
	case config.IdleLinux:
		if !f.inRecovery {
			f.ssthresh = max(f.ssthresh, 0.75*f.cwnd)
		}
		cwnd := f.cwnd
		for d := now - f.lastSend - f.rto; d > 0 && cwnd > restart; d -= f.rto {
			cwnd /= 2
		}
		f.cwnd = max(cwnd, restart)
	default:
		return
	}
	f.cwndLimited, f.maxFlight, f.usageEnd = false, 0, f.nxt
}

// flightUnits is the sequence units sent and not acknowledged.
func (f *flow) flightUnits() int64 {
	return f.segs.startOf(f.nxt, f.endUnits) - f.segs.startOf(f.una(), f.endUnits)
}

// tcpData is a data segment reaching the receiver: deliver it once, acknowledge it at
// once with the next segment expected, echoing its CE mark.
func (l *Layer) tcpData(now units.Time, f *flow, p *switchmodel.Packet) {
	i := p.Seq
	switch {
	case i == f.rcvNxt:
		f.rcvNxt++
		for len(f.ooo) > 0 && f.ooo[0] == f.rcvNxt {
			f.ooo = f.ooo[1:]
			f.rcvNxt++
		}
		if len(f.ooo) == 0 {
			f.ooo = f.ooo[:0:0] // release the backing array of a drained reorder set
		}
		f.lastAdvance = now
		if f.watch >= 0 && f.rcvNxt > f.watch {
			l.delivered(now, f)
		}
	case i > f.rcvNxt:
		if k, found := slices.BinarySearch(f.ooo, i); found {
			f.dups++
		} else {
			f.ooo = slices.Insert(f.ooo, k, i)
		}
	default:
		f.dups++
	}
	l.control(f, switchmodel.Ack, TCPAckLength, p.DSCP, f.rcvNxt, p.ECN == switchmodel.CE)
}

// tcpAck is an ACK reaching the sender.
func (l *Layer) tcpAck(now units.Time, f *flow, p *switchmodel.Packet) {
	a := p.Seq
	ece := p.Echo
	if ece {
		f.signals++
	}
	una := f.una()
	if a > f.nxt {
		f.nxt = a // the receiver has data sent before a timeout made the sender go back
	}
	dctcp := f.kind == DCTCP
	switch {
	case a > una:
		acked := f.segs.startOf(a, f.endUnits) - f.segs.startOf(una, f.endUnits)
		// RTT sample from the newest acknowledged segment, unless it was resent (Karn).
		if last := f.segs.at(a - 1); last.sends == 1 {
			l.rttSample(f, now-last.sentAt)
		}
		grow := f.mayGrow()
		l.acked(f, a)
		f.dupacks = 0
		f.ltUnits = 0
		if dctcp {
			f.ackedUnits += acked
			if ece {
				f.marked += acked
			}
		}
		switch {
		case f.inRecovery && a >= f.recover:
			// Full acknowledgement: leave fast recovery (RFC 6582 3.2 step 3, option 1).
			f.inRecovery = false
			f.cwnd = min(f.ssthresh, float64(max(f.flightUnits(), int64(f.smss)))+f.smss)
		case f.inRecovery:
			// Partial acknowledgement (RFC 6582 3.2 step 5): resend the next hole,
			// deflate by what was acknowledged and add back one SMSS if that was at
			// least one SMSS; the window never drops below one SMSS.
			l.send(now, f, a)
			f.cwnd -= float64(acked)
			if float64(acked) >= f.smss {
				f.cwnd += f.smss
			}
			f.cwnd = max(f.cwnd, f.smss)
		case !grow:
		case f.cwnd < f.ssthresh:
			f.cwnd += min(float64(acked), f.smss) // slow start
		default:
			f.cwnd += f.smss * f.smss / f.cwnd // congestion avoidance
		}
		if f.segs.n == 0 || f.una() == f.nxt {
			f.rtoAt = 0
		} else {
			l.armTimer(f, now+f.rto)
		}
		if dctcp && a > f.windowEnd {
			// End of an observation window (RFC 8257 3.3 steps 4-8).
			if f.ackedUnits > 0 {
				frac := float64(f.marked) / float64(f.ackedUnits)
				g := l.cfg.DctcpG
				f.alpha = float64((1-g)*f.alpha) + float64(g*frac)
			}
			f.windowEnd = f.nxt
			f.ackedUnits, f.marked = 0, 0
		}
	case a == una && f.nxt > una:
		f.dupacks++
		switch {
		case f.inRecovery:
			f.cwnd += f.smss // inflate for the segment that left the network
		case f.dupacks == dupackThreshold && una >= f.recover:
			// Fast retransmit and NewReno fast recovery; the window is cut unless a
			// cut already happened for the window of data the lost segment belongs
			// to (segments before cwrEnd). FlightSize leaves out what limited
			// transmit sent (RFC 5681 3.2 step 2).
			flight := float64(f.flightUnits() - f.ltUnits)
			if una >= f.cwrEnd {
				f.ssthresh = max(flight/2, 2*f.smss)
				f.cwrEnd = f.nxt
			} else {
				f.ssthresh = max(f.cwnd, 2*f.smss)
			}
			f.ltUnits = 0
			f.recover = f.nxt
			f.inRecovery = true
			l.send(now, f, una)
			f.cwnd = f.ssthresh + dupackThreshold*f.smss
			l.event(now, f, f.spec.Src, EventFastRetransmit, int64(f.cwnd))
		case f.dupacks < dupackThreshold && l.cfg.LimitedTransmit:
			l.limitedTransmit(now, f)
		}
	}
	// DCTCP reacts to the first ECE of a window (RFC 8257 3.3), at most once per
	// window together with loss.
	if dctcp && ece && a > f.cwrEnd && !f.inRecovery {
		f.cwnd = max(float64(f.cwnd*float64(1-f.alpha/2)), f.smss)
		f.ssthresh = f.cwnd
		f.cwrEnd = f.nxt
		l.event(now, f, f.spec.Src, EventWindowCut, int64(f.cwnd))
	}
	l.tcpSend(now, f)
}

// limitedTransmit sends one segment never sent before on the first or second
// duplicate ACK, if the flight stays within cwnd + 2 SMSS (RFC 3042); cwnd is not
// changed.
func (l *Layer) limitedTransmit(now units.Time, f *flow) {
	if f.nxt >= f.segs.end() {
		return
	}
	s := f.segs.at(f.nxt)
	if s.sends > 0 || float64(f.flightUnits()+int64(s.units)) > f.cwnd+2*f.smss {
		return
	}
	f.nxt++
	f.ltUnits += int64(s.units)
	l.send(now, f, f.nxt-1)
}

// rttSample updates SRTT, RTTVAR and RTO (RFC 6298 2.2-2.4; clock granularity 0).
func (l *Layer) rttSample(f *flow, r units.Time) {
	if !f.hasRTT {
		f.srtt, f.rttvar, f.hasRTT = r, r/2, true
	} else {
		d := f.srtt - r
		if d < 0 {
			d = -d
		}
		f.rttvar = (3*f.rttvar + d) / 4
		f.srtt = (7*f.srtt + r) / 8
	}
	f.rto = min(max(l.cfg.MinRto, f.srtt+4*f.rttvar), l.cfg.MaxRto)
}

// tcpTimeout is a retransmission timeout (RFC 6298 5.4-5.6, RFC 5681 3.1): the window
// drops to one segment, the timer backs off, and the sender goes back to the first
// unacknowledged segment. ssthresh is set from the flight only the first time the
// timer resends a segment: a repeated timeout of the same segment keeps it.
func (l *Layer) tcpTimeout(now units.Time, f *flow) {
	una := f.una()
	if f.segs.n == 0 || f.nxt == una {
		return
	}
	f.timeouts++
	if una != f.rtoUna {
		f.ssthresh = max(float64(f.flightUnits())/2, 2*f.smss)
	}
	f.rtoUna = una
	f.cwnd = f.smss
	f.recover = f.nxt
	f.cwrEnd = f.nxt
	f.inRecovery = false
	f.dupacks = 0
	f.ltUnits = 0
	f.nxt = una
	f.rto = min(2*f.rto, l.cfg.MaxRto)
	f.rtoAt = 0
	l.event(now, f, f.spec.Src, EventTimeout, int64(f.cwnd))
	l.tcpSend(now, f)
}
