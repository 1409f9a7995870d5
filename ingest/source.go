package ingest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/google/gopacket/pcapgo"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/units"
)

// MaxSnaplen is the largest captured length accepted for one record (tcpdump's and
// tshark's limit). pcapgo allocates its read buffer from the file's snaplen, so the
// reader caps it here; a record claiming more is a corrupt file.
const MaxSnaplen = 262144

// ErrCorrupt is wrapped by every error about a capture file that cannot be read:
// unknown or unsupported format, a record length past the limits, a lying pcapng
// block length, a corrupt compressed stream, a truncated file under Options.Strict.
var ErrCorrupt = errors.New("corrupt capture file")

// ErrTruncated is wrapped by the error about a file that ends inside a packet, under
// Options.Strict (otherwise that is a warning and the packets before it are used).
var ErrTruncated = errors.New("the file ends inside this packet (truncated capture)")

// StdinPath is the path that names standard input: Options.Stdin is read for it.
const StdinPath = "-"

// displayName is how messages name the file at path.
func displayName(path string) string {
	if path == StdinPath {
		return "standard input"
	}
	return path
}

// FileError locates a problem in a capture file.
type FileError struct {
	Path   string
	Index  int64 // index of the record being read (0-based, all records); -1 for the file header
	Offset int64 // byte offset of that record in the file (in the decompressed stream when compressed)
	// Compression is the compression the file was read through ("gzip", "bzip2",
	// "xz", "zstd"), or "".
	Compression string
	Err         error
	block       bool // a pcapng block that is not a packet, located before packet Index
}

func (e *FileError) Error() string {
	if e.Index < 0 && e.Offset == 0 && !e.block {
		return fmt.Sprintf("%s: %v", displayName(e.Path), e.Err) // the file's format
	}
	where := "file header"
	if e.block {
		where = fmt.Sprintf("block before packet %d", e.Index)
	} else if e.Index >= 0 {
		where = fmt.Sprintf("packet %d", e.Index)
	}
	dec := ""
	if e.Compression != "" {
		dec = fmt.Sprintf(" of the decompressed (%s) data", e.Compression)
	}
	return fmt.Sprintf("%s: %s at byte offset %d%s: %v", displayName(e.Path), where, e.Offset, dec, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// Is reports that every FileError is an ErrCorrupt.
func (e *FileError) Is(target error) bool { return target == ErrCorrupt }

// FileStats describes one input file and what the reader found in it.
type FileStats struct {
	Path   string
	Format string // "pcap" or "pcapng"
	// Compression is the compression the file was read through: "gzip", "bzip2",
	// "xz", "zstd", or "" for none.
	Compression string
	// LinkTypes are the link types the file declares (pcap header, pcapng
	// interfaces), in order of first appearance.
	LinkTypes []LinkType
	// Resolutions are the timestamp resolutions the file declares ("us", "ns",
	// ...), in order of first appearance (pcapng interfaces may differ).
	Resolutions []string
	Counts
	// Truncated is true when the file ended inside a record (reported as a warning).
	Truncated bool
	// InOrder is true while no IP packet read so far had a timestamp earlier than
	// the IP packet before it in the file, i.e. the reorder window changed nothing.
	InOrder bool
}

// source reads the records of one file, decodes them and reorders the IP packets
// within the reorder window.
type source struct {
	stats  FileStats
	index  int // FileIndex
	warn   func(string)
	strict bool          // Options.Strict: a truncated file is an error
	family ipaddr.Family // Options.Family: the family kept (0: both)
	filter PacketFilter  // Options.Filter (nil: every packet)

	in       io.Reader
	close    func() error
	closeDec func() // releases the decompressor (zstd's goroutines), or nil
	pcap     *pcapgo.Reader
	link     LinkType // pcap only
	ng       *pcapgo.NgReader
	guard    *ngGuard

	off    int64 // pcap: byte offset of the next record
	next   int64 // index of the next record
	lastTS int64 // timestamp of the previous record (for SPBs without one)
	eof    bool
	lastIP int64 // timestamp of the previous IP packet (for InOrder)
	haveIP bool

	// Reordering.
	window   int64 // ns; < 0: off
	verify   bool  // Options.InOrder: no reorder buffer, and a late packet is an error
	pend     sortBuf
	scratch  Packet // the packet being decoded, before it joins pend
	maxSeen  int64
	haveSeen bool
	lastOut  int64
	haveOut  bool
	lateWarn bool // the first out-of-order packet was reported
	lateDone bool // the total was reported
}

func openSource(path string, index int, window int64, verify bool, opt *Options) (*source, error) {
	var in io.Reader
	closeFile := func() error { return nil }
	if path == StdinPath {
		if opt.Stdin == nil {
			return nil, errors.New("standard input (-) is not available here")
		}
		fi, err := opt.Stdin.Stat()
		if err != nil {
			return nil, fmt.Errorf("standard input: %w", err)
		}
		in = io.NewSectionReader(opt.Stdin, 0, fi.Size())
	} else {
		f, err := os.Open(path)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return nil, fmt.Errorf("%s: %w", path, pe.Err) // not "open PATH: ..."
			}
			return nil, err
		}
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, syscall.EISDIR)
		}
		in, closeFile = f, f.Close
	}
	s, err := newSource(path, in, index, window, opt)
	if err != nil {
		closeFile()
		return nil, err
	}
	if opt.Opened != nil {
		opt.Opened(path)
	}
	s.close = func() error {
		if s.closeDec != nil {
			s.closeDec()
		}
		return closeFile()
	}
	if verify {
		s.verify, s.window = true, -1
	}
	return s, nil
}

// newSource reads the capture header from in; name is used in messages.
func newSource(name string, in io.Reader, index int, window int64, opt *Options) (*source, error) {
	s := &source{stats: FileStats{Path: name, InOrder: true}, index: index, warn: opt.Warn, strict: opt.Strict,
		family: opt.Family, filter: opt.Filter, in: in, window: window, close: func() error { return nil }}
	if err := s.init(); err != nil {
		if s.closeDec != nil {
			s.closeDec()
		}
		return nil, err
	}
	return s, nil
}

func (s *source) headerErr(off int64, format string, args ...any) error {
	return &FileError{Path: s.stats.Path, Index: -1, Offset: off, Compression: s.stats.Compression, Err: fmt.Errorf(format, args...)}
}

func (s *source) init() error {
	var stream *bufio.Reader = bufio.NewReaderSize(s.in, 64<<10)
	head, _ := stream.Peek(sniffLen)
	if c := compressionOf(head); c != nil {
		r, closeDec, err := c.open(stream)
		if err != nil {
			return s.headerErr(0, "bad %s header: %w", c.name, err)
		}
		s.stats.Compression, s.closeDec = c.name, closeDec
		stream = bufio.NewReaderSize(r, 64<<10)
	}
	hdr, err := stream.Peek(24)
	if len(hdr) < 4 && s.stats.Compression != "" && errors.Is(err, io.ErrUnexpectedEOF) {
		// A block-compressed stream cut short gives nothing of its last block.
		return s.headerErr(0, "the %s data ends before the capture's first packet: %w", s.stats.Compression, ErrTruncated)
	}
	if len(hdr) < 4 {
		if err != nil && err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) {
			return s.headerErr(0, "reading the file header: %w", err)
		}
		return s.headerErr(0, "file has %d bytes, too short for a pcap or pcapng header", len(hdr))
	}
	magic := binary.LittleEndian.Uint32(hdr[0:4])
	switch magic {
	case 0xA1B2C3D4, 0xD4C3B2A1, 0xA1B23C4D, 0x4D3CB2A1:
		s.stats.Format = "pcap"
		if len(hdr) < 24 {
			return s.headerErr(0, "pcap file header has %d of 24 bytes", len(hdr))
		}
		var order binary.ByteOrder = binary.LittleEndian
		if magic == 0xD4C3B2A1 || magic == 0x4D3CB2A1 {
			order = binary.BigEndian
		}
		s.stats.Resolutions = []string{"us"}
		if magic == 0xA1B23C4D || magic == 0x4D3CB2A1 {
			s.stats.Resolutions = []string{"ns"}
		}
		// The low 16 bits are the link type; the high bits may carry FCS flags.
		s.link = LinkType(order.Uint32(hdr[20:24]) & 0xFFFF)
		s.stats.LinkTypes = []LinkType{s.link}
		r, err := pcapgo.NewReader(stream)
		if err != nil {
			return s.headerErr(0, "%w", err)
		}
		// Records may exceed the header's snaplen (tshark reads them); pcapgo
		// allocates its buffer from the snaplen, so set it to the cap.
		r.SetSnaplen(MaxSnaplen)
		s.pcap, s.off = r, 24
	case ngSHB:
		s.stats.Format = "pcapng"
		s.guard = newNgGuard(stream)
		r, err := pcapgo.NewNgReader(s.guard, pcapgo.NgReaderOptions{})
		if err != nil {
			if err == io.EOF && s.guard.err == io.EOF {
				// A section with no interfaces: an empty capture.
				s.eof = true
				return s.finishNg()
			}
			return s.ngErr(err)
		}
		s.ng = r
	default:
		head, _ := stream.Peek(sniffLen)
		if what, hint := unsupportedFormat(head); what != "" {
			if s.stats.Compression != "" {
				what = fmt.Sprintf("%s inside %s", what, s.stats.Compression)
			}
			return s.headerErr(0, "%s: not supported; %s", what, hint)
		}
		return s.headerErr(0, "not a pcap or pcapng file (it starts with the bytes % x)", hdr[:4])
	}
	return nil
}

// ngErr turns an error returned by pcapgo's pcapng reader into a FileError.
func (s *source) ngErr(err error) error {
	var ge *ngError
	if errors.As(s.guard.err, &ge) {
		return &FileError{Path: s.stats.Path, Index: ge.index, Offset: ge.off, Compression: s.stats.Compression, Err: errors.New(ge.msg), block: !ge.packet}
	}
	if s.guard.err != nil && s.guard.err != io.EOF {
		return &FileError{Path: s.stats.Path, Index: s.next, Offset: s.guard.off, Compression: s.stats.Compression, Err: s.guard.err}
	}
	return &FileError{Path: s.stats.Path, Index: s.next, Offset: s.guard.off, Compression: s.stats.Compression, Err: err}
}

func (s *source) finishNg() error {
	s.stats.LinkTypes = s.guard.links
	s.stats.Resolutions = s.guard.resos
	if s.guard.truncated {
		return s.truncatedAt(s.next, s.guard.truncOff)
	}
	return nil
}

// truncatedAt notes that the file ends inside packet index (at byte offset off): a
// warning, and the packets before it are used, as tcpdump does; under Strict, an
// error.
func (s *source) truncatedAt(index, off int64) error {
	s.stats.Truncated = true
	if s.strict {
		return &FileError{Path: s.stats.Path, Index: index, Offset: off, Compression: s.stats.Compression, Err: ErrTruncated}
	}
	if s.warn != nil {
		s.warn(fmt.Sprintf("%s: packet %d at byte offset %d is truncated (the file ends inside it); the packets before it are used", displayName(s.stats.Path), index, off))
	}
	return nil
}

// record reads and decodes the next record into p. It returns false at the end
// of the file; non-IP records, and IP packets of a family Options.Family leaves out
// or that Options.Filter does not match, are counted and skipped.
func (s *source) record(p *Packet) (bool, error) {
	for !s.eof {
		var (
			data []byte
			wire int
			ts   int64
			link LinkType
		)
		if s.pcap != nil {
			d, ci, err := s.pcap.ZeroCopyReadPacketData()
			if err != nil {
				s.eof = true
				if err == io.EOF && ci.Timestamp.IsZero() {
					return false, nil
				}
				if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
					return false, s.truncatedAt(s.next, s.off)
				}
				switch {
				case ci.CaptureLength > MaxSnaplen:
					err = fmt.Errorf("record claims %d captured bytes, over the %d-byte limit", ci.CaptureLength, MaxSnaplen)
				case ci.CaptureLength > ci.Length:
					err = fmt.Errorf("record claims %d captured bytes of a %d-byte packet", ci.CaptureLength, ci.Length)
				}
				return false, &FileError{Path: s.stats.Path, Index: s.next, Offset: s.off, Compression: s.stats.Compression, Err: err}
			}
			data, wire, ts, link = d, ci.Length, ci.Timestamp.UnixNano(), s.link
			s.off += 16 + int64(ci.CaptureLength)
		} else {
			d, ci, err := s.ng.ZeroCopyReadPacketData()
			if err != nil {
				s.eof = true
				if err == io.EOF && s.guard.err == io.EOF {
					return false, s.finishNg()
				}
				return false, s.ngErr(err)
			}
			m, ok := s.guard.pop()
			if !ok {
				s.eof = true
				return false, &FileError{Path: s.stats.Path, Index: s.next, Offset: s.guard.off, Compression: s.stats.Compression,
					Err: errors.New("internal error: pcapng packet without a validated block")}
			}
			data, wire, link = d, ci.Length, m.link
			if ci.Timestamp.IsZero() { // simple packet block: no timestamp
				ts = s.lastTS
			} else {
				ts = ci.Timestamp.UnixNano()
			}
		}
		idx := s.next
		s.next++
		s.lastTS = ts
		s.stats.Records++
		if r := Decode(link, data, uint32(wire), p); r != OK {
			s.stats.Skipped[r]++
			continue
		}
		if s.family != 0 && p.Src.Family() != s.family {
			s.stats.Skipped[SkipFamilyFiltered]++
			continue
		}
		p.Timestamp, p.Index, p.FileIndex = ts, idx, s.index
		if s.filter != nil && !s.filter.Match(p) {
			s.stats.Skipped[SkipFiltered]++
			continue
		}
		if s.haveIP && ts < s.lastIP {
			s.stats.InOrder = false
		}
		s.lastIP, s.haveIP = ts, true
		return true, nil
	}
	return false, nil
}

// nextPacket returns the next IP packet of the file in timestamp order (within
// the reorder window).
func (s *source) nextPacket(p *Packet) (bool, error) {
	if s.window < 0 {
		ok, err := s.record(p)
		if ok {
			if s.verify && !s.stats.InOrder {
				s.eof = true
				return false, fmt.Errorf("%s: packet %d is earlier than the packet before it, but an earlier pass found the file in timestamp order: the file changed while it was being read", displayName(s.stats.Path), p.Index)
			}
			s.stats.count(p.Src.Family(), 1)
		}
		return ok, err
	}
	for {
		if s.pend.len() > 0 {
			front := s.pend.frontTS()
			if s.eof || (front <= s.maxSeen && uint64(s.maxSeen)-uint64(front) >= uint64(s.window)) {
				s.pend.popInto(p)
				p.FileIndex = s.index
				s.lastOut, s.haveOut = p.Timestamp, true
				s.stats.count(p.Src.Family(), 1)
				return true, nil
			}
		} else if s.eof {
			s.pend.release()
			s.finishLate()
			return false, nil
		}
		q := &s.scratch
		ok, err := s.record(q)
		if err != nil {
			return false, err
		}
		if !ok {
			continue // s.eof is set: drain
		}
		if s.haveOut && q.Timestamp < s.lastOut {
			s.stats.Skipped[SkipOutOfOrder]++
			if !s.lateWarn && s.warn != nil {
				s.lateWarn = true
				s.warn(fmt.Sprintf("%s: packet %d (%s) is %s earlier than a packet already read, more than the reorder window %s: counted out-of-order and skipped",
					displayName(s.stats.Path), q.Index, formatTS(q.Timestamp), units.HumanNanos(s.lastOut-q.Timestamp), units.HumanNanos(s.window)))
			}
			continue
		}
		if !s.haveSeen || q.Timestamp > s.maxSeen {
			s.maxSeen, s.haveSeen = q.Timestamp, true
		}
		s.pend.push(q)
	}
}

func (s *source) finishLate() {
	if n := s.stats.Skipped[SkipOutOfOrder]; n > 1 && s.warn != nil && !s.lateDone {
		s.lateDone = true
		s.warn(fmt.Sprintf("%s: %d packets in all were out of order by more than the reorder window %s and skipped",
			displayName(s.stats.Path), n, units.HumanNanos(s.window)))
	}
}

// formatTS formats nanoseconds since the epoch as RFC 3339 UTC with 9 fraction digits.
func formatTS(ns int64) string { return FormatTime(ns) }
