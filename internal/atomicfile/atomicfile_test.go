package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	if err := WriteFile(path, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Fatalf("content %q", b)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	// A failing writer leaves the old file and no temporary.
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error { w.Write([]byte("partial")); return boom })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Fatalf("content after a failed write %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left %v", ents)
	}
	// Never replaces something that is not a regular file.
	if err := WriteFile(dir, []byte("x")); err == nil {
		t.Fatal("replaced a directory")
	}
}

func TestDir(t *testing.T) {
	parent := t.TempDir()
	final := filepath.Join(parent, "sub", "out")
	d, err := CreateDir(final, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(d.Temp()), ".out"+PartialInfix) {
		t.Fatalf("temp %s", d.Temp())
	}
	os.WriteFile(d.Path("f"), []byte("x"), 0o644)
	if _, err := os.Stat(final); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("final exists before Commit")
	}
	if err := d.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(final, "f")); string(b) != "x" {
		t.Fatal("committed content")
	}
	if err := d.Commit(nil); !errors.Is(err, ErrDone) {
		t.Fatalf("second commit: %v", err)
	}
	// Replacing: the checker is asked, the old content goes.
	d2, _ := CreateDir(final, false, nil)
	os.WriteFile(d2.Path("g"), []byte("y"), 0o644)
	refuse := errors.New("no")
	if err := d2.Commit(func(string) error { return refuse }); !errors.Is(err, refuse) {
		t.Fatalf("commit past a refusing checker: %v", err)
	}
	if err := d2.Commit(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(final, "f")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("old content kept")
	}
	if ents, _ := os.ReadDir(filepath.Dir(final)); len(ents) != 1 {
		t.Fatalf("siblings left: %v", ents)
	}
	// Abort removes the temporary directory.
	d3, _ := CreateDir(final, false, nil)
	if err := d3.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d3.Temp()); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("abort left the temporary directory")
	}
}
