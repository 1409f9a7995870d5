package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// Oversize policies (flag --oversize): packets longer than the MTU.
const (
	OversizeSplit = "split"
	OversizeDrop  = "drop"
)

// DefaultMaxDrain is how long the simulation may run after the last injection
// (flag --max-drain, SPEC 5).
const DefaultMaxDrain = units.Second

// ErrInput is wrapped by errors in the run's inputs (traces, host mapping, options):
// the command maps it to exit status 2.
var ErrInput = errors.New("bad input")

// Options configure a replay run.
type Options struct {
	// Traces are the capture files, merged by timestamp.
	Traces []string
	// Config is the validated effective configuration (config.Load).
	Config *config.Config
	// Hosts is the host mapping: "subnet" (default), "hash" or a CSV file (SPEC 5).
	Hosts string
	// RackPrefix is the subnet mapping's grouping prefix length (default 24).
	RackPrefix int
	// Speedup divides capture time: a packet captured at t enters at (t-t0)/Speedup.
	// Default 1; must be > 0.
	Speedup float64
	// Oversize is what to do with packets longer than the MTU: split (default) or drop.
	Oversize string
	// MaxDrain bounds the simulated time after the last injection (default 1 s).
	MaxDrain units.Time
	// RecordPackets writes packets.arrow (one row per simulated packet).
	RecordPackets bool
	// ReorderWindow is ingest's in-file reordering window (0 = default 10 ms).
	ReorderWindow time.Duration
	// Command is the command line recorded in run.json.
	Command []string
	// Version is the tool version recorded in run.json.
	Version string
	// Warn receives warnings (capture oddities, undersized headroom, ...). Nil drops them.
	Warn func(string)
	// Progress, when set, is called about every 64k injected packets and at the end.
	Progress func(Progress)
}

// Progress reports a running replay.
type Progress struct {
	Method   string     // hash method of this run
	Injected int64      // trace packets injected so far
	Total    int64      // IPv4 packets of the trace
	SimTime  units.Time // simulated time
	Done     bool
}

// Prepared is everything a run needs that does not depend on the hash method: the
// trace summary, its first timestamp, the Clos and the host mapping. Prepare once,
// then Run one or more methods (in parallel: a Prepared is read-only).
type Prepared struct {
	Opt     Options
	Summary *ingest.Summary
	Clos    *Clos
	HostMap *HostMap
	T0      int64 // first IPv4 timestamp, ns

	warnOnce   sync.Once
	fileOffset []int64 // records before each file in the merged capture (trace_index)
	// smss is, in a closed-loop run, the largest TCP payload of each flow.
	smss map[ingest.FiveTuple]int32
}

func (o *Options) defaults() error {
	if o.Config == nil {
		c := config.Default()
		o.Config = &c
	}
	if o.Speedup == 0 {
		o.Speedup = 1
	}
	if !(o.Speedup > 0) {
		return fmt.Errorf("%w: --speedup %v must be > 0", ErrInput, o.Speedup)
	}
	switch o.Oversize {
	case "":
		o.Oversize = OversizeSplit
	case OversizeSplit, OversizeDrop:
	default:
		return fmt.Errorf("%w: --oversize %q: want split or drop", ErrInput, o.Oversize)
	}
	if o.MaxDrain == 0 {
		o.MaxDrain = DefaultMaxDrain
	}
	if o.MaxDrain < 0 {
		return fmt.Errorf("%w: --max-drain %v must be >= 0", ErrInput, o.MaxDrain)
	}
	if len(o.Traces) == 0 {
		return fmt.Errorf("%w: no trace file given", ErrInput)
	}
	return nil
}

func (o *Options) ingestOptions() ingest.Options {
	return ingest.Options{ReorderWindow: o.ReorderWindow, Warn: o.Warn}
}

// Prepare reads the traces once (the summary and the endpoints together), builds the
// Clos and maps the endpoints onto its hosts.
func Prepare(opt Options) (*Prepared, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	if err := opt.Config.Validate(); err != nil {
		return nil, err
	}
	// Warnings surface once per run family, here.
	sum, err := ingest.Summarize(opt.Traces, opt.ingestOptions())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if sum.IPv4Packets == 0 {
		return nil, fmt.Errorf("%w: %v: no IPv4 packets to replay", ErrInput, opt.Traces)
	}
	if err := checkTimeRange(opt.Traces, sum.First, sum.Last, opt.Speedup, opt.MaxDrain); err != nil {
		return nil, err
	}
	clos, err := NewClos(opt.Config.Topology)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	hm, err := MapHosts(opt.Hosts, sum.EndpointAddrs, clos.Grid, opt.RackPrefix)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	offsets := make([]int64, len(opt.Traces))
	for i := 1; i < len(offsets); i++ {
		offsets[i] = offsets[i-1] + sum.Files[i-1].Packets
	}
	pr := &Prepared{Opt: opt, Summary: sum, Clos: clos, HostMap: hm, T0: sum.First, fileOffset: offsets}
	if pr.closedLoop() {
		if pr.smss, err = segmentSizes(&pr.Opt, sum.InOrderFiles()); err != nil {
			return nil, err
		}
	}
	return pr, nil
}

// traceJSON is run.json's trace: the inspect summary plus the replay's own counts.
func traceJSON(s *ingest.Summary, t *traceCounts) (json.RawMessage, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["intra_host"] = t.intraHost
	m["oversize"] = map[string]int64{"packets": t.oversize, "split_into": t.oversizePieces, "dropped": t.oversizeDropped}
	m["replayed"] = t.replayed
	if t.closed {
		rp := map[string]int64{}
		for k := replacedTCPAck; k < numReplaced; k++ {
			rp[replacedNames[k]] = t.replaced[k]
		}
		m["replaced"] = rp
	}
	return json.Marshal(m)
}

type traceCounts struct {
	replayed        int64 // trace IPv4 packets read during the run
	intraHost       int64
	oversize        int64 // trace packets longer than the MTU
	oversizePieces  int64 // packets they were split into
	oversizeDropped int64
	closed          bool               // a closed-loop run: replaced is reported
	replaced        [numReplaced]int64 // captured control packets not injected, by kind
}

// methodConfig returns cfg with the hash method replaced when method is not "".
func methodConfig(cfg *config.Config, method string) (*config.Config, error) {
	c := *cfg
	if method == "" {
		return &c, nil
	}
	m, err := ecmp.ParseMethod(method)
	if err != nil {
		return nil, fmt.Errorf("%w: --hash: %w", ErrInput, err)
	}
	c.Switch.EcmpHashMethod = m
	return &c, nil
}

// maxSimTime is the latest simulated time a replay may reach: half of int64
// picoseconds (about 53 days), leaving room for the drain and timers.
const maxSimTime = units.Time(math.MaxInt64 / 2)

// checkTimeRange rejects a capture whose span, divided by speedup, does not fit the
// simulator's picosecond clock (a capture with a years-long gap between two packets,
// say): its times would wrap instead of being replayed.
func checkTimeRange(traces []string, first, last int64, speedup float64, drain units.Time) error {
	spanNs := float64(last) - float64(first)
	simPs := spanNs * 1000 / speedup
	if simPs+float64(drain) < float64(maxSimTime) {
		return nil
	}
	need := math.Ceil(simPs / float64(maxSimTime-drain) * speedup)
	return fmt.Errorf("%w: %v: the capture spans %s (first %s, last %s), %.3g s of simulated time at --speedup %g, beyond the %.0f days the simulator's clock covers: raise --speedup to at least %.0f or cut the capture to the interval of interest (editcap -A/-B)",
		ErrInput, traces, time.Duration(last-first), time.Unix(0, first).UTC().Format(time.RFC3339),
		time.Unix(0, last).UTC().Format(time.RFC3339), simPs/1e12, speedup, float64(maxSimTime)/1e12/86400, need)
}
