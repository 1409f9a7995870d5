package replay

import (
	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

// flowTable maps 5-tuples to flow ids: open addressing with linear probing over
// slots that hold the packed tuple inline (one cache line visit per lookup), at most
// half full, plus a one-entry cache of the last flow (captures come in bursts).
type flowTable struct {
	slots []flowSlot
	n     int
	shift uint // 64 - log2(len(slots))
	last  flowSlot
}

// flowSlot holds a packed tuple and its flow id + 1 (0: empty).
type flowSlot struct {
	k   packed
	fid int32
}

// packed is a 5-tuple of either family in words: for IPv4 the two addresses in a,
// ports and protocol in b (c and d 0); for IPv6 the source in a and c, the
// destination in d and e, ports and protocol in b with bit 63 set.
type packed struct{ a, b, c, d, e uint64 }

// packTuple packs a packet's 5-tuple.
func packTuple(p *ingest.Packet) packed { return pack(p.Src, p.Dst, p.SrcPort, p.DstPort, p.Proto) }

// pack packs a 5-tuple given by its fields.
func pack(src, dst ipaddr.Addr, sport, dport uint16, proto uint8) packed {
	pp := uint64(sport)<<24 | uint64(dport)<<8 | uint64(proto)
	if src.Is6() {
		s0, s1 := src.Words()
		d0, d1 := dst.Words()
		return packed{a: s0, c: s1, d: d0, e: d1, b: 1<<63 | pp}
	}
	return packed{a: uint64(src.Uint32())<<32 | uint64(dst.Uint32()), b: pp}
}

func (t *flowTable) home(k packed) int {
	h := (k.a^k.d)*0x9E3779B97F4A7C15 ^ (k.b+0x632BE59BD9B4E019)*0xC2B2AE3D27D4EB4F ^ (k.c^k.e)*0x165667B19E3779F9
	return int((h ^ h>>31) >> t.shift)
}

// find returns the packet's flow id, or -1 and the empty slot where insert puts it.
func (t *flowTable) find(p *ingest.Packet) (fid int32, slot int) { return t.findKey(packTuple(p)) }

// findKey is find for a packed 5-tuple.
func (t *flowTable) findKey(k packed) (fid int32, slot int) {
	if t.last.fid != 0 && t.last.k == k {
		return t.last.fid - 1, -1
	}
	if t.slots == nil {
		t.slots = make([]flowSlot, 1024)
		t.shift = 64 - 10
	}
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.fid == 0 {
			return -1, i
		}
		if s.k == k {
			t.last = *s
			return s.fid - 1, i
		}
	}
}

// insert adds the packet's flow as fid at the slot find returned.
func (t *flowTable) insert(slot int, p *ingest.Packet, fid int32) {
	t.insertKey(slot, packTuple(p), fid)
}

// insertKey is insert for a packed 5-tuple.
func (t *flowTable) insertKey(slot int, k packed, fid int32) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]flowSlot, 2*len(old))
		t.shift--
		for _, s := range old {
			if s.fid != 0 {
				t.slots[t.free(s.k)] = s
			}
		}
		slot = t.free(k)
	}
	t.slots[slot] = flowSlot{k: k, fid: fid + 1}
	t.n++
	t.last = t.slots[slot]
}

// free returns the first empty slot of k's probe sequence.
func (t *flowTable) free(k packed) int {
	mask := len(t.slots) - 1
	i := t.home(k)
	for t.slots[i].fid != 0 {
		i = (i + 1) & mask
	}
	return i
}

// get returns k's flow id, or -1: find without the last-flow cache, reading the table
// only (safe while other goroutines call get too).
func (t *flowTable) get(k packed) int32 {
	if t.slots == nil {
		return -1
	}
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.fid == 0 {
			return -1
		}
		if s.k == k {
			return s.fid - 1
		}
	}
}
