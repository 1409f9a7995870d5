package transport

import (
	"slices"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// TCP: NewReno and DCTCP (docs/model.md#tcp). Window arithmetic is in bytes of
// sequence space (float64, for congestion avoidance's fractional growth); segments
// are indexed, and a segment's sequence units are its payload bytes (at least 1).

const dupackThreshold = 3

// tcpSend sends available segments while the window allows: a segment goes if the
// bytes in flight plus its own fit in cwnd, or if nothing is in flight.
func (l *Layer) tcpSend(now units.Time, f *flow) {
	end := f.segs.end()
	una := f.una()
	for f.nxt < end {
		s := f.segs.at(f.nxt)
		flight := s.start - f.segs.startOf(una, f.endUnits)
		if flight > 0 && float64(flight+int64(s.units)) > f.cwnd {
			break
		}
		f.nxt++
		l.send(now, f, f.nxt-1)
	}
	if f.rtoAt == 0 && f.nxt > una {
		l.armTimer(f, now+f.rto)
	}
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
		l.acked(f, a)
		f.dupacks = 0
		if dctcp {
			f.ackedUnits += acked
			if ece {
				f.marked += acked
			}
		}
		switch {
		case f.inRecovery && a >= f.recover:
			// Full acknowledgement: leave fast recovery (RFC 6582 3.2 step 3).
			f.inRecovery = false
			f.cwnd = min(f.ssthresh, float64(max(f.flightUnits(), 0))+f.smss)
		case f.inRecovery:
			// Partial acknowledgement: resend the next hole, deflate by what was
			// acknowledged and add back one segment (RFC 6582 3.2 step 4).
			l.send(now, f, a)
			f.cwnd = max(f.cwnd-float64(acked)+f.smss, f.smss)
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
			// Fast retransmit and NewReno fast recovery; the window is cut unless an
			// ECE cut already happened for this window.
			flight := float64(f.flightUnits())
			if una > f.cwrEnd {
				f.ssthresh = max(flight/2, 2*f.smss)
				f.cwrEnd = f.nxt
			} else {
				f.ssthresh = max(f.cwnd, 2*f.smss)
			}
			f.recover = f.nxt
			f.inRecovery = true
			l.send(now, f, una)
			f.cwnd = f.ssthresh + dupackThreshold*f.smss
			l.event(now, f, f.spec.Src, EventFastRetransmit, int64(f.cwnd))
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
// unacknowledged segment.
func (l *Layer) tcpTimeout(now units.Time, f *flow) {
	una := f.una()
	if f.segs.n == 0 || f.nxt == una {
		return
	}
	f.timeouts++
	f.ssthresh = max(float64(f.flightUnits())/2, 2*f.smss)
	f.cwnd = f.smss
	f.recover = f.nxt
	f.cwrEnd = f.nxt
	f.inRecovery = false
	f.dupacks = 0
	f.nxt = una
	f.rto = min(2*f.rto, l.cfg.MaxRto)
	f.rtoAt = 0
	l.event(now, f, f.spec.Src, EventTimeout, int64(f.cwnd))
	l.tcpSend(now, f)
}
