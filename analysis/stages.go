package analysis

import (
	"fmt"
	"slices"
)

// StageTable holds each flow's member at every ECMP stage of its path
// (docs/analysis.md#polarization-between-stages): a stage is a switch's position on
// the path (1: the source host's switch), an ECMP stage one where the switch chose a
// member of an equal-cost set. Member[i*Depth+k-1] is flow i's member at stage k,
// -1 when its stage k was not an ECMP stage (or was never crossed); Node[i*Depth+k-1]
// is that switch.
//
// FromFile says the members come from stages.arrow (fabrics with ECMP stages beyond
// the rack and fabric uplinks, docs/records.md#stagesarrow); otherwise they are
// flows.arrow's rack_member and fabric_member as stages 1 and 2 (Depth 2), the
// fabric switch being the rack member's peer.
type StageTable struct {
	Depth    int
	Member   []int32
	Node     []NodeID
	FromFile bool
}

// newStageTable makes an empty table of n flows and depth stages (every member -1).
func newStageTable(n, depth int, fromFile bool) StageTable {
	st := StageTable{Depth: depth, Member: make([]int32, n*depth), Node: make([]NodeID, n*depth), FromFile: fromFile}
	for i := range st.Member {
		st.Member[i] = -1
	}
	return st
}

// set records flow i's member m at stage k (1-based) through switch node.
func (st *StageTable) set(i, k int, node NodeID, m int32) {
	st.Member[i*st.Depth+k-1], st.Node[i*st.Depth+k-1] = m, node
}

// flows is the number of flows in the table.
func (st *StageTable) flows() int {
	if st.Depth == 0 {
		return 0
	}
	return len(st.Member) / st.Depth
}

// layout lays out the choices at stages k and k+1, per switch of stage k.
func (st *StageTable) layout(k int) polLayout {
	d := st.Depth
	return newPolLayout(st.flows(), stagePair(k), func(i int) (int32, int32, NodeID) {
		return st.Member[i*d+k-1], st.Member[i*d+k], st.Node[i*d+k-1]
	})
}

// pairs returns the stages k whose pair (k, k+1) some flow made both choices of.
func (st *StageTable) pairs() []int {
	var ks []int
	d := st.Depth
	for k := 1; k < d; k++ {
		for i := range st.flows() {
			if st.Member[i*d+k-1] >= 0 && st.Member[i*d+k] >= 0 {
				ks = append(ks, k)
				break
			}
		}
	}
	return ks
}

// StagePolarization is the polarization between the member choices at two
// consecutive ECMP stages, From and To = From + 1, over the flows that made both
// (docs/analysis.md#polarization-between-stages): the measures of Polarization
// (AMI, its interval, NMI, ...) with the first stage's choice as X and the second's
// as Y, pooled and within each switch of stage From (AMIBySwitch: for stages 1 and 2
// the source rack, Polarization's AMIByRack). FromRoles and ToRoles are the roles
// (Role) of the switches seen at each stage; FromStagesArrow says the members come
// from stages.arrow. Stages 1 and 2 of a fabric without stages.arrow are
// Polarization's rack and fabric choices, with the same numbers.
type StagePolarization struct {
	From                int      `json:"from"`
	To                  int      `json:"to"`
	FromRoles           []Role   `json:"from_roles"`
	ToRoles             []Role   `json:"to_roles"`
	Flows               float64  `json:"flows"`
	Judged              bool     `json:"judged"`
	Reason              string   `json:"reason,omitempty"`
	AMI                 float64  `json:"ami"`
	AMIEstimate         Estimate `json:"ami_interval"`
	AMIBySwitch         float64  `json:"ami_by_switch"`
	AMIBySwitchEstimate Estimate `json:"ami_by_switch_interval"`
	NMI                 float64  `json:"nmi"`
	NMIBySwitch         float64  `json:"nmi_by_switch"`
	NMINormalization    string   `json:"nmi_normalization"`
	MI                  float64  `json:"mi"`
	ExpectedMI          float64  `json:"expected_mi"`
	HFrom               float64  `json:"h_from"`
	HTo                 float64  `json:"h_to"`
	Switches            int      `json:"switches"`
	FromStagesArrow     bool     `json:"from_stages_arrow"`
}

// MarshalJSON writes undefined (NaN) measures as null.
func (p StagePolarization) MarshalJSON() ([]byte, error) {
	type plain StagePolarization
	return marshalNullNaN(plain(p))
}

// Name is "stage 2 -> 3 (spine -> super-spine)".
func (p *StagePolarization) Name() string {
	name := fmt.Sprintf("stage %d -> %d", p.From, p.To)
	if len(p.FromRoles) > 0 && len(p.ToRoles) > 0 {
		name += fmt.Sprintf(" (%s -> %s)", joinRoles(p.FromRoles), joinRoles(p.ToRoles))
	}
	return name
}

func joinRoles(rs []Role) string {
	s := ""
	for i, r := range rs {
		if i > 0 {
			s += "/"
		}
		s += string(r)
	}
	return s
}

// stagePolarization fills a StagePolarization from the measures of its pair.
func stagePolarization(k int, p Polarization, fromFile bool) StagePolarization {
	return StagePolarization{From: k, To: k + 1, Flows: p.Flows, Judged: p.Judged, Reason: p.Reason,
		AMI: p.AMI, AMIEstimate: p.AMIEstimate, AMIBySwitch: p.AMIByRack, AMIBySwitchEstimate: p.AMIByRackEstimate,
		NMI: p.NMI, NMIBySwitch: p.NMIByRack, NMINormalization: p.NMINormalization, MI: p.MI, ExpectedMI: p.ExpectedMI,
		HFrom: p.HX, HTo: p.HY, Switches: p.Racks, FromStagesArrow: fromFile}
}

// StagePolarizations returns the polarization of every pair of consecutive ECMP
// stages that some flow made both choices of, in stage order, without intervals;
// role names the switches' roles (nil: no roles).
func (ft *FlowTable) StagePolarizations(role func(NodeID) Role) []StagePolarization {
	st := &ft.Stages
	out := []StagePolarization{}
	for _, k := range st.pairs() {
		l := st.layout(k)
		sp := stagePolarization(k, l.polarization(), st.FromFile)
		if role != nil {
			sp.FromRoles, sp.ToRoles = st.roles(k, role), st.roles(k+1, role)
		}
		out = append(out, sp)
	}
	return out
}

// roles returns the distinct roles of the switches at stage k, sorted by name.
func (st *StageTable) roles(k int, role func(NodeID) Role) []Role {
	var rs []Role
	seen := map[NodeID]bool{}
	d := st.Depth
	for i := range st.flows() {
		if st.Member[i*d+k-1] < 0 {
			continue
		}
		n := st.Node[i*d+k-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		if r := role(n); r != "" && !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	slices.Sort(rs)
	return rs
}

// StagePolarizationStat is the bootstrap statistic of the stage pairs (Bootstrap.Run):
// for each pair k of pairs (StageTable pairs, in order) its AMI and its AMI within
// each switch, NaN when the pair is not judged on the run's flows; the per-pair
// tables are updated for the flows that made both choices only.
func (ft *FlowTable) StagePolarizationStat() (pairs []int, stat func() func(w, out []float64)) {
	st := &ft.Stages
	pairs = st.pairs()
	type pairStat struct {
		ps      *polStat
		crossed []int32
	}
	var stats []pairStat
	for _, k := range pairs {
		ps := newPolStat(st.layout(k))
		var crossed []int32
		for i, c := range ps.layout.cell {
			if c >= 0 {
				crossed = append(crossed, int32(i))
			}
		}
		stats = append(stats, pairStat{ps, crossed})
	}
	return pairs, func() func(w, out []float64) {
		cts := make([]*contingency, len(stats))
		conts := make([][]float64, len(stats))
		scratch := make([]float64, 4)
		for j, s := range stats {
			cts[j], conts[j] = s.ps.layout.contingency(), make([]float64, len(s.ps.cont0))
		}
		return func(w, out []float64) {
			for j, s := range stats {
				cont := conts[j]
				copy(cont, s.ps.cont0)
				for _, i := range s.crossed {
					cont[s.ps.layout.cell[i]] += w[i] - 1
				}
				s.ps.measures(cts[j], cont, scratch)
				out[2*j], out[2*j+1] = scratch[0], scratch[1]
			}
		}
	}
}

// stageStatNames names StagePolarizationStat's values.
func stageStatNames(pairs []int) []string {
	var n []string
	for _, k := range pairs {
		n = append(n, fmt.Sprintf("polarization_stages.%d-%d.ami", k, k+1), fmt.Sprintf("polarization_stages.%d-%d.ami_by_switch", k, k+1))
	}
	return n
}
