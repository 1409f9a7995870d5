package export

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tracefabric/tracefabric/internal/atomicfile"
	"github.com/tracefabric/tracefabric/records"
)

// Format is an export file format.
type Format string

// The export formats.
const (
	Parquet Format = records.ParquetFormat // NAME.parquet, the default
	CSV     Format = records.CSVFormat     // NAME.csv
)

// ParseFormat parses a format name as the command line spells it ("parquet", "csv").
func ParseFormat(s string) (Format, error) {
	for _, f := range records.ExportFormats() {
		if strings.EqualFold(s, f) {
			return Format(f), nil
		}
	}
	return "", fmt.Errorf("export: format %q: want %s", s, strings.Join(records.ExportFormats(), " or "))
}

// DefaultRowGroupRows is the default number of rows of a Parquet row group: eight of
// the record files' 16,384-row batches, about DuckDB's own 122,880. A row group is the
// unit readers skip or read in parallel; the writer holds the open one in memory
// (encoded and compressed, with its encoders' dictionaries), so this bounds the
// export's memory: on packets.arrow, 1 Mi-row groups shrink the file by 2% and raise
// the peak RSS from about 110 to 180 MB.
const DefaultRowGroupRows = 1 << 17

// Options configures an export. The zero value means Parquet with the defaults.
type Options struct {
	Format Format // Parquet (default) or CSV
	// RowGroupRows bounds the rows of a Parquet row group (0: DefaultRowGroupRows).
	RowGroupRows int64
}

func (o Options) withDefaults() Options {
	if o.Format == "" {
		o.Format = Parquet
	}
	if o.RowGroupRows <= 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	return o
}

// ErrNotExportDir: the output path exists and holds something other than a previous
// export, so it is not replaced.
var ErrNotExportDir = errors.New("export: not an export directory")

// FileResult is one exported file.
type FileResult struct {
	Name  string // the record file, e.g. "drops.arrow"
	Path  string // the file written, at its final place, e.g. "out/demo/parquet/drops.parquet"
	Rows  int64  // rows (as many as the record file has and run.json states)
	Bytes int64  // size of the file written
}

// Result is the export of one run directory.
type Result struct {
	Run   string       // the run directory
	Dir   string       // the directory holding the exported files
	Files []FileResult // in the order of records.Files
}

// DefaultDir is where a run's export goes when no output directory is given:
// RUN_DIR/parquet or RUN_DIR/csv.
func DefaultDir(runDir string, f Format) string { return filepath.Join(runDir, string(f)) }

// Runs exports the run directory path, or every run of a directory written by
// `replay run --hash all` (its subdirectories holding run.json), checking each run
// first: run.json complete and of this schema version, every record file it lists
// present, of its kind and with the rows run.json states. With out empty, each run's
// files go to DefaultDir(run), each run's directory appearing on its own; otherwise
// into out for a single run, or out/<run directory name> for several, all at once.
//
// Errors about the input wrap records' sentinels (records.ErrIncomplete,
// records.ErrNotRunFile, records.ErrNoRuns, records.ErrNotRecordFile,
// records.ErrSchemaVersion) or fs.ErrNotExist; an output that may not be replaced,
// ErrNotExportDir.
func Runs(path, out string, opt Options) ([]Result, error) {
	opt = opt.withDefaults()
	if _, err := ParseFormat(string(opt.Format)); err != nil {
		return nil, err
	}
	dirs, err := records.RunDirs(path)
	if err != nil {
		return nil, err
	}
	runs := make([]*records.Run, len(dirs))
	for i, d := range dirs {
		if runs[i], err = checkRun(d); err != nil {
			return nil, err
		}
	}
	if out == "" {
		results := make([]Result, len(dirs))
		for i, d := range dirs {
			if err := writeAtomically(DefaultDir(d, opt.Format), func(tmp string) (err error) {
				results[i], err = exportRun(d, runs[i], tmp, opt)
				return err
			}); err != nil {
				return nil, err
			}
			results[i].relocate(DefaultDir(d, opt.Format))
		}
		return results, nil
	}
	var results []Result
	err = writeAtomically(out, func(tmp string) error {
		for i, d := range dirs {
			dst := tmp
			if len(dirs) > 1 {
				dst = filepath.Join(tmp, filepath.Base(d))
				if err := os.Mkdir(dst, 0o755); err != nil {
					return err
				}
			}
			r, err := exportRun(d, runs[i], dst, opt)
			if err != nil {
				return err
			}
			results = append(results, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range results {
		final := out
		if len(dirs) > 1 {
			final = filepath.Join(out, filepath.Base(dirs[i]))
		}
		results[i].relocate(final)
	}
	return results, nil
}

// relocate points the result at dir, where its files are after the rename.
func (r *Result) relocate(dir string) {
	r.Dir = dir
	for i := range r.Files {
		r.Files[i].Path = filepath.Join(dir, filepath.Base(r.Files[i].Path))
	}
}

// checkRun reads run.json of dir and checks that it lists record files, all present.
func checkRun(dir string) (*records.Run, error) {
	run, err := records.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, name := range records.Files() {
		if _, ok := run.Records[name]; !ok {
			continue
		}
		n++
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("%w: %s lists %s, which is missing: %w", records.ErrNotRecordFile, filepath.Join(dir, records.RunFile), name, err)
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: %s lists no record files", records.ErrNotRunFile, filepath.Join(dir, records.RunFile))
	}
	return run, nil
}

// exportRun exports the record files run.json lists, in records.Files order, into dst.
func exportRun(dir string, run *records.Run, dst string, opt Options) (Result, error) {
	res := Result{Run: dir, Dir: dst}
	for _, name := range records.Files() {
		want, ok := run.Records[name]
		if !ok {
			continue
		}
		src := filepath.Join(dir, name)
		path := filepath.Join(dst, records.ExportName(name, string(opt.Format)))
		rows, err := File(path, src, opt)
		if err != nil {
			return res, err
		}
		if rows != want {
			return res, fmt.Errorf("%w: %s has %d rows, %s states %d", records.ErrNotRecordFile, src, rows, filepath.Join(dir, records.RunFile), want)
		}
		fi, err := os.Stat(path)
		if err != nil {
			return res, err
		}
		res.Files = append(res.Files, FileResult{Name: name, Path: path, Rows: rows, Bytes: fi.Size()})
	}
	return res, nil
}

// File exports the record file src (of any kind, checked as records.OpenBatches
// does) to dst in opt.Format, batch by batch, and returns the rows written. dst is
// written in place: Runs calls it inside a temporary directory.
func File(dst, src string, opt Options) (rows int64, err error) {
	opt = opt.withDefaults()
	br, err := records.OpenBatches(src)
	if err != nil {
		return 0, err
	}
	defer br.Close()
	if got, want := br.Name(), filepath.Base(src); got != want {
		return 0, fmt.Errorf("%w: %s holds %s (its %s metadata)", records.ErrNotRecordFile, src, got, records.MetaFile)
	}
	f, err := os.Create(dst)
	if err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("export: %s: %w", dst, cerr)
		}
	}()
	w, err := NewWriter(opt.Format, f, br.Schema(), opt)
	if err != nil {
		return 0, fmt.Errorf("export: %s: %w", dst, err)
	}
	for br.Next() {
		if err := w.Write(br.Record()); err != nil {
			w.Close()
			return 0, fmt.Errorf("export: %s: %w", dst, err)
		}
	}
	if err := br.Err(); err != nil {
		w.Close()
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, fmt.Errorf("export: %s: %w", dst, err)
	}
	return br.Rows(), nil
}

// writeAtomically calls write with a new temporary sibling directory of final and
// renames it to final when write succeeds (replacing a previous export), or removes
// it when it fails (internal/atomicfile).
func writeAtomically(final string, write func(tmp string) error) error {
	d, err := atomicfile.CreateDir(final, true, checkReplaceable)
	if err != nil {
		return err
	}
	if err := write(d.Temp()); err != nil {
		d.Abort()
		return err
	}
	if err := d.Commit(checkReplaceable); err != nil {
		d.Abort()
		return err
	}
	return nil
}

// checkReplaceable returns nil if dir is absent or an export (records.IsExport).
func checkReplaceable(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("export: output directory %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("%w: %s exists and is not a directory", ErrNotExportDir, dir)
	case !records.IsExport(dir):
		return fmt.Errorf("%w: %s holds other files than a previous export (NAME.parquet, NAME.csv); remove it or choose another -o", ErrNotExportDir, dir)
	}
	return nil
}
