package switchmodel

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

var speeds = []units.BitRate{10 * units.Gbps, 25 * units.Gbps, 100 * units.Gbps, 400 * units.Gbps}

// docs/model.md#ports-links-and-scheduling: store and forward, a frame is handed over when its last bit arrives
// (transmit start + serialization + propagation); docs/model.md#units-and-conventions: serialization of F+20 wire
// bytes rounded up to the picosecond.
func TestTimingLoneFrame(t *testing.T) {
	for _, c := range speeds {
		for _, l := range []int32{46, 1500, 9000} { // 46 -> 64-byte frame
			t.Run(c.String()+"/L"+itoa(int(l)), func(t *testing.T) {
				prop := 1 * units.Microsecond
				st := newStar(t, 2, defaultSwitch(), LinkSpec{Speed: c, PropagationDelay: prop})
				newInjector(st.net, []pktSpec{{at: 7, src: 0, dst: 1, length: l}})
				st.eng.Run()
				if len(st.obs.deliveries) != 1 {
					t.Fatalf("%d deliveries", len(st.obs.deliveries))
				}
				wire := int64(FrameSize(l)) + 20
				// Hand-computed serialization: ceil(wire*8e12/C).
				ser := units.Time((wire*8*1_000_000_000_000 + int64(c) - 1) / int64(c))
				want := 7 + 2*(ser+prop) // host->switch, switch->host
				if got := st.obs.deliveries[0].at; got != want {
					t.Fatalf("delivered at %d ps, want %d (ser %d)", got, want, ser)
				}
				d := st.obs.deliveries[0]
				if d.hops != 2 || len(d.path) != 2 || d.path[0].Node != st.hosts[0].ID() || d.path[1].Node != st.sw.ID() {
					t.Fatalf("hops %d path %v", d.hops, d.path)
				}
				checkDrained(t, st.net)
			})
		}
	}
}

// A lone frame with ForwardingLatency: it delays admission (docs/model.md#ports-links-and-scheduling).
func TestTimingForwardingLatency(t *testing.T) {
	cfg := defaultSwitch()
	cfg.ForwardingLatency = 300 * units.Nanosecond
	c := 100 * units.Gbps
	st := newStar(t, 2, cfg, LinkSpec{Speed: c, PropagationDelay: 500 * units.Nanosecond})
	newInjector(st.net, []pktSpec{{at: 0, src: 0, dst: 1, length: 1000}})
	st.eng.Run()
	ser := units.SerializationTime(1038, c)
	want := 2*(ser+500*units.Nanosecond) + 300*units.Nanosecond
	if got := st.obs.deliveries[0].at; got != want {
		t.Fatalf("delivered at %d, want %d", got, want)
	}
}

// Back-to-back frames leave at line rate: frame k arrives ser*k after the first.
func TestTimingBackToBack(t *testing.T) {
	for _, c := range speeds {
		t.Run(c.String(), func(t *testing.T) {
			st := newStar(t, 2, defaultSwitch(), LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
			var specs []pktSpec
			for i := 0; i < 50; i++ {
				specs = append(specs, pktSpec{at: 0, src: 0, dst: 1, length: 1500})
			}
			newInjector(st.net, specs)
			st.eng.Run()
			ser := units.SerializationTime(1538, c)
			first := st.obs.deliveries[0].at
			for k, d := range st.obs.deliveries {
				if d.trace != int64(k) {
					t.Fatalf("delivery %d is packet %d: order changed", k, d.trace)
				}
				if d.at != first+units.Time(k)*ser {
					t.Fatalf("packet %d at %d, want %d", k, d.at, first+units.Time(k)*ser)
				}
			}
			checkDrained(t, st.net)
		})
	}
}

// Strict priority: a queue of every class drains TC7 first, TC0 last, FIFO within a
// class; the frame already on the wire (TC0, first) is not pre-empted.
func TestStrictPriorityOrder(t *testing.T) {
	st := newStar(t, 2, defaultSwitch(), LinkSpec{Speed: 10 * units.Gbps, PropagationDelay: units.Microsecond})
	var specs []pktSpec
	// Packet 0 (TC0) starts at once; then two of each class arrive while it is sent.
	specs = append(specs, pktSpec{at: 0, src: 0, dst: 1, length: 1500, dscp: 0})
	for r := 0; r < 2; r++ {
		for tc := 0; tc < NumTC; tc++ {
			specs = append(specs, pktSpec{at: 1, src: 0, dst: 1, length: 1500, dscp: uint8(tc << 3)})
		}
	}
	newInjector(st.net, specs)
	st.eng.Run()
	var got []uint8
	for _, d := range st.obs.deliveries {
		got = append(got, d.tc)
	}
	want := []uint8{0, 7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("class order %v, want %v", got, want)
		}
	}
	// FIFO within a class.
	last := map[uint8]int64{}
	for _, d := range st.obs.deliveries {
		if prev, ok := last[d.tc]; ok && d.trace < prev {
			t.Fatalf("TC %d out of order", d.tc)
		}
		last[d.tc] = d.trace
	}
	checkDrained(t, st.net)
}

// The per-port fast path equals units.SerializationTime at every speed, exact or not.
func TestPortSerializationMatchesUnits(t *testing.T) {
	for _, c := range []units.BitRate{1 * units.Gbps, 10 * units.Gbps, 25 * units.Gbps, 40 * units.Gbps, 50 * units.Gbps,
		100 * units.Gbps, 200 * units.Gbps, 400 * units.Gbps, 800 * units.Gbps, 3 * units.Gbps, 7*units.Gbps + 1} {
		net := NewNetwork(NewEngine(), Options{})
		pt := net.newPort(&nodeCore{}, LinkSpec{Speed: c})
		for _, w := range []int64{84, 85, 1538, 9038, 123457} {
			if got, want := pt.serialization(w), units.SerializationTime(w, c); got != want {
				t.Fatalf("%v, %d B: %d ps, want %d", c, w, got, want)
			}
		}
	}
}

// docs/model.md#invariants: a lone packet crossing rack, fabric, spine, fabric, rack arrives exactly at
// the sum of per-link serialization and propagation (links of three speeds).
func TestTimingLonePacketAcrossClos(t *testing.T) {
	o := &obs{}
	c := buildClos(t, smallClos, 1, o.observers())
	// Host 0 (pod 0) to host 11 (pod 1).
	newInjector(c.net, []pktSpec{{at: 5, src: 0, dst: 11, length: 1200, dscp: 3 << 3}})
	c.eng.Run()
	if len(o.deliveries) != 1 {
		t.Fatal("not delivered")
	}
	w := int64(1218 + 20)
	sp := smallClos
	want := units.Time(5)
	for _, l := range []LinkSpec{sp.host, sp.up, sp.top, sp.top, sp.up, sp.host} {
		want += units.SerializationTime(w, l.Speed) + l.PropagationDelay
	}
	if d := o.deliveries[0]; d.at != want || d.hops != 6 {
		t.Fatalf("delivered at %d after %d hops, want %d after 6", d.at, d.hops, want)
	}
}
