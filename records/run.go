package records

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tracefabric/tracefabric/internal/atomicfile"
)

// RunFile is the name of the run summary in an output directory.
const RunFile = "run.json"

// ErrIncomplete: run.json says the run did not finish (complete is false): it was
// interrupted, failed or is still running, and its records are partial.
var ErrIncomplete = errors.New("run is incomplete")

// ErrNotRunFile: a run.json that is not one of ours: not a JSON object, or without
// schema_version.
var ErrNotRunFile = errors.New("not a tracefabric run.json")

// Run is run.json: what a replay run did and wrote. Keys are snake_case; times are
// picoseconds, wall time seconds, speeds bits per second, sizes bytes.
type Run struct {
	Version       string   `json:"version"`        // tracefabric version that wrote the run
	SchemaVersion int      `json:"schema_version"` // SchemaVersion of run.json and the record files
	Command       []string `json:"command"`        // the command line, program name first
	Seed          uint64   `json:"seed"`           // the run's seed (docs/model.md#units-and-conventions)
	// HashMethod is the ECMP hash method of the run (the one configured, or this
	// directory's method under --hash all).
	HashMethod HashMethod `json:"hash_method"`
	// Transport is "open" (every captured packet injected at its captured time, whatever
	// the fabric does: senders never slow down or retransmit) or "closed" (TCP and
	// RoCEv2 flows re-sent by simulated senders).
	Transport string `json:"transport"`
	// Options are the replay's own options (the flags of replay run besides the
	// configuration), as the run used them: enough to prepare the same replay again
	// (replay path --run; the trace, if still there, is read again).
	Options RunOptions `json:"options"`
	// Config is the effective configuration (all defaults filled in) as JSON.
	Config json.RawMessage `json:"config"`
	// Topology summarises the simulated Clos.
	Topology Topology `json:"topology"`
	// Trace is the capture summary of `replay inspect --json` plus the replay's own
	// trace counters intra_host and oversize, as JSON.
	Trace json.RawMessage `json:"trace"`
	// Simulation summarises the simulation's totals.
	Simulation Simulation `json:"simulation"`
	// OfferedLoad is the busiest host link's offered load at the run's speedup
	// (docs/model.md#offered-load).
	OfferedLoad *OfferedLoad `json:"offered_load,omitempty"`
	// Replication describes the copies of --replicate (nil without).
	Replication *Replication `json:"replication,omitempty"`
	// HostMapping says where the endpoints went (docs/model.md#host-mapping).
	HostMapping *HostMapping `json:"host_mapping,omitempty"`
	// ClosedLoop says, in a closed-loop run, what became of the trace's flows
	// (docs/model.md#application-model); nil open loop.
	ClosedLoop *ClosedLoop `json:"closed_loop,omitempty"`
	// Events lists what the configuration's Events did, in time order, a flap's
	// downs and ups one by one (docs/records.md#events); absent without events.
	Events []Event `json:"events,omitempty"`
	// PfcWatchdog summarises the PFC watchdog's storms (nil when it is off).
	PfcWatchdog *Watchdog `json:"pfc_watchdog,omitempty"`
	// Deadlocks lists the PFC deadlocks found (cycles of paused ports,
	// docs/model.md#pfc-deadlock), in the order found.
	Deadlocks []Deadlock `json:"deadlocks,omitempty"`
	// Records maps each record file written (ports.arrow, ...) to its row count.
	Records map[string]int64 `json:"records"`
	// Complete is true only in the run.json of a run that finished and committed its
	// output directory.
	Complete bool `json:"complete"`
}

// Event is one event of run.json's events: what happened, when routing caught up, and
// what it cost (docs/records.md#events).
type Event struct {
	Index  int    `json:"index"`  // its entry in the configuration's Events (0-based)
	Cycle  int    `json:"cycle"`  // a flap's cycle (its downs and ups are events of their own), -1 otherwise
	Kind   string `json:"kind"`   // link-down, link-up, switch-down, switch-up, drain, undrain, speed, stall, unstall
	Target string `json:"target"` // the link's two names (patterns) or the node, as written
	TimePs int64  `json:"time_ps"`
	// Links are the link ids it acts on (run.json topology.link_list); Nodes the
	// nodes.
	Links []int32  `json:"links,omitempty"`
	Nodes []string `json:"nodes,omitempty"`
	// LocalRepairPs is when the last switch next to it pruned its lost members (-1:
	// none: not a failure); ReconvergedPs when the last switch installed its routes
	// (-1: routing did not change).
	LocalRepairPs int64 `json:"local_repair_ps"`
	ReconvergedPs int64 `json:"reconverged_ps"`
	// SetsChanged counts the equal-cost sets whose live members it changed;
	// RoutesMoved the (switch, destination host) routes it moved to another set.
	SetsChanged int64 `json:"sets_changed"`
	RoutesMoved int64 `json:"routes_moved"`
	// FlowsMoved counts the flows whose member the set changes moved
	// (docs/model.md#rehashing), summed over the switches; BytesRerouted the frame
	// bytes those flows then sent through the changed sets, until another event
	// moved them.
	FlowsMoved    int64 `json:"flows_moved"`
	BytesRerouted int64 `json:"bytes_rerouted"`
	// Dropped counts the drops of the failure reasons (no-route, link-down,
	// pfc-watchdog) from this event to the next.
	Dropped map[DropReason]int64 `json:"dropped"`
	// After is the load of the sets it changed from its reconvergence to the next
	// event (or the end); nil when it changed no set.
	After *EventAfter `json:"after,omitempty"`
}

// EventAfter is the load of the sets an event changed, after it.
type EventAfter struct {
	FromPs int64      `json:"from_ps"`
	ToPs   int64      `json:"to_ps"`
	Sets   []EventSet `json:"sets"`
	// MostLoaded is the member of those sets that carried the most bytes.
	MostLoaded *EventMember `json:"most_loaded,omitempty"`
}

// EventSet is one set an event changed (loadbalance.arrow's node and set).
type EventSet struct {
	Node    string        `json:"node"`
	Set     int32         `json:"set"`
	Members []EventMember `json:"members"`
}

// EventMember is one member's load after an event.
type EventMember struct {
	Node   string `json:"node"`
	Set    int32  `json:"set"`
	Member int32  `json:"member"`
	Port   int32  `json:"port"`
	Peer   string `json:"peer"`
	Live   bool   `json:"live"`  // at the end of the interval
	Bytes  int64  `json:"bytes"` // frame bytes it carried in the interval
	// Share is Bytes over the set's bytes in the interval (0 when it carried none).
	Share float64 `json:"share"`
}

// Watchdog is run.json's pfc_watchdog: its configuration and every storm.
type Watchdog struct {
	Action            string  `json:"action"`
	DetectionTimePs   int64   `json:"detection_time_ps"`
	RestorationTimePs int64   `json:"restoration_time_ps"`
	Storms            []Storm `json:"storms"`
}

// Storm is one storm the watchdog declared (pfc.arrow storm_detected and
// storm_restored).
type Storm struct {
	Node       string `json:"node"`
	Port       int32  `json:"port"`
	Peer       string `json:"peer"`
	TC         uint8  `json:"tc"`
	DetectedPs int64  `json:"detected_ps"`
	RestoredPs int64  `json:"restored_ps"` // -1: still a storm at the end
	Dropped    int64  `json:"dropped"`     // pfc-watchdog drops at the port and class during it
}

// Deadlock is one PFC deadlock of run.json's deadlocks.
type Deadlock struct {
	// Ports are the cycle's paused egress ports in order: each is paused by the
	// next one's node.
	Ports      []DeadlockPort `json:"ports"`
	TC         uint8          `json:"tc"`
	DetectedPs int64          `json:"detected_ps"`
	ResolvedPs int64          `json:"resolved_ps"` // -1: it lasted to the end
	// Undrained counts the data packets it held at the end: queued at its ports and
	// at the ports its switches paused (0 once resolved).
	Undrained int64 `json:"undrained"`
}

// DeadlockPort is one port of a deadlock's cycle.
type DeadlockPort struct {
	Node string `json:"node"`
	Port int32  `json:"port"`
	Peer string `json:"peer"`
}

// ModeOpen is Run.Transport of an open-loop replay: every captured packet enters its
// source host's NIC at its captured time (divided by the speedup), whatever the fabric
// does; senders never slow down, and dropped packets are not retransmitted.
// ModeClosed is a closed-loop replay's (docs/model.md#closed-loop-transports).
const (
	ModeOpen   = "open"
	ModeClosed = "closed"
)

// RunOptions are run.json's options: how the trace was replayed, defaults filled in.
type RunOptions struct {
	Traces          []string `json:"traces"`             // capture files, absolute paths ("-": standard input)
	Speedup         float64  `json:"speedup"`            // --speedup: capture time is divided by it
	Hosts           string   `json:"hosts"`              // --hosts: subnet, hash or the CSV file's absolute path
	RackPrefix      int      `json:"rack_prefix"`        // --rack-prefix: the subnet mapping's IPv4 prefix length
	RackPrefix6     int      `json:"rack_prefix6"`       // --rack-prefix6: the subnet mapping's IPv6 prefix length
	Family          string   `json:"family"`             // --family: ipv4, ipv6 or all
	Filter          string   `json:"filter"`             // --filter: the filter expression; "" for none
	Oversize        string   `json:"oversize"`           // --oversize: split or drop
	MaxDrainPs      int64    `json:"max_drain_ps"`       // --max-drain: simulated time allowed after the last packet, ps
	LB              string   `json:"lb"`                 // --lb: none or flowlet (Switch.LoadBalancingMethod)
	Hash            string   `json:"hash"`               // the hash method the run used (--hash; this directory's under --hash all)
	ReorderWindowNs int64    `json:"reorder_window_ns"`  // --reorder-window: in-file reordering window (0: default, < 0: off)
	WindowStartNs   int64    `json:"window_start_ns"`    // --start: ns since the epoch if window_absolute, else after the first packet
	WindowAbsolute  bool     `json:"window_absolute"`    // --start was a time of day, not an offset
	WindowNs        int64    `json:"window_duration_ns"` // --duration; 0: to the end
	MaxIdleNs       int64    `json:"max_idle_ns"`        // --max-idle; 0: idle gaps kept
	// Replicate is --replicate: one count of copies for every trace, or one per trace
	// (absent: the capture once); ReplicateJitterNs --replicate-jitter (capture time).
	Replicate         []int `json:"replicate,omitempty"`
	ReplicateJitterNs int64 `json:"replicate_jitter_ns,omitempty"`
	// TargetLoad is --target-load, percent (absent: off): Speedup is then the one the
	// replay found for it.
	TargetLoad float64 `json:"target_load,omitempty"`
}

// Topology is run.json's topology summary: the fabric (docs/records.md#topology).
// Tier is the records' level of a switch (rack: next to hosts, fabric: the level
// above, spine: every level above that); Role is the topology's own name for it
// (rack/fabric/spine for the Clos, leaf, super-spine, ... from a topology file).
type Topology struct {
	Shape     string   `json:"shape"`          // clos, leaf-spine, five-stage, rail-optimized, explicit or hpcc
	File      string   `json:"file,omitempty"` // the topology file, absolute path ("": the configuration's Clos)
	Nodes     int      `json:"nodes"`          // nodes, hosts included
	Links     int      `json:"links"`          // full-duplex links
	Hosts     int      `json:"hosts"`          // hosts
	BDPBytes  int64    `json:"bdp_bytes"`      // fabric BDP (docs/model.md#fabric-bdp), bytes
	BaseRTTPs int64    `json:"base_rtt_ps"`    // base RTT over the longest path (docs/model.md#fabric-bdp), ps
	Switches  []Switch `json:"switches"`       // every switch, in node order
	// LinkList lists every link by id: its two ends (node id, port), speed and delay.
	LinkList []Link `json:"link_list"`
	// WeightedSets are the WCMP sets (docs/model.md#routing): a switch's set (as
	// loadbalance.arrow's node and set) and its members' weights; absent when every
	// set is equal-weight.
	WeightedSets []WeightedSet `json:"weighted_sets,omitempty"`
}

// WeightedSet is one WCMP set of run.json's topology.
type WeightedSet struct {
	Node    int32 `json:"node"`
	Set     int32 `json:"set"`
	Weights []int `json:"weights"`
}

// Switch is one switch's line in run.json: its place in the fabric, its profile,
// and its bandwidth against its switching capacity (docs/model.md#switching-capacity).
type Switch struct {
	Name                 string `json:"name"`
	ID                   int32  `json:"id"` // node id (the records' node)
	Tier                 Tier   `json:"tier"`
	Role                 string `json:"role"`
	Level                int    `json:"level"`                  // hop distance to the nearest host (1: next to hosts)
	Group                string `json:"group,omitempty"`        // the topology's group
	Pod                  int    `json:"pod"`                    // pod (Clos), rail group (rail-optimized); -1 none
	Plane                int    `json:"plane"`                  // spine plane (Clos), rail (rail-optimized); -1 none
	Profile              string `json:"profile,omitempty"`      // switch profile (Switches.NAME); "": Switch
	BandwidthBps         int64  `json:"bandwidth_bps"`          // sum of its port speeds
	SwitchingCapacityBps int64  `json:"switching_capacity_bps"` // configured SwitchingCapacity
	Oversubscribed       bool   `json:"oversubscribed"`         // bandwidth > switching capacity
}

// Link is one full-duplex link of run.json's topology: ends A and B as (node id,
// port), as the records' node and port columns name them.
type Link struct {
	A        int32 `json:"a"`
	APort    int32 `json:"a_port"`
	B        int32 `json:"b"`
	BPort    int32 `json:"b_port"`
	SpeedBps int64 `json:"speed_bps"`
	DelayPs  int64 `json:"delay_ps"`
}

// Threads is run.json's simulation.threads: the partitions asked (--threads) and
// used (1: the sequential engine, Reason says why when more were asked).
type Threads struct {
	Asked  int    `json:"asked"`
	Used   int    `json:"used"`
	Reason string `json:"reason,omitempty"`
}

// Simulation is run.json's simulation summary. Conservation: Injected = Delivered +
// sum(Dropped) + sum(Undrained).
type Simulation struct {
	SimTimePs int64   `json:"sim_time_ps"` // simulated time at the end, ps
	WallS     float64 `json:"wall_s"`      // wall-clock time of the simulation, seconds
	CPUS      float64 `json:"cpu_s"`       // CPU time of the simulation's thread, seconds (0 where unknown)
	// Threads is how the run used --threads (not part of the records' identity:
	// every value gives the same records).
	Threads        *Threads             `json:"threads,omitempty"`
	Events         int64                `json:"events"`           // events executed
	PacketHops     int64                `json:"packet_hops"`      // packets put onto links, control packets included, PFC frames not
	DataPacketHops int64                `json:"data_packet_hops"` // data packets put onto links
	Injected       int64                `json:"injected"`         // packets injected into host NICs
	Delivered      int64                `json:"delivered"`        // packets delivered to their destination host
	Dropped        map[DropReason]int64 `json:"dropped"`          // drop reason -> packets
	LosslessDrops  int64                `json:"lossless_drops"`   // drops of lossless-class packets (headroom drops)
	CEMarked       int64                `json:"ce_marked"`        // packets marked CE by the fabric
	PFCFrames      int64                `json:"pfc_frames"`       // PFC frames sent
	Undrained      map[string]int64     `json:"undrained"`        // node name -> data packets still buffered at the end
	// ControlPackets counts the control packets closed-loop receivers generated, by
	// kind (ack, cnp, nak); each generated = delivered + dropped + undrained.
	ControlPackets map[PacketKind]ControlCount `json:"control_packets"`
	// Retransmits and Timeouts sum flows.arrow's columns (closed loop).
	Retransmits int64 `json:"retransmits"`
	Timeouts    int64 `json:"timeouts"`
}

// OfferedLoad is run.json's offered_load: what the replayed packets offer the host
// links at the run's speedup, in 1 ms bins of simulated time (docs/model.md#offered-load).
type OfferedLoad struct {
	BinPs int64 `json:"bin_ps"` // the bin, ps (1 ms)
	Bins  int64 `json:"bins"`   // bins from time 0 to the last injection
	// BusiestLink is the host whose link (in Direction: "tx" from the host, "rx" to it)
	// has the highest p99 ("" when no packet crossed a host link).
	BusiestLink string  `json:"busiest_link"`
	Direction   string  `json:"direction"`
	P99Bps      float64 `json:"p99_bps"`    // its p99 bin (nearest rank over all bins), bit/s
	P99Share    float64 `json:"p99_share"`  // P99Bps over the link's speed
	PeakShare   float64 `json:"peak_share"` // the largest bin of any host link and direction over its speed
	Speedup     float64 `json:"speedup"`    // the run's speedup
}

// Replication is run.json's replication (--replicate, docs/model.md#load-from-a-small-capture).
type Replication struct {
	Copies      int     `json:"copies"`       // N
	PerTrace    []int   `json:"per_trace"`    // copies of each trace, in options.traces order
	AddressStep int     `json:"address_step"` // copy k adds k x step to the leading 8 (IPv4) or 16 (IPv6) address bits
	OffsetsNs   []int64 `json:"offsets_ns"`   // per copy, its time offset (capture time, ns)
	RackShift   []int   `json:"rack_shift"`   // per copy, the racks its hosts are rotated by
	Packets     int64   `json:"packets"`      // packets of every copy handed to the injector
}

// HostMapping is run.json's host_mapping: the endpoints per rack.
type HostMapping struct {
	Mode      string `json:"mode"`       // subnet, spread, hash or the CSV file's absolute path
	Endpoints int    `json:"endpoints"`  // endpoints of the trace the mapping placed
	RacksUsed int    `json:"racks_used"` // racks with an endpoint of a simulated flow
	HostsUsed int    `json:"hosts_used"` // hosts with an endpoint of a simulated flow
	// Subnet, for the subnet mapping: its groups, those moved whole to another rack
	// than their own and those split over several racks.
	Subnet *SubnetGroups `json:"subnet,omitempty"`
	// Racks lists every rack in order with its hosts and the endpoints of the run's
	// flows on it (copies of --replicate included).
	Racks []MappedRack `json:"racks"`
	// Warning is the warning the mapping drew when it leaves the fabric unused ("" if
	// none).
	Warning string `json:"warning,omitempty"`
}

// SubnetGroups are the subnet mapping's groups (docs/model.md#host-mapping).
type SubnetGroups struct {
	Groups int `json:"groups"`
	Moved  int `json:"moved"`
	Split  int `json:"split"`
}

// MappedRack is one rack of host_mapping.racks.
type MappedRack struct {
	Name      string `json:"name"`
	Hosts     int    `json:"hosts"`      // hosts of the rack
	Endpoints int    `json:"endpoints"`  // distinct addresses of the run's flows on its hosts
	HostsUsed int    `json:"hosts_used"` // its hosts with such an address
}

// ClosedLoop is run.json's closed_loop: the flows of a closed-loop run by what
// became of them. Flows = Closed + ControlOnly + Open + the sum of Fallback.
type ClosedLoop struct {
	Flows int64 `json:"flows"` // flows of the run (flows.arrow's rows)
	// Closed counts the flows re-sent by closed-loop senders (NewReno, DCTCP, DCQCN).
	Closed int64 `json:"closed"`
	// ControlOnly counts the flows left out: every captured packet a control packet
	// (TCP pure ACK, RoCEv2 ACK/NAK/CNP) that the reverse direction's receiver
	// generates itself (the ACKs of a one-way transfer). They have no data.
	ControlOnly int64 `json:"control_only"`
	// Open counts the flows replayed open loop because their protocol has no
	// closed-loop sender (UDP other than RoCEv2, ICMP, ...; TCP or RoCEv2 with
	// Transport.Tcp or Transport.Roce open).
	Open int64 `json:"open"`
	// Fallback counts, by reason, the TCP and RoCEv2 flows replayed open loop
	// because closed loop cannot re-send them (every reason present, 0 included).
	Fallback map[string]int64 `json:"fallback"`
}

// Closed-loop fallback reasons (run.json closed_loop.fallback;
// docs/model.md#application-model).
const (
	// FallbackFragmented: the flow carries IP fragments, which a sender cannot
	// re-send as segments (the rest of each datagram is a flow of its own).
	FallbackFragmented = "fragmented"
	// FallbackControlWithoutSender: the flow has only control packets and the
	// reverse direction has no closed-loop sender whose receiver would generate them.
	FallbackControlWithoutSender = "control-without-sender"
	// FallbackTooManySegments: more segments than a sender numbers (2^31 - 1).
	FallbackTooManySegments = "too-many-segments"
)

// FallbackReasons lists the fallback reasons in documentation order.
var FallbackReasons = []string{FallbackFragmented, FallbackControlWithoutSender, FallbackTooManySegments}

// ControlCount is what became of the control packets of one kind.
type ControlCount struct {
	Generated int64 `json:"generated"`
	Delivered int64 `json:"delivered"`
	Dropped   int64 `json:"dropped"`
	Undrained int64 `json:"undrained"`
}

// DroppedTotal is the sum of Dropped.
func (s *Simulation) DroppedTotal() int64 { return sum(s.Dropped) }

// UndrainedTotal is the sum of Undrained.
func (s *Simulation) UndrainedTotal() int64 { return sum(s.Undrained) }

func sum[K comparable](m map[K]int64) int64 {
	var t int64
	for _, v := range m {
		t += v
	}
	return t
}

// WriteRun writes run as JSON to path, atomically (a temporary file renamed over
// path). It fills in SchemaVersion if zero. Maps are written with sorted keys, so the
// same run gives the same bytes.
func WriteRun(path string, run *Run) error {
	if run.SchemaVersion == 0 {
		run.SchemaVersion = SchemaVersion
	}
	data, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return fmt.Errorf("records: encode %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, append(data, '\n'))
}

// ReadRun reads run.json at path (or path/run.json when path is a directory). It
// refuses a file that is not a tracefabric run.json (ErrNotRunFile), another schema
// version (ErrSchemaVersion) and, returning the decoded run
// along with the error so that callers can say what was done, a run whose complete
// flag is false (ErrIncomplete).
func ReadRun(path string) (*Run, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, RunFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err // *PathError: names the file
	}
	var head struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotRunFile, path, err)
	}
	if head.SchemaVersion == nil {
		return nil, fmt.Errorf("%w: %s has no schema_version", ErrNotRunFile, path)
	}
	if v := *head.SchemaVersion; v < OldestSchemaVersion || v > SchemaVersion {
		return nil, fmt.Errorf("%w: %s: schema_version %d, this build reads %s%s", ErrSchemaVersion, path, v, readableVersions(), versionHint(v))
	}
	run := new(Run)
	if err := json.Unmarshal(data, run); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotRunFile, path, err)
	}
	if !run.Complete {
		return run, fmt.Errorf("%w: %s says complete=false (interrupted or failed; its records are partial)", ErrIncomplete, path)
	}
	return run, nil
}

// versionHint tells what to do about a run of another schema version. Version 1 runs
// (before closed-loop replay added flows.arrow's transport and completion columns
// and drops.arrow's kind) are not read: replaying the trace again is exact and cheap,
// while guessing the missing columns would not be.
func versionHint(v int) string {
	switch {
	case v > 0 && v < OldestSchemaVersion:
		return " (written by an older tracefabric: replay the trace again with this version)"
	case v > SchemaVersion:
		return " (written by a newer tracefabric: analyze it with that version)"
	}
	return ""
}

// readable reports whether a record file's schema_version metadata is one this build
// reads.
func readable(v string) bool {
	n, err := strconv.Atoi(v)
	return err == nil && n >= OldestSchemaVersion && n <= SchemaVersion
}

// readableVersions names the schema versions this build reads ("2 and 3").
func readableVersions() string {
	if OldestSchemaVersion == SchemaVersion {
		return strconv.Itoa(SchemaVersion)
	}
	return fmt.Sprintf("%d to %d", OldestSchemaVersion, SchemaVersion)
}
