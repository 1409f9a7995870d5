package replay

import (
	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
	"github.com/tracefabric/tracefabric/switchmodel/transport"
)

// inject hands arrival p, fed at now, to its source host's NIC (in MTU-sized pieces
// when it is longer than the MTU and --oversize is split), or counts it (intra-host,
// or oversize and dropped). A flow's first packet creates its record; a data packet
// joins a message (messages.go), and causality may hold it back (place injects it
// later).
func (s *sim) inject(now units.Time, p *arrival) {
	fid := p.fid
	if fid == noFlow {
		s.trace.intraHost++
		return
	}
	if int(fid) == len(s.flows) {
		s.newFlow(now, fid, p)
	}
	f := &s.flows[fid]
	if p.replaced != notReplaced && !f.keepCtl {
		s.trace.replaced[p.replaced]++
		return
	}
	var m *message
	if p.data {
		m = s.classify(now, fid, f)
	}
	if s.causal && f.closed && (s.held[fid] != nil || m != nil && m.delta != 0) {
		s.hold(now, fid, f, p, m)
		return
	}
	s.place(now, fid, f, p, m)
}

// place injects arrival p of flow fid now, its data counted in message m (nil: not
// data).
func (s *sim) place(now units.Time, fid int32, f *flowState, p *arrival, m *message) {
	src, dst := p.src, p.dst
	if !f.started {
		// The flow's start: its first segment (docs/model.md#application-model), the
		// instant its FCT and its ideal FCT both count from.
		f.started, f.start = true, now
	}
	if f.closed && !f.registered {
		if err := s.registerSender(fid, f, p); err != nil {
			s.setErr(err)
			return
		}
	}
	f.last = now
	length := int32(p.length)
	traceIndex := p.traceIndex
	if length > s.mtu {
		s.trace.oversize++
		if s.pr.Opt.Oversize == OversizeDrop {
			f.packets++
			f.bytes += int64(length)
			f.dropped++
			f.oversize++
			s.trace.oversizeDropped++
			if m != nil {
				m.packets++
				m.size += int64(length)
				m.dropped++
			}
			if s.oversizeAt == nil {
				s.oversizeAt = make([][switchmodel.NumTC]int64, s.pr.Topo.Hosts)
			}
			s.oversizeAt[src][s.classes.TC(p.dscp)]++
			s.writeOversizeDrop(now, f, fid, p, length, traceIndex)
			return
		}
	}
	host := s.net.Hosts()[src]
	path := &s.ideal.paths[f.path]
	for length > 0 {
		piece := min(length, s.mtu)
		length -= piece
		if piece != int32(p.length) {
			s.trace.oversizePieces++
		}
		f.size += int64(piece)
		ideal := f.ideal.add(path, now, piece)
		if f.closed {
			// The piece's payload: the packet's payload less what the earlier pieces
			// carried (headers repeat in every piece).
			if s.par == nil { // partitioned: offered in the partition (parallel.go)
				hdr := int32(p.length) - int32(p.payload)
				s.layer.Offer(fid, transport.Segment{Length: piece, Payload: max(0, piece-hdr), DSCP: p.dscp, ECN: p.ecn, TraceIndex: traceIndex})
			}
			if m != nil {
				s.injected(now, fid, f, m, piece, ideal, f.offered)
			}
			f.offered++
			continue
		}
		if s.par != nil {
			// Partitioned: the packet is in its partition already (parallel.go);
			// this is the bookkeeping, in the sequential run's order.
			f.packets++
			f.bytes += int64(piece)
			if m != nil {
				s.injected(now, fid, f, m, piece, ideal, -1)
			}
			s.par.checkSeq(m)
			continue
		}
		id, pk := s.net.NewPacket()
		pk.FlowID = int64(fid)
		pk.TraceIndex = traceIndex
		pk.Key = f.key
		pk.Src, pk.Dst = src, dst
		pk.DSCP = p.dscp
		pk.ECN = p.ecn
		pk.Length = piece
		pk.Seq = seqOf(m)
		f.packets++
		f.bytes += int64(piece)
		if m != nil {
			s.injected(now, fid, f, m, piece, ideal, -1)
		}
		s.net.Inject(host, id)
	}
}

// newFlow creates the record of flow fid, whose first packet is p, with its ECMP
// key in the network's key table (every packet of the flow has that key: a flow's
// 5-tuple has ports 0 where the key would zero them), and decides, in a closed-loop
// run, whether a sender re-sends it.
func (s *sim) newFlow(now units.Time, fid int32, p *arrival) {
	key := flowKey(p.saddr, p.daddr, p.proto, p.sport, p.dport, p.laterFrag)
	s.flows = append(s.flows, flowState{tuple: p.tuple(), dscp: p.dscp, src: p.src, dst: p.dst, first: now, copy: p.copy,
		rackMember: -1, fabricMember: -1, lastRack: -1, lastFabric: -1, delayMin: -1,
		path: s.pathOf(p.src, p.dst, &key), key: s.net.AddKey(key)})
	s.msgs = append(s.msgs, nil)
	s.lastSender = append(s.lastSender, -1)
	f := &s.flows[fid]
	s.linkReverse(fid, f)
	if s.layer == nil {
		return
	}
	f.kind, f.auto = flowKind(&s.cfg.Transport, p)
	if f.kind == transport.Open {
		return
	}
	q := p
	if p.copy > 0 { // the facts are the original flow's
		c := *p
		c.saddr, c.daddr = s.pr.repl.original(p.saddr, int(p.copy)), s.pr.repl.original(p.daddr, int(p.copy))
		q = &c
	}
	reason, _, replaceCtl := s.pr.facts.decide(q, s.mtu)
	f.keepCtl = !replaceCtl
	if reason != fallbackNone {
		f.kind, f.auto, f.fallback = transport.Open, false, reason
		return
	}
	f.closed = true
}

// registerSender creates the sender of closed-loop flow fid at its first data packet p
// (a flow whose captured packets are all replaced, the ACKs of a one-way transfer,
// has none).
func (s *sim) registerSender(fid int32, f *flowState, p *arrival) error {
	f.registered = true
	kind, auto := f.kind, f.auto
	rev := s.net.AddKey(flowKey(p.daddr, p.saddr, p.proto, p.dport, p.sport, p.laterFrag))
	return s.layer.NewFlow(fid, transport.FlowSpec{Kind: kind, AutoTCP: auto, Src: p.src, Dst: p.dst,
		Key: f.key, Reverse: rev, SMSS: s.pr.facts.smss(s.originalTuple(f), s.mtu, int32(s.cfg.Transport.Mss)), IPv6: p.saddr.Is6()})
}

// originalTuple is the 5-tuple of the captured flow whose copy f is (f's own without
// --replicate).
func (s *sim) originalTuple(f *flowState) ingest.FiveTuple {
	t := f.tuple
	if rp := s.pr.repl; rp != nil && f.copy > 0 {
		t.Src, t.Dst = rp.original(t.Src, int(f.copy)), rp.original(t.Dst, int(f.copy))
	}
	return t
}

// flowKey is the ECMP key of a packet from src to dst (docs/model.md#ecmp-hashing):
// 13 bytes for IPv4, 37 for IPv6.
func flowKey(src, dst ipaddr.Addr, proto uint8, sport, dport uint16, laterFrag bool) ecmp.Key {
	if src.Is6() {
		return ecmp.MakeKey6(src.As16(), dst.As16(), proto, sport, dport, laterFrag)
	}
	return ecmp.MakeKey(src.As4(), dst.As4(), proto, sport, dport, laterFrag)
}

func (s *sim) writeOversizeDrop(now units.Time, f *flowState, fid int32, p *arrival, length int32, ti int64) {
	r := &s.dropRow
	*r = records.DropRow{TimePs: int64(now), Node: f.src, Tier: records.TierHost, Port: 0, TC: s.classes.TC(p.dscp),
		Reason: records.ReasonOversize, FlowID: int64(fid), Src: p.saddr, Dst: p.daddr, Proto: p.proto,
		Sport: p.sport, Dport: p.dport, Bytes: length, TraceIndex: ti}
	s.setErr(s.drops.Append(r))
	if s.packets != nil {
		s.writePacket(int64(fid), ti, s.classes.TC(p.dscp), length, now, -1, records.FateDropped, false, []int32{f.src})
	}
}

func (s *sim) setErr(err error) {
	if err != nil && s.obsErr == nil {
		s.obsErr = err
		s.eng.Stop()
	}
}
