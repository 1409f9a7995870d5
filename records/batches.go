package records

import (
	"fmt"
	"os"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// BatchReader streams the record batches of a record file of any kind, one batch in
// memory at a time, as Arrow records: for code that converts whole columns (replay
// export writes them as Parquet or CSV) rather than rows. OpenBatches checks the file
// like the Open* functions (its tracefabric.file metadata names the kind).
//
//	br, err := records.OpenBatches(path)
//	...
//	defer br.Close()
//	for br.Next() {
//		rec := br.Record() // valid until the next call to Next
//	}
//	if err := br.Err(); err != nil { ... }
type BatchReader struct {
	path  string
	f     *os.File
	r     *ipc.FileReader
	rec   arrow.Record
	batch int   // index of the next batch
	rows  int64 // rows in the batches returned so far
	err   error
}

// OpenBatches opens a record file, checks its schema version and columns against the
// schema of the file its metadata names, and returns a reader of its batches.
func OpenBatches(path string) (*BatchReader, error) {
	f, fr, err := openIPC(path, nil)
	if err != nil {
		return nil, err
	}
	return &BatchReader{path: path, f: f, r: fr}, nil
}

// Path is the file the reader reads.
func (r *BatchReader) Path() string { return r.path }

// Name is the record file's name as its metadata states it (for example DropsFile).
func (r *BatchReader) Name() string { return metaValue(r.r.Schema(), MetaFile) }

// Schema is the file's Arrow schema, metadata included.
func (r *BatchReader) Schema() *arrow.Schema { return r.r.Schema() }

// Batches is the number of record batches in the file.
func (r *BatchReader) Batches() int { return r.r.NumRecords() }

// Rows is the number of rows in the batches returned so far.
func (r *BatchReader) Rows() int64 { return r.rows }

// Next loads the next batch and reports whether there was one. At the end of the
// file or on an error it returns false; Err tells which.
func (r *BatchReader) Next() bool {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	if r.err != nil || r.batch >= r.r.NumRecords() {
		return false
	}
	i := r.batch
	r.batch++
	err := safely(func() error {
		rec, err := r.r.RecordAt(i)
		if err != nil {
			return err
		}
		for j, col := range rec.Columns() {
			if int64(col.Len()) != rec.NumRows() {
				rec.Release()
				return fmt.Errorf("column %q has %d rows, the batch %d", rec.ColumnName(j), col.Len(), rec.NumRows())
			}
		}
		r.rec = rec
		return nil
	})
	if err != nil {
		r.err = fmt.Errorf("%w: %s batch %d: %w", ErrNotRecordFile, r.path, i, err)
		return false
	}
	r.rows += r.rec.NumRows()
	return true
}

// Record is the batch Next loaded, valid until the next call to Next or Close. The
// caller must Retain it to keep it longer.
func (r *BatchReader) Record() arrow.Record { return r.rec }

// Err is the error that stopped Next, or nil at a clean end of file.
func (r *BatchReader) Err() error { return r.err }

// Close releases the current batch and closes the file.
func (r *BatchReader) Close() error {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	r.r.Close()
	return r.f.Close()
}
