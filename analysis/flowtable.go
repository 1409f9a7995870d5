package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/tracefabric/tracefabric/records"
)

// SetDef is one equal-cost set of a FlowTable. Its members are the cells
// Offset .. Offset+Members-1 of the table.
type SetDef struct {
	Node NodeID
	Tier records.Tier
	// Role and Level: the switch's role and level (SetLoad's); "" groups by Tier.
	Role    Role
	Level   int
	Set     int
	Members int
	Offset  int
	// Shares are a WCMP set's expected member shares (SetLoad.Shares); nil: equal.
	Shares []float64
}

// FlowSample is what one flow row contributes to the per-flow statistics.
//
// Rack is the flow's source rack. RackCell and FabricCell are the table cells
// (SetDef.Offset + member) of the member the flow took at its source rack's uplink set
// and at its fabric switch's uplink set, -1 when it did not cross that tier or the tier
// has no set in the table (a single uplink); RackMember and FabricMember are the member
// indices themselves (-1 when the tier was not crossed), the pair polarization looks
// at. Moved says the flow changed member at a set (flows.arrow path_changes > 0:
// flowlets). Packets and Bytes are the flow's injected packets and IPv4 bytes, Dropped
// its dropped packets, Delivered its delivered packets, CE those that arrived CE
// marked, DelayMeanPs their mean one-way delay (ps; ignored when Delivered is 0).
// Transport, Completion and SizeBytes are flows.arrow's: the flow's sender, how it
// ended and its captured size; Data says it has data of its own (size_bytes or
// ideal_fct_ps > 0; not a closed-loop flow whose captured packets were all replaced
// control packets), and then Slowdown is its fct_ps / ideal_fct_ps when it completed
// (SlowdownOf), NaN otherwise (docs/model.md#flow-completion). A flow without Data
// (the zero value) counts in no flow-completion statistic.
type FlowSample struct {
	FirstPs                  int64 // flows.arrow first_ps: its first packet's injection
	Rack                     NodeID
	RackCell, FabricCell     int32
	RackMember, FabricMember int32
	Moved                    bool
	Transport                records.Transport
	Completion               records.Completion
	Data                     bool
	SizeBytes                int64
	Slowdown                 float64
	Packets                  float64
	Bytes                    float64
	Dropped                  float64
	Delivered                float64
	CE                       float64
	DelayMeanPs              float64
}

// CellShare is what one flow contributed to one member of an equal-cost set: frame
// bytes and a count of flows (1 for a flow that stayed on the member).
type CellShare struct {
	Cell  int32
	Bytes float64
	Flows float64
}

// FlowTable is the per-flow view of a run that bootstraps resample: the equal-cost
// sets (all members, idle ones included) with their measured loads, and one
// FlowSample per flow, in flow order.
//
// CellBytes and CellFlows are the measured load of each cell: loadbalance.arrow's
// frame bytes and flows of the member, the numbers the single-run summary uses. Per
// flow, Shares[ShareStart[i]:ShareStart[i+1]] apportion these loads among the flows
// (see Apportion), so that a bootstrap replicate can remove or repeat a flow's share:
// a replicate's load of cell c is CellBytes[c] + sum_i (w_i - 1) * share_i(c), exactly
// the measured load when every weight is 1.
type FlowTable struct {
	Sets      []SetDef
	Flows     []FlowSample
	CellBytes []float64
	CellFlows []float64

	ShareStart []int32
	Shares     []CellShare

	// Stages are the flows' members at every ECMP stage of their paths, in flow order
	// (StagePolarizations); empty for a table filled by hand without them.
	Stages StageTable

	// Fingerprint identifies the flows; zero when unknown (a table filled by hand).
	Fingerprint FlowFingerprint
}

// FlowFingerprint identifies the flows of a run, each part an FNV-1a hash over the
// flows in order: Tuple of each flow's id and 5-tuple, Start of its id and first_ps
// (the first packet's injection time), Size of its id and size_bytes. Replays of one
// trace have the same Tuple; the same Start unless their timing options (speedup,
// idle gaps, window) differ; the same Size when their transport modes are the same
// (an open-loop flow's size counts its captured pure ACKs, which closed loop
// replaces).
type FlowFingerprint struct {
	Tuple, Start, Size uint64
}

// Validate checks that every cell index is inside the table.
func (ft *FlowTable) Validate() error {
	cells := ft.cells()
	for i, f := range ft.Flows {
		for _, c := range [2]int32{f.RackCell, f.FabricCell} {
			if c < -1 || int(c) >= cells {
				return fmt.Errorf("analysis: flow %d: cell %d outside the %d member cells", i, c, cells)
			}
		}
	}
	return nil
}

func (ft *FlowTable) cells() int {
	n := 0
	for _, s := range ft.Sets {
		n = max(n, s.Offset+s.Members)
	}
	return n
}

// Tiers returns the tiers (roles, docs/analysis.md#roles) of the table's sets,
// lowest level first.
func (ft *FlowTable) Tiers() []Role {
	var t []Role
	level := map[Role]int{}
	for _, s := range ft.Sets {
		r := s.role()
		if !slices.Contains(t, r) {
			t = append(t, r)
			level[r] = levelOf(s.Role, s.Level, s.Tier)
		}
	}
	sortRoles(t, func(r Role) int { return level[r] })
	return t
}

// TierLevels returns the level of each tier (role) of the table's sets.
func (ft *FlowTable) TierLevels() map[Role]int {
	level := map[Role]int{}
	for _, s := range ft.Sets {
		level[s.role()] = levelOf(s.Role, s.Level, s.Tier)
	}
	return level
}

// role is the role the set is grouped by.
func (s *SetDef) role() Role { return roleOf(s.Role, s.Tier) }

// frameEstimate is a flow's frame bytes estimated from its IPv4 bytes (18 bytes of
// Ethernet header and FCS per packet): only the proportions between flows of one
// member use it.
func frameEstimate(f *FlowSample) float64 { return f.Bytes + 18*f.Packets }

// Apportion computes Shares: how the measured load of each member (CellBytes,
// CellFlows; when nil, the flows' own IPv4 bytes and counts on their members) divides
// among the flows that crossed it. In each set:
//
//   - a flow that stayed on one member (not Moved: every packet took it, as under a
//     hash) shares that member's bytes in proportion to its estimated frame bytes and
//     counts as one of its flows;
//   - a flow that moved (flowlets) is spread over the set's members in proportion to
//     the load the flows that stayed there do not explain (the residual
//     max(measured - stayed, 0)), bytes and flows alike; with no residual anywhere, it
//     stays on its first member;
//   - every member's shares are then scaled to sum to its measured load.
//
// Under a hash every flow stays and the division follows each flow's bytes; under
// flowlets, where flows.arrow records only a flow's first member, the spread of the
// moved flows is an estimate. Either way the shares of a member sum to its measured
// load, so the resampled loads average the measured ones.
func (ft *FlowTable) Apportion() {
	cells := ft.cells()
	measured := ft.CellBytes != nil
	tb, tf := ft.CellBytes, ft.CellFlows
	if !measured {
		tb, tf = make([]float64, cells), make([]float64, cells)
		for _, f := range ft.Flows {
			for _, c := range [2]int32{f.RackCell, f.FabricCell} {
				if c >= 0 {
					tb[c] += f.Bytes
					tf[c]++
				}
			}
		}
	}
	weight := func(f *FlowSample) float64 {
		if measured {
			return frameEstimate(f)
		}
		return f.Bytes
	}
	setOf := make([]int32, cells)
	for s, def := range ft.Sets {
		for c := def.Offset; c < def.Offset+def.Members; c++ {
			setOf[c] = int32(s)
		}
	}
	// Stayed loads and the moved flows of each set.
	stayedB, stayedF := make([]float64, cells), make([]float64, cells)
	movedIn := make([]int32, len(ft.Sets))
	for i := range ft.Flows {
		f := &ft.Flows[i]
		for _, c := range [2]int32{f.RackCell, f.FabricCell} {
			switch {
			case c < 0:
			case f.Moved:
				movedIn[setOf[c]]++
			default:
				stayedB[c] += weight(f)
				stayedF[c]++
			}
		}
	}
	resB, resF := make([]float64, cells), make([]float64, cells)
	sumResB, sumResF := make([]float64, len(ft.Sets)), make([]float64, len(ft.Sets))
	for c := range cells {
		s := setOf[c]
		resB[c], resF[c] = max(tb[c]-stayedB[c], 0), max(tf[c]-stayedF[c], 0)
		sumResB[s] += resB[c]
		sumResF[s] += resF[c]
	}
	ft.ShareStart = make([]int32, 0, len(ft.Flows)+1)
	ft.Shares = ft.Shares[:0]
	for i := range ft.Flows {
		ft.ShareStart = append(ft.ShareStart, int32(len(ft.Shares)))
		f := &ft.Flows[i]
		for _, c := range [2]int32{f.RackCell, f.FabricCell} {
			if c < 0 {
				continue
			}
			s := setOf[c]
			if !f.Moved || sumResB[s] == 0 && sumResF[s] == 0 {
				ft.Shares = append(ft.Shares, CellShare{Cell: c, Bytes: weight(f), Flows: 1})
				continue
			}
			def := ft.Sets[s]
			for m := def.Offset; m < def.Offset+def.Members; m++ {
				sh := CellShare{Cell: int32(m)}
				if sumResB[s] > 0 {
					sh.Bytes = weight(f) * resB[m] / sumResB[s]
				} else if int32(m) == c {
					sh.Bytes = weight(f)
				}
				if sumResF[s] > 0 {
					sh.Flows = resF[m] / float64(movedIn[s])
				} else if int32(m) == c {
					sh.Flows = 1
				}
				if sh.Bytes > 0 || sh.Flows > 0 {
					ft.Shares = append(ft.Shares, sh)
				}
			}
		}
	}
	ft.ShareStart = append(ft.ShareStart, int32(len(ft.Shares)))
	// Scale each member's shares to its measured load.
	sb, sf := make([]float64, cells), make([]float64, cells)
	for _, sh := range ft.Shares {
		sb[sh.Cell] += sh.Bytes
		sf[sh.Cell] += sh.Flows
	}
	for k := range ft.Shares {
		sh := &ft.Shares[k]
		if sb[sh.Cell] > 0 {
			sh.Bytes *= tb[sh.Cell] / sb[sh.Cell]
		}
		if sf[sh.Cell] > 0 {
			sh.Flows *= tf[sh.Cell] / sf[sh.Cell]
		}
	}
	ft.CellBytes, ft.CellFlows = tb, tf
}

// TierMetricNames are the per-tier metrics of FlowStat, in order.
var TierMetricNames = []string{"max_mean", "cov", "jain", "chi2_p", "idle_fraction"}

// Metric names of the per-flow statistics (FlowStat), as summary.json names them.
const (
	MetricAMI         = "polarization.ami"          // adjusted mutual information of rack and fabric member choices
	MetricAMIByRack   = "polarization.ami_by_rack"  // the same within each source rack
	MetricNMI         = "polarization.nmi"          // normalized mutual information (NMINormalization)
	MetricNMIByRack   = "polarization.nmi_by_rack"  // the same within each source rack
	MetricDrops       = "drops.total"               // dropped packets
	MetricDeliveredCE = "ecn.delivered_ce"          // delivered packets that arrived CE-marked
	MetricCEFraction  = "ecn.delivered_ce_fraction" // their share of the delivered packets
	MetricFlowMeanP99 = "delay.flow_mean_p99_ps"    // 99th percentile over flows of each flow's mean delay, ps
	MetricSlowdownP50 = "fct.slowdown_p50"          // median over the flows with data of fct / ideal fct, an unfinished flow slowest (+Inf)
	MetricSlowdownP99 = "fct.slowdown_p99"          // 99th percentile of the same
	// MetricCompleteFraction is the share of the flows with data that completed.
	MetricCompleteFraction = "fct.complete_fraction"

	tierMetricPrefix  = "imbalance.tiers."
	metricsAfterTiers = 11 // FlowStat's values after the tiers'
)

// Unfinished flows rank worst (docs/analysis.md#flow-completion): in the slowdown
// and flow mean-delay quantiles a flow with data that did not complete counts as
// slower than every completed flow, +Inf, so that a run that leaves flows unfinished
// is never ranked ahead for them; a quantile that falls among them is +Inf
// ("unfinished").

// unfinished reports whether a flow has data and did not complete.
func unfinished(f *FlowSample) bool { return f.Data && f.Completion != records.CompletionComplete }

// slowdownValue is a flow's value in the slowdown quantiles: its slowdown when it
// completed, +Inf when unfinished, NaN (not counted) without data.
func slowdownValue(f *FlowSample) float64 {
	switch {
	case unfinished(f):
		return math.Inf(1)
	case f.Data:
		return f.Slowdown
	}
	return math.NaN()
}

// flowDelayValue is a flow's value in the flow mean-delay quantile: +Inf when
// unfinished, else its mean delay when it delivered a packet, NaN (not counted)
// otherwise.
func flowDelayValue(f *FlowSample) float64 {
	switch {
	case unfinished(f):
		return math.Inf(1)
	case f.Delivered > 0:
		return f.DelayMeanPs
	}
	return math.NaN()
}

// TierMetric is the name of a tier's metric: "imbalance.tiers.<tier>.<metric>".
func TierMetric(tier Role, metric string) string {
	return tierMetricPrefix + tier.String() + "." + metric
}

// FlowStatNames names the values FlowStat computes for the given tiers, in order:
// TierMetric(tier, m) for each tier and TierMetricNames, then MetricAMI,
// MetricAMIByRack, MetricNMI, MetricNMIByRack, MetricDrops, MetricDeliveredCE,
// MetricCEFraction, MetricFlowMeanP99, MetricSlowdownP50, MetricSlowdownP99 and
// MetricCompleteFraction.
func FlowStatNames(tiers []Role) []string {
	var n []string
	for _, t := range tiers {
		for _, m := range TierMetricNames {
			n = append(n, TierMetric(t, m))
		}
	}
	return append(n, MetricAMI, MetricAMIByRack, MetricNMI, MetricNMIByRack, MetricDrops, MetricDeliveredCE, MetricCEFraction, MetricFlowMeanP99,
		MetricSlowdownP50, MetricSlowdownP99, MetricCompleteFraction)
}

// FlowStat returns the statistic a bootstrap resamples, for use with Bootstrap.Run:
// given per-flow weights w it computes FlowStatNames(tiers) in order, each NaN where
// undefined:
//
//   - per tier, from the member loads of the judged sets (JudgedSet, decided once on
//     the measured loads): the byte max/mean, CoV, Jain and idle fraction,
//     traffic-weighted over the sets, and the pooled flow-count chi-square p-value
//     (the numbers of TierImbalance); the loads are the measured ones with each flow's
//     share (Apportion) removed or repeated as its weight says;
//   - polarization (Polarization, its flow minimum decided once on the flows);
//   - drops.total and ecn.delivered_ce: the weighted sums of Dropped and CE;
//     ecn.delivered_ce_fraction: delivered_ce over the weighted delivered packets;
//   - delay.flow_mean_p99_ps: the empirical 99th percentile (stat.Quantile's Empirical
//     rule) over the delivered and the unfinished flows, each counted w times, of each
//     flow's mean delay, an unfinished flow +Inf (flowDelayValue);
//   - fct.slowdown_p50 and fct.slowdown_p99: the empirical median and 99th percentile
//     over the flows with data, each counted w times, of fct_ps / ideal_fct_ps, an
//     unfinished flow +Inf (slowdownValue; docs/analysis.md#flow-completion);
//   - fct.complete_fraction: the completed flows' weight over the flows with data.
//
// With every weight 1 the values are the single-run summary's. Each returned function
// owns its scratch space.
func (ft *FlowTable) FlowStat(tiers []Role) func() func(w, out []float64) {
	if ft.ShareStart == nil {
		ft.Apportion()
	}
	cells := ft.cells()
	tierIdx := map[Role]int{}
	for i, t := range tiers {
		tierIdx[t] = i
	}
	type judgedSet struct {
		tier, off, n int
		shares       []float64
	}
	var sets []judgedSet
	for _, s := range ft.Sets {
		t, ok := tierIdx[s.role()]
		if ok && JudgedSet(ft.CellFlows[s.Offset:s.Offset+s.Members]) {
			sets = append(sets, judgedSet{t, s.Offset, s.Members, s.Shares})
		}
	}
	// Delivered (and unfinished) flows in delay order, flows with data in slowdown
	// order, the unfinished last.
	delayed, delays := ft.ordered(flowDelayValue)
	inDelay := make([]bool, len(ft.Flows))
	for _, i := range delayed {
		inDelay[i] = true
	}
	completed, slowdowns := ft.ordered(slowdownValue)
	var drops0, ce0, del0, data0, done0 float64
	for i := range ft.Flows {
		f := &ft.Flows[i]
		drops0 += f.Dropped
		ce0 += f.CE
		del0 += f.Delivered
		if f.Data {
			data0++
			if !unfinished(f) {
				done0++
			}
		}
	}
	slow := newRankedQuantiles(len(ft.Flows), completed, slowdowns)
	ps := ft.newPolStat()
	pol, cont0 := ps.layout, ps.cont0
	dim := len(tiers)*len(TierMetricNames) + metricsAfterTiers
	return func() func(w, out []float64) {
		bytes := make([]float64, cells)
		flows := make([]float64, cells)
		cont := make([]float64, len(cont0))
		ct := pol.contingency()
		bb := make([][]Balance, len(tiers))
		fb := make([][]Balance, len(tiers))
		groups := make([]float64, len(slow.group0))
		return func(w, out []float64) {
			if len(out) != dim {
				panic("analysis: FlowStat output size mismatch")
			}
			copy(bytes, ft.CellBytes)
			copy(flows, ft.CellFlows)
			copy(cont, cont0)
			drops, ce, del, delivered, complete := drops0, ce0, del0, float64(len(delayed)), float64(len(completed))
			data, done := data0, done0
			copy(groups, slow.group0)
			for i := range ft.Flows {
				d := w[i] - 1
				if d == 0 {
					continue
				}
				f := &ft.Flows[i]
				for _, sh := range ft.Shares[ft.ShareStart[i]:ft.ShareStart[i+1]] {
					bytes[sh.Cell] += d * sh.Bytes
					flows[sh.Cell] += d * sh.Flows
				}
				if c := pol.cell[i]; c >= 0 {
					cont[c] += d
				}
				drops += d * f.Dropped
				ce += d * f.CE
				del += d * f.Delivered
				if inDelay[i] {
					delivered += d
				}
				if r := slow.rank[i]; r >= 0 {
					complete += d
					groups[int(r)/slow.size] += d
				}
				if f.Data {
					data += d
					if !unfinished(f) {
						done += d
					}
				}
			}
			for c := range bytes { // a flow's removal can leave rounding below zero
				bytes[c], flows[c] = max(bytes[c], 0), max(flows[c], 0)
			}
			for t := range tiers {
				bb[t], fb[t] = bb[t][:0], fb[t][:0]
			}
			for _, s := range sets {
				bb[s.tier] = append(bb[s.tier], ImbalanceWeighted(bytes[s.off:s.off+s.n], s.shares))
				fb[s.tier] = append(fb[s.tier], ImbalanceWeighted(flows[s.off:s.off+s.n], s.shares))
			}
			k := 0
			for t := range tiers {
				b, f := SummarizeTier(bb[t], nil), SummarizeTier(fb[t], nil)
				out[k], out[k+1], out[k+2], out[k+3], out[k+4] = b.MaxMean, b.CoV, b.Jain, f.Chi2P, b.IdleFraction
				k += len(TierMetricNames)
			}
			ps.measures(ct, cont, out[k:k+4])
			out[k+4], out[k+5] = drops, ce
			out[k+6] = math.NaN()
			if del > 0 {
				out[k+6] = ce / del
			}
			out[k+7] = tailQuantile(0.99, delayed, delays, w, delivered)
			out[k+8] = slow.quantile(0.5, groups, w, complete)
			out[k+9] = slow.quantile(0.99, groups, w, complete)
			out[k+10] = math.NaN()
			if data > 0 {
				out[k+10] = done / data
			}
		}
	}
}

// polStat is the polarization part of FlowStat: the per-rack contingency layout, its
// counts with every weight 1, and whether the run is judged (decided once).
type polStat struct {
	layout polLayout
	cont0  []float64
	judged bool
}

func (ft *FlowTable) newPolStat() *polStat { return newPolStat(ft.polLayout()) }

func newPolStat(l polLayout) *polStat {
	ps := &polStat{layout: l}
	ps.cont0 = make([]float64, l.groups*l.nx*l.ny)
	for _, c := range l.cell {
		if c >= 0 {
			ps.cont0[c]++
		}
	}
	ps.judged = l.contingency().polarizationFrom(ps.cont0, l.groups, MinPolarizationFlows).Judged
	return ps
}

// measures writes AMI, AMI by rack, NMI and NMI by rack of the weighted counts cont
// into out (NaN when the run is not judged).
func (ps *polStat) measures(ct *contingency, cont, out []float64) {
	p := Polarization{AMI: math.NaN(), AMIByRack: math.NaN(), NMI: math.NaN(), NMIByRack: math.NaN()}
	if ps.judged {
		p = ct.polarizationFrom(cont, ps.layout.groups, 0)
	}
	out[0], out[1], out[2], out[3] = p.AMI, p.AMIByRack, p.NMI, p.NMIByRack
}

// PolarizationNames names PolarizationStat's values.
var PolarizationNames = []string{MetricAMI, MetricAMIByRack, MetricNMI, MetricNMIByRack}

// PolarizationStat is FlowStat's polarization alone (PolarizationNames): the same
// values replicate by replicate (the counts are whole numbers, summed exactly), at a
// fraction of FlowStat's cost: it touches only the flows that crossed both tiers. A
// single run's summary bootstraps it for its intervals.
func (ft *FlowTable) PolarizationStat() func() func(w, out []float64) {
	ps := ft.newPolStat()
	l := ps.layout
	var crossed []int32 // flows that count in a table
	for i, c := range l.cell {
		if c >= 0 {
			crossed = append(crossed, int32(i))
		}
	}
	return func() func(w, out []float64) {
		ct, cont := l.contingency(), make([]float64, len(ps.cont0))
		return func(w, out []float64) {
			copy(cont, ps.cont0)
			for _, i := range crossed {
				cont[l.cell[i]] += w[i] - 1
			}
			ps.measures(ct, cont, out)
		}
	}
}

// FlowMeanP99 is the 99th percentile over the delivered and the unfinished flows of
// each flow's mean delay, an unfinished flow +Inf (FlowStat's delay.flow_mean_p99_ps
// with every weight 1), NaN without one.
func (ft *FlowTable) FlowMeanP99() float64 {
	delayed, delays := ft.ordered(flowDelayValue)
	return tailQuantile(0.99, delayed, delays, nil, float64(len(delayed)))
}

// ordered returns the flows whose value is defined (not NaN), in order of value (ties
// by flow order), and their values in that order.
func (ft *FlowTable) ordered(value func(*FlowSample) float64) (order []int32, values []float64) {
	type kv struct {
		v float64
		i int32
	}
	var kvs []kv
	for i := range ft.Flows {
		if v := value(&ft.Flows[i]); !math.IsNaN(v) {
			kvs = append(kvs, kv{v, int32(i)})
		}
	}
	slices.SortFunc(kvs, func(a, b kv) int {
		if c := cmp.Compare(a.v, b.v); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	order, values = make([]int32, len(kvs)), make([]float64, len(kvs))
	for k, e := range kvs {
		order[k], values[k] = e.i, e.v
	}
	return order, values
}

// rankedQuantiles finds weighted empirical quantiles of per-flow values in time
// independent of the quantile: the flows in value order are cut into groups of size
// consecutive ranks, a replicate sums each group's weight while it visits the flows
// (in flow order, as FlowStat does anyway), and a quantile scans the group sums and
// then one group, not half the flows (the median) one weight lookup at a time.
type rankedQuantiles struct {
	order  []int32   // flows with a value, in value order (ties by flow order)
	values []float64 // their values in that order
	rank   []int32   // per flow, its position in order; -1 without a value
	size   int       // ranks per group
	group0 []float64 // per group, its flows' weight with every weight 1
}

// quantileGroups is how many groups rankedQuantiles cuts the ranks into (at most).
const quantileGroups = 1024

func newRankedQuantiles(n int, order []int32, values []float64) *rankedQuantiles {
	q := &rankedQuantiles{order: order, values: values, rank: make([]int32, n), size: max(1, (len(order)+quantileGroups-1)/quantileGroups)}
	for i := range q.rank {
		q.rank[i] = -1
	}
	q.group0 = make([]float64, (len(order)+q.size-1)/q.size)
	for k, i := range order {
		q.rank[i] = int32(k)
		q.group0[k/q.size]++
	}
	return q
}

// quantile is the empirical p-quantile (stat.Quantile's Empirical rule) of the values,
// flow i weighing w[i], given the replicate's group sums and total weight; NaN when
// the total is 0.
func (q *rankedQuantiles) quantile(p float64, groups, w []float64, total float64) float64 {
	if total <= 0 || len(q.order) == 0 {
		return math.NaN()
	}
	fidx := p * total // as stat.Quantile computes it
	var cum float64   // exact: the weights are integers
	for g, gw := range groups {
		if cum+gw < fidx {
			cum += gw
			continue
		}
		for k := g * q.size; k < min((g+1)*q.size, len(q.order)); k++ {
			cum += w[q.order[k]]
			if cum >= fidx {
				return q.values[k]
			}
		}
	}
	return q.values[len(q.values)-1]
}

// tailQuantile is the empirical p-quantile (stat.Quantile's Empirical rule: the lowest
// value whose cumulative weight reaches p*total) of values, the values of the flows
// order lists in increasing order (values[k] is flow order[k]'s), flow i weighing
// w[i] (nil w: every flow 1), where total is their summed weight; NaN when total is 0. It scans from the
// top, visiting only the flows above the quantile (1% of them for p99), where
// stat.Quantile would scan them all; the weights are integers, so the sums are exact
// and both scans agree.
func tailQuantile(p float64, order []int32, values []float64, w []float64, total float64) float64 {
	if total <= 0 || len(order) == 0 {
		return math.NaN()
	}
	fidx := p * total // as stat.Quantile computes it
	var tail float64  // weight above index k: exact, the weights are integers
	for k := len(order) - 1; k >= 0; k-- {
		wk := 1.0
		if w != nil {
			wk = w[order[k]]
		}
		if wk > 0 && total-tail-wk < fidx { // the cumulative weight below k misses p
			return values[k]
		}
		tail += wk
	}
	return values[0]
}
