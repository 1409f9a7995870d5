package analysis

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/tracefabric/tracefabric/internal/units"
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
// pfc.paused_ps, pfc.storms (start_ps, duration_ps, ports, depth, root), ecn.marked,
// imbalance.tiers.<tier> (max_mean, cov, jain, chi2_p, idle_fraction),
// polarization.nmi, headline.
type Summary struct {
	Dir          string           `json:"dir"`
	Run          RunInfo          `json:"run"`
	Headline     []string         `json:"headline"`
	Warnings     []string         `json:"warnings"`
	Flows        FlowTotals       `json:"flows"`
	Drops        DropStats        `json:"drops"`
	PFC          PFCSummary       `json:"pfc"`
	ECN          ECNSummary       `json:"ecn"`
	Imbalance    *ImbalanceResult `json:"imbalance"`
	Polarization Polarization     `json:"polarization"`
	Delay        DelaySummary     `json:"delay"`
	Buffer       []BufferSeries   `json:"buffer"`
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
	StormDurationPs int64          `json:"storm_duration_ps"`
	Storms          []Episode      `json:"storms"`
	StormVictims    int            `json:"storm_victims"`
	Timeline        *PauseTimeline `json:"timeline"`
}

// PauseTimeline is, per port-class (rows, most paused first) and time bin
// [StartPs + b*BinPs, StartPs + (b+1)*BinPs), the fraction of the bin that
// port-class was paused. The bins cover the span from the first pause to the last
// resume of these port-classes, padded (see FineBins).
type PauseTimeline struct {
	StartPs int64       `json:"start_ps"`
	BinPs   int64       `json:"bin_ps"`
	Ports   []PortClass `json:"ports"`
	Paused  [][]float64 `json:"paused"`
}

// NewPauseTimeline bins the intervals of the given port-classes in at most bins bins
// over the span of those intervals (over simPs when there are none).
func NewPauseTimeline(intervals []PauseInterval, ports []PortClass, simPs int64, bins int) *PauseTimeline {
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
	t := &PauseTimeline{StartPs: w.start, BinPs: w.width, Ports: ports, Paused: make([][]float64, len(ports))}
	for i := range ports {
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
	Marked      int64      `json:"marked"`
	TxPackets   int64      `json:"tx_packets"`
	Fraction    float64    `json:"fraction"`
	DeliveredCE int64      `json:"delivered_ce"`
	Delivered   int64      `json:"delivered"`
	Queues      []QueueECN `json:"queues"`
	OverTime    *ECNSeries `json:"over_time"`
	Note        string     `json:"note,omitempty"`
}

// DelaySummary holds the delay CDF of every class and of all classes together (All,
// from the buckets summed by edges, marked TC 255); P99Ps is All's p99.
type DelaySummary struct {
	Classes []DelayCDF `json:"classes"`
	All     DelayCDF   `json:"all"`
	P99Ps   float64    `json:"p99_ps"`
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
		s.Drops = NewDropCounter(simPs, TimeBins).Result()
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

	opt.progress("ecn", 0, 1)
	s.ECN = ecnSummary(run)

	opt.progress("imbalance", 0, 1)
	s.Imbalance = ImbalanceOf(run.Sets)
	s.Polarization = run.Flows.Polarization()

	opt.progress("delay", 0, 1)
	s.Delay = delaySummary(run.Delay)
	s.Buffer = busiest(run.Buffer, opt.BufferSwitches)
	commonWindow(s.Buffer)

	s.Warnings = append(s.Warnings, crossCheck(run, s)...)
	s.Headline = headline(s)
	opt.progress("done", 1, 1)
	return s, nil
}

func pfcSummary(run *Run, simPs int64, opt Options) PFCSummary {
	p := PFCSummary{Events: run.PFCEvents, IgnoredEvents: run.PFCIgnored, PauseIntervals: len(run.Intervals),
		StormDurationPs: opt.StormDurationPs, Storms: []Episode{}, Episodes: len(run.Episodes)}
	p.Ports = PauseStats(run.Intervals, simPs)
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
	if run.Victims != nil {
		p.StormVictims = run.Victims.Distinct(opt.StormDurationPs)
	}
	ports := make([]PortClass, 0, min(len(p.Ports), opt.TimelinePorts))
	for _, pp := range p.Ports[:min(len(p.Ports), opt.TimelinePorts)] {
		ports = append(ports, pp.PortClass)
	}
	p.Timeline = NewPauseTimeline(run.Intervals, ports, simPs, TimeBins)
	return p
}

func ecnSummary(run *Run) ECNSummary {
	e := ECNSummary{DeliveredCE: run.FlowTotals.CEMarked, Delivered: run.FlowTotals.Delivered, OverTime: run.ECNOverTime}
	for _, q := range run.Queues {
		e.Marked += q.ECNMarked
		if q.Tier != "host" {
			e.TxPackets += q.TxPackets
		}
	}
	if e.TxPackets > 0 {
		e.Fraction = float64(e.Marked) / float64(e.TxPackets)
	}
	e.Queues = ECNByQueue(run.Queues)
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
	merged := map[[2]int64]int64{}
	for _, c := range classes {
		d.Classes = append(d.Classes, NewDelayCDF(c.TC, c.Buckets))
		for _, b := range c.Buckets {
			merged[[2]int64{b.LoPs, b.HiPs}] += b.Packets
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
	return d
}

// busiest returns the series of the k switches with the highest peak ingress
// occupancy (all their pools), busiest first.
func busiest(series []BufferSeries, k int) []BufferSeries {
	peak := map[string]int64{}
	for _, s := range series {
		peak[s.Node] = max(peak[s.Node], s.Peak)
	}
	nodes := make([]string, 0, len(peak))
	for n, p := range peak {
		if p > 0 {
			nodes = append(nodes, n)
		}
	}
	sort.Slice(nodes, func(i, j int) bool {
		if peak[nodes[i]] != peak[nodes[j]] {
			return peak[nodes[i]] > peak[nodes[j]]
		}
		return nodes[i] < nodes[j]
	})
	rank := map[string]int{}
	for i, n := range nodes[:min(k, len(nodes))] {
		rank[n] = i
	}
	out := []BufferSeries{}
	for _, s := range series {
		if _, ok := rank[s.Node]; ok {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if rank[out[i].Node] != rank[out[j].Node] {
			return rank[out[i].Node] < rank[out[j].Node]
		}
		return out[i].Pool < out[j].Pool
	})
	return out
}

// Polarization returns the NMI of the flows' rack and fabric member choices (flows that
// crossed both tiers), pooled and per source rack.
func (ft *FlowTable) Polarization() Polarization {
	l := ft.polLayout()
	counts := make([]float64, l.groups*l.nx*l.ny)
	for _, c := range l.cell {
		if c >= 0 {
			counts[c]++
		}
	}
	return polarizationFrom(counts, l.groups, l.nx, l.ny, make([]float64, l.nx*l.ny), nil)
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
	if run.PortsPausedPs != 0 && run.PortsPausedPs != s.PFC.PausedPs {
		w = append(w, fmt.Sprintf("pause intervals total %d ps, ports.arrow paused_ps sums to %d ps", s.PFC.PausedPs, run.PortsPausedPs))
	}
	if run.PFCIgnored > 0 {
		w = append(w, fmt.Sprintf("%d PFC resume/expire events closed no pause (ignored)", run.PFCIgnored))
	}
	if run.NoPathFlows > 0 {
		w = append(w, fmt.Sprintf("%d flows' paths could not be rebuilt; they are left out of storm victims", run.NoPathFlows))
	}
	return w
}

// headline writes the sentences at the top of the report.
func headline(s *Summary) []string {
	var h []string
	d := s.Drops
	inj := s.Run.Injected
	if inj == 0 {
		inj = s.Flows.Packets
	}
	switch {
	case d.Total == 0:
		h = append(h, "No packets were dropped.")
	default:
		line := fmt.Sprintf("%s packets dropped%s: %s.", units.FormatCount(d.Total), pctOf(d.Total, inj, " of %s injected"), byReason(d.ByReason))
		if d.Lossless > 0 {
			line += fmt.Sprintf(" %s lossless (headroom) drop%s: the lossless class's headroom is undersized.", units.FormatCount(d.Lossless), plural(int(d.Lossless)))
		} else {
			line += " No lossless (headroom) drops."
		}
		h = append(h, line)
	}
	p := s.PFC
	switch {
	case p.PauseIntervals == 0:
		h = append(h, "No PFC pauses.")
	default:
		classes := "port-classes"
		if p.PausedPorts == 1 {
			classes = "port-class"
		}
		line := fmt.Sprintf("PFC paused %s %s in %s interval%s, %s paused in total (summed over port-classes), longest interval %s;",
			units.FormatCount(int64(p.PausedPorts)), classes, units.FormatCount(int64(p.PauseIntervals)), plural(p.PauseIntervals), units.FormatPs(float64(p.PausedPs)), units.FormatPs(float64(p.LongestPs)))
		if len(p.Storms) == 0 {
			line += fmt.Sprintf(" no storms (no pause spread upstream or lasted %s).", units.FormatPs(float64(p.StormDurationPs)))
		} else {
			deep, long := 0, int64(0)
			for _, e := range p.Storms {
				deep = max(deep, e.Depth)
				long = max(long, e.DurationPs)
			}
			line += fmt.Sprintf(" %s storm%s (deepest %d hop%s, longest %s), %s victim flow%s.", units.FormatCount(int64(len(p.Storms))), plural(len(p.Storms)), deep, plural(deep), units.FormatPs(float64(long)), units.FormatCount(int64(p.StormVictims)), plural(p.StormVictims))
		}
		h = append(h, line)
	}
	if s.Imbalance == nil || len(s.Imbalance.Tiers) == 0 {
		h = append(h, "No equal-cost set carried traffic: no hash imbalance to report.")
	} else {
		worst := ""
		wv := -1.0
		for _, t := range s.Imbalance.TierNames() {
			ti := s.Imbalance.Tiers[t]
			if ti.Sets > 0 && ti.Bytes.Worst.MaxMean > wv {
				worst, wv = t, ti.Bytes.Worst.MaxMean
			}
		}
		if worst == "" {
			h = append(h, "No equal-cost set carried traffic: no hash imbalance to report.")
		} else {
			ti := s.Imbalance.Tiers[worst]
			h = append(h, fmt.Sprintf("Worst ECMP imbalance at the %s tier: set %s carries %.2fx the mean member load in bytes (tier: max/mean %.2f, Jain %.3f, idle members %.0f%%, flow chi-square p = %.3g).",
				worst, ti.Bytes.Worst.MaxMeanSet, ti.Bytes.Worst.MaxMean, ti.MaxMean, ti.Jain, 100*ti.IdleFraction, ti.Chi2P))
		}
	}
	if pol := s.Polarization; pol.Flows > 0 {
		h = append(h, fmt.Sprintf("Polarization between rack and fabric choices: NMI %.3g over %s flows (%s); within each source rack %.3g.", pol.NMI, units.FormatCount(int64(pol.Flows)), polWord(pol.NMI), pol.NMIByRack))
	}
	if s.ECN.Marked == 0 && s.ECN.DeliveredCE == 0 {
		h = append(h, "No packets were ECN-marked.")
	} else {
		h = append(h, fmt.Sprintf("ECN: %s mark%s at %s queue%s; %s of delivered packets arrived CE-marked.", units.FormatCount(s.ECN.Marked), plural(int(s.ECN.Marked)), units.FormatCount(int64(len(s.ECN.Queues))), plural(len(s.ECN.Queues)), pct(s.ECN.DeliveredCE, s.ECN.Delivered)))
	}
	if s.Delay.All.Packets > 0 {
		h = append(h, fmt.Sprintf("One-way delay: p50 %s, p99 %s over %s delivered packets.", units.FormatPs(s.Delay.All.P50Ps), units.FormatPs(s.Delay.All.P99Ps), units.FormatCount(s.Delay.All.Packets)))
	}
	return h
}

// polWord describes an NMI: >= 0.5 strong, >= 0.1 partial, else independent.
func polWord(nmi float64) string {
	switch {
	case nmi >= 0.5:
		return "strongly polarized: the fabric choice follows the rack choice"
	case nmi >= 0.1:
		return "partly polarized"
	default:
		return "independent choices"
	}
}

func byReason(m map[string]int64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %s", units.FormatCount(m[k]), k)
	}
	return strings.Join(parts, ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func pct(a, b int64) string {
	if b == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.3g%%", 100*float64(a)/float64(b))
}

func pctOf(a, b int64, tail string) string {
	if b == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s"+tail+")", pct(a, b), units.FormatCount(b))
}
