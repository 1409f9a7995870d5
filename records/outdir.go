package records

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tracefabric/tracefabric/internal/atomicfile"
)

// OutputDir makes a run's output appear atomically. The files are written into a
// temporary sibling directory, FINAL.partial-<pid>-<random>, whose run.json says
// complete=false from the start, so an interrupted run is visibly incomplete; Commit
// writes the final run.json (complete=true) and renames the directory to FINAL.
//
//	out, err := records.CreateOutputDir("out/demo")
//	w, err := records.NewDropsWriter(out.Path(records.DropsFile), dicts)
//	... write, close the writers ...
//	err = out.Commit(run) // or out.Abort() on failure
type OutputDir struct {
	d *atomicfile.Dir
}

// ErrNotRunDir: the output path exists and does not look like a tracefabric run
// directory, so it is not replaced.
var ErrNotRunDir = errors.New("not a tracefabric run directory")

// CreateOutputDir prepares the output directory final: it creates final's parent if
// needed, checks that final is absent, empty or a run directory of ours (so a long
// run does not fail at its end), and creates the temporary directory with an
// incomplete run.json.
func CreateOutputDir(final string) (*OutputDir, error) {
	d, err := atomicfile.CreateDir(final, false, checkReplaceable)
	if err != nil {
		return nil, err
	}
	out := &OutputDir{d: d}
	if err := WriteRun(out.Path(RunFile), &Run{SchemaVersion: SchemaVersion}); err != nil {
		d.Abort()
		return nil, fmt.Errorf("output directory %s: %w", d.Final(), err)
	}
	return out, nil
}

// Path is where to write the output file called name (for example DropsFile).
func (d *OutputDir) Path(name string) string { return d.d.Path(name) }

// Dir is the temporary directory being written.
func (d *OutputDir) Dir() string { return d.d.Temp() }

// Final is the directory the output appears as after Commit.
func (d *OutputDir) Final() string { return d.d.Final() }

// Commit marks run complete, writes it as run.json and renames the temporary
// directory to the final one. An existing final directory is replaced, with
// everything in it, only if it is empty or looks like a run directory (a run.json of
// ours, *.arrow files and possibly the analysis/ that analyze wrote for it and the
// parquet/ or csv/ that replay export wrote);
// otherwise Commit fails with ErrNotRunDir and leaves everything in place.
// Close every writer before Commit.
func (d *OutputDir) Commit(run *Run) error {
	if err := checkReplaceable(d.Final()); err != nil {
		return err
	}
	run.Complete, run.SchemaVersion = true, SchemaVersion
	if err := WriteRun(d.Path(RunFile), run); err != nil {
		run.Complete = false
		return err
	}
	if err := d.d.Commit(checkReplaceable); err != nil {
		run.Complete = false
		WriteRun(d.Path(RunFile), run) // the temporary directory must not look complete
		return err
	}
	return nil
}

// Abort ends the run without committing and removes the temporary directory.
func (d *OutputDir) Abort() error { return d.d.Abort() }

// AnalysisDir is the subdirectory where analyze writes its report for a run by
// default (RUN_DIR/analysis). A run directory holding one (recognised by its
// AnalysisSummaryFile) is still replaceable: that analysis describes the replaced run.
const AnalysisDir = "analysis"

// AnalysisSummaryFile is the file analyze writes last into its output directory; its
// presence marks a directory as a complete analysis.
const AnalysisSummaryFile = "summary.json"

// isAnalysis reports whether dir is a directory (not a symbolic link) holding a
// regular AnalysisSummaryFile: an analysis written by analyze.
func isAnalysis(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	fi, err = os.Lstat(filepath.Join(dir, AnalysisSummaryFile))
	return err == nil && fi.Mode().IsRegular()
}

// isRunDir reports whether dir holds a run.json.
func isRunDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, RunFile))
	return err == nil
}

// isAnalysisPartial reports whether name is the temporary directory of an analysis
// (.analysis.partial-<pid>-<random>), of any process.
func isAnalysisPartial(name string) bool {
	p, ok := atomicfile.ParsePartial(name)
	return ok && p.Hidden && p.Final == AnalysisDir
}

// checkReplaceable returns nil if dir is absent, an empty directory, or a directory
// holding only a tracefabric run.json, *.arrow files, an analysis/ subdirectory
// written by analyze (see AnalysisDir), analyze's temporary directories (an
// interrupted or killed analyze leaves one; it never blocks a run) and exports
// written by replay export (see isRunExport).
func checkReplaceable(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s exists and is not a directory", ErrNotRunDir, dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("output directory %s: %w", dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	for _, e := range entries {
		switch {
		case e.Name() == RunFile:
		case e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".arrow"):
		case e.Name() == AnalysisDir && isAnalysis(filepath.Join(dir, AnalysisDir)):
			// analyze's output for this run: stale once the run is replaced.
		case e.IsDir() && isAnalysisPartial(e.Name()):
			// analyze's temporary output, interrupted or killed: it goes with the run.
		case e.IsDir() && isRunExport(dir, e.Name()):
			// replay export's output for this run: stale too.
		case e.IsDir() && isRunDir(filepath.Join(dir, e.Name())):
			return fmt.Errorf("%w: %s holds runs in subdirectories (%q: the layout of replay run --hash all), which one run cannot replace; replay with --hash all to replace them, or choose another output directory", ErrNotRunDir, dir, e.Name())
		default:
			return fmt.Errorf("%w: %s holds %q, not only run.json, *.arrow files, an analysis/ written by analyze and exports (parquet/, csv/) written by replay export; remove it or choose another output directory", ErrNotRunDir, dir, e.Name())
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, RunFile))
	var head struct {
		SchemaVersion *int  `json:"schema_version"`
		Complete      *bool `json:"complete"`
	}
	if err == nil {
		err = json.Unmarshal(data, &head)
	}
	if err != nil || head.SchemaVersion == nil || head.Complete == nil {
		return fmt.Errorf("%w: %s has no tracefabric run.json; remove it or choose another output directory", ErrNotRunDir, dir)
	}
	return nil
}
