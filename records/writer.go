package records

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
)

// DefaultBatchRows is the number of rows a writer buffers before it writes a record
// batch: 16,384, so that the buffers of a run's writers take a few MB (a messages.arrow
// batch of 65,536 rows alone held 5 MB), while a batch stays large enough that
// readers and the export see no per-batch cost.
const DefaultBatchRows = 16384

// Dictionaries holds the variable dictionary of a run, known before the first row:
// the node names. Every node column (node, peer, src_host, dst_host, end_node) and
// every packet path refers to nodes by their index in Nodes.
type Dictionaries struct {
	// Nodes are the names of every node of the topology, hosts included (docs/model.md#clos-builder:
	// host-p0-r1-h5, rack-p0-r1, fabric-p0-f2, spine-s2-3). Names must be unique, not
	// empty and must not contain PathSeparator.
	Nodes []string
}

func (d Dictionaries) validate() error {
	seen := make(map[string]int, len(d.Nodes))
	for i, n := range d.Nodes {
		switch j, dup := seen[n]; {
		case n == "":
			return fmt.Errorf("node %d has an empty name", i)
		case strings.Contains(n, PathSeparator):
			return fmt.Errorf("node name %q contains the path separator %q", n, PathSeparator)
		case dup:
			return fmt.Errorf("node name %q is used by nodes %d and %d", n, j, i)
		}
		seen[n] = i
	}
	return nil
}

// Option configures a writer.
type Option func(*options)

type options struct {
	batchRows int
}

// WithBatchRows sets the number of rows per record batch (default DefaultBatchRows).
// Values below 1 mean the default.
func WithBatchRows(n int) Option { return func(o *options) { o.batchRows = n } }

// Writer streams rows of type R into one record file. Append adds a row to per-column
// Go slices that are reused from batch to batch (no allocation in steady state);
// every batch-size rows they are wrapped, without copying, as a record batch that the
// Arrow IPC file writer writes; Close writes the last batch and the file footer. A
// Writer is not safe for concurrent use.
type Writer[R any] struct {
	path   string
	f      *os.File
	w      *ipc.FileWriter
	schema *arrow.Schema
	env    env
	codecs []codec[R]
	cols   []arrow.Array // scratch for building a batch
	batch  int           // rows per batch
	n      int           // rows in the current batch
	rows   int64         // rows written (or buffered)
	err    error         // sticky I/O error
	closed bool
}

// PortsWriter, DropsWriter, ... are the writers of the record files.
type (
	PortsWriter       = Writer[PortRow]
	DropsWriter       = Writer[DropRow]
	PFCWriter         = Writer[PFCRow]
	BufferWriter      = Writer[BufferRow]
	LoadBalanceWriter = Writer[LoadBalanceRow]
	FlowsWriter       = Writer[FlowRow]
	DelayWriter       = Writer[DelayRow]
	PacketsWriter     = Writer[PacketRow]
	TransportWriter   = Writer[TransportRow]
	StagesWriter      = Writer[StageRow]
	MessagesWriter    = Writer[MessageRow]
)

// NewPortsWriter creates the file at path (normally OutputDir.Path(PortsFile)) and
// returns a writer of ports.arrow rows. The other New*Writer functions do the same
// for their files.
func NewPortsWriter(path string, d Dictionaries, opts ...Option) (*PortsWriter, error) {
	return newWriter(portsTable, path, d, opts)
}

func NewDropsWriter(path string, d Dictionaries, opts ...Option) (*DropsWriter, error) {
	return newWriter(dropsTable, path, d, opts)
}

func NewPFCWriter(path string, d Dictionaries, opts ...Option) (*PFCWriter, error) {
	return newWriter(pfcTable, path, d, opts)
}

func NewBufferWriter(path string, d Dictionaries, opts ...Option) (*BufferWriter, error) {
	return newWriter(bufferTable, path, d, opts)
}

func NewLoadBalanceWriter(path string, d Dictionaries, opts ...Option) (*LoadBalanceWriter, error) {
	return newWriter(loadBalanceTable, path, d, opts)
}

func NewFlowsWriter(path string, d Dictionaries, opts ...Option) (*FlowsWriter, error) {
	return newWriter(flowsTable, path, d, opts)
}

func NewDelayWriter(path string, d Dictionaries, opts ...Option) (*DelayWriter, error) {
	return newWriter(delayTable, path, d, opts)
}

func NewTransportWriter(path string, d Dictionaries, opts ...Option) (*TransportWriter, error) {
	return newWriter(transportTable, path, d, opts)
}

func NewMessagesWriter(path string, d Dictionaries, opts ...Option) (*MessagesWriter, error) {
	return newWriter(messagesTable, path, d, opts)
}

func NewPacketsWriter(path string, d Dictionaries, opts ...Option) (*PacketsWriter, error) {
	return newWriter(packetsTable, path, d, opts)
}

func NewStagesWriter(path string, d Dictionaries, opts ...Option) (*StagesWriter, error) {
	return newWriter(stagesTable, path, d, opts)
}

func newWriter[R any](t *table[R], path string, d Dictionaries, opts []Option) (*Writer[R], error) {
	o := options{batchRows: DefaultBatchRows}
	for _, opt := range opts {
		opt(&o)
	}
	if o.batchRows < 1 {
		o.batchRows = DefaultBatchRows
	}
	if err := d.validate(); err != nil {
		return nil, fmt.Errorf("records: %s: dictionaries: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("records: %s: %w", t.name, err)
	}
	w := &Writer[R]{path: path, f: f, schema: t.schema(), batch: o.batchRows}
	nodes := slices.Clone(d.Nodes) // the caller may reuse its slice
	w.env = env{nodes: nodes, nodeDict: stringArray(nodes)}
	w.w, err = ipc.NewFileWriter(f, ipc.WithSchema(w.schema))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("records: %s: %w", path, err)
	}
	for _, c := range t.cols {
		w.codecs = append(w.codecs, c.codec(&w.env))
	}
	w.cols = make([]arrow.Array, len(w.codecs))
	return w, nil
}

// Path is the file the writer writes.
func (w *Writer[R]) Path() string { return w.path }

// Rows is the number of rows appended so far (all of them written once Close returns nil).
func (w *Writer[R]) Rows() int64 { return w.rows }

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("records: writer is closed")

// Append adds one row. A row with an out-of-range node index or enumeration is
// rejected with an error and not written; the writer stays usable. An I/O error is
// returned by this and every later call.
func (w *Writer[R]) Append(r *R) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	for j, c := range w.codecs {
		if err := c.put(r); err != nil {
			for _, done := range w.codecs[:j] { // a rejected row leaves no trace
				done.undo()
			}
			return fmt.Errorf("records: %s row %d: column %s: %w", w.path, w.rows, w.schema.Field(j).Name, err)
		}
	}
	w.n++
	w.rows++
	if w.n == w.batch {
		return w.flush()
	}
	return nil
}

// flush writes the buffered rows as one record batch. Every dictionary column uses
// the writer's single dictionary array, so the IPC file writer sees one dictionary
// per field for the whole file (NOTES.md).
func (w *Writer[R]) flush() error {
	for i, c := range w.codecs {
		w.cols[i] = c.build()
	}
	rec := array.NewRecord(w.schema, w.cols, int64(w.n))
	err := w.w.Write(rec) // the batch is on its way to the file when Write returns
	rec.Release()
	for i, a := range w.cols {
		a.Release()
		w.cols[i] = nil
		w.codecs[i].reset()
	}
	w.n = 0
	if err != nil {
		w.err = fmt.Errorf("records: write %s: %w", w.path, err)
	}
	return w.err
}

// Close writes the buffered rows and the file footer and closes the file. A file
// without rows still gets one empty batch, so that its dictionaries are present.
// Closing twice returns nil.
func (w *Writer[R]) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.err
	if err == nil && (w.n > 0 || w.rows == 0) {
		err = w.flush()
	}
	if err == nil {
		if cerr := w.w.Close(); cerr != nil {
			err = fmt.Errorf("records: finish %s: %w", w.path, cerr)
		}
	}
	if cerr := w.f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("records: close %s: %w", w.path, cerr)
	}
	for _, c := range w.codecs {
		c.release()
	}
	w.env.nodeDict.Release()
	return err
}
