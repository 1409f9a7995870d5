package export

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/klauspost/compress/zstd"
)

// The Parquet writer: the format's own subset this project needs, written here so that
// a command that exports does not link Arrow Go's parquet packages (which pull gRPC,
// protobuf and Arrow's compute kernels into the binary, and cost its start-up time
// and memory on every run, exporting or not).
//
// The file (https://parquet.apache.org/docs/file-format/): "PAR1", then each row
// group's column chunks one after the other, each chunk a dictionary page
// (dictionary columns only) and data pages; then the footer, a Thrift compact
// FileMetaData, its length as 4 little-endian bytes, and "PAR1". Pages are version 1
// data pages of at most about pageBytes uncompressed, each compressed on its own with
// zstd. Values are PLAIN (little-endian integers and doubles, booleans one bit each,
// strings as a 4-byte length and the bytes); dictionary columns are RLE_DICTIONARY
// (a dictionary page of PLAIN strings, data pages of bit-packed indices); nullable
// columns carry definition levels (bit-packed, width 1). Column chunks carry
// statistics (null count, and min and max in the type's order) except dictionary
// columns, whose values readers see through the dictionary.

// pageBytes bounds the uncompressed values of one data page (Parquet writers' usual
// 1 MiB).
const pageBytes = 1 << 20

// dictBytes bounds a column chunk's dictionary (PLAIN-encoded); a column whose
// distinct values exceed it continues PLAIN.
const dictBytes = 1 << 20

// Parquet's physical types, encodings, converted types and page types (parquet.thrift).
const (
	ptBoolean   = 0
	ptInt32     = 1
	ptInt64     = 2
	ptDouble    = 5
	ptByteArray = 6

	encPlain          = 0
	encRLE            = 3
	encRLEDictionary  = 8
	codecZstd         = 6
	pageData          = 0
	pageDictionary    = 2
	repRequired       = 0
	repOptional       = 1
	convertedUTF8     = 0
	convertedUint8    = 11
	convertedInt8     = 15
	logicalString     = 1
	logicalInteger    = 10
	parquetVersion    = 2
	parquetCreatedBy  = "tracefabric records/export"
	noConvertedType   = -1
	defaultZstdLevel  = zstd.SpeedDefault
	maxGroupsPerRun   = 63 // bit-packed groups of 8 per run: the run header fits one byte
	definitionLevelsW = 1
)

// zstdEncoder is the one zstd encoder of the process (EncodeAll is safe for
// concurrent use), made on the first export so that commands pay for it only then.
var zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(defaultZstdLevel), zstd.WithEncoderConcurrency(1))
})

// ParquetWriter writes batches as a Parquet file: zstd compression, row groups of at
// most Options.RowGroupRows rows, dictionary columns written as Parquet dictionary
// pages, the Arrow schema stored (ARROW:schema, as Arrow's own writers store it) so
// that Arrow readers get the same types back (dictionary, uint8, uint16), and the
// schema's metadata (tracefabric.schema_version, tracefabric.file) as key-value
// metadata.
//
// Memory: the open row group's compressed pages and one open page per column, so it
// is bounded by RowGroupRows, not by the file.
type ParquetWriter struct {
	w         *bufio.Writer
	off       int64 // bytes written so far
	err       error // the first write error
	schema    *arrow.Schema
	cols      []*pqColumn
	zstd      *zstd.Encoder
	groupMax  int64
	groupRows int64
	rows      int64
	groups    []rowGroupMeta
	hdr       compact
	closed    bool
}

// rowGroupMeta is what the footer says of one row group.
type rowGroupMeta struct {
	rows, offset, compressed, uncompressed int64
	chunks                                 []chunkMeta
}

// chunkMeta is what the footer says of one column chunk.
type chunkMeta struct {
	values, compressed, uncompressed int64
	dataOffset, dictOffset           int64 // dictOffset -1: no dictionary page
	encodings                        []int32
	stats                            stats
}

// stats are a column chunk's statistics: its nulls and, when hasMinMax, its smallest
// and largest values encoded as PLAIN values of the physical type.
type stats struct {
	nulls      int64
	hasMinMax  bool
	min, max   []byte
	minI, maxI int64
	minU, maxU uint64
	minF, maxF float64
}

// NewParquetWriter starts a Parquet file of schema on w.
func NewParquetWriter(w io.Writer, schema *arrow.Schema, opt Options) (*ParquetWriter, error) {
	opt = opt.withDefaults()
	p := &ParquetWriter{schema: schema, groupMax: opt.RowGroupRows}
	for i, f := range schema.Fields() {
		c, err := newColumn(f)
		if err != nil {
			return nil, fmt.Errorf("export: parquet: column %d %q: %w", i, f.Name, err)
		}
		p.cols = append(p.cols, c)
	}
	enc, err := zstdEncoder()
	if err != nil {
		return nil, fmt.Errorf("export: parquet: zstd: %w", err)
	}
	p.zstd = enc
	p.w = bufio.NewWriterSize(w, 1<<20)
	p.write([]byte("PAR1"))
	return p, p.err
}

func (p *ParquetWriter) write(b []byte) {
	if p.err != nil {
		return
	}
	n, err := p.w.Write(b)
	p.off += int64(n)
	p.err = err
}

// Write appends rec to the open row group, starting a new one when it is full.
func (p *ParquetWriter) Write(rec arrow.Record) error {
	if p.closed {
		return errors.New("export: parquet writer is closed")
	}
	if !rec.Schema().Equal(p.schema) {
		return fmt.Errorf("export: parquet: batch schema %s differs from the writer's %s", rec.Schema(), p.schema)
	}
	n := int(rec.NumRows())
	for from := 0; from < n && p.err == nil; {
		to := min(n, from+int(p.groupMax-p.groupRows))
		for j, c := range p.cols {
			if err := c.append(p, rec.Column(j), from, to); err != nil {
				return fmt.Errorf("export: parquet: column %q: %w", c.name, err)
			}
		}
		p.groupRows += int64(to - from)
		from = to
		if p.groupRows == p.groupMax {
			p.flushGroup()
		}
	}
	return p.err
}

// Close writes the last row group and the footer and flushes them to w.
func (p *ParquetWriter) Close() error {
	if p.closed {
		return p.err
	}
	p.closed = true
	if p.groupRows > 0 {
		p.flushGroup()
	}
	footer, err := p.footer()
	if err != nil {
		return err
	}
	p.write(footer)
	p.write(binary.LittleEndian.AppendUint32(nil, uint32(len(footer))))
	p.write([]byte("PAR1"))
	if p.err == nil {
		p.err = p.w.Flush()
	}
	return p.err
}

// flushGroup writes the open row group's column chunks.
func (p *ParquetWriter) flushGroup() {
	g := rowGroupMeta{rows: p.groupRows, offset: p.off}
	for _, c := range p.cols {
		c.flushPage(p)
		m := chunkMeta{values: c.chunkValues, dictOffset: -1, stats: c.stats}
		if c.dictPages > 0 {
			m.dictOffset = p.off
			raw := c.dictValues
			comp := p.zstd.EncodeAll(raw, c.comp[:0])
			c.comp = comp
			p.hdr.reset()
			p.hdr.i32(1, pageDictionary)
			p.hdr.i32(2, int32(len(raw)))
			p.hdr.i32(3, int32(len(comp)))
			p.hdr.begin(7) // DictionaryPageHeader
			p.hdr.i32(1, int32(c.dictCount))
			p.hdr.i32(2, encPlain)
			p.hdr.end()
			p.hdr.end()
			m.uncompressed += int64(len(p.hdr.buf) + len(raw))
			m.compressed += int64(len(p.hdr.buf) + len(comp))
			p.write(p.hdr.buf)
			p.write(comp)
		}
		m.dataOffset = p.off
		p.write(c.pages)
		m.uncompressed += c.uncompressed
		m.compressed += int64(len(c.pages))
		m.encodings = c.encodings()
		m.stats.min, m.stats.max = c.minMax()
		m.stats.hasMinMax = m.stats.min != nil
		g.compressed += m.compressed
		g.uncompressed += m.uncompressed
		g.chunks = append(g.chunks, m)
		c.resetChunk()
	}
	p.groups = append(p.groups, g)
	p.rows += p.groupRows
	p.groupRows = 0
}

// footer encodes the FileMetaData.
func (p *ParquetWriter) footer() ([]byte, error) {
	var schemaIPC bytes.Buffer
	iw := ipc.NewWriter(&schemaIPC, ipc.WithSchema(p.schema))
	if err := iw.Close(); err != nil {
		return nil, fmt.Errorf("export: parquet: arrow schema: %w", err)
	}
	var t compact
	t.reset()
	t.i32(1, parquetVersion)
	t.list(2, ctStruct, 1+len(p.cols))
	t.elem() // the root
	t.string(4, "schema")
	t.i32(5, int32(len(p.cols)))
	t.end()
	for _, c := range p.cols {
		t.elem()
		t.i32(1, c.phys)
		if c.optional {
			t.i32(3, repOptional)
		} else {
			t.i32(3, repRequired)
		}
		t.string(4, c.name)
		if c.converted != noConvertedType {
			t.i32(6, c.converted)
		}
		switch c.logical {
		case logicalString:
			t.begin(10)
			t.begin(logicalString) // StringType: no fields
			t.end()
			t.end()
		case logicalInteger:
			t.begin(10)
			t.begin(logicalInteger) // IntType
			t.i8(1, c.intBits)
			t.bool(2, c.signed)
			t.end()
			t.end()
		}
		t.end()
	}
	t.i64(3, p.rows)
	t.list(4, ctStruct, len(p.groups))
	for gi, g := range p.groups {
		t.elem()
		t.list(1, ctStruct, len(g.chunks))
		for ci, m := range g.chunks {
			c := p.cols[ci]
			t.elem() // ColumnChunk
			first := m.dataOffset
			if m.dictOffset >= 0 {
				first = m.dictOffset
			}
			t.i64(2, first)
			t.begin(3) // ColumnMetaData
			t.i32(1, c.phys)
			t.list(2, ctI32, len(m.encodings))
			for _, e := range m.encodings {
				t.zigzag(int64(e))
			}
			t.list(3, ctBinary, 1)
			t.bytes([]byte(c.name))
			t.i32(4, codecZstd)
			t.i64(5, m.values)
			t.i64(6, m.uncompressed)
			t.i64(7, m.compressed)
			t.i64(9, m.dataOffset)
			if m.dictOffset >= 0 {
				t.i64(11, m.dictOffset)
			}
			t.begin(12) // Statistics
			t.i64(3, m.stats.nulls)
			if m.stats.hasMinMax {
				t.binary(5, m.stats.max)
				t.binary(6, m.stats.min)
			}
			t.end()
			t.end()
			t.end()
		}
		t.i64(2, g.uncompressed)
		t.i64(3, g.rows)
		t.i64(5, g.offset)
		t.i64(6, g.compressed)
		t.field(7, 4) // i16 ordinal
		t.zigzag(int64(gi))
		t.end()
	}
	meta := p.schema.Metadata()
	t.list(5, ctStruct, meta.Len()+1)
	for i, k := range meta.Keys() {
		t.elem()
		t.string(1, k)
		t.string(2, meta.Values()[i])
		t.end()
	}
	t.elem()
	t.string(1, "ARROW:schema")
	t.string(2, base64.StdEncoding.EncodeToString(schemaIPC.Bytes()))
	t.end()
	t.string(6, parquetCreatedBy)
	t.list(7, ctStruct, len(p.cols))
	for range p.cols {
		t.elem() // ColumnOrder
		t.begin(1)
		t.end() // TypeDefinedOrder
		t.end()
	}
	t.end()
	return t.buf, nil
}

// pqColumn is one column of the file: its Parquet type, and the open page and column
// chunk being written.
type pqColumn struct {
	name      string
	id        arrow.Type // the Arrow type (the dictionary's value type for dict)
	phys      int32
	converted int32
	logical   int16 // 0, logicalString or logicalInteger
	intBits   int8
	signed    bool
	optional  bool
	arrowDict bool // an Arrow dictionary column: always dictionary-encoded
	dictable  bool // dictionary-encoded while its dictionary is small
	dictOn    bool // the open chunk is still dictionary-encoding
	dictPages int  // dictionary-encoded pages of the open chunk

	// the open page
	vals  []byte   // PLAIN values
	idx   []uint32 // dictionary indices (dict)
	defs  []byte   // definition levels, one byte each (optional)
	nbits int      // booleans packed into vals
	n     int      // rows in the page, nulls included

	// the open column chunk
	pages        []byte // page headers and compressed pages
	comp         []byte // compression scratch
	raw          []byte // page scratch
	uncompressed int64
	chunkValues  int64
	stats        stats
	dictIndex    map[string]uint32
	dictValues   []byte // the dictionary, PLAIN
	dictCount    int
	remap        []int64 // this batch's dictionary index -> the chunk's (-1 unseen)
	scratch      []byte  // one value's PLAIN encoding
}

func newColumn(f arrow.Field) (*pqColumn, error) {
	c := &pqColumn{name: f.Name, optional: f.Nullable, converted: noConvertedType, id: f.Type.ID(), scratch: make([]byte, 0, 64)}
	t := f.Type
	if dt, ok := t.(*arrow.DictionaryType); ok {
		if dt.ValueType.ID() != arrow.STRING {
			return nil, fmt.Errorf("dictionary of %s has no Parquet form here (only of strings)", dt.ValueType)
		}
		c.arrowDict, c.id = true, arrow.STRING
	}
	integer := func(phys int32, width int8, signed bool) {
		c.phys, c.logical, c.intBits, c.signed = phys, logicalInteger, width, signed
		// UINT_8 .. UINT_64 are 11 .. 14, INT_8 .. INT_64 15 .. 18.
		c.converted = convertedUint8
		if signed {
			c.converted = convertedInt8
		}
		c.converted += int32(bits.TrailingZeros8(uint8(width))) - 3
	}
	switch c.id {
	case arrow.INT8:
		integer(ptInt32, 8, true)
	case arrow.INT16:
		integer(ptInt32, 16, true)
	case arrow.INT32:
		integer(ptInt32, 32, true)
	case arrow.INT64:
		integer(ptInt64, 64, true)
	case arrow.UINT8:
		integer(ptInt32, 8, false)
	case arrow.UINT16:
		integer(ptInt32, 16, false)
	case arrow.UINT32:
		integer(ptInt32, 32, false)
	case arrow.UINT64:
		integer(ptInt64, 64, false)
	case arrow.FLOAT64:
		c.phys = ptDouble
	case arrow.BOOL:
		c.phys = ptBoolean
	case arrow.STRING:
		c.phys, c.logical, c.converted = ptByteArray, logicalString, convertedUTF8
	default:
		return nil, fmt.Errorf("type %s has no Parquet form here", t)
	}
	// int64 columns are times, counters and identifiers, mostly distinct, and doubles
	// statistics: a dictionary would cost memory and time before falling back.
	c.dictable = c.arrowDict || c.phys == ptByteArray || c.phys == ptInt32
	if c.dictable {
		c.dictIndex = map[string]uint32{}
	}
	c.dictOn = c.dictable
	return c, nil
}

// encodings lists the encodings of the chunk's pages, for its metadata.
func (c *pqColumn) encodings() []int32 {
	e := []int32{encPlain}
	if c.optional {
		e = append(e, encRLE)
	}
	if c.dictPages > 0 {
		e = append(e, encRLEDictionary)
	}
	return e
}

func (c *pqColumn) resetChunk() {
	c.pages = c.pages[:0]
	c.uncompressed, c.chunkValues = 0, 0
	c.stats = stats{}
	if c.dictable {
		clear(c.dictIndex)
		c.dictValues = c.dictValues[:0]
		c.dictCount, c.dictPages, c.dictOn = 0, 0, true
	}
}

// pageFull says whether the open page holds pageBytes of values.
func (c *pqColumn) pageFull() bool { return len(c.vals)+4*len(c.idx) >= pageBytes }

// append adds rows [from, to) of col to the open page, flushing full pages.
func (c *pqColumn) append(p *ParquetWriter, col arrow.Array, from, to int) error {
	if col.NullN() > 0 && !c.optional {
		return errors.New("nulls in a column that is not nullable")
	}
	if c.arrowDict {
		return c.appendDictionary(p, col, from, to)
	}
	if col.DataType().ID() != c.id {
		return fmt.Errorf("array of %s in a column of %s", col.DataType(), c.id)
	}
	st := &c.stats
	v := c.scratch[:0]
	switch a := col.(type) {
	case *array.Int8:
		for i := from; i < to; i++ {
			if c.level(col, i) {
				st.signed(int64(a.Value(i)))
				c.put(p, binary.LittleEndian.AppendUint32(v, uint32(int32(a.Value(i)))))
			}
		}
	case *array.Int16:
		for i := from; i < to; i++ {
			if c.level(col, i) {
				st.signed(int64(a.Value(i)))
				c.put(p, binary.LittleEndian.AppendUint32(v, uint32(int32(a.Value(i)))))
			}
		}
	case *array.Int32:
		for i := from; i < to; i++ {
			if c.level(col, i) {
				st.signed(int64(a.Value(i)))
				c.put(p, binary.LittleEndian.AppendUint32(v, uint32(a.Value(i))))
			}
		}
	case *array.Int64:
		for i := from; i < to; i++ {
			if c.level(col, i) {
				st.signed(a.Value(i))
				c.put(p, binary.LittleEndian.AppendUint64(v, uint64(a.Value(i))))
			}
		}
	case *array.Uint8:
		for i := from; i < to; i++ {
			if c.level(col, i) {
				st.unsigned(uint64(a.Value(i)))
				c.put(p, binary.LittleEndian.AppendUint32(v, uint32(a.Value(i))))
			}
		}
	case *array.Uint16:
		for i := from; i < to; i++ {
			if c.level(col, i) {
				st.unsigned(uint64(a.Value(i)))
				c.put(p, binary.LittleEndian.AppendUint32(v, uint32(a.Value(i))))
			}
		}
	case *array.Uint32:
		for i := from; i < to; i++ {
			if c.level(col, i) {
				st.unsigned(uint64(a.Value(i)))
				c.put(p, binary.LittleEndian.AppendUint32(v, a.Value(i)))
			}
		}
	case *array.Uint64:
		for i := from; i < to; i++ {
			if c.level(col, i) {
				st.unsigned(a.Value(i))
				c.put(p, binary.LittleEndian.AppendUint64(v, a.Value(i)))
			}
		}
	case *array.Float64:
		for i := from; i < to; i++ {
			if c.level(col, i) {
				st.float(a.Value(i))
				c.put(p, binary.LittleEndian.AppendUint64(v, math.Float64bits(a.Value(i))))
			}
		}
	case *array.Boolean:
		for i := from; i < to; i++ {
			if c.level(col, i) {
				if c.nbits%8 == 0 {
					c.vals = append(c.vals, 0)
				}
				b := int64(0)
				if a.Value(i) {
					c.vals[len(c.vals)-1] |= 1 << (c.nbits % 8)
					b = 1
				}
				c.nbits++
				st.signed(b)
				c.rowDone(p)
			}
		}
	case *array.String:
		for i := from; i < to; i++ {
			if c.level(col, i) {
				s := a.Value(i)
				st.bytes(s)
				v = binary.LittleEndian.AppendUint32(v[:0], uint32(len(s)))
				c.put(p, append(v, s...))
			}
		}
	default:
		return fmt.Errorf("array %T has no Parquet form here", col)
	}
	c.scratch = v[:0]
	return nil
}

// appendDictionary adds rows of an Arrow dictionary array. The chunk's dictionary
// starts as the first batch's Arrow dictionary, in its order, so that readers get the
// record file's dictionary back; a later batch's values are looked up once per
// dictionary entry, not per row.
func (c *pqColumn) appendDictionary(p *ParquetWriter, col arrow.Array, from, to int) error {
	d, ok := col.(*array.Dictionary)
	if !ok {
		return fmt.Errorf("array %s is not a dictionary", col.DataType())
	}
	values, ok := d.Dictionary().(*array.String)
	if !ok {
		return fmt.Errorf("dictionary values %s are not strings", d.Dictionary().DataType())
	}
	c.remap = c.remap[:0]
	seed := c.dictCount == 0
	for k := range values.Len() {
		c.remap = append(c.remap, -1)
		if seed {
			c.remap[k] = int64(c.dictEntry(values.Value(k)))
		}
	}
	for i := from; i < to; i++ {
		if !c.level(col, i) {
			continue
		}
		k := d.GetValueIndex(i)
		if c.remap[k] < 0 {
			c.remap[k] = int64(c.dictEntry(values.Value(k)))
		}
		c.idx = append(c.idx, uint32(c.remap[k]))
		c.rowDone(p)
	}
	return nil
}

// dictEntry returns the chunk dictionary's index of string s, adding it.
func (c *pqColumn) dictEntry(s string) uint32 {
	v := binary.LittleEndian.AppendUint32(c.scratch[:0], uint32(len(s)))
	v = append(v, s...)
	c.scratch = v[:0]
	j, ok := c.dictIndex[string(v)]
	if !ok {
		j = uint32(c.dictCount)
		c.dictIndex[string(v)] = j
		c.dictCount++
		c.dictValues = append(c.dictValues, v...)
	}
	return j
}

// put adds one value, v its PLAIN encoding: as a dictionary index while the chunk's
// dictionary stays within dictBytes, else PLAIN (the page so far is written
// dictionary-encoded and the rest of the chunk plain, as Parquet writers fall back).
func (c *pqColumn) put(p *ParquetWriter, v []byte) {
	if c.dictOn {
		j, ok := c.dictIndex[string(v)]
		if !ok && len(c.dictValues)+len(v) > dictBytes {
			// This value's definition level is recorded already: it goes with the value
			// to the next page.
			if c.optional {
				c.defs = c.defs[:len(c.defs)-1]
			}
			c.flushPage(p)
			if c.optional {
				c.defs = append(c.defs, 1)
			}
			c.dictOn = false
		} else {
			if !ok {
				j = uint32(c.dictCount)
				c.dictIndex[string(v)] = j
				c.dictCount++
				c.dictValues = append(c.dictValues, v...)
			}
			c.idx = append(c.idx, j)
			c.rowDone(p)
			return
		}
	}
	c.vals = append(c.vals, v...)
	c.rowDone(p)
}

// level records row i's definition level (optional columns) and says whether it has a
// value; a null row is done here.
func (c *pqColumn) level(col arrow.Array, i int) bool {
	if !c.optional {
		return true
	}
	if col.IsNull(i) {
		c.defs = append(c.defs, 0)
		c.stats.nulls++
		c.n++
		return false
	}
	c.defs = append(c.defs, 1)
	return true
}

func (c *pqColumn) rowDone(p *ParquetWriter) {
	c.n++
	if c.pageFull() {
		c.flushPage(p)
	}
}

func (c *pqColumn) int32(st *stats, v int64) {
	st.signed(v)
	c.vals = binary.LittleEndian.AppendUint32(c.vals, uint32(int32(v)))
}

func (c *pqColumn) uint32(st *stats, v uint64) {
	st.unsigned(v)
	c.vals = binary.LittleEndian.AppendUint32(c.vals, uint32(v))
}

// flushPage compresses the open page into the chunk's pages.
func (c *pqColumn) flushPage(p *ParquetWriter) {
	if c.n == 0 {
		return
	}
	raw := c.raw[:0]
	if c.optional {
		raw = append(raw, 0, 0, 0, 0)
		raw = appendBitPacked(raw, len(c.defs), definitionLevelsW, func(i int) uint32 { return uint32(c.defs[i]) })
		binary.LittleEndian.PutUint32(raw, uint32(len(raw)-4))
	}
	encoding := int32(encPlain)
	if c.dictOn {
		c.dictPages++
		encoding = encRLEDictionary
		w := 1
		for _, k := range c.idx {
			w = max(w, bits.Len32(k))
		}
		raw = append(raw, byte(w))
		raw = appendBitPacked(raw, len(c.idx), w, func(i int) uint32 { return c.idx[i] })
	} else {
		raw = append(raw, c.vals...)
	}
	comp := p.zstd.EncodeAll(raw, c.comp[:0])
	p.hdr.reset()
	p.hdr.i32(1, pageData)
	p.hdr.i32(2, int32(len(raw)))
	p.hdr.i32(3, int32(len(comp)))
	p.hdr.begin(5) // DataPageHeader
	p.hdr.i32(1, int32(c.n))
	p.hdr.i32(2, encoding)
	p.hdr.i32(3, encRLE)
	p.hdr.i32(4, encRLE)
	p.hdr.end()
	p.hdr.end()
	c.pages = append(c.pages, p.hdr.buf...)
	c.pages = append(c.pages, comp...)
	c.uncompressed += int64(len(p.hdr.buf) + len(raw))
	c.chunkValues += int64(c.n)
	c.raw, c.comp = raw, comp
	c.vals, c.idx, c.defs = c.vals[:0], c.idx[:0], c.defs[:0]
	c.n, c.nbits = 0, 0
}

// appendBitPacked appends n values of width w bits in the RLE/bit-packing hybrid
// encoding as bit-packed runs only: each run a varint header (groups of 8 << 1 | 1)
// and its groups, every group 8 values packed least significant bit first into w
// bytes (the last group padded with zeros; the page's value count says where the
// values end).
func appendBitPacked(dst []byte, n, w int, value func(int) uint32) []byte {
	groups := (n + 7) / 8
	for g := 0; g < groups; {
		run := min(groups-g, maxGroupsPerRun)
		dst = binary.AppendUvarint(dst, uint64(run)<<1|1)
		var acc uint64
		nacc := 0
		for i := g * 8; i < (g+run)*8; i++ {
			var v uint32
			if i < n {
				v = value(i)
			}
			acc |= uint64(v) << nacc
			nacc += w
			for nacc >= 8 {
				dst = append(dst, byte(acc))
				acc >>= 8
				nacc -= 8
			}
		}
		g += run
	}
	return dst
}

// minMax encodes the chunk's smallest and largest values as PLAIN values of its
// physical type (nil: none, or a dictionary column). A zero double is written -0 as
// the minimum and +0 as the maximum, as the format asks.
func (c *pqColumn) minMax() (lo, hi []byte) {
	s := &c.stats
	if !s.hasMinMax || c.arrowDict {
		return nil, nil
	}
	switch c.phys {
	case ptBoolean:
		return []byte{byte(s.minI)}, []byte{byte(s.maxI)}
	case ptInt32:
		if c.signed {
			return binary.LittleEndian.AppendUint32(nil, uint32(int32(s.minI))), binary.LittleEndian.AppendUint32(nil, uint32(int32(s.maxI)))
		}
		return binary.LittleEndian.AppendUint32(nil, uint32(s.minU)), binary.LittleEndian.AppendUint32(nil, uint32(s.maxU))
	case ptInt64:
		if c.signed {
			return binary.LittleEndian.AppendUint64(nil, uint64(s.minI)), binary.LittleEndian.AppendUint64(nil, uint64(s.maxI))
		}
		return binary.LittleEndian.AppendUint64(nil, s.minU), binary.LittleEndian.AppendUint64(nil, s.maxU)
	case ptDouble:
		lo, hi := s.minF, s.maxF
		if lo == 0 {
			lo = math.Copysign(0, -1)
		}
		if hi == 0 {
			hi = 0
		}
		return binary.LittleEndian.AppendUint64(nil, math.Float64bits(lo)), binary.LittleEndian.AppendUint64(nil, math.Float64bits(hi))
	case ptByteArray:
		return bytes.Clone(s.min), bytes.Clone(s.max)
	}
	return nil, nil
}

func (s *stats) signed(v int64) {
	if !s.hasMinMax {
		s.hasMinMax, s.minI, s.maxI = true, v, v
	}
	s.minI, s.maxI = min(s.minI, v), max(s.maxI, v)
}

func (s *stats) unsigned(v uint64) {
	if !s.hasMinMax {
		s.hasMinMax, s.minU, s.maxU = true, v, v
	}
	s.minU, s.maxU = min(s.minU, v), max(s.maxU, v)
}

// float leaves NaN out of min and max, as the format asks.
func (s *stats) float(v float64) {
	if math.IsNaN(v) {
		return
	}
	if !s.hasMinMax {
		s.hasMinMax, s.minF, s.maxF = true, v, v
	}
	s.minF, s.maxF = math.Min(s.minF, v), math.Max(s.maxF, v)
}

func (s *stats) bytes(v string) {
	if !s.hasMinMax {
		s.hasMinMax = true
		s.min = append(s.min[:0], v...)
		s.max = append(s.max[:0], v...)
		return
	}
	if v < string(s.min) {
		s.min = append(s.min[:0], v...)
	}
	if v > string(s.max) {
		s.max = append(s.max[:0], v...)
	}
}
