package records

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestOpenBatches(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, DropsFile)
	w, err := NewDropsWriter(path, testNodes, WithBatchRows(4))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		r := genDrop(i)
		if err := w.Append(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	br, err := OpenBatches(path)
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	if br.Name() != DropsFile || br.Batches() != 3 || !br.Schema().Equal(dropsTable.schema()) {
		t.Errorf("name %q, %d batches, schema %v; want drops.arrow, 3 batches of 4, 4 and 2 rows", br.Name(), br.Batches(), br.Schema())
	}
	var sizes []int64
	var bytes int64
	for br.Next() {
		rec := br.Record()
		sizes = append(sizes, rec.NumRows())
		for _, v := range rec.Column(12).(interface{ Int32Values() []int32 }).Int32Values() {
			bytes += int64(v)
		}
	}
	if err := br.Err(); err != nil {
		t.Fatal(err)
	}
	var want int64
	for i := range 10 {
		want += int64(64 + i%9000) // genDrop's Bytes
	}
	if !reflect.DeepEqual(sizes, []int64{4, 4, 2}) || br.Rows() != 10 || bytes != want {
		t.Errorf("batches of %v rows (%d in all), bytes %d; want 4, 4, 2 (10), %d", sizes, br.Rows(), bytes, want)
	}

	data, _ := os.ReadFile(path)
	cut := filepath.Join(dir, "cut.arrow")
	os.WriteFile(cut, data[:len(data)/2], 0o644)
	_, err = OpenBatches(cut)
	check(t, err, cut, ErrNotRecordFile, "truncated")
}

func TestIsExport(t *testing.T) {
	root := t.TempDir()
	mk := func(files ...string) string {
		dir, err := os.MkdirTemp(root, "x")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			p := filepath.Join(dir, f)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	link := filepath.Join(root, "link")
	os.Symlink(mk("drops.parquet"), link)
	for _, c := range []struct {
		name string
		dir  string
		want bool
	}{
		{"empty", mk(), true},
		{"parquet files", mk("drops.parquet", "packets.parquet", "ports.parquet"), true},
		{"csv files", mk("flows.csv", "delay.csv"), true},
		{"methods of a --hash all run", mk("crc32/drops.parquet", "crc16/drops.parquet"), true},
		{"other file", mk("drops.parquet", "notes.txt"), false},
		{"not a record file's name", mk("summary.parquet"), false},
		{"arrow file", mk("drops.arrow"), false},
		{"two levels deep", mk("a/b/drops.parquet"), false},
		{"symbolic link", link, false},
		{"missing", filepath.Join(root, "none"), false},
	} {
		if got := IsExport(c.dir); got != c.want {
			t.Errorf("%s: IsExport %v, want %v", c.name, got, c.want)
		}
	}
}

// A rerun over a run directory holding its export (RUN/parquet, RUN/csv, or the
// temporary directory of an interrupted export) replaces the run and the stale export;
// an export directory holding anything else keeps the run from being replaced.
func TestOutputDirReplacesRunWithExport(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []string
		ok    bool
	}{
		{"parquet", []string{"parquet/drops.parquet", "parquet/ports.parquet"}, true},
		{"csv and parquet", []string{"csv/drops.csv", "parquet/drops.parquet"}, true},
		{"interrupted export", []string{".parquet.partial-12-34/drops.parquet"}, true},
		{"empty export", []string{"csv/"}, true},
		{"foreign file in parquet/", []string{"parquet/drops.parquet", "parquet/notes.txt"}, false},
		{"other directory", []string{"exports/drops.parquet"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			final := filepath.Join(t.TempDir(), "demo")
			out, err := CreateOutputDir(final)
			if err != nil {
				t.Fatal(err)
			}
			run := sampleRun()
			run.Records = map[string]int64{DropsFile: writeDrops(t, out, 4)}
			if err := out.Commit(run); err != nil {
				t.Fatal(err)
			}
			for _, f := range c.files {
				p := filepath.Join(final, f)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if !strings.HasSuffix(f, "/") { // "csv/": an empty directory
					os.WriteFile(p, []byte("x"), 0o644)
				}
			}
			out2, err := CreateOutputDir(final)
			if c.ok != (err == nil) {
				t.Fatalf("CreateOutputDir: %v, want ok %v", err, c.ok)
			}
			if !c.ok {
				if !errors.Is(err, ErrNotRunDir) {
					t.Errorf("error %v, want ErrNotRunDir", err)
				}
				if !exists(filepath.Join(final, c.files[len(c.files)-1])) {
					t.Error("the refused directory was changed")
				}
				return
			}
			if err := out2.Commit(sampleRun()); err != nil {
				t.Fatal(err)
			}
			for _, f := range c.files {
				if exists(filepath.Join(final, f)) {
					t.Errorf("%s survived the replacement", f)
				}
			}
		})
	}
}

func TestRunDirs(t *testing.T) {
	root := t.TempDir()
	writeRunAt := func(dir string) {
		os.MkdirAll(dir, 0o755)
		writeRunJSON(dir)
	}
	single := filepath.Join(root, "single")
	writeRunAt(single)
	cmp := filepath.Join(root, "cmp")
	writeRunAt(filepath.Join(cmp, "crc32"))
	writeRunAt(filepath.Join(cmp, "crc16"))
	writeRunAt(filepath.Join(cmp, ".crc16.partial-1-2"))
	os.MkdirAll(filepath.Join(cmp, "analysis"), 0o755)
	for _, c := range []struct {
		path string
		want []string
		err  error
	}{
		{single, []string{single}, nil},
		{cmp, []string{filepath.Join(cmp, "crc16"), filepath.Join(cmp, "crc32")}, nil},
		{filepath.Join(cmp, "analysis"), nil, ErrNoRuns},
		{filepath.Join(root, "none"), nil, os.ErrNotExist},
	} {
		got, err := RunDirs(c.path)
		if !reflect.DeepEqual(got, c.want) || !errors.Is(err, c.err) {
			t.Errorf("RunDirs(%s) = %q, %v; want %q, %v", c.path, got, err, c.want, c.err)
		}
	}
}
