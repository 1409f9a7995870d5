package analysis

import (
	"encoding/json"
	"slices"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// Run is one replay run as analysis needs it: what Load reads from a run directory,
// reduced while streaming to sizes that do not grow with the number of packets or
// events (except the per-flow table and the pause intervals). Tests and other callers
// may also fill it by hand.
type Run struct {
	Dir   string  // the run directory
	Info  RunInfo // from run.json
	Nodes Nodes   // node names by NodeID (the records' node dictionary)
	// Roles are the nodes' roles by NodeID (docs/analysis.md#roles): a topology
	// file's, else the records tier's name; nil when unknown (a Run filled by hand).
	Roles []Role

	// Queues are ports.arrow's counters per (node, port, tc).
	Queues []QueueCounters
	// PortsPausedPs is the sum of ports.arrow's paused_ps (cross-check of PFC).
	PortsPausedPs int64

	// Sets are loadbalance.arrow's equal-cost sets with their member loads.
	Sets []SetLoad

	// PFC: the pause intervals built from pfc.arrow, their episodes (Storm not yet
	// decided: Analyze applies the threshold; Victims counted at load time), the events
	// read and the resume/expire events that closed nothing.
	Intervals []PauseInterval
	Episodes  []Episode
	VictimIDs [][]uint64 // per episode, up to MaxVictimIDs flow IDs
	// Victims counts distinct storm victims for any storm threshold (nil: count per
	// storm only).
	Victims     *VictimCounter
	PFCEvents   int
	PFCIgnored  int
	NoPathFlows int // flows whose path could not be rebuilt for the victim check
	// OtherSetFlows counts the flows of a run with events whose recorded member is
	// outside their switch's up set (a set an event made): they count at no tier.
	OtherSetFlows int

	// Drops aggregates drops.arrow; TopFlows are the flows with most drops (flows.arrow).
	Drops    DropStats
	TopFlows []FlowDrops

	// Delay holds delay.arrow's histogram per class, ordered by class.
	Delay []DelayClass

	// Buffer holds buffer.arrow per (switch, pool), binned.
	Buffer []BufferSeries

	// ECNOverTime is the CE fraction over time from packets.arrow, nil without it.
	ECNOverTime *ECNSeries

	// ClosedLoop holds a closed-loop run's transport records (transport.arrow and
	// run.json's counts); nil for an open-loop run.
	ClosedLoop *ClosedLoop

	// Flows is the per-flow table (flows.arrow) that polarization and comparisons use.
	Flows FlowTable
	// Messages are messages.arrow's rows (docs/model.md#messages); HasMessages is
	// false for a run directory without the file (replay always writes it; analyze then
	// reports the slowdown per direction only).
	Messages    []MessageSample
	HasMessages bool
	// FlowTotals sums flows.arrow.
	FlowTotals FlowTotals

	// Failures is what the run's events, PFC watchdog and deadlock detection did
	// (nil without any).
	Failures *Failures
	// Events are run.json's events (the changed sets' members after each, for
	// Compare's imbalance after an event).
	Events []records.Event
}

// MaxVictimIDs is how many victim flow IDs Load keeps per episode.
const MaxVictimIDs = 100

// TimeBins is the number of equal time bins of the series over the simulated time
// (drops, buffer, ECN, pause timeline).
const TimeBins = 200

// RunInfo is what run.json says about a run.
type RunInfo struct {
	Version       string                       `json:"version"`
	Method        string                       `json:"hash_method"`
	Seed          uint64                       `json:"seed"`
	SimPs         int64                        `json:"sim_time_ps"`
	Injected      int64                        `json:"injected"`
	Delivered     int64                        `json:"delivered"`
	Dropped       map[records.DropReason]int64 `json:"dropped"`
	LosslessDrops int64                        `json:"lossless_drops"`
	CEMarked      int64                        `json:"ce_marked"`
	PFCFrames     int64                        `json:"pfc_frames"`
	Undrained     int64                        `json:"undrained"`
	TracePackets  int64                        `json:"trace_packets"`
	TraceFlows    int64                        `json:"trace_flows"`
	// TraceIPv4 and TraceIPv6 are the trace's packets of each family (run.json
	// trace.ipv4_packets, trace.ipv6_packets): the family mix. NotInjected lists, by
	// reason, the trace packets that did not enter the fabric as captured
	// (records.TraceNotInjected).
	TraceIPv4   int64                 `json:"trace_ipv4_packets"`
	TraceIPv6   int64                 `json:"trace_ipv6_packets"`
	NotInjected []records.NotInjected `json:"not_injected"`
	// Transport is how senders behaved (records.ModeOpen: every packet re-injected
	// at its captured time); Options the replay's options; Command its command line.
	Transport string             `json:"transport"`
	Options   records.RunOptions `json:"options"`
	Command   []string           `json:"command"`
	// Config is run.json's effective configuration and Topology its topology summary,
	// as recorded (for the report's fabric description; not repeated in summary.json).
	Config   json.RawMessage  `json:"-"`
	Topology records.Topology `json:"-"`
	// MTUBytes is the configuration's Switch.Mtu (bytes; 0 when unknown).
	MTUBytes int64 `json:"-"`
	Complete bool  `json:"complete"`
	// OfferedLoad is run.json's offered_load (the busiest host link's offered load in
	// 1 ms bins, docs/model.md#offered-load), nil when the run.json has none (older
	// runs).
	OfferedLoad *records.OfferedLoad `json:"offered_load,omitempty"`
	// ClosedLoopFlows is run.json's closed_loop: what became of a closed-loop run's
	// flows (re-sent, control only, open loop, and the fallbacks to open loop by
	// reason; docs/model.md#application-model); nil open loop.
	ClosedLoopFlows *records.ClosedLoop `json:"closed_loop,omitempty"`
	// HostMapping is run.json's host_mapping: the endpoints per rack and the mapping's
	// warning (docs/model.md#host-mapping); nil for runs that predate it.
	HostMapping *records.HostMapping `json:"host_mapping,omitempty"`
	// Replication is run.json's replication (--replicate), nil without.
	Replication *records.Replication `json:"replication,omitempty"`
	// IdleGaps is run.json's trace.idle_gaps: what --max-idle took out of the
	// capture's timeline (nil when the run.json does not say).
	IdleGaps *IdleGaps `json:"idle_gaps,omitempty"`
	// IntraHost counts the replayed packets whose two ends mapped to one host (run.json
	// trace.intra_host): they never entered the fabric.
	IntraHost int64 `json:"intra_host"`
}

// IdleGaps is run.json's trace.idle_gaps: every gap without a packet longer than
// MaxIdleS (--max-idle) was shortened to it; Shortened gaps, RemovedS seconds of
// capture time removed in all.
type IdleGaps struct {
	MaxIdleS  float64 `json:"max_idle_s"`
	Shortened int64   `json:"shortened"`
	RemovedS  float64 `json:"removed_s"`
}

// DroppedTotal sums Dropped.
func (r RunInfo) DroppedTotal() int64 {
	var t int64
	for _, v := range r.Dropped {
		t += v
	}
	return t
}

// DelayClass is the delay histogram of one traffic class.
type DelayClass struct {
	TC      uint8
	Buckets []DelayBucket
}

// FlowTotals sums the flow rows.
type FlowTotals struct {
	Flows     int64 `json:"flows"`
	Packets   int64 `json:"packets"`
	Bytes     int64 `json:"bytes"`
	Delivered int64 `json:"delivered"`
	Dropped   int64 `json:"dropped"`
	Undrained int64 `json:"undrained"`
	CEMarked  int64 `json:"ce_marked"`
}

// BufferSeries is one (switch, pool)'s buffer occupancy over time: per time bin
// [TimesPs[b], TimesPs[b] + BinPs) the largest sampled value of each counter (bytes; 0
// for bins without a sample). The bins cover the span of the non-zero samples, padded
// (see FineBins); Analyze puts the series it keeps on common bins, and when their
// activity comes in bursts separated by long idle gaps (a PFC storm at 1 s, an incast
// at 2 s), on one run of bins per burst (Windows of them), with the idle time between
// left out: TimesPs then jumps. StartPs is TimesPs[0]. Peak is the largest
// IngressBytes sample. Node is the switch's name (set when Analyze keeps the series).
// Add, then Finish, then read.
type BufferSeries struct {
	Node     string       `json:"node"`
	Pool     uint8        `json:"pool"`
	StartPs  units.Time   `json:"start_ps"`
	BinPs    units.Time   `json:"bin_ps"`
	Windows  int          `json:"windows"`
	TimesPs  []units.Time `json:"times_ps"`
	Peak     int64        `json:"peak_ingress_bytes"`
	Shared   []int64      `json:"shared_bytes"`
	Headroom []int64      `json:"headroom_bytes"`
	Ingress  []int64      `json:"ingress_bytes"`
	Egress   []int64      `json:"egress_bytes"`

	node  NodeID
	simPs int64
	bins  int
	fine  *fineSeries // rows: shared, headroom, ingress, egress (maxima); nil until a non-zero sample
}

// NewBufferSeries makes an empty series of switch node's pool of a simulation of
// simPs ps, to be binned in at most bins bins.
func NewBufferSeries(node NodeID, pool uint8, simPs int64, bins int) *BufferSeries {
	return &BufferSeries{node: node, Pool: pool, simPs: simPs, bins: max(bins, 1)}
}

// Add records one sample at timePs. All-zero samples only matter as the absence of
// occupancy, which bins without a larger sample show anyway: they are not stored.
func (s *BufferSeries) Add(timePs, shared, headroom, ingress, egress int64) {
	s.Peak = max(s.Peak, ingress)
	if shared == 0 && headroom == 0 && ingress == 0 && egress == 0 {
		return
	}
	if s.fine == nil {
		s.fine = newFineSeries(4, true)
	}
	b := s.fine.index(timePs)
	for r, v := range [4]int64{shared, headroom, ingress, egress} {
		s.fine.rows[r][b] = max(s.fine.rows[r][b], v)
	}
}

// Finish bins the series over its own samples' span.
func (s *BufferSeries) Finish() {
	if s.fine == nil {
		s.setWindows([]window{wholeRun(s.simPs, s.bins)})
		return
	}
	s.setWindows([]window{s.fine.ownWindow(s.simPs, s.bins)})
}

// setWindows bins the series over ws (of one width, in time order, disjoint).
func (s *BufferSeries) setWindows(ws []window) {
	s.StartPs, s.BinPs, s.Windows = units.Time(ws[0].start), units.Time(ws[0].width), len(ws)
	s.TimesPs, s.Shared, s.Headroom, s.Ingress, s.Egress = nil, nil, nil, nil, nil
	for _, w := range ws {
		for b := range w.bins {
			s.TimesPs = append(s.TimesPs, units.Time(w.start+int64(b)*w.width))
		}
		if s.fine == nil {
			z := make([]int64, w.bins)
			s.Shared, s.Headroom, s.Ingress, s.Egress = append(s.Shared, z...), append(s.Headroom, z...), append(s.Ingress, z...), append(s.Egress, z...)
			continue
		}
		s.Shared = append(s.Shared, s.fine.collect(0, w)...)
		s.Headroom = append(s.Headroom, s.fine.collect(1, w)...)
		s.Ingress = append(s.Ingress, s.fine.collect(2, w)...)
		s.Egress = append(s.Egress, s.fine.collect(3, w)...)
	}
}

// MaxBufferWindows is how many bursts of buffer activity Analyze shows apart at most.
const MaxBufferWindows = 3

// commonWindow puts series on common bins over all their non-zero samples (a no-op for
// series read without their fine bins, e.g. from JSON). Bursts of activity separated
// by an idle gap longer than their total span (first to last activity) / 10 get one
// window each (at most MaxBufferWindows: the closest are merged), all of one bin width
// that puts at most TimeBins bins on the longest.
func commonWindow(series []BufferSeries) {
	unit, bins, simPs := int64(1), TimeBins, int64(0)
	for _, s := range series {
		simPs, bins = max(simPs, s.simPs), s.bins
		if s.fine != nil && s.fine.used {
			unit = max(unit, s.fine.width) // widths are powers of ten
		}
	}
	// The active times, at the coarsest fine width.
	var active []int64
	for _, s := range series {
		if s.fine == nil || !s.fine.used {
			continue
		}
		for i := range FineBins {
			if s.fine.rows[0][i] != 0 || s.fine.rows[1][i] != 0 || s.fine.rows[2][i] != 0 || s.fine.rows[3][i] != 0 {
				active = append(active, (s.fine.origin+int64(i))*s.fine.width/unit*unit)
			}
		}
	}
	if len(active) == 0 || bins < 1 {
		return
	}
	slices.Sort(active)
	active = slices.Compact(active)
	type burst struct{ lo, hi int64 }
	bursts := []burst{{active[0], active[0] + unit - 1}}
	gap := (active[len(active)-1] + unit - active[0]) / 10
	for _, t := range active[1:] {
		if last := &bursts[len(bursts)-1]; t-last.hi > gap {
			bursts = append(bursts, burst{t, t + unit - 1})
		} else {
			last.hi = t + unit - 1
		}
	}
	for len(bursts) > MaxBufferWindows { // merge across the shortest gap
		k := 0
		for i := 1; i < len(bursts)-1; i++ {
			if bursts[i+1].lo-bursts[i].hi < bursts[k+1].lo-bursts[k].hi {
				k = i
			}
		}
		bursts[k].hi = bursts[k+1].hi
		bursts = slices.Delete(bursts, k+1, k+2)
	}
	// One width for all: the one the longest burst needs.
	width := int64(0)
	for _, b := range bursts {
		width = max(width, chooseWindow(b.lo, b.hi, unit, bins, simPs).width)
	}
	var ws []window
	for _, b := range bursts {
		w := chooseWindow(b.lo, b.hi, width, bins, simPs)
		if n := len(ws); n > 0 {
			prev := &ws[n-1]
			if end := prev.start + int64(prev.bins)*width; w.start <= end { // paddings meet: one window
				prev.bins = int((max(end, w.start+int64(w.bins)*width) - prev.start) / width)
				continue
			}
		}
		ws = append(ws, w)
	}
	for i := range series {
		if series[i].bins > 0 {
			series[i].setWindows(ws)
		}
	}
}

// role returns node n's role, "" when unknown.
func (r *Run) role(n NodeID) Role {
	if n >= 0 && int(n) < len(r.Roles) {
		return r.Roles[n]
	}
	return ""
}
