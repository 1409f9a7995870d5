package ingest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// pcapng block types.
const (
	ngSHB = 0x0A0D0D0A // section header
	ngIDB = 0x00000001 // interface description
	ngPB  = 0x00000002 // packet (obsolete)
	ngSPB = 0x00000003 // simple packet
	ngEPB = 0x00000006 // enhanced packet
)

// maxBlock bounds the size of a pcapng block that carries a packet (and of the
// section and interface headers): 256 KiB of packet data plus generous room for
// options. Other blocks (statistics, name resolution, ...) may be any size; they are
// skipped without being buffered.
const maxBlock = 1 << 20

// ngError is a corruption found by the guard, located by byte offset.
type ngError struct {
	off    int64 // byte offset of the block in the (decompressed) stream
	index  int64 // index of the next packet record
	packet bool  // the block is a packet block (else it precedes packet index)
	msg    string
}

func (e *ngError) Error() string { return e.msg }

// pktMeta describes one packet block the guard passed on, in order.
type pktMeta struct {
	link LinkType
	off  int64
}

type ngIface struct {
	link LinkType
	snap uint32 // snaplen as passed to pcapgo (capped)
	res  string
}

// ngGuard sits between the file and pcapgo.NgReader. pcapgo trusts the file: a
// huge captured length or interface snaplen makes it allocate gigabytes, an
// if_tsresol above 10^-19 divides by zero, and option lengths may overrun their
// block. The guard reads whole blocks, checks their framing (length a multiple of 4,
// trailing length equal to the leading one, captured length inside the block,
// interface ids declared, options inside the block) and passes on only the blocks
// pcapgo needs: section headers (minor version normalised to 0), interface
// descriptions (snaplen capped, link type normalised to Ethernet so that pcapgo
// never drops or boxes mixed link types) and packet blocks. It keeps the real link
// type and byte offset of every packet block it passed in a FIFO that the reader
// pops in step with pcapgo. All other blocks are checked and skipped.
type ngGuard struct {
	br *bufio.Reader // at least maxBlock bytes of buffer

	off     int64  // stream offset of the next byte not yet consumed from br
	cur     []byte // block being passed on
	pos     int    // bytes of cur already passed on
	aliased bool   // cur points into br's buffer: discard it from br when done

	typ       uint32 // type of the block being checked
	bigEndian bool
	inSection bool
	ifaces    []ngIface
	packets   int64 // packet blocks passed on so far

	fifo     []pktMeta
	fifoHead int

	scratch []byte

	err       error // sticky: io.EOF at the end, *ngError on corruption, or an I/O error
	truncated bool  // the stream ended inside a block
	truncOff  int64

	// Declared interfaces over the whole file, for the statistics.
	links []LinkType
	resos []string
}

func newNgGuard(r io.Reader) *ngGuard {
	return &ngGuard{br: bufio.NewReaderSize(r, maxBlock+4096)}
}

func (g *ngGuard) u16(b []byte) uint16 {
	if g.bigEndian {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (g *ngGuard) u32(b []byte) uint32 {
	if g.bigEndian {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (g *ngGuard) put16(b []byte, v uint16) {
	if g.bigEndian {
		binary.BigEndian.PutUint16(b, v)
	} else {
		binary.LittleEndian.PutUint16(b, v)
	}
}

func (g *ngGuard) put32(b []byte, v uint32) {
	if g.bigEndian {
		binary.BigEndian.PutUint32(b, v)
	} else {
		binary.LittleEndian.PutUint32(b, v)
	}
}

// Read passes on validated blocks.
func (g *ngGuard) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if g.pos < len(g.cur) {
			c := copy(p[n:], g.cur[g.pos:])
			n += c
			g.pos += c
			continue
		}
		if g.cur != nil {
			if g.aliased {
				g.br.Discard(len(g.cur)) // buffered: cannot fail
				g.off += int64(len(g.cur))
			}
			g.cur, g.pos = nil, 0
		}
		if g.err != nil || !g.next() {
			break
		}
	}
	if n == 0 {
		return 0, g.err
	}
	return n, nil
}

// pop returns the metadata of the oldest packet block passed on.
func (g *ngGuard) pop() (pktMeta, bool) {
	if g.fifoHead >= len(g.fifo) {
		return pktMeta{}, false
	}
	m := g.fifo[g.fifoHead]
	g.fifoHead++
	if g.fifoHead == len(g.fifo) {
		g.fifo, g.fifoHead = g.fifo[:0], 0
	}
	return m, true
}

func (g *ngGuard) corrupt(format string, args ...any) bool {
	g.err = &ngError{off: g.off, index: g.packets, packet: g.typ == ngEPB || g.typ == ngSPB || g.typ == ngPB,
		msg: fmt.Sprintf(format, args...)}
	return false
}

func (g *ngGuard) truncate() bool {
	g.truncated, g.truncOff, g.err = true, g.off, io.EOF
	return false
}

// readErr turns a short read of br into the guard's state.
func (g *ngGuard) readErr(err error) bool {
	if err == nil || err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) || err == bufio.ErrBufferFull {
		return g.truncate()
	}
	g.err = err
	return false
}

// next validates the next block to pass on; it skips blocks pcapgo does not need.
func (g *ngGuard) next() bool {
	for {
		hdr, err := g.br.Peek(8)
		if len(hdr) == 0 && err == io.EOF {
			g.err = io.EOF
			return false
		}
		if len(hdr) < 8 {
			return g.readErr(err)
		}
		typ := binary.LittleEndian.Uint32(hdr[0:4])
		g.typ = typ
		if typ == ngSHB {
			b, err := g.br.Peek(12)
			if len(b) < 12 {
				return g.readErr(err)
			}
			switch {
			case binary.BigEndian.Uint32(b[8:12]) == 0x1A2B3C4D:
				g.bigEndian = true
			case binary.LittleEndian.Uint32(b[8:12]) == 0x1A2B3C4D:
				g.bigEndian = false
			default:
				return g.corrupt("section header block has byte-order magic 0x%08x, want 0x1a2b3c4d", binary.BigEndian.Uint32(b[8:12]))
			}
		} else {
			typ = g.u32(hdr[0:4])
			g.typ = typ
			if !g.inSection {
				return g.corrupt("first block has type 0x%08x, not a section header block", typ)
			}
		}
		blen := g.u32(hdr[4:8])
		if blen < 12 || blen%4 != 0 {
			return g.corrupt("block of type 0x%08x has length %d: not a multiple of 4 of at least 12", typ, blen)
		}
		switch typ {
		case ngSHB, ngIDB, ngEPB, ngSPB, ngPB:
		default:
			if !g.skip(typ, blen) {
				return false
			}
			continue
		}
		if blen > maxBlock {
			return g.corrupt("block of type 0x%08x has length %d, over the %d-byte limit", typ, blen, maxBlock)
		}
		b, err := g.br.Peek(int(blen))
		if len(b) < int(blen) {
			return g.readErr(err)
		}
		if t := g.u32(b[blen-4:]); t != blen {
			return g.corrupt("block of type 0x%08x has length %d but its trailing length says %d", typ, blen, t)
		}
		if !g.check(typ, b) {
			return false
		}
		return true
	}
}

// skip consumes a block that pcapgo does not need, checking its trailing length.
func (g *ngGuard) skip(typ, blen uint32) bool {
	if int(blen) <= g.br.Size() {
		b, err := g.br.Peek(int(blen))
		if len(b) < int(blen) {
			return g.readErr(err)
		}
		if t := g.u32(b[blen-4:]); t != blen {
			return g.corrupt("block of type 0x%08x has length %d but its trailing length says %d", typ, blen, t)
		}
		g.br.Discard(int(blen))
		g.off += int64(blen)
		return true
	}
	start := g.off
	n, err := g.br.Discard(int(blen) - 4)
	g.off += int64(n)
	if n < int(blen)-4 {
		return g.readErr(err)
	}
	b, err := g.br.Peek(4)
	if len(b) < 4 {
		return g.readErr(err)
	}
	if t := g.u32(b); t != blen {
		g.off = start
		return g.corrupt("block of type 0x%08x has length %d but its trailing length says %d", typ, blen, t)
	}
	g.br.Discard(4)
	g.off += 4
	return true
}

// check validates the contents of a block to pass on and sets it as current.
func (g *ngGuard) check(typ uint32, b []byte) bool {
	blen := uint32(len(b))
	switch typ {
	case ngSHB:
		if blen < 28 {
			return g.corrupt("section header block has length %d, under 28", blen)
		}
		if major := g.u16(b[12:14]); major != 1 {
			return g.corrupt("unsupported pcapng version %d.%d", major, g.u16(b[14:16]))
		}
		if !g.options(b, 24, nil) {
			return false
		}
		g.inSection = true
		g.ifaces = g.ifaces[:0]
		b = g.copyBlock(b)
		g.put16(b[14:16], 0) // pcapgo insists on minor version 0
	case ngIDB:
		if blen < 20 {
			return g.corrupt("interface description block has length %d, under 20", blen)
		}
		link := LinkType(g.u16(b[8:10]))
		snap := g.u32(b[12:16])
		res := "us"
		ok := g.options(b, 16, func(code uint16, val []byte) bool {
			switch code {
			case 9: // if_tsresol
				if len(val) < 1 {
					return g.corrupt("interface %d: empty if_tsresol option", len(g.ifaces))
				}
				v := val[0]
				if v&0x80 != 0 && v&0x7F > 63 || v&0x80 == 0 && v > 19 {
					return g.corrupt("interface %d: if_tsresol 0x%02x is out of range", len(g.ifaces), v)
				}
				res = resolutionName(v)
			case 14: // if_tsoffset
				if len(val) < 8 {
					return g.corrupt("interface %d: if_tsoffset option has %d bytes, want 8", len(g.ifaces), len(val))
				}
			}
			return true
		})
		if !ok {
			return false
		}
		if snap > MaxSnaplen {
			snap = MaxSnaplen // pcapgo sizes its packet buffer from the snaplen
		}
		b = g.copyBlock(b)
		g.put16(b[8:10], uint16(LinkEthernet))
		g.put32(b[12:16], snap)
		g.ifaces = append(g.ifaces, ngIface{link: link, snap: snap, res: res})
		g.noteIface(link, res)
	case ngEPB, ngPB:
		if blen < 32 {
			return g.corrupt("packet block has length %d, under 32", blen)
		}
		var id uint32
		if typ == ngEPB {
			id = g.u32(b[8:12])
		} else {
			id = uint32(g.u16(b[8:10]))
		}
		if id >= uint32(len(g.ifaces)) {
			return g.corrupt("packet block names interface %d, but the section declares %d", id, len(g.ifaces))
		}
		if caplen := g.u32(b[20:24]); caplen > blen-32 || caplen > MaxSnaplen {
			return g.corrupt("packet block has captured length %d, but the block holds at most %d and the limit is %d", caplen, blen-32, MaxSnaplen)
		}
		g.push(g.ifaces[id].link)
		g.cur, g.aliased = b, true
	case ngSPB:
		if blen < 16 {
			return g.corrupt("simple packet block has length %d, under 16", blen)
		}
		if len(g.ifaces) == 0 {
			return g.corrupt("simple packet block before any interface description")
		}
		caplen := g.u32(b[8:12])
		if s := g.ifaces[0].snap; s != 0 && caplen > s {
			caplen = s
		}
		if caplen > blen-16 || caplen > MaxSnaplen {
			return g.corrupt("simple packet block has captured length %d, but the block holds at most %d and the limit is %d", caplen, blen-16, MaxSnaplen)
		}
		g.push(g.ifaces[0].link)
		g.cur, g.aliased = b, true
	}
	return true
}

func (g *ngGuard) push(link LinkType) {
	g.fifo = append(g.fifo, pktMeta{link: link, off: g.off})
	g.packets++
}

// copyBlock copies a block out of br (and consumes it) so that it can be patched.
func (g *ngGuard) copyBlock(b []byte) []byte {
	g.scratch = append(g.scratch[:0], b...)
	g.br.Discard(len(b))
	g.off += int64(len(b))
	g.cur, g.aliased = g.scratch, false
	return g.scratch
}

func (g *ngGuard) noteIface(link LinkType, res string) {
	found := false
	for _, l := range g.links {
		found = found || l == link
	}
	if !found {
		g.links = append(g.links, link)
	}
	found = false
	for _, r := range g.resos {
		found = found || r == res
	}
	if !found {
		g.resos = append(g.resos, res)
	}
}

// options walks the options of block b from offset start to the trailer; visit (if
// not nil) sees each option before the end-of-options marker.
func (g *ngGuard) options(b []byte, start int, visit func(code uint16, val []byte) bool) bool {
	end := len(b) - 4
	for pos := start; pos < end; {
		if pos+4 > end {
			return g.corrupt("option at block offset %d overruns its block", pos)
		}
		code, olen := g.u16(b[pos:pos+2]), int(g.u16(b[pos+2:pos+4]))
		if code == 0 {
			if olen != 0 {
				return g.corrupt("end-of-options marker has length %d", olen)
			}
			return true
		}
		padded := (olen + 3) &^ 3
		if pos+4+padded > end {
			return g.corrupt("option %d at block offset %d has length %d, past its block", code, pos, olen)
		}
		if visit != nil && !visit(code, b[pos+4:pos+4+olen]) {
			return false
		}
		pos += 4 + padded
	}
	return true
}

// resolutionName names a pcapng if_tsresol value: "us", "ns", "ms", "s", or
// "10^-N s" / "2^-N s".
func resolutionName(v uint8) string {
	if v&0x80 != 0 {
		return fmt.Sprintf("2^-%d s", v&0x7F)
	}
	switch v {
	case 0:
		return "s"
	case 3:
		return "ms"
	case 6:
		return "us"
	case 9:
		return "ns"
	}
	return fmt.Sprintf("10^-%d s", v)
}
