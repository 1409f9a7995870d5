// Package export writes the record files of replay runs (docs/records.md) as Parquet or CSV
// (docs/records.md#parquet-and-csv-replay-export), for the tools people load data with: Spark, BigQuery, DuckDB and most
// data platforms read Parquet; spreadsheets and anything else read CSV.
//
// Each record file NAME.arrow of a run becomes NAME.parquet or NAME.csv with the same
// columns in the same order:
//
//   - Parquet (the default): zstd, written by this package's own writer (parquet.go). Types stay
//     what they are (int64 times and counters, uint8 and uint16 classes and ports,
//     int32 indices, utf8 addresses and paths, nullable delay statistics); dictionary
//     columns (node names, enumerations) stay dictionary-encoded, and the Arrow schema
//     is stored in the file (ARROW:schema) so that pyarrow, polars and DuckDB read
//     them back as dictionary (or categorical, or VARCHAR) columns. The schema's
//     metadata, tracefabric.schema_version and tracefabric.file (the source record
//     file's name), is the Parquet file's key-value metadata.
//   - CSV: RFC 4180 quoting, a header row of the column names; dictionary columns as
//     their string values, nulls (delay statistics of a flow that delivered nothing)
//     as empty fields, times and counters as integers, booleans as true/false.
//
// Export streams: it reads the Arrow IPC file one record batch at a time
// (records.OpenBatches) and writes each batch before reading the next, so memory
// stays flat however many rows a file has (Parquet keeps at most one row group of
// Options.RowGroupRows rows in memory).
//
// Output appears atomically, as run directories do: everything is written into a
// hidden temporary sibling of the output directory (.NAME.partial-<pid>-<n>) renamed
// into place at the end, replacing a previous export; an error removes the temporary
// directory, so no partial output ever looks complete. An output directory that holds
// anything but a previous export is not replaced (ErrNotExportDir).
//
// The Parquet writer is this package's own (the subset of the format the record
// files need: PLAIN and RLE_DICTIONARY pages, zstd, statistics, the Thrift compact
// footer) because Arrow Go's parquet/pqarrow links Arrow Flight, gRPC, protobuf and
// Arrow compute into every binary that imports it: 29 MB of the replay command and
// 12 MB of its resident memory on every run, exporting or not. The tests read the
// files back with pqarrow, the independent judge.
package export
