package analysis

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/tracefabric/tracefabric/records"
)

// ErrNoRuns is returned by FindRuns for a directory holding no run.
var ErrNoRuns = errors.New("analysis: no run directory")

// FindRuns expands a path given on the command line into run directories: the path
// itself when it holds run.json, else its immediate subdirectories that do (the layout
// of `replay run --hash all`: OUT/<method>/), in name order. Hidden entries (such as a
// replay's temporary output) are skipped. It does not read the runs.
func FindRuns(path string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(path, records.RunFile)); err == nil {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("analysis: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() || e.Name()[0] == '.' {
			continue
		}
		d := filepath.Join(path, e.Name())
		if _, err := os.Stat(filepath.Join(d, records.RunFile)); err == nil {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w: %s has no %s, nor subdirectories with one", ErrNoRuns, path, records.RunFile)
	}
	sort.Strings(dirs)
	return dirs, nil
}
