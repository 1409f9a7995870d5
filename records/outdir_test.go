package records

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeDrops writes n drop rows into out's drops.arrow.
func writeDrops(t *testing.T, out *OutputDir, n int) int64 {
	t.Helper()
	w, err := NewDropsWriter(out.Path(DropsFile), testNodes)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := genDrop(i)
		if err := w.Append(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w.Rows()
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

// writeRunJSON writes a complete tracefabric run.json into dir.
func writeRunJSON(dir string) {
	if err := WriteRun(filepath.Join(dir, RunFile), sampleRun()); err != nil {
		panic(err)
	}
}

func TestOutputDirCommit(t *testing.T) {
	final := filepath.Join(t.TempDir(), "out", "demo") // parent created on demand
	out, err := CreateOutputDir(final)
	if err != nil {
		t.Fatal(err)
	}
	if exists(final) || !strings.HasPrefix(filepath.Base(out.Dir()), "demo.partial-") {
		t.Fatalf("temporary directory %s, final %s exists: %v", out.Dir(), final, exists(final))
	}
	if _, err := ReadRun(out.Dir()); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("run.json of a fresh output directory: %v, want ErrIncomplete", err)
	}
	run := sampleRun()
	run.Complete = false
	run.Records = map[string]int64{DropsFile: writeDrops(t, out, 10)}
	if err := out.Commit(run); err != nil {
		t.Fatal(err)
	}
	if exists(out.Dir()) {
		t.Errorf("temporary directory %s still there", out.Dir())
	}
	got, err := ReadRun(final)
	if err != nil || !got.Complete || got.Records[DropsFile] != 10 {
		t.Fatalf("committed run.json: %+v, %v", got, err)
	}
	rows, _, err := ReadAll(OpenDrops(filepath.Join(final, DropsFile)))
	if err != nil || len(rows) != 10 {
		t.Fatalf("committed drops: %d rows, %v", len(rows), err)
	}
	if err := out.Commit(run); err == nil {
		t.Error("second Commit accepted")
	}

	// A second run replaces the first: its files only.
	out2, err := CreateOutputDir(final)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out2.Path(PFCFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := out2.Commit(sampleRun()); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(final, DropsFile)) || !exists(filepath.Join(final, PFCFile)) {
		t.Error("the replaced run's files are not exactly the new run's")
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(final), "demo.*"))
	if len(left) != 0 {
		t.Errorf("left behind: %q", left)
	}
}

func TestOutputDirReplacesEmptyDir(t *testing.T) {
	final := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(final, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := CreateOutputDir(final)
	if err != nil {
		t.Fatal(err)
	}
	if err := out.Commit(sampleRun()); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRun(final); err != nil {
		t.Fatal(err)
	}
}

// A rerun over a run directory that analyze wrote its report into (RUN/analysis with
// summary.json) replaces the run and its stale analysis.
func TestOutputDirReplacesRunWithAnalysis(t *testing.T) {
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
	analysis := filepath.Join(final, AnalysisDir)
	for _, p := range []string{"plots", "tables"} {
		if err := os.MkdirAll(filepath.Join(analysis, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{AnalysisSummaryFile, "report.md", "plots/drops_over_time.png"} {
		if err := os.WriteFile(filepath.Join(analysis, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out2, err := CreateOutputDir(final)
	if err != nil {
		t.Fatalf("CreateOutputDir over a run with its analysis: %v", err)
	}
	if err := out2.Commit(sampleRun()); err != nil {
		t.Fatalf("Commit over a run with its analysis: %v", err)
	}
	if exists(analysis) || exists(filepath.Join(final, DropsFile)) {
		t.Error("the replaced run's analysis or records survived")
	}
	if _, err := ReadRun(final); err != nil {
		t.Fatal(err)
	}
}

func TestOutputDirRefusesForeign(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(dir string) error
	}{
		{"a --hash all directory", func(dir string) error {
			if err := os.Mkdir(filepath.Join(dir, "crc16"), 0o755); err != nil {
				return err
			}
			writeRunJSON(filepath.Join(dir, "crc16"))
			return nil
		}},
		{"other files", func(dir string) error { return os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644) }},
		{"foreign run.json", func(dir string) error { return os.WriteFile(filepath.Join(dir, RunFile), []byte(`{"a":1}`), 0o644) }},
		{"arrow without run.json", func(dir string) error { return os.WriteFile(filepath.Join(dir, DropsFile), nil, 0o644) }},
		{"subdirectory", func(dir string) error { return os.Mkdir(filepath.Join(dir, "plots"), 0o755) }},
		{"analysis without summary.json", func(dir string) error {
			writeRunJSON(dir)
			return os.Mkdir(filepath.Join(dir, AnalysisDir), 0o755)
		}},
		{"analysis as a file", func(dir string) error {
			writeRunJSON(dir)
			return os.WriteFile(filepath.Join(dir, AnalysisDir), nil, 0o644)
		}},
		{"summary.json as a directory", func(dir string) error {
			writeRunJSON(dir)
			return os.MkdirAll(filepath.Join(dir, AnalysisDir, AnalysisSummaryFile), 0o755)
		}},
		{"analysis beside foreign files", func(dir string) error {
			writeRunJSON(dir)
			if err := os.Mkdir(filepath.Join(dir, AnalysisDir), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, AnalysisDir, AnalysisSummaryFile), nil, 0o644); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
		}},
		{"analysis without run.json", func(dir string) error {
			if err := os.Mkdir(filepath.Join(dir, AnalysisDir), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, AnalysisDir, AnalysisSummaryFile), nil, 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			final := filepath.Join(t.TempDir(), "run")
			if err := os.Mkdir(final, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := tc.setup(final); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"a --hash all directory": `runs in subdirectories ("crc16": the layout of replay run --hash all)`}[tc.name]
			if _, err := CreateOutputDir(final); !errors.Is(err, ErrNotRunDir) || !strings.Contains(err.Error(), final) || !strings.Contains(err.Error(), want) {
				t.Errorf("CreateOutputDir over it: %v, want ErrNotRunDir naming %s and saying %q", err, final, want)
			}
		})
	}

	// Foreign content appearing during the run: Commit refuses and the output stays
	// incomplete in its temporary directory.
	final := filepath.Join(t.TempDir(), "run")
	out, err := CreateOutputDir(final)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(final, "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := out.Commit(sampleRun()); !errors.Is(err, ErrNotRunDir) {
		t.Fatalf("Commit over a foreign directory: %v", err)
	}
	if _, err := ReadRun(out.Dir()); !errors.Is(err, ErrIncomplete) {
		t.Errorf("after a refused Commit, run.json: %v, want ErrIncomplete", err)
	}
	if !exists(filepath.Join(final, "mine")) {
		t.Error("the foreign directory was touched")
	}
	// A file where the directory should be.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateOutputDir(file); !errors.Is(err, ErrNotRunDir) {
		t.Errorf("output over a regular file: %v", err)
	}
}

func TestOutputDirAbort(t *testing.T) {
	final := filepath.Join(t.TempDir(), "run")
	out, err := CreateOutputDir(final)
	if err != nil {
		t.Fatal(err)
	}
	writeDrops(t, out, 3)
	if err := out.Abort(); err != nil {
		t.Fatal(err)
	}
	if exists(final) {
		t.Error("aborted run appeared at its final path")
	}
	if exists(out.Dir()) {
		t.Errorf("aborted run left its temporary directory %s", out.Dir())
	}
	if err := out.Commit(sampleRun()); err == nil {
		t.Error("Commit after Abort accepted")
	}
}

func TestOutputDirUnwritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(file, "run") // a parent that is a file
	if _, err := CreateOutputDir(final); err == nil || !strings.Contains(err.Error(), final) {
		t.Errorf("parent is a file: %v, want an error naming %s", err, final)
	}

	ro := filepath.Join(dir, "read-only")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if f, err := os.Create(filepath.Join(ro, "probe")); err == nil {
		f.Close() // root ignores permissions: only the case above applies
		t.Logf("running as a user that can write to mode 0555 directories; read-only case not checkable")
		return
	}
	final = filepath.Join(ro, "run")
	if _, err := CreateOutputDir(final); err == nil || !strings.Contains(err.Error(), ro) {
		t.Errorf("read-only parent: %v, want an error naming %s", err, ro)
	}
}
