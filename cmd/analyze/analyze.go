package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/cmd/internal/cli"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/records/export"
)

// options are a validated command line.
type options struct {
	dirs []string // RUN_DIR arguments as given
	out  string   // -o, empty for the default
	// defaultOut, when set, replaces the default output directory (a sweep of one
	// axis compared as runs are: the sweep's analysis/).
	defaultOut string
	// notDone: the points of such a sweep left out by --partial, and partial the
	// sentence that says so.
	notDone []records.PointState
	partial string
	force   bool // replace an analysis of other runs in the output directory
	top     int  // rows of top-N tables in the report
	asJSON  bool
	quiet   bool
	tables  export.Format // --tables: csv or parquet
	opt     analysis.Options

	stdout, stderr io.Writer
	ctx            context.Context // cancelled by SIGINT/SIGTERM (nil: never)
}

// runInput is one run directory: what package analysis loaded, and the effective
// configuration recorded in its run.json (as Load read it), decoded.
type runInput struct {
	dir string
	run *analysis.Run
	cfg *config.Config
}

// analyze is the whole command: find and load the runs, analyze (and compare), write
// the outputs atomically, print the summary.
func analyze(o *options) error {
	if handled, err := analyzeSweepDir(o); handled {
		return err
	}
	if o.opt.Partial && o.defaultOut == "" {
		return usageError{Err: errors.New("--partial goes with a sweep directory (replay sweep -o DIR): it analyzes the points that are done")}
	}
	dirs, out, err := resolveRuns(o.dirs)
	if err != nil {
		return err
	}
	if o.defaultOut != "" {
		out = o.defaultOut
	}
	if o.out != "" {
		out = o.out
	}
	if out == "" {
		return usageError{Err: errNoOutput}
	}
	// Refuse an output directory that is not ours, or the analysis of other runs,
	// before the (long) analysis.
	if err := checkReplaceable(filepath.Clean(out)); err != nil {
		return inputError{Err: err}
	}
	if err := checkSameInputs(filepath.Clean(out), dirs, o.force); err != nil {
		return inputError{Err: err}
	}
	pg := newProgress(o.stderr, o.quiet || o.asJSON)
	defer pg.done()

	ctx := o.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	inputs := make([]*runInput, len(dirs))
	for i, d := range dirs {
		in, err := interruptible(ctx, func() (*runInput, error) { return loadRun(d, pg.stageFunc(d)) })
		if err != nil {
			return err
		}
		inputs[i] = in
	}
	ref := referenceRun(inputs)

	opt := o.opt
	opt.Progress = pg.stageFunc("analysis")
	sum, err := interruptible(ctx, func() (*analysis.Summary, error) { return analysis.Analyze(inputs[ref].run, opt) })
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return classifyInput(fmt.Errorf("%s: %w", inputs[ref].dir, err))
	}
	var cmp *analysis.Comparison
	if len(inputs) > 1 {
		runs := make([]*analysis.Run, len(inputs))
		for i, in := range inputs {
			runs[i] = in.run
		}
		opt.Progress = pg.stageFunc("comparison")
		cmp, err = interruptible(ctx, func() (*analysis.Comparison, error) { return analysis.Compare(runs, opt) })
		if err != nil {
			return classifyInput(err)
		}
	}

	var res *result
	od, err := writeAnalysis(out, o.out != "", func(od *outputDir) (err error) {
		res, err = writeOutputs(od, &job{ctx: ctx, inputs: inputs, ref: ref, sum: sum, cmp: cmp, top: o.top, progress: pg, tables: o.tables, notDone: o.notDone, partial: o.partial})
		return err
	})
	if err != nil {
		return err
	}
	pg.done()
	if o.asJSON {
		_, err := o.stdout.Write(res.summaryJSON)
		return err
	}
	printSummary(o.stdout, od.d.Final(), res, o.tables)
	return nil
}

// interruptible runs f, which writes nothing, and returns its result, or the
// context's error as soon as ctx is done (f is then left to finish on its own while
// the command exits).
func interruptible[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// resolveRuns expands the RUN_DIR arguments (a run directory, or a `replay run --hash
// all` directory holding runs in subdirectories) and picks the default output
// directory: ARG/analysis for one argument, PARENT/analysis for several arguments in
// one parent directory.
func resolveRuns(args []string) (dirs []string, out string, err error) {
	seen := map[string]bool{}
	for _, a := range args {
		ds, err := analysis.FindRuns(a)
		if err != nil {
			return nil, "", classifyInput(err) // it names a
		}
		for _, d := range ds {
			abs, _ := filepath.Abs(d)
			if seen[abs] {
				return nil, "", usageError{Err: fmt.Errorf("run directory %s given twice", d)}
			}
			seen[abs] = true
			dirs = append(dirs, d)
		}
	}
	if len(args) == 1 {
		return dirs, filepath.Join(args[0], records.AnalysisDir), nil
	}
	parent := filepath.Dir(filepath.Clean(args[0]))
	for _, a := range args[1:] {
		if p := filepath.Dir(filepath.Clean(a)); p != parent {
			// No natural place for the output: ask for one (checked by the caller).
			return dirs, "", nil
		}
	}
	return dirs, filepath.Join(parent, records.AnalysisDir), nil
}

// loadRun reads one run directory.
func loadRun(dir string, progress func(string, int, int)) (*runInput, error) {
	run, err := analysis.LoadWith(dir, progress)
	if err != nil {
		if !strings.Contains(err.Error(), dir) {
			err = fmt.Errorf("%s: %w", dir, err)
		}
		return nil, classifyInput(err)
	}
	cfg := new(config.Config)
	if err := json.Unmarshal(run.Info.Config, cfg); err != nil {
		return nil, inputError{Err: fmt.Errorf("%s: run.json config: %w", dir, err)}
	}
	return &runInput{dir: dir, run: run, cfg: cfg}, nil
}

// referenceRun is the run whose details the report shows: the one with the default
// hash method (what `replay run` without --hash gives), else the first.
func referenceRun(inputs []*runInput) int {
	def := config.Default().Switch.EcmpHashMethod.String()
	for i, in := range inputs {
		if in.run.Info.Method == def {
			return i
		}
	}
	return 0
}

// methodName is how a run is named in a comparison (as analysis.Compare names it).
func methodName(c *analysis.Comparison, i int) string {
	if c == nil || i >= len(c.Methods) {
		return ""
	}
	return c.Methods[i]
}

// printSummary is the short human summary at the end: what was written, headline.
func printSummary(w io.Writer, dir string, r *result, tables export.Format) {
	fmt.Fprintf(w, "wrote %s: report.html, report.md, summary.json, %s (plots/*.png, *.svg), %s (tables/*.%s)\n",
		dir, cli.Plural(int64(len(r.figures)), "figure"), cli.Plural(int64(len(r.tables)), "table"), tables)
	if len(r.noData) > 0 {
		var parts []string
		for _, n := range r.noDataOrder {
			parts = append(parts, n+" ("+r.noData[n]+")")
		}
		fmt.Fprintf(w, "  not drawn: %s\n", strings.Join(parts, ", "))
	}
	for _, h := range r.headline {
		fmt.Fprintf(w, "  %s\n", h)
	}
	for _, wn := range r.warnings {
		fmt.Fprintf(w, "  warning: %s\n", wn)
	}
}

// errNoOutput: several runs in different directories and no -o.
var errNoOutput = errors.New("runs in different directories: give the output directory with -o")
