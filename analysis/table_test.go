package analysis

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/records"
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

// Every table of the ECMP numbers carries summary.json's judged: a set with fewer
// than 5 flows per member, and a tier with no judged set, read false, and an
// undefined measure is an empty cell (null), not NaN.
func TestTablesJudged(t *testing.T) {
	s := &Summary{Imbalance: ImbalanceOf([]SetLoad{
		{Node: nid("fabric-p0-f0"), Tier: records.TierFabric, Set: 0, Bytes: []float64{50, 50, 0, 0}, Flows: []float64{10, 10, 0, 0}}, // 20 = 5 per member
		{Node: nid("fabric-p0-f1"), Tier: records.TierFabric, Set: 0, Bytes: []float64{500, 0, 0, 0}, Flows: []float64{1, 0, 0, 0}},   // too few flows
		{Node: nid("rack-p0-r0"), Tier: records.TierRack, Set: 0, Bytes: []float64{100, 300}, Flows: []float64{2, 3}},                 // too few
	}, testNodes())}
	tables := map[string]Table{}
	for _, tb := range s.Tables() {
		tables[tb.Name] = tb
	}
	col := func(tb Table, name string) int {
		i := slices.Index(tb.Header, name)
		if i < 0 {
			t.Fatalf("%s has no %s column: %v", tb.Name, name, tb.Header)
		}
		return i
	}
	for name, want := range map[string]map[string]string{
		"ecmp_member_load": {"fabric-p0-f0": "true", "fabric-p0-f1": "false", "rack-p0-r0": "false"},
		"ecmp_sets":        {"fabric-p0-f0": "true", "fabric-p0-f1": "false", "rack-p0-r0": "false"},
		"ecmp_tiers":       {"fabric": "true", "rack": "false"},
	} {
		tb := tables[name]
		j := col(tb, "judged")
		if len(tb.Rows) == 0 {
			t.Fatalf("%s: no rows", name)
		}
		for _, r := range tb.Rows {
			if r[j] != want[r[0]] {
				t.Errorf("%s %v: judged %s, want %s", name, r, r[j], want[r[0]])
			}
			if name == "ecmp_tiers" && r[0] == "rack" && r[col(tb, "max_mean")] != "" {
				t.Errorf("the unjudged rack tier's max_mean is %q, want an empty cell", r[col(tb, "max_mean")])
			}
		}
	}
}
