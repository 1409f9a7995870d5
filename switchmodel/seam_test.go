package switchmodel

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// twoPath is host a - s1 = s2 - host b, with two parallel s1-s2 links forming an
// equal-cost set at s1 (a Rack-tier switch, so members are recorded).
type twoPath struct {
	eng    *Engine
	net    *Network
	s1, s2 *Switch
	a, b   *Host
	up     []int // s1's ports toward s2
	down   []int // s2's ports toward s1
	obs    *obs
}

func newTwoPath(t *testing.T, ec ecmp.Config) *twoPath {
	t.Helper()
	o := &obs{}
	eng := NewEngine()
	net := NewNetwork(eng, Options{Seed: 1, Observers: o.observers()})
	cfg := defaultSwitch()
	bal, err := ecmp.NewBalancer(ec)
	if err != nil {
		t.Fatal(err)
	}
	s1, _ := net.AddSwitch("s1", config.TierRack, &cfg, bal)
	s2, _ := net.AddSwitch("s2", config.TierNone, &cfg, nil)
	a, _ := net.AddHost("a")
	b, _ := net.AddHost("b")
	l := LinkSpec{Speed: 10 * units.Gbps, PropagationDelay: units.Microsecond}
	tp := &twoPath{eng: eng, net: net, s1: s1, s2: s2, a: a, b: b, obs: o}
	_, pa, _ := net.Connect(a, s1, l)
	for i := 0; i < 2; i++ {
		x, y, _ := net.Connect(s1, s2, l)
		tp.up, tp.down = append(tp.up, x), append(tp.down, y)
	}
	_, pb, _ := net.Connect(b, s2, l)
	up, err := s1.AddEqualCostSet(tp.up)
	if err != nil {
		t.Fatal(err)
	}
	toA, _ := s1.AddEqualCostSet([]int{pa})
	toB, _ := s2.AddEqualCostSet([]int{pb})
	back, _ := s2.AddEqualCostSet(tp.down[:1])
	s1.SetRoute(b.Index(), up)
	s1.SetRoute(a.Index(), toA)
	s2.SetRoute(b.Index(), toB)
	s2.SetRoute(a.Index(), back)
	if _, err := net.Start(); err != nil {
		t.Fatal(err)
	}
	return tp
}

// The seam: s1 asks its ecmp.Balancer for every packet of the two-port set; under
// none the member is hash mod 2 for all packets of a flow and is recorded in
// RackMember; the records add up.
func TestSeamHashMember(t *testing.T) {
	ec := ecmp.DefaultConfig()
	ec.Salt = ecmp.DefaultSalt("s1", 1)
	tp := newTwoPath(t, ec)
	var specs []pktSpec
	for f := 0; f < 40; f++ {
		key := ecmp.MakeKey([4]byte{10, 0, 0, 1}, [4]byte{10, 0, 1, 1}, 17, uint16(5000+f), 4791, false)
		for k := 0; k < 3; k++ {
			specs = append(specs, pktSpec{at: units.Time(f*3+k) * 2 * units.Microsecond, src: 0, dst: 1, length: 1000, flow: int64(f), key: key})
		}
	}
	newInjector(tp.net, specs)
	tp.eng.Run()
	bal := tp.s1.Selector().(*ecmp.Balancer)
	per := [2]int64{}
	for _, d := range tp.obs.deliveries {
		want := int16(ecmp.Member(ec.Method, ec.Salt, &specs[d.trace].key, 2))
		if d.rackM != want || d.fabricM != -1 {
			t.Fatalf("packet %d: member %d, want hash mod 2 = %d", d.trace, d.rackM, want)
		}
		if d.path[1].Port != int32(tp.up[want]) {
			t.Fatalf("packet %d left s1 by port %d, member %d is port %d", d.trace, d.path[1].Port, want, tp.up[want])
		}
		per[want]++
	}
	for _, r := range bal.Records() {
		if r.Packets != per[r.Member] {
			t.Fatalf("record %+v, delivered %d via member %d", r, per[r.Member], r.Member)
		}
		if ports := tp.s1.SelectorSetPorts(r.Set); len(ports) != 2 || ports[r.Member] != tp.up[r.Member] {
			t.Fatalf("SelectorSetPorts(%d) = %v", r.Set, ports)
		}
	}
	if per[0] == 0 || per[1] == 0 {
		t.Fatalf("40 flows all on one member: %v", per)
	}
	checkDrained(t, tp.net)
}

// Flowlet with PreferUnpaused: while s2 pauses member 0's link for TC3, new flowlets
// of TC3 take member 1; another class still sees both.
func TestSeamFlowletAvoidsPausedMember(t *testing.T) {
	ec := ecmp.DefaultConfig()
	ec.LoadBalancing = ecmp.Flowlet
	ec.Gap = 0 // every packet starts a flowlet
	tp := newTwoPath(t, ec)
	// s2 pauses TC3 on the link of member 0 (toward s1) for the whole test.
	at(tp.eng, 0, func(now units.Time) { tp.net.sendPFC(now, tp.s2.ports[tp.down[0]], 1<<3, PFCQuanta) })
	var specs []pktSpec
	for i := 0; i < 30; i++ {
		key := ecmp.MakeKey([4]byte{10, 0, 0, 1}, [4]byte{10, 0, 1, 1}, 6, uint16(i), 80, false)
		specs = append(specs, pktSpec{at: 10*units.Microsecond + units.Time(i)*5*units.Microsecond, src: 0, dst: 1, length: 1000, dscp: 3 << 3, key: key})
		// The control: TC0 packets of other new flows, not paused (a new flow on idle
		// members starts at hash mod n).
		key0 := ecmp.MakeKey([4]byte{10, 0, 0, 1}, [4]byte{10, 0, 1, 1}, 6, uint16(1000+i), 80, false)
		specs = append(specs, pktSpec{at: 12*units.Microsecond + units.Time(i)*5*units.Microsecond, src: 0, dst: 1, length: 1000, dscp: 0, key: key0})
	}
	newInjector(tp.net, specs)
	tp.eng.RunUntil(300 * units.Microsecond)
	if len(tp.obs.deliveries) != 60 {
		t.Fatalf("%d delivered: a TC3 packet waits on the paused member", len(tp.obs.deliveries))
	}
	tc0OnMember0 := 0
	for _, d := range tp.obs.deliveries {
		if d.tc == 3 && d.rackM != 1 {
			t.Fatalf("packet %d took the paused member %d", d.trace, d.rackM)
		}
		if d.tc == 0 && d.rackM == 0 {
			tc0OnMember0++
		}
	}
	if tc0OnMember0 == 0 {
		t.Fatal("control: unpaused TC0 never used member 0, the test cannot tell")
	}
}
