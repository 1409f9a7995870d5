package switchmodel

import "github.com/tracefabric/tracefabric/internal/units"

// NumTC is the number of traffic classes.
const NumTC = 8

// DropReason says why a packet was dropped.
type DropReason uint8

// Drop reasons (docs/model.md#shared-buffer). DropNoRoute is the model's own: a packet whose destination
// has no route at a switch, or that reached a host it is not for (a topology bug, never
// expected in a Clos built by replay).
const (
	DropHeadroom    DropReason = iota // lossless arrival found its headroom full
	DropEgressLimit                   // lossy queue over its egress limit
	DropPoolFull                      // lossy pool out of room
	DropNoRoute                       // no route to the destination
	DropLinkDown                      // on a link that went down, or queued or routed for it (docs/model.md#failures-and-operations)
	DropPFCWatchdog                   // discarded by the PFC watchdog's drop action (docs/model.md#pfc-watchdog)
	NumDropReasons
)

var dropNames = [NumDropReasons]string{"headroom", "egress-limit", "pool-full", "no-route", "link-down", "pfc-watchdog"}

// String returns the reason as the records spell it ("egress-limit").
func (r DropReason) String() string {
	if r < NumDropReasons {
		return dropNames[r]
	}
	return "unknown"
}

// PFCEventKind is the kind of a PFC event (docs/records.md, pfc.arrow).
type PFCEventKind uint8

// PFC event kinds.
const (
	PFCTxPause          PFCEventKind = iota // a pause frame (quanta > 0) starts transmitting
	PFCTxResume                             // a resume frame (quanta 0) starts transmitting
	PFCRxPause                              // a pause frame was received: the port stops the class
	PFCRxResume                             // a resume frame was received: the class restarts
	PFCExpire                               // a received pause ran out without a resume (or its link went down)
	PFCStormDetected                        // the PFC watchdog declared a storm on the port's class (docs/model.md#pfc-watchdog)
	PFCStormRestored                        // the watchdog restored the port's class
	PFCDeadlock                             // the port's paused class is on a cycle of paused ports (docs/model.md#pfc-deadlock)
	PFCDeadlockResolved                     // a port of that cycle resumed
	// NumPFCEventKinds is the number of PFC event kinds.
	NumPFCEventKinds
)

var pfcNames = [NumPFCEventKinds]string{"tx_pause", "tx_resume", "rx_pause", "rx_resume", "expire",
	"storm_detected", "storm_restored", "deadlock", "deadlock_resolved"}

// String returns the kind as the records spell it ("tx_pause").
func (k PFCEventKind) String() string {
	if k < NumPFCEventKinds {
		return pfcNames[k]
	}
	return "unknown"
}

// DropEvent describes one dropped packet. Port is the ingress port for a headroom drop
// and the egress port for egress-limit and pool-full drops (the port whose counters
// count it); for no-route it is the ingress port; for link-down the port of the dead
// link that held or was to send the packet (a forwarding line's: its ingress port); for
// pfc-watchdog the stormed egress port.
type DropEvent struct {
	Time   units.Time
	Node   int32
	Port   int32
	TC     uint8
	Reason DropReason
	Packet *Packet // valid during the call only
}

// PFCEvent describes one PFC event for one traffic class. Node/Port is where it happens;
// Peer/PeerPort the other end of the link. Tx events are emitted when the PFC frame
// starts transmitting (one per class in its class-enable vector), rx events when its
// last bit arrives, expire when a received pause times out.
type PFCEvent struct {
	Time     units.Time
	Node     int32
	Port     int32
	Peer     int32
	PeerPort int32
	TC       uint8
	Kind     PFCEventKind
	Quanta   uint16
}

// BufferSample is one periodic sample of a switch pool (docs/model.md#statistics), in bytes
// (cells * CellSize). Ingress = Shared + Headroom; Egress counts the pool's classes'
// egress queues.
type BufferSample struct {
	Time     units.Time
	Switch   int32
	Pool     int
	Shared   int64
	Headroom int64
	Ingress  int64
	Egress   int64
}

// NICEvent describes a packet leaving a host NIC queue: its queueing delay and the
// backlog left in its class queue (frame bytes).
type NICEvent struct {
	Time    units.Time
	Host    int32
	TC      uint8
	Delay   units.Time
	Backlog int64
	Packet  *Packet // valid during the call only
}

// DropObserver receives drops.
type DropObserver interface{ Drop(DropEvent) }

// PFCObserver receives PFC events.
type PFCObserver interface{ PFC(PFCEvent) }

// BufferObserver receives buffer samples.
type BufferObserver interface{ BufferSample(BufferSample) }

// DeliveryObserver receives data packets as they reach their destination host (last
// bit arrived). The packet (path, CE, members) is valid during the call only. Control
// packets go to the Agent alone.
type DeliveryObserver interface {
	Delivered(now units.Time, p *Packet)
}

// NICObserver receives host NIC dequeues (backlog and queueing delay).
type NICObserver interface{ NICDequeue(NICEvent) }

// Agent is the transports' side of the hosts (docs/model.md#closed-loop-transports):
// a host calls it for every packet that is not open-loop data. Received is called
// when such a packet's last bit reaches its destination host, before the packet is
// freed; Departed when a closed-loop data packet starts transmitting at its source
// NIC. Unlike observers, an Agent may inject packets (Network.NewPacket, Inject) and
// schedule events from these calls. Idle reports whether every sender is done:
// Network.Drain runs until the network holds no packet and the agent is idle.
type Agent interface {
	Received(now units.Time, h *Host, p *Packet)
	Departed(now units.Time, h *Host, p *Packet)
	Idle() bool
}

// PartitionedAgent is an Agent that can run on the partitioned engine
// (docs/parallel.md section 2, item 12): its state is split by partition, each
// part touched only by the events of its partition's nodes, and what it observes
// during a window it logs (Network.NoteAgent) to have it back on the coordinator,
// in the sequential run's order.
type PartitionedAgent interface {
	Agent
	// Partition is called, on the coordinator, before the first window with every
	// node's partition (the hosts' Network is then their partition's) and after the
	// last with nil. Between the two, Idle is the conjunction of PartIdle's.
	Partition(of []int32, parts int)
	// PartIdle is partition part's share of Idle, called from that partition's
	// events and at barriers.
	PartIdle(part int32) bool
	// AgentNoted hands back, on the coordinator in key order, what the agent logged.
	AgentNoted(AgentNote)
}

// AgentNote is an observation a PartitionedAgent logs with Network.NoteAgent during
// a partitioned run; its fields are the agent's.
type AgentNote struct {
	Time  units.Time
	Value int64
	A, B  int32
	Kind  uint8
}

// partAgent is a partition's view of a PartitionedAgent: Idle is its part's.
type partAgent struct {
	PartitionedAgent
	part int32
}

func (a partAgent) Idle() bool { return a.PartitionedAgent.PartIdle(a.part) }

// Observers are the optional event streams of a Network; a nil field is off and costs
// nothing. Calls are synchronous from the event loop and must not call back into the
// Network except through read-only accessors.
type Observers struct {
	Drops      DropObserver
	PFC        PFCObserver
	Buffer     BufferObserver
	Deliveries DeliveryObserver
	NIC        NICObserver
	// Notes gets the caller's own observations (Network.Note), in event order.
	Notes NoteObserver
}

// NoteObserver gets the notes an event handler makes with Network.Note: at once in a
// sequential run, in key order at the next barrier in a partitioned one
// (docs/parallel.md section 3), so that state outside the partitions is updated in
// the sequential run's order.
type NoteObserver interface {
	Note(now units.Time, arg int64)
}

// TCStats are the counters of one (port, traffic class) (docs/model.md#statistics). Bytes are frame
// bytes (F). Rx counts data frames received on the port, Tx data frames started on it.
// Drops are counted at the port named by DropEvent.Port. WatermarkBytes is the egress
// queue's maximum occupancy (cells * CellSize) at a switch, the NIC queue's maximum
// backlog (frame bytes, including the packet about to start) at a host. PFC counters count frames per class
// of their class-enable vector. PausedPs is how long the peer kept this class paused on
// this port (sender side).
type TCStats struct {
	RxPackets, RxBytes int64
	TxPackets, TxBytes int64
	Drops              [NumDropReasons]int64
	ECNMarked          int64
	WatermarkBytes     int64
	PFCPauseTx         int64
	PFCResumeTx        int64
	PFCPauseRx         int64
	PFCResumeRx        int64
	PausedPs           units.Time
}
