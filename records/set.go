package records

import (
	"errors"
	"fmt"
	"path/filepath"
)

// WriterSet is the writers of one run's record files, created together in one
// directory (normally OutputDir.Dir()) and closed together.
type WriterSet struct {
	Ports       *PortsWriter
	Drops       *DropsWriter
	PFC         *PFCWriter
	Buffer      *BufferWriter
	LoadBalance *LoadBalanceWriter
	Flows       *FlowsWriter
	Messages    *MessagesWriter
	Delay       *DelayWriter
	Packets     *PacketsWriter   // nil unless packets were asked for (--record-packets)
	Transport   *TransportWriter // nil unless the run is closed loop
	Stages      *StagesWriter    // nil unless the fabric has ECMP stages beyond the rack and fabric uplinks
}

// fileWriter is what WriterSet needs of every Writer.
type fileWriter interface {
	Path() string
	Rows() int64
	Close() error
}

// NewWriterSet creates the record files in dir: all of them, packets.arrow only if
// packets is true. On error it closes what it created. AddTransport adds
// transport.arrow.
func NewWriterSet(dir string, d Dictionaries, packets bool, opts ...Option) (*WriterSet, error) {
	s := new(WriterSet)
	var err error
	p := func(name string) string { return filepath.Join(dir, name) }
	try := func(f func() error) {
		if err == nil {
			err = f()
		}
	}
	try(func() (e error) { s.Ports, e = NewPortsWriter(p(PortsFile), d, opts...); return })
	try(func() (e error) { s.Drops, e = NewDropsWriter(p(DropsFile), d, opts...); return })
	try(func() (e error) { s.PFC, e = NewPFCWriter(p(PFCFile), d, opts...); return })
	try(func() (e error) { s.Buffer, e = NewBufferWriter(p(BufferFile), d, opts...); return })
	try(func() (e error) { s.LoadBalance, e = NewLoadBalanceWriter(p(LoadBalanceFile), d, opts...); return })
	try(func() (e error) { s.Flows, e = NewFlowsWriter(p(FlowsFile), d, opts...); return })
	try(func() (e error) { s.Messages, e = NewMessagesWriter(p(MessagesFile), d, opts...); return })
	try(func() (e error) { s.Delay, e = NewDelayWriter(p(DelayFile), d, opts...); return })
	if packets {
		try(func() (e error) { s.Packets, e = NewPacketsWriter(p(PacketsFile), d, opts...); return })
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *WriterSet) writers() []fileWriter {
	var ws []fileWriter
	add := func(ok bool, w fileWriter) {
		if ok {
			ws = append(ws, w)
		}
	}
	add(s.Ports != nil, s.Ports)
	add(s.Drops != nil, s.Drops)
	add(s.PFC != nil, s.PFC)
	add(s.Buffer != nil, s.Buffer)
	add(s.LoadBalance != nil, s.LoadBalance)
	add(s.Flows != nil, s.Flows)
	add(s.Messages != nil, s.Messages)
	add(s.Delay != nil, s.Delay)
	add(s.Packets != nil, s.Packets)
	add(s.Transport != nil, s.Transport)
	add(s.Stages != nil, s.Stages)
	return ws
}

// AddTransport creates transport.arrow in dir (closed-loop runs).
func (s *WriterSet) AddTransport(dir string, d Dictionaries, opts ...Option) error {
	w, err := NewTransportWriter(filepath.Join(dir, TransportFile), d, opts...)
	if err != nil {
		return err
	}
	s.Transport = w
	return nil
}

// AddStages creates stages.arrow in dir (fabrics with ECMP stages beyond the rack
// and fabric uplinks: docs/records.md#stagesarrow).
func (s *WriterSet) AddStages(dir string, d Dictionaries, opts ...Option) error {
	w, err := NewStagesWriter(filepath.Join(dir, StagesFile), d, opts...)
	if err != nil {
		return err
	}
	s.Stages = w
	return nil
}

// Close closes every writer and returns the rows written per file name, ready for
// Run.Records; the error joins every writer's error.
func (s *WriterSet) Close() (map[string]int64, error) {
	rows := make(map[string]int64)
	var errs []error
	for _, w := range s.writers() {
		if err := w.Close(); err != nil {
			errs = append(errs, err)
		}
		rows[filepath.Base(w.Path())] = w.Rows()
	}
	if err := errors.Join(errs...); err != nil {
		return rows, fmt.Errorf("records: closing the record files: %w", err)
	}
	return rows, nil
}
