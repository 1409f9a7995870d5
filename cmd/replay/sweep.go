package main

import (
	"encoding/json"
	"errors"
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
	"github.com/spf13/pflag"

	"github.com/tracefabric/tracefabric/cmd/internal/cli"
	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
	"github.com/tracefabric/tracefabric/replay/sweep"
)

// exitIncomplete is the exit status of `replay sweep --status` for a sweep that is
// not complete (README, "replay sweep").
const exitIncomplete = 3

// sweepFlags are replay sweep's own flags.
type sweepFlags struct {
	file, out, status string
	jobs, index, of   int
	threads           int // --threads per point
	asJSON, quiet     bool
	// --emit k8s
	emit, image, name, memory, pvc, mount string
	parallelism, backoff                  int
	cache                                 string // --cache SIZE
}

// sweepRunFlags are the flags of `replay run` that a sweep passes to every point;
// --emit repeats those given in the Job's command.
var sweepRunFlags = []string{"hosts", "rack-prefix", "rack-prefix6", "family", "filter", "oversize", "max-drain", "record-packets",
	"reorder-window", "start", "duration", "max-idle", "strict", "replicate-jitter"}

func newSweepCmd() *cobra.Command {
	var (
		f   sweepFlags
		rf  replayFlags
		opt replay.Options
	)
	cmd := &cobra.Command{
		Use:   "sweep -c SWEEP.yaml [flags] TRACE...",
		Short: "Replay one trace over a grid of settings (locally, or as a Kubernetes or Slurm array)",
		Long: `sweep replays the captures once per point of the grid a sweep file describes: the
cartesian product of its axes (hash methods, load balancing, transport, speedup, and
any configuration attribute under set). Point k writes a normal run directory,
DIR/p0000, DIR/p0001, ... (numbered in the product's order: hash, lb, transport,
speedup, then the set attributes in file order, the last varying fastest), and
DIR/sweep.json describes the axes, every point's settings and status, and the trace.
Every point's configuration is checked before anything runs.

-j runs points in parallel (default: the number of CPUs). A point whose run
directory is complete is not run again: after Ctrl-C, the same command resumes.
--index I --of N runs only the points k with k mod N == I, so that N processes
(a Kubernetes Indexed Job, a Slurm job array) share a sweep through one directory;
the records are byte-identical however the points are spread. --emit k8s prints
such a Job; --status DIR says which points are done (exit 0 when all are, 3 when
not). 'analyze DIR' compares the points.

The sweep file (-c):
  config: fabric.yaml           # optional: the configuration every point starts from
  set: {Topology.Pods: 2}       # optional: attributes every point shares
  axes:                         # every axis optional; the grid is their product
    hash: [crc32WithSalt, crc16]   # or [all]
    lb: [none, flowlet]
    transport: [open, closed]
    speedup: [1, 2, 4]
    set:                        # any --set attribute, values as on the command line
      Switch.BufferSize: [16MiB, 32MiB]
      Switch.EcnMinThreshold: [100KB, 400KB]`,
		Example: `  replay sweep -c sweep.yaml testdata/pcaps/demo.pcap -o out/sweep
  replay sweep -c sweep.yaml capture.pcap -o /shared/sweep --index 3 --of 16
  replay sweep --status out/sweep
  replay sweep --emit k8s --image registry.example.com/tracefabric:0.1 --of 16 -c sweep.yaml -o sweep-out capture.pcap`,
		Annotations: map[string]string{cli.WritesOutputs: "yes"},
		Args: func(cmd *cobra.Command, args []string) error {
			if f.status != "" {
				return noArgs(cmd, args)
			}
			return cli.AtLeastOne("TRACE", "the captures every point replays")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			switch {
			case f.status != "":
				for _, name := range []string{"config", "out", "jobs", "index", "of", "emit"} {
					if fl.Changed(name) {
						return usageError{Err: fmt.Errorf("--status takes no --%s", name)}
					}
				}
				return sweepStatus(cmd.OutOrStdout(), f.status, f.asJSON)
			case f.emit != "":
				if f.emit != "k8s" {
					return usageError{Err: fmt.Errorf("--emit %q: want k8s (see README for Slurm)", f.emit)}
				}
				if fl.Changed("index") || fl.Changed("jobs") {
					return usageError{Err: errors.New("--emit k8s writes --index and -j into the Job: give neither")}
				}
				return emitK8s(cmd, &f, args)
			}
			for _, name := range []string{"image", "name", "memory", "pvc", "mount", "parallelism", "backoff-limit-per-index"} {
				if fl.Changed(name) {
					return usageError{Err: fmt.Errorf("--%s goes with --emit k8s", name)}
				}
			}
			if f.file == "" {
				return usageError{Err: errors.New("-c SWEEP.yaml: the sweep file is required")}
			}
			if f.jobs < 0 {
				return usageError{Err: fmt.Errorf("-j %d: want a number of points >= 1 (0: the number of CPUs)", f.jobs)}
			}
			if f.jobs == 0 {
				f.jobs = runtime.NumCPU()
			}
			if f.threads < 0 {
				return usageError{Err: fmt.Errorf("--threads %d: want 1 or more per point (0: the CPUs shared by the -j points at once)", f.threads)}
			}
			if f.threads == 0 {
				f.threads = max(1, runtime.GOMAXPROCS(0)/f.jobs)
			}
			if cpus := runtime.GOMAXPROCS(0); f.jobs*f.threads > cpus {
				warnFunc(cmd)(fmt.Sprintf("-j %d x --threads %d = %d threads on %d CPUs: the points will wait for each other", f.jobs, f.threads, f.jobs*f.threads, cpus))
			}
			opt.Threads = f.threads
			if fl.Changed("index") != fl.Changed("of") {
				return usageError{Err: errors.New("--index and --of go together")}
			}
			if fl.Changed("of") && (f.of < 1 || f.index < 0 || f.index >= f.of) {
				return usageError{Err: fmt.Errorf("--index %d --of %d: want --of >= 1 and 0 <= --index < --of", f.index, f.of)}
			}
			if err := rf.apply(cmd, &opt); err != nil {
				return err
			}
			cache, err := parseCache(f.cache)
			if err != nil {
				return err
			}
			return runSweep(cmd, &f, opt, cache, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "config", "c", "", "the sweep file (YAML: axes, and optionally config and set; see above)")
	fl.StringVarP(&f.out, "out", "o", "", "sweep directory (default out/<sweep file name>): sweep.json and one run directory per point, p0000, p0001, ...")
	fl.IntVarP(&f.jobs, "jobs", "j", 0, "replay `N` points in parallel (default 0: the number of CPUs)")
	fl.IntVar(&f.threads, "threads", 1, "run each point's simulation as up to `N` partitions of the fabric (0: the CPUs divided among the -j points at once; 1: the sequential engine); the records are the same for any N (see replay run --threads)")
	fl.IntVar(&f.index, "index", 0, "with --of N: run only the points k with k mod N == `I` (0 <= I < N)")
	fl.IntVar(&f.of, "of", 0, "the number `N` of processes sharing the sweep (with --index, or --emit k8s: the Job's completions)")
	fl.StringVar(&f.status, "status", "", "say which points of the sweep in `DIR` are done, failed (with the reason), incomplete or missing (exit 0 when all are done, 3 when not)")
	fl.BoolVar(&f.asJSON, "json", false, "print sweep.json (with --status: the statuses) instead of the summary")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	fl.StringVar(&f.emit, "emit", "", "print a scheduler's manifest instead of running: k8s (a batch/v1 Indexed Job)")
	fl.StringVar(&f.image, "image", "", "--emit k8s: the container image, with replay on its PATH")
	fl.StringVar(&f.name, "name", "", "--emit k8s: the Job's name (default tracefabric-sweep-<sweep file name>)")
	fl.StringVar(&f.memory, "memory", "", "--emit k8s: memory per pod (request and limit), e.g. 2GiB (default: estimated from the trace)")
	fl.StringVar(&f.pvc, "pvc", "tracefabric", "--emit k8s: the PersistentVolumeClaim (ReadWriteMany) holding traces, sweep file and output")
	fl.StringVar(&f.mount, "mount", "/data", "--emit k8s: where the claim is mounted; relative paths in the command are under it")
	fl.IntVar(&f.parallelism, "parallelism", 0, "--emit k8s: pods running at once (default: --of)")
	fl.IntVar(&f.backoff, "backoff-limit-per-index", 2, "--emit k8s: retries of a failed index (an index that fails on its input, exit 2, is not retried)")
	fl.StringVar(&f.cache, "cache", "512MiB", "keep the decoded trace in memory up to this `SIZE` (32 bytes per packet, 96 per flow), shared by the points, instead of decoding it again for each (0: never)")
	rf.register(cmd, &opt)
	return cmd
}

// parseCache reads a --cache value: a size, 0 for no cache (replay.Options.Cache
// takes replay.NoCache for that).
func parseCache(v string) (int64, error) {
	b, err := units.ParseBytes(v)
	if err != nil || b < 0 {
		return 0, usageError{Err: fmt.Errorf("--cache %q: want a size such as 512MiB (0: no cache)", v)}
	}
	return int64(b), nil
}

// runSweep expands the sweep file, checks every point, and runs the points.
func runSweep(cmd *cobra.Command, f *sweepFlags, opt replay.Options, cache int64, traces []string) error {
	stderr, stdout := cmd.ErrOrStderr(), cmd.OutOrStdout()
	file, err := sweep.ParseFile(f.file)
	if err != nil {
		return sweepError(err)
	}
	pl, err := sweep.Expand(file)
	if err != nil {
		return sweepError(err)
	}
	out := f.out
	if out == "" {
		out = filepath.Join("out", strings.TrimSuffix(filepath.Base(f.file), filepath.Ext(f.file)))
	}
	warn := dedupWarn(warnFunc(cmd))
	for _, p := range pl.Points {
		for _, w := range p.Warnings {
			warn(w)
		}
	}
	opt.Traces = traces
	opt.Warn = warn
	opt.Command = append([]string{"replay"}, os.Args[1:]...)
	opt.Version = version
	opt.Context = cmd.Context()

	var bar *pointBar
	var lines []string // per point, in completion order (printed at the end with --json off)
	so := sweep.Options{Run: opt, Dir: out, Jobs: f.jobs, Index: f.index, Of: f.of, Cache: cache,
		Ready: func(todo, done []*sweep.Point, cached int64) {
			// What will run, once the sweep file, every point and the trace are checked.
			line := fmt.Sprintf("%s: %s (%s)", f.file, cli.Plural(int64(len(pl.Points)), "point"), axesLine(file))
			if f.of > 0 {
				line += fmt.Sprintf("; --index %d --of %d: %s", f.index, f.of, cli.Plural(int64(len(todo)+len(done)), "point"))
			}
			if len(done) > 0 {
				line += fmt.Sprintf(", %d already done", len(done))
			}
			line = fmt.Sprintf("%s; %s to run with -j %d into %s", line, cli.Plural(int64(len(todo)), "point"), f.jobs, out)
			if cached > 0 {
				line += fmt.Sprintf(" (the trace decoded once: %s in memory)", units.FormatBytes(float64(cached)))
			}
			fmt.Fprintln(stderr, line)
			bar = newPointBar(stderr, int64(len(todo)), f.quiet || f.asJSON)
		},
		Event: func(e sweep.Event) {
			bar.event(pl, e)
			if e.Done && e.Err == nil && !f.asJSON {
				line := pointLine(pl, e)
				if bar != nil && bar.bar != nil {
					lines = append(lines, line)
				} else {
					fmt.Fprintln(stdout, line)
				}
			}
		}}
	res, err := sweep.Run(pl, so)
	if bar != nil {
		bar.finish()
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	if err != nil {
		if res != nil && len(res.Ran)+len(res.Skipped) > 0 && errors.Is(err, cli.ErrInterrupted) {
			fmt.Fprintf(stderr, "%s: kept %s completed in %s; the same command resumes the sweep\n",
				cmd.CommandPath(), cli.Plural(int64(len(res.Ran)+len(res.Skipped)), "point"), out)
		}
		return sweepError(err)
	}
	if f.asJSON {
		b, err := json.MarshalIndent(res.Sweep, "", "  ")
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(b, '\n'))
		return err
	}
	s := res.Sweep
	fmt.Fprintf(stdout, "%s: ran %s in %.1f s (-j %d)", out, cli.Plural(int64(len(res.Ran)), "point"), res.Took.Seconds(), f.jobs)
	if len(res.Skipped) > 0 {
		fmt.Fprintf(stdout, ", %s already done", cli.Plural(int64(len(res.Skipped)), "point"))
	}
	if s.Complete {
		fmt.Fprintf(stdout, "; the sweep is complete (%s): analyze %s compares them\n", cli.Plural(int64(len(s.Points)), "point"), out)
	} else {
		fmt.Fprintf(stdout, "; the sweep has %d of %d points done (replay sweep --status %s)\n", s.Counts[records.StatusDone], len(s.Points), out)
	}
	return nil
}

// axesLine is "hash x 3, Switch.BufferSize x 4".
func axesLine(f *sweep.File) string {
	if len(f.Axes) == 0 {
		return "no axes"
	}
	parts := make([]string, len(f.Axes))
	for i, a := range f.Axes {
		parts[i] = fmt.Sprintf("%s x %d", a.Name, len(a.Values))
	}
	return strings.Join(parts, ", ")
}

// pointLine is the line printed for a completed point.
func pointLine(pl *sweep.Plan, e sweep.Event) string {
	s := e.Run.Simulation
	return fmt.Sprintf("%s [%s]: dropped %d (lossless %d), PFC frames %d, CE marked %d, undrained %d; %.2f s",
		e.Point.Dir(), strings.Join(pl.Settings(e.Point), " "), s.DroppedTotal(), s.LosslessDrops, s.PFCFrames, s.CEMarked,
		s.UndrainedTotal(), e.Took.Seconds())
}

// sweepError classifies a sweep's errors: bad inputs exit 2, the rest 1.
func sweepError(err error) error {
	if errors.Is(err, sweep.ErrInput) {
		return inputError{Err: err}
	}
	return replayError(err)
}

// dedupWarn passes each distinct warning on once (the points of a sweep share most).
func dedupWarn(warn func(string)) func(string) {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		if !seen[msg] {
			seen[msg] = true
			warn(msg)
		}
	}
}

// pointBar is the progress bar over a sweep's points (off when not a terminal).
type pointBar struct {
	bar     *progressbar.ProgressBar
	running map[string]bool
}

func newPointBar(w io.Writer, total int64, quiet bool) *pointBar {
	if quiet || !isTerminal(w) || total <= 0 {
		return &pointBar{}
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("sweep"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("point"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionFullWidth(),
		progressbar.OptionClearOnFinish(),
	)
	return &pointBar{bar: bar, running: map[string]bool{}}
}

// event updates the bar (Options.Event calls it one event at a time).
func (b *pointBar) event(pl *sweep.Plan, e sweep.Event) {
	if b.bar == nil {
		return
	}
	if e.Done {
		delete(b.running, e.Point.Dir())
		b.bar.Add(1)
	} else {
		b.running[e.Point.Dir()] = true
	}
	var names []string
	for n := range b.running {
		names = append(names, n)
	}
	sort.Strings(names)
	b.bar.Describe("sweep (running " + strings.Join(names, ", ") + ")")
}

func (b *pointBar) finish() {
	if b.bar != nil {
		b.bar.Finish()
	}
}

// incompleteError is the result of --status for a sweep that is not complete.
type incompleteError struct{ msg string }

func (e incompleteError) Error() string { return e.msg }
func (e incompleteError) ExitCode() int { return exitIncomplete }

// sweepStatus prints which points of the sweep in dir are done.
func sweepStatus(w io.Writer, dir string, asJSON bool) error {
	s, err := records.ReadSweep(dir)
	if err != nil {
		if errors.Is(err, records.ErrNotSweepDir) || errors.Is(err, records.ErrSchemaVersion) || errors.Is(err, os.ErrNotExist) {
			return inputError{Err: fmt.Errorf("--status %s: %w", dir, err)}
		}
		return err
	}
	s.Scan(dir)
	if asJSON {
		v := struct {
			Dir      string                      `json:"dir"`
			Complete bool                        `json:"complete"`
			Counts   map[records.PointStatus]int `json:"status"`
			Points   []records.PointState        `json:"points"`
		}{Dir: dir, Complete: s.Complete, Counts: s.Counts, Points: s.States(false)}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "%s: %s", dir, cli.Plural(int64(len(s.Points)), "point"))
		for _, st := range records.PointStatuses {
			if n := s.Counts[st]; n > 0 || st == records.StatusDone {
				fmt.Fprintf(w, ", %d %s", n, st)
			}
		}
		fmt.Fprintln(w)
		for _, p := range s.Points {
			if p.Status == records.StatusDone {
				continue
			}
			line := fmt.Sprintf("  %s %s [%s]", p.Status, p.Dir, strings.Join(s.Settings(&p), " "))
			if p.Detail != "" {
				line += ": " + p.Detail
			}
			fmt.Fprintln(w, line)
		}
	}
	if !s.Complete {
		return incompleteError{fmt.Sprintf("%s: %d of %d points not done", dir, len(s.Points)-s.Counts[records.StatusDone], len(s.Points))}
	}
	return nil
}

// emitK8s prints the Indexed Job that runs the sweep with --of pods.
func emitK8s(cmd *cobra.Command, f *sweepFlags, traces []string) error {
	if !cmd.Flags().Changed("of") {
		return usageError{Err: errors.New("--emit k8s: --of N (the number of pods, the Job's completions) is required")}
	}
	if f.image == "" {
		return usageError{Err: errors.New("--emit k8s: --image IMG (the container image holding replay) is required")}
	}
	file := f.file
	if file == "" {
		file = "sweep.yaml"
	}
	out := f.out
	if out == "" {
		out = filepath.Join("out", strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	}
	warn := warnFunc(cmd)
	in := func(p string) string { // a path as the container sees it
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(f.mount, p)
	}
	// The sweep file and the traces are checked here when they are readable here.
	if sf, err := sweep.ParseFile(file); err == nil {
		pl, err := sweep.Expand(sf)
		if err != nil {
			return sweepError(err)
		}
		if f.of > len(pl.Points) {
			warn(fmt.Sprintf("--of %d: the sweep has %s; indexes %d..%d have nothing to do", f.of,
				cli.Plural(int64(len(pl.Points)), "point"), len(pl.Points), f.of-1))
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return sweepError(err)
	} else {
		warn(fmt.Sprintf("%s is not readable here: the Job reads %s (not checked)", file, in(file)))
	}
	mem := int64(0)
	if f.memory != "" {
		b, err := units.ParseBytes(f.memory)
		if err != nil || b <= 0 {
			return usageError{Err: fmt.Errorf("--memory %q: want a size such as 2GiB", f.memory)}
		}
		mem = int64(b)
	} else {
		cache, err := parseCache(f.cache)
		if err != nil {
			return err
		}
		sum, err := ingest.Summarize(traces, ingest.Options{Context: cmd.Context()})
		if err != nil {
			return inputError{Err: fmt.Errorf("--emit k8s: cannot estimate the memory per point from the trace (%w); give --memory", err)}
		}
		mem = sweep.EstimateMemory(sum, cache)
	}
	name := f.name
	if name == "" {
		name = sweep.JobName(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	}
	args := []string{"-c", in(file), "-o", in(out), "-j", "1", "-q"}
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		for _, n := range append(sweepRunFlags, "cache", "threads") {
			if fl.Name != n {
				continue
			}
			v := fl.Value.String()
			if n == "hosts" && v != replay.MapSubnet && v != replay.MapHash && v != replay.MapSpread {
				v = in(v)
			}
			if fl.Value.Type() == "bool" {
				args = append(args, "--"+n+"="+v)
			} else {
				args = append(args, "--"+n, v)
			}
		}
	})
	for _, t := range traces {
		args = append(args, in(t))
	}
	manifest, err := sweep.Job(sweep.JobOptions{Name: name, Image: f.image, Of: f.of, Parallelism: f.parallelism,
		BackoffLimitPerIndex: f.backoff, MemoryBytes: mem, Claim: f.pvc, Mount: f.mount, Args: args})
	if err != nil {
		return sweepError(err)
	}
	_, err = cmd.OutOrStdout().Write(manifest)
	return err
}
