package export_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/metadata"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/tracefabric/tracefabric/records/export"
)

// Every type the writer takes, nullable and not: the values come from a seeded
// generator and are read back by Arrow Go's own Parquet reader (pqarrow), the
// independent judge here.
var allTypes = arrow.NewSchema([]arrow.Field{
	{Name: "i8", Type: arrow.PrimitiveTypes.Int8},
	{Name: "i16", Type: arrow.PrimitiveTypes.Int16, Nullable: true},
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
	{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "u8", Type: arrow.PrimitiveTypes.Uint8},
	{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
	{Name: "u32", Type: arrow.PrimitiveTypes.Uint32},
	{Name: "u64", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	{Name: "few", Type: arrow.BinaryTypes.String},                  // few distinct: dictionary-encoded
	{Name: "many", Type: arrow.BinaryTypes.String, Nullable: true}, // > 1 MiB distinct: falls back to PLAIN
	{Name: "enum", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}},
}, nil)

var enumValues = []string{"delivered", "dropped", "undrained", "never-used"}

// genBatch makes rows [start, start+n) of the generated table.
func genBatch(t *testing.T, r *rand.Rand, start, n int) arrow.Record {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, allTypes)
	defer b.Release()
	null := func(i int) bool { return (start+i)%7 == 3 }
	for i := range n {
		row := start + i
		b.Field(0).(*array.Int8Builder).Append(int8(r.IntN(256) - 128))
		if null(i) {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int16Builder).Append(int16(r.IntN(65536) - 32768))
		}
		b.Field(2).(*array.Int32Builder).Append(r.Int32() - 1<<30)
		if null(i) {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.Int64Builder).Append(r.Int64() - 1<<62)
		}
		b.Field(4).(*array.Uint8Builder).Append(uint8(r.IntN(256)))
		if null(i) {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.Uint16Builder).Append(uint16(r.IntN(65536)))
		}
		b.Field(6).(*array.Uint32Builder).Append(r.Uint32())
		b.Field(7).(*array.Uint64Builder).Append(r.Uint64())
		if null(i) {
			b.Field(8).AppendNull()
		} else {
			b.Field(8).(*array.Float64Builder).Append(r.NormFloat64() * 1e6)
		}
		if row%11 == 5 {
			b.Field(9).AppendNull()
		} else {
			b.Field(9).(*array.BooleanBuilder).Append(r.IntN(3) == 0)
		}
		b.Field(10).(*array.StringBuilder).Append(fmt.Sprintf("host-%d", r.IntN(12)))
		if null(i) {
			b.Field(11).AppendNull()
		} else {
			b.Field(11).(*array.StringBuilder).Append(fmt.Sprintf("distinct value %08d %x", row, r.Uint64()))
		}
		if err := b.Field(12).(*array.BinaryDictionaryBuilder).AppendString(enumValues[r.IntN(3)]); err != nil {
			t.Fatal(err)
		}
	}
	return b.NewRecord()
}

// writeParquet writes batches of rows rows each with opt and returns the file.
func writeParquet(t *testing.T, recs []arrow.Record, opt export.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := export.NewParquetWriter(&buf, allTypes, opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestParquetAllTypesRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	// 3 batches of 40,000 rows in row groups of 50,000: a group boundary inside a
	// batch, int64 and uint64 pages split at 1 MiB (50,000 x 8 B = 400 kB; "many" holds
	// 40 B x 50,000 = 2 MB of distinct strings, past the 1 MiB dictionary limit).
	var recs []arrow.Record
	for i := range 3 {
		recs = append(recs, genBatch(t, r, i*40_000, 40_000))
	}
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	data := writeParquet(t, recs, export.Options{RowGroupRows: 50_000})

	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if g := pf.NumRowGroups(); g != 3 {
		t.Fatalf("%d row groups, want 3 (50,000 + 50,000 + 20,000 rows)", g)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 4096}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if g, w := fields(tbl.Schema()), fields(allTypes); !reflect.DeepEqual(g, w) {
		t.Fatalf("columns\n got %q\nwant %q", g, w)
	}
	want := array.NewTableFromRecords(allTypes, recs)
	defer want.Release()
	if g, w := cells(tbl), cells(want); !reflect.DeepEqual(g, w) {
		for i := range w {
			if !reflect.DeepEqual(g[i], w[i]) {
				t.Fatalf("values read back differ from the values written, first at row %d:\n got %q\nwant %q", i, g[i], w[i])
			}
		}
	}

	// Encodings: small-domain columns are dictionary-encoded, "many" starts so and
	// falls back to PLAIN, int64 is PLAIN only.
	rg := pf.MetaData().RowGroup(0)
	for c, want := range map[int]struct{ dict, plainPages bool }{3: {false, true}, 10: {true, false}, 11: {true, true}, 12: {true, false}} {
		cc, _ := rg.ColumnChunk(c)
		if cc.HasDictionaryPage() != want.dict {
			t.Errorf("column %s: dictionary page %v, want %v", cc.PathInSchema(), cc.HasDictionaryPage(), want.dict)
		}
		if want.plainPages && cc.HasDictionaryPage() {
			// a PLAIN data page follows the dictionary-encoded ones
			n := 0
			pr, err := pf.RowGroup(0).GetColumnPageReader(c)
			if err != nil {
				t.Fatal(err)
			}
			for pr.Next() {
				if dp, ok := pr.Page().(file.DataPage); ok && parquet.Encoding(dp.Encoding()) == parquet.Encodings.Plain {
					n++
				}
			}
			if n == 0 {
				t.Errorf("column %s: no PLAIN data page after the dictionary filled", cc.PathInSchema())
			}
		}
	}

	// Statistics of the first row group, computed here from the rows written.
	var minI64, maxI64 int64 = math.MaxInt64, math.MinInt64
	var minU16, maxU16 uint16 = math.MaxUint16, 0
	var minF, maxF = math.Inf(1), math.Inf(-1)
	nulls := 0
	minS, maxS := "", ""
	for i := range 50_000 {
		rec, k := recs[i/40_000], i%40_000
		if a := rec.Column(3).(*array.Int64); a.IsNull(k) {
			nulls++
		} else {
			minI64, maxI64 = min(minI64, a.Value(k)), max(maxI64, a.Value(k))
			u := rec.Column(5).(*array.Uint16).Value(k)
			minU16, maxU16 = min(minU16, u), max(maxU16, u)
			f := rec.Column(8).(*array.Float64).Value(k)
			minF, maxF = math.Min(minF, f), math.Max(maxF, f)
		}
		s := rec.Column(10).(*array.String).Value(k)
		if minS == "" || s < minS {
			minS = s
		}
		maxS = max(maxS, s)
	}
	stat := func(c int) metadata.TypedStatistics {
		cc, _ := rg.ColumnChunk(c)
		st, err := cc.Statistics()
		if err != nil || st == nil {
			t.Fatalf("column %d: statistics %v", c, err)
		}
		return st
	}
	if st := stat(3).(*metadata.Int64Statistics); st.Min() != minI64 || st.Max() != maxI64 || st.NullCount() != int64(nulls) {
		t.Errorf("i64 statistics min %d max %d nulls %d, want %d %d %d", st.Min(), st.Max(), st.NullCount(), minI64, maxI64, nulls)
	}
	// uint16 is stored as INT32 and ordered unsigned: the reader gives the bits back.
	if st := stat(5).(*metadata.Int32Statistics); uint16(st.Min()) != minU16 || uint16(st.Max()) != maxU16 {
		t.Errorf("u16 statistics min %d max %d, want %d %d", st.Min(), st.Max(), minU16, maxU16)
	}
	if st := stat(8).(*metadata.Float64Statistics); st.Min() != minF || st.Max() != maxF {
		t.Errorf("f64 statistics min %g max %g, want %g %g", st.Min(), st.Max(), minF, maxF)
	}
	if st := stat(10).(*metadata.ByteArrayStatistics); string(st.Min()) != minS || string(st.Max()) != maxS {
		t.Errorf("few statistics min %q max %q, want %q %q", st.Min(), st.Max(), minS, maxS)
	}
}

// TestParquetEnumDictionaryKept: a dictionary column reads back with the record
// file's whole dictionary in its order, used values or not.
func TestParquetEnumDictionaryKept(t *testing.T) {
	rec := genBatch(t, rand.New(rand.NewPCG(3, 4)), 0, 100)
	defer rec.Release()
	data := writeParquet(t, []arrow.Record{rec}, export.Options{})
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	d := tbl.Column(12).Data().Chunk(0).(*array.Dictionary).Dictionary().(*array.String)
	var got []string
	for i := range d.Len() {
		got = append(got, d.Value(i))
	}
	var want []string
	wd := rec.Column(12).(*array.Dictionary).Dictionary().(*array.String)
	for i := range wd.Len() {
		want = append(want, wd.Value(i))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dictionary read back %q, want the written one %q", got, want)
	}
}

// TestParquetEmpty: a file of no rows is a valid Parquet file of the schema.
func TestParquetEmpty(t *testing.T) {
	data := writeParquet(t, nil, export.Options{})
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if pf.NumRows() != 0 || pf.NumRowGroups() != 0 || pf.MetaData().Schema.NumColumns() != len(allTypes.Fields()) {
		t.Errorf("rows %d, groups %d, columns %d; want 0, 0, %d", pf.NumRows(), pf.NumRowGroups(), pf.MetaData().Schema.NumColumns(), len(allTypes.Fields()))
	}
}

// TestParquetRefusesBadBatches: a batch of another schema, or nulls in a column that
// is not nullable, is an error, not a corrupt file.
func TestParquetRefusesBadBatches(t *testing.T) {
	var buf bytes.Buffer
	other := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	w, err := export.NewParquetWriter(&buf, allTypes, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, other)
	b.Field(0).(*array.Int64Builder).Append(1)
	rec := b.NewRecord()
	defer rec.Release()
	if err := w.Write(rec); err == nil {
		t.Error("a batch of another schema was accepted")
	}
	strict := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	w2, err := export.NewParquetWriter(&buf, strict, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	nb := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil))
	nb.Field(0).AppendNull()
	nrec := nb.NewRecord()
	defer nrec.Release()
	// same name and type but nullable: the schema differs, refused before any null
	if err := w2.Write(nrec); err == nil {
		t.Error("a batch with nulls for a required column was accepted")
	}
	if _, err := export.NewParquetWriter(&buf, arrow.NewSchema([]arrow.Field{{Name: "t", Type: arrow.FixedWidthTypes.Timestamp_ns}}, nil), export.Options{}); err == nil {
		t.Error("a timestamp column was accepted though the writer has no form for it")
	}
}
