package main

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/tracefabric/tracefabric/analysis"
)

func readParquet(t *testing.T, path string) (arrow.Table, map[string]string) {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	kv := map[string]string{}
	for _, k := range pf.MetaData().KeyValueMetadata().Keys() {
		kv[k] = *pf.MetaData().KeyValueMetadata().FindValue(k)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tbl, kv
}

// TestTableTypes: a column's Parquet type is what its cells spell; empty cells are nulls.
func TestTableTypes(t *testing.T) {
	tb := &analysis.Table{Name: "mixed", Header: []string{"n", "x", "b", "s", "undefined", "mostly_int"}, Rows: [][]string{
		{"1", "0.5", "true", "rack-p0-r0", "", "7"},
		{"-20", "1e-09", "false", "3", "", "2.5"},
		{"", "", "", "", "", "NaN"},
	}}
	rec, err := tableRecord(tb)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	var types []string
	for _, f := range rec.Schema().Fields() {
		types = append(types, f.Type.String())
	}
	if want := []string{"int64", "float64", "bool", "utf8", "utf8", "float64"}; !reflect.DeepEqual(types, want) {
		t.Errorf("types %v, want %v", types, want)
	}
	n := rec.Column(0).(*array.Int64)
	x := rec.Column(1).(*array.Float64)
	if n.Value(1) != -20 || !n.IsNull(2) || x.Value(1) != 1e-9 || rec.Column(4).NullN() != 3 || !rec.Column(2).(*array.Boolean).Value(0) {
		t.Errorf("values: %v", rec)
	}
	if _, err := tableRecord(&analysis.Table{Name: "bad", Header: []string{"a", "b"}, Rows: [][]string{{"1"}}}); err == nil {
		t.Error("a short row was accepted")
	}
}

// TestTablesParquet: analyze --tables parquet writes every table as Parquet with the
// CSV table's columns and values, and the report points at the Parquet files.
func TestTablesParquet(t *testing.T) {
	runDir := demoRun(t)
	csvOut, pqOut := filepath.Join(t.TempDir(), "csv"), filepath.Join(t.TempDir(), "parquet")
	if code, _, stderr := runCmd(runDir, "-o", csvOut, "-q"); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd(runDir, "-o", pqOut, "-q", "--tables", "parquet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "tables (tables/*.parquet)") {
		t.Errorf("summary does not say the tables are Parquet:\n%s", stdout)
	}
	sum := readJSON(t, filepath.Join(pqOut, "summary.json"))
	tables := stringsAt(t, sum, "tables")
	if len(tables) < 10 {
		t.Fatalf("tables %v", tables)
	}
	for _, name := range tables {
		f, err := os.Open(filepath.Join(csvOut, "tables", name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		lines, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(pqOut, "tables", name+".csv")); !os.IsNotExist(err) {
			t.Errorf("%s.csv written next to the Parquet tables", name)
		}
		tbl, kv := readParquet(t, filepath.Join(pqOut, "tables", name+".parquet"))
		if kv[MetaTable] != name {
			t.Errorf("%s: key-value metadata %s = %q", name, MetaTable, kv[MetaTable])
		}
		var header []string
		for _, fl := range tbl.Schema().Fields() {
			header = append(header, fl.Name)
		}
		if !reflect.DeepEqual(header, lines[0]) || tbl.NumRows() != int64(len(lines)-1) {
			t.Errorf("%s: columns %q and %d rows; the CSV has %q and %d", name, header, tbl.NumRows(), lines[0], len(lines)-1)
			continue
		}
		// Every value reads back as the CSV cell spells it (integers and strings
		// exactly; floats to the same float64; empty cells as nulls).
		for j := range header {
			r := 0
			for _, chunk := range tbl.Column(j).Data().Chunks() {
				for i := range chunk.Len() {
					want := lines[1+r][j]
					got := chunk.ValueStr(i)
					if chunk.IsNull(i) {
						got = ""
					} else if fa, ok := chunk.(*array.Float64); ok {
						got = csvFloat(fa.Value(i))
					}
					if got != want {
						t.Errorf("%s row %d column %s: %q, CSV %q", name, r, header[j], got, want)
					}
					r++
				}
			}
		}
		tbl.Release()
	}
	// Spot checks of the inferred types on tables every demo analysis has.
	for _, c := range []struct{ table, column, typ string }{
		{"drops_by", "dimension", "utf8"}, {"drops_by", "drops", "int64"},
		{"delay_cdf", "tc", "int64"}, {"delay_cdf", "fraction", "float64"},
		{"pfc_ports", "node", "utf8"}, {"pfc_ports", "total_ps", "int64"},
	} {
		tbl, _ := readParquet(t, filepath.Join(pqOut, "tables", c.table+".parquet"))
		i := tbl.Schema().FieldIndices(c.column)
		if len(i) != 1 || tbl.Schema().Field(i[0]).Type.String() != c.typ {
			t.Errorf("%s.%s: %v, want %s", c.table, c.column, tbl.Schema(), c.typ)
		}
		tbl.Release()
	}
	md, _ := os.ReadFile(filepath.Join(pqOut, "report.md"))
	if !strings.Contains(string(md), "tables/drops_by.parquet") || strings.Contains(string(md), ".csv`") {
		t.Error("report.md does not point at the Parquet tables only")
	}
	if code, _, stderr := runCmd(runDir, "-o", pqOut, "--tables", "xlsx"); code != exitUsage || !strings.Contains(stderr, `--tables "xlsx": want csv or parquet`) {
		t.Errorf("--tables xlsx: exit %d, %q", code, stderr)
	}
}

// csvFloat formats a float as analysis' CSV tables do (shortest form that reads back
// as the same float64).
func csvFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
