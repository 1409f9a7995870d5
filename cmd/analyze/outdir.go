package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracefabric/tracefabric/internal/atomicfile"
	"github.com/tracefabric/tracefabric/records"
)

// errNotAnalysisDir: the output path exists and holds something other than a
// previous analysis, so it is not replaced.
var errNotAnalysisDir = errors.New("not an analysis output directory")

// summaryFile is the file that marks a directory as an analysis output (written last).
const summaryFile = records.AnalysisSummaryFile

// outputDir makes an analysis appear atomically (records.OutputDir does it for a run,
// tied to run.json): everything is written into a hidden temporary sibling,
// .NAME.partial-<pid>-<random>, renamed to the final name by commit. A failed analysis
// removes its temporary directory; an interrupted one leaves a hidden directory
// without summary.json, which never looks complete.
type outputDir struct{ d *atomicfile.Dir }

// createOutputDir checks that final is absent, empty or a previous analysis (holds
// summary.json), creates its parent and the temporary directory.
func createOutputDir(final string) (*outputDir, error) {
	d, err := atomicfile.CreateDir(final, true, checkReplaceable)
	if err != nil {
		return nil, err
	}
	return &outputDir{d: d}, nil
}

// writeAnalysis creates the output directory final, lets write fill it, and commits
// it; on an error it removes it. An unwritable place is bad input that suggests -o
// (chosen: the user gave -o).
func writeAnalysis(final string, chosen bool, write func(*outputDir) error) (*outputDir, error) {
	od, err := createOutputDir(final)
	if err != nil {
		if errors.Is(err, atomicfile.ErrNotWritable) {
			if !chosen {
				return nil, inputError{Err: fmt.Errorf("%w; write the analysis elsewhere with -o DIR", err)}
			}
			return nil, inputError{Err: fmt.Errorf("%w; choose another -o", err)}
		}
		return nil, classifyInput(err)
	}
	err = write(od)
	if err == nil {
		err = od.commit()
	}
	if err != nil {
		od.abort()
		return nil, classifyInput(err)
	}
	return od, nil
}

// path is where to write name (relative to the output directory) before commit.
func (d *outputDir) path(name ...string) string { return d.d.Path(name...) }

// commit renames the temporary directory to the final one, replacing a previous
// analysis.
func (d *outputDir) commit() error { return d.d.Commit(checkReplaceable) }

// abort removes the temporary directory.
func (d *outputDir) abort() { d.d.Abort() }

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

// errOtherAnalysis: the output directory holds the analysis of other runs, which
// only --force replaces.
var errOtherAnalysis = errors.New("holds the analysis of other runs")

// checkSameInputs refuses to replace, without force, a previous analysis in dir
// (absent: nothing to replace) of other inputs than inputs (run or sweep
// directories): a second comparison into the same place does not silently replace
// the first. The previous inputs are its summary.json's runs[].dir (or sweep.dir),
// compared as absolute paths whatever their order (the points of a sweep as their
// sweep); a summary.json that lists none is replaced.
func checkSameInputs(dir string, inputs []string, force bool) error {
	data, err := os.ReadFile(filepath.Join(dir, summaryFile))
	if force || err != nil {
		return nil
	}
	var prev struct {
		Runs []struct {
			Dir string `json:"dir"`
		} `json:"runs"`
		Sweep *struct {
			Dir string `json:"dir"`
		} `json:"sweep"`
	}
	if json.Unmarshal(data, &prev) != nil {
		return nil
	}
	var old []string
	for _, r := range prev.Runs {
		old = append(old, r.Dir)
	}
	if prev.Sweep != nil {
		old = append(old, prev.Sweep.Dir)
	}
	if len(old) == 0 || slices.Equal(absSorted(old), absSorted(inputs)) {
		return nil
	}
	return fmt.Errorf("output directory %s %w (%s, says its %s), not of %s: choose another -o, or --force to replace it",
		dir, errOtherAnalysis, strings.Join(old, ", "), summaryFile, strings.Join(inputs, ", "))
}

// absSorted returns the absolute, cleaned paths, sorted and without repeats, a
// sweep's point directory replaced by its sweep's (so that the analysis of some of
// a sweep's points and of all of them have the same inputs).
func absSorted(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		p = filepath.Clean(p)
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), records.SweepFile)); err == nil {
			p = filepath.Dir(p)
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
