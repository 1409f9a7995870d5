package switchmodel

import (
	"unsafe"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// PacketID names a packet in a Network's arena. IDs are reused after a packet is
// delivered or dropped; NoPacket is the null ID.
type PacketID int32

// NoPacket is the null PacketID.
const NoPacket PacketID = -1

// MaxPath is the number of hops a packet's compact path records (a Clos path between
// pods has 6 links: host, rack, fabric, spine, fabric, rack).
const MaxPath = 8

// ECN codepoints (docs/model.md#classification): the two low bits of the IPv4 TOS byte.
const (
	NotECT uint8 = 0
	ECT1   uint8 = 1
	ECT0   uint8 = 2
	CE     uint8 = 3
)

// Hop is one entry of a packet's compact path: the node that put it on a link and the
// port it left by.
type Hop struct {
	Node int32
	Port int32
}

// Class says what a packet is to the transports (docs/model.md#closed-loop-transports):
// data of an open-loop flow (the zero value), data of a closed-loop flow, or a control
// packet a transport generated. Data and control are counted apart (Counters); the
// host calls its Agent for everything but open-loop data.
type Class uint8

// Packet classes.
const (
	OpenData   Class = iota // a captured packet injected at its captured time
	ClosedData              // a segment sent by a closed-loop sender
	Ack                     // an acknowledgement (TCP ACK, RoCE ACK)
	Cnp                     // a RoCEv2 congestion notification packet
	Nak                     // a RoCE negative acknowledgement (go-back-N)
	NumClasses
	classPFC Class = 255 // a PFC frame (the model's own)
)

var classNames = [NumClasses]string{"data", "data", "ack", "cnp", "nak"}

// String returns "data", "ack", "cnp" or "nak".
func (c Class) String() string {
	if c < NumClasses {
		return classNames[c]
	}
	return "unknown"
}

// Control reports whether the class is a control packet (ACK, CNP or NAK).
func (c Class) Control() bool { return c >= Ack }

// Packet is one IPv4 or IPv6 packet in the simulation (or, internally, a PFC frame).
// The injector sets FlowID, TraceIndex, Key, Src, Dst, DSCP, ECN and Length (and, for
// transports, Class, Seq and Echo); the model fills the rest. A *Packet handed to an observer is valid only during the call: the
// arena reuses it.
//
// Layout: 128 bytes, two cache lines, with every field a hop reads or writes in the
// first (the arena's chunks are page-aligned), and what only injection, delivery and
// drops use, and the path, in the second. The ECMP key itself (37 bytes for IPv6)
// would not fit the first line: the packet carries its id in the network's key table,
// which an ECMP decision reads (one flow's key, shared by all its packets).
type Packet struct {
	at      units.Time // link arrival, forwarding-line exit or enqueue time
	next    PacketID
	Frame   int32 // Ethernet frame size F = max(64, L+18); wire bytes F+20 (model)
	Src     int32 // source host index (Host.Index)
	Dst     int32 // destination host index
	inPort  int32 // ingress port at the current switch
	charged int32 // buffer bytes charged at the current switch (cells * CellSize)
	Key     KeyID // ECMP hash key (docs/model.md#ecmp-hashing) in Network's key table; 0 is the all-zero IPv4 key
	Class   Class // data or control (transports); classPFC for a PFC frame
	TC      uint8 // traffic class at the current node: its ClassMap of DSCP (model)
	Hops    uint8 // packet-hops so far: links it was put onto (model)
	pool    uint8 // pool charged at the current switch
	DSCP    uint8 // DSCP (6 bits), which every node classifies into TC
	ECN     uint8 // ECN codepoint: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE (model: -> CE)
	Marked  bool  // a switch marked it CE (ECT -> CE); a packet injected as CE is not (model)
	vector  uint8 // PFC class-enable vector
	quanta  uint16
	// RackMember and FabricMember are the member indices chosen at the Rack and
	// Fabric tiers' equal-cost sets, -1 none (model).
	RackMember, FabricMember int16
	Length                   int32 // packet size L in bytes (IPv4 total length, 40 + IPv6 payload length)
	// arrOrd is the order key (ord) of the frame's arrival event while it is on a
	// link: the sender's, fixed when the frame starts (startTx), whoever schedules
	// the event (docs/model.md#event-order-and-determinism).
	arrOrd uint64 // the first cache line ends here

	FlowID     int64      // the injector's flow id
	TraceIndex int64      // index of the packet in the trace (-1 for control packets)
	Inject     units.Time // time it entered its source host's NIC (model)
	path       [MaxPath]uint32
	// Seq is the transport's sequence number: a segment's index in its flow (data), or
	// the next segment expected (ACK, NAK).
	Seq int32
	// Echo is an ACK's ECN echo (ECE): the acknowledged segment arrived CE-marked.
	Echo bool
	_    [3]byte // to 128 bytes
}

// Packet stays two cache lines, arrOrd the end of the first: a change that breaks this
// fails the build here.
var _ = [1]struct{}{}[(unsafe.Sizeof(Packet{})-128)|(unsafe.Offsetof(Packet{}.arrOrd)-56)]

// Path hops pack into 32 bits: node << hopPortBits | port.
const hopPortBits = 12

// Limits of the packed path: a network has at most MaxNodes nodes and a node at most
// MaxPorts ports (config.Validate holds a topology to the same limits).
const (
	MaxNodes = 1 << (32 - hopPortBits)
	MaxPorts = 1 << hopPortBits
)

// The configuration's limits must fit the packed path.
var _ = [1]struct{}{}[(MaxNodes-config.MaxNodes)|(MaxPorts-config.MaxPorts)]

// AppendPath appends the recorded part of the packet's compact path (at most MaxPath
// hops) to dst and returns it.
func (p *Packet) AppendPath(dst []Hop) []Hop {
	n := min(int(p.Hops), MaxPath)
	for _, h := range p.path[:n] {
		dst = append(dst, Hop{Node: int32(h >> hopPortBits), Port: int32(h & (MaxPorts - 1))})
	}
	return dst
}

// CEMarked reports whether the packet carries the CE codepoint.
func (p *Packet) CEMarked() bool { return p.ECN == CE }

// wireBytes is the frame's size on the wire: frame + preamble, SFD and inter-frame gap.
func (p *Packet) wireBytes() int64 { return int64(p.Frame) + 20 }

// FrameSize returns the Ethernet frame size of a packet of size l (IPv4 total length,
// 40 + IPv6 payload length): max(64, l+18) bytes (docs/model.md#frame-sizes).
func FrameSize(l int32) int32 {
	if l+18 < 64 {
		return 64
	}
	return l + 18
}

const chunkBits = 10
const chunkSize = 1 << chunkBits

// arena holds packets in fixed chunks (pointers stay valid as it grows) and recycles
// them through a free list: no allocation per packet once warm.
type arena struct {
	chunks [][]Packet
	free   PacketID
	n      int32 // slots handed out so far
	live   int   // packets in use
}

func newArena() arena { return arena{free: NoPacket} }

func (a *arena) get(id PacketID) *Packet {
	return &a.chunks[id>>chunkBits][id&(chunkSize-1)]
}

func (a *arena) alloc() (PacketID, *Packet) {
	var id PacketID
	if a.free != NoPacket {
		id = a.free
		a.free = a.get(id).next
	} else {
		if int(a.n)>>chunkBits == len(a.chunks) {
			a.chunks = append(a.chunks, make([]Packet, chunkSize))
		}
		id = PacketID(a.n)
		a.n++
	}
	a.live++
	p := a.get(id)
	*p = Packet{next: NoPacket, RackMember: -1, FabricMember: -1}
	return id, p
}

func (a *arena) release(id PacketID) {
	p := a.get(id)
	p.next = a.free
	a.free = id
	a.live--
}

// fifo is an intrusive FIFO of packets linked through Packet.next.
type fifo struct {
	head, tail PacketID
	n          int32
	bytes      int64 // frame bytes queued (for host backlog)
}

func newFifo() fifo { return fifo{head: NoPacket, tail: NoPacket} }

func (q *fifo) push(a *arena, id PacketID, p *Packet) {
	p.next = NoPacket
	if q.tail == NoPacket {
		q.head = id
	} else {
		a.get(q.tail).next = id
	}
	q.tail = id
	q.n++
	q.bytes += int64(p.Frame)
}

func (q *fifo) pop(a *arena) (PacketID, *Packet) {
	id := q.head
	p := a.get(id)
	q.head = p.next
	if q.head == NoPacket {
		q.tail = NoPacket
	}
	p.next = NoPacket
	q.n--
	q.bytes -= int64(p.Frame)
	return id, p
}
