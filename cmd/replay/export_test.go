package main

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/tracefabric/tracefabric/records"
)

// sums summarises each column of tbl by one number: integers and booleans by their
// sum, strings and dictionary columns by the total length of their values; nulls by
// their count (under "name nulls").
func sums(t *testing.T, tbl arrow.Table) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for j, f := range tbl.Schema().Fields() {
		var s, nulls int64
		for _, c := range tbl.Column(j).Data().Chunks() {
			for i := range c.Len() {
				if c.IsNull(i) {
					nulls++
					continue
				}
				switch a := c.(type) {
				case *array.Int64:
					s += a.Value(i)
				case *array.Int32:
					s += int64(a.Value(i))
				case *array.Uint16:
					s += int64(a.Value(i))
				case *array.Uint8:
					s += int64(a.Value(i))
				case *array.Boolean:
					if a.Value(i) {
						s++
					}
				case *array.String:
					s += int64(len(a.Value(i)))
				case *array.Dictionary:
					s += int64(len(a.Dictionary().(*array.String).Value(a.GetValueIndex(i))))
				default:
					t.Fatalf("column %s: type %s not summed", f.Name, f.Type)
				}
			}
		}
		out[f.Name] = s
		out[f.Name+" nulls"] = nulls
	}
	return out
}

func readParquetTable(t *testing.T, path string) arrow.Table {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background()) // not nil: ReadTable(nil) panics
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestExportDemo exports the demo run, open loop (it drops and pauses) and closed loop
// (transport.arrow too), with --record-packets, and reads every Parquet file back with
// pqarrow: the row counts are run.json's and every column's sum is the Arrow file's.
func TestExportDemo(t *testing.T) {
	for _, mode := range []string{"open", "closed"} {
		t.Run(mode, func(t *testing.T) { exportDemo(t, mode) })
	}
}

func exportDemo(t *testing.T, mode string) {
	out := filepath.Join(t.TempDir(), "demo")
	if code, _, stderr := runCmd("run", demo, "-o", out, "-q", "--record-packets", "--transport", mode); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCmd("export", out)
	if code != exitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, filepath.Join(out, "parquet")) {
		t.Errorf("export summary does not name %s/parquet:\n%s", out, stdout)
	}
	run, err := records.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	want := len(records.Files()) - 2 // transport.arrow: closed loop only; stages.arrow: not for the Clos
	if mode == "closed" {
		want++
	}
	if len(run.Records) != want || run.Records[records.PacketsFile] != run.Simulation.Injected {
		t.Fatalf("run.json records %v: want %d files and a packet row per injected packet", run.Records, want)
	}
	for name := range run.Records {
		t.Run(name, func(t *testing.T) {
			pq := readParquetTable(t, filepath.Join(out, "parquet", strings.TrimSuffix(name, ".arrow")+".parquet"))
			defer pq.Release()
			arrowTbl, err := records.ReadTable(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			defer arrowTbl.Release()
			if pq.NumRows() != run.Records[name] || arrowTbl.NumRows() != run.Records[name] {
				t.Errorf("parquet %d rows, arrow %d, run.json %d", pq.NumRows(), arrowTbl.NumRows(), run.Records[name])
			}
			got, want := sums(t, pq), sums(t, arrowTbl)
			for _, f := range arrowTbl.Schema().Fields() {
				if got[f.Name] != want[f.Name] || got[f.Name+" nulls"] != want[f.Name+" nulls"] {
					t.Errorf("column %s: parquet sum %d (%d nulls), arrow %d (%d nulls)",
						f.Name, got[f.Name], got[f.Name+" nulls"], want[f.Name], want[f.Name+" nulls"])
				}
				i := pq.Schema().FieldIndices(f.Name)
				if len(i) != 1 || !arrow.TypeEqual(pq.Schema().Field(i[0]).Type, f.Type) {
					t.Errorf("column %s: parquet reads back as %v, want %s", f.Name, i, f.Type)
				}
			}
		})
	}
	// The demo drops and pauses open loop, and closed loop its senders react: the sums
	// above compare more than zeros.
	if mode == "open" && (run.Records[records.DropsFile] == 0 || run.Records[records.PFCFile] == 0) ||
		mode == "closed" && run.Records[records.TransportFile] == 0 {
		t.Errorf("%s-loop demo run without drops, PFC events or transport events: %v", mode, run.Records)
	}
}

// TestRunExport: replay run --export csv writes OUT/csv; a rerun replaces the run
// together with its stale export.
func TestRunExport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	code, stdout, stderr := runCmd("run", demo, "-o", out, "--export", "csv")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "wrote run.json") || !strings.Contains(stdout, "exported "+out) {
		t.Errorf("summary lacks the run or the export:\n%s", stdout)
	}
	run, err := records.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	for name, rows := range run.Records {
		f, err := os.Open(filepath.Join(out, "csv", strings.TrimSuffix(name, ".arrow")+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		lines, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil || int64(len(lines)) != rows+1 {
			t.Errorf("%s: %d lines (%v), want a header and %d rows", name, len(lines), err, rows)
		}
	}
	drops, _ := os.ReadFile(filepath.Join(out, "csv", "drops.csv"))
	if !strings.HasPrefix(string(drops), "time_ps,node,tier,port,tc,reason,") || !strings.Contains(string(drops), ",rack-p1-r3,rack,0,0,egress-limit,") {
		t.Errorf("drops.csv does not start as the demo's drops:\n%.300s", drops)
	}

	// --json keeps stdout JSON: the export's lines go to stderr.
	code, stdout, stderr = runCmd("run", demo, "-o", out, "--json", "--export", "parquet")
	if code != exitOK || !strings.HasPrefix(stdout, "{") || strings.Contains(stdout, "exported") || !strings.Contains(stderr, "exported") {
		t.Fatalf("rerun with --json: exit %d, stdout %.80q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "csv")); !os.IsNotExist(err) {
		t.Errorf("the previous run's csv/ survived the rerun: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "parquet", "drops.parquet")); err != nil {
		t.Error(err)
	}
}

func TestExportErrors(t *testing.T) {
	tmp := t.TempDir()
	good := filepath.Join(tmp, "good")
	if code, _, stderr := runCmd("run", demo, "-o", good, "-q"); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	incomplete := filepath.Join(tmp, "incomplete")
	os.MkdirAll(incomplete, 0o755)
	records.WriteRun(filepath.Join(incomplete, records.RunFile), &records.Run{})
	foreign := filepath.Join(tmp, "foreign")
	os.MkdirAll(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "mine.txt"), nil, 0o644)

	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no run directory given", []string{"export"}, exitUsage, "missing RUN_DIR: want RUN_DIR"},
		{"bad format", []string{"export", "--format", "xlsx", good}, exitUsage, `--format "xlsx": want parquet or csv`},
		{"bad --export", []string{"run", demo, "-o", filepath.Join(tmp, "x"), "--export", "json"}, exitUsage, "--export"},
		{"not a run directory", []string{"export", tmp + "/nothing"}, exitUsage, "nothing: no such file or directory (want the directory replay run wrote)"},
		{"a directory without runs", []string{"export", foreign}, exitUsage, "has no run.json"},
		{"incomplete run", []string{"export", incomplete}, exitUsage, "complete=false"},
		{"output holds other files", []string{"export", good, "-o", foreign}, exitUsage, "holds other files than a previous export"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCmd(c.args...)
			if code != c.code || !strings.Contains(stderr, c.msg) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line saying %q", code, stderr, c.code, c.msg)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(tmp, "x")); !os.IsNotExist(err) {
		t.Errorf("a bad --export still ran the replay: %v", err)
	}
	if entries, _ := os.ReadDir(foreign); len(entries) != 1 {
		t.Errorf("the refused output directory changed: %v", entries)
	}
}

func TestExportHelp(t *testing.T) {
	code, stdout, _ := runCmd("export", "--help")
	for _, want := range []string{"replay export [--format parquet|csv] [-o DIR] RUN_DIR", "RUN_DIR/parquet", "--hash all", "Examples:"} {
		if code != exitOK || !strings.Contains(stdout, want) {
			t.Errorf("export --help (exit %d) lacks %q", code, want)
		}
	}
}

// TestRunHashAllExport: --hash all --export exports each method's run into its own
// directory; replay export of the --hash all directory with -o puts each under DIR.
func TestRunHashAllExport(t *testing.T) {
	if testing.Short() {
		t.Skip("six runs")
	}
	out := filepath.Join(t.TempDir(), "cmp")
	if code, stdout, stderr := runCmd("run", demo, "-o", out, "--hash", "all", "-q", "--export", "csv"); code != exitOK || strings.Count(stdout, "exported ") != 6 {
		t.Fatalf("exit %d, %d exports: %s%s", code, strings.Count(stdout, "exported "), stdout, stderr)
	}
	all := filepath.Join(t.TempDir(), "all")
	if code, _, stderr := runCmd("export", out, "-o", all); code != exitOK {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	for _, m := range []string{"crc32", "crc32WithSalt", "crc16", "crc16Ccitt", "xor16", "toeplitz"} {
		run, err := records.ReadRun(filepath.Join(out, m))
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(out, m, "csv", "loadbalance.csv"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if int64(len(lines)) != run.Records[records.LoadBalanceFile]+1 || !strings.HasSuffix(lines[1], ","+m) {
			t.Errorf("%s/csv/loadbalance.csv: %d lines, first row %q; want %d rows of hash method %s",
				m, len(lines), lines[1], run.Records[records.LoadBalanceFile], m)
		}
		pq := readParquetTable(t, filepath.Join(all, m, "drops.parquet"))
		if pq.NumRows() != run.Records[records.DropsFile] {
			t.Errorf("%s/drops.parquet: %d rows, run.json %d", m, pq.NumRows(), run.Records[records.DropsFile])
		}
		pq.Release()
	}
}
