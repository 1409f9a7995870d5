package switchmodel

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"
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

// PFCQuanta is the quanta a pause frame asks (SPEC 3.4).
const PFCQuanta = 65535

// pfcFrameBytes is a PFC frame's size: 64 bytes (84 on the wire).
const pfcFrameBytes = 64

// LinkSpec describes a full-duplex link: both directions have this speed and delay.
type LinkSpec struct {
	Speed            units.BitRate
	PropagationDelay units.Time
}

// Options configure a Network.
type Options struct {
	// Seed is the run's seed (SPEC 2); each switch's ECN generator derives from it.
	Seed int64
	// FabricBDP is the fabric's bandwidth-delay product (SPEC 4.3), used by
	// EgressQueueLimitBdp. 0 with a BDP-based limit is an error at Start.
	FabricBDP units.Bytes
	// Observers are the optional event streams.
	Observers Observers
}

// Node is a switch or a host.
type Node interface {
	ID() int32
	Name() string
	NumPorts() int
	// PortInfo describes port i and its link.
	PortInfo(i int) PortInfo
	// PortStats returns port i's counters per traffic class, paused time through Now.
	PortStats(i int) [NumTC]TCStats
	// Buffered is the number of data packets the node holds (queued or waiting for
	// admission), not counting frames on its outgoing links.
	Buffered() int
	// InFlight is the number of data packets on the node's outgoing links.
	InFlight() int
}

// PortInfo describes one port and its link.
type PortInfo struct {
	Speed            units.BitRate
	PropagationDelay units.Time
	Peer             int32 // peer node id
	PeerPort         int32
}

// nodeImpl is implemented by *Switch and *Host.
type nodeImpl interface {
	Node
	EventHandler
	core() *nodeCore
	// receive is called when a data frame's last bit arrived on port pi.
	receive(now units.Time, pi int32, id PacketID, p *Packet)
	// depart is called when a data frame starts transmitting on pt.
	depart(now units.Time, pt *port, id PacketID, p *Packet)
}

type nodeCore struct {
	net   *Network
	self  nodeImpl
	id    int32
	name  string
	h     HandlerID
	ports []*port
}

func (c *nodeCore) core() *nodeCore { return c }

// ID is the node's id in its Network (dense, in creation order, switches and hosts
// alike).
func (c *nodeCore) ID() int32 { return c.id }

// Name is the node's name.
func (c *nodeCore) Name() string { return c.name }

// NumPorts is the number of connected ports.
func (c *nodeCore) NumPorts() int { return len(c.ports) }

// PortInfo describes port i.
func (c *nodeCore) PortInfo(i int) PortInfo {
	pt := c.ports[i]
	return PortInfo{Speed: pt.speed, PropagationDelay: pt.prop, Peer: pt.peer.core.id, PeerPort: pt.peer.idx}
}

// PortStats returns port i's counters with paused time accumulated through Now.
func (c *nodeCore) PortStats(i int) [NumTC]TCStats {
	pt := c.ports[i]
	s := pt.stats
	now := c.net.eng.Now()
	for tc := 0; tc < NumTC; tc++ {
		q, r := &pt.tc[tc], &pt.rx[tc]
		s[tc].TxPackets, s[tc].TxBytes, s[tc].WatermarkBytes = q.txPackets, q.txBytes, q.watermark
		s[tc].RxPackets, s[tc].RxBytes = r.packets, r.bytes
		if pt.paused&(1<<tc) != 0 {
			s[tc].PausedPs += now - pt.pausedSince[tc]
		}
	}
	return s
}

// InFlight counts data packets on the node's outgoing links.
func (c *nodeCore) InFlight() int {
	n := 0
	for _, pt := range c.ports {
		n += int(pt.flight.n) - pt.flightPFC
	}
	return n
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
	busyTC      uint8 // bit tc set while tc[tc].q is not empty
	paused      uint8 // classes the peer paused (PFC receiver)
	busy        bool  // a frame is on the wire (until its transmit-done event)
	lazyDone    bool
	pfcq        fifo
	flight      fifo // frames on the outgoing link, Packet.at = arrival of last bit
	flightPFC   int  // PFC frames among flight
	speed       units.BitRate

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
	_     [6]uint64 // to a whole number of cache lines
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

// Network holds the nodes, links and packets of one simulation, driven by an Engine.
type Network struct {
	portSlab []port // the rest of the current chunk of ports
	eng      *Engine
	opts     Options
	obs      Observers
	arena    arena
	nodes    []nodeImpl
	switches []*Switch
	hosts    []*Host
	started  bool
	samplers []*sampler
	injectH  HandlerID
	draining bool

	injected, delivered, hops, pfcFrames, ceMarked int64
	dropped                                        [NumDropReasons]int64
}

// NewNetwork returns an empty network driven by eng.
func NewNetwork(eng *Engine, opts Options) *Network {
	n := &Network{eng: eng, opts: opts, obs: opts.Observers, arena: newArena()}
	n.injectH = eng.Register(injectHandler{n})
	return n
}

// injectHandler delivers InjectAt events: arg = packet id | host index << 32.
type injectHandler struct{ n *Network }

func (ih injectHandler) Handle(now units.Time, kind int32, arg int64) {
	ih.n.Inject(ih.n.hosts[arg>>32], PacketID(int32(arg)))
}

// InjectAt schedules packet id to enter host h's NIC at time t (>= Engine.Now), as
// Inject would then. Use it to feed a time-ordered stream: schedule a batch, run the
// engine up to the batch's last time, repeat. Packets injected at the same time enter
// in call order.
func (n *Network) InjectAt(t units.Time, h *Host, id PacketID) {
	n.eng.Schedule(t, n.injectH, 0, int64(id)|int64(h.index)<<32)
}

// Engine returns the network's engine.
func (n *Network) Engine() *Engine { return n.eng }

// Nodes returns every node in id order.
func (n *Network) Nodes() []Node {
	out := make([]Node, len(n.nodes))
	for i, nd := range n.nodes {
		out[i] = nd
	}
	return out
}

// Node returns the node with the given id.
func (n *Network) Node(id int32) Node { return n.nodes[id] }

// Switches returns the switches in creation order.
func (n *Network) Switches() []*Switch { return n.switches }

// Hosts returns the hosts in index order.
func (n *Network) Hosts() []*Host { return n.hosts }

// checkNodes returns an error when the network cannot take another node.
func (n *Network) checkNodes(name string) error {
	if len(n.nodes) == MaxNodes {
		return fmt.Errorf("switchmodel: node %s: the network already has MaxNodes (%d) nodes", name, MaxNodes)
	}
	return nil
}

func (n *Network) addNode(nd nodeImpl, name string) {
	c := nd.core()
	c.net = n
	c.self = nd
	c.id = int32(len(n.nodes))
	c.name = name
	c.h = n.eng.Register(nd)
	n.nodes = append(n.nodes, nd)
}

// ErrStarted is returned by builder calls after Start.
var ErrStarted = errors.New("switchmodel: network already started")

// Connect joins a new port of a and a new port of b with a full-duplex link and returns
// the two port indices. A host has at most one port.
func (n *Network) Connect(a, b Node, l LinkSpec) (pa, pb int, err error) {
	if n.started {
		return 0, 0, ErrStarted
	}
	if l.Speed <= 0 {
		return 0, 0, fmt.Errorf("switchmodel: link %s-%s: Speed %d must be > 0", a.Name(), b.Name(), l.Speed)
	}
	if l.PropagationDelay < 0 {
		return 0, 0, fmt.Errorf("switchmodel: link %s-%s: PropagationDelay %v must be >= 0", a.Name(), b.Name(), l.PropagationDelay)
	}
	na, ok1 := a.(nodeImpl)
	nb, ok2 := b.(nodeImpl)
	if !ok1 || !ok2 || na.core().net != n || nb.core().net != n {
		return 0, 0, fmt.Errorf("switchmodel: Connect %s-%s: nodes must belong to this network", a.Name(), b.Name())
	}
	if na == nb {
		return 0, 0, fmt.Errorf("switchmodel: Connect %s to itself", a.Name())
	}
	for _, nd := range []nodeImpl{na, nb} {
		if h, ok := nd.(*Host); ok && len(h.ports) > 0 {
			return 0, 0, fmt.Errorf("switchmodel: host %s already has its link", h.name)
		}
	}
	for _, nd := range []nodeImpl{na, nb} {
		if len(nd.core().ports) == MaxPorts {
			return 0, 0, fmt.Errorf("switchmodel: node %s already has MaxPorts (%d) ports", nd.core().name, MaxPorts)
		}
	}
	x, y := n.newPort(na.core(), l), n.newPort(nb.core(), l)
	x.peer, y.peer = y, x
	return int(x.idx), int(y.idx), nil
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
		pt.pauseEvAt[i] = -1
	}
	pt.pfcq, pt.flight, pt.fwd = newFifo(), newFifo(), newFifo()
	if (8*int64(units.Second))%int64(l.Speed) == 0 {
		pt.psPerByte = units.Time(8 * int64(units.Second) / int64(l.Speed))
	}
	pt.pauseDur = units.SerializationTime(PFCQuanta*64, l.Speed)
	pt.halfPause = pt.pauseDur / 2
	c.ports = append(c.ports, pt)
	return pt
}

// Start finishes building: it lays out every switch's buffer (headroom per port, pools),
// checks what the switches need and starts the buffer samplers. It returns warnings
// (undersized headroom, oversubscription) and an error naming the switch and attribute
// when the network cannot run.
func (n *Network) Start() (warnings []string, err error) {
	if n.started {
		return nil, ErrStarted
	}
	for _, h := range n.hosts {
		if len(h.ports) == 0 {
			return nil, fmt.Errorf("switchmodel: host %s has no link", h.name)
		}
	}
	byInterval := map[units.Time]*sampler{}
	for _, s := range n.switches {
		w, err := s.layout()
		if err != nil {
			return nil, err
		}
		warnings = append(warnings, w...)
		if iv := s.cfg.BufferStatsReportInterval; iv > 0 && n.obs.Buffer != nil {
			sm := byInterval[iv]
			if sm == nil {
				sm = &sampler{net: n, interval: iv, idle: true}
				sm.h = n.eng.Register(sm)
				byInterval[iv] = sm
				n.samplers = append(n.samplers, sm)
			}
			sm.switches = append(sm.switches, s)
		}
	}
	sort.Slice(n.samplers, func(i, j int) bool { return n.samplers[i].interval < n.samplers[j].interval })
	n.started = true
	return warnings, nil
}

// NewPacket takes a zeroed packet from the arena (RackMember and FabricMember -1).
// Fill the injector's fields and pass the id to Inject.
func (n *Network) NewPacket() (PacketID, *Packet) { return n.arena.alloc() }

// Packet returns the packet with the given id (valid until it is delivered or dropped).
func (n *Network) Packet(id PacketID) *Packet { return n.arena.get(id) }

// Inject puts packet id into host h's NIC at the current time (Engine.Now): the model
// sets TC = DSCP>>3, Frame = max(64, Length+18), Inject = Now, and queues it on the
// NIC's class queue. Call it from an event handler (or between RunUntil calls).
// Packets longer than the MTU must be split by the caller.
func (n *Network) Inject(h *Host, id PacketID) {
	now := n.eng.Now()
	p := n.arena.get(id)
	p.kind = kindData
	p.TC = p.DSCP >> 3 & 7
	p.Frame = FrameSize(p.Length)
	p.Inject = now
	p.at = now
	p.Hops = 0
	n.injected++
	for _, sm := range n.samplers {
		if sm.idle {
			sm.wake(now)
		}
	}
	pt := h.ports[0]
	q := &pt.tc[p.TC].q
	q.push(&n.arena, id, p)
	pt.busyTC |= 1 << p.TC
	if t := &pt.tc[p.TC]; q.bytes > t.watermark {
		t.watermark = q.bytes
	}
	n.kick(now, pt)
}

// Counters are the network-wide totals.
type Counters struct {
	Injected   int64 // data packets injected
	Delivered  int64 // delivered to their destination host
	Dropped    [NumDropReasons]int64
	PacketHops int64 // data packets put onto a link by a NIC or a switch port
	PFCFrames  int64 // PFC frames transmitted
	CEMarked   int64 // packets marked CE by a switch
	Events     uint64
}

// Outstanding is injected minus delivered minus dropped: the packets still buffered or
// on a link.
func (c Counters) Outstanding() int64 {
	o := c.Injected - c.Delivered
	for _, d := range c.Dropped {
		o -= d
	}
	return o
}

// DroppedTotal sums the drops of every reason.
func (c Counters) DroppedTotal() int64 {
	var t int64
	for _, d := range c.Dropped {
		t += d
	}
	return t
}

// Counters returns the network-wide totals.
func (n *Network) Counters() Counters {
	return Counters{Injected: n.injected, Delivered: n.delivered, Dropped: n.dropped,
		PacketHops: n.hops, PFCFrames: n.pfcFrames, CEMarked: n.ceMarked, Events: n.eng.Processed()}
}

// CheckAccounting verifies every switch's buffer counters against the packets it
// holds; with an empty network all are zero. It returns the first inconsistency.
func (n *Network) CheckAccounting() error {
	for _, s := range n.switches {
		if err := s.CheckAccounting(); err != nil {
			return err
		}
	}
	for _, h := range n.hosts {
		for _, pt := range h.ports {
			for tc := range pt.tc {
				if (pt.tc[tc].q.n > 0) != (pt.busyTC&(1<<tc) != 0) {
					return fmt.Errorf("host %s TC %d: scheduler mask out of step with the queue", h.name, tc)
				}
			}
		}
	}
	return nil
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

// startTx starts the next frame on an idle port: the PFC queue first, then TC7..TC0
// skipping classes the peer paused. One tx-done event per busy port, scheduled only
// if another frame is ready to follow (else its place is reserved: see kick); the
// frame joins the link's in-flight FIFO, whose head alone has an arrival event.
func (n *Network) startTx(now units.Time, pt *port) {
	var id PacketID = NoPacket
	var p *Packet
	if pt.pfcq.n > 0 {
		id, p = pt.pfcq.pop(&n.arena)
	} else {
		// Highest non-empty class the peer has not paused.
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
	if p.kind == kindData {
		c.self.depart(now, pt, id, p)
		if p.Hops < MaxPath {
			p.path[p.Hops] = uint32(c.id)<<hopPortBits | uint32(pt.idx)
		}
		if p.Hops < 255 {
			p.Hops++
		}
		n.hops++
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
	p.at = now + ser + pt.prop
	if pt.flight.n == 0 {
		n.eng.Schedule(p.at, pt.peer.core.h, evArrive, int64(pt.peer.idx))
	}
	pt.flight.push(&n.arena, id, p)
}

// handleCommon dispatches the events every node kind shares.
func (c *nodeCore) handleCommon(now units.Time, kind int32, arg int64) {
	n := c.net
	switch kind {
	case evTxDone:
		n.startTx(now, c.ports[arg])
	case evArrive:
		pt := c.ports[arg]
		in := pt.peer
		id, p := in.flight.pop(&n.arena)
		if in.flight.n > 0 {
			n.eng.Schedule(n.arena.get(in.flight.head).at, c.h, evArrive, arg)
		}
		if p.kind == kindPFC {
			in.flightPFC--
			n.rxPFC(now, pt, p)
			n.free(id)
			return
		}
		r := &pt.rx[p.TC]
		r.packets++
		r.bytes += int64(p.Frame)
		c.self.receive(now, pt.idx, id, p)
	case evExpire:
		n.expire(now, c.ports[int32(arg)], int(arg>>32))
	}
}

func (n *Network) drop(now units.Time, c *nodeCore, pt *port, id PacketID, p *Packet, r DropReason) {
	pt.stats[p.TC].Drops[r]++
	n.dropped[r]++
	if n.obs.Drops != nil {
		n.obs.Drops.Drop(DropEvent{Time: now, Node: c.id, Port: pt.idx, TC: p.TC, Reason: r, Packet: p})
	}
	n.free(id)
}

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

// ForEachOutstanding calls f for every data packet still in the network (queued in a
// NIC or a switch, waiting ForwardingLatency, or on a link), with the node holding it
// (for a link, the sending node). Use it at the end of a run to attribute undrained
// packets to flows. f must not modify the network.
func (n *Network) ForEachOutstanding(f func(node Node, p *Packet)) {
	a := &n.arena
	walk := func(nd Node, q *fifo) {
		for id := q.head; id != NoPacket; {
			p := a.get(id)
			id = p.next
			if p.kind == kindData {
				f(nd, p)
			}
		}
	}
	for _, nd := range n.nodes {
		for _, pt := range nd.core().ports {
			for tc := range pt.tc {
				walk(nd, &pt.tc[tc].q)
			}
			walk(nd, &pt.fwd)
			walk(nd, &pt.flight)
		}
	}
}

// free returns a packet to the arena; during Drain the engine stops as soon as the
// network holds no packet.
func (n *Network) free(id PacketID) {
	n.arena.release(id)
	if n.draining && n.arena.live == 0 {
		n.eng.Stop()
	}
}

// Idle reports whether the network holds no packet: none queued, waiting or on a link
// (PFC frames included), and none taken with NewPacket and not yet delivered or
// dropped.
func (n *Network) Idle() bool { return n.arena.live == 0 }

// Drain runs the engine after the last injection until the network is idle or the
// next event is later than limit, and reports whether it drained. Engine.Now is then
// the time of the last delivery or drop (pending timers, such as a pause expiry that
// no longer matters, are left unhandled). Packets left are reported by Node.Buffered,
// Node.InFlight and ForEachOutstanding.
func (n *Network) Drain(limit units.Time) bool {
	if n.Idle() {
		return true
	}
	n.draining = true
	n.eng.RunUntil(limit)
	n.draining = false
	return n.Idle()
}
