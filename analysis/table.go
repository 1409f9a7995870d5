package analysis

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"

	"github.com/tracefabric/tracefabric/internal/atomicfile"
	"github.com/tracefabric/tracefabric/internal/units"
)

// Table is a table behind a figure or a report section, for tables/<Name>.csv: a
// header and rows of cells already formatted (integers as integers, floats with
// strconv 'g' full precision, times in ps, sizes in bytes).
type Table struct {
	Name   string     // file stem, e.g. "drops_over_time"
	Header []string   // column names, snake_case with units (_ps, _bytes)
	Rows   [][]string // one slice of len(Header) cells per row
}

// WriteCSV writes the table as CSV (RFC 4180, header first).
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.Header); err != nil {
		return fmt.Errorf("analysis: table %s: %w", t.Name, err)
	}
	for i, r := range t.Rows {
		if len(r) != len(t.Header) {
			return fmt.Errorf("analysis: table %s row %d has %d cells, the header %d", t.Name, i, len(r), len(t.Header))
		}
		if err := cw.Write(r); err != nil {
			return fmt.Errorf("analysis: table %s: %w", t.Name, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("analysis: table %s: %w", t.Name, err)
	}
	return nil
}

// WriteCSVFile writes the table to dir/<Name>.csv (mode 0644, readable by all, as
// the other outputs) through a temporary file renamed at the end, so a partial file
// never looks complete.
func (t *Table) WriteCSVFile(dir string) error {
	return atomicfile.Write(filepath.Join(dir, t.Name+".csv"), t.WriteCSV)
}

// WriteTables writes each table to dir/<Name>.csv (see WriteCSVFile).
func WriteTables(dir string, tables []Table) error {
	for i := range tables {
		if err := tables[i].WriteCSVFile(dir); err != nil {
			return err
		}
	}
	return nil
}

func fi(v int64) string      { return strconv.FormatInt(v, 10) }
func ft(v units.Time) string { return strconv.FormatInt(int64(v), 10) }

// ff formats a float in full precision; an undefined (NaN) value is an empty cell
// (null), as summary.json writes it; +Inf (a quantile among the unfinished flows) is
// "inf", which strconv, pandas and spreadsheets read as infinity.
func ff(v float64) string {
	switch {
	case math.IsNaN(v):
		return ""
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
