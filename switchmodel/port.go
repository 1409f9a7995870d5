package switchmodel

import (
	"math/bits"
	"unsafe"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Event kinds of a node's handler; arg is the port index unless said otherwise.
const (
	evTxDone  int32 = iota + 1 // the port's frame in progress has been serialized
	evArrive                   // the head frame of the port's incoming link has arrived
	evFwd                      // the head frame of the port's forwarding line is due
	evExpire                   // arg = port | tc<<32: a received pause may have expired
	evRefresh                  // arg = port | pool<<32 | gen<<40: re-send a pause frame
	evSample                   // buffer sampler (sampler handler)
)

// PFCQuanta is the quanta a pause frame asks (docs/model.md#priority-flow-control).
const PFCQuanta = 65535

// pfcFrameBytes is a PFC frame's size: 64 bytes (84 on the wire).
const pfcFrameBytes = 64

// LinkSpec describes a full-duplex link: both directions have this speed and delay.
type LinkSpec struct {
	Speed            units.BitRate
	PropagationDelay units.Time
}

// port is one end of a link: transmit queues and scheduler, the outgoing direction of
// the link, the receiver's PFC state and (at a switch) the buffer accounting.
//
// Layout: what every frame through the port reads or writes comes first, in two
// cache lines, then one cache line per traffic class (tc) and the receive counters;
// PFC timers and the statistics that change only on drops, marks and PFC come last.
// A hop touches a few lines of each port it crosses, not the whole struct.
type port struct {
	core      *nodeCore
	peer      *port
	psPerByte units.Time // 8e12/speed when exact, else 0 (use SerializationTime)
	prop      units.Time
	// lazyDone: the transmit-done event of the frame on the wire was not scheduled,
	// only its place in the event order reserved (txEnd, txSeq), because no frame was
	// waiting when it started; kick schedules it if one becomes ready before txEnd.
	txEnd       units.Time
	txSeq       uint64
	egressTotal int64 // switch: buffer bytes queued on the port, all classes
	idx         int32
	busyTC      uint8 // bit tc set while tc[tc].q (or, at a host, ctl[tc]) is not empty
	paused      uint8 // classes the peer paused (PFC receiver)
	busy        bool  // a frame is on the wire (until its transmit-done event)
	lazyDone    bool
	pfcq        fifo
	flight      fifo  // frames on the outgoing link, Packet.at = arrival of last bit
	flightPFC   int32 // PFC frames among flight
	busyCtl     uint8 // host: bit tc set while ctl[tc] is not empty
	// cutOut, cutIn: the link's far end is in another partition (RunPartitioned):
	// frames leave through the partition's outbox (cutOut), and arrive from the
	// port's own rxFlight (cutIn).
	cutOut, cutIn bool
	speed         units.BitRate

	tc [NumTC]tcQueue
	rx [NumTC]struct{ packets, bytes int64 }

	// Switch ingress accounting per pool, bytes (cells * CellSize).
	ingShared   [MaxPools]int64
	ingHeadroom [MaxPools]int64
	pausing     [MaxPools]bool // this port has paused its upstream for the pool

	fwd         fifo // received data frames waiting ForwardingLatency (switch)
	headroomCap [MaxPools]int64
	refreshGen  [MaxPools]uint32
	pauseDur    units.Time
	halfPause   units.Time
	pauseUntil  [NumTC]units.Time
	pauseEvAt   [NumTC]units.Time // time of the pending expiry event, -1 none
	pausedSince [NumTC]units.Time
	// stats holds the counters that tc and rx do not (drops, ECN marks, PFC, paused
	// time); PortStats adds theirs.
	stats [NumTC]TCStats
	// ctl holds, at a host, the control packets the NIC sends ahead of every class's
	// data (Network.InjectControl), per class: each still waits while its class is
	// paused.
	ctl [NumTC]fifo
	// down: the port's link is down (docs/model.md#failures-and-operations): it sends
	// nothing, and whatever is queued or routed for it is dropped link-down.
	down bool
	// Deadlock detection (deadlock.go): refreshes of each pool's pause since it
	// began, the walk's visit mark, and the deadlock the port is on (index + 1, 0:
	// none).
	refreshes [MaxPools]uint8
	dlMark    uint32
	dlCycle   int32
	// rxFlight: the frames on the incoming link of a cut link (cutIn), which the
	// partition's barrier delivers; the head's arrival event is scheduled.
	rxFlight fifo
}

// tcQueue is one traffic class of a port's transmit side: 64 bytes, one cache line.
type tcQueue struct {
	q         fifo
	egress    int64   // switch: buffer bytes queued for the class (cells * CellSize)
	avg       float64 // switch: ECN's average queue, bytes
	txPackets int64
	txBytes   int64
	watermark int64 // highest egress (switch) or NIC backlog (host), bytes
}

// serialization is units.SerializationTime(wire, speed), by one multiplication when
// the speed divides 8e12 (10, 25, 40, 100, 400 Gb/s ...).
func (pt *port) serialization(wire int64) units.Time {
	if pt.psPerByte > 0 {
		return units.Time(wire) * pt.psPerByte
	}
	return units.SerializationTime(wire, pt.speed)
}

// portChunk is how many ports are allocated together. A chunk is a large object, so
// it starts on a page boundary and, ports being a whole number of cache lines, every
// port starts on a cache line (a port allocated alone would start 8 bytes into one:
// the allocator's header of a pointerful object).
const portChunk = 32

// A change of port's fields that breaks this fails the build here: adjust its padding.
var _ = [1]struct{}{}[unsafe.Sizeof(port{})%64]

func (n *Network) allocPort() *port {
	if len(n.portSlab) == 0 {
		n.portSlab = make([]port, portChunk)
	}
	pt := &n.portSlab[0]
	n.portSlab = n.portSlab[1:]
	return pt
}

func (n *Network) newPort(c *nodeCore, l LinkSpec) *port {
	pt := n.allocPort()
	*pt = port{core: c, idx: int32(len(c.ports)), speed: l.Speed, prop: l.PropagationDelay}
	for i := range pt.tc {
		pt.tc[i].q = newFifo()
		pt.ctl[i] = newFifo()
		pt.pauseEvAt[i] = -1
	}
	pt.pfcq, pt.flight, pt.fwd, pt.rxFlight = newFifo(), newFifo(), newFifo(), newFifo()
	if (8*int64(units.Second))%int64(l.Speed) == 0 {
		pt.psPerByte = units.Time(8 * int64(units.Second) / int64(l.Speed))
	}
	pt.pauseDur = units.SerializationTime(PFCQuanta*64, l.Speed)
	pt.halfPause = pt.pauseDur / 2
	c.ports = append(c.ports, pt)
	return pt
}

// kick tells an egress port that a frame may have become ready to start (queued, or
// its class resumed). An idle port starts it. A port whose transmit-done event was
// only reserved gets it scheduled in its reserved place, or, if that place has passed
// (the port went idle then), starts now: either way exactly what the eagerly scheduled
// event would have done.
func (n *Network) kick(now units.Time, pt *port) {
	switch {
	case !pt.busy:
		n.startTx(now, pt)
	case pt.lazyDone:
		pt.lazyDone = false
		if n.eng.passed(pt.txEnd, pt.txSeq) {
			n.startTx(now, pt)
		} else {
			n.eng.scheduleReserved(pt.txEnd, pt.txSeq, pt.core.h, evTxDone, int64(pt.idx))
		}
	}
}

// startTx starts the next frame on an idle port: the PFC queue first, then (a host's
// NIC) its control packets of TC7..TC0, then TC7..TC0, skipping classes the peer
// paused. One tx-done event per busy port, scheduled only
// if another frame is ready to follow (else its place is reserved: see kick); the
// frame joins the link's in-flight FIFO, whose head alone has an arrival event, in
// the place of the order the sender reserved for it when it started.
func (n *Network) startTx(now units.Time, pt *port) {
	var id PacketID = NoPacket
	var p *Packet
	if pt.pfcq.n > 0 {
		id, p = pt.pfcq.pop(&n.arena)
	} else if pt.busyCtl != 0 && pt.busyCtl&^pt.paused != 0 { // (a switch port tests one byte)
		tc := bits.Len8(pt.busyCtl&^pt.paused) - 1
		q := &pt.ctl[tc]
		id, p = q.pop(&n.arena)
		if q.n == 0 {
			pt.busyCtl &^= 1 << tc
			if pt.tc[tc].q.n == 0 {
				pt.busyTC &^= 1 << tc
			}
		}
	} else {
		// Highest non-empty class the peer has not paused (its control packets, if
		// any, would have gone first: the queue is its data's).
		if avail := pt.busyTC &^ pt.paused; avail != 0 {
			tc := bits.Len8(avail) - 1
			q := &pt.tc[tc].q
			id, p = q.pop(&n.arena)
			if q.n == 0 {
				pt.busyTC &^= 1 << tc
			}
		}
	}
	if p == nil {
		pt.busy = false
		return
	}
	pt.busy = true
	c := pt.core
	if p.Class != classPFC {
		c.self.depart(now, pt, id, p)
		if p.Hops < MaxPath {
			p.path[p.Hops] = uint32(c.id)<<hopPortBits | uint32(pt.idx)
		}
		if p.Hops < 255 {
			p.Hops++
		}
		n.hops++
		if !p.Class.Control() {
			n.dataHops++
		}
		t := &pt.tc[p.TC]
		t.txPackets++
		t.txBytes += int64(p.Frame)
	} else {
		n.txPFC(now, pt, p)
		pt.flightPFC++
	}
	ser := pt.serialization(p.wireBytes())
	if pt.pfcq.n > 0 || pt.busyTC&^pt.paused != 0 {
		n.eng.Schedule(now+ser, c.h, evTxDone, int64(pt.idx))
	} else {
		pt.lazyDone, pt.txEnd, pt.txSeq = true, now+ser, n.eng.reserve()
	}
	// The arrival's key is the sender's, taken now: the event is scheduled now if the
	// frame heads the link, else by the receiver when the frame ahead of it arrives,
	// in this same place of the order either way (R1 of docs/parallel.md).
	p.at, p.arrOrd = now+ser+pt.prop, n.eng.reserve()
	if pt.cutOut {
		n.sendCut(pt, id, p)
		return
	}
	if pt.flight.n == 0 {
		n.eng.scheduleReserved(p.at, p.arrOrd, pt.peer.core.h, evArrive, int64(pt.peer.idx))
	}
	pt.flight.push(&n.arena, id, p)
}
