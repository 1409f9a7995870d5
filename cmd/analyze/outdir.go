package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tracefabric/tracefabric/records"
)

// errNotAnalysisDir: the output path exists and holds something other than a
// previous analysis, so it is not replaced.
var errNotAnalysisDir = errors.New("not an analysis output directory")

// summaryFile is the file that marks a directory as an analysis output (written last).
const summaryFile = records.AnalysisSummaryFile

// outputDir makes an analysis appear atomically, as records.OutputDir does for a run
// (which is tied to run.json, so it is not reused): everything is written into a
// hidden temporary sibling, .NAME.partial-<pid>-<random>, renamed to the final name by
// commit. A failed analysis removes its temporary directory; an interrupted one leaves
// a hidden directory without summary.json, which never looks complete.
type outputDir struct {
	final, tmp string
}

// createOutputDir checks that final is absent, empty or a previous analysis (holds
// summary.json), creates its parent and the temporary directory.
func createOutputDir(final string) (*outputDir, error) {
	final = filepath.Clean(final)
	parent := filepath.Dir(final)
	if err := checkReplaceable(final); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("output directory %s: cannot create its parent: %w", final, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(final)+".partial-"+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, fmt.Errorf("output directory %s: parent %s is not writable: %w", final, parent, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("output directory %s: %w", final, err)
	}
	return &outputDir{final: final, tmp: tmp}, nil
}

// path is where to write name (relative to the output directory) before commit.
func (d *outputDir) path(name ...string) string {
	return filepath.Join(append([]string{d.tmp}, name...)...)
}

// commit renames the temporary directory to the final one, replacing a previous
// analysis (moved aside first, removed once the new one is in place).
func (d *outputDir) commit() error {
	if err := checkReplaceable(d.final); err != nil {
		return err
	}
	old := ""
	if _, err := os.Lstat(d.final); err == nil {
		old = d.tmp + ".replaced"
		if err := os.Rename(d.final, old); err != nil {
			return fmt.Errorf("output directory %s: %w", d.final, err)
		}
	}
	if err := os.Rename(d.tmp, d.final); err != nil {
		if old != "" {
			os.Rename(old, d.final)
		}
		return fmt.Errorf("output directory %s: %w", d.final, err)
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// abort removes the temporary directory.
func (d *outputDir) abort() { os.RemoveAll(d.tmp) }

// checkReplaceable returns nil if dir is absent, an empty directory or a previous
// analysis (a directory holding summary.json).
func checkReplaceable(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("output directory %s: %w: it exists and is not a directory", dir, errNotAnalysisDir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("output directory %s: %w", dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	if fi, err := os.Lstat(filepath.Join(dir, summaryFile)); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("output directory %s: %w: it holds files but no %s; remove it or choose another -o", dir, errNotAnalysisDir, summaryFile)
}
