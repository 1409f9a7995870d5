package switchmodel

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// record is everything the test observer saw.
type delivery struct {
	at       units.Time
	trace    int64
	flow     int64
	src, dst int32
	tc       uint8
	ecn      uint8
	hops     uint8
	inject   units.Time
	rackM    int16
	fabricM  int16
	path     []Hop
}

type obs struct {
	deliveries []delivery
	drops      []DropEvent
	dropTrace  []int64
	pfc        []PFCEvent
	samples    []BufferSample
	nic        []NICEvent
}

func (o *obs) Delivered(now units.Time, p *Packet) {
	o.deliveries = append(o.deliveries, delivery{at: now, trace: p.TraceIndex, flow: p.FlowID, src: p.Src, dst: p.Dst,
		tc: p.TC, ecn: p.ECN, hops: p.Hops, inject: p.Inject, rackM: p.RackMember, fabricM: p.FabricMember,
		path: p.AppendPath(nil)})
}
func (o *obs) Drop(d DropEvent) {
	o.dropTrace = append(o.dropTrace, d.Packet.TraceIndex)
	d.Packet = nil
	o.drops = append(o.drops, d)
}
func (o *obs) PFC(e PFCEvent)              { o.pfc = append(o.pfc, e) }
func (o *obs) BufferSample(b BufferSample) { o.samples = append(o.samples, b) }
func (o *obs) NICDequeue(e NICEvent)       { e.Packet = nil; o.nic = append(o.nic, e) }
func (o *obs) observers() Observers        { return Observers{o, o, o, o, o, nil} }
func (o *obs) pfcOf(kind PFCEventKind) []PFCEvent {
	var out []PFCEvent
	for _, e := range o.pfc {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// pktSpec is one packet an injector puts into the network.
type pktSpec struct {
	at       units.Time
	src, dst int32
	length   int32
	dscp     uint8
	ecn      uint8
	flow     int64
	key      FlowKey
}

// injector schedules one event per packet (tests only; replay has its own).
type injector struct {
	net   *Network
	h     HandlerID
	specs []pktSpec
	keys  map[FlowKey]KeyID // the keys added to the network's table
}

func newInjector(n *Network, specs []pktSpec) *injector {
	in := &injector{net: n, specs: specs, keys: map[FlowKey]KeyID{}}
	in.h = n.Engine().Register(in)
	for i, s := range specs {
		n.Engine().Schedule(s.at, in.h, 0, int64(i))
	}
	return in
}

func (in *injector) Handle(now units.Time, kind int32, arg int64) {
	s := in.specs[arg]
	id, p := in.net.NewPacket()
	p.TraceIndex = arg
	p.FlowID = s.flow
	p.Src, p.Dst = s.src, s.dst
	p.Length = s.length
	p.DSCP = s.dscp
	p.ECN = s.ecn
	p.Key = keyID(in.net, in.keys, s.key)
	in.net.Inject(in.net.Hosts()[s.src], id)
}

// star is n hosts on one switch, every link with the same spec.
type star struct {
	eng   *Engine
	net   *Network
	sw    *Switch
	hosts []*Host
	obs   *obs
	warns []string
}

func defaultSwitch() config.Switch { return config.Default().Switch }

func newStar(t testing.TB, n int, cfg config.Switch, l LinkSpec) *star {
	t.Helper()
	return newStarSpeeds(t, cfg, repeatLink(l, n))
}

func repeatLink(l LinkSpec, n int) []LinkSpec {
	out := make([]LinkSpec, n)
	for i := range out {
		out[i] = l
	}
	return out
}

func newStarSpeeds(t testing.TB, cfg config.Switch, links []LinkSpec) *star {
	t.Helper()
	return newStarOpts(t, cfg, links, Options{})
}

// newStarOpts is newStarSpeeds with the network's options (Seed, Observers and
// FabricBDP are the star's own).
func newStarOpts(t testing.TB, cfg config.Switch, links []LinkSpec, opts Options) *star {
	t.Helper()
	o := &obs{}
	eng := NewEngine()
	opts.Seed, opts.Observers, opts.FabricBDP = 1, o.observers(), 100_000
	net := NewNetwork(eng, opts)
	sw, err := net.AddSwitch("sw", config.TierNone, &cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := &star{eng: eng, net: net, sw: sw, obs: o}
	for i, l := range links {
		h, err := net.AddHost("h" + itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		_, sp, err := net.Connect(h, sw, l)
		if err != nil {
			t.Fatal(err)
		}
		set, err := sw.AddEqualCostSet([]int{sp})
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.SetRoute(h.Index(), set); err != nil {
			t.Fatal(err)
		}
		st.hosts = append(st.hosts, h)
	}
	w, err := net.Start()
	if err != nil {
		t.Fatal(err)
	}
	st.warns = w
	return st
}

// checkDrained asserts conservation and zero accounting after a run.
func checkDrained(t testing.TB, n *Network) {
	t.Helper()
	c := n.Counters()
	if c.Outstanding() != 0 {
		t.Fatalf("not drained: injected %d delivered %d dropped %d", c.Injected, c.Delivered, c.DroppedTotal())
	}
	if err := n.CheckAccounting(); err != nil {
		t.Fatal(err)
	}
	for _, s := range n.Switches() {
		for P := range s.pools {
			sh, hr, eg := s.BufferUsage(P)
			if sh != 0 || hr != 0 || eg != 0 {
				t.Fatalf("switch %s pool %d not zero: shared %d headroom %d egress %d", s.Name(), P, sh, hr, eg)
			}
		}
	}
	if n.arena.live != 0 {
		t.Fatalf("%d packets still live in the arena", n.arena.live)
	}
}

// keyID returns k's id in the network's key table, adding it once (ids remembered in
// ids).
func keyID(n *Network, ids map[FlowKey]KeyID, k FlowKey) KeyID {
	id, ok := ids[k]
	if !ok {
		id = n.AddKey(k)
		ids[k] = id
	}
	return id
}
