package records

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Export formats (docs/records.md#parquet-and-csv-replay-export): `replay export` writes each record file NAME.arrow of a
// run as NAME.parquet or NAME.csv, by default into the run directory's subdirectory
// named after the format (RUN_DIR/parquet, RUN_DIR/csv). The writer lives in package
// records/export, which only the commands import; this package knows the names, so
// that a run directory holding its export stays replaceable (see OutputDir.Commit).
const (
	ParquetFormat = "parquet"
	CSVFormat     = "csv"
)

// ExportFormats lists the export formats, the default first.
func ExportFormats() []string { return []string{ParquetFormat, CSVFormat} }

// ExportName is the name of record file name's export in format: ExportName(DropsFile,
// ParquetFormat) is "drops.parquet".
func ExportName(name, format string) string {
	return strings.TrimSuffix(name, ".arrow") + "." + format
}

// exportNames maps the name of every possible exported file to true.
var exportNames = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range ExportFormats() {
		for _, name := range Files() {
			m[ExportName(name, f)] = true
		}
	}
	return m
}()

// IsExport reports whether dir is a directory (not a symbolic link) holding only
// what `replay export` writes: regular files NAME.parquet or NAME.csv of record files
// NAME.arrow, and subdirectories holding only such files (the methods of a --hash all
// directory exported with -o). An empty directory counts.
func IsExport(dir string) bool { return isExport(dir, 1) }

func isExport(dir string, depth int) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		switch {
		case e.Type().IsRegular() && exportNames[e.Name()]:
		case e.IsDir() && depth > 0 && isExport(filepath.Join(dir, e.Name()), depth-1):
		default:
			return false
		}
	}
	return true
}

// isRunExport reports whether the entry name of run directory dir is an export that
// `replay export` wrote there by default (RUN_DIR/parquet, RUN_DIR/csv), or the hidden
// temporary directory of an interrupted one (.parquet.partial-<pid>-<n>). Either
// describes the run, and goes with it when the run is replaced.
func isRunExport(dir, name string) bool {
	for _, f := range ExportFormats() {
		if name == f || strings.HasPrefix(name, "."+f+".partial-") {
			return IsExport(filepath.Join(dir, name))
		}
	}
	return false
}

// ErrNoRuns: a directory that is not a run directory and holds none.
var ErrNoRuns = errors.New("records: no run directory")

// RunDirs expands a path given on the command line into run directories: the path
// itself when it holds run.json, else its immediate subdirectories that do (the layout
// of `replay run --hash all`: OUT/<method>/), in name order. Hidden entries (such as
// a replay's temporary output) are skipped. It does not read the runs.
func RunDirs(path string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(path, RunFile)); err == nil {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("records: %s is not a run directory: %w", path, err)
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		d := filepath.Join(path, e.Name())
		if _, err := os.Stat(filepath.Join(d, RunFile)); err == nil {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w: %s has no %s, nor subdirectories with one", ErrNoRuns, path, RunFile)
	}
	sort.Strings(dirs)
	return dirs, nil
}
