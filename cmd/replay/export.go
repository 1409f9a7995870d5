package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tracefabric/tracefabric/cmd/internal/cli"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/records/export"
)

func newExportCmd() *cobra.Command {
	var (
		format string
		out    string
	)
	cmd := &cobra.Command{
		Use:   "export [--format parquet|csv] [-o DIR] RUN_DIR",
		Short: "Write a run's record files as Parquet or CSV",
		Long: `export writes every record file of a run directory (ports, drops, pfc, buffer,
loadbalance, flows, messages, delay, packets and transport, as run.json lists them) as Parquet or CSV,
for Spark, BigQuery, DuckDB, spreadsheets and the other tools that do not read
Arrow IPC files (docs/records.md#parquet-and-csv-replay-export). Same columns in the same order:

  parquet  NAME.parquet, zstd; types kept (dictionary columns stay dictionary-
           encoded, the Arrow schema is stored in the file); the schema metadata
           tracefabric.schema_version and tracefabric.file as key-value metadata
  csv      NAME.csv, RFC 4180 with a header row; dictionary columns as their
           values, nulls as empty fields, times and counters as integers

The files go to -o DIR (default RUN_DIR/parquet or RUN_DIR/csv), which appears only
when complete and replaces only a previous export. The files are streamed batch by
batch: memory stays flat however big the run. RUN_DIR may also be a directory
written by 'replay run --hash all': each method's run is exported (into
RUN_DIR/<method>/parquet, or DIR/<method> with -o). 'replay run --export FORMAT'
exports right after the run.

Exit status: 0 success, 1 failure while running, 2 bad usage or input (not a run
directory, an incomplete run, a missing or damaged record file, an output directory
holding something else).`,
		Example: `  replay export out/demo                  # out/demo/parquet/drops.parquet, ...
  replay export --format csv out/demo     # out/demo/csv/drops.csv, ...
  replay export out/cmp -o /data/cmp      # a --hash all directory: /data/cmp/<method>/*.parquet
  duckdb -c "SELECT reason, count(*) FROM 'out/demo/parquet/drops.parquet' GROUP BY 1"`,
		Args: cli.NamedArgs("RUN_DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := export.ParseFormat(format)
			if err != nil {
				return usageError{Err: fmt.Errorf("--format %q: want %s", format, strings.Join(records.ExportFormats(), " or "))}
			}
			if err := checkRunDirArg(args[0]); err != nil {
				return err
			}
			start := time.Now()
			res, err := export.Runs(args[0], out, export.Options{Format: f})
			if err != nil {
				return exportError(err)
			}
			printExports(cmd.OutOrStdout(), res, time.Since(start))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", string(export.Parquet), "file format: parquet or csv")
	fl.StringVarP(&out, "out", "o", "", "output directory (default RUN_DIR/parquet or RUN_DIR/csv); replaced only if it holds a previous export")
	return cmd
}

// checkRunDirArg refuses, with what to do instead, a RUN_DIR that is no directory: a
// missing path, a capture (replay it first), a run's run.json (export its directory)
// or another file (exit 2).
func checkRunDirArg(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return inputError{Err: fmt.Errorf("%s: %w (want the directory replay run wrote)", dir, pathErrno(err))}
	case fi.IsDir():
		return nil
	case filepath.Base(dir) == records.RunFile:
		return inputError{Err: fmt.Errorf("%s is a run's %s, not its directory: replay export %s", dir, records.RunFile, filepath.Dir(dir))}
	}
	if r, err := ingest.Open([]string{dir}, ingest.Options{}); err == nil {
		r.Close()
		return inputError{Err: fmt.Errorf("%s is a capture, not a run directory: replay it first (replay run %s -o DIR), then replay export DIR", dir, dir)}
	}
	return inputError{Err: fmt.Errorf("%s is a file, not a run directory (want the directory replay run wrote)", dir)}
}

// exportError classifies export's errors: a bad run directory or output directory
// is the user's input (exit 2); the rest (I/O while writing) exit 1.
func exportError(err error) error {
	for _, bad := range []error{records.ErrNoRuns, records.ErrNotRunFile, records.ErrIncomplete,
		records.ErrSchemaVersion, records.ErrNotRecordFile, export.ErrNotExportDir} {
		if errors.Is(err, bad) {
			return inputError{Err: err}
		}
	}
	return classifyInput(err)
}

// exportFlag is replay run's --export: the format to export the run in, if any.
type exportFlag struct{ format string }

func (e *exportFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&e.format, "export", "", "after the run, also write its record files as parquet or csv into OUT/parquet or OUT/csv (as 'replay export')")
}

// options validates the flag; ok is false when no export was asked for.
func (e *exportFlag) options() (opt export.Options, ok bool, err error) {
	if e.format == "" {
		return opt, false, nil
	}
	f, err := export.ParseFormat(e.format)
	if err != nil {
		return opt, false, usageError{Err: fmt.Errorf("--export %q: want %s", e.format, strings.Join(records.ExportFormats(), " or "))}
	}
	return export.Options{Format: f}, true, nil
}

// run exports the committed run (or the --hash all runs) in out, if asked to.
func (e *exportFlag) run(w io.Writer, out string) error {
	opt, ok, err := e.options()
	if err != nil || !ok {
		return err
	}
	start := time.Now()
	res, err := export.Runs(out, "", opt)
	if err != nil {
		return exportError(fmt.Errorf("--export: %w", err))
	}
	printExports(w, res, time.Since(start))
	return nil
}

func printExports(w io.Writer, res []export.Result, took time.Duration) {
	for _, r := range res {
		var files []string
		var bytes int64
		for _, f := range r.Files {
			files = append(files, fmt.Sprintf("%s (%d rows)", filepath.Base(f.Path), f.Rows))
			bytes += f.Bytes
		}
		fmt.Fprintf(w, "exported %s to %s: %s; %.1f MB\n", r.Run, r.Dir, strings.Join(files, ", "), float64(bytes)/1e6)
	}
	fmt.Fprintf(w, "  export took %.2f s\n", took.Seconds())
}
