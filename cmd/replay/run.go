package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/tracefabric/tracefabric/cmd/internal/cli"
	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

func newRunCmd() *cobra.Command {
	var (
		cf      configFlags
		rf      replayFlags
		out     string
		asJSON  bool
		opt     replay.Options
		quiet   bool
		exp     exportFlag
		repl    string
		cache   string
		threads int
	)
	cmd := &cobra.Command{
		Use:   "run [flags] TRACE...",
		Short: "Replay captures through the simulated Clos and write Arrow records",
		Long: `run replays the IP packets of the captures (IPv4 and IPv6, or one family with
--family; merged by timestamp; "-" reads
standard input) through the simulated Clos fabric: each packet enters its source
host's NIC at (t - t0)/speedup with its captured size, DSCP, ECN and 5-tuple, and
the fabric's switches buffer, pause (PFC), mark (ECN), drop and spread it over
equal-cost paths. Packets to multicast or broadcast destinations are not simulated
(counted "multicast"). --start and --duration replay a window of the capture;
--max-idle shortens its idle gaps (captures spanning days, merges of captures taken
on different days). The simulation runs until the fabric drains (or --max-drain
after the last packet) and writes into the output directory run.json and the record
files ports, drops, pfc, buffer, loadbalance, flows, delay (and packets with
--record-packets) in Arrow IPC file format (see docs/records.md). The directory
appears only when the run is complete; an interrupted run (Ctrl-C) removes it.

--hash all replays the trace once per hash method, in parallel, into OUT/<method>/
for 'analyze' to compare. --export parquet|csv then writes the record files as
Parquet or CSV too, into OUT/parquet or OUT/csv (each method's, with --hash all):
see 'replay export'.`,
		Example: `  replay run testdata/pcaps/demo.pcap -o out/demo
  replay run capture.pcapng.zst -o out/cmp --hash all
  replay run capture.pcap -c fabric.yaml --set BufferSize=16MiB --lb flowlet --speedup 10
  replay run capture.pcap -o out/closed --transport closed
  replay run week.pcap --max-idle 1s
  replay run week.pcap --start 2024-05-01T12:00:00Z --duration 10min
  replay run testdata/pcaps/demo.pcap -o out/demo --export parquet
  zcat capture.pcap.gz | replay run - -o out/piped`,
		Args:        cli.AtLeastOne("TRACE", "the captures to replay"),
		Annotations: map[string]string{cli.WritesOutputs: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("speedup") && !(opt.Speedup > 0 && !math.IsInf(opt.Speedup, 0)) {
				return usageError{Err: fmt.Errorf("--speedup %v: want a finite number > 0", opt.Speedup)}
			}
			if err := loadFlags(cmd, repl, &opt); err != nil {
				return err
			}
			c, err := parseCache(cache)
			if err != nil {
				return err
			}
			if opt.Cache = c; c == 0 {
				opt.Cache = replay.NoCache
			}
			if err := rf.apply(cmd, &opt); err != nil {
				return err
			}
			if threads < 0 {
				return usageError{Err: fmt.Errorf("--threads %d: want 1 or more (0: the CPUs the process may use)", threads)}
			}
			if opt.Threads = threads; threads == 0 {
				opt.Threads = runtime.GOMAXPROCS(0)
			}
			cfg, err := cf.load(cmd)
			if err != nil {
				return err
			}
			if _, _, err := exp.options(); err != nil {
				return err
			}
			if out == "" {
				base := filepath.Base(args[0])
				if args[0] == ingest.StdinPath {
					base = "stdin"
				}
				for _, ext := range []string{".gz", ".bz2", ".xz", ".zst", ".pcapng", ".pcap", ".cap"} {
					base = strings.TrimSuffix(base, ext)
				}
				out = filepath.Join("out", base)
			}
			methods := []string{""}
			if cf.hash == "all" {
				methods = methods[:0]
				for _, m := range ecmp.AllMethods {
					methods = append(methods, m.String())
				}
			}
			if err := checkOutput(out); err != nil {
				return err
			}
			if opt.Stdin, err = openStdin(args, os.Stdin); err != nil {
				return err
			}
			opt.Traces = args
			opt.Config = cfg
			warn := warnFunc(cmd)
			opt.Warn = warn
			opt.Command = append([]string{"replay"}, os.Args[1:]...)
			opt.Version = version
			opt.Context = cmd.Context()
			opt.Runs = len(methods) // --hash all: the runs share the trace in memory
			stderr := cmd.ErrOrStderr()
			pr, err := replay.Prepare(opt)
			if err != nil {
				return replayError(err)
			}
			if preparedHook != nil {
				preparedHook(pr)
			}
			fmt.Fprintln(stderr, prepareLine(args, pr, cfg))
			if line := pr.TargetLine(); line != "" {
				fmt.Fprintln(stderr, "  "+line)
			}
			analyses := previousAnalyses(out, methods)
			bar := newProgress(stderr, int64(len(methods))*pr.Summary.Unicast, quiet || asJSON)
			pr.Opt.Progress = bar.update
			runs, err := runMethods(pr, out, methods)
			bar.finish()
			if err != nil {
				return replayError(err)
			}
			for _, a := range analyses {
				fmt.Fprintf(stderr, "%s: note: replaced the previous run in %s, with the analysis/ analyze wrote for it (run analyze again)\n", cmd.CommandPath(), a)
			}
			if line := threadsNote(runs); line != "" && cmd.Flags().Changed("threads") {
				fmt.Fprintf(stderr, "%s: note: %s\n", cmd.CommandPath(), line)
			}
			if len(methods) > 1 {
				removeStaleComparison(out, warn)
			}
			stdout := cmd.OutOrStdout()
			if asJSON {
				if err := printRunsJSON(stdout, runs, methods); err != nil {
					return err
				}
				return exp.run(stderr, out) // stdout holds the JSON alone
			}
			for i, r := range runs {
				dir := out
				if methods[i] != "" {
					dir = filepath.Join(out, methods[i])
				}
				printRunSummary(stdout, dir, r)
			}
			return exp.run(stdout, out)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "output directory (default out/<first trace name>); replaced only if it holds a previous run")
	f.BoolVar(&asJSON, "json", false, "print run.json (an object per method with --hash all) instead of the summary")
	f.Float64Var(&opt.Speedup, "speedup", 1, "divide capture time by this factor (> 0; >1 replays faster, raising the load)")
	cli.Want(f, "speedup", "a number > 0, without a unit (--speedup 2 replays twice as fast)")
	f.StringVar(&repl, "replicate", "", "replay `N` copies of the capture's traffic, copy k on racks rotated by k x racks / N with addresses of its own; N1,N2,...: copies of each trace")
	f.Float64Var(&opt.TargetLoad, "target-load", 0, "choose the speedup at which the busiest host link's p99 offered load in 1 ms bins is this percentage of its speed (instead of --speedup)")
	cli.Want(f, "target-load", "a percentage > 0, without a % sign (--target-load 80: 80% of the link's speed)")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	f.IntVar(&threads, "threads", 0, "run the simulation as up to `N` partitions of the fabric in parallel (0: the CPUs the process may use; 1: the sequential engine); the records are the same for any N, and what the parallel engine does not handle yet (closed loop with Transport.Causality: request, --events, a fabric too small to divide, a PFC deadlock check) runs on 1 thread, said in run.json simulation.threads and, with --threads given, in a note")
	f.StringVar(&cache, "cache", "512MiB", "keep the decoded trace in memory up to this `SIZE` (32 bytes per packet, 96 per flow) when the capture is compressed or a pipe, or with --replicate above 1 or --target-load: the capture is decoded once; a larger trace, or a plain capture, is read again by the run (0: always)")
	rf.register(cmd, &opt)
	exp.register(cmd)
	cf.register(cmd, true)
	cf.registerEvents(cmd)
	return cmd
}

// prepareLine is the line printed before the replay: what will be replayed and how.
func prepareLine(args []string, pr *replay.Prepared, cfg *config.Config) string {
	s := pr.Summary
	noun := "IP packet"
	switch {
	case s.IPv6Packets == 0:
		noun = "IPv4 packet"
	case s.IPv4Packets == 0:
		noun = "IPv6 packet"
	}
	line := fmt.Sprintf("%s: %s to replay", strings.Join(args, ", "), cli.Plural(s.Unicast, noun))
	var skipped []string
	for _, r := range []ingest.Reason{ingest.SkipMulticast, ingest.SkipOutOfWindow, ingest.SkipFamilyFiltered, ingest.SkipFiltered} {
		if n := s.Skipped[r.String()]; n > 0 {
			skipped = append(skipped, fmt.Sprintf("%d %s", n, r))
		}
	}
	if len(skipped) > 0 {
		line += " (not replayed: " + strings.Join(skipped, ", ") + ")"
	}
	line += fmt.Sprintf(", %s, %s -> %s (%s mapping)", cli.Plural(s.UnicastFlows, "flow"), cli.Plural(int64(pr.HostMap.Len()), "endpoint"),
		cli.Plural(int64(pr.Topo.Hosts), "host"), pr.HostMap.Mode)
	if c := pr.Copies(); c != "" {
		line += "; --replicate: " + c
	}
	if pr.Idle.MaxIdle > 0 {
		line += fmt.Sprintf("; --max-idle shortened %s, removing %s", cli.Plural(pr.Idle.Gaps, "idle gap"), units.HumanNanos(pr.Idle.RemovedNs))
	}
	rtt, bdp := pr.Topo.BaseRTT(cfg)
	line += fmt.Sprintf("; fabric BDP %d B, base RTT %s", bdp, rtt.Human())
	if pr.OverCache() {
		line += fmt.Sprintf("; the trace takes more than --cache %s in memory (%s): the run reads the capture again",
			units.FormatBytes(float64(pr.Opt.CacheLimit())), units.FormatBytes(float64(pr.CacheBytes())))
	}
	return line
}

// loadFlags checks --replicate and --target-load (run) and sets the options they
// give.
func loadFlags(cmd *cobra.Command, repl string, opt *replay.Options) error {
	fl := cmd.Flags()
	if fl.Changed("replicate") {
		counts, err := replay.ParseReplicate(repl)
		if err != nil {
			return usageError{Err: fmt.Errorf("--replicate %w", err)}
		}
		opt.Replicate = counts
	}
	if fl.Changed("target-load") {
		if !(opt.TargetLoad > 0) || math.IsInf(opt.TargetLoad, 0) {
			return usageError{Err: fmt.Errorf("--target-load %v: want a percentage > 0 (80 is 80%% of the link's speed)", opt.TargetLoad)}
		}
		if fl.Changed("speedup") {
			return usageError{Err: errors.New("--target-load chooses the speedup: give it or --speedup, not both")}
		}
	}
	return nil
}

// checkOutput fails early (before reading the capture) when the output directory's
// parent cannot be created or written.
func checkOutput(out string) error {
	parent := filepath.Dir(filepath.Clean(out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return inputError{Err: fmt.Errorf("-o %s: cannot create %s (%w)", out, parent, pathErrno(err))}
	}
	probe, err := os.MkdirTemp(parent, ".replay-probe-*")
	if err != nil {
		return inputError{Err: fmt.Errorf("-o %s: cannot write in %s (%w)", out, parent, pathErrno(err))}
	}
	os.Remove(probe)
	return nil
}

// pathErrno strips the operation and path from a file system error.
func pathErrno(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// previousAnalyses lists the run directories about to be replaced that hold an
// analysis analyze wrote: it goes with the run it described.
func previousAnalyses(out string, methods []string) []string {
	var dirs []string
	for _, m := range methods {
		dir := filepath.Join(out, m)
		if fi, err := os.Stat(filepath.Join(dir, records.AnalysisDir, records.AnalysisSummaryFile)); err == nil && fi.Mode().IsRegular() {
			if _, err := os.Stat(filepath.Join(dir, records.RunFile)); err == nil {
				dirs = append(dirs, dir)
			}
		}
	}
	return dirs
}

// threadsNote is the line saying that runs asked for threads ran on one, and why
// ("" when none did).
func threadsNote(runs []*records.Run) string {
	for _, r := range runs {
		if r == nil || r.Simulation.Threads == nil {
			continue
		}
		if th := r.Simulation.Threads; th.Asked > 1 && th.Used == 1 {
			return fmt.Sprintf("--threads %d: ran on 1 thread: %s", th.Asked, th.Reason)
		}
	}
	return ""
}

// runMethods runs the prepared trace once per method (in parallel across cores when
// there are several, each into out/<method>).
func runMethods(pr *replay.Prepared, out string, methods []string) ([]*records.Run, error) {
	runs := make([]*records.Run, len(methods))
	if len(methods) == 1 {
		r, err := pr.Run(out, methods[0])
		runs[0] = r
		return runs, err
	}
	_, statErr := os.Stat(out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %w", replay.ErrInput, err)
	}
	defer func() {
		if statErr != nil {
			os.Remove(out) // created here: removed again if nothing was written into it
		}
	}()
	errs := make([]error, len(methods))
	// The threads go to the runs first (docs/parallel.md section 5): a slot per run
	// at once, each slot holding its share of the threads, which a run takes while it
	// runs (the threads never change the records, so which run gets which is free).
	shares := threadShares(pr.Opt.Threads, len(methods), runtime.GOMAXPROCS(0))
	slots := make(chan int, len(shares))
	for _, n := range shares {
		slots <- n
	}
	var wg sync.WaitGroup
	for i, m := range methods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := <-slots
			defer func() { slots <- n }()
			runs[i], errs[i] = pr.RunThreads(filepath.Join(out, m), m, n)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("--hash %s: %w", methods[i], err)
		}
	}
	return runs, nil
}

// threadShares divides a budget of threads among runs runs, at most cpus of them at
// once (docs/parallel.md section 5): min(runs, cpus) slots, each with
// floor(threads / slots) threads and at least 1, the first threads mod slots slots
// with one more.
func threadShares(threads, runs, cpus int) []int {
	slots := max(1, min(runs, cpus))
	shares := make([]int, slots)
	for i := range shares {
		shares[i] = max(1, threads/slots)
		if threads > slots && i < threads%slots {
			shares[i]++
		}
	}
	return shares
}

// progress is the terminal progress bar (nil-safe; off when not a terminal).
type progress struct {
	mu   sync.Mutex
	bar  *progressbar.ProgressBar
	last map[string]int64
	sim  map[string]units.Time
}

func newProgress(w io.Writer, total int64, quiet bool) *progress {
	if quiet || !isTerminal(w) || total <= 0 {
		return &progress{}
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("replaying"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("pkt"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionFullWidth(),
		progressbar.OptionClearOnFinish(),
	)
	return &progress{bar: bar, last: map[string]int64{}, sim: map[string]units.Time{}}
}

func (p *progress) update(pg replay.Progress) {
	if p.bar == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.Add64(pg.Injected - p.last[pg.Method])
	p.last[pg.Method] = pg.Injected
	p.sim[pg.Method] = pg.SimTime
	var maxSim units.Time
	for _, t := range p.sim {
		maxSim = max(maxSim, t)
	}
	p.bar.Describe("replaying (simulated " + maxSim.Human() + ")")
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}

func printRunsJSON(w io.Writer, runs []*records.Run, methods []string) error {
	var v any = runs[0]
	if len(runs) > 1 {
		m := map[string]*records.Run{}
		for i, r := range runs {
			m[methods[i]] = r
		}
		v = m
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func printRunSummary(w io.Writer, dir string, r *records.Run) {
	s := r.Simulation
	var reasons []string
	for reason := range records.NumDropReasons {
		if n := s.Dropped[records.DropReason(reason)]; n > 0 {
			reasons = append(reasons, fmt.Sprintf("%s %d", records.DropReason(reason), n))
		}
	}
	drops := fmt.Sprint(s.DroppedTotal())
	if len(reasons) > 0 {
		drops += " (" + strings.Join(reasons, ", ") + ")"
	}
	rate := ""
	if s.WallS > 0 {
		rate = fmt.Sprintf(", %.1f M packet-hops/s", float64(s.PacketHops)/s.WallS/1e6)
	}
	fmt.Fprintf(w, "%s [%s]: injected %s, delivered %d, dropped %s, lossless drops %d, undrained %d\n",
		dir, r.HashMethod, cli.Plural(s.Injected, "packet"), s.Delivered, drops, s.LosslessDrops, s.UndrainedTotal())
	fmt.Fprintf(w, "  PFC frames %d, CE marked %d, simulated %s, %s in %.2f s wall%s\n",
		s.PFCFrames, s.CEMarked, units.Time(s.SimTimePs).Human(), cli.Plural(s.PacketHops, "packet-hop"), s.WallS, rate)
	if r.Transport == "closed" {
		var tr struct {
			Replaced map[string]int64 `json:"replaced"`
		}
		json.Unmarshal(r.Trace, &tr)
		var replaced int64
		for _, n := range tr.Replaced {
			replaced += n
		}
		sent := func(k records.PacketKind, name string) string {
			c := s.ControlPackets[k]
			if c.Dropped > 0 {
				return fmt.Sprintf("%s (%d dropped)", cli.Plural(c.Generated, name), c.Dropped)
			}
			return cli.Plural(c.Generated, name)
		}
		fmt.Fprintf(w, "  closed loop: %s replaced; receivers sent %s, %s, %s; senders retransmitted %s, %s\n",
			cli.Plural(replaced, "captured control packet"), sent(records.KindAck, "ACK"),
			sent(records.KindCNP, "CNP"), sent(records.KindNAK, "NAK"),
			cli.Plural(s.Retransmits, "packet"), cli.Plural(s.Timeouts, "timeout"))
		if c := r.ClosedLoop; c != nil {
			var fb []string
			for _, reason := range records.FallbackReasons {
				if n := c.Fallback[reason]; n > 0 {
					fb = append(fb, fmt.Sprintf("%s %d", reason, n))
				}
			}
			if len(fb) == 0 {
				fb = append(fb, "none")
			}
			fmt.Fprintf(w, "  flows: %d re-sent closed loop, %d control only (left out), %d open loop; fallback to open loop: %s\n",
				c.Closed, c.ControlOnly, c.Open, strings.Join(fb, ", "))
		}
	}
	if ni, err := records.TraceNotInjected(r.Trace); err == nil {
		at := "at its captured time"
		if sp := r.Options.Speedup; sp != 0 && sp != 1 {
			at = fmt.Sprintf("at its captured time / %g", sp)
		}
		parts := make([]string, len(ni))
		for i, n := range ni {
			parts[i] = n.String()
		}
		switch {
		case r.Transport == "closed" && len(ni) > 0:
			fmt.Fprintf(w, "  not injected: %s\n", strings.Join(parts, ", "))
		case r.Transport == "closed":
		case len(ni) == 0:
			fmt.Fprintf(w, "  open loop: every packet of the trace injected %s\n", at)
		default:
			fmt.Fprintf(w, "  open loop; not injected as captured: %s\n", strings.Join(parts, ", "))
		}
	}
	if len(s.Undrained) > 0 {
		var nodes []string
		for n, c := range s.Undrained {
			nodes = append(nodes, fmt.Sprintf("%s %d", n, c))
		}
		sort.Strings(nodes)
		fmt.Fprintf(w, "  undrained at: %s (PFC deadlock or --max-drain too short?)\n", strings.Join(nodes, ", "))
	}
	var files []string
	for name, rows := range r.Records {
		files = append(files, fmt.Sprintf("%s (%s)", name, cli.Plural(rows, "row")))
	}
	sort.Strings(files)
	fmt.Fprintf(w, "  wrote run.json, %s\n", strings.Join(files, ", "))
}

// removeStaleComparison deletes OUT/analysis after `--hash all` replaced the runs
// under OUT: a comparison analyze wrote there (recognised by its summary.json)
// describes the previous runs.
func removeStaleComparison(out string, warn func(string)) {
	dir := filepath.Join(out, records.AnalysisDir)
	if fi, err := os.Stat(filepath.Join(dir, records.AnalysisSummaryFile)); err != nil || !fi.Mode().IsRegular() {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		warn(fmt.Sprintf("%s describes the previous runs and could not be removed: %v", dir, err))
		return
	}
	warn(fmt.Sprintf("removed %s: it compared the previous runs (run analyze again)", dir))
}

// preparedHook, when set (by tests), sees the preparation of replay run before its
// runs: whether --hash all kept the trace for its methods.
var preparedHook func(*replay.Prepared)
