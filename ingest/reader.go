package ingest

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"time"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

// DefaultReorderWindow is the reorder window used when Options.ReorderWindow is 0.
const DefaultReorderWindow = 10 * time.Millisecond

// Options configure a Reader.
type Options struct {
	// ReorderWindow bounds how far back in time a packet may arrive within its file
	// and still be put in order. Zero means DefaultReorderWindow (10 ms). A negative
	// value turns reordering off: each file's packets come in file order (files are
	// still merged by their current packet's timestamp) and none is out-of-order.
	// A packet earlier than one already delivered from its file (i.e. more than the
	// window behind the latest timestamp seen) is counted "out-of-order", reported
	// through Warn once per file, and skipped.
	ReorderWindow time.Duration
	// Warn receives warnings: a truncated last record (reading of that file stops
	// there) and out-of-order packets. Nil discards them.
	Warn func(msg string)
	// Strict makes a file that ends inside a packet an error (ErrTruncated) instead of
	// a warning after which the packets before it are used.
	Strict bool
	// Stdin is what the path "-" (StdinPath) reads: standard input, as a file, since
	// a capture may be read more than once (a command copies a pipe to a temporary
	// file first). It is read with ReadAt, so several Readers may share it.
	Stdin *os.File
	// Context, when not nil, stops Summarize (with the context's error) once done.
	Context context.Context
	// Window, when not zero, keeps only the IP packets of a time window of the
	// merged capture; the others are counted "out-of-window" and skipped.
	Window Window
	// Family, when not 0, keeps only the IP packets of that family (--family); the
	// others are counted "family-filtered" and skipped, before reordering and the
	// window (a relative window starts at the first packet of the family kept).
	Family ipaddr.Family
	// Filter, when not nil, keeps only the IP packets it matches (--filter, package
	// ingest/filter); the others are counted "filtered" and skipped, after Family and,
	// like it, before reordering and the window (a relative window starts at the first
	// packet the filter keeps). Match is called once per IP packet and must not keep p.
	Filter PacketFilter
	// InOrder, when not nil, tells per file (in the order of the paths) that an earlier
	// pass found its IP packets in timestamp order (FileStats.InOrder, or
	// FileSummary.InOrder from Summarize). Such a file is read without its reorder
	// buffer, which gives the same packets in the same order with less work and
	// memory; a packet earlier than the one before it then means the file changed
	// since, and is an error.
	InOrder []bool
	// Opened, when not nil, is called with the path each time a file is opened to be
	// decoded (each pass over it: Summarize, a Reader), so that a caller can count
	// its decodes.
	Opened func(path string)
}

// PacketFilter selects IP packets (Options.Filter); *filter.Filter is one.
type PacketFilter interface {
	Match(p *Packet) bool
}

// Window is a time window of a merged capture: packets in [start, start+Duration).
type Window struct {
	// Start is where the window begins: nanoseconds since the Unix epoch when
	// Absolute, otherwise an offset in nanoseconds from the first IP packet of the
	// merged capture (0: from the first packet).
	Start    int64
	Absolute bool
	// Duration is the window's length in nanoseconds; 0 means to the end of the
	// capture.
	Duration int64
}

// IsZero reports whether w selects the whole capture.
func (w Window) IsZero() bool { return w == Window{} }

// Reader streams the IP packets (IPv4 and IPv6) of several capture files merged by
// timestamp.
// Ties between files go to the file listed first. It is not safe for concurrent use.
type Reader struct {
	srcs  []*source
	heads []Packet
	state []int8 // per source: 0 need a packet, 1 head valid, 2 done
	err   error

	window   Window
	resolved bool  // lo and hi are known (at the first packet for a relative start)
	lo, hi   int64 // the window in ns since the epoch: [lo, hi)
}

// Open opens the capture files (pcap or pcapng, optionally gzip-compressed,
// recognised by content) and reads their headers. A file that cannot be read or is
// not a capture is an error naming it (a *FileError for a malformed one).
func Open(paths []string, opt Options) (*Reader, error) {
	if len(paths) == 0 {
		return nil, errors.New("no capture files given")
	}
	window := int64(opt.ReorderWindow)
	if window == 0 {
		window = int64(DefaultReorderWindow)
	}
	r := &Reader{heads: make([]Packet, len(paths)), state: make([]int8, len(paths)), window: opt.Window}
	for i, path := range paths {
		s, err := openSource(path, i, window, i < len(opt.InOrder) && opt.InOrder[i], &opt)
		if err != nil {
			r.Close()
			return nil, err
		}
		r.srcs = append(r.srcs, s)
	}
	return r, nil
}

// newReaderFrom builds a Reader over in-memory captures (tests and fuzzing).
func newReaderFrom(names []string, data [][]byte, opt Options) (*Reader, error) {
	window := int64(opt.ReorderWindow)
	if window == 0 {
		window = int64(DefaultReorderWindow)
	}
	r := &Reader{heads: make([]Packet, len(data)), state: make([]int8, len(data)), window: opt.Window}
	for i := range data {
		s, err := newSource(names[i], bytes.NewReader(data[i]), i, window, &opt)
		if err != nil {
			return nil, err
		}
		if i < len(opt.InOrder) && opt.InOrder[i] {
			s.verify, s.window = true, -1
		}
		r.srcs = append(r.srcs, s)
	}
	return r, nil
}

// Next stores the next IP packet in timestamp order in *p and returns true, or
// returns false at the end of all files. A corrupt file stops the reader with an
// error (a *FileError wrapping ErrCorrupt) that names the file and the packet index
// or byte offset; Next then keeps returning that error.
func (r *Reader) Next(p *Packet) (bool, error) {
	for {
		ok, err := r.next(p)
		if !ok || r.window.IsZero() || r.inWindow(p) {
			return ok, err
		}
	}
}

// inWindow reports whether p is in the window, and counts it out-of-window (in its
// file's counters) when it is not.
func (r *Reader) inWindow(p *Packet) bool {
	if !r.resolved {
		r.lo = r.window.Start
		if !r.window.Absolute {
			r.lo = addSat(p.Timestamp, r.window.Start)
		}
		r.hi = math.MaxInt64
		if r.window.Duration > 0 {
			r.hi = addSat(r.lo, r.window.Duration)
		}
		r.resolved = true
	}
	if p.Timestamp >= r.lo && p.Timestamp < r.hi {
		return true
	}
	st := &r.srcs[p.FileIndex].stats
	st.count(p.Src.Family(), -1)
	st.Skipped[SkipOutOfWindow]++
	return false
}

// WindowBounds returns the window as [lo, hi) in ns since the epoch, once known (after
// the first packet for a relative start); ok is false without a window or before.
func (r *Reader) WindowBounds() (lo, hi int64, ok bool) {
	return r.lo, r.hi, r.resolved
}

// addSat is a+b, saturated to the int64 range.
func addSat(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// next is Next without the window.
func (r *Reader) next(p *Packet) (bool, error) {
	if r.err != nil {
		return false, r.err
	}
	if len(r.srcs) == 1 {
		ok, err := r.srcs[0].nextPacket(p)
		if err != nil {
			r.err = err
		}
		return ok, err
	}
	best := -1
	for i, s := range r.srcs {
		if r.state[i] == 0 {
			ok, err := s.nextPacket(&r.heads[i])
			if err != nil {
				r.err = err
				return false, err
			}
			if ok {
				r.state[i] = 1
			} else {
				r.state[i] = 2
			}
		}
		if r.state[i] == 1 && (best < 0 || r.heads[i].Timestamp < r.heads[best].Timestamp) {
			best = i
		}
	}
	if best < 0 {
		return false, nil
	}
	*p = r.heads[best]
	r.state[best] = 0
	return true, nil
}

// Files returns the statistics of each file so far (final after Next returned
// false), in the order given to Open.
func (r *Reader) Files() []FileStats {
	out := make([]FileStats, len(r.srcs))
	for i, s := range r.srcs {
		out[i] = s.stats
		links, resos := s.stats.LinkTypes, s.stats.Resolutions
		if s.guard != nil { // pcapng: interfaces declared so far
			links, resos = s.guard.links, s.guard.resos
		}
		out[i].LinkTypes = append([]LinkType(nil), links...)
		out[i].Resolutions = append([]string(nil), resos...)
	}
	return out
}

// Total returns the counters of all files together.
func (r *Reader) Total() Counts {
	var c Counts
	for _, s := range r.srcs {
		c.add(&s.stats.Counts)
	}
	return c
}

// Close closes the files.
func (r *Reader) Close() error {
	var errs []error
	for _, s := range r.srcs {
		s.pend.release()
		errs = append(errs, s.close())
	}
	return errors.Join(errs...)
}
