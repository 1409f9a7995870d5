package analysis

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// Tables returns the tables behind the figures and report sections of a Summary, for
// tables/<name>.csv: drops_over_time, drops_by, top_flows, pfc_ports, pfc_storms,
// pfc_pause_timeline, buffer_occupancy, ecmp_member_load, ecmp_sets, ecmp_tiers,
// polarization_stages (only for a fabric with ECMP stages beyond the rack and fabric
// choices: a stages.arrow), delay_cdf, ecn_queues, ecn_over_time (only with per-packet records), fct_slowdown
// and transport_events_over_time (closed-loop runs only).
func (s *Summary) Tables() []Table {
	var ts []Table

	r := s.Drops.Rate
	t := Table{Name: "drops_over_time", Header: []string{"start_ps", "end_ps"}}
	for _, reason := range r.Reasons {
		t.Header = append(t.Header, reason.String())
	}
	t.Header = append(t.Header, "total")
	for b := range r.Total {
		row := []string{ft(r.StartPs + units.Time(b)*r.BinPs), ft(r.StartPs + units.Time(b+1)*r.BinPs)}
		for k := range r.Reasons {
			row = append(row, fi(r.Counts[k][b]))
		}
		t.Rows = append(t.Rows, append(row, fi(r.Total[b])))
	}
	ts = append(ts, t)

	t = Table{Name: "drops_by", Header: []string{"dimension", "key", "drops"}}
	for _, d := range []struct {
		name string
		m    map[string]int64
	}{{"reason", Named(s.Drops.ByReason)}, {"node", s.Drops.ByNode}, {"tier", Named(s.Drops.ByTier)}, {"tc", Named(s.Drops.ByTC)}} {
		keys := make([]string, 0, len(d.m))
		for k := range d.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.Rows = append(t.Rows, []string{d.name, k, fi(d.m[k])})
		}
	}
	ts = append(ts, t)

	t = Table{Name: "top_flows", Header: []string{"flow_id", "src", "dst", "proto", "sport", "dport", "tc", "packets", "bytes", "dropped"}}
	for _, f := range s.Drops.TopFlows {
		t.Rows = append(t.Rows, []string{fi(f.FlowID), f.Src, f.Dst, u(f.Proto), u(f.Sport), u(f.Dport), u(f.TC), fi(f.Packets), fi(f.Bytes), fi(f.Dropped)})
	}
	ts = append(ts, t)

	t = Table{Name: "pfc_ports", Header: []string{"node", "port", "tc", "peer", "intervals", "total_ps", "longest_ps", "fraction", "first_ps", "last_end_ps"}}
	for _, p := range s.PFC.Ports {
		t.Rows = append(t.Rows, []string{p.Node, fi(int64(p.Port)), u(p.TC), p.Peer, fi(int64(p.Intervals)), fi(p.TotalPs), fi(p.LongestPs), ff(p.Fraction), fi(p.FirstPs), fi(p.LastEndPs)})
	}
	ts = append(ts, t)

	t = Table{Name: "pfc_storms", Header: []string{"start_ps", "duration_ps", "ports", "depth", "root", "tc", "root_paused", "paused_ps", "victims"}}
	for _, e := range s.PFC.Storms {
		t.Rows = append(t.Rows, []string{fi(e.StartPs), fi(e.DurationPs), fi(int64(e.Ports)), fi(int64(e.Depth)), e.Root, u(e.TC), e.RootPaused.String(), fi(e.PausedPs), fi(int64(e.Victims))})
	}
	ts = append(ts, t)

	t = Table{Name: "pfc_pause_timeline", Header: []string{"node", "port", "tc", "start_ps", "end_ps", "paused_fraction"}}
	if tl := s.PFC.Timeline; tl != nil {
		for i, p := range tl.Ports {
			for b, v := range tl.Paused[i] {
				t.Rows = append(t.Rows, []string{p.Node, fi(int64(p.Port)), u(p.TC), ft(tl.StartPs + units.Time(b)*tl.BinPs), ft(tl.StartPs + units.Time(b+1)*tl.BinPs), ff(v)})
			}
		}
	}
	ts = append(ts, t)

	t = Table{Name: "buffer_occupancy", Header: []string{"node", "pool", "start_ps", "end_ps", "shared_bytes", "headroom_bytes", "ingress_bytes", "egress_bytes"}}
	for _, bs := range s.Buffer {
		for b := range bs.Ingress {
			t.Rows = append(t.Rows, []string{bs.Node, u(bs.Pool), ft(bs.TimesPs[b]), ft(bs.TimesPs[b] + bs.BinPs), fi(bs.Shared[b]), fi(bs.Headroom[b]), fi(bs.Ingress[b]), fi(bs.Egress[b])})
		}
	}
	ts = append(ts, t)

	// judged (as summary.json's): a set with at least MinFlowsPerMember flows per
	// member, a tier with at least one such set; the others' measures are no verdict.
	t = Table{Name: "ecmp_member_load", Header: []string{"node", "tier", "set", "member", "bytes", "flows", "byte_share", "flow_share", "judged"}}
	t2 := Table{Name: "ecmp_sets", Header: []string{"node", "tier", "set", "members", "basis", "total", "max_mean", "cov", "jain", "idle_fraction", "chi2", "chi2_p", "judged"}}
	if s.Imbalance != nil {
		for _, si := range s.Imbalance.Sets {
			judged := strconv.FormatBool(si.Judged)
			for m := range si.BytesLoad {
				t.Rows = append(t.Rows, []string{si.Node, si.Tier.String(), strconv.Itoa(si.Set), strconv.Itoa(m), ff(si.BytesLoad[m]), ff(si.FlowsLoad[m]), ff(share(si.BytesLoad[m], si.Bytes.Total)), ff(share(si.FlowsLoad[m], si.Flows.Total)), judged})
			}
			for _, b := range []struct {
				name string
				b    Balance
			}{{"bytes", si.Bytes}, {"flows", si.Flows}} {
				t2.Rows = append(t2.Rows, []string{si.Node, si.Tier.String(), strconv.Itoa(si.Set), strconv.Itoa(b.b.Members), b.name, ff(b.b.Total), ff(b.b.MaxMean), ff(b.b.CoV), ff(b.b.Jain), ff(b.b.IdleFraction), ff(b.b.Chi2), ff(b.b.Chi2P), judged})
			}
		}
	}
	ts = append(ts, t, t2)

	t = Table{Name: "ecmp_tiers", Header: []string{"tier", "basis", "sets", "max_mean", "cov", "jain", "idle_fraction", "chi2_p", "worst_max_mean", "worst_max_mean_set", "judged"}}
	if s.Imbalance != nil {
		for _, tier := range s.Imbalance.TierNames() {
			ti := s.Imbalance.Tiers[tier]
			for _, b := range []struct {
				name string
				s    TierStats
			}{{"bytes", ti.Bytes}, {"flows", ti.Flows}} {
				t.Rows = append(t.Rows, []string{tier.String(), b.name, strconv.Itoa(b.s.Sets), ff(b.s.MaxMean), ff(b.s.CoV), ff(b.s.Jain), ff(b.s.IdleFraction), ff(b.s.Chi2P), ff(b.s.Worst.MaxMean), b.s.Worst.MaxMeanSet, strconv.FormatBool(ti.Judged)})
			}
		}
	}
	ts = append(ts, t)

	if deepStages(s.PolarizationStages) {
		ts = append(ts, StageTableOf(s.PolarizationStages))
	}

	t = Table{Name: "delay_cdf", Header: []string{"tc", "delay_ps", "fraction"}}
	for _, c := range s.Delay.Classes {
		for _, p := range c.Points {
			t.Rows = append(t.Rows, []string{u(c.TC), ff(p.DelayPs), ff(p.Fraction)})
		}
	}
	ts = append(ts, t)

	t = Table{Name: "ecn_queues", Header: []string{"node", "tier", "port", "tc", "tx_packets", "marked", "fraction"}}
	for _, q := range s.ECN.Queues {
		t.Rows = append(t.Rows, []string{q.Node, q.Tier.String(), fi(int64(q.Port)), u(q.TC), fi(q.TxPackets), fi(q.Marked), ff(q.Fraction)})
	}
	ts = append(ts, t)

	ts = append(ts, SlowdownTable("fct_slowdown", nil, [][]SlowdownRow{s.FCT.Rows}))
	if s.MessageFCT != nil {
		ts = append(ts, SlowdownTable("message_slowdown", nil, [][]SlowdownRow{s.MessageFCT.Rows}))
	}
	if tr := s.Transport; tr != nil && tr.OverTime != nil {
		e := tr.OverTime
		t = Table{Name: "transport_events_over_time", Header: append([]string{"start_ps", "end_ps"}, e.Kinds...)}
		for b := range e.Counts[0] {
			row := []string{ft(e.StartPs + units.Time(b)*e.BinPs), ft(e.StartPs + units.Time(b+1)*e.BinPs)}
			for k := range e.Kinds {
				row = append(row, fi(e.Counts[k][b]))
			}
			t.Rows = append(t.Rows, row)
		}
		ts = append(ts, t)
	}

	if e := s.ECN.OverTime; e != nil {
		t = Table{Name: "ecn_over_time", Header: []string{"start_ps", "end_ps", "delivered", "marked", "fraction"}}
		for b := range e.Delivered {
			t.Rows = append(t.Rows, []string{ft(e.StartPs + units.Time(b)*e.BinPs), ft(e.StartPs + units.Time(b+1)*e.BinPs), fi(e.Delivered[b]), fi(e.Marked[b]), ff(e.Fraction[b])})
		}
		ts = append(ts, t)
	}
	return ts
}

// StageTableOf is the polarization_stages table: one row per pair of consecutive
// ECMP stages (StagePolarization), the roles of each stage's switches joined by
// "/", the AMI and the AMI within each switch of the first stage with their
// interval bounds (empty when undefined or without an interval), the plain NMI, and
// where the members come from (stages.arrow, or flows.arrow's rack_member and
// fabric_member).
func StageTableOf(stages []StagePolarization) Table {
	t := Table{Name: "polarization_stages", Header: []string{"from_stage", "to_stage", "from_roles", "to_roles", "flows", "judged",
		"ami", "ami_lo", "ami_hi", "ami_by_switch", "ami_by_switch_lo", "ami_by_switch_hi", "nmi", "switches", "source"}}
	est := func(e Estimate) []string {
		v, lo, hi := "", "", ""
		if e.Defined() {
			v = ff(e.Value)
		}
		if e.HasCI {
			lo, hi = ff(e.Lo), ff(e.Hi)
		}
		return []string{v, lo, hi}
	}
	for _, sp := range stages {
		source := "flows.arrow"
		if sp.FromStagesArrow {
			source = "stages.arrow"
		}
		row := []string{strconv.Itoa(sp.From), strconv.Itoa(sp.To), joinRoles(sp.FromRoles), joinRoles(sp.ToRoles), ff(sp.Flows), strconv.FormatBool(sp.Judged)}
		row = append(append(append(row, est(sp.AMIEstimate)...), est(sp.AMIBySwitchEstimate)...), ff(sp.NMI), strconv.Itoa(sp.Switches), source)
		t.Rows = append(t.Rows, row)
	}
	return t
}

// deepStages reports whether the stage pairs come from stages.arrow (the fabric has
// ECMP stages beyond the rack and fabric choices).
func deepStages(stages []StagePolarization) bool {
	for _, sp := range stages {
		if sp.FromStagesArrow {
			return true
		}
	}
	return false
}

// SlowdownTable is the flow completion slowdown per transport and size bucket of one
// run (runs nil: no run column) or of several (a first column "run" naming each):
// bucket bounds in bytes (hi_bytes empty for no bound), flows, completed flows and
// the quantiles (empty when no flow of the bucket completed).
func SlowdownTable(name string, runs []string, rows [][]SlowdownRow) Table {
	t := Table{Name: name, Header: []string{"transport", "bucket", "lo_bytes", "hi_bytes", "flows", "complete", "p50", "p95", "p99", "max"}}
	if runs != nil {
		t.Header = append([]string{"run"}, t.Header...)
	}
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return ff(*v)
	}
	for i, rs := range rows {
		for _, r := range rs {
			hi := ""
			if r.HiByte >= 0 {
				hi = fi(r.HiByte)
			}
			row := []string{r.Transport, r.Name, fi(r.LoByte), hi, strconv.Itoa(r.Flows), strconv.Itoa(r.Complete), opt(r.P50), opt(r.P95), opt(r.P99), opt(r.Max)}
			if runs != nil {
				row = append([]string{runs[i]}, row...)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

func share(x, total float64) float64 {
	if total <= 0 {
		return 0
	}
	return x / total
}

func u[T uint8 | uint16](v T) string { return strconv.FormatUint(uint64(v), 10) }

// Named returns a count map keyed by the names of its keys (their String, or the
// decimal number of a class): how counts by reason, tier or class are written.
func Named[K records.DropReason | records.Tier | uint8 | Role](m map[K]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		var name string
		switch k := any(k).(type) {
		case uint8:
			name = strconv.Itoa(int(k))
		case fmt.Stringer:
			name = k.String()
		}
		out[name] += v
	}
	return out
}
