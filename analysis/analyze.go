package analysis

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// Options tunes Analyze and Compare. The zero value means the defaults.
type Options struct {
	// StormDurationPs: an episode lasting at least this long is a storm, ps (the
	// --storm-duration flag: int64 of its units.ParseTime value); <= 0 means
	// DefaultStormDurationPs (1 ms).
	StormDurationPs int64
	// Seed seeds the bootstrap's PCG generators (used as given; DefaultOptions sets 1).
	Seed uint64
	// Bootstrap is the number of bootstrap replicates B; <= 0 means DefaultBootstrap.
	Bootstrap int
	// TopFlows is how many flows the top-flows-by-drops list keeps; <= 0 means 20.
	TopFlows int
	// BufferSwitches is how many of the busiest switches' buffer series the summary
	// keeps (by peak ingress occupancy); <= 0 means 4.
	BufferSwitches int
	// TimelinePorts is how many paused port-classes the pause timeline keeps (most
	// paused first); <= 0 means 40.
	TimelinePorts int
	// Progress, if not nil, is told the stage and progress of long steps.
	Progress func(stage string, done, total int)
	// Partial lets AnalyzeSweep analyze the done points of an incomplete sweep
	// (SweepSummary.NotDone names the others); without it an incomplete sweep is
	// ErrSweepIncomplete.
	Partial bool
}

// DefaultOptions returns the defaults with Seed 1.
func DefaultOptions() Options {
	return Options{StormDurationPs: int64(units.Millisecond), Seed: 1, Bootstrap: DefaultBootstrap, TopFlows: 20, BufferSwitches: 4, TimelinePorts: 40}
}

func (o Options) withDefaults() Options {
	if o.StormDurationPs <= 0 {
		o.StormDurationPs = DefaultStormDurationPs
	}
	if o.Bootstrap <= 0 {
		o.Bootstrap = DefaultBootstrap
	}
	if o.TopFlows <= 0 {
		o.TopFlows = 20
	}
	if o.BufferSwitches <= 0 {
		o.BufferSwitches = 4
	}
	if o.TimelinePorts <= 0 {
		o.TimelinePorts = 40
	}
	return o
}

func (o Options) progress(stage string, done, total int) {
	if o.Progress != nil {
		o.Progress(stage, done, total)
	}
}

// Summary is everything Analyze finds in one run; its JSON is summary.json's body.
// Stable keys: drops.total, drops.lossless, drops.by_reason, pfc.pause_intervals,
// pfc.paused_ps, pfc.storm_count, pfc.storms (start_ps, duration_ps, ports, depth,
// root), ecn.marked, ecn.delivered_ce, ecn.delivered_ce_fraction,
// imbalance.tiers.<tier> (judged, max_mean, cov, jain, chi2_p, idle_fraction),
// polarization.ami, polarization.ami_by_rack (judged, with intervals),
// polarization.nmi, polarization_stages (from, to, roles, ami, ami_by_switch with
// intervals), delay.p99_ps, delay.flow_mean_p99_ps, fct (slowdown_p50,
// slowdown_p99, rows, mtu_bytes, bdp_bytes, flows, complete, by_completion),
// transport (closed loop only, else null: events, cnps_per_flow, rate_cuts_per_flow,
// control_packets, retransmits, timeouts, over_time), bootstrap, headline.
// Undefined measures are null with judged false and a reason.
type Summary struct {
	Dir          string           `json:"dir"`
	Run          RunInfo          `json:"run"`
	Headline     []string         `json:"headline"`
	Warnings     []string         `json:"warnings"`
	Bootstrap    BootstrapInfo    `json:"bootstrap"`
	Flows        FlowTotals       `json:"flows"`
	Drops        DropStats        `json:"drops"`
	PFC          PFCSummary       `json:"pfc"`
	ECN          ECNSummary       `json:"ecn"`
	Imbalance    *ImbalanceResult `json:"imbalance"`
	Polarization Polarization     `json:"polarization"`
	// PolarizationStages is the polarization between every two consecutive ECMP
	// stages of the flows' paths (docs/analysis.md#polarization-between-stages).
	PolarizationStages []StagePolarization `json:"polarization_stages"`
	Delay              DelaySummary        `json:"delay"`
	FCT                FCTSummary          `json:"fct"`
	// MessageFCT is the completion per message (messages.arrow; null for a run
	// without the file): the default slowdown; FCT is per direction.
	MessageFCT *FCTSummary       `json:"message_fct"`
	Transport  *TransportSummary `json:"transport"`
	Buffer     []BufferSeries    `json:"buffer"`
	Congestion Congestion        `json:"congestion"`
	// Failures: the run's events with the drops and pauses around each, the PFC
	// watchdog's storms and the deadlocks (null for a run without any).
	Failures *Failures `json:"failures"`
}

// PFCSummary is the PFC part of a Summary. PausedPs sums the pause intervals'
// durations over all paused port-classes (two ports paused for 1 us each make 2 us).
// Storms lists the storm episodes (an empty list when none); Episodes counts all
// episodes. StormVictims counts the distinct flows caught by at least one storm (each
// storm's Victims counts its own; a Run without a VictimCounter gives their sum).
// Timeline is the pause timeline of the most paused
// port-classes.
type PFCSummary struct {
	Events          int            `json:"events"`
	IgnoredEvents   int            `json:"ignored_events"`
	PauseIntervals  int            `json:"pause_intervals"`
	PausedPs        int64          `json:"paused_ps"`
	PausedPorts     int            `json:"paused_ports"`
	LongestPs       int64          `json:"longest_ps"`
	Ports           []PausedPort   `json:"ports"`
	Episodes        int            `json:"episodes"`
	StormRule       string         `json:"storm_rule"`
	StormDurationPs int64          `json:"storm_duration_ps"`
	StormCount      int            `json:"storm_count"`
	Storms          []Episode      `json:"storms"`
	StormVictims    int            `json:"storm_victims"`
	Timeline        *PauseTimeline `json:"timeline"`
}

// PauseTimeline is, per port-class (rows, most paused first) and time bin
// [StartPs + b*BinPs, StartPs + (b+1)*BinPs), the fraction of the bin that
// port-class was paused. The bins cover the span from the first pause to the last
// resume of these port-classes, padded (see FineBins).
type PauseTimeline struct {
	StartPs units.Time  `json:"start_ps"`
	BinPs   units.Time  `json:"bin_ps"`
	Ports   []PortName  `json:"ports"`
	Paused  [][]float64 `json:"paused"`
}

// NewPauseTimeline bins the intervals of the given port-classes in at most bins bins
// over the span of those intervals (over simPs when there are none), naming them by
// nodes.
func NewPauseTimeline(intervals []PauseInterval, ports []PortClass, nodes Nodes, simPs int64, bins int) *PauseTimeline {
	bins = max(bins, 1)
	row := map[PortClass]int{}
	for i, p := range ports {
		row[p] = i
	}
	lo, hi := int64(-1), int64(0)
	for _, iv := range intervals {
		if _, ok := row[iv.PortClass]; ok && iv.EndPs > iv.StartPs {
			if lo < 0 || iv.StartPs < lo {
				lo = max(iv.StartPs, 0)
			}
			hi = max(hi, iv.EndPs-1)
		}
	}
	w := wholeRun(simPs, bins)
	if lo >= 0 {
		w = chooseWindow(lo, hi, 1, bins, simPs)
	}
	t := &PauseTimeline{StartPs: units.Time(w.start), BinPs: units.Time(w.width), Ports: make([]PortName, len(ports)), Paused: make([][]float64, len(ports))}
	for i, p := range ports {
		t.Ports[i] = nodes.Port(p)
		t.Paused[i] = make([]float64, w.bins)
	}
	for _, iv := range intervals {
		r, ok := row[iv.PortClass]
		if !ok {
			continue
		}
		for b := max((iv.StartPs-w.start)/w.width, 0); b < int64(w.bins); b++ {
			b0 := w.start + b*w.width
			if b0 >= iv.EndPs {
				break
			}
			lo, hi := max(iv.StartPs, b0), min(iv.EndPs, b0+w.width)
			if hi > lo {
				t.Paused[r][b] += float64(hi-lo) / float64(w.width)
			}
		}
	}
	return t
}

// ECNSummary is the ECN part of a Summary. Marked sums ports.arrow's ecn_marked (marks
// applied at egress queues); TxPackets sums the data packets sent by switch ports and
// Fraction = Marked / TxPackets (per packet-hop). DeliveredCE / Delivered (flows.arrow)
// is the share of delivered packets that arrived marked. Queues lists the marking
// queues, highest fraction first. OverTime needs packets.arrow (Note says so when
// absent).
type ECNSummary struct {
	Marked              int64      `json:"marked"`
	TxPackets           int64      `json:"tx_packets"`
	Fraction            float64    `json:"fraction"`
	DeliveredCE         int64      `json:"delivered_ce"`
	Delivered           int64      `json:"delivered"`
	DeliveredCEFraction float64    `json:"delivered_ce_fraction"` // DeliveredCE / Delivered; null without deliveries
	Queues              []QueueECN `json:"queues"`
	OverTime            *ECNSeries `json:"over_time"`
	Note                string     `json:"note,omitempty"`
}

// MarshalJSON writes undefined (NaN) measures as null.
func (e ECNSummary) MarshalJSON() ([]byte, error) {
	type plain ECNSummary
	return marshalNullNaN(plain(e))
}

// DelaySummary holds the delay CDF of the delivered packets of every class and of
// all classes together (All, from the buckets summed by edges, marked TC 255). P99Ps
// is the p99 over the packets injected, a packet not delivered counted as slower
// than every delivered one (+Inf when the p99 falls among them; packetDelayP99;
// null without deliveries). FlowMeanP99Ps is another number: the 99th percentile over
// the delivered and the unfinished flows of each flow's mean one-way delay, an
// unfinished flow +Inf (flows.arrow; FlowStat), null without deliveries. Unfinished
// names those of the two that are +Inf (written null).
type DelaySummary struct {
	Classes       []DelayCDF `json:"classes"`
	All           DelayCDF   `json:"all"`
	P99Ps         float64    `json:"p99_ps"`
	FlowMeanP99Ps float64    `json:"flow_mean_p99_ps"`
	Unfinished    []string   `json:"unfinished"`
}

// MarshalJSON writes undefined (NaN) measures as null.
func (d DelaySummary) MarshalJSON() ([]byte, error) {
	type plain DelaySummary
	return marshalNullNaN(plain(d))
}

// BootstrapInfo says how the summary's intervals were computed: Replicates
// resamples of the flows (seeded with Seed) and the Interval method at Level.
// Interval is the method of every interval of a single run's summary (the AMI's:
// IntervalNormal).
type BootstrapInfo struct {
	Replicates int     `json:"replicates"`
	Seed       uint64  `json:"seed"`
	Level      float64 `json:"level"`
	Interval   string  `json:"interval"`
}

// ErrNoRun is returned for a nil run.
var ErrNoRun = errors.New("analysis: no run")

// Analyze computes the Summary of a run.
func Analyze(run *Run, opt Options) (*Summary, error) {
	if run == nil {
		return nil, ErrNoRun
	}
	opt = opt.withDefaults()
	s := &Summary{Dir: run.Dir, Run: run.Info, Flows: run.FlowTotals, Warnings: []string{}}
	simPs := run.Info.SimPs

	opt.progress("drops", 0, 1)
	s.Drops = run.Drops
	if s.Drops.ByReason == nil {
		s.Drops = NewDropCounter(run.Nodes, simPs, TimeBins).Result()
	}
	s.Drops.TopFlows = run.TopFlows
	if len(s.Drops.TopFlows) > opt.TopFlows {
		s.Drops.TopFlows = s.Drops.TopFlows[:opt.TopFlows]
	}
	if s.Drops.TopFlows == nil {
		s.Drops.TopFlows = []FlowDrops{}
	}

	opt.progress("pfc", 0, 1)
	s.PFC = pfcSummary(run, simPs, opt)
	s.Failures = run.Failures

	opt.progress("ecn", 0, 1)
	s.ECN = ecnSummary(run)

	opt.progress("imbalance", 0, 1)
	s.Imbalance = ImbalanceOf(run.Sets, run.Nodes)
	s.Polarization = run.Flows.Polarization()
	s.PolarizationStages = run.Flows.StagePolarizations(run.role)

	opt.progress("delay", 0, 1)
	s.Delay = delaySummary(run.Delay)
	// A run alone resamples only the polarization measures, whose interval is the
	// normal one (IntervalOf).
	s.Bootstrap = BootstrapInfo{Replicates: opt.Bootstrap, Seed: opt.Seed, Level: 0.95, Interval: IntervalOf(MetricAMI)}

	opt.progress("flow completion", 0, 1)
	s.FCT = run.Flows.FCT(run.Info.MTUBytes, run.Info.Topology.BDPBytes)
	if run.HasMessages {
		m := MessageFCT(run.Messages, run.Info.MTUBytes, run.Info.Topology.BDPBytes)
		s.MessageFCT = &m
	}
	s.Transport = run.ClosedLoop.Summary()
	flowStats(run, s, opt)
	s.Buffer = busiest(run.Buffer, run.Nodes, opt.BufferSwitches)
	commonWindow(s.Buffer)

	s.Warnings = append(s.Warnings, crossCheck(run, s)...)
	s.Congestion = congestion(run, s)
	s.Headline = headline(s)
	opt.progress("done", 1, 1)
	return s, nil
}

func pfcSummary(run *Run, simPs int64, opt Options) PFCSummary {
	p := PFCSummary{Events: run.PFCEvents, IgnoredEvents: run.PFCIgnored, PauseIntervals: len(run.Intervals),
		StormRule: StormRule + " " + StormChainRule, StormDurationPs: opt.StormDurationPs, Storms: []Episode{}, Episodes: len(run.Episodes)}
	p.Ports = PauseStats(run.Intervals, simPs, run.Nodes)
	p.PausedPorts = len(p.Ports)
	for _, pp := range p.Ports {
		p.PausedPs += pp.TotalPs
		p.LongestPs = max(p.LongestPs, pp.LongestPs)
	}
	if p.Ports == nil {
		p.Ports = []PausedPort{}
	}
	for _, e := range run.Episodes {
		e.Storm = e.Depth >= 2 || e.DurationPs >= opt.StormDurationPs
		if e.Storm {
			p.Storms = append(p.Storms, e)
			p.StormVictims += e.Victims
		}
	}
	p.StormCount = len(p.Storms)
	if run.Victims != nil {
		p.StormVictims = run.Victims.Distinct(opt.StormDurationPs)
	}
	ports := make([]PortClass, 0, min(len(p.Ports), opt.TimelinePorts))
	for _, pp := range p.Ports[:min(len(p.Ports), opt.TimelinePorts)] {
		ports = append(ports, pp.Class)
	}
	p.Timeline = NewPauseTimeline(run.Intervals, ports, run.Nodes, simPs, TimeBins)
	return p
}

func ecnSummary(run *Run) ECNSummary {
	e := ECNSummary{DeliveredCE: run.FlowTotals.CEMarked, Delivered: run.FlowTotals.Delivered, OverTime: run.ECNOverTime}
	for _, q := range run.Queues {
		e.Marked += q.ECNMarked
		if q.Tier != records.TierHost {
			e.TxPackets += q.TxPackets
		}
	}
	if e.TxPackets > 0 {
		e.Fraction = float64(e.Marked) / float64(e.TxPackets)
	}
	e.DeliveredCEFraction = math.NaN()
	if e.Delivered > 0 {
		e.DeliveredCEFraction = float64(e.DeliveredCE) / float64(e.Delivered)
	}
	e.Queues = ECNByQueue(run.Queues, run.Nodes)
	if e.Queues == nil {
		e.Queues = []QueueECN{}
	}
	if run.ECNOverTime == nil {
		e.Note = "ECN over time needs per-packet records: replay run --record-packets"
	}
	return e
}

func delaySummary(classes []DelayClass) DelaySummary {
	d := DelaySummary{Classes: []DelayCDF{}}
	merged := map[[2]units.Time]int64{}
	for _, c := range classes {
		d.Classes = append(d.Classes, NewDelayCDF(c.TC, c.Buckets))
		for _, b := range c.Buckets {
			merged[[2]units.Time{b.LoPs, b.HiPs}] += b.Packets
		}
	}
	all := make([]DelayBucket, 0, len(merged))
	for k, n := range merged {
		all = append(all, DelayBucket{k[0], k[1], n})
	}
	sort.Slice(all, func(i, j int) bool {
		return all[i].LoPs < all[j].LoPs || all[i].LoPs == all[j].LoPs && all[i].HiPs < all[j].HiPs
	})
	d.All = NewDelayCDF(255, all)
	d.P99Ps = d.All.P99Ps
	if d.All.Packets == 0 {
		d.P99Ps = math.NaN() // undefined: null, as in a comparison
	}
	return d
}

// packetDelayP99 is the run's delay.p99_ps: the 99th percentile one-way delay over
// the delivered packets (delay.arrow) and those injected but not delivered
// (run.json: injected - delivered; dropped or undrained), which rank slowest: +Inf
// when it falls among them (the rank 0.99 N past the delivered packets), else the
// histogram's quantile at that rank; NaN without a delivered packet.
func packetDelayP99(r *Run) float64 {
	d := delaySummary(r.Delay)
	if d.All.Packets == 0 {
		return math.NaN()
	}
	lost := max(r.Info.Injected-r.Info.Delivered, 0)
	n := float64(d.All.Packets + lost)
	rank := 0.99 * n
	if rank > float64(d.All.Packets) {
		return math.Inf(1)
	}
	var all []DelayBucket
	for _, c := range r.Delay {
		all = append(all, c.Buckets...)
	}
	return DelayQuantile(all, rank/float64(d.All.Packets))
}

// busiest returns the series of the k switches with the highest peak ingress
// occupancy (all their pools), busiest first (ties by name), named by nodes.
func busiest(series []BufferSeries, nodes Nodes, k int) []BufferSeries {
	peak := map[NodeID]int64{}
	for _, s := range series {
		peak[s.node] = max(peak[s.node], s.Peak)
	}
	ids := make([]NodeID, 0, len(peak))
	for n, p := range peak {
		if p > 0 {
			ids = append(ids, n)
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		if peak[ids[i]] != peak[ids[j]] {
			return peak[ids[i]] > peak[ids[j]]
		}
		return nodes.Name(ids[i]) < nodes.Name(ids[j])
	})
	rank := map[NodeID]int{}
	for i, n := range ids[:min(k, len(ids))] {
		rank[n] = i
	}
	out := []BufferSeries{}
	for _, s := range series {
		if _, ok := rank[s.node]; ok {
			s.Node = nodes.Name(s.node)
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if rank[out[i].node] != rank[out[j].node] {
			return rank[out[i].node] < rank[out[j].node]
		}
		return out[i].Pool < out[j].Pool
	})
	return out
}

// flowStats bootstraps the run's polarization (PolarizationStat: the values of the
// comparison's FlowStat, replicate by replicate) for the intervals of its AMIs, and
// takes the flow mean-delay p99.
func flowStats(run *Run, s *Summary, opt Options) {
	s.Delay.FlowMeanP99Ps = run.Flows.FlowMeanP99()
	s.Delay.P99Ps = packetDelayP99(run)
	s.Delay.Unfinished = []string{}
	for _, q := range []struct {
		name string
		v    float64
	}{{"p99_ps", s.Delay.P99Ps}, {"flow_mean_p99_ps", s.Delay.FlowMeanP99Ps}} {
		if math.IsInf(q.v, 1) {
			s.Delay.Unfinished = append(s.Delay.Unfinished, q.name)
		}
	}
	if len(run.Flows.Flows) == 0 {
		return
	}
	bs := Bootstrap{B: opt.Bootstrap, Seed: opt.Seed}
	if opt.Progress != nil {
		bs.Progress = func(done, total int) { opt.Progress("bootstrap", done, total) }
	}
	rep := bs.RunReplicates(len(run.Flows.Flows), len(PolarizationNames), run.Flows.PolarizationStat())
	rep.Methods = intervalMethods(PolarizationNames)
	est := rep.Estimates()
	s.Polarization.AMIEstimate, s.Polarization.AMIByRackEstimate = est[0], est[1]
	for _, e := range []*Estimate{&s.Polarization.AMIEstimate, &s.Polarization.AMIByRackEstimate} {
		if !e.Defined() {
			e.Reason = s.Polarization.Reason
		}
	}
	stageIntervals(run, s, bs)
}

// stageIntervals gives the stage pairs their intervals: bootstrapped over the flows
// with the same seed as the rack and fabric AMI (the same resampled flows) when the
// stages come from stages.arrow; else the only pair is stages 1 and 2, the rack and
// fabric choices, whose intervals are Polarization's.
func stageIntervals(run *Run, s *Summary, bs Bootstrap) {
	sp := s.PolarizationStages
	if len(sp) == 0 {
		return
	}
	byStage := map[int][2]Estimate{}
	if !run.Flows.Stages.FromFile {
		byStage[1] = [2]Estimate{s.Polarization.AMIEstimate, s.Polarization.AMIByRackEstimate}
	} else {
		pairs, stat := run.Flows.StagePolarizationStat()
		names := stageStatNames(pairs)
		rep := bs.RunReplicates(len(run.Flows.Flows), len(names), stat)
		rep.Methods = make([]string, len(names))
		for i := range rep.Methods {
			rep.Methods[i] = IntervalNormal
		}
		est := rep.Estimates()
		for j, k := range pairs {
			byStage[k] = [2]Estimate{est[2*j], est[2*j+1]}
		}
	}
	for i := range sp {
		e, ok := byStage[sp[i].From]
		if !ok {
			continue
		}
		sp[i].AMIEstimate, sp[i].AMIBySwitchEstimate = e[0], e[1]
		for _, e := range []*Estimate{&sp[i].AMIEstimate, &sp[i].AMIBySwitchEstimate} {
			if !e.Defined() {
				e.Reason = sp[i].Reason
			}
		}
	}
}

// crossCheck compares the records with run.json and says where they disagree.
func crossCheck(run *Run, s *Summary) []string {
	var w []string
	if !run.Info.Complete {
		w = append(w, "run.json does not mark the run complete")
	}
	if run.Info.Dropped != nil && run.Info.DroppedTotal() != s.Drops.Total {
		w = append(w, fmt.Sprintf("drops.arrow holds %d drops, run.json says %d", s.Drops.Total, run.Info.DroppedTotal()))
	}
	if run.Info.Dropped != nil && run.Info.LosslessDrops != s.Drops.Lossless {
		w = append(w, fmt.Sprintf("drops.arrow holds %d headroom drops, run.json says %d lossless drops", s.Drops.Lossless, run.Info.LosslessDrops))
	}
	if run.ClosedLoop != nil {
		for k := range records.PacketKind(records.NumPacketKinds) {
			cc, ok := run.ClosedLoop.ControlPackets[k.String()]
			if n := s.Drops.Control[k]; (ok || n != 0) && cc.Dropped != n {
				w = append(w, fmt.Sprintf("drops.arrow holds %d dropped %s packets, run.json says %d", n, k, cc.Dropped))
			}
		}
	}
	if run.PortsPausedPs != 0 && run.PortsPausedPs != s.PFC.PausedPs {
		w = append(w, fmt.Sprintf("pause intervals total %d ps, ports.arrow paused_ps sums to %d ps", s.PFC.PausedPs, run.PortsPausedPs))
	}
	if run.PFCIgnored > 0 {
		w = append(w, fmt.Sprintf("%d PFC resume/expire events closed no pause (ignored)", run.PFCIgnored))
	}
	if run.NoPathFlows > 0 {
		w = append(w, fmt.Sprintf("%d flows' paths could not be rebuilt; they are left out of storm victims", run.NoPathFlows))
	}
	if run.OtherSetFlows > 0 {
		w = append(w, fmt.Sprintf("%d flows took a member of an equal-cost set an event made (flows.arrow records the member, not the set); they count at no tier of the per-flow statistics", run.OtherSetFlows))
	}
	return w
}
