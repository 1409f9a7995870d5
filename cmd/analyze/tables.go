package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/plots/report"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/records/export"
)

// MetaTable is the Parquet key-value metadata key naming an analysis table.
const MetaTable = "tracefabric.table"

// parseTablesFormat parses --tables: csv (the default) or parquet.
func parseTablesFormat(s string) (export.Format, error) {
	f, err := export.ParseFormat(s)
	if err != nil {
		return "", usageError{Err: fmt.Errorf("--tables %q: want %s", s, strings.Join([]string{records.CSVFormat, records.ParquetFormat}, " or "))}
	}
	return f, nil
}

// writeTables writes each table to dir/<Name>.csv or dir/<Name>.parquet. The output
// directory as a whole appears atomically (outputDir), so a Parquet file is written in
// place.
func writeTables(dir string, tables []analysis.Table, f export.Format) error {
	if f != export.Parquet {
		return analysis.WriteTables(dir, tables)
	}
	for i := range tables {
		if err := writeParquetTable(filepath.Join(dir, tables[i].Name+".parquet"), &tables[i]); err != nil {
			return fmt.Errorf("table %s: %w", tables[i].Name, err)
		}
	}
	return nil
}

// writeParquetTable writes t as Parquet. An analysis table holds formatted cells;
// each column gets the type its cells spell, as a CSV reader would infer it: int64
// when every cell is an integer, float64 when every cell is a number, bool when every
// cell is true or false, otherwise utf8. Empty cells (a metric that is undefined,
// docs/analysis.md) are nulls.
func writeParquetTable(path string, t *analysis.Table) (err error) {
	rec, err := tableRecord(t)
	if err != nil {
		return err
	}
	defer rec.Release()
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}()
	w, err := export.NewParquetWriter(file, rec.Schema(), export.Options{})
	if err != nil {
		return err
	}
	if err := w.Write(rec); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// tableRecord converts an analysis table to one Arrow record batch (see
// writeParquetTable for the types).
func tableRecord(t *analysis.Table) (arrow.Record, error) {
	fields := make([]arrow.Field, len(t.Header))
	for j, name := range t.Header {
		fields[j] = arrow.Field{Name: name, Type: cellType(t, j), Nullable: true}
	}
	md := arrow.NewMetadata([]string{records.MetaSchemaVersion, MetaTable}, []string{strconv.Itoa(records.SchemaVersion), t.Name})
	schema := arrow.NewSchema(fields, &md)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i, row := range t.Rows {
		if len(row) != len(t.Header) {
			return nil, fmt.Errorf("row %d has %d cells, the header %d", i, len(row), len(t.Header))
		}
		for j, cell := range row {
			fb := b.Field(j)
			if cell == "" {
				fb.AppendNull()
				continue
			}
			switch fb := fb.(type) {
			case *array.Int64Builder:
				v, _ := strconv.ParseInt(cell, 10, 64)
				fb.Append(v)
			case *array.Float64Builder:
				v, _ := strconv.ParseFloat(cell, 64)
				fb.Append(v)
			case *array.BooleanBuilder:
				fb.Append(cell == "true")
			case *array.StringBuilder:
				fb.Append(cell)
			}
		}
	}
	return b.NewRecord(), nil
}

// cellType is the type of column j of t (see writeParquetTable).
func cellType(t *analysis.Table, j int) arrow.DataType {
	isInt, isFloat, isBool, seen := true, true, true, false
	for _, row := range t.Rows {
		if j >= len(row) || row[j] == "" {
			continue
		}
		c := row[j]
		seen = true
		if _, err := strconv.ParseInt(c, 10, 64); err != nil {
			isInt = false
		}
		if _, err := strconv.ParseFloat(c, 64); err != nil {
			isFloat = false
		}
		if c != "true" && c != "false" {
			isBool = false
		}
	}
	switch {
	case !seen:
		return arrow.BinaryTypes.String
	case isInt:
		return arrow.PrimitiveTypes.Int64
	case isFloat:
		return arrow.PrimitiveTypes.Float64
	case isBool:
		return arrow.FixedWidthTypes.Boolean
	}
	return arrow.BinaryTypes.String
}

// retargetSources points the report's "full table" notes at the files written:
// tables/NAME.parquet instead of tables/NAME.csv.
func retargetSources(rep *report.Report, f export.Format) {
	if f != export.Parquet {
		return
	}
	for i := range rep.Sections {
		for _, b := range rep.Sections[i].Blocks {
			if b.Table != nil && strings.HasPrefix(b.Table.Source, "tables/") {
				b.Table.Source = strings.TrimSuffix(b.Table.Source, ".csv") + ".parquet"
			}
		}
	}
}
