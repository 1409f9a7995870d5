package records

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

// The row structs: one per record file. Node, peer and host fields are indices into
// the node dictionary (Dictionaries.Nodes for writers, Reader.Nodes for readers);
// addresses are IPv4 or IPv6 (ipaddr.Addr, written as text: dotted quads and RFC 5952);
// times are picoseconds of simulated time.

// PortRow is one row of ports.arrow: the counters of one (node, port, tc) at the end
// of the run. Every port of every node (host NICs included, tier host) has a row for
// each of the 8 classes, zero counters included. Byte counts are frame bytes
// (F = max(64, L+18) for an IPv4 total length L).
type PortRow struct {
	Node int32 // the node owning the port
	Tier Tier  // the node's tier
	Port int32 // the port's index on its node
	Peer int32 // the node at the other end of the port's link
	TC   uint8 // traffic class 0..7

	RxPackets, RxBytes int64 // data packets and their frame bytes received on the port in this class
	TxPackets, TxBytes int64 // data packets and their frame bytes sent on the port in this class

	// Drops counts packets of this class dropped at this port, per reason: ingress
	// (headroom) drops at the arrival port, egress-limit and pool-full drops at the
	// egress queue's port, oversize drops at the source host's NIC port.
	Drops [NumDropReasons]int64

	ECNMarked           int64 // packets marked CE (from ECT) at this egress queue
	QueueWatermarkBytes int64 // largest occupancy of this egress queue, bytes (buffer cells times cell size; the backlog for host NICs)
	PFCPauseTx          int64 // PFC frames with quanta > 0 for this class sent on the port
	PFCResumeTx         int64 // PFC frames with quanta 0 for this class sent on the port
	PFCPauseRx          int64 // PFC frames with quanta > 0 for this class received on the port
	PFCResumeRx         int64 // PFC frames with quanta 0 for this class received on the port
	PausedPs            int64 // total time this class was paused (not allowed to send) on the port, ps
}

// DropsTotal is the sum of Drops, the drops_total column.
func (r *PortRow) DropsTotal() int64 {
	var t int64
	for _, d := range r.Drops {
		t += d
	}
	return t
}

// DropRow is one row of drops.arrow: one dropped packet.
type DropRow struct {
	TimePs     int64       // when the packet was dropped
	Node       int32       // the dropping node
	Tier       Tier        // its tier
	Port       int32       // the port the drop is charged to (see PortRow.Drops)
	TC         uint8       // the packet's traffic class
	Reason     DropReason  // why
	FlowID     int64       // the packet's flow (flows.arrow flow_id)
	Src, Dst   ipaddr.Addr // IPv4 or IPv6
	Proto      uint8       // IPv6: the upper-layer protocol
	Sport      uint16      // L4 ports; 0 for protocols other than TCP/UDP and non-first fragments
	Dport      uint16
	Bytes      int32 // the packet's size L (IPv4 total length, 40 + IPv6 payload length)
	TraceIndex int64 // the packet's index in the merged capture (0-based); split pieces share it; -1 for control packets
	// Kind is data or a transport's control packet (ack, cnp, nak); a control
	// packet's FlowID is the data flow it belongs to, its addresses and ports its own
	// (the data's reversed).
	Kind PacketKind
}

// PFCRow is one row of pfc.arrow: one PFC event for one traffic class. A frame that
// pauses several classes gives one row per class.
type PFCRow struct {
	TimePs int64
	Node   int32        // the node where the event happened: the sender for tx_*, the receiver for rx_* and expire
	Port   int32        // the node's port the frame left or arrived on
	Peer   int32        // the node at the other end of that link
	TC     uint8        // the class paused or resumed
	Event  PFCEventKind //
	Quanta uint16       // the quanta the frame carried (0 for resume and expire); 1 quantum = 512 bit times
}

// BufferRow is one row of buffer.arrow: a periodic sample of one (switch, pool).
type BufferRow struct {
	TimePs        int64
	Node          int32
	Pool          uint8 // pool index 0..7
	SharedBytes   int64 // bytes charged to the pool's shared space (all ports)
	HeadroomBytes int64 // bytes charged to headroom of this pool (all ports; 0 for lossy pools)
	IngressBytes  int64 // ingress accounting total of the pool: shared + headroom
	EgressBytes   int64 // egress accounting total of the queues of the pool's classes
}

// LoadBalanceRow is one row of loadbalance.arrow: what one member of one equal-cost
// set of one switch carried over the run.
type LoadBalanceRow struct {
	Node       int32
	Tier       Tier
	Set        int32 // the equal-cost set's index on its switch
	Member     int32 // the member's index in the set (set members are in port order)
	Port       int32 // the member's port
	Peer       int32 // the node that port leads to
	Flows      int64 // flows assigned to the member (counted once per flow and member)
	Flowlets   int64 // flowlets started on the member (0 without flowlet balancing: LoadBalancingMethod none)
	Packets    int64 // data packets sent through the member
	Bytes      int64 // their frame bytes
	MovedIn    int64 // moves onto this member: a flow's packet took it after the flow's previous packet at this set took another (a flow that comes back twice counts twice)
	MovedOut   int64 // moves off this member: a flow's packet took another member after the flow's previous packet at this set took this one
	HashMethod HashMethod
}

// FlowRow is one row of flows.arrow: one 5-tuple flow of the replayed trace.
type FlowRow struct {
	FlowID           int64
	Src, Dst         ipaddr.Addr // IPv4 or IPv6; the family column is theirs
	Proto            uint8       // IPv6: the upper-layer protocol
	Sport, Dport     uint16
	DSCP             uint8 // of the flow's first packet
	TC               uint8 // the class of DSCP at the source host (docs/model.md#classification)
	SrcHost, DstHost int32 // the hosts the endpoints are mapped to
	Packets          int64 // data packets injected (after splitting oversize packets; closed loop: retransmissions included)
	Bytes            int64 // their IPv4 bytes
	SizeBytes        int64 // the flow's size: IPv4 bytes of its captured data packets (what its application sent)
	Delivered        int64 // packets delivered
	Dropped          int64 // packets dropped
	Undrained        int64 // packets still buffered at the end; Packets = Delivered + Dropped + Undrained
	CEMarked         int64 // delivered packets that arrived marked CE by the fabric
	FirstPs, LastPs  int64 // injection time of the first and of the last packet
	// One-way delay of the delivered packets, injection to delivery, ps. Meaningful only
	// when Delivered > 0: the columns are null otherwise (writers ignore the fields
	// then, readers leave them 0).
	DelayMinPs, DelayMeanPs, DelayMaxPs int64
	// The member index chosen at the source rack's uplink set and at the source pod's
	// fabric uplink set for the flow's first packet; -1 when the flow did not cross
	// that tier (intra-rack, or intra-pod for FabricMember).
	RackMember, FabricMember int32
	PathChanges              int64 // times a later packet took another member than the previous one (flowlets)
	// Transport is the flow's sender; Retransmits, Timeouts and CongestionSignals
	// (ECE-marked ACKs or CNPs its sender received) are 0 for open loop.
	Transport                                Transport
	Retransmits, Timeouts, CongestionSignals int64
	// Completion says whether every byte arrived; FctPs is the flow completion time
	// (first segment available to last byte delivered), meaningful only when
	// Completion is complete (null otherwise); IdealFctPs the same flow alone in the
	// empty fabric (docs/model.md#flow-completion).
	Completion Completion
	FctPs      int64
	IdealFctPs int64
}

// MessageRow is one row of messages.arrow: one message of a flow, a run of its data
// between idle gaps or turn-arounds (docs/model.md#messages).
type MessageRow struct {
	FlowID  int64
	Message int32 // the message's index in its flow, 0-based in capture order
	// StartPs is when its first data packet became available (its injection time, or
	// the closed-loop sender's offer); CapturedPs is its captured time ((t - t0 -
	// idle) / speedup): StartPs is later only with Transport.Causality request.
	StartPs, CapturedPs int64
	Packets             int64 // its data packets (after splitting oversize packets)
	SizeBytes           int64 // their sizes L
	// FollowsFlowID and FollowsMessage name the reverse direction's message it
	// follows at a turn-around, -1 when it started after an idle gap (or is its flow's
	// first with nothing before it the other way).
	FollowsFlowID  int64
	FollowsMessage int32
	// Completion says whether every byte arrived; FctPs runs from StartPs to the
	// delivery of its last byte (complete only); IdealFctPs the same bytes alone in
	// the empty fabric from the same start.
	Completion Completion
	FctPs      int64
	IdealFctPs int64
}

// HasDelay reports whether the delay fields are meaningful (the flow delivered something).
func (r *FlowRow) HasDelay() bool { return r.Delivered > 0 }

// DelayRow is one row of delay.arrow: one bucket of the one-way delay histogram of a
// traffic class. Buckets are [LoPs, HiPs).
type DelayRow struct {
	TC      uint8
	LoPs    int64
	HiPs    int64
	Packets int64
}

// PacketRow is one row of packets.arrow (replay --record-packets): one simulated packet.
type PacketRow struct {
	TraceIndex int64 // index in the merged capture; the pieces of a split packet share it
	FlowID     int64
	TC         uint8
	Bytes      int32 // IPv4 total length as simulated
	InjectPs   int64 // when it entered its source host's NIC
	DeliverPs  int64 // when it reached its destination host; -1 when not delivered
	Fate       Fate
	CE         bool // delivered marked CE
	// Path is the nodes the packet visited, source host first; it ends at the
	// destination host (delivered), the dropping node (dropped) or the node holding it
	// (undrained). The file stores it as names joined by PathSeparator, and its last
	// node again as end_node. A reader reuses the slice's storage.
	Path []int32
}

// TransportRow is one row of transport.arrow (closed-loop runs): one congestion-control
// event of a flow.
type TransportRow struct {
	TimePs int64
	FlowID int64
	Node   int32 // the host where it happened: the receiver's for cnp, the sender's otherwise
	Event  TransportEventKind
	Value  int64 // rate_cut, rate_increase: the new rate, bit/s; window_cut, fast_retransmit, timeout: the new cwnd, bytes (0 for a RoCE timeout); cnp: 0
}

// StageRow is one row of stages.arrow (fabrics with ECMP stages beyond the rack and
// fabric uplinks, docs/records.md#stagesarrow): the member a flow chose at one ECMP
// stage of its path.
type StageRow struct {
	FlowID int64
	Stage  uint8 // the switch's position on the path: 1 is the source host's switch
	Node   int32 // the switch
	Set    int32 // its equal-cost set (loadbalance.arrow set)
	Member int32 // the member taken, its index in the set (loadbalance.arrow member)
}

// ---- the record files ----

// Record file names.
const (
	PortsFile       = "ports.arrow"
	DropsFile       = "drops.arrow"
	PFCFile         = "pfc.arrow"
	BufferFile      = "buffer.arrow"
	LoadBalanceFile = "loadbalance.arrow"
	FlowsFile       = "flows.arrow"
	DelayFile       = "delay.arrow"
	PacketsFile     = "packets.arrow"
	TransportFile   = "transport.arrow"
	StagesFile      = "stages.arrow"
	MessagesFile    = "messages.arrow"
)

// table is one record file: its name and columns in order.
type table[R any] struct {
	name string
	cols []column[R]
}

func (t *table[R]) schema() *arrow.Schema {
	fields := make([]arrow.Field, len(t.cols))
	for i, c := range t.cols {
		fields[i] = c.field()
	}
	md := arrow.NewMetadata(
		[]string{MetaSchemaVersion, MetaFile},
		[]string{strconv.Itoa(SchemaVersion), t.name})
	return arrow.NewSchema(fields, &md)
}

// Schema metadata keys of every record file.
const (
	MetaSchemaVersion = "tracefabric.schema_version"
	MetaFile          = "tracefabric.file"
)

var portsTable = func() *table[PortRow] {
	cols := []column[PortRow]{
		nodeColumn("node", func(r *PortRow) *int32 { return &r.Node }),
		enumColumn("tier", "tier", tierNames[:], func(r *PortRow) *Tier { return &r.Tier }),
		i32("port", func(r *PortRow) *int32 { return &r.Port }),
		nodeColumn("peer", func(r *PortRow) *int32 { return &r.Peer }),
		u8("tc", func(r *PortRow) *uint8 { return &r.TC }),
		i64("rx_packets", func(r *PortRow) *int64 { return &r.RxPackets }),
		i64("rx_bytes", func(r *PortRow) *int64 { return &r.RxBytes }),
		i64("tx_packets", func(r *PortRow) *int64 { return &r.TxPackets }),
		i64("tx_bytes", func(r *PortRow) *int64 { return &r.TxBytes }),
	}
	for k := range DropReason(NumDropReasons) {
		cols = append(cols, i64(k.Column(), func(r *PortRow) *int64 { return &r.Drops[k] }))
	}
	cols = append(cols,
		derivedI64("drops_total", (*PortRow).DropsTotal),
		i64("ecn_marked", func(r *PortRow) *int64 { return &r.ECNMarked }),
		i64("queue_watermark_bytes", func(r *PortRow) *int64 { return &r.QueueWatermarkBytes }),
		i64("pfc_pause_tx", func(r *PortRow) *int64 { return &r.PFCPauseTx }),
		i64("pfc_resume_tx", func(r *PortRow) *int64 { return &r.PFCResumeTx }),
		i64("pfc_pause_rx", func(r *PortRow) *int64 { return &r.PFCPauseRx }),
		i64("pfc_resume_rx", func(r *PortRow) *int64 { return &r.PFCResumeRx }),
		i64("paused_ps", func(r *PortRow) *int64 { return &r.PausedPs }),
	)
	return &table[PortRow]{name: PortsFile, cols: cols}
}()

var dropsTable = &table[DropRow]{name: DropsFile, cols: []column[DropRow]{
	i64("time_ps", func(r *DropRow) *int64 { return &r.TimePs }),
	nodeColumn("node", func(r *DropRow) *int32 { return &r.Node }),
	enumColumn("tier", "tier", tierNames[:], func(r *DropRow) *Tier { return &r.Tier }),
	i32("port", func(r *DropRow) *int32 { return &r.Port }),
	u8("tc", func(r *DropRow) *uint8 { return &r.TC }),
	enumColumn("reason", "drop reason", reasonNames[:], func(r *DropRow) *DropReason { return &r.Reason }),
	i64("flow_id", func(r *DropRow) *int64 { return &r.FlowID }),
	addrColumn("src", func(r *DropRow) *ipaddr.Addr { return &r.Src }),
	addrColumn("dst", func(r *DropRow) *ipaddr.Addr { return &r.Dst }),
	u8("proto", func(r *DropRow) *uint8 { return &r.Proto }),
	u16("sport", func(r *DropRow) *uint16 { return &r.Sport }),
	u16("dport", func(r *DropRow) *uint16 { return &r.Dport }),
	i32("bytes", func(r *DropRow) *int32 { return &r.Bytes }),
	i64("trace_index", func(r *DropRow) *int64 { return &r.TraceIndex }),
	enumColumn("kind", "packet kind", packetKindNames[:], func(r *DropRow) *PacketKind { return &r.Kind }),
}}

var pfcTable = &table[PFCRow]{name: PFCFile, cols: []column[PFCRow]{
	i64("time_ps", func(r *PFCRow) *int64 { return &r.TimePs }),
	nodeColumn("node", func(r *PFCRow) *int32 { return &r.Node }),
	i32("port", func(r *PFCRow) *int32 { return &r.Port }),
	nodeColumn("peer", func(r *PFCRow) *int32 { return &r.Peer }),
	u8("tc", func(r *PFCRow) *uint8 { return &r.TC }),
	enumColumn("event", "PFC event", pfcEventNames[:], func(r *PFCRow) *PFCEventKind { return &r.Event }),
	u16("quanta", func(r *PFCRow) *uint16 { return &r.Quanta }),
}}

var bufferTable = &table[BufferRow]{name: BufferFile, cols: []column[BufferRow]{
	i64("time_ps", func(r *BufferRow) *int64 { return &r.TimePs }),
	nodeColumn("node", func(r *BufferRow) *int32 { return &r.Node }),
	u8("pool", func(r *BufferRow) *uint8 { return &r.Pool }),
	i64("shared_bytes", func(r *BufferRow) *int64 { return &r.SharedBytes }),
	i64("headroom_bytes", func(r *BufferRow) *int64 { return &r.HeadroomBytes }),
	i64("ingress_bytes", func(r *BufferRow) *int64 { return &r.IngressBytes }),
	i64("egress_bytes", func(r *BufferRow) *int64 { return &r.EgressBytes }),
}}

var loadBalanceTable = &table[LoadBalanceRow]{name: LoadBalanceFile, cols: []column[LoadBalanceRow]{
	nodeColumn("node", func(r *LoadBalanceRow) *int32 { return &r.Node }),
	enumColumn("tier", "tier", tierNames[:], func(r *LoadBalanceRow) *Tier { return &r.Tier }),
	i32("set", func(r *LoadBalanceRow) *int32 { return &r.Set }),
	i32("member", func(r *LoadBalanceRow) *int32 { return &r.Member }),
	i32("port", func(r *LoadBalanceRow) *int32 { return &r.Port }),
	nodeColumn("peer", func(r *LoadBalanceRow) *int32 { return &r.Peer }),
	i64("flows", func(r *LoadBalanceRow) *int64 { return &r.Flows }),
	i64("flowlets", func(r *LoadBalanceRow) *int64 { return &r.Flowlets }),
	i64("packets", func(r *LoadBalanceRow) *int64 { return &r.Packets }),
	i64("bytes", func(r *LoadBalanceRow) *int64 { return &r.Bytes }),
	i64("moved_in", func(r *LoadBalanceRow) *int64 { return &r.MovedIn }),
	i64("moved_out", func(r *LoadBalanceRow) *int64 { return &r.MovedOut }),
	enumColumn("hash_method", "hash method", hashMethodNames[:], func(r *LoadBalanceRow) *HashMethod { return &r.HashMethod }),
}}

func noDelay(r *FlowRow) bool { return r.Delivered <= 0 }

var flowsTable = &table[FlowRow]{name: FlowsFile, cols: []column[FlowRow]{
	i64("flow_id", func(r *FlowRow) *int64 { return &r.FlowID }),
	addrColumn("src", func(r *FlowRow) *ipaddr.Addr { return &r.Src }),
	addrColumn("dst", func(r *FlowRow) *ipaddr.Addr { return &r.Dst }),
	familyColumn("family", func(r *FlowRow) *ipaddr.Addr { return &r.Src }),
	u8("proto", func(r *FlowRow) *uint8 { return &r.Proto }),
	u16("sport", func(r *FlowRow) *uint16 { return &r.Sport }),
	u16("dport", func(r *FlowRow) *uint16 { return &r.Dport }),
	u8("dscp", func(r *FlowRow) *uint8 { return &r.DSCP }),
	u8("tc", func(r *FlowRow) *uint8 { return &r.TC }),
	nodeColumn("src_host", func(r *FlowRow) *int32 { return &r.SrcHost }),
	nodeColumn("dst_host", func(r *FlowRow) *int32 { return &r.DstHost }),
	i64("packets", func(r *FlowRow) *int64 { return &r.Packets }),
	i64("bytes", func(r *FlowRow) *int64 { return &r.Bytes }),
	i64("size_bytes", func(r *FlowRow) *int64 { return &r.SizeBytes }),
	i64("delivered", func(r *FlowRow) *int64 { return &r.Delivered }),
	i64("dropped", func(r *FlowRow) *int64 { return &r.Dropped }),
	i64("undrained", func(r *FlowRow) *int64 { return &r.Undrained }),
	i64("ce_marked", func(r *FlowRow) *int64 { return &r.CEMarked }),
	i64("first_ps", func(r *FlowRow) *int64 { return &r.FirstPs }),
	i64("last_ps", func(r *FlowRow) *int64 { return &r.LastPs }),
	nullable("delay_min_ps", arrow.PrimitiveTypes.Int64, func(r *FlowRow) *int64 { return &r.DelayMinPs }, noDelay),
	nullable("delay_mean_ps", arrow.PrimitiveTypes.Int64, func(r *FlowRow) *int64 { return &r.DelayMeanPs }, noDelay),
	nullable("delay_max_ps", arrow.PrimitiveTypes.Int64, func(r *FlowRow) *int64 { return &r.DelayMaxPs }, noDelay),
	i32("rack_member", func(r *FlowRow) *int32 { return &r.RackMember }),
	i32("fabric_member", func(r *FlowRow) *int32 { return &r.FabricMember }),
	i64("path_changes", func(r *FlowRow) *int64 { return &r.PathChanges }),
	enumColumn("transport", "transport", transportNames[:], func(r *FlowRow) *Transport { return &r.Transport }),
	i64("retransmits", func(r *FlowRow) *int64 { return &r.Retransmits }),
	i64("timeouts", func(r *FlowRow) *int64 { return &r.Timeouts }),
	i64("congestion_signals", func(r *FlowRow) *int64 { return &r.CongestionSignals }),
	enumColumn("completion", "completion", completionNames[:], func(r *FlowRow) *Completion { return &r.Completion }),
	nullable("fct_ps", arrow.PrimitiveTypes.Int64, func(r *FlowRow) *int64 { return &r.FctPs }, incomplete),
	i64("ideal_fct_ps", func(r *FlowRow) *int64 { return &r.IdealFctPs }),
}}

func incomplete(r *FlowRow) bool { return r.Completion != CompletionComplete }

var messagesTable = &table[MessageRow]{name: MessagesFile, cols: []column[MessageRow]{
	i64("flow_id", func(r *MessageRow) *int64 { return &r.FlowID }),
	i32("message", func(r *MessageRow) *int32 { return &r.Message }),
	i64("start_ps", func(r *MessageRow) *int64 { return &r.StartPs }),
	i64("captured_ps", func(r *MessageRow) *int64 { return &r.CapturedPs }),
	i64("packets", func(r *MessageRow) *int64 { return &r.Packets }),
	i64("size_bytes", func(r *MessageRow) *int64 { return &r.SizeBytes }),
	i64("follows_flow_id", func(r *MessageRow) *int64 { return &r.FollowsFlowID }),
	i32("follows_message", func(r *MessageRow) *int32 { return &r.FollowsMessage }),
	enumColumn("completion", "completion", completionNames[:], func(r *MessageRow) *Completion { return &r.Completion }),
	nullable("fct_ps", arrow.PrimitiveTypes.Int64, func(r *MessageRow) *int64 { return &r.FctPs }, func(r *MessageRow) bool { return r.Completion != CompletionComplete }),
	i64("ideal_fct_ps", func(r *MessageRow) *int64 { return &r.IdealFctPs }),
}}

var delayTable = &table[DelayRow]{name: DelayFile, cols: []column[DelayRow]{
	u8("tc", func(r *DelayRow) *uint8 { return &r.TC }),
	i64("lo_ps", func(r *DelayRow) *int64 { return &r.LoPs }),
	i64("hi_ps", func(r *DelayRow) *int64 { return &r.HiPs }),
	i64("packets", func(r *DelayRow) *int64 { return &r.Packets }),
}}

var packetsTable = &table[PacketRow]{name: PacketsFile, cols: []column[PacketRow]{
	i64("trace_index", func(r *PacketRow) *int64 { return &r.TraceIndex }),
	i64("flow_id", func(r *PacketRow) *int64 { return &r.FlowID }),
	u8("tc", func(r *PacketRow) *uint8 { return &r.TC }),
	i32("bytes", func(r *PacketRow) *int32 { return &r.Bytes }),
	i64("inject_ps", func(r *PacketRow) *int64 { return &r.InjectPs }),
	i64("deliver_ps", func(r *PacketRow) *int64 { return &r.DeliverPs }),
	enumColumn("fate", "fate", fateNames[:], func(r *PacketRow) *Fate { return &r.Fate }),
	boolColumn("ce", func(r *PacketRow) *bool { return &r.CE }),
	pathColumn("path", func(r *PacketRow) *[]int32 { return &r.Path }),
	derivedNodeColumn("end_node", lastNode),
}}

var transportTable = &table[TransportRow]{name: TransportFile, cols: []column[TransportRow]{
	i64("time_ps", func(r *TransportRow) *int64 { return &r.TimePs }),
	i64("flow_id", func(r *TransportRow) *int64 { return &r.FlowID }),
	nodeColumn("node", func(r *TransportRow) *int32 { return &r.Node }),
	enumColumn("event", "transport event", transportEventNames[:], func(r *TransportRow) *TransportEventKind { return &r.Event }),
	i64("value", func(r *TransportRow) *int64 { return &r.Value }),
}}

var stagesTable = &table[StageRow]{name: StagesFile, cols: []column[StageRow]{
	i64("flow_id", func(r *StageRow) *int64 { return &r.FlowID }),
	u8("stage", func(r *StageRow) *uint8 { return &r.Stage }),
	nodeColumn("node", func(r *StageRow) *int32 { return &r.Node }),
	i32("set", func(r *StageRow) *int32 { return &r.Set }),
	i32("member", func(r *StageRow) *int32 { return &r.Member }),
}}

// lastNode is a packet's end_node: the last node of its path (-1, rejected, if empty).
func lastNode(r *PacketRow) int32 {
	if len(r.Path) == 0 {
		return -1
	}
	return r.Path[len(r.Path)-1]
}

// Files lists the record file names in the order docs/records.md gives them.
func Files() []string {
	return []string{PortsFile, DropsFile, PFCFile, BufferFile, LoadBalanceFile, FlowsFile, MessagesFile, DelayFile, PacketsFile, TransportFile, StagesFile}
}

// Schema returns the Arrow schema of the record file called name (one of Files).
func Schema(name string) (*arrow.Schema, error) {
	switch name {
	case PortsFile:
		return portsTable.schema(), nil
	case DropsFile:
		return dropsTable.schema(), nil
	case PFCFile:
		return pfcTable.schema(), nil
	case BufferFile:
		return bufferTable.schema(), nil
	case LoadBalanceFile:
		return loadBalanceTable.schema(), nil
	case FlowsFile:
		return flowsTable.schema(), nil
	case DelayFile:
		return delayTable.schema(), nil
	case PacketsFile:
		return packetsTable.schema(), nil
	case TransportFile:
		return transportTable.schema(), nil
	case StagesFile:
		return stagesTable.schema(), nil
	case MessagesFile:
		return messagesTable.schema(), nil
	}
	return nil, fmt.Errorf("records: %q is not a record file (known: %q)", name, Files())
}
