package export

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// BatchWriter writes Arrow record batches of one schema into one file of a format,
// batch by batch: a ParquetWriter or a CSVWriter.
type BatchWriter interface {
	// Write writes one batch; its schema must be the writer's.
	Write(rec arrow.Record) error
	// Close finishes the file (Parquet footer, buffered CSV rows). It does not close
	// the io.Writer the writer was created on.
	Close() error
}

// NewWriter returns the writer of format f for batches of schema onto w.
func NewWriter(f Format, w io.Writer, schema *arrow.Schema, opt Options) (BatchWriter, error) {
	switch f {
	case Parquet:
		return NewParquetWriter(w, schema, opt)
	case CSV:
		return NewCSVWriter(w, schema)
	}
	return nil, fmt.Errorf("export: unknown format %q (want %s or %s)", f, Parquet, CSV)
}

// CSVWriter writes batches as CSV (RFC 4180 quoting, by encoding/csv; lines end in
// LF as in analyze's tables): a header row of the column names, then one line per
// row. Dictionary columns are written as their string values, nulls as empty
// fields, integers in decimal, booleans as true and false.
type CSVWriter struct {
	cw     *csv.Writer
	schema *arrow.Schema
	cells  []string
	buf    []byte
	closed bool
}

// NewCSVWriter writes the header row of schema to w and returns the writer of its rows.
func NewCSVWriter(w io.Writer, schema *arrow.Schema) (*CSVWriter, error) {
	for i, f := range schema.Fields() {
		if _, err := cellFormatter(f.Type); err != nil {
			return nil, fmt.Errorf("export: csv: column %d %q: %w", i, f.Name, err)
		}
	}
	c := &CSVWriter{cw: csv.NewWriter(w), schema: schema, cells: make([]string, schema.NumFields())}
	for i, f := range schema.Fields() {
		c.cells[i] = f.Name
	}
	if err := c.cw.Write(c.cells); err != nil {
		return nil, fmt.Errorf("export: csv: %w", err)
	}
	return c, nil
}

// Write appends rec's rows.
func (c *CSVWriter) Write(rec arrow.Record) error {
	if c.closed {
		return errors.New("export: csv writer is closed")
	}
	if !rec.Schema().Equal(c.schema) {
		return fmt.Errorf("export: csv: batch schema %s differs from the writer's %s", rec.Schema(), c.schema)
	}
	cols := make([]func(int) string, rec.NumCols())
	for j, col := range rec.Columns() {
		format, err := cellFormatter(col.DataType())
		if err != nil {
			return fmt.Errorf("export: csv: column %q: %w", rec.ColumnName(j), err)
		}
		cols[j] = format(col, &c.buf)
	}
	for i := range int(rec.NumRows()) {
		for j, col := range rec.Columns() {
			if col.IsNull(i) {
				c.cells[j] = ""
			} else {
				c.cells[j] = cols[j](i)
			}
		}
		if err := c.cw.Write(c.cells); err != nil {
			return fmt.Errorf("export: csv: %w", err)
		}
	}
	return nil
}

// Close flushes the buffered rows to w.
func (c *CSVWriter) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	c.cw.Flush()
	return c.cw.Error()
}

// formatter binds a column to a function that formats its i-th (non-null) value.
type formatter func(col arrow.Array, buf *[]byte) func(i int) string

// cellFormatter returns how CSV cells of type t are written: the types of the record
// files (and of analyze's tables) are integers, floats, booleans, strings and
// dictionaries of strings.
func cellFormatter(t arrow.DataType) (formatter, error) {
	integer := func(get func(a arrow.Array, i int) int64) formatter {
		return func(col arrow.Array, buf *[]byte) func(int) string {
			return func(i int) string {
				*buf = strconv.AppendInt((*buf)[:0], get(col, i), 10)
				return string(*buf)
			}
		}
	}
	switch t.ID() {
	case arrow.INT8:
		return integer(func(a arrow.Array, i int) int64 { return int64(a.(*array.Int8).Value(i)) }), nil
	case arrow.INT16:
		return integer(func(a arrow.Array, i int) int64 { return int64(a.(*array.Int16).Value(i)) }), nil
	case arrow.INT32:
		return integer(func(a arrow.Array, i int) int64 { return int64(a.(*array.Int32).Value(i)) }), nil
	case arrow.INT64:
		return integer(func(a arrow.Array, i int) int64 { return a.(*array.Int64).Value(i) }), nil
	case arrow.UINT8:
		return integer(func(a arrow.Array, i int) int64 { return int64(a.(*array.Uint8).Value(i)) }), nil
	case arrow.UINT16:
		return integer(func(a arrow.Array, i int) int64 { return int64(a.(*array.Uint16).Value(i)) }), nil
	case arrow.UINT32:
		return integer(func(a arrow.Array, i int) int64 { return int64(a.(*array.Uint32).Value(i)) }), nil
	case arrow.UINT64:
		return func(col arrow.Array, buf *[]byte) func(int) string {
			a := col.(*array.Uint64)
			return func(i int) string {
				*buf = strconv.AppendUint((*buf)[:0], a.Value(i), 10)
				return string(*buf)
			}
		}, nil
	case arrow.FLOAT64:
		return func(col arrow.Array, buf *[]byte) func(int) string {
			a := col.(*array.Float64)
			return func(i int) string {
				*buf = strconv.AppendFloat((*buf)[:0], a.Value(i), 'g', -1, 64)
				return string(*buf)
			}
		}, nil
	case arrow.BOOL:
		return func(col arrow.Array, _ *[]byte) func(int) string {
			a := col.(*array.Boolean)
			return func(i int) string { return strconv.FormatBool(a.Value(i)) }
		}, nil
	case arrow.STRING:
		return func(col arrow.Array, _ *[]byte) func(int) string {
			return col.(*array.String).Value
		}, nil
	case arrow.DICTIONARY:
		dt := t.(*arrow.DictionaryType)
		if dt.ValueType.ID() != arrow.STRING {
			break
		}
		return func(col arrow.Array, _ *[]byte) func(int) string {
			d := col.(*array.Dictionary)
			values := d.Dictionary().(*array.String)
			return func(i int) string { return values.Value(d.GetValueIndex(i)) }
		}, nil
	}
	return nil, fmt.Errorf("type %s has no CSV form here", t)
}
