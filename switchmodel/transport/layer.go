package transport

import (
	"fmt"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// Kind is a flow's sender.
type Kind uint8

// Senders.
const (
	Open    Kind = iota // open loop: captured packets at their captured times
	NewReno             // TCP NewReno
	DCTCP               // TCP DCTCP
	DCQCN               // RoCEv2 DCQCN with go-back-N
	NumKinds
)

var kindNames = [NumKinds]string{"open", "newreno", "dctcp", "dcqcn"}

// String returns "open", "newreno", "dctcp" or "dcqcn".
func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Control packets' lengths L (docs/model.md#closed-loop-transports): an IPv4 TCP
// ACK is 40 bytes (a 64-byte frame), an IPv4 RoCE ACK, NAK or CNP 60 (a 78-byte
// frame); an IPv6 flow's are IPv6HeaderExtra longer (its fixed header is 40 bytes,
// IPv4's 20): 60 and 80.
const (
	TCPAckLength    = 40
	RoCECtlLength   = 60
	IPv6HeaderExtra = 20
)

// Segment is one captured packet offered to a closed-loop sender.
type Segment struct {
	Length     int32 // IPv4 total length, bytes
	Payload    int32 // TCP payload bytes (ignored for RoCE)
	DSCP, ECN  uint8 // as captured
	TraceIndex int64
}

// FlowSpec describes a closed-loop flow.
type FlowSpec struct {
	// Kind is NewReno, DCTCP or DCQCN. With AutoTCP a TCP flow starts as NewReno and
	// becomes DCTCP if its first segment with a payload is ECN-capable.
	Kind    Kind
	AutoTCP bool
	// Src and Dst are the host indices of the data's source and destination.
	Src, Dst int32
	// Key is the data's ECMP key; Reverse the key of its ACKs, CNPs and NAKs: their
	// ids in the network's key table (Network.AddKey).
	Key, Reverse switchmodel.KeyID
	// SMSS is the flow's sender maximum segment size (TCP), bytes: what the replay
	// derived from the capture's SYNs and the MTU (docs/model.md#tcp).
	SMSS int32
	// IPv6: the flow's addresses are IPv6, so its control packets carry an IPv6
	// header (IPv6HeaderExtra bytes longer).
	IPv6 bool
}

// FlowStats are a closed-loop flow's totals.
type FlowStats struct {
	Kind Kind
	// Sent and SentBytes count the data packets the sender put into its NIC and their
	// IPv4 bytes (retransmissions included); Retransmits those that resent a segment.
	Sent, SentBytes, Retransmits int64
	// Timeouts counts retransmission timeouts (TCP) or RoceTimeout expiries.
	Timeouts int64
	// CongestionSignals counts ECE-marked ACKs (TCP) or CNPs (DCQCN) the sender got.
	CongestionSignals int64
	// RateCuts counts DCQCN rate decreases that lowered the rate (a cut at MinRate
	// leaves it there and is not counted).
	RateCuts int64
	// Segments is what the application offered; Delivered the segments the receiver
	// got in order (each once); Duplicates the data packets it discarded as copies or
	// (go-back-N) out of order.
	Segments, Delivered, Duplicates int64
	// FirstAvail is when the first segment was offered; LastDelivery when the
	// receiver last advanced (the delivery of the last in-order segment).
	FirstAvail, LastDelivery units.Time
	// Complete: the receiver got every offered segment.
	Complete bool
}

// EventKind is a congestion-control event of a closed-loop flow.
type EventKind uint8

// Events.
const (
	EventCNP            EventKind = iota // a receiver sent a CNP (DCQCN)
	EventRateCut                         // a DCQCN sender lowered its rate (never at MinRate already); Value: the new rate, bit/s
	EventRateIncrease                    // a DCQCN sender raised its rate; Value: the new rate, bit/s
	EventWindowCut                       // a DCTCP sender cut its window on ECE; Value: the new cwnd, bytes
	EventFastRetransmit                  // a TCP sender entered fast recovery; Value: the new cwnd, bytes
	EventTimeout                         // a retransmission timeout (TCP) or RoceTimeout; Value: TCP's new cwnd, bytes (0 for RoCE)
	NumEventKinds
)

var eventNames = [NumEventKinds]string{"cnp", "rate_cut", "rate_increase", "window_cut", "fast_retransmit", "timeout"}

// String returns the event's name as the records spell it ("rate_cut").
func (k EventKind) String() string {
	if k < NumEventKinds {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// Event is one congestion-control event. Host is where it happened: the receiver's
// host for a CNP, the sender's for the rest. A DCQCN rate change is stamped with the
// time it took effect, which the lazily evaluated timers may report after events of
// later times.
type Event struct {
	Time  units.Time
	Flow  int32
	Host  int32
	Kind  EventKind
	Value int64
}

// Observer receives congestion-control events (nil: none are made).
type Observer interface{ TransportEvent(Event) }

// SetObserver sets the layer's event observer (before the first flow).
func (l *Layer) SetObserver(o Observer) { l.obs = o }

func (l *Layer) event(t units.Time, f *flow, host int32, k EventKind, v int64) {
	if l.obs == nil {
		return
	}
	if l.shards != nil {
		// Partitioned: logged in the host's partition, handed back in key order.
		l.hosts[host].Network().NoteAgent(switchmodel.AgentNote{Time: t, Value: v, A: f.id, B: host, Kind: noteEvent + uint8(k)})
		return
	}
	l.obs.TransportEvent(Event{Time: t, Flow: f.id, Host: host, Kind: k, Value: v})
}

// ControlStats count the control packets a Layer generated, by class.
type ControlStats [switchmodel.NumClasses]int64

// Layer is the transports of every host of one Network: the Network's Agent.
type Layer struct {
	net   *switchmodel.Network
	eng   *switchmodel.Engine
	h     switchmodel.HandlerID
	cfg   config.Transport
	hosts []*switchmodel.Host
	nic   []units.BitRate // host NIC speeds
	flows []*flow         // by flow id; nil for open-loop flows
	// seq is the sequential engine's shard: every flow's halves are in it, but
	// during a partitioned run (partitioned.go), where each half is in its host's
	// partition's shard.
	seq shard
	// Partitioned runs: the shards by partition, every node's partition, and the
	// watches (Watch), kept on the coordinator (nil otherwise).
	shards   []*shard
	of       []int32
	watches  []int32
	expected int // segments the application holds back (Expect)
	watcher  Watcher
	onCNP    func(now units.Time, flow int64) // tests: a CNP was sent
	// lose (tests) is asked about every packet the layer sends, data and control;
	// true makes the first switch drop it (a packet lost on the wire).
	lose func(p *switchmodel.Packet) bool
	obs  Observer
}

// Event kinds of the Layer's handler; arg is the flow id.
const (
	evTimer int32 = iota + 1 // retransmission timer (TCP) or RoceTimeout
	evPace                   // a DCQCN sender may send its next packet
	evNak                    // a RoCE receiver may re-send its NAK
)

// New returns the transport layer of net, configured by cfg, and makes it the
// network's Agent. Call it after adding the hosts and links and before Start.
func New(net *switchmodel.Network, cfg config.Transport) (*Layer, error) {
	l := &Layer{net: net, eng: net.Engine(), cfg: cfg, hosts: net.Hosts()}
	l.seq = shard{net: net, eng: l.eng}
	if err := net.SetAgent(l); err != nil {
		return nil, err
	}
	l.h = l.eng.RegisterShared(l)
	l.nic = make([]units.BitRate, len(l.hosts))
	for i, h := range l.hosts {
		if h.NumPorts() > 0 {
			l.nic[i] = h.PortInfo(0).Speed
		}
	}
	return l, nil
}

// Idle reports whether every closed-loop flow has all its offered segments
// acknowledged and no segment is expected (Expect).
func (l *Layer) Idle() bool {
	if l.shards != nil {
		for _, sh := range l.shards {
			if sh.active != 0 {
				return false
			}
		}
		return l.expected == 0
	}
	return l.seq.active == 0 && l.expected == 0
}

// Expect tells the layer that n more (n < 0: fewer) segments will be offered later:
// the application holds them back (the replay's causality). The layer, and so the
// network during a drain, is not idle while any is expected.
func (l *Layer) Expect(n int) { l.expected += n }

// Watcher learns when a receiver's in-order delivery passes a watched segment.
type Watcher interface {
	// SegmentsDelivered: flow's receiver now holds every segment before next, the
	// first time next passed the segment Watch named.
	SegmentsDelivered(now units.Time, flow, next int32)
}

// SetWatcher sets the layer's watcher (before the first Watch).
func (l *Layer) SetWatcher(w Watcher) { l.watcher = w }

// Watch asks the watcher to be told once flow id's receiver holds segment seg and
// every one before it (replacing an earlier watch of the flow).
func (l *Layer) Watch(id, seg int32) {
	if l.shards != nil {
		l.watches[id] = seg // the receiver logs its advances (partitioned.go)
		return
	}
	l.flows[id].watch = seg
}

// delivered reports an in-order advance of f's receiver to the watcher when it passes
// the watched segment (the callers test f.watch >= 0 && f.rcvNxt > f.watch first,
// inline).
func (l *Layer) delivered(now units.Time, f *flow) {
	if l.shards != nil {
		// Partitioned: the watch is on the coordinator; every advance is logged.
		f.rcv.net.NoteAgent(switchmodel.AgentNote{Time: now, A: f.id, B: f.rcvNxt, Kind: noteAdvance})
		return
	}
	f.watch = -1
	l.watcher.SegmentsDelivered(now, f.id, f.rcvNxt)
}

// Generated returns the control packets generated so far, by class.
func (l *Layer) Generated() ControlStats {
	g := l.seq.generated
	for _, sh := range l.shards {
		for c := range g {
			g[c] += sh.generated[c]
		}
	}
	return g
}

// NewFlow registers closed-loop flow id (ids are dense: the replay's flow ids, open
// loop ones included).
func (l *Layer) NewFlow(id int32, spec FlowSpec) error {
	if spec.Kind != NewReno && spec.Kind != DCTCP && spec.Kind != DCQCN {
		return fmt.Errorf("transport: flow %d: kind %v is not closed loop", id, spec.Kind)
	}
	if int(spec.Src) >= len(l.hosts) || int(spec.Dst) >= len(l.hosts) || spec.Src < 0 || spec.Dst < 0 {
		return fmt.Errorf("transport: flow %d: hosts %d -> %d out of range", id, spec.Src, spec.Dst)
	}
	for int(id) >= len(l.flows) {
		l.flows = append(l.flows, nil)
	}
	if l.flows[id] != nil {
		return fmt.Errorf("transport: flow %d registered twice", id)
	}
	f := &flow{id: id, spec: spec, kind: spec.Kind, firstAvail: -1}
	f.smss = float64(max(1, spec.SMSS))
	f.recover, f.cwrEnd = -1, -1
	f.rtoEv = -1
	f.paceEv = -1
	f.nakEv = -1
	f.rtoUna = -1
	f.watch = -1
	f.snd, f.rcv = &l.seq, &l.seq
	if l.shards != nil {
		l.placeFlow(f)
	}
	f.iw = initialWindow(l.cfg.InitialWindow, f.smss, l.cfg.InitialWindowBytes)
	f.cwnd = f.iw
	f.ssthresh = 1e300 // "arbitrarily high" (RFC 5681)
	f.rto = l.cfg.InitialRto
	f.alpha = 1
	f.lastCnp = -1
	switch l.cfg.NicControlPriority {
	case config.ControlAll:
		f.ctlFirst = true
	case config.ControlRoce:
		f.ctlFirst = spec.Kind == DCQCN
	}
	if spec.Kind == DCQCN {
		f.rp = newRP(&l.cfg, l.nic[spec.Src])
		if l.obs != nil {
			f.rp.emit = func(t units.Time, k EventKind, rc float64) { l.event(t, f, spec.Src, k, int64(rc)) }
		}
	}
	l.flows[id] = f
	return nil
}

// Offer makes one more segment of flow id available at the current time; the sender
// sends it when its congestion control allows.
func (l *Layer) Offer(id int32, s Segment) {
	f := l.flows[id]
	now := f.snd.eng.Now()
	if f.firstAvail < 0 {
		f.firstAvail = now
	}
	u := int32(1)
	if f.kind != DCQCN {
		u = max(1, s.Payload)
		if f.spec.AutoTCP && !f.decided && s.Payload > 0 {
			f.decided = true
			if s.ECN == switchmodel.ECT0 || s.ECN == switchmodel.ECT1 {
				f.kind = DCTCP
			}
		}
	}
	if f.segs.n == 0 {
		f.snd.active++
	}
	f.segs.push(seg{start: f.endUnits, trace: s.TraceIndex, length: s.Length, units: u, dscp: s.DSCP, ecn: l.sendECN(f, s.ECN)})
	f.endUnits += int64(u)
	f.offered++
	l.trySend(now, f)
}

// sendECN is the codepoint a closed-loop sender gives a segment: a CE mark from the
// capture is the production network's, not this fabric's, so it becomes ECT(0); the
// ECN-capable senders (DCTCP, DCQCN) send Not-ECT segments as ECT(0).
func (l *Layer) sendECN(f *flow, ecn uint8) uint8 {
	switch {
	case ecn == switchmodel.CE:
		return switchmodel.ECT0
	case ecn == switchmodel.NotECT && (f.kind == DCTCP && !f.spec.AutoTCP || f.kind == DCQCN):
		return switchmodel.ECT0
	}
	return ecn
}

// Stats returns flow id's totals (ok false for an open-loop flow).
func (l *Layer) Stats(id int32) (st FlowStats, ok bool) {
	if int(id) >= len(l.flows) || l.flows[id] == nil {
		return FlowStats{}, false
	}
	f := l.flows[id]
	return FlowStats{Kind: f.kind, Sent: f.sent, SentBytes: f.sentBytes, Retransmits: f.retransmits,
		Timeouts: f.timeouts, CongestionSignals: f.signals, RateCuts: f.rp.cuts,
		Segments: f.offered, Delivered: int64(f.rcvNxt), Duplicates: f.dups,
		FirstAvail: f.firstAvail, LastDelivery: f.lastAdvance,
		Complete: f.offered > 0 && int64(f.rcvNxt) == f.offered}, true
}

// Handle runs the Layer's timers.
func (l *Layer) Handle(now units.Time, kind int32, arg int64) {
	f := l.flows[arg]
	// The layer is every host's transport: each timer is its sender's, a NAK's its
	// receiver's (docs/model.md#event-order-and-determinism).
	if kind == evNak {
		f.rcv.eng.ActAs(l.hosts[f.spec.Dst].ID())
	} else {
		f.snd.eng.ActAs(l.hosts[f.spec.Src].ID())
	}
	switch kind {
	case evTimer:
		if now != f.rtoEv {
			return // superseded by an earlier event
		}
		f.rtoEv = -1
		switch {
		case f.rtoAt == 0:
			return
		case f.rtoAt > now:
			l.armTimer(f, f.rtoAt)
			return
		}
		if f.kind == DCQCN {
			l.roceTimeout(now, f)
		} else {
			l.tcpTimeout(now, f)
		}
	case evPace:
		if now != f.paceEv {
			return
		}
		f.paceEv = -1
		l.trySend(now, f)
	case evNak:
		if now != f.nakEv {
			return
		}
		f.nakEv = -1
		l.nakTimer(now, f)
	}
}

// armTimer sets the flow's timer deadline to at, scheduling an event unless one is
// pending no later.
func (l *Layer) armTimer(f *flow, at units.Time) {
	f.rtoAt = at
	if f.rtoEv < 0 || f.rtoEv > at {
		f.snd.eng.Schedule(at, l.h, evTimer, int64(f.id))
		f.rtoEv = at
	}
}

// Received handles a packet of a closed-loop flow reaching its destination host.
func (l *Layer) Received(now units.Time, h *switchmodel.Host, p *switchmodel.Packet) {
	f := l.flows[p.FlowID]
	switch {
	case p.Class == switchmodel.ClosedData && f.spec.Kind == DCQCN: // the receiver's half reads spec, not kind (AutoTCP's kind is the sender's, never DCQCN)
		l.roceData(now, f, p)
	case p.Class == switchmodel.ClosedData:
		l.tcpData(now, f, p)
	case f.kind == DCQCN:
		l.roceControl(now, f, p)
	default:
		l.tcpAck(now, f, p)
	}
}

// Departed handles a closed-loop data packet starting to transmit at its NIC.
func (l *Layer) Departed(now units.Time, h *switchmodel.Host, p *switchmodel.Packet) {
	f := l.flows[p.FlowID]
	if f.kind != DCQCN {
		return
	}
	f.inNIC = false
	wire := int64(switchmodel.FrameSize(p.Length)) + 20
	line := l.nic[f.spec.Src]
	f.rp.sent(now, int64(p.Length))
	rc := f.rp.rate(now)
	if rc >= float64(line) {
		f.nextAvail = now + units.SerializationTime(wire, line)
	} else {
		f.nextAvail = now + units.SerializationTime(wire, units.BitRate(rc))
	}
	l.trySend(now, f)
}

func (l *Layer) trySend(now units.Time, f *flow) {
	if f.kind == DCQCN {
		l.roceSend(now, f)
	} else {
		l.tcpSend(now, f)
	}
}

// send puts segment i of f into its source NIC.
func (l *Layer) send(now units.Time, f *flow, i int32) {
	s := f.segs.at(i)
	if s.sends > 0 {
		f.retransmits++
	}
	if s.sends < 255 {
		s.sends++
	}
	s.sentAt = now
	id, p := f.snd.net.NewPacket()
	p.FlowID, p.TraceIndex = int64(f.id), s.trace
	p.Key = f.spec.Key
	p.Src, p.Dst = f.spec.Src, f.spec.Dst
	p.DSCP, p.ECN, p.Length = s.dscp, s.ecn, s.length
	p.Class, p.Seq = switchmodel.ClosedData, i
	f.sent++
	f.sentBytes += int64(s.length)
	f.lastSend = now
	if l.lose != nil && l.lose(p) {
		p.Dst = -1
	}
	f.snd.net.Inject(l.hosts[f.spec.Src], id)
}

// control sends a control packet of f from its receiver back to its sender, ahead of
// the receiver host's data if NicControlPriority says so for the flow's kind.
func (l *Layer) control(f *flow, class switchmodel.Class, length int32, dscp uint8, seq int32, echo bool) {
	id, p := f.rcv.net.NewPacket()
	p.FlowID, p.TraceIndex = int64(f.id), -1
	p.Key = f.spec.Reverse
	p.Src, p.Dst = f.spec.Dst, f.spec.Src
	if f.spec.IPv6 {
		length += IPv6HeaderExtra
	}
	p.DSCP, p.ECN, p.Length = dscp, switchmodel.NotECT, length
	p.Class, p.Seq, p.Echo = class, seq, echo
	f.rcv.generated[class]++
	if l.lose != nil && l.lose(p) {
		p.Dst = -1
	}
	if f.ctlFirst {
		f.rcv.net.InjectControl(l.hosts[f.spec.Dst], id)
	} else {
		f.rcv.net.Inject(l.hosts[f.spec.Dst], id)
	}
}

// acked drops f's segments before i; the flow leaves the active set when it holds
// none.
func (l *Layer) acked(f *flow, i int32) {
	had := f.segs.n > 0
	f.segs.popTo(i)
	if had && f.segs.n == 0 {
		f.snd.active--
	}
}

// flow is one closed-loop flow: its sender's and its receiver's state.
type flow struct {
	id   int32
	spec FlowSpec
	kind Kind
	// snd and rcv are the shards of the sender's and the receiver's halves (the
	// same but in a partitioned run): every field below is written and read by one
	// half only (partitioned.go).
	snd, rcv *shard

	// Application and sender.
	segs                           ring  // [una, end)
	endUnits                       int64 // sequence units of everything offered
	offered                        int64
	nxt                            int32 // next segment to send
	firstAvail                     units.Time
	decided                        bool // AutoTCP: the kind is known
	ctlFirst                       bool // its control packets go ahead of the receiver host's data
	rtoAt                          units.Time
	rtoEv                          units.Time // time of the pending timer event, -1 none
	sent                           int64
	sentBytes                      int64
	lastSend                       units.Time // the last data packet's transmission
	retransmits, timeouts, signals int64

	// TCP.
	cwnd, ssthresh, smss float64
	iw                   float64 // initial window, bytes
	dupacks              int32
	recover              int32 // fast recovery ends when this segment is acknowledged
	inRecovery           bool
	cwrEnd               int32 // the window was cut for segments before this one
	rtoUna               int32 // the first unacknowledged segment at the last timeout, -1 none
	ltUnits              int64 // sent by limited transmit since the last new ACK
	srtt, rttvar, rto    units.Time
	hasRTT               bool
	alpha                float64 // DCTCP
	windowEnd            int32
	ackedUnits, marked   int64
	// Window validation (RFC 7661, as Linux's tcp_cwnd_validate): whether the window
	// limited the sender, and its largest flight, since usageEnd was sent.
	cwndLimited bool
	maxFlight   int64
	usageEnd    int32

	// RoCE.
	rp        rp
	nextAvail units.Time
	paceEv    units.Time
	inNIC     bool
	progress  units.Time // last time the sender saw its first unacknowledged segment move

	// Receiver.
	rcvNxt      int32
	ooo         []int32    // TCP: segments received above rcvNxt, sorted
	lastNak     int32      // RoCE: the expected segment of the last NAK, +1 (0: none)
	watch       int32      // Watch: the segment whose in-order delivery the watcher awaits, -1 none
	nakAt       units.Time // RoCE: when the last NAK was sent
	nakEv       units.Time // RoCE: time of the pending NAK re-send event, -1 none
	nakDscp     uint8      // RoCE: the DSCP of the last NAK
	lastCnp     units.Time
	lastAdvance units.Time
	dups        int64
}

// una is the first unacknowledged segment.
func (f *flow) una() int32 { return f.segs.base }
