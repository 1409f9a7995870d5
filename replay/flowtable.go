package replay

import (
	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

// flowTable maps 5-tuples to flow ids: two open-addressing tables with linear
// probing, one per address family, whose slots hold the packed tuple inline (one
// cache line visit per lookup), each at most half full, plus a one-entry cache of the
// last IPv4 flow (captures come in bursts). An IPv4 slot is 24 bytes (the tuple in two
// words and the id), an IPv6 slot 48: a trace of IPv4 flows reads half the memory it
// would with one slot size for both, and the keys compare word by word (the compiler
// compares a 40-byte struct with a call to runtime.memequal).
type flowTable struct {
	v4 table4
	v6 table6
}

// key4 is an IPv4 5-tuple: the two addresses in a, ports and protocol in b.
type key4 struct{ a, b uint64 }

// key6 is an IPv6 5-tuple: the source in s0 and s1, the destination in d0 and d1,
// ports and protocol in pp.
type key6 struct{ s0, s1, d0, d1, pp uint64 }

// portsProto packs the ports and the protocol of a tuple in one word.
func portsProto(sport, dport uint16, proto uint8) uint64 {
	return uint64(sport)<<24 | uint64(dport)<<8 | uint64(proto)
}

func makeKey4(src, dst ipaddr.Addr, sport, dport uint16, proto uint8) key4 {
	return key4{a: uint64(src.Uint32())<<32 | uint64(dst.Uint32()), b: portsProto(sport, dport, proto)}
}

func makeKey6(src, dst ipaddr.Addr, sport, dport uint16, proto uint8) key6 {
	s0, s1 := src.Words()
	d0, d1 := dst.Words()
	return key6{s0: s0, s1: s1, d0: d0, d1: d1, pp: portsProto(sport, dport, proto)}
}

// v6Slot marks a slot index of the IPv6 table in what find returns.
const v6Slot = 1 << 30

// find returns the packet's flow id, or -1 and the empty slot where insert puts it.
func (t *flowTable) find(p *ingest.Packet) (fid int32, slot int) {
	if p.Src.Is6() {
		fid, slot = t.v6.find(makeKey6(p.Src, p.Dst, p.SrcPort, p.DstPort, p.Proto))
		return fid, slot | v6Slot
	}
	return t.v4.find(makeKey4(p.Src, p.Dst, p.SrcPort, p.DstPort, p.Proto))
}

// insert adds the packet's flow as fid at the slot find returned.
func (t *flowTable) insert(slot int, p *ingest.Packet, fid int32) {
	if p.Src.Is6() {
		t.v6.insert(slot&^v6Slot, makeKey6(p.Src, p.Dst, p.SrcPort, p.DstPort, p.Proto), fid)
		return
	}
	t.v4.insert(slot, makeKey4(p.Src, p.Dst, p.SrcPort, p.DstPort, p.Proto), fid)
}

// get returns the flow id of a tuple given by its fields, or -1: find without the
// last-flow cache, reading the tables only (safe while other goroutines call get too).
func (t *flowTable) get(src, dst ipaddr.Addr, sport, dport uint16, proto uint8) int32 {
	if src.Is6() {
		return t.v6.get(makeKey6(src, dst, sport, dport, proto))
	}
	return t.v4.get(makeKey4(src, dst, sport, dport, proto))
}

// len is the number of tuples in the table.
func (t *flowTable) len() int { return t.v4.n + t.v6.n }

// slot4 holds an IPv4 tuple and its flow id + 1 (0: empty).
type slot4 struct {
	k   key4
	fid int32
}

type table4 struct {
	slots []slot4
	n     int
	shift uint // 64 - log2(len(slots))
	last  slot4
}

func (t *table4) home(k key4) int {
	h := k.a*0x9E3779B97F4A7C15 ^ (k.b+0x632BE59BD9B4E019)*0xC2B2AE3D27D4EB4F
	return int((h ^ h>>31) >> t.shift)
}

func (t *table4) find(k key4) (fid int32, slot int) {
	if t.last.fid != 0 && t.last.k == k {
		return t.last.fid - 1, -1
	}
	if t.slots == nil {
		t.slots = make([]slot4, 1024)
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

func (t *table4) insert(slot int, k key4, fid int32) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]slot4, 2*len(old))
		t.shift--
		for _, s := range old {
			if s.fid != 0 {
				t.slots[t.free(s.k)] = s
			}
		}
		slot = t.free(k)
	}
	t.slots[slot] = slot4{k: k, fid: fid + 1}
	t.n++
	t.last = t.slots[slot]
}

// free returns the first empty slot of k's probe sequence.
func (t *table4) free(k key4) int {
	mask := len(t.slots) - 1
	i := t.home(k)
	for t.slots[i].fid != 0 {
		i = (i + 1) & mask
	}
	return i
}

func (t *table4) get(k key4) int32 {
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

// slot6 holds an IPv6 tuple and its flow id + 1 (0: empty).
type slot6 struct {
	k   key6
	fid int32
}

type table6 struct {
	slots []slot6
	n     int
	shift uint // 64 - log2(len(slots))
}

func (t *table6) home(k *key6) int {
	h := (k.s0^k.d0)*0x9E3779B97F4A7C15 ^ (k.pp+0x632BE59BD9B4E019)*0xC2B2AE3D27D4EB4F ^ (k.s1^k.d1)*0x165667B19E3779F9
	return int((h ^ h>>31) >> t.shift)
}

// equal compares two IPv6 tuples word by word (== on the struct calls memequal).
func (k *key6) equal(o *key6) bool {
	return k.s1 == o.s1 && k.d1 == o.d1 && k.pp == o.pp && k.s0 == o.s0 && k.d0 == o.d0
}

func (t *table6) find(k key6) (fid int32, slot int) {
	if t.slots == nil {
		t.slots = make([]slot6, 64)
		t.shift = 64 - 6
	}
	return t.probe(&k)
}

// probe returns k's flow id and slot, or -1 and the empty slot where it goes.
func (t *table6) probe(k *key6) (fid int32, slot int) {
	mask := len(t.slots) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.fid == 0 {
			return -1, i
		}
		if s.k.equal(k) {
			return s.fid - 1, i
		}
	}
}

func (t *table6) insert(slot int, k key6, fid int32) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]slot6, 2*len(old))
		t.shift--
		for i := range old {
			if old[i].fid != 0 {
				_, j := t.probe(&old[i].k)
				t.slots[j] = old[i]
			}
		}
		_, slot = t.probe(&k)
	}
	t.slots[slot] = slot6{k: k, fid: fid + 1}
	t.n++
}

func (t *table6) get(k key6) int32 {
	if t.slots == nil {
		return -1
	}
	fid, _ := t.probe(&k)
	return fid
}
