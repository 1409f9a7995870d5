package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/cmd/internal/cli"
	"github.com/tracefabric/tracefabric/internal/units"
)

// flags are analyze's command-line flags, as given.
type flags struct {
	out           string
	stormDuration string
	seed          uint64
	bootstrap     int
	top           int
	asJSON        bool
	quiet         bool
	tables        string
	partial       bool
	force         bool
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	var f flags
	root := &cobra.Command{
		Use:   "analyze [flags] RUN_DIR...",
		Short: "Statistics, figures and a report from replay run directories",
		Long: `analyze reads the run directories written by 'replay run' (run.json and the Arrow
record files) and explains what happened: drops by reason, node and time, lossless
(headroom) drops, PFC pause intervals and storm episodes, ECN marking,
one-way delay, and how evenly each ECMP set spread bytes and flows, with rack/fabric
polarization.

It writes into the output directory (default RUN_DIR/analysis, or DIR/analysis for a
directory written by 'replay run --hash all'), which appears only when complete:
  report.html   self-contained report (figures embedded, opens offline)
  report.md     the same in Markdown, linking plots/*.png
  summary.json  every number the report states (stable keys: drops.total,
                drops.lossless, drops.by_reason, pfc.pause_intervals, pfc.paused_ps,
                pfc.storms, pfc.storm_count, ecn.marked, imbalance.tiers.<tier>,
                polarization.ami, headline, and comparison when comparing);
                undefined measures are null with judged false and a reason
  plots/        drops_over_time, pfc_pause_timeline, buffer_occupancy,
                ecmp_member_load, delay_cdf, ecn_marking (and hash_comparison),
                each as .png and .svg; a figure with no data is not drawn
  tables/       the tables behind the figures, as CSV (or Parquet: --tables parquet)

Several run directories of one trace, or one directory holding runs in
subdirectories (replay run --hash all), are compared: per method the tier imbalance,
polarization (AMI), drops, CE marks, pause time and delay, with 95% bootstrap
confidence intervals over flows (BCa; the AMI's: normal with the bootstrap standard
error; --bootstrap replicates, --seed). A method is clearly ahead when the interval
of its paired difference with the runner-up excludes 0; ties mark no method.

Exit status: 0 success, 1 failure while running, 2 bad usage or input,
130 interrupted (Ctrl-C or SIGTERM; the partial output is removed).`,
		Example: `  analyze out/demo                  # writes out/demo/analysis/
  analyze out/cmp                   # the six runs of 'replay run --hash all -o out/cmp'
  analyze out/a out/b -o out/a-vs-b # two runs of one trace, compared
  analyze out/sweep --partial       # the points of a sweep that are done, the others named
  analyze out/demo --json | jq .drops.total`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{Err: errors.New("requires at least one RUN_DIR")}
			}
			return nil
		},
		Annotations: map[string]string{cli.WritesOutputs: "yes"},
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := f.options()
			if err != nil {
				return err
			}
			o.dirs = args
			o.stdout, o.stderr, o.ctx = cmd.OutOrStdout(), cmd.ErrOrStderr(), cmd.Context()
			return analyze(o)
		},
	}
	cli.SetupRoot(root, stdout, stderr)
	fl := root.Flags()
	fl.StringVarP(&f.out, "out", "o", "", "output directory (default RUN_DIR/analysis, or DIR/analysis for a --hash all directory); replaced only if it holds a previous analysis")
	fl.StringVar(&f.stormDuration, "storm-duration", "1ms", "a PFC episode lasting at least this long is a storm (so is any of depth >= 2)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the bootstrap's random generators (every interval: a run's AMI, a comparison's metrics)")
	fl.IntVar(&f.bootstrap, "bootstrap", analysis.DefaultBootstrap, "bootstrap replicates of every confidence interval (a run's AMI, a comparison's metrics)")
	fl.IntVar(&f.top, "top", 10, "rows of the report's top-N tables (flows, nodes, ports, storms, queues)")
	fl.BoolVar(&f.asJSON, "json", false, "print summary.json to stdout instead of the human summary")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress bar")
	fl.StringVar(&f.tables, "tables", "csv", "format of tables/: csv or parquet (typed columns, zstd)")
	fl.BoolVar(&f.force, "force", false, "replace an analysis of other runs in the output directory (without it, analyze refuses to overwrite one)")
	fl.BoolVar(&f.partial, "partial", false, "a sweep directory that is not complete: analyze the points that are done and name the others (failed, incomplete, missing)")
	return root
}

// options validates the flags.
func (f *flags) options() (*options, error) {
	o := &options{out: f.out, top: f.top, asJSON: f.asJSON, quiet: f.quiet, opt: analysis.DefaultOptions()}
	o.opt.Partial, o.force = f.partial, f.force
	d, err := units.ParseTime(f.stormDuration)
	if err != nil {
		return nil, usageError{Err: fmt.Errorf("--storm-duration %q: %w", f.stormDuration, err)}
	}
	if d <= 0 {
		return nil, usageError{Err: fmt.Errorf("--storm-duration %s: must be > 0", f.stormDuration)}
	}
	o.opt.StormDurationPs = int64(d)
	o.opt.Seed = f.seed
	if f.bootstrap < 1 {
		return nil, usageError{Err: fmt.Errorf("--bootstrap %d: want at least 1 replicate", f.bootstrap)}
	}
	o.opt.Bootstrap = f.bootstrap
	if f.top < 1 {
		return nil, usageError{Err: fmt.Errorf("--top %d: want at least 1", f.top)}
	}
	o.opt.TopFlows = max(f.top, 20) // summary.json keeps at least analysis' default
	if o.tables, err = parseTablesFormat(f.tables); err != nil {
		return nil, err
	}
	return o, nil
}
