package analysis

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteCSVFile(t *testing.T) {
	dir := t.TempDir()
	tb := Table{Name: "pfc_ports", Header: []string{"node", "paused_ps"}, Rows: [][]string{{"rack-p0-r0", "12"}, {"a,b", "3"}}}
	if err := WriteTables(dir, []Table{tb}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "pfc_ports.csv")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("%s has mode %v, want 0644 (tables are for sharing)", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(data), "node,paused_ps\nrack-p0-r0,12\n\"a,b\",3\n"; got != want {
		t.Errorf("CSV %q, want %q", got, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}

	// A bad row: no file appears, no temporary file is left.
	bad := Table{Name: "bad", Header: []string{"a", "b"}, Rows: [][]string{{"1"}}}
	if err := bad.WriteCSVFile(dir); err == nil || !strings.Contains(err.Error(), "row 0") {
		t.Errorf("short row: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("after a failed write: %v", entries)
	}
}
