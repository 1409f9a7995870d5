package replay

import (
	"fmt"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/transport"
)

// flowState is what the replay keeps per 5-tuple flow, laid out by who reads it: the
// first two cache lines with what every injected packet reads and updates (counts,
// the sender's flags, the message bookkeeping of messages.go), the third the ideal
// schedule (ideal.go), the fourth what deliveries update, then what only a flow's
// start and the end of the run read. 320 bytes, no pointers (the garbage collector
// does not scan sim.flows).
type flowState struct {
	// Injection (and drops).
	src, dst       int32
	packets, bytes int64
	first, last    units.Time
	dropped        int64
	key            switchmodel.KeyID // the flow's ECMP key in the network's key table
	path           int32             // ideal path (ideal.go)
	dscp           uint8
	kind           transport.Kind
	closed         bool  // re-sent by a closed-loop sender
	auto           bool  // TCP auto: the first data segment decides the sender
	registered     bool  // the sender exists (at the flow's first data packet)
	started        bool  // start is set
	keepCtl        bool  // closed loop: the flow's captured control packets are replayed, not replaced
	fallback       uint8 // closed loop: why a TCP or RoCEv2 flow is replayed open loop (fallbackNone: it is not)
	// Messages (messages.go); the queue of unsettled messages is sim.msgs[flow id].
	rev      int32      // the reverse direction's flow, -1 none
	msgBase  int32      // the index of the oldest unsettled message
	nmsg     int32      // messages so far
	pair     int32      // its connection's slot in sim.lastSender (the first direction's flow id)
	offered  int32      // closed loop: segments offered to its sender
	copy     uint16     // --replicate: the copy the flow belongs to
	lastData units.Time // captured time of its last data packet
	size     int64      // bytes (L) of the flow's captured data packets
	start    units.Time // the flow's start: its first segment's availability (docs/model.md#application-model)
	// Ideal schedule.
	ideal idealState
	// Deliveries.
	delivered, ce            int64
	delayMin, delayMax       int64
	delaySum                 int64
	pathChanges              int64
	rackMember, fabricMember int16
	lastRack, lastFabric     int16
	lastDeliver              units.Time
	// The flow's identity, and what the end of the run and causality read.
	tuple       ingest.FiveTuple
	undrained   int64 // data packets left at the end
	oversize    int64 // packets dropped at the source host by --oversize drop
	lastSettled settledMessage
}

// Drop implements switchmodel.DropObserver.
func (s *sim) Drop(e switchmodel.DropEvent) {
	switch e.Reason {
	case switchmodel.DropNoRoute, switchmodel.DropLinkDown:
		if s.ev == nil {
			s.setErr(fmt.Errorf("replay: %s dropped a packet with no route (topology bug)", s.pr.Topo.Nodes[e.Node].Name))
			return
		}
		s.ev.drop(e.Reason)
	case switchmodel.DropPFCWatchdog:
		if s.ev != nil {
			s.ev.drop(e.Reason)
		}
		if i, ok := s.openStorm[[3]int32{e.Node, e.Port, int32(e.TC)}]; ok {
			s.storms[i].Dropped++
		}
	}
	p := e.Packet
	f := &s.flows[p.FlowID]
	k := s.net.Key(p.Key)
	r := &s.dropRow
	*r = records.DropRow{TimePs: int64(e.Time), Node: e.Node, Tier: s.tier[e.Node], Port: e.Port, TC: e.TC,
		Reason: reasonOf[e.Reason], FlowID: p.FlowID, Src: f.tuple.Src, Dst: f.tuple.Dst, Proto: k.Proto(),
		Sport: k.SrcPort(), Dport: k.DstPort(), Bytes: p.Length, TraceIndex: p.TraceIndex,
		Kind: kindOf[p.Class]}
	if p.Class.Control() {
		// A receiver's ACK, CNP or NAK: its addresses are the data's reversed.
		r.Src, r.Dst = f.tuple.Dst, f.tuple.Src
		s.setErr(s.drops.Append(r))
		return
	}
	f.dropped++
	s.members(f, p)
	if isOpenData(p) {
		s.openDelivered(e.Time, int32(p.FlowID), p.Seq, true)
	}
	if s.stages != nil {
		s.recordStages(p, false)
	}
	s.setErr(s.drops.Append(r))
	if s.packets != nil {
		s.writePathPacket(p, e.Time, -1, records.FateDropped, e.Node)
	}
}

// members records, per tier, the member of the first packet that passed the tier's
// set (a packet dropped before it records none) and counts path changes.
func (s *sim) members(f *flowState, p *switchmodel.Packet) {
	if f.rackMember < 0 {
		f.rackMember = p.RackMember
	}
	if f.fabricMember < 0 {
		f.fabricMember = p.FabricMember
	}
	if (p.RackMember >= 0 && f.lastRack >= 0 && p.RackMember != f.lastRack) ||
		(p.FabricMember >= 0 && f.lastFabric >= 0 && p.FabricMember != f.lastFabric) {
		f.pathChanges++
	}
	if p.RackMember >= 0 {
		f.lastRack = p.RackMember
	}
	if p.FabricMember >= 0 {
		f.lastFabric = p.FabricMember
	}
}

// Delivered implements switchmodel.DeliveryObserver.
func (s *sim) Delivered(now units.Time, p *switchmodel.Packet) {
	f := &s.flows[p.FlowID]
	f.delivered++
	f.lastDeliver = max(f.lastDeliver, now)
	if isOpenData(p) {
		s.openDelivered(now, int32(p.FlowID), p.Seq, false)
	}
	s.members(f, p)
	if s.stages != nil {
		s.recordStages(p, true)
	}
	if p.Marked {
		f.ce++
	}
	d := int64(now - p.Inject)
	if f.delayMin < 0 || d < f.delayMin {
		f.delayMin = d
	}
	f.delayMax = max(f.delayMax, d)
	f.delaySum += d
	s.delay.Add(p.TC, d)
	if s.packets != nil {
		s.writePathPacket(p, p.Inject, int64(now), records.FateDelivered, p.Dst)
	}
}

func (s *sim) writePathPacket(p *switchmodel.Packet, inject units.Time, deliver int64, fate records.Fate, end int32) {
	s.hops = p.AppendPath(s.hops[:0])
	path := s.pktRow.Path[:0]
	for _, h := range s.hops {
		path = append(path, h.Node)
	}
	if len(path) == 0 || path[len(path)-1] != end {
		path = append(path, end)
	}
	s.writePacket(p.FlowID, p.TraceIndex, p.TC, p.Length, p.Inject, deliver, fate, p.Marked && fate == records.FateDelivered, path)
}

func (s *sim) writePacket(fid, ti int64, tc uint8, length int32, inject units.Time, deliver int64, fate records.Fate, ce bool, path []int32) {
	r := &s.pktRow
	r.TraceIndex, r.FlowID, r.TC, r.Bytes = ti, fid, tc, length
	r.InjectPs, r.DeliverPs, r.Fate, r.CE, r.Path = int64(inject), deliver, fate, ce, path
	s.setErr(s.packets.Append(r))
}

// PFC implements switchmodel.PFCObserver.
func (s *sim) PFC(e switchmodel.PFCEvent) {
	switch e.Kind {
	case switchmodel.PFCStormDetected:
		if s.openStorm == nil {
			s.openStorm = map[[3]int32]int{}
		}
		s.openStorm[[3]int32{e.Node, e.Port, int32(e.TC)}] = len(s.storms)
		n := s.pr.Topo.Nodes
		s.storms = append(s.storms, records.Storm{Node: n[e.Node].Name, Port: e.Port, Peer: n[e.Peer].Name, TC: e.TC,
			DetectedPs: int64(e.Time), RestoredPs: -1})
	case switchmodel.PFCStormRestored:
		k := [3]int32{e.Node, e.Port, int32(e.TC)}
		if i, ok := s.openStorm[k]; ok {
			s.storms[i].RestoredPs = int64(e.Time)
			delete(s.openStorm, k)
		}
	}
	r := &s.pfcRow
	*r = records.PFCRow{TimePs: int64(e.Time), Node: e.Node, Port: e.Port, Peer: e.Peer, TC: e.TC, Event: pfcKindOf[e.Kind], Quanta: e.Quanta}
	s.setErr(s.pfc.Append(r))
}

// TransportEvent implements transport.Observer: transport.arrow.
func (s *sim) TransportEvent(e transport.Event) {
	r := &s.trRow
	*r = records.TransportRow{TimePs: int64(e.Time), FlowID: int64(e.Flow), Node: e.Host, Event: transportEventOf[e.Kind], Value: e.Value}
	s.setErr(s.w.Transport.Append(r))
}

// BufferSample implements switchmodel.BufferObserver.
func (s *sim) BufferSample(b switchmodel.BufferSample) {
	r := &s.bufRow
	*r = records.BufferRow{TimePs: int64(b.Time), Node: b.Switch, Pool: uint8(b.Pool), SharedBytes: b.Shared,
		HeadroomBytes: b.Headroom, IngressBytes: b.Ingress, EgressBytes: b.Egress}
	s.setErr(s.buffer.Append(r))
}
