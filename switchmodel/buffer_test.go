package switchmodel

import (
	"math"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

func incastSizes(short bool) []int {
	if short {
		return []int{2, 4, 16}
	}
	return []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
}

// docs/model.md#headroom-sizing, docs/model.md#invariants: with Headroom auto a lossless class never drops at ingress, even in
// an N-to-1 incast at line rate, with MTU frames and with 64-byte frames (the worst
// cells-per-wire-byte ratio).
func TestLosslessIncastNeverDropsHeadroom(t *testing.T) {
	c := 100 * units.Gbps
	for _, length := range []int32{9000, 46} {
		for _, n := range incastSizes(testing.Short()) {
			t.Run("L"+itoa(int(length))+"/N"+itoa(n), func(t *testing.T) {
				cfg := defaultSwitch()
				cfg.BufferStatsReportInterval = units.Microsecond
				st := newStar(t, n+1, cfg, LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
				if len(st.warns) != 0 {
					t.Fatalf("warnings with auto headroom: %v", st.warns)
				}
				srcs := make([]int32, n)
				for i := range srcs {
					srcs[i] = int32(i + 1)
				}
				// Each sender sends long enough to fill its dynamic Xoff share,
				// XoffAlpha*S/(1+N*XoffAlpha), about three times over at the rate its
				// queue grows ((N-1)/N of line rate) in cells.
				S := float64(st.sw.pools[1].size)
				share := 0.125 * S / (1 + float64(n)*0.125)
				cells := float64((FrameSize(length) + 255) / 256 * 256)
				count := int(3 * share / cells * float64(n) / float64(n-1))
				newInjector(st.net, incast(srcs, 0, count, length, 3<<3, 0, c))
				st.eng.Run()
				cn := st.net.Counters()
				if cn.DroppedTotal() != 0 {
					t.Fatalf("lossless drops: %v", cn.Dropped)
				}
				if cn.Delivered != int64(n*count) {
					t.Fatalf("delivered %d of %d", cn.Delivered, n*count)
				}
				if len(st.obs.pfcOf(PFCTxPause)) == 0 {
					t.Fatal("the incast never paused: the test does not exercise headroom")
				}
				var maxHr int64
				for _, s := range st.obs.samples {
					if s.Pool == 1 && s.Headroom > maxHr {
						maxHr = s.Headroom
					}
				}
				if maxHr == 0 {
					t.Fatal("headroom never used")
				}
				t.Logf("%d packets, %d pause frames, max pool headroom %d B (per-port cap %d B)",
					n*count, len(st.obs.pfcOf(PFCTxPause)), maxHr, st.sw.Headroom(1, 1))
				checkDrained(t, st.net)
			})
		}
	}
}

// The adversarial mix for headroom: 64-byte lossless frames arrive (most cells per
// wire byte) while the paused port is busy sending jumbo frames back to the senders
// (the pause waits behind one), from senders at two speeds.
func TestLosslessIncastWithReverseJumbos(t *testing.T) {
	for _, n := range []int{4, 8, 16} {
		t.Run("N"+itoa(n), func(t *testing.T) {
			links := repeatLink(LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond}, n+1)
			for i := 1; i <= n; i += 2 {
				links[i] = LinkSpec{Speed: 25 * units.Gbps, PropagationDelay: 2 * units.Microsecond}
			}
			cfg := defaultSwitch()
			cfg.Xoff = 50_000 // pause early and often: many pause cycles
			st := newStarSpeeds(t, cfg, links)
			var specs []pktSpec
			for i := 1; i <= n; i++ {
				specs = append(specs, incast([]int32{int32(i)}, 0, 8000, 46, 3<<3, 0, links[i].Speed)...)
				// Jumbo frames from host 0 back to each sender, same class and TC4.
				for _, s := range incast([]int32{0}, int32(i), 150, 9000, 4<<3, 0, 100*units.Gbps) {
					s.at *= units.Time(n)
					specs = append(specs, s)
				}
			}
			newInjector(st.net, specs)
			st.eng.Run()
			cn := st.net.Counters()
			if cn.DroppedTotal() != 0 {
				t.Fatalf("lossless drops: %v", cn.Dropped)
			}
			if len(st.obs.pfcOf(PFCTxPause)) < 10 {
				t.Fatalf("%d pauses", len(st.obs.pfcOf(PFCTxPause)))
			}
			checkDrained(t, st.net)
		})
	}
}

// docs/model.md#invariants: with PFC disabled the same incast drops at egress-limit or pool-full.
func TestIncastWithoutPFCDropsLossy(t *testing.T) {
	c := 100 * units.Gbps
	for _, n := range []int{2, 8, 16} {
		t.Run("N"+itoa(n), func(t *testing.T) {
			cfg := defaultSwitch()
			cfg.PfcEnabled = nil
			st := newStar(t, n+1, cfg, LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
			srcs := make([]int32, n)
			for i := range srcs {
				srcs[i] = int32(i + 1)
			}
			newInjector(st.net, incast(srcs, 0, 1500, 9000, 3<<3, 0, c))
			st.eng.Run()
			cn := st.net.Counters()
			lossy := cn.Dropped[DropEgressLimit] + cn.Dropped[DropPoolFull]
			if lossy == 0 || cn.Dropped[DropHeadroom] != 0 {
				t.Fatalf("drops %v: want egress-limit/pool-full only", cn.Dropped)
			}
			if len(st.obs.pfc) != 0 {
				t.Fatal("PFC frames with PFC disabled")
			}
			for _, d := range st.obs.drops {
				if d.Port != st.sw.ports[0].idx {
					t.Fatalf("lossy drop counted at port %d, want egress port", d.Port)
				}
			}
			checkDrained(t, st.net)
		})
	}
}

// docs/model.md#headroom-sizing: a configured headroom below the formula draws a warning at start, and an
// incast then does drop with reason headroom (a lossless drop).
func TestUndersizedHeadroomDropsAndWarns(t *testing.T) {
	c := 100 * units.Gbps
	cfg := defaultSwitch()
	cfg.Headroom = config.FixedHeadroom(20 * units.KiB)
	st := newStar(t, 5, cfg, LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
	if len(st.warns) == 0 || !strings.Contains(strings.Join(st.warns, "\n"), "Headroom") {
		t.Fatalf("no headroom warning: %v", st.warns)
	}
	newInjector(st.net, incast([]int32{1, 2, 3, 4}, 0, 400, 9000, 4<<3, 0, c))
	st.eng.Run()
	cn := st.net.Counters()
	if cn.Dropped[DropHeadroom] == 0 {
		t.Fatalf("undersized headroom never dropped: %v", cn.Dropped)
	}
	if cn.Dropped[DropEgressLimit]+cn.Dropped[DropPoolFull] != 0 {
		t.Fatal("lossless packet dropped at egress")
	}
	var portDrops int64
	for i := 0; i < st.sw.NumPorts(); i++ {
		portDrops += st.sw.PortStats(i)[4].Drops[DropHeadroom]
	}
	if portDrops != cn.Dropped[DropHeadroom] {
		t.Fatalf("port drop counters %d, total %d", portDrops, cn.Dropped[DropHeadroom])
	}
	checkDrained(t, st.net)
}

// docs/model.md#shared-buffer rule: pools + headroom <= BufferSize, else rejected at start.
func TestOvercommittedBufferRejected(t *testing.T) {
	cfg := defaultSwitch()
	cfg.BufferSize = 1 * units.MiB // 8 ports x 208 KB headroom > 1 MiB
	eng := NewEngine()
	net := NewNetwork(eng, Options{Seed: 1})
	sw, err := net.AddSwitch("tor", config.TierRack, &cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		h, _ := net.AddHost("h" + itoa(i))
		if _, _, err := net.Connect(h, sw, LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = net.Start()
	if err == nil || !strings.Contains(err.Error(), "tor") || !strings.Contains(err.Error(), "over-committed") {
		t.Fatalf("err = %v, want over-committed buffer naming the switch", err)
	}
}

// Bad switch configuration is rejected with the attribute named.
func TestSwitchConfigRejected(t *testing.T) {
	tests := []struct {
		name string
		mod  func(c *config.Switch)
		attr string
	}{
		{"mixed pool", func(c *config.Switch) { c.PfcEnabled = []int{3} }, "mixes"},
		{"unmapped TC", func(c *config.Switch) { c.Pools[0].TrafficClasses = []int{0, 1} }, "TC 2"},
		{"cell size", func(c *config.Switch) { c.CellSize = 0 }, "CellSize"},
		{"ecn thresholds", func(c *config.Switch) { c.EcnMinThreshold = 2 * c.EcnMaxThreshold }, "EcnMinThreshold"},
		{"ecn weight", func(c *config.Switch) { c.EcnWeight = 0 }, "EcnWeight"},
		{"xon", func(c *config.Switch) { c.Xon = -1 }, "Xon"},
		{"egress alpha", func(c *config.Switch) { c.EgressAlpha = 0 }, "EgressAlpha"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultSwitch()
			tc.mod(&cfg)
			net := NewNetwork(NewEngine(), Options{})
			_, err := net.AddSwitch("s1", config.TierNone, &cfg, nil)
			if err == nil || !strings.Contains(err.Error(), tc.attr) || !strings.Contains(err.Error(), "s1") {
				t.Fatalf("err = %v, want it to name %s and the switch", err, tc.attr)
			}
		})
	}
}

// docs/model.md#shared-buffer dynamic thresholds (Choudhury-Hahne): N equally congested lossy queues settle
// where queue = EgressAlpha*(B - N*queue), i.e. EgressAlpha*B/(1+N*EgressAlpha) each,
// within one MTU.
func TestDynamicThresholdsChoudhuryHahne(t *testing.T) {
	c := 100 * units.Gbps
	for _, tc := range []struct {
		n     int
		alpha float64
	}{{1, 8}, {2, 8}, {4, 8}, {2, 1}, {3, 0.5}} {
		t.Run("N"+itoa(tc.n)+"/alpha"+itoa(int(tc.alpha*10)), func(t *testing.T) {
			cfg := defaultSwitch()
			cfg.BufferSize = 2 * units.MiB
			cfg.PfcEnabled = nil
			cfg.Pools = []config.Pool{{Name: "lossy", Size: config.PoolShare(1), TrafficClasses: []int{0, 1, 2, 3, 4, 5, 6, 7}}}
			cfg.EgressAlpha = tc.alpha
			// Hosts 0..n-1 are the congested receivers; each gets two line-rate senders.
			st := newStar(t, 3*tc.n, cfg, LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
			var specs []pktSpec
			for q := 0; q < tc.n; q++ {
				srcs := []int32{int32(tc.n + 2*q), int32(tc.n + 2*q + 1)}
				specs = append(specs, incast(srcs, int32(q), 300, 9000, 0, 0, c)...)
			}
			// The equilibrium is the one of queues served alike. Senders in lockstep
			// tie at every arrival, and ties run in node order
			// (docs/model.md#event-order-and-determinism): the same queue would meet
			// each threshold first, every time, and the queues lock at unequal lengths
			// that each admit one frame per frame time (68, 59, 52, 44 frames for N4).
			// Each sender sends 1/128 slower than line rate with a jitter of up to
			// 1/128 of a frame time per frame, so its frames start when injected and
			// the order of the arrivals varies. A queue then moves around the
			// equilibrium: one admission anywhere moves every threshold by alpha
			// frames, and a snapshot falls anywhere in a queue's cycle of admissions
			// and departures. The mean queue is within 1.5 MTUs of the equilibrium,
			// each queue within max(2, alpha) MTUs.
			ser := units.SerializationTime(9038, c)
			for i := range specs {
				k := specs[i].at / ser
				specs[i].at = k*(ser+ser/128) + units.Time(uint64(i+1)*0x9E3779B97F4A7C15>>32)%(ser/128)
			}
			newInjector(st.net, specs)
			st.eng.RunUntil(250 * ser) // still sending at 2x line rate into each queue
			B := float64(st.sw.pools[0].size)
			want := tc.alpha * B / (1 + float64(tc.n)*tc.alpha)
			mtu := float64((9018 + 255) / 256 * 256)
			mean := 0.0
			for q := 0; q < tc.n; q++ {
				got := float64(st.sw.ports[q].tc[0].egress)
				mean += got / float64(tc.n)
				if tol := max(2, tc.alpha) * mtu; math.Abs(got-want) > tol {
					t.Errorf("queue %d holds %.0f B, want %.0f +- %.0f", q, got, want, tol)
				}
			}
			if math.Abs(mean-want) > 1.5*mtu {
				t.Errorf("the mean queue holds %.0f B, want %.0f +- %.0f", mean, want, 1.5*mtu)
			}
			if err := st.net.CheckAccounting(); err != nil {
				t.Fatal(err)
			}
			st.eng.Run()
			if st.net.Counters().Dropped[DropEgressLimit] == 0 {
				t.Fatal("no egress-limit drops")
			}
			checkDrained(t, st.net)
		})
	}
}

// docs/model.md#shared-buffer fixed egress limits: EgressQueueLimit bytes, or EgressQueueLimitBdp x BDP.
func TestFixedEgressLimit(t *testing.T) {
	c := 100 * units.Gbps
	for _, tc := range []struct {
		name  string
		bytes units.Bytes
		bdp   float64
		limit int64
	}{
		{"bytes", 300 * units.KB, 0, 300_000},
		{"bdp multiple", 0, 2.5, 250_000}, // Options.FabricBDP = 100 KB in newStar
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultSwitch()
			cfg.EgressLimitMode = config.EgressFixed
			cfg.EgressQueueLimit = tc.bytes
			cfg.EgressQueueLimitBdp = tc.bdp
			st := newStar(t, 3, cfg, LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
			newInjector(st.net, incast([]int32{1, 2}, 0, 200, 1500, 0, 0, c))
			st.eng.Run()
			wm := st.sw.PortStats(0)[0].WatermarkBytes
			cell := int64(1536) // 1518-byte frame in 256-byte cells
			if wm > tc.limit || wm <= tc.limit-cell {
				t.Fatalf("watermark %d, want the last cell-rounded frame under %d", wm, tc.limit)
			}
			if st.net.Counters().Dropped[DropEgressLimit] == 0 {
				t.Fatal("no egress-limit drops")
			}
			checkDrained(t, st.net)
		})
	}
}

// docs/model.md#shared-buffer: a lossy pool that is full drops with pool-full even when the queue's own
// limit would admit (fixed limit above the pool).
func TestPoolFull(t *testing.T) {
	c := 100 * units.Gbps
	cfg := defaultSwitch()
	cfg.EgressLimitMode = config.EgressFixed
	cfg.EgressQueueLimit = 64 * units.MiB
	cfg.BufferSize = 4 * units.MiB
	cfg.Pools[0].Size = config.PoolBytes(200 * units.KiB)
	cfg.Pools[1].Size = config.PoolBytes(200 * units.KiB)
	st := newStar(t, 3, cfg, LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
	newInjector(st.net, incast([]int32{1, 2}, 0, 300, 1500, 0, 0, c))
	st.eng.RunUntil(30 * units.Microsecond)
	if sh, _, _ := st.sw.BufferUsage(0); sh > 200*1024 || sh < 200*1024-1536 {
		t.Fatalf("pool shared %d, want full (200 KiB)", sh)
	}
	st.eng.Run()
	cn := st.net.Counters()
	if cn.Dropped[DropPoolFull] == 0 || cn.Dropped[DropEgressLimit] != 0 {
		t.Fatalf("drops %v", cn.Dropped)
	}
	checkDrained(t, st.net)
}

// docs/model.md#shared-buffer: frames are accounted in whole cells.
func TestCellAccounting(t *testing.T) {
	for _, tc := range []struct {
		l    int32
		cell units.Bytes
		want int64
	}{{46, 256, 256}, {238, 256, 256}, {239, 256, 512}, {1500, 256, 1536}, {9000, 256, 9216}, {1500, 128, 1536}, {1500, 100, 1600}} {
		cfg := defaultSwitch()
		cfg.CellSize = tc.cell
		st := newStar(t, 2, cfg, LinkSpec{Speed: units.Gbps, PropagationDelay: units.Microsecond})
		e := st.sw.ports[1]
		// Block the egress so the frame stays queued.
		at(st.eng, 0, func(now units.Time) { st.net.sendPFC(now, st.hosts[1].ports[0], 0xff, PFCQuanta) })
		newInjector(st.net, []pktSpec{{at: 1, src: 0, dst: 1, length: tc.l, dscp: 0}, {at: 1, src: 0, dst: 1, length: tc.l, dscp: 0}})
		st.eng.RunUntil(units.Millisecond)
		if e.tc[0].egress != 2*tc.want {
			t.Errorf("L=%d cell=%d: queue %d B, want 2x%d", tc.l, tc.cell, e.tc[0].egress, tc.want)
		}
	}
}
