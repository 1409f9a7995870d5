package switchmodel

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// docs/model.md#statistics: buffer samples per (switch, pool) every BufferStatsReportInterval; the
// sampler stops when the network is empty (so draining ends) and restarts with traffic.
func TestBufferSamplerStopsWhenIdle(t *testing.T) {
	cfg := defaultSwitch()
	cfg.BufferStatsReportInterval = 10 * units.Microsecond
	c := 10 * units.Gbps
	st := newStar(t, 3, cfg, LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
	// Two bursts 1 ms apart; each drains in well under 100 us.
	specs := incast([]int32{1, 2}, 0, 20, 1500, 0, 0, c)
	for _, s := range incast([]int32{1, 2}, 0, 20, 1500, 0, 0, c) {
		s.at += units.Millisecond
		specs = append(specs, s)
	}
	newInjector(st.net, specs)
	st.eng.Run()
	if len(st.obs.samples) == 0 {
		t.Fatal("no samples")
	}
	var sawData bool
	for i, s := range st.obs.samples {
		if s.Time%cfg.BufferStatsReportInterval != 0 {
			t.Fatalf("sample at %v, not a multiple of the interval", s.Time)
		}
		if s.Pool != i%2 || s.Switch != st.sw.ID() {
			t.Fatalf("sample %d is pool %d", i, s.Pool)
		}
		if s.Time > 200*units.Microsecond && s.Time < units.Millisecond {
			t.Fatalf("sampling while the network is empty (at %v)", s.Time)
		}
		if s.Pool == 0 && s.Egress > 0 {
			sawData = true
		}
	}
	if !sawData {
		t.Fatal("no sample saw the queue")
	}
	last := st.obs.samples[len(st.obs.samples)-1].Time
	if last < units.Millisecond || last > st.eng.Now()+cfg.BufferStatsReportInterval {
		t.Fatalf("last sample at %v, run ended %v", last, st.eng.Now())
	}
	checkDrained(t, st.net)
}

// docs/model.md#replay: the NIC queues without bound, strict priority, and records backlog and
// queueing delay.
func TestHostNICBacklogAndDelay(t *testing.T) {
	c := 10 * units.Gbps
	st := newStar(t, 2, defaultSwitch(), LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
	var specs []pktSpec
	for i := 0; i < 5; i++ {
		specs = append(specs, pktSpec{at: 0, src: 0, dst: 1, length: 982}) // 1000-byte frames
	}
	newInjector(st.net, specs)
	st.eng.Run()
	ser := units.SerializationTime(1020, c)
	if len(st.obs.nic) != 5 {
		t.Fatalf("%d NIC events", len(st.obs.nic))
	}
	for i, e := range st.obs.nic {
		// The first packet starts alone at t=0; the others queue behind it.
		backlog := int64(4-i) * 1000
		if i == 0 {
			backlog = 0
		}
		if e.Delay != units.Time(i)*ser || e.Backlog != backlog || e.Host != st.hosts[0].ID() {
			t.Fatalf("NIC event %d: %+v (want delay %d backlog %d)", i, e, units.Time(i)*ser, backlog)
		}
	}
	if n, b := st.hosts[0].Backlog(0); n != 0 || b != 0 {
		t.Fatal("backlog left")
	}
	if wm := st.hosts[0].PortStats(0)[0].WatermarkBytes; wm != 4000 {
		t.Fatalf("NIC watermark %d, want 4000 (four queued behind the first)", wm)
	}
	checkDrained(t, st.net)
}

// docs/model.md#switching-capacity: bandwidth is the sum of port speeds; SwitchingCapacity below it is reported
// as oversubscription, and never limits forwarding.
func TestOversubscriptionWarning(t *testing.T) {
	cfg := defaultSwitch()
	cfg.SwitchingCapacity = 150 * units.Gbps
	st := newStar(t, 2, cfg, LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond})
	if st.sw.Bandwidth() != 200*units.Gbps || !st.sw.Oversubscribed() {
		t.Fatalf("bandwidth %v oversubscribed %v", st.sw.Bandwidth(), st.sw.Oversubscribed())
	}
	found := false
	for _, w := range st.warns {
		if len(w) > 0 && contains(w, "oversubscribed") {
			found = true
		}
	}
	if !found {
		t.Fatalf("warnings %v", st.warns)
	}
	// Forwarding is not limited: two 100G flows cross at full rate.
	newInjector(st.net, append(incast([]int32{0}, 1, 100, 1500, 0, 0, 100*units.Gbps), incast([]int32{1}, 0, 100, 1500, 0, 0, 100*units.Gbps)...))
	st.eng.Run()
	ser := units.SerializationTime(1538, 100*units.Gbps)
	end := units.Time(0)
	for _, d := range st.obs.deliveries {
		end = max(end, d.at)
	}
	if end != 100*ser+ser+2*units.Microsecond {
		t.Fatalf("ended at %v, want line rate both ways (%v)", end, 101*ser+2*units.Microsecond)
	}
	cfg.SwitchingCapacity = 0
	st2 := newStar(t, 2, cfg, LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond})
	if st2.sw.Oversubscribed() || len(st2.warns) != 0 || st2.sw.SwitchingCapacity() != 200*units.Gbps {
		t.Fatal("default capacity is the sum of port speeds")
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// Drain stops when the last packet leaves, not at the last stale timer, and reports a
// network that cannot drain in time.
func TestDrain(t *testing.T) {
	c := 100 * units.Gbps
	cfg := defaultSwitch()
	cfg.Xoff = 20_000
	st := newStar(t, 3, cfg, LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
	newInjector(st.net, incast([]int32{1, 2}, 0, 200, 1500, 3<<3, 0, c))
	st.eng.RunUntil(10 * units.Microsecond) // injections are scheduled up front
	if st.net.Drain(20 * units.Microsecond) {
		t.Fatal("drained 400 packets in 20 us")
	}
	if !st.net.Drain(units.Second) {
		t.Fatal("did not drain")
	}
	last := units.Time(0)
	for _, d := range st.obs.deliveries {
		last = max(last, d.at)
	}
	if st.eng.Now() != last || st.eng.Pending() == 0 {
		t.Fatalf("Drain ended at %v, last delivery %v, %d events pending", st.eng.Now(), last, st.eng.Pending())
	}
	checkDrained(t, st.net)
}

// The Selector's view of a set: member i is the set's i-th port; EgressBytes is its
// queued bytes over all classes, Paused whether its peer paused the class.
func TestMemberView(t *testing.T) {
	st := newStar(t, 3, defaultSwitch(), LinkSpec{Speed: units.Gbps, PropagationDelay: units.Microsecond})
	s := st.sw
	set, err := s.AddEqualCostSet([]int{2, 0})
	if err == nil || set != 0 {
		// A multi-port set needs a Selector: newStar gave none.
		t.Fatalf("AddEqualCostSet without a Selector: set %d err %v", set, err)
	}
	v := &setView{s: s, set: []int32{2, 0}}
	s.ports[2].egressTotal, s.ports[0].egressTotal = 5120, 256
	s.ports[0].paused = 1 << 3
	if v.EgressBytes(0) != 5120 || v.EgressBytes(1) != 256 || v.Paused(0, 3) || !v.Paused(1, 3) || v.Paused(1, 4) {
		t.Fatal("view does not follow the set's port order")
	}
	s.ports[2].egressTotal, s.ports[0].egressTotal, s.ports[0].paused = 0, 0, 0
}

// Builder errors name what is wrong; nothing can be added after Start.
func TestBuilderErrors(t *testing.T) {
	cfg := defaultSwitch()
	net := NewNetwork(NewEngine(), Options{})
	sw, _ := net.AddSwitch("sw", config.TierRack, &cfg, nil)
	h, _ := net.AddHost("h")
	h2, _ := net.AddHost("h2")
	l := LinkSpec{Speed: 10 * units.Gbps, PropagationDelay: units.Microsecond}
	if _, _, err := net.Connect(h, sw, LinkSpec{Speed: 0}); err == nil || !contains(err.Error(), "Speed") {
		t.Fatalf("zero speed: %v", err)
	}
	if _, _, err := net.Connect(h, sw, LinkSpec{Speed: 1, PropagationDelay: -1}); err == nil || !contains(err.Error(), "PropagationDelay") {
		t.Fatalf("negative delay: %v", err)
	}
	if _, _, err := net.Connect(sw, sw, l); err == nil {
		t.Fatal("self link accepted")
	}
	if _, _, err := net.Connect(h, sw, l); err != nil {
		t.Fatal(err)
	}
	if _, _, err := net.Connect(h, h2, l); err == nil || !contains(err.Error(), "host h") {
		t.Fatalf("second link on a host: %v", err)
	}
	if _, err := sw.AddEqualCostSet([]int{3}); err == nil || !contains(err.Error(), "port 3") {
		t.Fatalf("bad port: %v", err)
	}
	if _, err := sw.AddEqualCostSet(nil); err == nil {
		t.Fatal("empty set accepted")
	}
	if err := sw.SetRoute(0, 5); err == nil {
		t.Fatal("route to a missing set accepted")
	}
	if _, err := net.Start(); err == nil || !contains(err.Error(), "h2") {
		t.Fatalf("host without a link: %v", err)
	}
	other := NewNetwork(NewEngine(), Options{})
	oh, _ := other.AddHost("x")
	if _, _, err := net.Connect(oh, sw, l); err == nil {
		t.Fatal("node of another network accepted")
	}
	net2 := NewNetwork(NewEngine(), Options{})
	s2, _ := net2.AddSwitch("s", config.TierNone, &cfg, nil)
	if _, err := net2.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := net2.AddHost("late"); err != ErrStarted {
		t.Fatalf("AddHost after Start: %v", err)
	}
	if _, err := net2.Start(); err != ErrStarted {
		t.Fatal("Start twice")
	}
	_ = s2
	// A BDP-based limit needs the BDP.
	cfg.EgressLimitMode = config.EgressFixed
	cfg.EgressQueueLimitBdp = 2
	net3 := NewNetwork(NewEngine(), Options{})
	net3.AddSwitch("s3", config.TierNone, &cfg, nil)
	if _, err := net3.Start(); err == nil || !contains(err.Error(), "EgressQueueLimitBdp") {
		t.Fatalf("BDP limit without BDP: %v", err)
	}
}
