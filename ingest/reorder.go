package ingest

import "sort"

// sortBuf holds the packets of one file that wait for the reorder window, sorted by
// timestamp (ties keep file order). Captures are nearly sorted, so a packet is
// usually appended at the back in O(1); a late one is inserted by binary search.
// The buffer is reused: no allocation in steady state.
type sortBuf struct {
	buf  []Packet
	head int
}

func (b *sortBuf) len() int { return len(b.buf) - b.head }

func (b *sortBuf) front() *Packet { return &b.buf[b.head] }

func (b *sortBuf) pop() Packet {
	p := b.buf[b.head]
	b.head++
	if b.head == len(b.buf) {
		b.buf, b.head = b.buf[:0], 0
	}
	return p
}

func (b *sortBuf) push(p Packet) {
	n := len(b.buf)
	if n == b.head || b.buf[n-1].Timestamp <= p.Timestamp {
		if n == cap(b.buf) && b.head > n/2 {
			// Reclaim the popped front before growing.
			m := copy(b.buf, b.buf[b.head:])
			b.buf, b.head = b.buf[:m], 0
		}
		b.buf = append(b.buf, p)
		return
	}
	live := b.buf[b.head:]
	// First element strictly later than p: p goes after its equals.
	i := b.head + sort.Search(len(live), func(i int) bool { return live[i].Timestamp > p.Timestamp })
	b.buf = append(b.buf, Packet{})
	copy(b.buf[i+1:], b.buf[i:n])
	b.buf[i] = p
}
