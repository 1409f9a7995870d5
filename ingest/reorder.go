package ingest

import (
	"sort"
	"sync"
)

// The reorder buffer must hold every packet of the last reorder window: a packet
// leaves only once a packet at least one window later has been read, since until
// then a late packet may still sort before it (and an in-order packet handed on
// early would turn such a packet from "put in place" into "out of order"). At
// 3.2 Tb/s a 10 ms window is about a million packets, so the buffer is a queue of
// fixed-size chunks rather than one ring that doubles: growing adds a chunk
// without copying, the chunks emptied at the front are reused at the back (no
// allocation in steady state, however long the trace), and the buffer's memory is
// the packets in one window plus a chunk, not up to twice that plus the copies.

const (
	chunkShift = 12 // 4096 packets (192 KiB) a chunk
	chunkLen   = 1 << chunkShift
	chunkMask  = chunkLen - 1
)

type chunk [chunkLen]Packet

// chunks recycles reorder-buffer chunks between files, readers and passes. A pool
// of many small objects (rather than one big ring) is shared by all Ps: a pass on
// another goroutine finds the chunks the previous pass returned, and the GC still
// frees them when no reader wants them.
var chunks sync.Pool // of *chunk

// sortBuf holds the packets of one file that wait for the reorder window, sorted by
// timestamp (ties keep file order), in a queue of chunks. Captures are nearly
// sorted, so a packet is usually written in place at the back (slot, commit) with
// no copy; a late one is inserted by binary search, shifting the few packets after
// it.
type sortBuf struct {
	cs    []*chunk // cs[0] holds the front
	head  int      // index of the front in cs[0]
	n     int      // packets held
	spare []*chunk // emptied chunks, reused before the pool
}

func (b *sortBuf) len() int { return b.n }

func (b *sortBuf) at(i int) *Packet {
	j := b.head + i
	return &b.cs[j>>chunkShift][j&chunkMask]
}

func (b *sortBuf) front() *Packet { return &b.cs[0][b.head] }

// popInto moves the front packet into *p.
func (b *sortBuf) popInto(p *Packet) {
	*p = b.cs[0][b.head]
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

// slot returns the free slot after the back; fill it and call commit.
func (b *sortBuf) slot() *Packet {
	if b.head+b.n == len(b.cs)<<chunkShift {
		b.grow()
	}
	return b.at(b.n)
}

// commit adds the packet written into slot() to the buffer, in order.
func (b *sortBuf) commit() {
	s := b.at(b.n)
	if b.n == 0 || b.at(b.n-1).Timestamp <= s.Timestamp {
		b.n++
		return
	}
	p := *s
	// First packet strictly later than p: p goes after its equals.
	i := sort.Search(b.n, func(k int) bool { return b.at(k).Timestamp > p.Timestamp })
	for k := b.n; k > i; k-- {
		*b.at(k) = *b.at(k - 1)
	}
	*b.at(i) = p
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
}
