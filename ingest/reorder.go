package ingest

import (
	"sort"
	"sync"
)

// rings recycles reorder buffers between files and readers: a window holds up to a
// few MB of packets, worth reusing when the same trace is read again.
var rings sync.Pool // of *[]Packet

// sortBuf holds the packets of one file that wait for the reorder window, sorted by
// timestamp (ties keep file order), in a ring whose capacity is a power of two.
// Captures are nearly sorted, so a packet is usually written in place at the back
// (slot, commit) with no copy; a late one is inserted by binary search, shifting
// the few packets after it. The ring only grows (to the number of packets in one
// window) and is reused: no allocation in steady state.
type sortBuf struct {
	buf  []Packet
	head int // index of the front
	n    int // packets held
}

func (b *sortBuf) len() int { return b.n }

func (b *sortBuf) at(i int) *Packet { return &b.buf[(b.head+i)&(len(b.buf)-1)] }

func (b *sortBuf) front() *Packet { return &b.buf[b.head] }

// popInto moves the front packet into *p.
func (b *sortBuf) popInto(p *Packet) {
	*p = b.buf[b.head]
	b.head = (b.head + 1) & (len(b.buf) - 1)
	b.n--
}

// slot returns the free slot after the back; fill it and call commit.
func (b *sortBuf) slot() *Packet {
	if b.n == len(b.buf) {
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

func (b *sortBuf) grow() {
	if len(b.buf) == 0 {
		if v, ok := rings.Get().(*[]Packet); ok {
			b.buf, b.head = *v, 0
			return
		}
	}
	size := 2 * len(b.buf)
	if size == 0 {
		size = 1024
	}
	nb := make([]Packet, size)
	for i := 0; i < b.n; i++ {
		nb[i] = *b.at(i)
	}
	b.buf, b.head = nb, 0
}

// release returns an empty buffer's ring to the pool.
func (b *sortBuf) release() {
	if b.n == 0 && len(b.buf) > 0 {
		buf := b.buf
		b.buf, b.head = nil, 0
		rings.Put(&buf)
	}
}
