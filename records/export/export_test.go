package export_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
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

	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/records/export"
)

// The fixture run: rows are functions of their index i, so that each test states what
// it expects from the generator, not from the code under test.

var nodes = []string{"host-a", "host-b", "rack-x", "fabric-y", "spine-z"}

// ip is an IPv4 address, or with v6 an IPv6 one.
func ip(i int, v6 bool) ipaddr.Addr {
	if v6 {
		return ipaddr.From16([16]byte{0xfd, 0, 14: byte(i >> 8), 15: byte(i)})
	}
	return ipaddr.From4([4]byte{10, 0, byte(i >> 8), byte(i)})
}

// writeRun writes a complete run directory at dir with n rows in every record file
// (packets.arrow included), in record batches of batchRows rows.
func writeRun(t *testing.T, dir string, n, batchRows int) map[string]int64 {
	t.Helper()
	out, err := records.CreateOutputDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := records.NewWriterSet(out.Dir(), records.Dictionaries{Nodes: nodes}, true, records.WithBatchRows(batchRows))
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.AddTransport(out.Dir(), records.Dictionaries{Nodes: nodes}, records.WithBatchRows(batchRows)); err != nil {
		t.Fatal(err)
	}
	if err := ws.AddStages(out.Dir(), records.Dictionaries{Nodes: nodes}, records.WithBatchRows(batchRows)); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		node := int32(i % len(nodes))
		must(ws.Ports.Append(&records.PortRow{Node: node, Tier: records.Tier(i % 4), Port: int32(i % 3), Peer: int32((i + 1) % len(nodes)),
			TC: uint8(i % 8), RxPackets: int64(i), TxBytes: int64(i) * 1000, Drops: [records.NumDropReasons]int64{int64(i % 2), 0, 0, int64(i % 3)}}))
		must(ws.Drops.Append(&records.DropRow{TimePs: int64(i) * 1_000_003, Node: node, Tier: records.Tier(i % 4), Port: int32(i % 7),
			TC: uint8(i % 8), Reason: records.DropReason(i % int(records.NumDropReasons)), FlowID: int64(i / 2), Src: ip(i, i%2 == 1), Dst: ip(i+1, i%2 == 1),
			Proto: 17, Sport: uint16(60000 + i%5000), Dport: 4791, Bytes: int32(64 + i%1400), TraceIndex: int64(i)}))
		must(ws.PFC.Append(&records.PFCRow{TimePs: int64(i) * 5_000_000, Node: node, Port: int32(i % 4), Peer: int32((i + 2) % len(nodes)),
			TC: 3, Event: records.PFCEventKind(i % int(records.NumPFCEventKinds)), Quanta: uint16(65535 * (i % 2))}))
		must(ws.Buffer.Append(&records.BufferRow{TimePs: int64(i) * 100_000_000, Node: node, Pool: uint8(i % 2), SharedBytes: int64(i) * 256}))
		must(ws.LoadBalance.Append(&records.LoadBalanceRow{Node: node, Tier: records.TierRack, Set: 1, Member: int32(i % 4), Port: int32(i % 4),
			Peer: int32((i + 3) % len(nodes)), Flows: int64(i % 10), Packets: int64(i), Bytes: int64(i) * 1500, HashMethod: records.HashMethod(i % 6)}))
		delivered := int64(i % 3) // every third flow delivered nothing: null delays
		must(ws.Flows.Append(&records.FlowRow{FlowID: int64(i), Src: ip(i, i%2 == 1), Dst: ip(2*i, i%2 == 1), Proto: 6, Sport: uint16(i), Dport: 5201,
			DSCP: 26, TC: 3, SrcHost: 0, DstHost: 1, Packets: 10, Bytes: 15000, Delivered: delivered, Dropped: 10 - delivered,
			FirstPs: int64(i), LastPs: int64(i) + 7, DelayMinPs: 100 + int64(i), DelayMeanPs: 200 + int64(i), DelayMaxPs: 300 + int64(i),
			RackMember: int32(i%4) - 1, FabricMember: -1}))
		c := records.Completion(i % int(records.NumCompletions)) // fct_ps null unless complete
		must(ws.Messages.Append(&records.MessageRow{FlowID: int64(i / 3), Message: int32(i % 3), StartPs: int64(i) * 2_000_000, CapturedPs: int64(i) * 1_999_999,
			Packets: int64(1 + i%4), SizeBytes: int64(1+i%4) * 1500, FollowsFlowID: int64(i%2) - 1, FollowsMessage: int32(i%2) - 1,
			Completion: c, FctPs: 5_000_000 + int64(i), IdealFctPs: 4_000_000}))
		must(ws.Delay.Append(&records.DelayRow{TC: uint8(i % 8), LoPs: int64(i) * 10, HiPs: int64(i)*10 + 10, Packets: int64(i % 9)}))
		path := []int32{0, 2, 3, 2, 1}[:2+i%4]
		must(ws.Packets.Append(&records.PacketRow{TraceIndex: int64(i), FlowID: int64(i % 11), TC: 3, Bytes: 1024, InjectPs: int64(i) * 1000,
			DeliverPs: -1, Fate: records.Fate(i % int(records.NumFates)), CE: i%5 == 0, Path: path}))
		must(ws.Transport.Append(&records.TransportRow{TimePs: int64(i) * 4_000_000, FlowID: int64(i % 7), Node: node,
			Event: records.TransportEventKind(i % int(records.NumTransportEventKinds)), Value: int64(i) * 1_000_000_007}))
		must(ws.Stages.Append(&records.StageRow{FlowID: int64(i / 3), Stage: uint8(1 + i%3), Node: node, Set: int32(i % 5), Member: int32(i % 4)}))
	}
	rows, err := ws.Close()
	must(err)
	must(out.Commit(&records.Run{Records: rows}))
	return rows
}

// readParquet reads a Parquet file with pqarrow: its table and row-group sizes.
func readParquet(t *testing.T, path string) (arrow.Table, []int64) {
	tbl, groups, _ := readParquetMeta(t, path)
	return tbl, groups
}

// readParquetMeta is readParquet that also returns the file's key-value metadata.
func readParquetMeta(t *testing.T, path string) (arrow.Table, []int64, map[string]string) {
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
	var groups []int64
	for i := range pf.NumRowGroups() {
		groups = append(groups, pf.RowGroup(i).NumRows())
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1000}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background()) // ReadTable(nil) panics (NOTES.md)
	if err != nil {
		t.Fatal(err)
	}
	return tbl, groups, kv
}

// fields are a schema's columns as name, type and nullability (pqarrow adds field
// metadata of its own).
func fields(s *arrow.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, fmt.Sprintf("%s %s nullable=%v", f.Name, f.Type, f.Nullable))
	}
	return out
}

// cells renders a table's values row by row as strings (dictionary columns as their
// values, nulls as "(null)"), whatever its chunking.
func cells(tbl arrow.Table) [][]string {
	rows := make([][]string, tbl.NumRows())
	for j := range int(tbl.NumCols()) {
		r := 0
		for _, chunk := range tbl.Column(j).Data().Chunks() {
			for i := range chunk.Len() {
				rows[r] = append(rows[r], chunk.ValueStr(i))
				r++
			}
		}
	}
	return rows
}

// column returns column name of tbl as cells.
func column(tbl arrow.Table, name string) []string {
	idx := tbl.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil
	}
	var out []string
	for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
		for i := range chunk.Len() {
			out = append(out, chunk.ValueStr(i))
		}
	}
	return out
}

// sumInt adds up an integer column of tbl.
func sumInt(t *testing.T, tbl arrow.Table, name string) int64 {
	t.Helper()
	var s int64
	for _, c := range column(tbl, name) {
		var v int64
		if _, err := fmt.Sscan(c, &v); err != nil {
			t.Fatalf("column %s: %q is not an integer", name, c)
		}
		s += v
	}
	return s
}

func TestParquetMatchesArrow(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	const n = 95
	want := writeRun(t, run, n, 7) // 14 batches per file
	res, err := export.Runs(run, "", export.Options{RowGroupRows: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Dir != filepath.Join(run, "parquet") || len(res[0].Files) != len(records.Files()) {
		t.Fatalf("result %+v, want one run exported to %s/parquet with %d files", res, run, len(records.Files()))
	}
	for _, name := range records.Files() {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(run, "parquet", strings.TrimSuffix(name, ".arrow")+".parquet")
			got, groups, kv := readParquetMeta(t, path)
			defer got.Release()
			arrowTbl, err := records.ReadTable(filepath.Join(run, name))
			if err != nil {
				t.Fatal(err)
			}
			defer arrowTbl.Release()
			if got.NumRows() != n || want[name] != n {
				t.Errorf("%d rows, run.json %d, want %d", got.NumRows(), want[name], n)
			}
			// Same columns, order and types (dictionary columns stay dictionary), and the
			// schema metadata.
			schema, _ := records.Schema(name)
			if g, w := fields(got.Schema()), fields(schema); !reflect.DeepEqual(g, w) {
				t.Errorf("columns\n got %q\nwant %q", g, w)
			}
			for k, v := range map[string]string{records.MetaSchemaVersion: strconv.Itoa(records.SchemaVersion), records.MetaFile: name} {
				if kv[k] != v {
					t.Errorf("key-value metadata %s = %q, want %q", k, kv[k], v)
				}
			}
			if kv["ARROW:schema"] == "" {
				t.Error("no ARROW:schema in the key-value metadata")
			}
			if !reflect.DeepEqual(cells(got), cells(arrowTbl)) {
				t.Errorf("values differ from %s", name)
			}
			// Row groups of at most 10 rows: 95 rows make 10 groups.
			if len(groups) != 10 || groups[9] != 5 {
				t.Errorf("row groups %v, want 9 of 10 rows and one of 5", groups)
			}
		})
	}
	t.Run("values", func(t *testing.T) {
		read := func(name string) arrow.Table {
			tbl, _ := readParquet(t, filepath.Join(run, "parquet", name))
			t.Cleanup(tbl.Release)
			return tbl
		}
		var bytes, quanta int64
		for i := range n {
			bytes += int64(64 + i%1400)
			quanta += int64(65535 * (i % 2))
		}
		drops, pfc, flows, packets := read("drops.parquet"), read("pfc.parquet"), read("flows.parquet"), read("packets.parquet")
		if s := sumInt(t, drops, "bytes"); s != bytes {
			t.Errorf("drops bytes sum %d, want %d", s, bytes)
		}
		if s := sumInt(t, pfc, "quanta"); s != quanta {
			t.Errorf("pfc quanta sum %d, want %d", s, quanta)
		}
		if s := sumInt(t, drops, "time_ps"); s != 1_000_003*n*(n-1)/2 {
			t.Errorf("drops time_ps sum %d, want %d", s, 1_000_003*n*(n-1)/2)
		}
		if got := column(drops, "node")[7]; got != nodes[7%len(nodes)] {
			t.Errorf("drops row 7 node %q, want %q", got, nodes[7%len(nodes)])
		}
		if got := column(pfc, "event")[3]; got != "rx_resume" {
			t.Errorf("pfc row 3 event %q, want rx_resume", got)
		}
		if got := column(flows, "delay_mean_ps")[:3]; !reflect.DeepEqual(got, []string{"(null)", "201", "202"}) {
			t.Errorf("flows delay_mean_ps %q, want null, 201, 202", got)
		}
		if got := column(packets, "path")[2]; got != "host-a > rack-x > fabric-y > rack-x" {
			t.Errorf("packets row 2 path %q", got)
		}
		if got := column(drops, "src")[2:4]; !reflect.DeepEqual(got, []string{"10.0.0.2", "fd00::3"}) {
			t.Errorf("drops rows 2 and 3 src %q, want 10.0.0.2 and fd00::3", got)
		}
		if got := column(flows, "family")[:2]; !reflect.DeepEqual(got, []string{"ipv4", "ipv6"}) {
			t.Errorf("flows family %q, want ipv4, ipv6", got)
		}
	})
}

// TestParquetStatistics: every column chunk's statistics, where written, count the
// chunk's values and no nulls (pqarrow v17 writes a negative null count for
// dictionary arrays in required columns; the writer leaves their statistics out).
func TestParquetStatistics(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	writeRun(t, run, 40, 16)
	if _, err := export.Runs(run, "", export.Options{RowGroupRows: 32}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"drops.parquet", "flows.parquet", "packets.parquet", "loadbalance.parquet"} {
		pf, err := file.OpenParquetFile(filepath.Join(run, "parquet", name), false)
		if err != nil {
			t.Fatal(err)
		}
		stats := 0
		for g := range pf.NumRowGroups() {
			rg := pf.MetaData().RowGroup(g)
			for c := range rg.NumColumns() {
				cc, err := rg.ColumnChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				if ok, _ := cc.StatsSet(); !ok {
					continue
				}
				st, err := cc.Statistics()
				if err != nil || st == nil {
					t.Fatalf("%s: statistics %v", name, err)
				}
				stats++
				wantNulls := int64(0)
				if name == "flows.parquet" && strings.HasPrefix(cc.PathInSchema().String(), "delay_") {
					wantNulls = map[int]int64{0: 11, 1: 3}[g] // rows 0, 3, ..., 39: 11 of the first 32, 3 of the last 8
				}
				if st.NullCount() != wantNulls || st.NumValues() != rg.NumRows()-wantNulls {
					t.Errorf("%s group %d column %s: null count %d, values %d; want %d and %d",
						name, g, cc.PathInSchema(), st.NullCount(), st.NumValues(), wantNulls, rg.NumRows()-wantNulls)
				}
			}
		}
		pf.Close()
		if stats == 0 {
			t.Errorf("%s has no statistics at all", name)
		}
	}
}

func TestCSV(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	const n = 30
	writeRun(t, run, n, 8)
	out := filepath.Join(t.TempDir(), "csv-out")
	res, err := export.Runs(run, out, export.Options{Format: export.CSV})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Dir != out {
		t.Errorf("exported to %s, want %s", res[0].Dir, out)
	}
	for _, name := range records.Files() {
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(filepath.Join(out, strings.TrimSuffix(name, ".arrow")+".csv"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			lines, err := csv.NewReader(f).ReadAll() // RFC 4180
			if err != nil {
				t.Fatal(err)
			}
			schema, _ := records.Schema(name)
			var header []string
			for _, fl := range schema.Fields() {
				header = append(header, fl.Name)
			}
			if len(lines) != n+1 || !reflect.DeepEqual(lines[0], header) {
				t.Fatalf("%d lines, header %q; want %d lines, header %q", len(lines), lines[0], n+1, header)
			}
			arrowTbl, err := records.ReadTable(filepath.Join(run, name))
			if err != nil {
				t.Fatal(err)
			}
			defer arrowTbl.Release()
			want := cells(arrowTbl)
			for i := range want {
				for j := range want[i] {
					if want[i][j] == array.NullValueStr {
						want[i][j] = "" // nulls are empty fields
					}
				}
			}
			if !reflect.DeepEqual(lines[1:], want) {
				t.Errorf("rows differ from %s:\n got %q\nwant %q", name, lines[1], want[0])
			}
		})
	}
	// A few values, as the generator made them.
	read := func(name string) [][]string {
		f, _ := os.Open(filepath.Join(out, name))
		defer f.Close()
		lines, _ := csv.NewReader(f).ReadAll()
		return lines
	}
	for _, c := range []struct {
		file      string
		row, col  int
		want, why string
	}{
		{"drops.csv", 4, 1, "fabric-y", "dictionary column as its value (node 3)"},
		{"drops.csv", 4, 5, "oversize", "reason 3"},
		{"drops.csv", 4, 7, "fd00::3", "IPv6 address"},
		{"drops.csv", 3, 7, "10.0.0.2", "IPv4 address"},
		{"flows.csv", 1, 3, "ipv4", "family of an IPv4 flow"},
		{"flows.csv", 2, 3, "ipv6", "family of an IPv6 flow"},
		{"flows.csv", 1, 21, "", "null delay_mean_ps of a flow that delivered nothing"},
		{"flows.csv", 2, 21, "201", "delay_mean_ps"},
		{"flows.csv", 1, 23, "-1", "rack_member -1"},
		{"pfc.csv", 2, 6, "65535", "uint16 quanta"},
		{"packets.csv", 1, 7, "true", "ce of row 0"},
		{"packets.csv", 2, 7, "false", "ce of row 1"},
		{"packets.csv", 2, 8, "host-a > rack-x > fabric-y", "path"},
		{"packets.csv", 2, 9, "fabric-y", "end_node"},
		{"loadbalance.csv", 3, 12, "crc16", "hash method 2"},
	} {
		if got := read(c.file)[c.row][c.col]; got != c.want {
			t.Errorf("%s line %d field %d (%s): %q, want %q", c.file, c.row, c.col, c.why, got, c.want)
		}
	}
}

func TestCSVQuoting(t *testing.T) {
	// Node names never hold commas or quotes, but the writer quotes what needs it.
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}, {Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{`a,b`, `say "hi"`, "two\nlines"}, nil)
	b.Field(1).(*array.Int64Builder).AppendValues([]int64{1, 0, -3}, []bool{true, false, true})
	rec := b.NewRecord()
	defer rec.Release()
	var sb strings.Builder
	w, err := export.NewCSVWriter(&sb, schema)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "s,n\n\"a,b\",1\n\"say \"\"hi\"\"\",\n\"two\nlines\",-3\n"
	if sb.String() != want {
		t.Errorf("csv\n got %q\nwant %q", sb.String(), want)
	}
}

func TestOutputReplacedAtomically(t *testing.T) {
	tmp := t.TempDir()
	run := filepath.Join(tmp, "run")
	writeRun(t, run, 12, 5)
	out := filepath.Join(tmp, "out")
	entries := func() []string {
		var names []string
		es, _ := os.ReadDir(tmp)
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}

	// Parquet, then CSV into the same directory: the CSV export replaces the Parquet one.
	if _, err := export.Runs(run, out, export.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := export.Runs(run, out, export.Options{Format: export.CSV}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "drops.parquet")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("drops.parquet survived the replacing export: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "drops.csv")); err != nil {
		t.Error(err)
	}

	// A damaged record file: the export fails, the previous export stays as it was, and
	// no temporary directory is left behind.
	data, _ := os.ReadFile(filepath.Join(run, records.PacketsFile))
	os.WriteFile(filepath.Join(run, records.PacketsFile), data[:len(data)/2], 0o644)
	_, err := export.Runs(run, out, export.Options{})
	if !errors.Is(err, records.ErrNotRecordFile) || !strings.Contains(err.Error(), records.PacketsFile) {
		t.Errorf("truncated packets.arrow: %v, want ErrNotRecordFile naming it", err)
	}
	if _, err := os.Stat(filepath.Join(out, "drops.csv")); err != nil {
		t.Errorf("the previous export was touched: %v", err)
	}
	if got := entries(); !reflect.DeepEqual(got, []string{"out", "run"}) {
		t.Errorf("left behind: %q, want only out and run", got)
	}

	// An output directory holding anything else is not replaced.
	foreign := filepath.Join(tmp, "foreign")
	os.Mkdir(foreign, 0o755)
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(run, records.PacketsFile), data, 0o644)
	if _, err := export.Runs(run, foreign, export.Options{}); !errors.Is(err, export.ErrNotExportDir) {
		t.Errorf("foreign output directory: %v, want ErrNotExportDir", err)
	}
	if b, err := os.ReadFile(filepath.Join(foreign, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("foreign output directory changed: %q %v", b, err)
	}
	// Nor is the run directory itself.
	if _, err := export.Runs(run, run, export.Options{}); !errors.Is(err, export.ErrNotExportDir) {
		t.Errorf("-o RUN_DIR: %v, want ErrNotExportDir", err)
	}
}

func TestBadRuns(t *testing.T) {
	for _, c := range []struct {
		name   string
		spoil  func(run string)
		want   error
		naming string
	}{
		{"not a run directory", func(run string) { os.Remove(filepath.Join(run, records.RunFile)) }, records.ErrNoRuns, "run.json"},
		{"missing", func(run string) { os.RemoveAll(run) }, fs.ErrNotExist, "run"},
		{"incomplete", func(run string) {
			r, _ := records.ReadRun(run)
			r.Complete = false
			records.WriteRun(filepath.Join(run, records.RunFile), r)
		}, records.ErrIncomplete, "complete=false"},
		{"record file missing", func(run string) { os.Remove(filepath.Join(run, records.FlowsFile)) }, records.ErrNotRecordFile, records.FlowsFile},
		{"rows differ from run.json", func(run string) {
			r, _ := records.ReadRun(run)
			r.Records[records.DropsFile]++
			records.WriteRun(filepath.Join(run, records.RunFile), r)
		}, records.ErrNotRecordFile, "drops.arrow has 9 rows"},
		{"another kind of record file", func(run string) {
			data, _ := os.ReadFile(filepath.Join(run, records.PFCFile))
			os.WriteFile(filepath.Join(run, records.BufferFile), data, 0o644)
		}, records.ErrNotRecordFile, "holds pfc.arrow"},
		{"foreign file", func(run string) {
			os.WriteFile(filepath.Join(run, records.DelayFile), []byte("not arrow"), 0o644)
		}, records.ErrNotRecordFile, records.DelayFile},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			run := filepath.Join(tmp, "run")
			writeRun(t, run, 9, 4)
			c.spoil(run)
			_, err := export.Runs(run, "", export.Options{})
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.naming) {
				t.Errorf("error %v, want %v naming %q", err, c.want, c.naming)
			}
			if _, err := os.Stat(filepath.Join(run, "parquet")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("an output directory appeared: %v", err)
			}
		})
	}
}

func TestHashAllLayout(t *testing.T) {
	cmp := filepath.Join(t.TempDir(), "cmp")
	writeRun(t, filepath.Join(cmp, "crc16"), 5, 4)
	writeRun(t, filepath.Join(cmp, "crc32"), 6, 4)
	os.Mkdir(filepath.Join(cmp, "analysis"), 0o755) // not a run: skipped

	res, err := export.Runs(cmp, "", export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Dir != filepath.Join(cmp, "crc16", "parquet") || res[1].Dir != filepath.Join(cmp, "crc32", "parquet") {
		t.Fatalf("default layout: %+v", res)
	}
	out := filepath.Join(t.TempDir(), "x")
	res, err = export.Runs(cmp, out, export.Options{Format: export.CSV})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range []string{"crc16", "crc32"} {
		lines, err := os.ReadFile(filepath.Join(out, m, "drops.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Count(string(lines), "\n"), 1+5+i; got != want {
			t.Errorf("%s/drops.csv: %d lines, want %d", m, got, want)
		}
		if res[i].Files[1].Path != filepath.Join(out, m, "drops.csv") || res[i].Files[1].Rows != int64(5+i) {
			t.Errorf("result %+v", res[i].Files[1])
		}
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]export.Format{"parquet": export.Parquet, "CSV": export.CSV, "json": "", "": ""} {
		got, err := export.ParseFormat(in)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestDeterministic: the same records give the same bytes, in both formats.
func TestDeterministic(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	writeRun(t, run, 300, 64)
	for _, f := range []export.Format{export.Parquet, export.CSV} {
		a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
		for _, out := range []string{a, b} {
			if _, err := export.Runs(run, out, export.Options{Format: f, RowGroupRows: 100}); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range records.Files() {
			file := strings.TrimSuffix(name, ".arrow") + "." + string(f)
			x, errA := os.ReadFile(filepath.Join(a, file))
			y, errB := os.ReadFile(filepath.Join(b, file))
			if errA != nil || errB != nil || !bytes.Equal(x, y) || len(x) == 0 {
				t.Errorf("%s: two exports differ (%d and %d bytes; %v, %v)", file, len(x), len(y), errA, errB)
			}
		}
	}
}
