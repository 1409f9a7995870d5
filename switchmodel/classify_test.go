package switchmodel

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// docs/model.md#classification: CS3 (DSCP 24) is TC 3 by default, lossless: an
// 8-to-1 incast of it pauses the senders and loses nothing. With DscpToTc {24: 0} on
// the switch and the NICs it is TC 0, lossy: no PFC at all, the same packets counted
// in class 0 and the excess dropped at the egress limit.
func TestClassificationDSCP24(t *testing.T) {
	const senders, perSender = 8, 400
	c := 100 * units.Gbps
	srcs := make([]int32, senders)
	for i := range srcs {
		srcs[i] = int32(i + 1)
	}
	for _, tc := range []struct {
		name string
		m    map[int]int
		want uint8 // the class every node gives DSCP 24
	}{{"default", nil, 3}, {"DscpToTc 24:0", map[int]int{24: 0}, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultSwitch()
			cfg.DscpToTc = tc.m
			cm := cfg.ClassMap()
			st := newStarOpts(t, cfg, repeatLink(LinkSpec{Speed: c, PropagationDelay: units.Microsecond}, senders+1), Options{HostClasses: &cm})
			newInjector(st.net, incast(srcs, 0, perSender, 9000, 24, 0, c))
			st.eng.Run()
			cn := st.net.Counters()
			total := int64(senders * perSender)
			if cn.Injected != total || cn.Delivered+cn.DroppedTotal() != total {
				t.Fatalf("injected %d, delivered %d, dropped %d: want %d = delivered + dropped", cn.Injected, cn.Delivered, cn.DroppedTotal(), total)
			}
			var rx [NumTC]int64
			for i := 0; i < st.sw.NumPorts(); i++ {
				for k, s := range st.sw.PortStats(i) {
					rx[k] += s.RxPackets
				}
			}
			for k := range rx {
				want := int64(0)
				if uint8(k) == tc.want {
					want = total
				}
				if rx[k] != want {
					t.Errorf("switch received %d packets in TC %d, want %d", rx[k], k, want)
				}
			}
			if tx := st.sw.PortStats(0)[tc.want].TxPackets; tx != cn.Delivered {
				t.Errorf("egress to the receiver sent %d packets in TC %d, delivered %d", tx, tc.want, cn.Delivered)
			}
			for _, d := range st.obs.deliveries {
				if d.tc != tc.want {
					t.Fatalf("delivered in TC %d, want %d", d.tc, tc.want)
				}
			}
			for _, e := range st.obs.nic {
				if e.TC != tc.want {
					t.Fatalf("source NIC queued it in TC %d, want %d", e.TC, tc.want)
				}
			}
			switch tc.want {
			case 3: // lossless: PFC pauses TC 3 (with TC 4, the pool's other class), nothing lost
				if cn.PFCFrames == 0 || cn.DroppedTotal() != 0 {
					t.Fatalf("PFC frames %d, drops %v: want pauses and no drop", cn.PFCFrames, cn.Dropped)
				}
				var tc3 bool
				for _, e := range st.obs.pfcOf(PFCTxPause) {
					tc3 = tc3 || e.TC == 3
				}
				if !tc3 {
					t.Fatal("no pause of TC 3")
				}
			case 0: // lossy: no PFC, drops at the egress limit (or pool), in TC 0
				if cn.PFCFrames != 0 || len(st.obs.pfc) != 0 {
					t.Fatalf("%d PFC frames for a lossy class", cn.PFCFrames)
				}
				if lossy := cn.Dropped[DropEgressLimit] + cn.Dropped[DropPoolFull]; lossy == 0 || lossy != cn.DroppedTotal() {
					t.Fatalf("drops %v: want egress-limit/pool-full drops only", cn.Dropped)
				}
				for _, d := range st.obs.drops {
					if d.TC != 0 {
						t.Fatalf("drop in TC %d, want 0", d.TC)
					}
				}
			}
			checkDrained(t, st.net)
		})
	}
}

// docs/model.md#classification: each node classifies a packet when it enters, with
// its own map: a switch mapping DSCP 24 to TC 0 between hosts that keep DSCP / 8
// (TC 3) queues and counts the packet in TC 0, and the hosts in TC 3 (the source NIC
// at injection, the destination on delivery). Timing is the same as for any class.
func TestClassificationPerNode(t *testing.T) {
	c := 100 * units.Gbps
	cfg := defaultSwitch()
	cfg.DscpToTc = map[int]int{24: 0}
	st := newStar(t, 2, cfg, LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
	newInjector(st.net, []pktSpec{{at: 0, src: 0, dst: 1, length: 1000, dscp: 24}})
	st.eng.Run()
	if len(st.obs.nic) != 1 || st.obs.nic[0].TC != 3 {
		t.Fatalf("source NIC events %+v: want one in TC 3 (DSCP / 8)", st.obs.nic)
	}
	if rx := st.sw.PortStats(0)[0].RxPackets; rx != 1 {
		t.Errorf("switch ingress counted %d packets in TC 0, want 1", rx)
	}
	if tx := st.sw.PortStats(1)[0].TxPackets; tx != 1 {
		t.Errorf("switch egress sent %d packets in TC 0, want 1", tx)
	}
	if rx := st.hosts[1].PortStats(0)[3].RxPackets; rx != 1 {
		t.Errorf("destination host counted %d packets in TC 3, want 1", rx)
	}
	if len(st.obs.deliveries) != 1 || st.obs.deliveries[0].tc != 3 {
		t.Fatalf("deliveries %+v: want one in TC 3", st.obs.deliveries)
	}
	// 2 x (ser(1038 wire bytes) + 1 us), as for a lone packet of any class.
	if want := 2 * (units.SerializationTime(1038, c) + units.Microsecond); st.obs.deliveries[0].at != want {
		t.Errorf("delivered at %v, want %v", st.obs.deliveries[0].at, want)
	}
	checkDrained(t, st.net)
}
