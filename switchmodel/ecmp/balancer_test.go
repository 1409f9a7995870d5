package ecmp

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// view is a MemberView over slices; calls counts the questions asked.
type view struct {
	occ    []int64
	paused []uint8 // bitmask of paused classes per member
	calls  int
}

func (v *view) EgressBytes(m int) int64 { v.calls++; return v.occ[m] }
func (v *view) Paused(m int, tc uint8) bool {
	v.calls++
	return v.paused[m]&(1<<tc) != 0
}

func newView(occ ...int64) *view { return &view{occ: occ, paused: make([]uint8, len(occ))} }

func mustBalancer(t testing.TB, cfg Config) *Balancer {
	t.Helper()
	b, err := NewBalancer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func flowletConfig() Config {
	c := DefaultConfig()
	c.LoadBalancing = Flowlet
	c.Salt = 0xC0FFEE
	return c
}

// keyWithBase returns the i-th key (TCP 10.0.0.1 -> 10.0.1.1, varying source port) whose
// hash mod n under b is base.
func keyWithBase(b *Balancer, n, base, i int) Key {
	for sp := 1; ; sp++ {
		k := MakeKey([4]byte{10, 0, 0, 1}, [4]byte{10, 0, 1, 1}, ProtoTCP, uint16(sp), 4791, false)
		if int(b.HashOf(&k)%uint32(n)) == base {
			if i == 0 {
				return k
			}
			i--
		}
	}
}

func rec(b *Balancer, set, member int) Record {
	for _, r := range b.Records() {
		if r.Set == set && r.Member == member {
			return r
		}
	}
	panic("no record")
}

func TestSelectNone(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Salt = DefaultSalt("rack-p0-r0", 1)
	b := mustBalancer(t, cfg)
	set := b.AddSet(4)
	keys := randomFlows(5, 1000)
	want := make([]Record, 4)
	for i := range keys {
		for p := range 3 { // three packets per flow, 100 bytes each
			m := b.Select(units.Time(i*10+p), set, &keys[i], 0, 100, nil)
			if w := Member(CRC32WithSalt, cfg.Salt, &keys[i], 4); m != w {
				t.Fatalf("flow %d: member %d, want hash mod 4 = %d", i, m, w)
			}
			if p == 0 {
				want[m].Flows++
			}
			want[m].Packets++
			want[m].Bytes += 100
		}
	}
	for m, r := range b.Records() {
		w := want[m]
		w.Set, w.Member = set, m
		if r != w {
			t.Errorf("member %d: record %+v, want %+v", m, r, w)
		}
	}
	// The view is never consulted under None.
	v := newView(0, 0, 0, 0)
	b.Select(0, set, &keys[0], 0, 1, v)
	if v.calls != 0 {
		t.Errorf("None consulted the view %d times", v.calls)
	}
}

func TestFlowletGapBoundary(t *testing.T) {
	for _, size := range []int{0, 64} { // exact and hashed tables
		t.Run(fmt.Sprintf("FlowTableSize=%d", size), func(t *testing.T) {
			cfg := flowletConfig()
			cfg.FlowTableSize = size
			b := mustBalancer(t, cfg)
			set := b.AddSet(4)
			k := keyWithBase(b, 4, 0, 0)
			v := newView(50, 10, 30, 40)
			gap := cfg.Gap
			steps := []struct {
				now  units.Time
				occ  []int64
				want int
			}{
				{0, []int64{50, 10, 30, 40}, 1},          // new flow: least occupancy
				{gap - 1, []int64{50, 40, 0, 40}, 1},     // idle Gap-1ps: same flowlet
				{2*gap - 2, []int64{50, 40, 0, 40}, 1},   // again Gap-1ps after the last packet
				{3*gap - 2, []int64{50, 40, 0, 40}, 2},   // idle exactly Gap: new flowlet, least member
				{3*gap - 1, []int64{0, 40, 40, 40}, 2},   // continues
				{10 * gap, []int64{0, 40, 40, 40}, 0},    // new flowlet
				{11*gap + 7, []int64{40, 40, 40, 40}, 0}, // new flowlet, all tied: keep current
			}
			for i, s := range steps {
				copy(v.occ, s.occ)
				if got := b.Select(s.now, set, &k, 0, 1000, v); got != s.want {
					t.Fatalf("step %d (t=%v): member %d, want %d", i, s.now, got, s.want)
				}
			}
			want := []Record{
				{Set: set, Member: 0, Flows: 1, Flowlets: 2, Packets: 2, Bytes: 2000, MovedIn: 1, MovedOut: 0},
				{Set: set, Member: 1, Flows: 1, Flowlets: 1, Packets: 3, Bytes: 3000, MovedIn: 0, MovedOut: 1},
				{Set: set, Member: 2, Flows: 1, Flowlets: 1, Packets: 2, Bytes: 2000, MovedIn: 1, MovedOut: 1},
				{Set: set, Member: 3},
			}
			if got := b.Records(); !reflect.DeepEqual(got, want) {
				t.Errorf("records\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestFlowletChoice pins the choice of a new flowlet: least occupancy, pause
// avoidance and the tie rule.
func TestFlowletChoice(t *testing.T) {
	const tc = 3
	P := uint8(1 << tc) // paused for the packet's class
	O := uint8(1 << 2)  // paused for another class only
	tests := []struct {
		name   string
		prefer bool
		base   int
		cur    int // member of the flow's previous flowlet, -1 for a new flow
		occ    []int64
		paused []uint8
		want   int
	}{
		{"least occupancy", true, 0, -1, []int64{30, 20, 10, 40}, nil, 2},
		{"least occupancy, current elsewhere", true, 0, 0, []int64{30, 20, 10, 40}, nil, 2},
		{"tie: first from hash mod n", true, 2, -1, []int64{5, 0, 5, 0}, nil, 3},
		{"tie: first from hash mod n (wraps)", true, 3, -1, []int64{0, 5, 0, 5}, nil, 0},
		{"tie: base itself", true, 1, -1, []int64{0, 0, 0, 0}, nil, 1},
		{"tie: keep current", true, 0, 3, []int64{5, 0, 5, 0}, nil, 3},
		{"tie: keep current, all equal", true, 1, 2, []int64{7, 7, 7, 7}, nil, 2},
		{"current not among the least", true, 0, 0, []int64{5, 0, 5, 0}, nil, 1},
		{"paused member avoided", true, 0, -1, []int64{0, 10, 20, 10}, []uint8{P, 0, 0, 0}, 1},
		{"paused current avoided on tie", true, 0, 1, []int64{10, 10, 10, 10}, []uint8{0, P, 0, 0}, 0},
		{"paused for another class ignored", true, 0, -1, []int64{0, 10, 20, 10}, []uint8{O, 0, 0, 0}, 0},
		{"only unpaused member chosen despite occupancy", true, 0, -1, []int64{0, 0, 0, 99}, []uint8{P, P, P, 0}, 3},
		{"all paused: least occupancy", true, 0, -1, []int64{9, 3, 5, 7}, []uint8{P, P, P, P}, 1},
		{"all paused: tie keeps current", true, 0, 2, []int64{3, 3, 3, 3}, []uint8{P, P, P, P}, 2},
		{"PreferUnpaused=false ignores pauses", false, 0, -1, []int64{0, 10, 20, 10}, []uint8{P, 0, 0, 0}, 0},
		{"PreferUnpaused=false tie keeps paused current", false, 0, 1, []int64{10, 10, 10, 10}, []uint8{0, P, 0, 0}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := flowletConfig()
			cfg.PreferUnpaused = tt.prefer
			b := mustBalancer(t, cfg)
			set := b.AddSet(4)
			k := keyWithBase(b, 4, tt.base, 0)
			now := units.Time(0)
			if tt.cur >= 0 { // place the flow on cur first
				occ := []int64{1, 1, 1, 1}
				occ[tt.cur] = 0
				if m := b.Select(now, set, &k, tc, 100, newView(occ...)); m != tt.cur {
					t.Fatalf("setup: placed on %d, want %d", m, tt.cur)
				}
				now += cfg.Gap
			}
			v := newView(tt.occ...)
			if tt.paused != nil {
				copy(v.paused, tt.paused)
			}
			if got := b.Select(now, set, &k, tc, 100, v); got != tt.want {
				t.Errorf("member %d, want %d", got, tt.want)
			}
			if !tt.prefer && v.calls != 4 {
				t.Errorf("PreferUnpaused=false: view asked %d times, want 4 (EgressBytes only)", v.calls)
			}
		})
	}
}

// TestFlowletSinglePausedMember: a set whose only member is paused still uses it.
func TestFlowletSinglePausedMember(t *testing.T) {
	b := mustBalancer(t, flowletConfig())
	set := b.AddSet(1)
	v := newView(1 << 20)
	v.paused[0] = 0xFF
	for i, now := range []units.Time{0, DefaultGap, 3 * DefaultGap} {
		if m := b.Select(now, set, &fixedKeys[0], 5, 100, v); m != 0 {
			t.Fatalf("packet %d: member %d, want 0", i, m)
		}
	}
	if r := rec(b, set, 0); r.Flowlets != 3 || r.Flows != 1 || r.Packets != 3 || r.MovedIn != 0 {
		t.Errorf("record %+v", r)
	}
}

func TestFlowletNilView(t *testing.T) {
	b := mustBalancer(t, flowletConfig())
	set := b.AddSet(5)
	k := keyWithBase(b, 5, 3, 0)
	if m := b.Select(0, set, &k, 0, 1, nil); m != 3 {
		t.Fatalf("new flow with nil view: member %d, want hash mod n = 3", m)
	}
	if m := b.Select(10*DefaultGap, set, &k, 0, 1, newView(0, 0, 9, 9, 9)); m != 0 {
		t.Fatalf("member %d, want 0", m)
	}
	if m := b.Select(20*DefaultGap, set, &k, 0, 1, nil); m != 0 {
		t.Fatalf("new flowlet with nil view: member %d, want current 0", m)
	}
}

// TestFlowletHashedTable: two flows whose hashes are equal mod FlowTableSize share one
// entry, as in hardware; with an exact table the same flows are independent.
func TestFlowletHashedTable(t *testing.T) {
	const size = 8
	cfg := flowletConfig()
	cfg.FlowTableSize = size
	b := mustBalancer(t, cfg)
	set := b.AddSet(4)
	a := keyWithBase(b, size, 5, 0)
	c := keyWithBase(b, size, 5, 1) // same entry as a
	d := keyWithBase(b, size, 6, 0) // another entry
	us := units.Microsecond
	v := newView(0, 0, 0, 0)
	steps := []struct {
		now  units.Time
		key  *Key
		occ  []int64
		want int
	}{
		{0, &a, []int64{10, 0, 10, 10}, 1},        // a starts a flowlet on 1
		{1 * us, &c, []int64{0, 10, 10, 10}, 1},   // c is new but its entry is active: follows 1
		{2 * us, &d, []int64{0, 10, 10, 10}, 0},   // d has its own entry: new flowlet on 0
		{200 * us, &c, []int64{10, 10, 0, 10}, 2}, // entry idle: c starts a flowlet on 2
		{201 * us, &a, []int64{10, 10, 10, 0}, 2}, // a follows the shared entry: moved 1 -> 2
		{202 * us, &d, []int64{10, 10, 10, 0}, 3}, // d idle 200us: new flowlet on 3
		{202*us + 1, &a, []int64{0, 0, 0, 0}, 2},  // active: stays
	}
	for i, s := range steps {
		copy(v.occ, s.occ)
		if got := b.Select(s.now, set, s.key, 0, 100, v); got != s.want {
			t.Fatalf("step %d: member %d, want %d", i, got, s.want)
		}
	}
	want := []Record{
		{Set: set, Member: 0, Flows: 1, Flowlets: 1, Packets: 1, Bytes: 100, MovedOut: 1},
		{Set: set, Member: 1, Flows: 2, Flowlets: 1, Packets: 2, Bytes: 200, MovedOut: 2},
		{Set: set, Member: 2, Flows: 2, Flowlets: 1, Packets: 3, Bytes: 300, MovedIn: 2},
		{Set: set, Member: 3, Flows: 1, Flowlets: 1, Packets: 1, Bytes: 100, MovedIn: 1},
	}
	if got := b.Records(); !reflect.DeepEqual(got, want) {
		t.Errorf("records\n got %+v\nwant %+v", got, want)
	}

	// Exact table: c is a new flow and starts its own flowlet at 1us.
	cfg.FlowTableSize = 0
	e := mustBalancer(t, cfg)
	es := e.AddSet(4)
	e.Select(0, es, &a, 0, 100, newView(10, 0, 10, 10))
	if m := e.Select(us, es, &c, 0, 100, newView(0, 10, 10, 10)); m != 0 {
		t.Errorf("exact table: new flow c on %d, want its own flowlet on 0", m)
	}
}

// refBalancer is an independent, map-based model of docs/model.md#load-balancing and of the record
// definitions in doc.go, written for clarity rather than speed.
type refBalancer struct {
	cfg     Config
	n       []int
	entries map[string]*refEntry
	prev    map[string]int
	seen    map[string]bool
	recs    map[[2]int]*Record
}

type refEntry struct {
	last   units.Time
	member int
}

func newRef(cfg Config, sizes []int) *refBalancer {
	r := &refBalancer{cfg: cfg, n: sizes, entries: map[string]*refEntry{}, prev: map[string]int{},
		seen: map[string]bool{}, recs: map[[2]int]*Record{}}
	for s, n := range sizes {
		for m := range n {
			r.recs[[2]int{s, m}] = &Record{Set: s, Member: m}
		}
	}
	return r
}

func (r *refBalancer) selectMember(now units.Time, set int, k Key, tc uint8, bytes int, v *view) int {
	n := r.n[set]
	h := r.cfg.Method.Hash(r.cfg.Salt, &k)
	base := int(h % uint32(n))
	flow := fmt.Sprintf("%d/%x", set, k.Bytes())
	member, started := base, false
	if r.cfg.LoadBalancing == Flowlet {
		ek := flow
		if r.cfg.FlowTableSize > 0 {
			ek = fmt.Sprintf("%d#%d", set, h%uint32(r.cfg.FlowTableSize))
		}
		e, ok := r.entries[ek]
		if !ok || now-e.last >= r.cfg.Gap {
			cur := -1
			if ok {
				cur = e.member
			}
			// Candidates: the unpaused members if PreferUnpaused and any exist.
			var cands []int
			for m := range n {
				if !r.cfg.PreferUnpaused || v.paused[m]&(1<<tc) == 0 {
					cands = append(cands, m)
				}
			}
			if len(cands) == 0 {
				for m := range n {
					cands = append(cands, m)
				}
			}
			least := v.occ[cands[0]]
			for _, m := range cands {
				least = min(least, v.occ[m])
			}
			tied := map[int]bool{}
			for _, m := range cands {
				if v.occ[m] == least {
					tied[m] = true
				}
			}
			if tied[cur] {
				member = cur
			} else {
				for j := range n {
					if m := (base + j) % n; tied[m] {
						member = m
						break
					}
				}
			}
			started = true
			e = &refEntry{member: member}
			r.entries[ek] = e
		} else {
			member = e.member
		}
		e.last = now
	}
	rc := r.recs[[2]int{set, member}]
	rc.Packets++
	rc.Bytes += int64(bytes)
	if started {
		rc.Flowlets++
	}
	if p, ok := r.prev[flow]; ok && p != member {
		r.recs[[2]int{set, p}].MovedOut++
		rc.MovedIn++
	}
	r.prev[flow] = member
	if fm := fmt.Sprintf("%s@%d", flow, member); !r.seen[fm] {
		r.seen[fm] = true
		rc.Flows++
	}
	return member
}

func (r *refBalancer) records() []Record {
	var out []Record
	for s, n := range r.n {
		for m := range n {
			out = append(out, *r.recs[[2]int{s, m}])
		}
	}
	return out
}

// workload drives b (and ref, if not nil) with a seeded random bursty workload over
// sets of several sizes and returns the sequence of choices.
func workload(t *testing.T, cfg Config, seed uint64, packets int, ref bool) ([]int, []Record) {
	sizes := []int{2, 4, 5, 3}
	b := mustBalancer(t, cfg)
	for _, n := range sizes {
		b.AddSet(n)
	}
	var rb *refBalancer
	if ref {
		rb = newRef(cfg, sizes)
	}
	r := rand.New(rand.NewPCG(seed, 77))
	flows := randomFlows(seed, 200)
	for i := range flows { // some non-TCP/UDP flows and some IPv6 flows too
		switch i % 10 {
		case 0:
			flows[i] = MakeKey(flows[i].Src().As4(), flows[i].Dst().As4(), 1, 0, 0, false)
		case 5, 7:
			src, dst := flows[i].Src().As4(), flows[i].Dst().As4()
			flows[i] = MakeKey6([16]byte{0xfd, 0, 0, byte(i), 12: src[0], 13: src[1], 14: src[2], 15: src[3]},
				[16]byte{0xfd, 0, 0, 1, 12: dst[0], 13: dst[1], 14: dst[2], 15: dst[3]}, flows[i].Proto(), flows[i].SrcPort(), flows[i].DstPort(), false)
		}
	}
	v := &view{occ: make([]int64, 5), paused: make([]uint8, 5)}
	var choices []int
	now := units.Time(0)
	recent := []int{0, 1, 2, 3, 4}
	for range packets {
		now += units.Time(r.IntN(int(30 * units.Microsecond)))
		fi := r.IntN(len(flows))
		if r.IntN(10) < 8 {
			fi = recent[r.IntN(len(recent))]
		} else {
			recent[r.IntN(len(recent))] = fi
		}
		set := fi % len(sizes)
		for m := range v.occ {
			v.occ[m] = int64(r.IntN(3)) * 1500
			v.paused[m] = 0
			if r.IntN(4) == 0 {
				v.paused[m] = 1 << uint(r.IntN(2))
			}
		}
		tc := uint8(r.IntN(2))
		bytes := 64 + r.IntN(1500)
		m := b.Select(now, set, &flows[fi], tc, bytes, v)
		if rb != nil {
			if w := rb.selectMember(now, set, flows[fi], tc, bytes, v); m != w {
				t.Fatalf("packet %d (flow %d, set %d, t=%v): member %d, reference %d", len(choices), fi, set, now, m, w)
			}
		}
		choices = append(choices, m)
	}
	recs := b.Records()
	if rb != nil {
		if want := rb.records(); !reflect.DeepEqual(recs, want) {
			t.Fatalf("records\n got %+v\nwant %+v", recs, want)
		}
	}
	return choices, recs
}

func allConfigs() map[string]Config {
	out := map[string]Config{}
	for _, m := range AllMethods {
		c := DefaultConfig()
		c.Method, c.Salt = m, DefaultSalt("fabric-p0-f2", 1)
		out["none/"+m.String()] = c
	}
	for _, size := range []int{0, 16} {
		for _, prefer := range []bool{true, false} {
			c := flowletConfig()
			c.FlowTableSize, c.PreferUnpaused = size, prefer
			out[fmt.Sprintf("flowlet/table=%d/prefer=%v", size, prefer)] = c
			c.Gap = 0
			out[fmt.Sprintf("flowlet/table=%d/prefer=%v/gap=0", size, prefer)] = c
		}
	}
	return out
}

// TestAgainstReference compares every choice and the final records with the
// reference model on a random bursty workload, and checks the record invariants.
func TestAgainstReference(t *testing.T) {
	for name, cfg := range allConfigs() {
		t.Run(name, func(t *testing.T) {
			const packets = 20000
			_, recs := workload(t, cfg, 11, packets, true)
			var pk int64
			moved := map[int][2]int64{}
			flowlets := int64(0)
			for _, r := range recs {
				pk += r.Packets
				mv := moved[r.Set]
				mv[0] += r.MovedIn
				mv[1] += r.MovedOut
				moved[r.Set] = mv
				flowlets += r.Flowlets
			}
			if pk != packets {
				t.Errorf("sum Packets = %d, want %d", pk, packets)
			}
			for s, mv := range moved {
				if mv[0] != mv[1] {
					t.Errorf("set %d: sum MovedIn %d != sum MovedOut %d", s, mv[0], mv[1])
				}
			}
			if cfg.LoadBalancing == None && flowlets != 0 {
				t.Errorf("None counted %d flowlets", flowlets)
			}
			if cfg.LoadBalancing == Flowlet && cfg.Gap > 0 && (flowlets == 0 || flowlets >= packets) {
				t.Errorf("flowlets = %d: workload does not exercise both new and continuing flowlets", flowlets)
			}
		})
	}
}

func TestDeterminism(t *testing.T) {
	for name, cfg := range allConfigs() {
		t.Run(name, func(t *testing.T) {
			c1, r1 := workload(t, cfg, 3, 5000, false)
			c2, r2 := workload(t, cfg, 3, 5000, false)
			if !reflect.DeepEqual(c1, c2) || !reflect.DeepEqual(r1, r2) {
				t.Fatal("two runs with the same seed differ")
			}
		})
	}
}

func TestSetsAreIndependent(t *testing.T) {
	b := mustBalancer(t, flowletConfig())
	s0, s1 := b.AddSet(3), b.AddSet(3)
	if s0 != 0 || s1 != 1 || b.Sets() != 2 || b.Members(1) != 3 {
		t.Fatalf("AddSet returned %d, %d; Sets %d", s0, s1, b.Sets())
	}
	k := fixedKeys[0]
	b.Select(0, s0, &k, 0, 10, newView(0, 5, 5))
	b.Select(1, s1, &k, 0, 10, newView(5, 5, 0)) // same key, other set: its own flow
	if r := rec(b, s0, 0); r.Flows != 1 || r.Flowlets != 1 {
		t.Errorf("set 0 member 0: %+v", r)
	}
	if r := rec(b, s1, 2); r.Flows != 1 || r.Flowlets != 1 {
		t.Errorf("set 1 member 2: %+v", r)
	}
	if b.Flows() != 2 {
		t.Errorf("Flows() = %d, want 2", b.Flows())
	}
}

func TestSelectDoesNotAllocate(t *testing.T) {
	for name, cfg := range allConfigs() {
		b := mustBalancer(t, cfg)
		set := b.AddSet(4)
		k := fixedKeys[0]
		v := newView(0, 1, 2, 3)
		now := units.Time(0)
		b.Select(now, set, &k, 0, 100, v) // the new flow may allocate
		a := testing.AllocsPerRun(1000, func() {
			now += 37 * units.Microsecond // alternate continuing and new flowlets
			var key Key = k               // a local key, as the switch would build it
			b.Select(now, set, &key, 0, 100, v)
		})
		if a != 0 {
			t.Errorf("%s: Select allocates %v times per packet", name, a)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Config)
		want  string
		isErr error
	}{
		{"method", func(c *Config) { c.Method = 6 }, "EcmpHashMethod", ErrUnknownMethod},
		{"lb", func(c *Config) { c.LoadBalancing = 2 }, "LoadBalancingMethod", ErrUnknownLoadBalancing},
		{"gap", func(c *Config) { c.Gap = -1 }, "Gap -1ps must not be negative", nil},
		{"table negative", func(c *Config) { c.FlowTableSize = -1 }, "FlowTableSize -1", nil},
		{"table too big", func(c *Config) { c.FlowTableSize = MaxFlowTableSize + 1 }, "FlowTableSize", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.edit(&c)
			_, err := NewBalancer(c)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			if tt.isErr != nil && !errors.Is(err, tt.isErr) {
				t.Fatalf("err = %v, want errors.Is %v", err, tt.isErr)
			}
		})
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	d := DefaultConfig()
	if d.Method != CRC32WithSalt || d.LoadBalancing != None || d.Gap != 100*units.Microsecond ||
		d.FlowTableSize != 0 || !d.PreferUnpaused {
		t.Fatalf("DefaultConfig = %+v", d)
	}
}

func TestAddSetPanicsOnEmptySet(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("AddSet(0) did not panic")
		}
	}()
	mustBalancer(t, DefaultConfig()).AddSet(0)
}

func TestHashOfAndPath(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Salt = 0xABCDEF01
	b := mustBalancer(t, cfg)
	k := fixedKeys[1]
	if b.HashOf(&k) != CRC32WithSalt.Hash(cfg.Salt, &k) {
		t.Fatal("HashOf disagrees with Method.Hash")
	}
	hops := []Hop{
		{CRC32WithSalt, DefaultSalt("rack-p0-r1", 1), 4},
		{CRC32WithSalt, DefaultSalt("fabric-p0-f2", 1), 4},
		{Toeplitz, 0, 3},
		{CRC16, 0, 0},
	}
	got := PathMembers(nil, &k, hops)
	want := []int{
		int(CRC32WithSalt.Hash(hops[0].Salt, &k) % 4),
		int(CRC32WithSalt.Hash(hops[1].Salt, &k) % 4),
		int(Toeplitz.Hash(0, &k) % 3),
		-1,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("PathMembers = %v, want %v", got, want)
	}
}

// TestFlowIndexGrowth: thousands of flows (the flow index grows several times) are all
// found again, for every method (32-bit hashes index directly, 16-bit ones via CRC-32).
func TestFlowIndexGrowth(t *testing.T) {
	keys := randomFlows(21, 5000)
	for _, m := range AllMethods {
		cfg := DefaultConfig()
		cfg.Method = m
		b := mustBalancer(t, cfg)
		s0, s1 := b.AddSet(7), b.AddSet(2)
		for pass := range 2 {
			for i := range keys {
				b.Select(units.Time(pass), s0, &keys[i], 0, 1, nil)
				b.Select(units.Time(pass), s1, &keys[i], 0, 1, nil)
			}
		}
		if b.Flows() != 2*len(keys) {
			t.Errorf("%v: %d flows, want %d", m, b.Flows(), 2*len(keys))
		}
		var flows, packets int64
		for _, r := range b.Records() {
			flows += r.Flows
			packets += r.Packets
		}
		if flows != int64(2*len(keys)) || packets != int64(4*len(keys)) {
			t.Errorf("%v: records count %d flows, %d packets", m, flows, packets)
		}
	}
}

func TestFastmod(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	ds := []uint32{1, 2, 3, 4, 5, 7, 16, 63, 64, 65, 1000, 4096, 65535, 65536, 1<<24 + 1, 1<<31 - 1, 1 << 31, 0xFFFFFFFF}
	as := []uint32{0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF}
	for range 200 {
		ds = append(ds, 1+r.Uint32N(0xFFFFFFFE))
		as = append(as, r.Uint32())
	}
	for _, d := range ds {
		m := fastmodM(d)
		for _, a := range as {
			if got := fastmod(a, m, d); got != a%d {
				t.Fatalf("fastmod(%d, %d) = %d, want %d", a, d, got, a%d)
			}
		}
	}
}

// TestBalancerKeysDifferBeyondSixteenBytes: the balancer keeps a flow's first 16 key
// bytes with its state and the rest apart; flows whose keys agree on those 16 bytes
// (an IPv4 key and an IPv6 key whose source address spells the IPv4 key's bytes, two
// IPv6 keys with one source and different destinations) are distinct flows, and a
// flow's key survives the table's growth and a set change's rehash.
func TestBalancerKeysDifferBeyondSixteenBytes(t *testing.T) {
	for _, table := range []HashTable{Modulo, Resilient} {
		b := mustBalancer(t, Config{Method: CRC32, Table: table, Buckets: 64})
		set := b.AddSet(1) // one member: every flow on member 0, counted once
		k4 := MakeKey([4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, ProtoTCP, 1000, 80, false)
		var src [16]byte
		copy(src[:], k4.b[:16])
		k6a := MakeKey6(src, [16]byte{0xfd, 15: 1}, ProtoTCP, 1000, 80, false)
		k6b := MakeKey6(src, [16]byte{0xfd, 15: 2}, ProtoTCP, 1000, 80, false)
		keys := []Key{k4, k6a, k6b}
		for i := range 3000 { // enough other flows to grow the table several times
			keys = append(keys, MakeKey([4]byte{10, 1, byte(i >> 8), byte(i)}, [4]byte{10, 2, 0, 1}, ProtoUDP, uint16(i), 4791, false))
		}
		for round := range 2 {
			for i := range keys {
				b.Select(units.Time(round), set, &keys[i], 0, 100, nil)
			}
		}
		r := b.Records()[0]
		if r.Flows != int64(len(keys)) || r.Packets != int64(2*len(keys)) {
			t.Fatalf("%v: member 0 counts %d flows and %d packets, want %d and %d", table, r.Flows, r.Packets, len(keys), 2*len(keys))
		}
		// The same index hash for all three (as a collision would give): the probe
		// must tell them apart by their keys alone.
		const hx = 0x12345678
		s4, s6a, s6b := b.lookup(hx, set, &k4, 1), b.lookup(hx, set, &k6a, 1), b.lookup(hx, set, &k6b, 1)
		if s4 == s6a || s4 == s6b || s6a == s6b {
			t.Fatalf("%v: keys equal in their first 16 bytes share a slot: %d %d %d", table, s4, s6a, s6b)
		}
		if again := b.lookup(hx, set, &k6b, 1); again != s6b {
			t.Fatalf("%v: the second lookup of a flow found slot %d, want %d", table, again, s6b)
		}
		for i, want := range []Key{k4, k6a, k6b} {
			slot := b.lookup(b.indexHash(b.cfg.Method.finalize(b.fn.hash(&keys[i])), set, &keys[i]), set, &keys[i], 1)
			if got := b.keyOf(slot); got != want {
				t.Fatalf("%v: flow %d's key in the table is %x, want %x", table, i, got.b, want.b)
			}
		}
	}
}
