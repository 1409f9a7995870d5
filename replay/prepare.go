package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/ingest/filter"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// Oversize policies (flag --oversize): packets longer than the MTU.
const (
	OversizeSplit = "split"
	OversizeDrop  = "drop"
)

// DefaultMaxDrain is how long the simulation may run after the last injection
// (flag --max-drain, docs/model.md#replay).
const DefaultMaxDrain = units.Second

// ErrInput is wrapped by errors in the run's inputs (traces, host mapping, options):
// the command maps it to exit status 2. Such errors print only their own message.
var ErrInput = errors.New("bad input")

// inputError is an error in the run's inputs: errors.Is(err, ErrInput), without
// "bad input" in its text.
type inputError struct{ err error }

func (e inputError) Error() string        { return e.err.Error() }
func (e inputError) Unwrap() error        { return e.err }
func (e inputError) Is(target error) bool { return target == ErrInput }

// inputErrf formats an input error (with %w for the cause, as fmt.Errorf).
func inputErrf(format string, args ...any) error { return inputError{fmt.Errorf(format, args...)} }

// Options configure a replay run.
type Options struct {
	// Traces are the capture files, merged by timestamp.
	Traces []string
	// Config is the validated effective configuration (config.Load).
	Config *config.Config
	// Hosts is the host mapping: "subnet" (default), "spread", "hash" or a CSV file
	// (docs/model.md#host-mapping).
	Hosts string
	// RackPrefix and RackPrefix6 are the subnet mapping's grouping prefix lengths for
	// IPv4 and IPv6 endpoints (0: 24 and 64).
	RackPrefix, RackPrefix6 int
	// Family, when not 0, replays only the packets of that address family (--family);
	// the others are counted family-filtered.
	Family ipaddr.Family
	// Filter, when not nil, replays only the IP packets it matches (--filter); the
	// others are counted filtered.
	Filter *filter.Filter
	// Speedup divides capture time: a packet captured at t enters at (t-t0)/Speedup.
	// Default 1; must be > 0. With TargetLoad, Prepare replaces it by the speedup it
	// finds.
	Speedup float64
	// Replicate is --replicate: copies of the capture's traffic, one count for every
	// trace or one per trace (nil or [1]: the capture once;
	// docs/model.md#load-from-a-small-capture). ReplicateJitter offsets each copy by a
	// seeded draw in [0, ReplicateJitter) of capture time.
	Replicate       []int
	ReplicateJitter time.Duration
	// TargetLoad, when > 0, is --target-load in percent: Prepare finds the speedup at
	// which the busiest host link's p99 offered load in 1 ms bins is TargetLoad% of
	// its speed (docs/model.md#offered-load).
	TargetLoad float64
	// Oversize is what to do with packets longer than the MTU: split (default) or drop.
	Oversize string
	// MaxDrain bounds the simulated time after the last injection (default 1 s).
	MaxDrain units.Time
	// Threads is --threads: how many partitions the run may use
	// (docs/parallel.md); 0 or 1 runs the sequential engine. The records are the
	// same for any value; what the parallel engine does not handle yet runs
	// sequentially (run.json simulation.threads says why).
	Threads int
	// RecordPackets writes packets.arrow (one row per simulated packet).
	RecordPackets bool
	// ReorderWindow is ingest's in-file reordering window (0 = default 10 ms).
	ReorderWindow time.Duration
	// Window replays only a time window of the merged capture (--start, --duration);
	// the zero Window replays all of it. Packets outside are counted out-of-window.
	Window ingest.Window
	// MaxIdle, when > 0, shortens every idle gap of the merged capture (between two
	// consecutive replayed packets) longer than MaxIdle to MaxIdle (--max-idle).
	MaxIdle time.Duration
	// Strict makes a capture that ends inside a packet an error (--strict).
	Strict bool
	// Cache is the memory the trace may take in Prepare's compact form, bytes
	// (--cache; docs/model.md#one-pass-over-the-capture): a trace that fits is decoded
	// once and every run replays it from memory; a larger one is read again by each
	// run. 0 means DefaultCache (512 MiB), NoCache none (every run reads the capture).
	// Whether the trace is kept at all follows the rule of KeepsTrace.
	Cache int64
	// Runs is how many runs the preparation serves (its Run and the Prepareds derived
	// from it: a sweep's points of one topology); 0 means one. More than one keeps
	// the trace in memory (KeepsTrace).
	Runs int
	// Stdin is what the trace "-" reads (ingest.Options.Stdin).
	Stdin *os.File
	// Context, when not nil, interrupts Prepare and Run once done: they return its
	// error (context.Canceled) after removing their partial output.
	Context context.Context
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
	Total    int64      // trace packets to replay (unicast IP packets of the family in the window)
	SimTime  units.Time // simulated time
	Done     bool
}

// Prepared is everything a run needs that does not depend on the hash method: the
// trace summary, its first timestamp, the fabric and the host mapping. Prepare once,
// then Run one or more methods (in parallel: a Prepared is read-only).
type Prepared struct {
	Opt     Options
	Summary *ingest.Summary
	Topo    *Topology
	HostMap *HostMap
	T0      int64 // the replay's time zero: the first replayed packet's timestamp, ns
	// Idle is what --max-idle removed from the capture's timeline.
	Idle IdleStats

	warnOnce   sync.Once
	intraOnce  sync.Once // the warning that every packet stayed on one host
	fileOffset []int64   // records before each file in the merged capture (trace_index)
	// What the one pass over the capture read (scan.go), shared by the Prepareds
	// derived from this one: the trace's 5-tuples, the TCP and RoCEv2 flows' facts
	// (SMSS, segments, fragments) a closed-loop run needs, and each tuple's hosts
	// under the host mapping (copy 0).
	tuples *tupleTable
	facts  *closedFacts
	hosts  [][2]int32
	// cache, when not nil, holds the trace's packets (the pass kept them, or
	// CacheTrace); lazy is the cache a later pass reads for the derived Prepareds
	// that need one when the pass did not keep it (--target-load).
	cache *traceCache
	lazy  *lazyCache
	// keep: the rule kept the trace in memory (Options.KeepsTrace), up to the limit.
	keep bool
	// repl is --replicate's copies (nil: none).
	repl *replication
	// target is what --target-load found (valid when Opt.TargetLoad > 0).
	target loadResult
}

// TargetLine says what --target-load found ("" without it).
func (pr *Prepared) TargetLine() string {
	if pr.Opt.TargetLoad <= 0 {
		return ""
	}
	return pr.target.describe(pr, pr.Opt.TargetLoad/100)
}

// Copies describes --replicate's copies ("" without).
func (pr *Prepared) Copies() string { return pr.repl.String() }

func (o *Options) defaults() error {
	if o.Config == nil {
		c := config.Default()
		o.Config = &c
	}
	if o.Speedup == 0 {
		o.Speedup = 1
	}
	if !(o.Speedup > 0) {
		return inputErrf("--speedup %v must be > 0", o.Speedup)
	}
	if o.TargetLoad < 0 || math.IsNaN(o.TargetLoad) || math.IsInf(o.TargetLoad, 0) {
		return inputErrf("--target-load %v: want a finite percentage > 0", o.TargetLoad)
	}
	switch o.Oversize {
	case "":
		o.Oversize = OversizeSplit
	case OversizeSplit, OversizeDrop:
	default:
		return inputErrf("--oversize %q: want split or drop", o.Oversize)
	}
	if o.MaxDrain == 0 {
		o.MaxDrain = DefaultMaxDrain
	}
	if o.MaxDrain < 0 {
		return inputErrf("--max-drain %v must be >= 0", o.MaxDrain)
	}
	if len(o.Traces) == 0 {
		return inputErrf("no trace file given")
	}
	return nil
}

func (o *Options) ingestOptions() ingest.Options {
	io := ingest.Options{ReorderWindow: o.ReorderWindow, Warn: o.Warn, Strict: o.Strict, Stdin: o.Stdin,
		Window: o.Window, Context: o.Context, Family: o.Family, Opened: openedHook}
	if o.Filter != nil { // not a nil *Filter in the interface
		io.Filter = o.Filter
	}
	return io
}

// openedHook, when not nil, is told each time a pass opens a capture file
// (ingest.Options.Opened): the tests count the decodes of a run with it.
var openedHook func(path string)

// Prepare reads the traces once (docs/model.md#one-pass-over-the-capture: the
// summary, the endpoints, the idle gaps, the flows' facts and, when it fits in
// Options.Cache, the trace itself), builds the fabric (NewTopology) and maps the
// endpoints onto its hosts.
func Prepare(opt Options) (*Prepared, error) { return prepare(opt, true) }

// PrepareMapping is Prepare without what only a run needs (the trace in memory, the
// idle gaps and the check that the capture fits the simulator's clock): the trace
// summary, the fabric and the host mapping, as `replay path` uses them.
func PrepareMapping(opt Options) (*Prepared, error) { return prepare(opt, false) }

func prepare(opt Options, forRun bool) (*Prepared, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	if err := opt.Config.Validate(); err != nil {
		return nil, err
	}
	if len(opt.Traces) > maxTraces {
		return nil, inputErrf("%d traces: at most %d in one run", len(opt.Traces), maxTraces)
	}
	// The one pass. Warnings surface once per run family, here.
	scanOpt := opt
	if !forRun {
		scanOpt.Cache, scanOpt.TargetLoad = NoCache, 0
	}
	keep := forRun && scanOpt.KeepsTrace()
	if !keep {
		scanOpt.Cache = NoCache
	}
	sc := newScanner(&scanOpt)
	sum, err := ingest.SummarizeVisit(opt.Traces, opt.ingestOptions(), sc)
	if err != nil {
		if interrupted(err) {
			return nil, err
		}
		return nil, inputErrf("%w", err)
	}
	if sum.Unicast == 0 {
		return nil, inputErrf("%s: %s", strings.Join(opt.Traces, ", "), nothingToReplay(sum))
	}
	idle := IdleStats{MaxIdle: opt.MaxIdle}
	if forRun && opt.MaxIdle > 0 {
		idle = sc.idle()
	}
	if sc.cache != nil {
		sc.cache.done()
	}
	if opt.TargetLoad == 0 {
		if err := checkTimeRange(&opt, sum, idle, 0); forRun && err != nil {
			return nil, err
		}
	}
	topo, err := NewTopology(opt.Config)
	if err != nil {
		return nil, inputErrf("%w", err)
	}
	if _, err := planEvents(topo, opt.Config, opt.Speedup); err != nil {
		return nil, err
	}
	hm, err := MapRacks(opt.Hosts, sum.EndpointAddrs, topo.HostRacks, topo, opt.RackPrefix, opt.RackPrefix6)
	if err != nil {
		return nil, inputErrf("%w", err)
	}
	offsets := make([]int64, len(opt.Traces))
	for i := 1; i < len(offsets); i++ {
		offsets[i] = offsets[i-1] + sum.Files[i-1].Packets
	}
	pr := &Prepared{Opt: opt, Summary: sum, Topo: topo, HostMap: hm, T0: sum.FirstUnicast, Idle: idle, fileOffset: offsets,
		tuples: sc.tuples, facts: sc.facts, cache: sc.cache, lazy: &lazyCache{}, keep: keep}
	if pr.hosts, err = tupleHosts(pr); err != nil {
		return nil, err
	}
	if !forRun {
		return pr, nil
	}
	if err := pr.load(); err != nil {
		return nil, err
	}
	if w := hm.Unused(); w != "" && pr.repl == nil && opt.Warn != nil {
		opt.Warn(w)
	}
	return pr, nil
}

// KeepsTrace reports whether the rule of docs/model.md#one-pass-over-the-capture
// keeps the trace in memory (up to CacheLimit) for the run: when the capture cannot
// be read again at the cost of decoding it alone (a compressed file, a named pipe:
// ingest.Rereadable), or the run replays it more than once (--replicate's copies,
// --target-load's search, Runs > 1). Otherwise (one run of plain files) the run
// streams the files a second time on a goroutine of its own, beside the simulation,
// and the memory stays flat in the trace's length.
func (o *Options) KeepsTrace() bool {
	if o.CacheLimit() == 0 && o.TargetLoad == 0 {
		return false
	}
	if o.TargetLoad > 0 || o.Runs > 1 {
		return true
	}
	for _, c := range o.Replicate {
		if c > 1 {
			return true
		}
	}
	iopt := o.ingestOptions()
	for _, t := range o.Traces {
		if !ingest.Rereadable(t, &iopt) {
			return true
		}
	}
	return false
}

// maxTraces is the most capture files of one run (a cached packet's file is 16 bits).
const maxTraces = 1 << 16

// tupleHosts maps each of pr's tuples onto its hosts (copy 0's).
func tupleHosts(pr *Prepared) ([][2]int32, error) {
	hosts := make([][2]int32, len(pr.tuples.first))
	for tid := range hosts {
		a := &pr.tuples.first[tid]
		src, ok1 := pr.HostMap.Host(a.saddr)
		dst, ok2 := pr.HostMap.Host(a.daddr)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("replay: flow %s has an endpoint not in the host map", a.tuple())
		}
		hosts[tid] = [2]int32{src, dst}
	}
	return hosts, nil
}

// load sets up what loads the fabric: --replicate's copies, then the speedup
// --target-load asks for, and checks that the replay fits the simulator's clock.
func (pr *Prepared) load() error {
	var err error
	if pr.repl, err = newReplication(pr, pr.Opt.Replicate, pr.Opt.ReplicateJitter); err != nil {
		return err
	}
	if pr.Opt.TargetLoad > 0 {
		pr.Opt.Speedup = 1
		s, r, err := pr.targetSpeedup(pr.Opt.TargetLoad / 100)
		if err != nil {
			return err
		}
		pr.Opt.Speedup, pr.target = s, r
	}
	return checkTimeRange(&pr.Opt, pr.Summary, pr.Idle, pr.repl.maxOffset())
}

// traceJSON is run.json's trace: the inspect summary plus the replay's own counts.
// Every packet of the capture is replayed or under one reason of skipped (multicast
// and out-of-window included): packets = replayed + the sum of skipped.
func traceJSON(s *ingest.Summary, t *traceCounts, idle IdleStats, t0 int64) (json.RawMessage, error) {
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
	m["t0_ts"] = ingest.FormatTime(t0)
	m["idle_gaps"] = idle.json()
	return json.Marshal(m)
}

type traceCounts struct {
	replayed        int64 // trace IP packets read during the run (copy 0's, with --replicate)
	arrivals        int64 // packets of every copy handed to the injector
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
		return nil, inputErrf("--hash: %w", err)
	}
	c.SetHashMethod(m)
	return &c, nil
}

// maxSimTime is the latest simulated time a replay may reach: half of int64
// picoseconds (about 53 days), leaving room for the drain and timers.
const maxSimTime = units.Time(math.MaxInt64 / 2)

// checkTimeRange rejects a capture whose span (after --max-idle, divided by the
// speedup) does not fit the simulator's picosecond clock (a capture with a
// years-long gap between two packets, a merge of captures taken on different days):
// its times would wrap instead of being replayed. The error suggests --max-idle and
// a window first: --speedup changes the load as well.
func checkTimeRange(opt *Options, sum *ingest.Summary, idle IdleStats, copyOffset int64) error {
	spanNs := float64(sum.MaxUnicast) - float64(sum.FirstUnicast) - float64(idle.RemovedNs) + float64(copyOffset)
	simPs := spanNs * 1000 / opt.Speedup
	if simPs+float64(opt.MaxDrain) < float64(maxSimTime) {
		return nil
	}
	need := math.Ceil(simPs / float64(maxSimTime-opt.MaxDrain) * opt.Speedup)
	span := fmt.Sprintf("spans %s (%s to %s)", units.HumanNanos(sum.MaxUnicast-sum.FirstUnicast),
		time.Unix(0, sum.FirstUnicast).UTC().Format(time.RFC3339), time.Unix(0, sum.MaxUnicast).UTC().Format(time.RFC3339))
	fix := "shorten its idle gaps with --max-idle (e.g. --max-idle 1s)"
	if idle.MaxIdle > 0 {
		span += fmt.Sprintf(", still %s with its %s shortened to --max-idle %s", units.HumanSeconds(spanNs/1e9),
			plural(idle.Gaps, "idle gap"), units.HumanNanos(int64(idle.MaxIdle)))
		fix = "use a shorter --max-idle"
	}
	if opt.Speedup != 1 {
		span += fmt.Sprintf(", %s of simulated time at --speedup %g", units.HumanSeconds(simPs/1e12), opt.Speedup)
	}
	return inputErrf("%s: the capture %s, more than the %s the simulator's clock covers: %s, or replay a window of it with --start and --duration, or raise --speedup to at least %.0f (which raises the load too)",
		strings.Join(opt.Traces, ", "), span, (maxSimTime - opt.MaxDrain).Human(), fix, need)
}

// nothingToReplay says why a summary has no packet to replay.
func nothingToReplay(s *ingest.Summary) string {
	msg := "no IP unicast packets to replay"
	var why []string
	if n := s.Skipped[ingest.SkipFamilyFiltered.String()]; n > 0 {
		why = append(why, plural(n, "packet")+" of the family --family leaves out")
	}
	if n := s.Skipped[ingest.SkipFiltered.String()]; n > 0 {
		why = append(why, plural(n, "packet")+" that --filter leaves out")
	}
	if n := s.Skipped[ingest.SkipMulticast.String()]; n > 0 {
		why = append(why, plural(n, "multicast or broadcast packet"))
	}
	if n := s.Skipped[ingest.SkipOutOfWindow.String()]; n > 0 {
		why = append(why, plural(n, "packet")+" outside the window (--start, --duration)")
	}
	if n := s.NonIPPackets; n > 0 {
		why = append(why, plural(n, "non-IP packet"))
	}
	if len(why) > 0 {
		msg += " (" + strings.Join(why, ", ") + ")"
	}
	return msg
}

// plural writes a count with its noun: "1 gap", "2 gaps".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
