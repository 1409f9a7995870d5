package replay

import (
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// RecordsStages reports whether a run through the fabric writes stages.arrow
// (docs/records.md#stagesarrow): when flows.arrow's rack_member and fabric_member
// do not hold every ECMP choice a path can make, that is when some switch has a set
// of two or more members that is not the uplink set of a level-1 or level-2 switch
// (a five-stage fabric's super-spines choosing among a pod's spines, a spine's
// parallel links down to a leaf), or when the fabric's paths need not be up/down
// (explicit and HPCC topology files). The default Clos and the generated shapes
// without such sets write no stages.arrow, so their records are those of before.
func (t *Topology) RecordsStages() bool {
	if !t.UpDown {
		return true
	}
	for i := t.Hosts; i < len(t.Nodes); i++ {
		level := t.Nodes[i].Level
		for _, h := range t.Routes.Sets[i-t.Hosts] {
			if len(h.Ports) < 2 {
				continue
			}
			if !t.Up(int32(i), int(h.Ports[0])) || level > 2 {
				return true
			}
		}
	}
	return false
}

// stagesDone marks a flow whose stages are all recorded (a delivered packet's path
// was read); bit k-1 of a flow's stage mask marks stage k as read.
const stagesDone = 1 << 7

// recordStages writes to stages.arrow, for each switch of a finished data packet's
// path whose position on the path (its stage) has not been read for the flow yet,
// the member it chose there when that was an ECMP stage (Switch.StageMember): each
// stage of a flow comes from the first finished packet that left its switch, as
// flows.arrow's rack_member and fabric_member do. Once a delivered packet has been
// read every stage of the flow is known, and its later packets cost one load.
func (s *sim) recordStages(p *switchmodel.Packet, delivered bool) {
	fid := p.FlowID
	for int(fid) >= len(s.stageSeen) {
		s.stageSeen = append(s.stageSeen, 0)
	}
	seen := s.stageSeen[fid]
	if seen&stagesDone != 0 {
		return
	}
	s.hops = p.AppendPath(s.hops[:0])
	for k, h := range s.hops {
		if k == 0 || seen&(1<<(k-1)) != 0 { // hop 0 is the source host's NIC
			continue
		}
		seen |= 1 << (k - 1)
		sw := s.switchAt[h.Node]
		if sw == nil {
			continue
		}
		set, member, stage, ok := sw.StageMember(p.Dst, int(h.Port))
		if !ok || !stage {
			continue
		}
		r := &s.stageRow
		*r = records.StageRow{FlowID: fid, Stage: uint8(k), Node: h.Node, Set: int32(set), Member: int32(member)}
		s.setErr(s.stages.Append(r))
	}
	if delivered {
		seen |= stagesDone
	}
	s.stageSeen[fid] = seen
}
