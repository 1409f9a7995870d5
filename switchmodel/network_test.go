package switchmodel

import (
	"encoding/binary"
	"flag"
	"fmt"
	"hash"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// clos is a small three-tier Clos built the way replay builds one (docs/model.md#clos-builder, docs/model.md#routing):
// pods x racks x hosts, fabric switches per pod, a spine plane per fabric index.
type clos struct {
	eng      *Engine
	net      *Network
	hosts    []*Host
	racks    []*Switch
	fabrics  []*Switch
	spines   []*Switch
	warnings []string
}

type closSpec struct {
	pods, racks, hostsPerRack, fabrics, spines int
	host, up, top                              LinkSpec
}

func buildClos(t testing.TB, sp closSpec, seed int64, o Observers) *clos {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	eng := NewEngine()
	net := NewNetwork(eng, Options{Seed: seed, Observers: o, FabricBDP: 100_000})
	cfg := defaultSwitch()
	cfg.BufferSize = 4 * units.MiB // small, so congestion shows
	cfg.EgressAlpha = 1
	cfg.BufferStatsReportInterval = 10 * units.Microsecond
	// ECN thresholds scaled to the small buffer, so marking shows too.
	cfg.EcnMinThreshold, cfg.EcnMaxThreshold = 20*units.KB, 200*units.KB
	c := &clos{eng: eng, net: net}
	newSwitch := func(name string, tier config.Tier) *Switch {
		ec := ecmp.DefaultConfig()
		ec.Salt = ecmp.DefaultSalt(name, seed)
		b, err := ecmp.NewBalancer(ec)
		must(err)
		s, err := net.AddSwitch(name, tier, &cfg, b)
		must(err)
		return s
	}
	hostRack := []int{}
	rackPod := []int{}
	for p := 0; p < sp.pods; p++ {
		for r := 0; r < sp.racks; r++ {
			rs := newSwitch("rack-p"+itoa(p)+"-r"+itoa(r), config.TierRack)
			c.racks = append(c.racks, rs)
			rackPod = append(rackPod, p)
			for h := 0; h < sp.hostsPerRack; h++ {
				hh, err := net.AddHost("host-p" + itoa(p) + "-r" + itoa(r) + "-h" + itoa(h))
				must(err)
				_, _, err = net.Connect(hh, rs, sp.host)
				must(err)
				c.hosts = append(c.hosts, hh)
				hostRack = append(hostRack, len(c.racks)-1)
			}
		}
		for f := 0; f < sp.fabrics; f++ {
			c.fabrics = append(c.fabrics, newSwitch("fabric-p"+itoa(p)+"-f"+itoa(f), config.TierFabric))
		}
	}
	if sp.pods > 1 {
		for pl := 0; pl < sp.fabrics; pl++ {
			for s := 0; s < sp.spines; s++ {
				c.spines = append(c.spines, newSwitch("spine-s"+itoa(pl)+"-"+itoa(s), config.TierSpine))
			}
		}
	}
	// rack <-> fabric of its pod; fabric i <-> spines of plane i.
	rackUp := make([][]int, len(c.racks))
	fabDown := make([]map[int]int, len(c.fabrics)) // rack -> port
	fabUp := make([][]int, len(c.fabrics))
	spineDown := make([]map[int]int, len(c.spines)) // pod -> port
	for i := range fabDown {
		fabDown[i] = map[int]int{}
	}
	for i := range spineDown {
		spineDown[i] = map[int]int{}
	}
	for ri, rs := range c.racks {
		p := rackPod[ri]
		for f := 0; f < sp.fabrics; f++ {
			fi := p*sp.fabrics + f
			a, b, err := net.Connect(rs, c.fabrics[fi], sp.up)
			must(err)
			rackUp[ri] = append(rackUp[ri], a)
			fabDown[fi][ri] = b
		}
	}
	for fi, fs := range c.fabrics {
		p, pl := fi/sp.fabrics, fi%sp.fabrics
		for s := 0; s < len(c.spines)/max(sp.fabrics, 1) && sp.pods > 1; s++ {
			si := pl*sp.spines + s
			a, b, err := net.Connect(fs, c.spines[si], sp.top)
			must(err)
			fabUp[fi] = append(fabUp[fi], a)
			spineDown[si][p] = b
		}
	}
	// Routes.
	for ri, rs := range c.racks {
		up, err := rs.AddEqualCostSet(rackUp[ri])
		must(err)
		local := 0
		for hi, hr := range hostRack {
			if hr == ri {
				set, err := rs.AddEqualCostSet([]int{local})
				must(err)
				must(rs.SetRoute(int32(hi), set))
				local++
			} else {
				must(rs.SetRoute(int32(hi), up))
			}
		}
	}
	for fi, fs := range c.fabrics {
		p := fi / sp.fabrics
		var up int
		if len(fabUp[fi]) > 0 {
			var err error
			up, err = fs.AddEqualCostSet(fabUp[fi])
			must(err)
		}
		down := map[int]int{}
		for ri, port := range fabDown[fi] {
			set, err := fs.AddEqualCostSet([]int{port})
			must(err)
			down[ri] = set
		}
		for hi, hr := range hostRack {
			if rackPod[hr] == p {
				must(fs.SetRoute(int32(hi), down[hr]))
			} else {
				must(fs.SetRoute(int32(hi), up))
			}
		}
	}
	for si, ss := range c.spines {
		down := map[int]int{}
		for p := 0; p < sp.pods; p++ {
			set, err := ss.AddEqualCostSet([]int{spineDown[si][p]})
			must(err)
			down[p] = set
		}
		for hi, hr := range hostRack {
			must(ss.SetRoute(int32(hi), down[rackPod[hr]]))
		}
	}
	w, err := net.Start()
	must(err)
	c.warnings = w
	return c
}

var smallClos = closSpec{pods: 2, racks: 2, hostsPerRack: 3, fabrics: 2, spines: 2,
	host: LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond},
	up:   LinkSpec{Speed: 40 * units.Gbps, PropagationDelay: 500 * units.Nanosecond},
	top:  LinkSpec{Speed: 25 * units.Gbps, PropagationDelay: 2 * units.Microsecond}}

// randomTraffic is seeded bursty traffic between random hosts: lossless (TC3, TC4) and
// lossy classes, random sizes 64 B..MTU, random ECN codepoints, many flows.
func randomTraffic(seed uint64, hosts, n int, span units.Time) []pktSpec {
	rng := rand.New(rand.NewPCG(seed, 99))
	dscps := []uint8{0, 1 << 3, 3 << 3, 4 << 3, 5 << 3, 7 << 3}
	sizes := []int32{46, 100, 576, 1500, 4000, 9000}
	out := make([]pktSpec, n)
	var tm units.Time
	for i := range out {
		if rng.IntN(50) == 0 {
			tm += units.Time(rng.Int64N(int64(span) / int64(n) * 50))
		}
		src := rng.IntN(hosts)
		dst := rng.IntN(hosts - 1)
		if dst >= src {
			dst++
		}
		sport := uint16(rng.IntN(8))
		key := ecmp.MakeKey([4]byte{10, 0, byte(src), 1}, [4]byte{10, 0, byte(dst), 1}, 6, 1000+sport, 80, false)
		out[i] = pktSpec{at: tm, src: int32(src), dst: int32(dst), length: sizes[rng.IntN(len(sizes))],
			dscp: dscps[rng.IntN(len(dscps))], ecn: uint8(rng.IntN(4)), flow: int64(src*1000 + dst*10 + int(sport)), key: key}
	}
	return out
}

// docs/model.md#invariants conservation: every injected packet is delivered, dropped with a reason, or
// still buffered / on a link; accounting consistent at every step and zero when
// drained; per-port statistics sum to the totals.
func TestConservationSmallClos(t *testing.T) {
	o := &obs{}
	c := buildClos(t, smallClos, 7, o.observers())
	specs := randomTraffic(7, len(c.hosts), 20000, units.Millisecond)
	newInjector(c.net, specs)
	nodes := c.net.Nodes()
	for step := units.Time(0); c.eng.RunUntil(step); step += 25 * units.Microsecond {
		if err := c.net.CheckAccounting(); err != nil {
			t.Fatalf("at %v: %v", step, err)
		}
		held := 0
		for _, nd := range nodes {
			held += nd.Buffered() + nd.InFlight()
		}
		walked := 0
		c.net.ForEachOutstanding(func(Node, *Packet) { walked++ })
		if cn := c.net.Counters(); cn.Outstanding() != int64(held) || walked != held {
			t.Fatalf("at %v: outstanding %d, nodes hold %d, walk finds %d", step, cn.Outstanding(), held, walked)
		}
	}
	cn := c.net.Counters()
	if cn.Injected != int64(len(specs)) {
		t.Fatalf("injected %d of %d", cn.Injected, len(specs))
	}
	checkDrained(t, c.net)
	t.Logf("injected %d delivered %d dropped %v hops %d pfc %d ce %d events %d",
		cn.Injected, cn.Delivered, cn.Dropped, cn.PacketHops, cn.PFCFrames, cn.CEMarked, cn.Events)
	if cn.PFCFrames == 0 || cn.DroppedTotal() == 0 || cn.CEMarked == 0 {
		t.Fatal("the traffic should exercise PFC, drops and ECN")
	}
	if cn.Dropped[DropHeadroom] != 0 || cn.Dropped[DropNoRoute] != 0 {
		t.Fatalf("lossless or no-route drops: %v", cn.Dropped)
	}
	if int64(len(o.deliveries)) != cn.Delivered || int64(len(o.drops)) != cn.DroppedTotal() || int64(len(o.nic)) != cn.Injected {
		t.Fatal("observer streams disagree with the counters")
	}

	// Statistics sums equal the totals.
	var tx, drops [NumDropReasons]int64
	var txAll, rxSw, txSw, dropSw, rxHost, pauseTx, pauseRx, resumeTx, resumeRx, ce int64
	for _, nd := range nodes {
		_, isSw := nd.(*Switch)
		for i := 0; i < nd.NumPorts(); i++ {
			for _, s := range nd.PortStats(i) {
				txAll += s.TxPackets
				for r := range s.Drops {
					drops[r] += s.Drops[r]
					if isSw {
						dropSw += s.Drops[r]
					}
				}
				if isSw {
					rxSw += s.RxPackets
					txSw += s.TxPackets
				} else {
					rxHost += s.RxPackets
				}
				pauseTx += s.PFCPauseTx
				pauseRx += s.PFCPauseRx
				resumeTx += s.PFCResumeTx
				resumeRx += s.PFCResumeRx
				ce += s.ECNMarked
			}
		}
	}
	_ = tx
	if txAll != cn.PacketHops || drops != cn.Dropped || rxHost != cn.Delivered || rxSw != txSw+dropSw || ce != cn.CEMarked {
		t.Fatalf("sums: tx %d hops %d; drops %v/%v; host rx %d delivered %d; switch rx %d tx+drop %d; ce %d/%d",
			txAll, cn.PacketHops, drops, cn.Dropped, rxHost, cn.Delivered, rxSw, txSw+dropSw, ce, cn.CEMarked)
	}
	if pauseTx != pauseRx || resumeTx != resumeRx {
		t.Fatalf("PFC tx/rx: pause %d/%d resume %d/%d", pauseTx, pauseRx, resumeTx, resumeRx)
	}

	// Paths: hops by distance, members recorded at the rack and fabric tiers.
	hostRack := func(h int32) int32 { return h / 3 }
	for _, d := range o.deliveries {
		want := uint8(6)
		switch {
		case hostRack(d.src) == hostRack(d.dst):
			want = 2
		case hostRack(d.src)/2 == hostRack(d.dst)/2:
			want = 4
		}
		if d.hops != want || len(d.path) != int(want) {
			t.Fatalf("packet %d %d->%d: %d hops, want %d", d.trace, d.src, d.dst, d.hops, want)
		}
		if (want >= 4) != (d.rackM >= 0) || (want == 6) != (d.fabricM >= 0) {
			t.Fatalf("packet %d: members rack %d fabric %d for %d hops", d.trace, d.rackM, d.fabricM, want)
		}
		if d.path[0].Node != c.hosts[d.src].ID() {
			t.Fatal("path does not start at the source host")
		}
	}
	// The balancers saw every inter-rack packet at its rack.
	var selected int64
	for _, r := range c.racks {
		for _, rec := range r.Selector().(*ecmp.Balancer).Records() {
			selected += rec.Packets
		}
	}
	if selected == 0 {
		t.Fatal("no load balancing records")
	}
	// Buffer samples: never over the pool, stop once drained.
	last := units.Time(0)
	for _, s := range o.samples {
		if s.Ingress != s.Shared+s.Headroom || s.Shared < 0 || s.Egress < 0 {
			t.Fatalf("bad sample %+v", s)
		}
		last = max(last, s.Time)
	}
	if len(o.samples) == 0 || last > c.eng.Now()+10*units.Microsecond {
		t.Fatalf("%d samples, last at %v, end %v", len(o.samples), last, c.eng.Now())
	}
}

// hashObs folds every observer event into one FNV-64 digest.
type hashObs struct {
	h    hash.Hash64
	buf  [64]byte
	n    int
	hops []Hop
}

func (o *hashObs) put(vs ...int64) {
	for _, v := range vs {
		binary.LittleEndian.PutUint64(o.buf[:], uint64(v))
		o.h.Write(o.buf[:8])
	}
	o.n++
}
func (o *hashObs) Delivered(now units.Time, p *Packet) {
	o.put(1, int64(now), p.TraceIndex, int64(p.ECN), int64(p.Hops), int64(p.RackMember), int64(p.FabricMember))
	for _, h := range p.AppendPath(o.hops[:0]) {
		o.put(int64(h.Node), int64(h.Port))
	}
}
func (o *hashObs) Drop(d DropEvent) {
	o.put(2, int64(d.Time), int64(d.Node), int64(d.Port), int64(d.TC), int64(d.Reason), d.Packet.TraceIndex)
}
func (o *hashObs) PFC(e PFCEvent) {
	o.put(3, int64(e.Time), int64(e.Node), int64(e.Port), int64(e.Peer), int64(e.TC), int64(e.Kind), int64(e.Quanta))
}
func (o *hashObs) BufferSample(b BufferSample) {
	o.put(4, int64(b.Time), int64(b.Switch), int64(b.Pool), b.Shared, b.Headroom, b.Egress)
}
func (o *hashObs) NICDequeue(e NICEvent) {
	o.put(5, int64(e.Time), int64(e.Host), int64(e.Delay), e.Backlog)
}

func runDigest(t *testing.T, seed int64) (uint64, int) {
	o := &hashObs{h: fnv.New64a()}
	c := buildClos(t, smallClos, seed, Observers{o, o, o, o, o, nil})
	newInjector(c.net, randomTraffic(11, len(c.hosts), 8000, units.Millisecond))
	c.eng.Run()
	checkDrained(t, c.net)
	return o.h.Sum64(), o.n
}

// docs/model.md#units-and-conventions, docs/model.md#invariants: the same inputs and seed give the identical event trace.
func TestDeterminism(t *testing.T) {
	a, na := runDigest(t, 3)
	b, nb := runDigest(t, 3)
	if a != b || na != nb {
		t.Fatalf("same seed, different traces: %x (%d events) vs %x (%d)", a, na, b, nb)
	}
	c, _ := runDigest(t, 4) // another seed: other salts and ECN draws
	if c == a {
		t.Fatal("a different seed gave the same trace: the seed is not used")
	}
}

var update = flag.Bool("update", false, "rewrite testdata golden files")

// The seeded run's event trace is pinned by a golden digest: the same on every machine
// (integer time, no fused floating point) and across versions unless the model
// deliberately changes (then: go test ./switchmodel -run Golden -update).
func TestGoldenTrace(t *testing.T) {
	d, n := runDigest(t, 3)
	got := fmt.Sprintf("%016x %d\n", d, n)
	path := filepath.Join("testdata", "trace.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if strings.TrimSpace(got) != strings.TrimSpace(string(want)) {
		t.Fatalf("trace digest %q, golden %q", strings.TrimSpace(got), strings.TrimSpace(string(want)))
	}
}

// A packet is two cache lines, and a hop touches only the first (see Packet).
func TestPacketLayout(t *testing.T) {
	var p Packet
	if sz := unsafe.Sizeof(p); sz != 128 {
		t.Fatalf("Packet is %d bytes, want 128", sz)
	}
	hot := map[string]uintptr{
		"at": unsafe.Offsetof(p.at), "next": unsafe.Offsetof(p.next), "Frame": unsafe.Offsetof(p.Frame),
		"Dst": unsafe.Offsetof(p.Dst), "inPort": unsafe.Offsetof(p.inPort), "charged": unsafe.Offsetof(p.charged),
		"Key": unsafe.Offsetof(p.Key) + unsafe.Sizeof(p.Key) - 1, "Class": unsafe.Offsetof(p.Class),
		"TC": unsafe.Offsetof(p.TC), "Hops": unsafe.Offsetof(p.Hops), "pool": unsafe.Offsetof(p.pool),
		"ECN": unsafe.Offsetof(p.ECN), "Marked": unsafe.Offsetof(p.Marked), "members": unsafe.Offsetof(p.FabricMember),
	}
	for name, off := range hot {
		if off >= 64 {
			t.Errorf("%s ends at byte %d, outside the first cache line", name, off)
		}
	}
	a := newArena()
	id, _ := a.alloc()
	if addr := uintptr(unsafe.Pointer(a.get(id))); addr%64 != 0 {
		t.Errorf("the arena's first packet is at %#x, not on a cache line", addr)
	}
}

// A node takes at most MaxPorts ports (the packed path's port field).
func TestConnectPortLimit(t *testing.T) {
	net := NewNetwork(NewEngine(), Options{Seed: 1})
	cfg := defaultSwitch()
	sw, err := net.AddSwitch("big", config.TierNone, &cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	link := LinkSpec{Speed: 100 * units.Gbps}
	for i := 0; i <= MaxPorts; i++ {
		h, err := net.AddHost(fmt.Sprintf("h%d", i))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = net.Connect(sw, h, link)
		switch {
		case i < MaxPorts && err != nil:
			t.Fatalf("port %d: %v", i, err)
		case i == MaxPorts && (err == nil || !strings.Contains(err.Error(), "node big already has MaxPorts (4096) ports")):
			t.Fatalf("port %d: err = %v", i, err)
		}
	}
}

// Every port starts on a cache line, so its per-class lines (tcQueue) are whole lines.
func TestPortAlignment(t *testing.T) {
	c := buildClos(t, smallClos, 3, Observers{})
	n := 0
	for _, nd := range c.net.nodes {
		for _, pt := range nd.core().ports {
			n++
			if a := uintptr(unsafe.Pointer(pt)); a%64 != 0 {
				t.Fatalf("port %d of %s at %#x: not on a cache line", pt.idx, nd.core().name, a)
			}
		}
	}
	if n <= portChunk {
		t.Fatalf("only %d ports: the test should cross a chunk", n)
	}
	if off := unsafe.Offsetof(port{}.tc); off%64 != 0 || unsafe.Sizeof(tcQueue{}) != 64 {
		t.Fatalf("tc at %d, %d bytes a class", off, unsafe.Sizeof(tcQueue{}))
	}
}
