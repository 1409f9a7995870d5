package transport

import (
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// RoCEv2 with DCQCN and go-back-N (docs/model.md#dcqcn).

// roceSend puts the next packet into the NIC when the pacer allows and none of the
// flow's packets is waiting there; otherwise it schedules itself for nextAvail.
func (l *Layer) roceSend(now units.Time, f *flow) {
	if f.inNIC || f.nxt >= f.segs.end() {
		return
	}
	if now < f.nextAvail {
		if f.paceEv != f.nextAvail {
			f.paceEv = f.nextAvail
			f.snd.eng.Schedule(f.nextAvail, l.h, evPace, int64(f.id))
		}
		return
	}
	if f.nxt == f.una() || f.rtoAt == 0 {
		f.progress = now
		l.armTimer(f, now+l.cfg.RoceTimeout)
	}
	// Set before sending: the NIC may start the packet, and call Departed, at once.
	i := f.nxt
	f.nxt++
	f.inNIC = true
	l.send(now, f, i)
}

// roceData is a data packet reaching the receiver: in sequence it is delivered and
// acknowledged; out of sequence it is discarded and NAKed if the receiver now waits
// for another packet than at its last NAK (nakTimer re-sends a NAK); a CE mark makes
// a CNP unless the flow had one in the last CnpInterval.
func (l *Layer) roceData(now units.Time, f *flow, p *switchmodel.Packet) {
	if p.ECN == switchmodel.CE && (f.lastCnp < 0 || now-f.lastCnp >= l.cfg.CnpInterval) {
		f.lastCnp = now
		if l.onCNP != nil {
			l.onCNP(now, int64(f.id))
		}
		l.event(now, f, f.spec.Dst, EventCNP, 0)
		l.control(f, switchmodel.Cnp, RoCECtlLength, uint8(l.cfg.CnpDscp), f.rcvNxt, false)
	}
	switch i := p.Seq; {
	case i == f.rcvNxt:
		f.rcvNxt++
		f.lastAdvance = now
		if f.watch >= 0 && f.rcvNxt > f.watch {
			l.delivered(now, f)
		}
		l.control(f, switchmodel.Ack, RoCECtlLength, p.DSCP, f.rcvNxt, false)
	case i > f.rcvNxt:
		f.dups++
		if f.lastNak != f.rcvNxt+1 {
			f.lastNak = f.rcvNxt + 1
			f.nakDscp = p.DSCP
			l.nak(now, f)
		}
	default:
		f.dups++
		l.control(f, switchmodel.Ack, RoCECtlLength, p.DSCP, f.rcvNxt, false)
	}
}

// nak sends a NAK for the packet the receiver waits for and, with a NakInterval,
// makes sure a re-send check is pending.
func (l *Layer) nak(now units.Time, f *flow) {
	f.nakAt = now
	l.control(f, switchmodel.Nak, RoCECtlLength, f.nakDscp, f.rcvNxt, false)
	if iv := l.cfg.NakInterval; iv > 0 && f.nakEv < 0 {
		f.nakEv = now + iv
		f.rcv.eng.Schedule(f.nakEv, l.h, evNak, int64(f.id))
	}
}

// nakTimer: a receiver that still waits for the packet its last NAK asked for sends
// the NAK again NakInterval after it (HPCC's NACK interval: a lost NAK or a lost
// retransmission recovers without RoceTimeout); one that moved on stops.
func (l *Layer) nakTimer(now units.Time, f *flow) {
	if f.lastNak != f.rcvNxt+1 {
		return
	}
	if due := f.nakAt + l.cfg.NakInterval; due > now {
		f.nakEv = due
		f.rcv.eng.Schedule(due, l.h, evNak, int64(f.id))
		return
	}
	l.nak(now, f)
}

// roceControl is an ACK, NAK or CNP reaching the sender.
func (l *Layer) roceControl(now units.Time, f *flow, p *switchmodel.Packet) {
	if p.Class == switchmodel.Cnp {
		f.signals++
		f.rp.cnp(now)
		return
	}
	a := p.Seq
	if a > f.una() {
		l.acked(f, a)
		f.progress = now
		if f.nxt < a {
			f.nxt = a
		}
	}
	if p.Class == switchmodel.Nak && a < f.nxt {
		f.nxt = a // go back N
	}
	if f.una() == f.nxt && f.nxt == f.segs.end() {
		f.rtoAt = 0
	} else {
		l.armTimer(f, f.progress+l.cfg.RoceTimeout)
	}
	l.roceSend(now, f)
}

// roceTimeout: no progress for RoceTimeout: resend from the first unacknowledged
// packet.
func (l *Layer) roceTimeout(now units.Time, f *flow) {
	if f.segs.n == 0 {
		return
	}
	f.timeouts++
	l.event(now, f, f.spec.Src, EventTimeout, 0)
	f.nxt = f.una()
	f.progress = now
	l.armTimer(f, now+l.cfg.RoceTimeout)
	l.roceSend(now, f)
}
