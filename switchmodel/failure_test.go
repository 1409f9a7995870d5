package switchmodel

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// diamond is host a - s1 - {s2, s3} - s4 - host b: s1 reaches b over a two-member
// set (member 0 through s2, member 1 through s3). Host links run at 400 Gb/s, the
// four switch links at 100 Gb/s, every link 1 us.
type diamond struct {
	eng            *Engine
	net            *Network
	a, b           *Host
	s1, s2, s3, s4 *Switch
	set            int // s1's set towards b
	obs            *obs
	key            FlowKey // a key of a -> b that s1 hashes to member 0
}

const (
	dmHost = 400 * units.Gbps
	dmSw   = 100 * units.Gbps
	// A 1500-byte packet: 1538 wire bytes, 30,760 ps at 400G, 123,040 ps at 100G.
	dmSer400 = units.Time(30_760)
	dmSer100 = units.Time(123_040)
)

func newDiamond(t *testing.T, cfg config.Switch) *diamond {
	t.Helper()
	o := &obs{}
	eng := NewEngine()
	net := NewNetwork(eng, Options{Seed: 1, Observers: o.observers(), FabricBDP: 100_000})
	d := &diamond{eng: eng, net: net, obs: o}
	var err error
	if d.a, err = net.AddHost("a"); err != nil {
		t.Fatal(err)
	}
	if d.b, err = net.AddHost("b"); err != nil {
		t.Fatal(err)
	}
	ec := ecmp.DefaultConfig()
	ec.Salt = 7
	bal, err := ecmp.NewBalancer(ec)
	if err != nil {
		t.Fatal(err)
	}
	sws := make([]*Switch, 4)
	for i := range sws {
		var sel Selector
		if i == 0 {
			sel = bal
		}
		if sws[i], err = net.AddSwitch("s"+itoa(i+1), config.TierNone, &cfg, sel); err != nil {
			t.Fatal(err)
		}
	}
	d.s1, d.s2, d.s3, d.s4 = sws[0], sws[1], sws[2], sws[3]
	host := LinkSpec{Speed: dmHost, PropagationDelay: units.Microsecond}
	sw := LinkSpec{Speed: dmSw, PropagationDelay: units.Microsecond}
	connect := func(x, y Node, l LinkSpec) (int, int) {
		px, py, err := net.Connect(x, y, l)
		if err != nil {
			t.Fatal(err)
		}
		return px, py
	}
	_, s1a := connect(d.a, d.s1, host)  // s1 port 0
	s12, s21 := connect(d.s1, d.s2, sw) // s1 port 1
	s13, s31 := connect(d.s1, d.s3, sw) // s1 port 2
	s24, s42 := connect(d.s2, d.s4, sw)
	s34, _ := connect(d.s3, d.s4, sw)
	s4b, _ := connect(d.s4, d.b, host)
	route := func(s *Switch, dst *Host, ports ...int) {
		set, err := s.AddEqualCostSet(ports)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetRoute(dst.Index(), set); err != nil {
			t.Fatal(err)
		}
	}
	d.set = 1
	route(d.s1, d.a, s1a)
	route(d.s1, d.b, s12, s13)
	route(d.s2, d.b, s24)
	route(d.s2, d.a, s21)
	route(d.s3, d.b, s34)
	route(d.s3, d.a, s31)
	route(d.s4, d.b, s4b)
	route(d.s4, d.a, s42)
	if _, err := net.Start(); err != nil {
		t.Fatal(err)
	}
	for sp := 1; ; sp++ {
		k := ecmp.MakeKey([4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, ecmp.ProtoUDP, uint16(sp), 4791, false)
		if bal.HashOf(&k)%2 == 0 {
			d.key = k
			break
		}
	}
	return d
}

// TestLinkDownLoneFlow: a lone flow of 30 back-to-back 1500-byte packets from a
// (400G) crosses s1 -> s2 (100G); the s1 - s2 link goes down at T = 1,338,000 ps.
//
// By hand: packet i reaches s1 at (i+1) x 30,760 + 1,000,000 ps and, since s1's
// 100G egress is slower, leaves s1 at 1,030,760 + i x 123,040. At T packets 0..9 have
// reached s1 (packet 9 at 1,307,600, packet 10 at 1,338,360): 0, 1 and 2 have started
// (packet 2 at 1,276,840, packet 3 would start at 1,399,880) and are on the wire, 1 us
// long; 3..9 are queued. All ten are dropped link-down at T at s1's port 1.
//
// LocalRepairDelay 0: s1 removes member 0 at T; packet 10 takes member 1 (s3) at
// 1,338,360 and is delivered after 2 x (123,040 + 1,000,000) + 30,760 + 1,000,000 =
// 3,276,840 ps, at 4,615,200. LocalRepairDelay 200 ns: packets reaching s1 in
// (T, 1,538,000] (10 to 16) are routed to the dead port and dropped link-down
// there; packet 17 (1,553,680) takes s3 and is delivered at 4,830,520.
func TestLinkDownLoneFlow(t *testing.T) {
	const T = units.Time(1_338_000)
	for _, tc := range []struct {
		name      string
		repair    units.Time
		drops     int
		first     int64
		firstTime units.Time
	}{
		{"repair-0", 0, 10, 10, 4_615_200},
		{"repair-200ns", 200_000, 17, 17, 4_830_520},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDiamond(t, defaultSwitch())
			var specs []pktSpec
			for range 30 {
				specs = append(specs, pktSpec{at: 0, src: 0, dst: 1, length: 1500, flow: 1, key: d.key})
			}
			newInjector(d.net, specs)
			at(d.eng, T, func(now units.Time) {
				if err := d.net.SetLinkDown(d.s1, 1, true); err != nil {
					t.Fatal(err)
				}
			})
			at(d.eng, T+tc.repair, func(now units.Time) {
				if _, err := d.s1.SetLive(d.set, []bool{false, true}, 0); err != nil {
					t.Fatal(err)
				}
			})
			d.eng.Run()
			if len(d.obs.drops) != tc.drops {
				t.Fatalf("%d drops, want %d", len(d.obs.drops), tc.drops)
			}
			for i, e := range d.obs.drops {
				want := T
				if i >= 10 {
					want = units.Time(i+1)*dmSer400 + units.Microsecond // dropped at admission
				}
				if e.Reason != DropLinkDown || e.Node != d.s1.ID() || e.Port != 1 || e.Time != want || d.obs.dropTrace[i] != int64(i) {
					t.Errorf("drop %d: %+v (trace %d), want link-down at s1 port 1 at %d", i, e, d.obs.dropTrace[i], want)
				}
			}
			if len(d.obs.deliveries) != 30-tc.drops {
				t.Fatalf("%d delivered, want %d", len(d.obs.deliveries), 30-tc.drops)
			}
			first := d.obs.deliveries[0]
			if first.trace != tc.first || first.at != tc.firstTime {
				t.Errorf("first delivery: packet %d at %d ps, want packet %d at %d", first.trace, first.at, tc.first, tc.firstTime)
			}
			if got := (units.Time(tc.first)+1)*dmSer400 + units.Microsecond + 2*(dmSer100+units.Microsecond) + dmSer400 + units.Microsecond; got != tc.firstTime {
				t.Fatalf("hand arithmetic %d != %d", got, tc.firstTime)
			}
			for _, dl := range d.obs.deliveries {
				if dl.path[1].Node != d.s1.ID() || dl.path[1].Port != 2 {
					t.Errorf("packet %d left s1 by %+v, want port 2 (s3)", dl.trace, dl.path[1])
				}
			}
			checkDrained(t, d.net)
		})
	}
}

// TestLinkDownResetsPFC: a pause from a peer whose link goes down expires at once
// (pfc.arrow expire at the link-down; the paused time stops there), a port that was
// pausing its upstream across the link stops without a resume, and after link-up the
// port sends again without a pause. Host 1 pauses the switch's egress to it at 0 (the
// pause reaches the switch at 1,006,720 ps); host 0 sends 4 lossless packets to host
// 1; the link goes down at 200 us (the pause would have lasted to 336,545,920 ps),
// dropping the 4 queued packets, and comes back at 250 us; host 0 sends one more at
// 300 us, delivered 2 x (123,040 + 1,000,000) later.
func TestLinkDownResetsPFC(t *testing.T) {
	st := auStar(t, 2, defaultSwitch())
	blockEgress(st, 1, 1<<3)
	specs := sendN(4, 0, 1, 3, 0)
	specs = append(specs, pktSpec{at: 300 * units.Microsecond, src: 0, dst: 1, length: 1500, dscp: 3 << 3, flow: 0})
	newInjector(st.net, specs)
	down, up, last := 200*units.Microsecond, 250*units.Microsecond, 300*units.Microsecond
	at(st.eng, down, func(units.Time) {
		if err := st.net.SetLinkDown(st.hosts[1], 0, true); err != nil {
			t.Fatal(err)
		}
	})
	at(st.eng, up, func(units.Time) {
		if err := st.net.SetLinkDown(st.sw, 1, false); err != nil {
			t.Fatal(err)
		}
	})
	st.eng.Run()
	exp := pfcAt(st.obs, PFCExpire, st.sw.ID(), 1)
	if len(exp) != 1 || exp[0] != down {
		t.Errorf("expire events at the switch's port 1: %v, want [%d]", exp, down)
	}
	if ps := st.sw.PortStats(1)[3].PausedPs; ps != down-(auSerPFC+auProp) {
		t.Errorf("paused %d ps, want %d (from the pause's arrival to the link-down)", ps, down-(auSerPFC+auProp))
	}
	if len(st.obs.drops) != 4 {
		t.Fatalf("%d drops, want the 4 queued packets", len(st.obs.drops))
	}
	for _, e := range st.obs.drops {
		if e.Reason != DropLinkDown || e.Time != down || e.Port != 1 {
			t.Errorf("drop %+v, want link-down at port 1 at %d", e, down)
		}
	}
	if len(st.obs.deliveries) != 1 || st.obs.deliveries[0].at != last+2*(auSer1500+auProp) {
		t.Errorf("deliveries %+v, want one at %d", st.obs.deliveries, last+2*(auSer1500+auProp))
	}
	checkDrained(t, st.net)
}

// TestLinkSpeedChange: a 100G link running at 50G from 1 ms serializes a 1500-byte
// packet in 246,080 ps instead of 123,040.
func TestLinkSpeedChange(t *testing.T) {
	st := auStar(t, 2, defaultSwitch())
	newInjector(st.net, []pktSpec{{at: 2 * units.Millisecond, src: 0, dst: 1, length: 1500, flow: 0}})
	at(st.eng, units.Millisecond, func(units.Time) {
		if err := st.net.SetLinkSpeed(st.sw, 1, 50*units.Gbps); err != nil {
			t.Fatal(err)
		}
	})
	st.eng.Run()
	want := 2*units.Millisecond + auSer1500 + auProp + 2*auSer1500 + auProp
	if len(st.obs.deliveries) != 1 || st.obs.deliveries[0].at != want {
		t.Fatalf("deliveries %+v, want one at %d", st.obs.deliveries, want)
	}
}
