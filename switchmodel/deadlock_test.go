package switchmodel

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// ring is five switches in a ring, one host each (hosts are nodes 0..4, switches
// 5..9); every switch routes the hosts one and two hops clockwise through its next
// switch and the others counter-clockwise, so the flows h_k -> h_(k+2) make a cyclic
// buffer dependency: the link s_k -> s_(k+1) carries h_k's flow and, in transit,
// h_(k-1)'s.
type ring struct {
	eng   *Engine
	net   *Network
	hosts []*Host
	sws   []*Switch
	next  []int // each switch's port towards the next one
	obs   *obs
}

func newRing(t *testing.T, cfg config.Switch) *ring {
	t.Helper()
	const n = 5
	o := &obs{}
	eng := NewEngine()
	net := NewNetwork(eng, Options{Seed: 1, Observers: o.observers(), FabricBDP: 100_000})
	r := &ring{eng: eng, net: net, obs: o, next: make([]int, n)}
	l := LinkSpec{Speed: auC, PropagationDelay: auProp}
	for k := range n {
		h, err := net.AddHost("h" + itoa(k))
		if err != nil {
			t.Fatal(err)
		}
		r.hosts = append(r.hosts, h)
	}
	for k := range n {
		s, err := net.AddSwitch("s"+itoa(k), config.TierNone, &cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.sws = append(r.sws, s)
	}
	hostPort := make([]int, n)
	prev := make([]int, n)
	for k := range n {
		_, p, err := net.Connect(r.hosts[k], r.sws[k], l)
		if err != nil {
			t.Fatal(err)
		}
		hostPort[k] = p
	}
	for k := range n {
		a, b, err := net.Connect(r.sws[k], r.sws[(k+1)%n], l)
		if err != nil {
			t.Fatal(err)
		}
		r.next[k], prev[(k+1)%n] = a, b
	}
	for k, s := range r.sws {
		for d := range n {
			port := hostPort[k]
			switch (d - k + n) % n {
			case 1, 2:
				port = r.next[k]
			case 3, 4:
				port = prev[k]
			}
			set, err := s.AddEqualCostSet([]int{port})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SetRoute(int32(d), set); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := net.Start(); err != nil {
		t.Fatal(err)
	}
	var specs []pktSpec
	for i := range 3000 {
		for k := range n {
			specs = append(specs, pktSpec{at: units.Time(i) * auSer1500, src: int32(k), dst: int32((k + 2) % n), length: 1500, dscp: 3 << 3, flow: int64(k)})
		}
	}
	newInjector(net, specs)
	return r
}

func ringSwitch() config.Switch {
	cfg := defaultSwitch()
	cfg.BufferSize = units.MiB
	return cfg
}

// TestDeadlockDetected: the ring's lossless flows fill every ring port's buffer; each
// switch pauses its previous one, whose egress holds the packets that came in through
// the pausing port: a cycle of the five clockwise ports, found and reported with its
// ports in order (from s0's), and never resolved: the packets it holds (at its ports
// and at the hosts its switches pause) are undrained, every one of them here.
func TestDeadlockDetected(t *testing.T) {
	r := newRing(t, ringSwitch())
	r.eng.RunUntil(20 * units.Millisecond)
	dl := r.net.Deadlocks()
	if len(dl) != 1 {
		t.Fatalf("%d deadlocks, want 1", len(dl))
	}
	d := dl[0]
	if len(d.Ports) != 5 || d.TC != 3 || d.Resolved != -1 {
		t.Fatalf("deadlock %+v, want 5 ports, TC 3, unresolved", d)
	}
	for k, h := range d.Ports {
		if h.Node != r.sws[k].ID() || h.Port != int32(r.next[k]) {
			t.Errorf("cycle port %d: %+v, want s%d's port %d towards s%d", k, h, k, r.next[k], (k+1)%5)
		}
	}
	var outstanding int64
	r.net.ForEachOutstanding(func(Node, *Packet) { outstanding++ })
	held := r.net.DeadlockUndrained(0)
	c := r.net.Counters()
	if held != outstanding || c.Outstanding() != outstanding {
		t.Errorf("deadlock holds %d packets of %d outstanding (counters: %d)", held, outstanding, c.Outstanding())
	}
	if len(r.obs.pfcOf(PFCDeadlock)) != 5 {
		t.Errorf("%d deadlock events, want one per port", len(r.obs.pfcOf(PFCDeadlock)))
	}
	t.Logf("deadlock at %d ps, %d packets held of %d outstanding", d.Detected, held, outstanding)
}

// TestDeadlockResolvedByWatchdog: with the PFC watchdog (drop, 2 ms), the ring's
// paused ports are storms: the watchdog drops their queues, which resolves the
// deadlock at the first storm, and the network drains with every packet delivered
// or dropped.
func TestDeadlockResolvedByWatchdog(t *testing.T) {
	cfg := ringSwitch()
	cfg.PfcWatchdog = config.PfcWatchdog{Enabled: true, DetectionTime: 2 * units.Millisecond, RestorationTime: 2 * units.Millisecond}
	r := newRing(t, cfg)
	r.eng.RunUntil(units.Second)
	dl := r.net.Deadlocks()
	if len(dl) == 0 {
		t.Fatal("no deadlock detected")
	}
	storms := r.obs.pfcOf(PFCStormDetected)
	if len(storms) == 0 {
		t.Fatal("no storm detected")
	}
	if d := dl[0]; d.Resolved != storms[0].Time || d.Resolved <= d.Detected {
		t.Errorf("deadlock detected %d resolved %d, want resolved at the first storm %d", d.Detected, d.Resolved, storms[0].Time)
	}
	for _, d := range r.obs.drops {
		if d.Reason != DropPFCWatchdog {
			t.Fatalf("drop %+v, want only pfc-watchdog drops", d)
		}
	}
	checkDrained(t, r.net)
	t.Logf("%d deadlocks, %d storms, %d watchdog drops", len(dl), len(storms), len(r.obs.drops))
}
