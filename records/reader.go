package records

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
)

var (
	// ErrSchemaVersion: a record file or run.json of another schema version.
	ErrSchemaVersion = errors.New("unsupported schema version")
	// ErrNotRecordFile: a file that is not a complete tracefabric record file of the
	// expected kind (truncated, foreign, or with other columns).
	ErrNotRecordFile = errors.New("not a tracefabric record file")
)

// Reader streams the rows of one record file, one record batch in memory at a time.
//
//	rd, err := records.OpenDrops(path)
//	...
//	defer rd.Close()
//	var row records.DropRow
//	for rd.Next(&row) {
//		...
//	}
//	if err := rd.Err(); err != nil { ... }
type Reader[R any] struct {
	path   string
	f      *os.File
	r      *ipc.FileReader
	env    env
	codecs []codec[R]
	rec    arrow.Record // the current batch
	batch  int          // index of the next batch
	i, n   int          // next row and row count of the current batch
	rows   int64        // rows returned so far
	err    error
}

// PortsReader, DropsReader, ... are the readers of the record files.
type (
	PortsReader       = Reader[PortRow]
	DropsReader       = Reader[DropRow]
	PFCReader         = Reader[PFCRow]
	BufferReader      = Reader[BufferRow]
	LoadBalanceReader = Reader[LoadBalanceRow]
	FlowsReader       = Reader[FlowRow]
	DelayReader       = Reader[DelayRow]
	PacketsReader     = Reader[PacketRow]
	TransportReader   = Reader[TransportRow]
	StagesReader      = Reader[StageRow]
	MessagesReader    = Reader[MessageRow]
)

// OpenPorts opens a ports.arrow file, checks its schema version and columns, and
// returns a reader of its rows. The other Open* functions do the same for their files.
func OpenPorts(path string) (*PortsReader, error)   { return openReader(portsTable, path) }
func OpenDrops(path string) (*DropsReader, error)   { return openReader(dropsTable, path) }
func OpenPFC(path string) (*PFCReader, error)       { return openReader(pfcTable, path) }
func OpenBuffer(path string) (*BufferReader, error) { return openReader(bufferTable, path) }
func OpenLoadBalance(path string) (*LoadBalanceReader, error) {
	return openReader(loadBalanceTable, path)
}
func OpenFlows(path string) (*FlowsReader, error)     { return openReader(flowsTable, path) }
func OpenDelay(path string) (*DelayReader, error)     { return openReader(delayTable, path) }
func OpenPackets(path string) (*PacketsReader, error) { return openReader(packetsTable, path) }
func OpenTransport(path string) (*TransportReader, error) {
	return openReader(transportTable, path)
}
func OpenStages(path string) (*StagesReader, error)     { return openReader(stagesTable, path) }
func OpenMessages(path string) (*MessagesReader, error) { return openReader(messagesTable, path) }

func openReader[R any](t *table[R], path string) (*Reader[R], error) {
	f, fr, err := openIPC(path, t.schema())
	if err != nil {
		return nil, err
	}
	rd := &Reader[R]{path: path, f: f, r: fr}
	for _, c := range t.cols {
		rd.codecs = append(rd.codecs, c.codec(&rd.env))
	}
	return rd, nil
}

// openIPC opens an Arrow IPC file and checks its schema against want (nil: the
// schema of the record file its metadata names): the tracefabric.file and
// tracefabric.schema_version metadata, then every column's name and type.
func openIPC(path string, want *arrow.Schema) (*os.File, *ipc.FileReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err // *PathError: names the file
	}
	var fr *ipc.FileReader
	err = safely(func() (err error) {
		fr, err = ipc.NewFileReader(f)
		return err
	})
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s: not a complete Arrow IPC file (truncated or foreign): %w", ErrNotRecordFile, path, err)
	}
	if err := checkSchema(path, fr.Schema(), want); err != nil {
		fr.Close()
		f.Close()
		return nil, nil, err
	}
	return f, fr, nil
}

func checkSchema(path string, got, want *arrow.Schema) error {
	name := metaValue(got, MetaFile)
	if name == "" {
		return fmt.Errorf("%w: %s: no %s metadata", ErrNotRecordFile, path, MetaFile)
	}
	if want == nil {
		var err error
		if want, err = Schema(name); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrNotRecordFile, path, err)
		}
	}
	if wantName := metaValue(want, MetaFile); name != wantName {
		return fmt.Errorf("%w: %s: it holds %s, not %s", ErrNotRecordFile, path, name, wantName)
	}
	if v := metaValue(got, MetaSchemaVersion); !readable(v) {
		n, _ := strconv.Atoi(v)
		return fmt.Errorf("%w: %s: %s is %q, this build reads %s%s", ErrSchemaVersion, path, MetaSchemaVersion, v, readableVersions(), versionHint(n))
	}
	gf, wf := got.Fields(), want.Fields()
	for i, w := range wf {
		if i >= len(gf) {
			return fmt.Errorf("%w: %s: column %d %q is missing", ErrNotRecordFile, path, i, w.Name)
		}
		if g := gf[i]; g.Name != w.Name || !arrow.TypeEqual(g.Type, w.Type) {
			return fmt.Errorf("%w: %s: column %d is %q %s, want %q %s", ErrNotRecordFile, path, i, g.Name, g.Type, w.Name, w.Type)
		}
	}
	if len(gf) > len(wf) {
		return fmt.Errorf("%w: %s: unexpected column %q", ErrNotRecordFile, path, gf[len(wf)].Name)
	}
	return nil
}

func metaValue(s *arrow.Schema, key string) string {
	md := s.Metadata()
	if i := md.FindKey(key); i >= 0 {
		return md.Values()[i]
	}
	return ""
}

// safely runs f, turning a panic of the Arrow library on corrupt input into an error.
func safely(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt Arrow data: %v", p)
		}
	}()
	return f()
}

// Path is the file the reader reads.
func (r *Reader[R]) Path() string { return r.path }

// Batches is the number of record batches in the file.
func (r *Reader[R]) Batches() int { return r.r.NumRecords() }

// Nodes returns the file's node dictionary: the names that node indices in rows refer
// to. It is known once the first batch is loaded (after the first call to Next, or
// any time for files written by this package, which always hold a batch); files
// without node columns (delay.arrow) have none.
func (r *Reader[R]) Nodes() []string {
	if r.env.nodes == nil && r.err == nil && r.rec == nil && r.batch < r.r.NumRecords() {
		r.load()
	}
	return r.env.nodes
}

// Next fills row with the next row and reports whether there was one. At the end of
// the file or on an error it returns false; Err tells which. Slices in row (PacketRow.Path)
// are reused.
func (r *Reader[R]) Next(row *R) (ok bool) {
	defer func() {
		if p := recover(); p != nil { // corrupt buffers the Arrow reader did not catch
			r.err = fmt.Errorf("%w: %s row %d: corrupt Arrow data: %v", ErrNotRecordFile, r.path, r.rows, p)
			ok = false
		}
	}()
	for r.err == nil && r.i >= r.n {
		if r.batch >= r.r.NumRecords() {
			return false
		}
		r.load()
	}
	if r.err != nil {
		return false
	}
	for _, c := range r.codecs {
		if err := c.get(r.i, row); err != nil {
			r.err = fmt.Errorf("%w: %s row %d: %w", ErrNotRecordFile, r.path, r.rows, err)
			return false
		}
	}
	r.i++
	r.rows++
	return true
}

// load reads the next batch and binds the codecs to its columns.
func (r *Reader[R]) load() {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	i := r.batch
	r.batch++
	r.i, r.n = 0, 0
	err := safely(func() error {
		rec, err := r.r.RecordAt(i)
		if err != nil {
			return err
		}
		r.rec = rec
		for j, c := range r.codecs {
			col := rec.Column(j)
			if int64(col.Len()) != rec.NumRows() {
				return fmt.Errorf("column %q has %d rows, the batch %d", rec.ColumnName(j), col.Len(), rec.NumRows())
			}
			if err := c.load(col); err != nil {
				return fmt.Errorf("column %q: %w", rec.ColumnName(j), err)
			}
		}
		r.n = int(rec.NumRows())
		return nil
	})
	if err != nil {
		r.err = fmt.Errorf("%w: %s batch %d: %w", ErrNotRecordFile, r.path, i, err)
	}
}

// Err is the error that stopped Next, or nil at a clean end of file.
func (r *Reader[R]) Err() error { return r.err }

// Close releases the reader's batch and closes the file.
func (r *Reader[R]) Close() error {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
	for _, c := range r.codecs {
		c.release()
	}
	r.codecs = nil
	r.r.Close()
	return r.f.Close()
}

// ReadAll reads every row of a record file and its node dictionary, and closes the
// reader. It takes an Open* function's results directly:
//
//	rows, nodes, err := records.ReadAll(records.OpenFlows(path))
//
// It holds the whole file in memory: stream big files with Next instead.
func ReadAll[R any](r *Reader[R], err error) (rows []R, nodes []string, _ error) {
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var row R
	for r.Next(&row) {
		rows = append(rows, row)
		var zero R
		row = zero // slices in rows must not share storage
	}
	return rows, r.Nodes(), r.Err()
}

// ReadTable reads a whole record file of any kind (told by its tracefabric.file
// metadata, checked like the Open* functions) as an Arrow table, for columnar
// analysis. The caller releases the table.
func ReadTable(path string) (arrow.Table, error) {
	f, fr, err := openIPC(path, nil)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	defer fr.Close()
	var recs []arrow.Record
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	err = safely(func() error {
		for i := range fr.NumRecords() {
			rec, err := fr.RecordAt(i)
			if err != nil {
				return err
			}
			recs = append(recs, rec)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotRecordFile, path, err)
	}
	return array.NewTableFromRecords(fr.Schema(), recs), nil
}
