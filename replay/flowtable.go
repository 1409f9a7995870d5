package replay

import "github.com/tracefabric/tracefabric/ingest"

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
	a, b uint64
	fid  int32
}

// packTuple packs a packet's 5-tuple into two words.
func packTuple(p *ingest.Packet) (a, b uint64) {
	a = uint64(p.Src[0])<<56 | uint64(p.Src[1])<<48 | uint64(p.Src[2])<<40 | uint64(p.Src[3])<<32 |
		uint64(p.Dst[0])<<24 | uint64(p.Dst[1])<<16 | uint64(p.Dst[2])<<8 | uint64(p.Dst[3])
	b = uint64(p.SrcPort)<<24 | uint64(p.DstPort)<<8 | uint64(p.Proto)
	return a, b
}

func (t *flowTable) home(a, b uint64) int {
	h := a*0x9E3779B97F4A7C15 ^ (b+0x632BE59BD9B4E019)*0xC2B2AE3D27D4EB4F
	return int((h ^ h>>31) >> t.shift)
}

// find returns the packet's flow id, or -1 and the empty slot where insert puts it.
func (t *flowTable) find(p *ingest.Packet) (fid int32, slot int) {
	a, b := packTuple(p)
	if t.last.fid != 0 && t.last.a == a && t.last.b == b {
		return t.last.fid - 1, -1
	}
	if t.slots == nil {
		t.slots = make([]flowSlot, 1024)
		t.shift = 64 - 10
	}
	mask := len(t.slots) - 1
	for i := t.home(a, b); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.fid == 0 {
			return -1, i
		}
		if s.a == a && s.b == b {
			t.last = *s
			return s.fid - 1, i
		}
	}
}

// insert adds the packet's flow as fid at the slot find returned.
func (t *flowTable) insert(slot int, p *ingest.Packet, fid int32) {
	a, b := packTuple(p)
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]flowSlot, 2*len(old))
		t.shift--
		for _, s := range old {
			if s.fid != 0 {
				t.slots[t.free(s.a, s.b)] = s
			}
		}
		slot = t.free(a, b)
	}
	t.slots[slot] = flowSlot{a: a, b: b, fid: fid + 1}
	t.n++
	t.last = t.slots[slot]
}

// free returns the first empty slot of a's and b's probe sequence.
func (t *flowTable) free(a, b uint64) int {
	mask := len(t.slots) - 1
	i := t.home(a, b)
	for t.slots[i].fid != 0 {
		i = (i + 1) & mask
	}
	return i
}
