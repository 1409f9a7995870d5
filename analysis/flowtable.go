package analysis

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tracefabric/tracefabric/records"
)

// SetDef is one equal-cost set of a FlowTable. Its members are the cells
// Offset .. Offset+Members-1 of the table.
type SetDef struct {
	Node    NodeID
	Tier    records.Tier
	Set     int
	Members int
	Offset  int
}

// FlowSample is what one flow row contributes to the per-flow statistics.
//
// RackCell and FabricCell are the table cells (SetDef.Offset + member) of the member
// the flow took at its source rack's uplink set and at its fabric switch's uplink set,
// -1 when it did not cross that tier; RackMember and FabricMember are the member
// indices themselves (-1 likewise), the pair polarization looks at. Bytes are the
// flow's IPv4 bytes, Dropped its dropped packets, Delivered its delivered packets and
// DelayMeanPs their mean one-way delay (ps; ignored when Delivered is 0).
type FlowSample struct {
	RackCell, FabricCell     int32
	RackMember, FabricMember int32
	Bytes                    float64
	Dropped                  float64
	Delivered                float64
	DelayMeanPs              float64
}

// FlowTable is the per-flow view of a run that comparisons resample: the equal-cost
// sets (all members, idle ones included) and one FlowSample per flow, in flow order.
type FlowTable struct {
	Sets  []SetDef
	Flows []FlowSample
	// Fingerprint identifies the flows (FNV-1a of each flow's id, packets and bytes, in
	// order); 0 when unknown. Runs of one trace have the same.
	Fingerprint uint64
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

// Tiers returns the tiers of the table's sets, lowest first.
func (ft *FlowTable) Tiers() []records.Tier {
	var t []records.Tier
	for _, s := range ft.Sets {
		if !slices.Contains(t, s.Tier) {
			t = append(t, s.Tier)
		}
	}
	slices.Sort(t)
	return t
}

// TierMetricNames are the per-tier metrics of FlowStats, in order.
var TierMetricNames = []string{"max_mean", "cov", "jain", "chi2_p", "idle_fraction"}

// FlowStatNames names the values FlowStat computes for the given tiers:
// "<tier>.<metric>" for each tier and TierMetricNames, then "polarization.nmi",
// "polarization.nmi_by_rack", "drops.total" and "delay.flow_p99_ps".
func FlowStatNames(tiers []records.Tier) []string {
	var n []string
	for _, t := range tiers {
		for _, m := range TierMetricNames {
			n = append(n, t.String()+"."+m)
		}
	}
	return append(n, "polarization.nmi", "polarization.nmi_by_rack", "drops.total", "delay.flow_p99_ps")
}

// FlowStat returns the statistic a comparison bootstraps, for use with Bootstrap.Run:
// given per-flow weights w it computes FlowStatNames(tiers) in order:
//
//   - per tier, from the member loads summed over the weighted flows: the bytes-based
//     traffic-weighted max/mean, CoV, Jain and idle fraction and the pooled
//     flow-count chi-square p-value (TierImbalance's headline numbers);
//   - polarization.nmi and nmi_by_rack: NMI of (RackMember, FabricMember) over flows
//     with both, pooled and per source rack (see Polarization);
//   - drops.total: the weighted sum of Dropped;
//   - delay.flow_p99_ps: the 99th percentile over delivered packets of their flow's
//     mean delay (each flow counts Delivered times; stat.Quantile, Empirical). Flow
//     rows have no per-packet delays, so this approximates the packet p99 by giving
//     every packet its flow's mean delay; delay.arrow's p99 is exact to a bucket but
//     cannot be resampled by flow.
//
// Each returned function owns its scratch space.
func (ft *FlowTable) FlowStat(tiers []records.Tier) func() func(w, out []float64) {
	cells := ft.cells()
	tierIdx := map[records.Tier]int{}
	for i, t := range tiers {
		tierIdx[t] = i
	}
	setTier := make([]int, len(ft.Sets))
	for i, s := range ft.Sets {
		t, ok := tierIdx[s.Tier]
		if !ok {
			t = -1
		}
		setTier[i] = t
	}
	// Delivered flows in delay order (ties by flow order).
	var delayed []int32
	for i, f := range ft.Flows {
		if f.Delivered > 0 {
			delayed = append(delayed, int32(i))
		}
	}
	slices.SortFunc(delayed, func(a, b int32) int {
		if c := cmp.Compare(ft.Flows[a].DelayMeanPs, ft.Flows[b].DelayMeanPs); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	pol := ft.polLayout()
	dim := len(tiers)*len(TierMetricNames) + 4
	return func() func(w, out []float64) {
		bytes := make([]float64, cells)
		flows := make([]float64, cells)
		cont := make([]float64, pol.groups*pol.nx*pol.ny)
		pooled := make([]float64, pol.nx*pol.ny)
		scratch := make([]float64, pol.nx+pol.ny+pol.nx*pol.ny)
		bb := make([][]Balance, len(tiers))
		fb := make([][]Balance, len(tiers))
		return func(w, out []float64) {
			if len(out) != dim {
				panic("analysis: FlowStat output size mismatch")
			}
			clear(bytes)
			clear(flows)
			clear(cont)
			var drops, delivered float64
			for i := range ft.Flows {
				wi := w[i]
				if wi == 0 {
					continue
				}
				f := &ft.Flows[i]
				if c := f.RackCell; c >= 0 {
					bytes[c] += wi * f.Bytes
					flows[c] += wi
				}
				if c := f.FabricCell; c >= 0 {
					bytes[c] += wi * f.Bytes
					flows[c] += wi
				}
				if c := pol.cell[i]; c >= 0 {
					cont[c] += wi
				}
				drops += wi * f.Dropped
				if f.Delivered > 0 {
					delivered += wi * f.Delivered
				}
			}
			for t := range tiers {
				bb[t], fb[t] = bb[t][:0], fb[t][:0]
			}
			for s, def := range ft.Sets {
				t := setTier[s]
				if t < 0 {
					continue
				}
				bb[t] = append(bb[t], Imbalance(bytes[def.Offset:def.Offset+def.Members]))
				fb[t] = append(fb[t], Imbalance(flows[def.Offset:def.Offset+def.Members]))
			}
			k := 0
			for t := range tiers {
				b := SummarizeTier(bb[t], nil)
				f := SummarizeTier(fb[t], nil)
				out[k], out[k+1], out[k+2], out[k+3], out[k+4] = b.MaxMean, b.CoV, b.Jain, f.Chi2P, b.IdleFraction
				k += 5
			}
			p := polarizationFrom(cont, pol.groups, pol.nx, pol.ny, pooled, scratch)
			out[k], out[k+1] = p.NMI, p.NMIByRack
			out[k+2] = drops
			out[k+3] = tailQuantile(0.99, delayed, ft.Flows, w, delivered)
		}
	}
}

// tailQuantile is the empirical p-quantile (stat.Quantile's Empirical rule: the lowest
// value whose cumulative weight reaches p*total) of the flows' mean delays, each flow
// weighing w[i]*Delivered, where order lists the delivered flows by delay and total is
// their summed weight. It scans from the top, visiting only the flows above the
// quantile (1% of them for p99), where stat.Quantile would scan them all; the weights
// are integers, so the sums are exact and both scans agree.
func tailQuantile(p float64, order []int32, flows []FlowSample, w []float64, total float64) float64 {
	if total <= 0 || len(order) == 0 {
		return 0
	}
	fidx := p * total // as stat.Quantile computes it
	var tail float64  // weight above index k: exact, the weights are integers
	for k := len(order) - 1; k >= 0; k-- {
		i := order[k]
		wk := w[i] * flows[i].Delivered
		if wk > 0 && total-tail-wk < fidx { // the cumulative weight below k misses p
			return flows[i].DelayMeanPs
		}
		tail += wk
	}
	return flows[order[0]].DelayMeanPs
}
