package ingest

import (
	"sort"
	"sync"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

// The reorder buffer must hold every packet of the last reorder window: a packet
// leaves only once a packet at least one window later has been read, since until
// then a late packet may still sort before it (and an in-order packet handed on
// early would turn such a packet from "put in place" into "out of order"). At
// 3.2 Tb/s a 10 ms window is about a million packets, so the buffer is a queue of
// fixed-size chunks rather than one ring that doubles: growing adds a chunk
// without copying, the chunks emptied at the front are reused at the back (no
// allocation in steady state, however long the trace), and the buffer's memory is
// the packets in one window plus a chunk, not up to twice that plus the copies. The
// packets are kept compact (held), 48 bytes each.

const (
	chunkShift = 12 // 4096 packets (192 KiB) a chunk
	chunkLen   = 1 << chunkShift
	chunkMask  = chunkLen - 1
)

// held is a Packet as the reorder buffer keeps it: 48 bytes, the size of an IPv4
// Packet before IPv6 support. The buffer holds every packet of the last reorder
// window (about a million at 3.2 Tb/s: 48 MB), and a whole Packet (104 bytes, its two
// addresses 24 bytes each) would make it twice as heavy. An IPv4 packet's addresses
// fit inline; an IPv6 packet's addresses and header length go to the buffer's side
// table (sortBuf.v6) and addr holds its slot there. The file index is the source's:
// not kept.
type held struct {
	ts, index        int64
	capLen, totalLen uint32
	addr             uint64 // IPv4: src << 32 | dst (ipaddr.Addr.Uint32); IPv6: the side table slot
	hdr              uint16 // HeaderLen of an IPv4 packet (20..60)
	sport, dport     uint16
	fragOff          uint16
	proto, dscp, ecn uint8
	flags            uint8 // heldFragment | heldUDP0 | heldIPv6
	doff, tcpFlags   uint8
	udp0             uint8 // UDP: UDPPayload0; TCP: TCPMSS's low byte
	mssHi            uint8 // TCP: TCPMSS's high byte
}

const (
	heldFragment = 1 << iota // Packet.Fragment
	heldUDP0                 // Packet.HasUDPPayload0
	heldIPv6                 // addr is a slot of sortBuf.v6
)

// v6Held is the part of an IPv6 packet that held has no room for.
type v6Held struct {
	src, dst  ipaddr.Addr
	headerLen uint32
}

type chunk [chunkLen]held

// chunks recycles reorder-buffer chunks between files, readers and passes. A pool
// of many small objects (rather than one big ring) is shared by all Ps: a pass on
// another goroutine finds the chunks the previous pass returned, and the GC still
// frees them when no reader wants them.
var chunks sync.Pool // of *chunk

// sortBuf holds the packets of one file that wait for the reorder window, sorted by
// timestamp (ties keep file order), in a queue of chunks. Captures are nearly
// sorted, so a packet is usually written at the back (push); a late one is inserted
// by binary search, shifting the few packets after it.
type sortBuf struct {
	cs    []*chunk // cs[0] holds the front
	head  int      // index of the front in cs[0]
	n     int      // packets held
	spare []*chunk // emptied chunks, reused before the pool
	v6    []v6Held // IPv6 addresses of the packets held (and free slots)
	free  []uint32 // free slots of v6
}

func (b *sortBuf) len() int { return b.n }

func (b *sortBuf) at(i int) *held {
	j := b.head + i
	return &b.cs[j>>chunkShift][j&chunkMask]
}

// frontTS is the timestamp of the front packet.
func (b *sortBuf) frontTS() int64 { return b.cs[0][b.head].ts }

// popInto moves the front packet into *p (all but FileIndex, which the caller sets).
func (b *sortBuf) popInto(p *Packet) {
	h := &b.cs[0][b.head]
	p.Timestamp, p.Index, p.CapLen, p.TotalLen = h.ts, h.index, h.capLen, h.totalLen
	p.SrcPort, p.DstPort, p.FragOffset = h.sport, h.dport, h.fragOff
	p.Proto, p.DSCP, p.ECN = h.proto, h.dscp, h.ecn
	p.Fragment, p.HasUDPPayload0 = h.flags&heldFragment != 0, h.flags&heldUDP0 != 0
	p.TCPDataOffset, p.TCPFlags, p.UDPPayload0, p.TCPMSS = h.doff, h.tcpFlags, h.udp0, 0
	if h.proto == 6 {
		p.UDPPayload0, p.TCPMSS = 0, uint16(h.mssHi)<<8|uint16(h.udp0)
	}
	if h.flags&heldIPv6 == 0 {
		p.Src, p.Dst = ipaddr.FromUint32(uint32(h.addr>>32)), ipaddr.FromUint32(uint32(h.addr))
		p.HeaderLen = uint32(h.hdr)
	} else {
		v := &b.v6[h.addr]
		p.Src, p.Dst, p.HeaderLen = v.src, v.dst, v.headerLen
		b.free = append(b.free, uint32(h.addr))
	}
	b.n--
	b.head++
	if b.head == chunkLen {
		// The front chunk is empty: move it to the spares.
		b.spare = append(b.spare, b.cs[0])
		copy(b.cs, b.cs[1:])
		b.cs[len(b.cs)-1] = nil
		b.cs = b.cs[:len(b.cs)-1]
		b.head = 0
	} else if b.n == 0 {
		b.head = 0 // refill from the start of the front chunk
	}
}

// push adds p to the buffer, in order (after the packets with its timestamp).
func (b *sortBuf) push(p *Packet) {
	if b.head+b.n == len(b.cs)<<chunkShift {
		b.grow()
	}
	// Field by field, straight into the slot (a composite literal is built aside
	// and copied).
	h := b.at(b.n)
	h.ts, h.index, h.capLen, h.totalLen = p.Timestamp, p.Index, p.CapLen, p.TotalLen
	h.sport, h.dport, h.fragOff = p.SrcPort, p.DstPort, p.FragOffset
	h.proto, h.dscp, h.ecn = p.Proto, p.DSCP, p.ECN
	h.doff, h.tcpFlags, h.udp0, h.mssHi = p.TCPDataOffset, p.TCPFlags, p.UDPPayload0, 0
	if p.Proto == 6 {
		h.udp0, h.mssHi = uint8(p.TCPMSS), uint8(p.TCPMSS>>8)
	}
	h.flags, h.hdr = 0, 0
	if p.Fragment {
		h.flags |= heldFragment
	}
	if p.HasUDPPayload0 {
		h.flags |= heldUDP0
	}
	if p.Src.Is6() {
		var slot uint32
		if k := len(b.free); k > 0 {
			slot, b.free = b.free[k-1], b.free[:k-1]
		} else {
			slot = uint32(len(b.v6))
			b.v6 = append(b.v6, v6Held{})
		}
		b.v6[slot] = v6Held{src: p.Src, dst: p.Dst, headerLen: p.HeaderLen}
		h.addr, h.flags = uint64(slot), h.flags|heldIPv6
	} else {
		h.addr, h.hdr = uint64(p.Src.Uint32())<<32|uint64(p.Dst.Uint32()), uint16(p.HeaderLen)
	}
	if b.n == 0 || b.at(b.n-1).ts <= h.ts {
		b.n++
		return
	}
	x := *h
	// First packet strictly later than x: x goes after its equals.
	i := sort.Search(b.n, func(k int) bool { return b.at(k).ts > x.ts })
	for k := b.n; k > i; k-- {
		*b.at(k) = *b.at(k - 1)
	}
	*b.at(i) = x
	b.n++
}

// grow adds a chunk at the back: a spare, a pooled one or a new one.
func (b *sortBuf) grow() {
	var c *chunk
	if k := len(b.spare); k > 0 {
		c = b.spare[k-1]
		b.spare[k-1] = nil
		b.spare = b.spare[:k-1]
	} else if v, ok := chunks.Get().(*chunk); ok {
		c = v
	} else {
		c = new(chunk)
	}
	b.cs = append(b.cs, c)
}

// release returns the buffer's chunks to the pool; the packets it held are dropped.
func (b *sortBuf) release() {
	for _, c := range b.cs {
		chunks.Put(c)
	}
	for _, c := range b.spare {
		chunks.Put(c)
	}
	clear(b.cs)
	clear(b.spare)
	b.cs, b.spare, b.head, b.n = b.cs[:0], b.spare[:0], 0, 0
	b.v6, b.free = b.v6[:0], b.free[:0]
}
