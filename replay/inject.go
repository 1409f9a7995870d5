package replay

import (
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// inject hands arrival p to its source host's NIC (in MTU-sized pieces when it is
// longer than the MTU and --oversize is split), or counts it (intra-host, or oversize
// and dropped). A flow's first packet creates its record.
func (s *sim) inject(now units.Time, p *arrival) {
	fid, src, dst := p.fid, p.src, p.dst
	if fid == noFlow {
		s.trace.intraHost++
		return
	}
	if int(fid) == len(s.flows) {
		s.flows = append(s.flows, flowState{tuple: p.tuple(), dscp: p.dscp, src: src, dst: dst, first: now,
			rackMember: -1, fabricMember: -1, lastRack: -1, lastFabric: -1, delayMin: -1})
	}
	f := &s.flows[fid]
	f.last = now
	key := ecmp.MakeKey(p.saddr, p.daddr, p.proto, p.sport, p.dport, p.laterFrag)
	length := int32(p.length)
	traceIndex := p.traceIndex
	if length > s.mtu {
		s.trace.oversize++
		if s.pr.Opt.Oversize == OversizeDrop {
			f.packets++
			f.bytes += int64(length)
			f.dropped++
			s.trace.oversizeDropped++
			if s.oversizeAt == nil {
				s.oversizeAt = make([][switchmodel.NumTC]int64, s.pr.Clos.Grid.Hosts())
			}
			s.oversizeAt[src][p.dscp>>3]++
			s.injected++
			s.writeOversizeDrop(now, f, fid, p, length, traceIndex)
			return
		}
	}
	host := s.net.Hosts()[src]
	for length > 0 {
		piece := min(length, s.mtu)
		length -= piece
		if piece != int32(p.length) {
			s.trace.oversizePieces++
		}
		id, pk := s.net.NewPacket()
		pk.FlowID = int64(fid)
		pk.TraceIndex = traceIndex
		pk.Key = key
		pk.Src, pk.Dst = src, dst
		pk.DSCP = p.dscp
		pk.ECN = p.ecn
		pk.Length = piece
		f.packets++
		f.bytes += int64(piece)
		s.injected++
		s.net.Inject(host, id)
	}
}

func (s *sim) writeOversizeDrop(now units.Time, f *flowState, fid int32, p *arrival, length int32, ti int64) {
	r := &s.dropRow
	*r = records.DropRow{TimePs: int64(now), Node: f.src, Tier: records.TierHost, Port: 0, TC: p.dscp >> 3,
		Reason: records.ReasonOversize, FlowID: int64(fid), Src: p.saddr, Dst: p.daddr, Proto: p.proto,
		Sport: p.sport, Dport: p.dport, Bytes: length, TraceIndex: ti}
	s.setErr(s.drops.Append(r))
	if s.packets != nil {
		s.writePacket(int64(fid), ti, p.dscp>>3, length, now, -1, records.FateDropped, false, []int32{f.src})
	}
}

func (s *sim) setErr(err error) {
	if err != nil && s.obsErr == nil {
		s.obsErr = err
		s.eng.Stop()
	}
}
