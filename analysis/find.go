package analysis

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tracefabric/tracefabric/records"
)

// ErrNoRuns is returned by FindRuns for a path that is not a run directory and holds
// none.
var ErrNoRuns = errors.New("not a run directory")

// FindRuns expands a path given on the command line into run directories: the path
// itself when it holds run.json, else its immediate subdirectories that do (the layout
// of `replay run --hash all`: OUT/<method>/), in name order. Hidden entries (such as a
// replay's temporary output) are skipped. It does not read the runs.
//
// Its errors name the path once and say what to give instead: a missing path; a file
// of a run or sweep directory (run.json, flows.arrow, sweep.json: analyze its
// directory); an analysis output (analyze the run or sweep it describes); a directory
// with no run (ErrNoRuns).
func FindRuns(path string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(path, records.RunFile)); err == nil {
		return []string{path}, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named once, here
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !fi.IsDir() {
		if d := filepath.Dir(path); holdsRunOrSweep(d) {
			return nil, fmt.Errorf("%w: %s is a file of %s: give the directory (analyze %s)", ErrNoRuns, path, runOrSweep(d), d)
		}
		return nil, fmt.Errorf("%w: %s is a file: give a run directory (holding %s), a directory of runs (replay run --hash all) or a sweep directory", ErrNoRuns, path, records.RunFile)
	}
	if _, err := os.Stat(filepath.Join(path, records.AnalysisSummaryFile)); err == nil {
		if d := filepath.Dir(filepath.Clean(path)); holdsRunOrSweep(d) {
			return nil, fmt.Errorf("%w: %s is an analysis written by analyze, of %s: analyze %s", ErrNoRuns, path, runOrSweep(d), d)
		}
		return nil, fmt.Errorf("%w: %s is an analysis written by analyze (it holds %s): analyze the run directories it describes (its %s lists them under runs)", ErrNoRuns, path, records.AnalysisSummaryFile, records.AnalysisSummaryFile)
	}
	dirs, err := records.RunDirs(path) // the subdirectories of `replay run --hash all`
	if errors.Is(err, records.ErrNoRuns) {
		return nil, fmt.Errorf("%w: %s has no %s, nor subdirectories with one", ErrNoRuns, path, records.RunFile)
	}
	return dirs, err
}

// holdsRunOrSweep reports whether dir is a run directory (run.json), a sweep
// directory (sweep.json) or a directory of runs (`replay run --hash all`).
func holdsRunOrSweep(dir string) bool {
	for _, f := range []string{records.RunFile, records.SweepFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() && e.Name()[0] != '.' {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), records.RunFile)); err == nil {
				return true
			}
		}
	}
	return false
}

// runOrSweep names what holdsRunOrSweep found in dir: "the run directory DIR", "the
// sweep DIR" or "the runs under DIR".
func runOrSweep(dir string) string {
	switch {
	case fileExists(filepath.Join(dir, records.RunFile)):
		return "the run directory " + dir
	case fileExists(filepath.Join(dir, records.SweepFile)):
		return "the sweep " + dir
	}
	return "the runs under " + dir
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
