package ecmp

import (
	"fmt"
	"math/bits"

	"github.com/tracefabric/tracefabric/internal/units"
)

// MemberView is the switch's view of an equal-cost set's members, indexed 0..n-1 in
// port order. Flowlet load balancing asks it when a flowlet starts.
type MemberView interface {
	// EgressBytes returns the bytes queued for transmission on the member's port,
	// all traffic classes.
	EgressBytes(member int) int64
	// Paused reports whether the member's port is PFC-paused by its peer for class tc.
	Paused(member int, tc uint8) bool
}

// Record is the load balancing record of one member of one equal-cost set.
type Record struct {
	Set, Member int // the set (as returned by AddSet) and the member index in port order
	// Flows counts distinct flows that sent at least one packet through this member.
	Flows int64
	// Flowlets counts flowlets started on this member (always 0 under None).
	Flowlets int64
	// Packets and Bytes count what Select assigned to this member (Bytes as passed).
	Packets, Bytes int64
	// MovedIn and MovedOut count member changes of a flow: when a packet of a flow is
	// sent to a different member than the flow's previous packet in this set, the
	// previous member counts MovedOut and the new one MovedIn.
	MovedIn, MovedOut int64
	// FlowsMovedIn and FlowsMovedOut count the flows that set changes (SetLive: a
	// member lost or back, docs/model.md#rehashing) moved onto and off this member:
	// at the change for the hash tables; a flowlet flow whose member was lost counts
	// FlowsMovedOut then and FlowsMovedIn on the member its next packet takes.
	FlowsMovedIn, FlowsMovedOut int64
}

// entry is a flow-table entry.
type entry struct {
	last   units.Time // time of the entry's last packet
	member int32      // member of the current flowlet
	valid  bool       // the entry has seen a packet
	used   bool       // (in Balancer.flows) the slot holds a flow
	v6     bool       // (in Balancer.flows) the flow's key is an IPv6 key
}

// flowState is the per-flow accounting state (and the flow-table entry of an exact
// table), with the first 16 bytes of the flow's key: all of an IPv4 key, so that a
// probe compares an IPv4 flow without a second memory access. 48 bytes.
type flowState struct {
	entry
	prev   int32  // member of the flow's previous packet, -1 before the first
	bits   int32  // offset of the flow's visited-member bitset in Balancer.bits
	set    int32  // the flow's set
	hx     uint32 // index hash (flowHash)
	k0, k1 uint64 // the key's bytes 0-7 and 8-15 (Key.word)
}

// keyTail is the rest of a key, bytes 16-39 (all zero for an IPv4 key).
type keyTail [3]uint64

type setInfo struct {
	m     uint64 // fastmod multiplier of n
	n     int    // members
	rec   int    // offset in Balancer.records
	table int    // offset in Balancer.table (hashed flow table)
	words int    // bitset words per flow
	// mapped: the member is not hash mod n (a member is dead, or the set has a
	// resilient table): baseOf and Balancer.ext[set] decide it.
	mapped bool
}

// setExt is what a set needs beyond hash mod n (docs/model.md#rehashing): the live
// members and, for a resilient table, its buckets.
type setExt struct {
	live    []bool  // by member
	alive   []int32 // the live members in order
	m       uint64  // fastmod multiplier of len(alive)
	buckets []int32 // resilient: the member of each bucket (-1: no live member)
	home    []int32 // resilient: each bucket's member in the full set (bucket i: i mod n)
	bm      uint64  // fastmod multiplier of len(buckets)
}

// flowExt is a flow's rerouting state (docs/model.md#rehashing), beside its
// flowState once a set has changed: the change that last moved it (-1 none) and
// whether its new member is still to be counted (flowlet).
type flowExt struct {
	moved   int32
	pending bool
}

// Balancer selects equal-cost members for one switch and keeps its load balancing
// records. It is not safe for concurrent use (one simulation event loop owns it).
type Balancer struct {
	cfg     Config
	fn      affine // the method's affine form with the switch's salt
	flowlet bool
	exact   bool
	// wideHash: the method's hash has 32 good bits and also indexes the flows.
	wideHash bool
	tableM   uint64 // fastmod multiplier of FlowTableSize
	sets     []setInfo
	records  []Record
	table    []entry // FlowTableSize entries per set when hashed
	bits     []uint64
	// flows is an open-addressing (linear probing) table of the flows' states, at
	// most half full; a flow's probe starts at slot(hx). One random access finds a
	// flow's state.
	flows []flowState
	// tails[i] is the rest of the key of the flow in flows[i] (beyond its first 16
	// bytes, which the flowState holds): read by a probe of an IPv6 key only, and to
	// rehash a flow when its set changes.
	tails  []keyTail
	nflows int
	shift  uint32 // 32 - log2(len(flows))

	ext []setExt // by set, for mapped sets (nil until one is)
	// fx[i] is flows[i]'s rerouting state, nil until the first SetLive;
	// rerouted[c] counts the bytes (as passed to Select) of the flows that change c
	// moved, through the set, until another change moves them.
	fx       []flowExt
	rerouted []int64
	movedBy  []int64 // flows each change moved, by change
}

const initialIndexBits = 8

// indexHash returns the flow index hash of a key whose configured hash is h: h itself
// for the 32-bit methods, else (16-bit methods would crowd the index) CRC-32 of the
// key; the set is mixed in.
func (b *Balancer) indexHash(h uint32, set int, key *Key) uint32 {
	if !b.wideHash {
		h = crcIndex.hash(key)
	}
	return h ^ uint32(set)*0x9E3779B1
}

// fastmodM returns the multiplier for fastmod by d: floor((2^64-1)/d) + 1 (0 for
// d <= 1, which makes fastmod return 0).
func fastmodM(d uint32) uint64 {
	if d <= 1 {
		return 0
	}
	return ^uint64(0)/uint64(d) + 1
}

// fastmod returns a mod d without a division (Lemire, Kaser, Kurz, "Faster
// remainder by direct computation", 2019; exact for all 32-bit a and d).
func fastmod(a uint32, m uint64, d uint32) uint32 {
	hi, _ := bits.Mul64(m*uint64(a), uint64(d))
	return uint32(hi)
}

// slot maps an index hash to a starting slot (Fibonacci hashing: the top bits of the
// product depend on every bit of hx).
func (b *Balancer) slot(hx uint32) int { return int((hx * 0x9E3779B1) >> b.shift) }

// lookup returns the flow's slot in b.flows, creating the flow when new.
func (b *Balancer) lookup(hx uint32, set int, key *Key, words int) int {
	mask := len(b.flows) - 1
	for i := b.slot(hx); ; i = (i + 1) & mask {
		f := &b.flows[i]
		if !f.used {
			return b.newFlow(i, hx, set, key, words)
		}
		if f.hx == hx && f.set == int32(set) && f.k0 == key.word(0) && f.k1 == key.word(1) && f.v6 == key.IPv6() &&
			(!f.v6 || b.tails[i] == key.tail()) {
			return i
		}
	}
}

// NewBalancer validates cfg and returns a Balancer with no sets.
func NewBalancer(cfg Config) (*Balancer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Balancer{
		cfg:      cfg,
		fn:       cfg.Method.hasher(cfg.Salt),
		flowlet:  cfg.LoadBalancing == Flowlet,
		exact:    cfg.FlowTableSize == 0,
		wideHash: cfg.Method == CRC32 || cfg.Method == CRC32WithSalt || cfg.Method == Toeplitz,
		tableM:   fastmodM(uint32(cfg.FlowTableSize)),
		flows:    make([]flowState, 1<<initialIndexBits),
		tails:    make([]keyTail, 1<<initialIndexBits),
		shift:    32 - initialIndexBits,
	}, nil
}

// Config returns the balancer's configuration.
func (b *Balancer) Config() Config { return b.cfg }

// AddSet registers an equal-cost set of members (members > 0, in port order) and
// returns its index, 0, 1, 2... in call order. A set with no members is a caller bug
// and panics.
func (b *Balancer) AddSet(members int) (set int) {
	if members < 1 {
		panic(fmt.Sprintf("ecmp: AddSet(%d): an equal-cost set needs at least one member", members))
	}
	set = len(b.sets)
	s := setInfo{m: fastmodM(uint32(members)), n: members, rec: len(b.records), table: len(b.table), words: (members + 63) / 64}
	for m := range members {
		b.records = append(b.records, Record{Set: set, Member: m})
	}
	if b.flowlet && !b.exact {
		b.table = append(b.table, make([]entry, b.cfg.FlowTableSize)...)
	}
	b.sets = append(b.sets, s)
	if b.cfg.Table == Resilient && members > 1 {
		x := b.extOf(set)
		nb := max(b.cfg.Buckets, members)
		x.buckets = make([]int32, nb)
		x.home = make([]int32, nb)
		for i := range x.buckets {
			x.buckets[i] = int32(i % members)
			x.home[i] = x.buckets[i]
		}
		x.bm = fastmodM(uint32(nb))
		b.sets[set].mapped = true
	}
	return set
}

// extOf returns set's setExt, making it with every member live.
func (b *Balancer) extOf(set int) *setExt {
	for len(b.ext) <= set {
		b.ext = append(b.ext, setExt{})
	}
	x := &b.ext[set]
	if x.live == nil {
		n := b.sets[set].n
		x.live = make([]bool, n)
		x.alive = make([]int32, n)
		for i := range n {
			x.live[i], x.alive[i] = true, int32(i)
		}
		x.m = fastmodM(uint32(n))
	}
	return x
}

// baseOf is the member of a mapped set that hash h picks: the bucket's member of a
// resilient table, else the (h mod live members)-th live member; -1 when none is
// live.
func (b *Balancer) baseOf(set int, h uint32) int {
	x := &b.ext[set]
	if x.buckets != nil {
		return int(x.buckets[fastmod(h, x.bm, uint32(len(x.buckets)))])
	}
	if len(x.alive) == 0 {
		return -1
	}
	return int(x.alive[fastmod(h, x.m, uint32(len(x.alive)))])
}

// Buckets returns the member of each bucket of a resilient set (-1: none live), nil
// for a modulo set.
func (b *Balancer) Buckets(set int) []int32 {
	if set >= len(b.ext) || b.ext[set].buckets == nil {
		return nil
	}
	return append([]int32(nil), b.ext[set].buckets...)
}

// TableSize is the modulus of set's first step: its bucket count when resilient,
// else its member count. A healthy set's member is (hash mod TableSize) mod members.
func (b *Balancer) TableSize(set int) int {
	if set < len(b.ext) && b.ext[set].buckets != nil {
		return len(b.ext[set].buckets)
	}
	return b.sets[set].n
}

// SetLive makes live the set's live members (len(live) = its members; docs/model.md#rehashing)
// as change number change (0, 1, ... in the order of the changes, across sets) and
// returns how many of the set's known flows it moves: under the hash tables every
// flow whose member changes (counted FlowsMovedOut on its old member and
// FlowsMovedIn on its new one); under flowlet balancing every flow whose current
// member is lost (its next packet starts a flowlet on a live member, counted
// FlowsMovedIn there). A resilient table reassigns only the lost members' buckets, and
// gives a returning member back its own. It costs O(buckets + the switch's flows).
func (b *Balancer) SetLive(set int, live []bool, change int) (moved int64) {
	s := &b.sets[set]
	if len(live) != s.n {
		panic(fmt.Sprintf("ecmp: SetLive(%d): %d members, set has %d", set, len(live), s.n))
	}
	// Each known flow's member before the change (its last packet's), to compare.
	x := b.extOf(set)
	copy(x.live, live)
	x.alive = x.alive[:0]
	for m, l := range live {
		if l {
			x.alive = append(x.alive, int32(m))
		}
	}
	x.m = fastmodM(uint32(len(x.alive)))
	if x.buckets != nil {
		b.reassign(x)
	}
	s.mapped = x.buckets != nil || len(x.alive) < s.n

	for len(b.rerouted) <= change {
		b.rerouted = append(b.rerouted, 0)
		b.movedBy = append(b.movedBy, 0)
	}
	if b.fx == nil {
		b.fx = make([]flowExt, len(b.flows))
		for i := range b.fx {
			b.fx[i].moved = -1
		}
	}
	recs := b.records[s.rec : s.rec+s.n]
	for i := range b.flows {
		f := &b.flows[i]
		if !f.used || f.set != int32(set) || f.prev < 0 {
			continue
		}
		var now int
		if b.flowlet {
			if x.live[f.prev] {
				continue
			}
			now = -1
		} else {
			k := b.keyOf(i)
			h := b.cfg.Method.finalize(b.fn.hash(&k))
			if now = b.memberOf(set, h); now == int(f.prev) {
				continue
			}
		}
		moved++
		recs[f.prev].FlowsMovedOut++
		if now >= 0 {
			recs[now].FlowsMovedIn++
		} else {
			b.fx[i].pending = true
		}
		b.fx[i].moved = int32(change)
	}
	b.movedBy[change] += moved
	return moved
}

// memberOf is the member hash h picks in set (under the hash tables), -1 for none.
func (b *Balancer) memberOf(set int, h uint32) int {
	s := &b.sets[set]
	if s.mapped {
		return b.baseOf(set, h)
	}
	return int(fastmod(h, s.m, uint32(s.n)))
}

// reassign refills a resilient table after a change of live members: a bucket whose
// home member (bucket i's is i mod n) is live goes back to it; a bucket whose member
// is still live keeps it; every other bucket, in bucket order, goes to the live
// member holding the fewest buckets so far (ties: the lowest member).
func (b *Balancer) reassign(x *setExt) {
	count := make([]int, len(x.live))
	for i, h := range x.home {
		switch {
		case x.live[h]:
			x.buckets[i] = h
		case x.buckets[i] >= 0 && x.live[x.buckets[i]]:
		default:
			x.buckets[i] = -1
			continue
		}
		count[x.buckets[i]]++
	}
	if len(x.alive) == 0 {
		return
	}
	for i := range x.buckets {
		if x.buckets[i] >= 0 {
			continue
		}
		best := x.alive[0]
		for _, m := range x.alive[1:] {
			if count[m] < count[best] {
				best = m
			}
		}
		x.buckets[i] = best
		count[best]++
	}
}

// Rerouted returns, per change (SetLive's change numbers), the flows it moved and
// the bytes (as passed to Select) that moved flows then sent through their set,
// until another change moved them.
func (b *Balancer) Rerouted() (flows, bytes []int64) {
	return append([]int64(nil), b.movedBy...), append([]int64(nil), b.rerouted...)
}

// Live returns the live members of set (nil: all).
func (b *Balancer) Live(set int) []bool {
	if set >= len(b.ext) || b.ext[set].live == nil {
		return nil
	}
	return append([]bool(nil), b.ext[set].live...)
}

// Sets returns the number of sets added.
func (b *Balancer) Sets() int { return len(b.sets) }

// Members returns the size of a set.
func (b *Balancer) Members(set int) int { return b.sets[set].n }

// HashOf returns the configured method's hash of key with the switch's salt.
func (b *Balancer) HashOf(key *Key) uint32 { return b.cfg.Method.finalize(b.fn.hash(key)) }

// Select returns the member (0..n-1) of the set that a packet of key takes and
// accounts it in the records. now is the packet's time at this switch (non-decreasing
// across calls), tc its traffic class, bytes its size for the Bytes counter. view
// reports occupancy and pauses; it is consulted only under Flowlet when a flowlet
// starts, and nil means all members empty and unpaused. set must come from AddSet.
//
// None: member = hash mod n. Flowlet: see the package documentation. For a flow
// already seen, Select does not allocate.
func (b *Balancer) Select(now units.Time, set int, key *Key, tc uint8, bytes int, view MemberView) (member int) {
	s := &b.sets[set]
	h := b.cfg.Method.finalize(b.fn.hash(key))
	var base int
	if !s.mapped {
		base = int(fastmod(h, s.m, uint32(s.n)))
	} else if base = b.baseOf(set, h); base < 0 {
		return -1
	}

	fi := b.lookup(b.indexHash(h, set, key), set, key, s.words)
	f := &b.flows[fi]

	member = base
	started := false
	if b.flowlet {
		e := &f.entry
		if !b.exact {
			e = &b.table[s.table+int(fastmod(h, b.tableM, uint32(b.cfg.FlowTableSize)))]
		}
		if !e.valid || now-e.last >= b.cfg.Gap || (s.mapped && !b.ext[set].live[e.member]) {
			cur := -1
			if e.valid {
				cur = int(e.member)
			}
			var live []bool
			if s.mapped {
				live = b.ext[set].live
			}
			member = b.choose(s.n, base, cur, tc, view, live)
			e.member, e.valid = int32(member), true
			started = true
		} else {
			member = int(e.member)
		}
		e.last = now
	}

	recs := b.records[s.rec : s.rec+s.n]
	r := &recs[member]
	r.Packets++
	r.Bytes += int64(bytes)
	if started {
		r.Flowlets++
	}
	if b.fx != nil {
		if x := &b.fx[fi]; x.moved >= 0 {
			b.rerouted[x.moved] += int64(bytes)
			if x.pending {
				x.pending = false
				r.FlowsMovedIn++
			}
		}
	}
	if f.prev != int32(member) {
		if f.prev >= 0 {
			recs[f.prev].MovedOut++
			r.MovedIn++
		}
		f.prev = int32(member)
		w := &b.bits[int(f.bits)+member/64]
		if bit := uint64(1) << (member % 64); *w&bit == 0 {
			*w |= bit
			r.Flows++
		}
	}
	return member
}

// newFlow creates the state of a flow seen for the first time in the free slot i and
// returns its slot (this allocates as the tables grow).
func (b *Balancer) newFlow(i int, hx uint32, set int, key *Key, words int) int {
	b.flows[i] = flowState{entry: entry{used: true, v6: key.IPv6()}, prev: -1, bits: int32(len(b.bits)), set: int32(set), hx: hx,
		k0: key.word(0), k1: key.word(1)}
	b.tails[i] = key.tail()
	for range words {
		b.bits = append(b.bits, 0)
	}
	if b.nflows++; 2*b.nflows > len(b.flows) {
		return b.grow(i)
	}
	return i
}

// keyOf returns the key of the flow in slot i.
func (b *Balancer) keyOf(i int) Key {
	f := &b.flows[i]
	return keyOfWords(f.k0, f.k1, b.tails[i])
}

// grow doubles the flow table, moves every flow and returns the new slot of the flow
// in slot i.
func (b *Balancer) grow(i int) int {
	old, oldTails, oldFx := b.flows, b.tails, b.fx
	b.flows = make([]flowState, 2*len(old))
	b.tails = make([]keyTail, 2*len(old))
	if oldFx != nil {
		b.fx = make([]flowExt, 2*len(old))
		for k := range b.fx {
			b.fx[k].moved = -1
		}
	}
	b.shift--
	mask := len(b.flows) - 1
	at := -1
	for k := range old {
		if !old[k].used {
			continue
		}
		j := b.slot(old[k].hx)
		for b.flows[j].used {
			j = (j + 1) & mask
		}
		b.flows[j], b.tails[j] = old[k], oldTails[k]
		if oldFx != nil {
			b.fx[j] = oldFx[k]
		}
		if k == i {
			at = j
		}
	}
	return at
}

// choose picks the member for a new flowlet: the least (paused, occupancy) in
// lexicographic order when PreferUnpaused (least occupancy otherwise); among equals
// the current member cur if it is one of them, else the first from base onward.
func (b *Balancer) choose(n, base, cur int, tc uint8, view MemberView, live []bool) int {
	if live != nil && cur >= 0 && !live[cur] {
		cur = -1
	}
	if view == nil {
		if cur >= 0 {
			return cur
		}
		return base
	}
	best, bestPaused, bestOcc := -1, false, int64(0)
	m := base
	for range n {
		if live != nil && !live[m] {
			if m++; m == n {
				m = 0
			}
			continue
		}
		occ := view.EgressBytes(m)
		paused := b.cfg.PreferUnpaused && view.Paused(m, tc)
		switch {
		case best < 0 || (!paused && bestPaused) || (paused == bestPaused && occ < bestOcc):
			best, bestPaused, bestOcc = m, paused, occ
		case m == cur && paused == bestPaused && occ == bestOcc:
			best = m
		}
		if m++; m == n {
			m = 0
		}
	}
	return best
}

// Records returns a copy of the load balancing records in (set, member) order.
func (b *Balancer) Records() []Record {
	return append([]Record(nil), b.records...)
}

// Flows returns the number of distinct (set, flow) pairs seen.
func (b *Balancer) Flows() int { return b.nflows }
