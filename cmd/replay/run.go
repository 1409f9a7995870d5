package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

func newRunCmd() *cobra.Command {
	var (
		cf       configFlags
		out      string
		asJSON   bool
		opt      replay.Options
		maxDrain string
		quiet    bool
	)
	cmd := &cobra.Command{
		Use:   "run [flags] TRACE...",
		Short: "Replay captures through the simulated Clos and write Arrow records",
		Long: `run replays the IPv4 packets of the captures (merged by timestamp) through the
simulated Clos fabric: each packet enters its source host's NIC at (t - t0)/speedup
with its captured size, DSCP, ECN and 5-tuple, and the fabric's switches buffer,
pause (PFC), mark (ECN), drop and spread it over equal-cost paths. The simulation
runs until the fabric drains (or --max-drain after the last packet) and writes into
the output directory run.json and the record files ports, drops, pfc, buffer,
loadbalance, flows, delay (and packets with --record-packets) in Arrow IPC file
format (see docs/records.md). The directory appears only when the run is complete.

--hash all replays the trace once per hash method, in parallel, into OUT/<method>/
for 'analyze' to compare.`,
		Example: `  replay run testdata/pcaps/demo.pcap -o out/demo
  replay run capture.pcapng -o out/cmp --hash all
  replay run capture.pcap -c fabric.yaml --set BufferSize=16MiB --lb flowlet --speedup 10`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, warns, err := cf.load()
			if err != nil {
				return err
			}
			warn := warnFunc(cmd)
			for _, w := range warns {
				warn(w)
			}
			if maxDrain != "" {
				d, err := units.ParseTime(maxDrain)
				if err != nil {
					return usageError{Err: fmt.Errorf("--max-drain: %w", err)}
				}
				if d <= 0 {
					return usageError{Err: fmt.Errorf("--max-drain %s: must be > 0", maxDrain)}
				}
				opt.MaxDrain = d
			}
			if out == "" {
				base := filepath.Base(args[0])
				for _, ext := range []string{".gz", ".pcapng", ".pcap", ".cap"} {
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
			opt.Traces = args
			opt.Config = cfg
			opt.Warn = warn
			opt.Command = append([]string{"replay"}, os.Args[1:]...)
			opt.Version = version
			stderr := cmd.ErrOrStderr()
			if err := os.MkdirAll(filepath.Dir(filepath.Clean(out)), 0o755); err != nil {
				return inputError{Err: fmt.Errorf("output directory %s: %w", out, err)}
			}
			pr, err := replay.Prepare(opt)
			if err != nil {
				return replayError(err)
			}
			fmt.Fprintf(stderr, "%s: %d IPv4 packets, %d flows, %d endpoints -> %d hosts (%s mapping); fabric BDP %d B, base RTT %.3f us\n",
				strings.Join(args, ", "), pr.Summary.IPv4Packets, pr.Summary.Flows, pr.HostMap.Len(), pr.Clos.Grid.Hosts(),
				pr.HostMap.Mode, cfg.BDP(), float64(cfg.BaseRTT())/float64(units.Microsecond))
			bar := newProgress(stderr, int64(len(methods))*pr.Summary.IPv4Packets, quiet || asJSON)
			pr.Opt.Progress = bar.update
			runs, err := runMethods(pr, out, methods)
			bar.finish()
			if err != nil {
				return replayError(err)
			}
			if len(methods) > 1 {
				removeStaleComparison(out, warn)
			}
			stdout := cmd.OutOrStdout()
			if asJSON {
				return printRunsJSON(stdout, runs, methods)
			}
			for i, r := range runs {
				dir := out
				if methods[i] != "" {
					dir = filepath.Join(out, methods[i])
				}
				printRunSummary(stdout, dir, r)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "out", "o", "", "output directory (default out/<first trace name>); replaced only if it holds a previous run")
	f.BoolVar(&asJSON, "json", false, "print run.json (an object per method with --hash all) instead of the summary")
	f.StringVar(&opt.Hosts, "hosts", "subnet", "host mapping: subnet, hash, or a CSV file of cidr,host-name lines")
	f.IntVar(&opt.RackPrefix, "rack-prefix", 24, "subnet mapping: group endpoints by this prefix length, one group per rack")
	f.Float64Var(&opt.Speedup, "speedup", 1, "divide capture time by this factor (>1 replays faster, raising the load)")
	f.StringVar(&opt.Oversize, "oversize", "split", "packets longer than the MTU: split into MTU-sized packets, or drop")
	f.StringVar(&maxDrain, "max-drain", "1s", "simulate at most this long after the last packet to drain the fabric")
	f.BoolVar(&opt.RecordPackets, "record-packets", false, "also write packets.arrow: one row per simulated packet with its path")
	f.DurationVar(&opt.ReorderWindow, "reorder-window", 0, "reorder packets whose timestamps go backwards within a file within this window (default 10ms)")
	f.BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	cf.register(cmd, true)
	return cmd
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
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %w", replay.ErrInput, err)
	}
	errs := make([]error, len(methods))
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i, m := range methods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			runs[i], errs[i] = pr.Run(filepath.Join(out, m), m)
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
	p.bar.Describe(fmt.Sprintf("replaying (simulated %.3f ms)", float64(maxSim)/float64(units.Millisecond)))
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
	fmt.Fprintf(w, "%s [%s]: injected %d packets, delivered %d, dropped %s, lossless drops %d, undrained %d\n",
		dir, r.HashMethod, s.Injected, s.Delivered, drops, s.LosslessDrops, s.UndrainedTotal())
	fmt.Fprintf(w, "  PFC frames %d, CE marked %d, simulated %.3f ms, %d packet-hops in %.2f s wall%s\n",
		s.PFCFrames, s.CEMarked, float64(s.SimTimePs)/1e9, s.PacketHops, s.WallS, rate)
	if ni, err := records.TraceNotInjected(r.Trace); err == nil {
		at := "at its captured time"
		if sp := r.Options.Speedup; sp != 0 && sp != 1 {
			at = fmt.Sprintf("at its captured time / %g", sp)
		}
		if len(ni) == 0 {
			fmt.Fprintf(w, "  open loop: every packet of the trace injected %s\n", at)
		} else {
			parts := make([]string, len(ni))
			for i, n := range ni {
				parts[i] = n.String()
			}
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
		files = append(files, fmt.Sprintf("%s (%d rows)", name, rows))
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
