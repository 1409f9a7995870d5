package switchmodel

import (
	"errors"
	"fmt"
	"sort"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// Options configure a Network.
type Options struct {
	// Seed is the run's seed (docs/model.md#units-and-conventions); each switch's ECN generator derives from it.
	Seed int64
	// FabricBDP is the fabric's bandwidth-delay product (docs/model.md#fabric-bdp), used by
	// EgressQueueLimitBdp. 0 with a BDP-based limit is an error at Start.
	FabricBDP units.Bytes
	// Observers are the optional event streams.
	Observers Observers
	// Agent, when not nil, handles the transports' packets at the hosts (also
	// Network.SetAgent).
	Agent Agent
	// HostClasses, when not nil, is the host NICs' classification: the traffic class
	// of each DSCP when a packet is injected and when it is delivered
	// (docs/model.md#classification; replay passes the base Switch: map). Nil:
	// config.DefaultClassMap, TC = DSCP / 8. Switches classify with their own
	// configuration's map (AddSwitch).
	HostClasses *config.ClassMap
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
	// injections counts InjectAt calls: each one's index in the injection class.
	injections uint64

	agent       Agent
	keys        []FlowKey       // the key table (AddKey); keys[0] is the zero key
	hostClasses config.ClassMap // every host's classification (Options.HostClasses)

	injected, delivered, hops, dataHops, pfcFrames, ceMarked int64
	dropped                                                  [NumDropReasons]int64
	ctl                                                      [NumClasses]ControlCounts
	// failed: a link has gone down (or a switch was flushed) in this run, so that
	// arrival and forwarding events may find their frames dropped; until then the
	// hot path skips that check.
	failed bool

	// par: this is one partition's copy of the network (RunPartitioned), nil otherwise;
	// parts: the partitions' copies, on the network itself while they run.
	par   *parState
	parts []*Network
	// lastInj: the key of the latest injection scheduled with ScheduleInjectionIn
	// (a fed partitioned run's K_last).
	lastInjAt  units.Time
	lastInjOrd uint64
	feed       InjectionFeed // DrainPartitionedFed's, during the run
	maxDrain   units.Time

	// Deadlock detection (deadlock.go).
	deadlocks       []Deadlock
	activeDeadlocks int
	dlEpoch         uint32
	dlStack         []dlFrame
	dlPath          []dlStep
}

// ControlCounts count the control packets of one class.
type ControlCounts struct {
	Injected, Delivered int64
	Dropped             [NumDropReasons]int64
}

// NewNetwork returns an empty network driven by eng.
func NewNetwork(eng *Engine, opts Options) *Network {
	n := &Network{eng: eng, opts: opts, obs: opts.Observers, agent: opts.Agent, arena: newArena(), keys: make([]FlowKey, 1, 1024),
		hostClasses: config.DefaultClassMap()}
	if opts.HostClasses != nil {
		n.hostClasses = *opts.HostClasses
	}
	n.injectH = eng.RegisterShared(injectHandler{n})
	return n
}

// injectHandler delivers InjectAt events: arg = packet id | host index << 32.
type injectHandler struct{ n *Network }

func (ih injectHandler) Handle(now units.Time, kind int32, arg int64) {
	h := ih.n.hosts[arg>>32]
	n := h.net // the host's partition's, in a partitioned run (RunPartitioned)
	n.eng.ActAs(h.id)
	n.Inject(h, PacketID(int32(arg)))
}

// InjectAt schedules packet id to enter host h's NIC at time t (>= Engine.Now), as
// Inject would then, an event of the injection class
// (docs/model.md#event-order-and-determinism): at its picosecond after the global
// events, before every node's. Use it to feed a time-ordered stream: schedule a batch,
// run the engine up to the batch's last time, repeat. Packets injected at the same
// time enter in call order.
func (n *Network) InjectAt(t units.Time, h *Host, id PacketID) {
	n.eng.ScheduleInjection(t, n.injections, n.injectH, 0, int64(id)|int64(h.index)<<32)
	n.injections++
}

// Note hands arg to the Notes observer as an observation of the current event: at
// once, or, in a partition of a partitioned run, at the next barrier in key order.
func (n *Network) Note(arg int64) {
	if n.obs.Notes != nil {
		n.obs.Notes.Note(n.eng.now, arg) // a partition's: its log
	}
}

// SetNoteObserver sets the Notes observer (Observers.Notes), before a run.
func (n *Network) SetNoteObserver(o NoteObserver) { n.obs.Notes = o }

// Network returns the network h's events run in: its partition's copy during a
// partitioned run (make and inject its packets there), the network otherwise.
func (h *Host) Network() *Network { return h.net }

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
	c.h = n.eng.RegisterNode(nd, c.id)
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
// sets TC from the DSCP by the hosts' classification (Options.HostClasses), Frame =
// max(64, Length+18), Inject = Now, and queues it on the
// NIC's class queue. Call it from an event handler (or between RunUntil calls).
// Packets longer than the MTU must be split by the caller.
func (n *Network) Inject(h *Host, id PacketID) { n.injectNIC(h, id, false) }

// InjectControl is Inject for a control packet the NIC sends ahead of the host's data
// (docs/model.md#nic-control-packets): it queues behind the host's other such
// packets, and the NIC starts it before any data of any class, unless its own class
// is paused.
func (n *Network) InjectControl(h *Host, id PacketID) { n.injectNIC(h, id, true) }

// injectNIC stamps packet id entering h's NIC now, counts it and queues it: in its
// class's control queue (first) or data queue. busyTC has the class's bit either way.
func (n *Network) injectNIC(h *Host, id PacketID, first bool) {
	now := n.eng.Now()
	p := n.arena.get(id)
	p.TC = h.classes[p.DSCP&(config.NumDSCP-1)]
	p.Frame = FrameSize(p.Length)
	p.Inject = now
	p.at = now
	p.Hops = 0
	if p.Class.Control() {
		n.ctl[p.Class].Injected++
	} else {
		n.injected++
	}
	for i, sm := range n.samplers {
		if sm.idle {
			if n.par != nil {
				n.par.wake(n.eng, i) // applied at the barrier, in key order
				continue
			}
			sm.wake(now)
		}
	}
	pt := h.ports[0]
	if h.linkDown {
		n.drop(now, &h.nodeCore, pt, id, p, DropLinkDown)
		return
	}
	t := &pt.tc[p.TC]
	c := &pt.ctl[p.TC]
	if first {
		c.push(&n.arena, id, p)
		pt.busyCtl |= 1 << p.TC
	} else {
		t.q.push(&n.arena, id, p)
	}
	pt.busyTC |= 1 << p.TC
	if b := t.q.bytes + c.bytes; b > t.watermark {
		t.watermark = b
	}
	// The NIC acts as its host (docs/model.md#event-order-and-determinism), whoever
	// injects: what it schedules is the host's.
	act := n.eng.Actor()
	n.eng.ActAs(h.id)
	n.kick(now, pt)
	n.eng.RestoreActor(act)
}

// Counters are the network-wide totals. Injected, Delivered and Dropped count data
// packets; Control counts the transports' control packets by class (Ack, Cnp, Nak).
type Counters struct {
	Injected       int64 // data packets injected
	Delivered      int64 // delivered to their destination host
	Dropped        [NumDropReasons]int64
	PacketHops     int64 // packets (data and control, not PFC) put onto a link by a NIC or a switch port
	DataPacketHops int64 // data packets put onto a link
	PFCFrames      int64 // PFC frames transmitted
	CEMarked       int64 // packets marked CE by a switch
	Events         uint64
	Control        [NumClasses]ControlCounts
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
		PacketHops: n.hops, DataPacketHops: n.dataHops, PFCFrames: n.pfcFrames, CEMarked: n.ceMarked,
		Events: n.eng.Processed(), Control: n.ctl}
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
				if (pt.tc[tc].q.n > 0 || pt.ctl[tc].n > 0) != (pt.busyTC&(1<<tc) != 0) || (pt.ctl[tc].n > 0) != (pt.busyCtl&(1<<tc) != 0) {
					return fmt.Errorf("host %s TC %d: scheduler mask out of step with the queue", h.name, tc)
				}
			}
		}
	}
	return nil
}

// ForEachOutstanding calls f for every data or control packet still in the network
// (queued in a NIC or a switch, waiting ForwardingLatency, or on a link), with the
// node holding it (for a link, the sending node); Packet.Class tells them apart. Use it at the end of a run to attribute undrained
// packets to flows. f must not modify the network.
func (n *Network) ForEachOutstanding(f func(node Node, p *Packet)) {
	a := &n.arena
	walk := func(nd Node, q *fifo) {
		for id := q.head; id != NoPacket; {
			p := a.get(id)
			id = p.next
			if p.Class != classPFC {
				f(nd, p)
			}
		}
	}
	for _, nd := range n.nodes {
		for _, pt := range nd.core().ports {
			for tc := range pt.tc {
				walk(nd, &pt.ctl[tc])
				walk(nd, &pt.tc[tc].q)
			}
			walk(nd, &pt.fwd)
			walk(nd, &pt.flight)
		}
	}
}

// free returns a packet to the arena; during Drain the engine stops as soon as the
// network holds no packet and the agent is idle.
func (n *Network) free(id PacketID) {
	n.arena.release(id)
	if n.draining && n.Idle() {
		n.eng.Stop()
	}
}

// Idle reports whether the network holds no packet (none queued, waiting or on a link,
// PFC frames included, and none taken with NewPacket and not yet delivered or
// dropped) and its Agent, if any, is idle.
func (n *Network) Idle() bool { return n.arena.live == 0 && (n.agent == nil || n.agent.Idle()) }

// Empty reports whether the network holds no packet (whatever its Agent waits for).
func (n *Network) Empty() bool { return n.arena.live == 0 }

// SetAgent sets the network's Agent (Options.Agent), before Start.
func (n *Network) SetAgent(a Agent) error {
	if n.started {
		return ErrStarted
	}
	n.agent = a
	return nil
}

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
