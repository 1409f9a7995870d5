package switchmodel

// Audit tests: hand-computed single-switch scenarios that pin the buffering, PFC and
// ECN sentences of the seed description and of docs/model.md#switch-model to the picosecond and to the byte. Every expected
// number below is derived in the comments from the model's formulas, not read back
// from the model.

import (
	"strconv"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// Constants of the scenarios: 100 Gb/s links with 1 us propagation delay.
const (
	auC        = 100 * units.Gbps
	auProp     = units.Microsecond
	auSer1500  = units.Time(123_040)     // (1518+20)*8/100G: a 1500-byte packet on the wire
	auSer9000  = units.Time(723_040)     // (9018+20)*8/100G
	auSerPFC   = units.Time(6_720)       // 84*8/100G: a PFC frame
	auPause    = units.Time(335_539_200) // 65535*512/100G
	auHalf     = units.Time(167_769_600) // half of it
	auCell1500 = int64(1536)             // ceil(1518/256) = 6 cells
)

// auStar is a star of n hosts on one switch at 100 Gb/s / 1 us.
func auStar(t *testing.T, n int, cfg config.Switch) *star {
	t.Helper()
	return newStar(t, n, cfg, LinkSpec{Speed: auC, PropagationDelay: auProp})
}

// blockEgress makes host h pause the switch's egress towards it for the classes of
// vector at time 0 (a test-only frame: hosts never send PFC in the model). The frame
// arrives at the switch at 6,720 + 1,000,000 ps and the switch's egress to h is then
// paused for one pause time, until 1,006,720 + 335,539,200 = 336,545,920 ps.
func blockEgress(st *star, h int, vector uint8) {
	at(st.eng, 0, func(now units.Time) { st.net.sendPFC(now, st.hosts[h].ports[0], vector, PFCQuanta) })
}

const auUnblock = auSerPFC + auProp + auPause // 336,545,920

// pfcAt returns the switch's (or a host's) PFC events of one kind for TC3 on a port.
func pfcAt(o *obs, kind PFCEventKind, node int32, port int32) []units.Time {
	var out []units.Time
	for _, e := range o.pfc {
		if e.Kind == kind && e.Node == node && e.Port == port && e.TC == 3 {
			out = append(out, e.Time)
		}
	}
	return out
}

func sameTimes(a, b []units.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestAuditPFCTwoSendersExact: hosts 0 and 1 each send 24 lossless (TC3) 1500-byte
// packets back to back from t=0 to host 2, whose switch egress is paused until
// 336,545,920 ps. The lossless pool is 102,400 B, XoffAlpha 1/8, Xon = XonOffset =
// 4,608 B; every packet takes 1,536 B (6 cells).
//
// Arrivals at the switch alternate host 0, host 1 at k*123,040 + 1,000,000 ps. Before
// arrival n (0-based) the pool's shared occupancy is S = 1,536*n and the arriving
// port's own is 1,536*floor(n/2); it goes to shared while own + 1,536 <= (102,400 -
// S)/8 (docs/model.md#shared-buffer step 2 with the pool's PoolShared at that moment). n = 11: 9,216 <=
// 10,688 holds; n = 12 (host 0's 7th packet): 10,752 > 10,496, so port 0 pauses; n = 13
// (host 1's 7th): S is still 18,432 (n = 12 went to headroom), 10,752 > 10,496: port 1
// pauses too. (With the port's own occupancy instead of the pool's, the 8th packet
// would pause.) Both pauses are decided at 7*123,040 + 1,000,000 = 1,861,280 ps; the
// ports towards the hosts are idle, so the frames start then and reach the hosts at
// +6,720 + 1,000,000 = 2,868,000 ps, while each host sends its 24th packet (started at
// 23*123,040 = 2,829,920). Each port holds 6 packets in shared (9,216 B) and 18 in
// headroom (27,648 B).
//
// Refreshes every half pause time after the decision: 169,630,880 and 337,400,480 ps.
// From 336,545,920 the egress sends the 48 packets in arrival order, one every
// 123,040 ps. Release is headroom first: port 0's headroom is empty after its 18th
// departure; after its 20th (overall departure index 38) shared(0) = 6,144, pool shared
// S = 6,144 + 7,680 = 13,824, XonThreshold = max(4,608, (102,400-13,824)/8 - 4,608) =
// 6,464 >= 6,144: resume at 336,545,920 + 38*123,040 = 341,221,440 ps. (After its
// 19th: 7,680 > max(4608, 10,688-4,608) = 6,080.) Port 1 resumes after its 20th
// (index 39, 341,344,480 ps): shared 6,144, S = 12,288, XonThreshold 6,656.
func TestAuditPFCTwoSendersExact(t *testing.T) {
	type want struct {
		pauseTx   units.Time // the switch's first tx_pause towards host 0
		refresh   []units.Time
		hostPause units.Time // host 0 rx_pause of the first frame
	}
	tests := []struct {
		name  string
		fwd   units.Time
		cross bool // lossy 9000-byte traffic from hosts 3 and 4 to host 0
		want  want
	}{
		{"base", 0, false, want{1_861_280, []units.Time{169_630_880, 337_400_480}, 2_868_000}},
		// docs/model.md#ports-links-and-scheduling: ForwardingLatency delays the frame before ingress admission, so the
		// pause decision (and the refreshes) move by 300 ns; departures do not.
		{"forwarding latency 300ns", 300 * units.Nanosecond, false,
			want{2_161_280, []units.Time{169_930_880, 337_700_480}, 3_168_000}},
		// docs/model.md#ports-links-and-scheduling: the PFC queue goes first but never pre-empts. Host 3's 9000-byte
		// frame is on the wire to host 0 from 1,723,040 to 2,446,080 and host 4's waits
		// in TC0: the pause frame starts at 2,446,080, host 4's frame after it, at
		// 2,452,800 (delivered at 2,452,800 + 723,040 + 1,000,000 = 4,175,840).
		{"pause behind a frame on the wire", 0, true,
			want{2_446_080, []units.Time{169_630_880, 337_400_480}, 3_452_800}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultSwitch()
			cfg.Pools[0].Size = config.PoolBytes(units.MiB)
			cfg.Pools[1].Size = config.PoolBytes(102_400)
			cfg.ForwardingLatency = tc.fwd
			cfg.BufferStatsReportInterval = 100 * units.Microsecond
			st := auStar(t, 5, cfg)
			blockEgress(st, 2, 1<<3)
			var specs []pktSpec
			for i := 0; i < 24; i++ {
				specs = append(specs, pktSpec{at: 0, src: 0, dst: 2, length: 1500, dscp: 3 << 3, flow: 0},
					pktSpec{at: 0, src: 1, dst: 2, length: 1500, dscp: 3 << 3, flow: 1})
			}
			if tc.cross {
				specs = append(specs, pktSpec{at: 0, src: 3, dst: 0, length: 9000, flow: 3},
					pktSpec{at: 0, src: 4, dst: 0, length: 9000, flow: 4})
			}
			newInjector(st.net, specs)

			// Mid-run: the admission split (docs/model.md#shared-buffer) and a buffer sample (docs/model.md#statistics).
			st.eng.RunUntil(100 * units.Microsecond)
			s := st.sw
			for p := 0; p < 2; p++ {
				if sh, hr := s.ports[p].ingShared[1], s.ports[p].ingHeadroom[1]; sh != 6*auCell1500 || hr != 18*auCell1500 {
					t.Errorf("port %d: shared %d headroom %d, want %d and %d", p, sh, hr, 6*auCell1500, 18*auCell1500)
				}
			}
			var sample *BufferSample
			for i := range st.obs.samples {
				if b := &st.obs.samples[i]; b.Time == 100*units.Microsecond && b.Pool == 1 {
					sample = b
				}
			}
			if sample == nil || sample.Shared != 18_432 || sample.Headroom != 55_296 || sample.Ingress != 73_728 || sample.Egress != 73_728 {
				t.Errorf("pool 1 sample at 100 us %+v, want shared 18432 headroom 55296 ingress 73728 egress 73728", sample)
			}

			st.eng.Run()
			sw := s.ID()
			for p := int32(0); p < 2; p++ {
				wantTx := append([]units.Time{tc.want.pauseTx}, tc.want.refresh...)
				if p == 1 {
					wantTx[0] = 1_861_280 + tc.fwd // port 1's frame towards host 1 is never delayed
				}
				if got := pfcAt(st.obs, PFCTxPause, sw, p); !sameTimes(got, wantTx) {
					t.Errorf("switch port %d tx_pause at %v, want %v", p, got, wantTx)
				}
			}
			res0, res1 := units.Time(341_221_440), units.Time(341_344_480)
			if got := pfcAt(st.obs, PFCTxResume, sw, 0); !sameTimes(got, []units.Time{res0}) {
				t.Errorf("switch port 0 tx_resume at %v, want [%d]", got, res0)
			}
			if got := pfcAt(st.obs, PFCTxResume, sw, 1); !sameTimes(got, []units.Time{res1}) {
				t.Errorf("switch port 1 tx_resume at %v, want [%d]", got, res1)
			}
			// At the hosts: rx 84 wire bytes + 1 us after each tx; no expiry (refreshed).
			h0 := st.hosts[0].ID()
			wantRx := []units.Time{tc.want.hostPause}
			for _, r := range tc.want.refresh {
				wantRx = append(wantRx, r+auSerPFC+auProp)
			}
			if got := pfcAt(st.obs, PFCRxPause, h0, 0); !sameTimes(got, wantRx) {
				t.Errorf("host 0 rx_pause at %v, want %v", got, wantRx)
			}
			if got := pfcAt(st.obs, PFCRxResume, h0, 0); !sameTimes(got, []units.Time{res0 + auSerPFC + auProp}) {
				t.Errorf("host 0 rx_resume at %v, want %d", got, res0+auSerPFC+auProp)
			}
			for _, h := range []int32{h0, st.hosts[1].ID()} {
				if got := pfcAt(st.obs, PFCExpire, h, 0); len(got) != 0 {
					t.Errorf("host %d: a refreshed pause expired at %v", h, got)
				}
			}
			// docs/model.md#statistics time paused, at the paused sender: from rx_pause to rx_resume,
			// for both classes of the pool's class-enable vector.
			ps0 := st.hosts[0].PortStats(0)
			ps1 := st.hosts[1].PortStats(0)
			want0 := res0 + auSerPFC + auProp - tc.want.hostPause
			want1 := res1 + auSerPFC + auProp - (2_868_000 + tc.fwd)
			for _, cls := range []int{3, 4} {
				if ps0[cls].PausedPs != want0 || ps1[cls].PausedPs != want1 {
					t.Errorf("TC%d paused %d / %d ps, want %d / %d", cls, ps0[cls].PausedPs, ps1[cls].PausedPs, want0, want1)
				}
				if ps0[cls].PFCPauseRx != 3 || ps0[cls].PFCResumeRx != 1 {
					t.Errorf("host 0 TC%d: %d pause and %d resume frames received, want 3 and 1", cls, ps0[cls].PFCPauseRx, ps0[cls].PFCResumeRx)
				}
			}
			if sp := s.PortStats(0); sp[3].PFCPauseTx != 3 || sp[3].PFCResumeTx != 1 || sp[4].PFCPauseTx != 3 {
				t.Errorf("switch port 0 PFC tx counters %+v", sp[3])
			}
			// Deliveries to host 2: departure n at 336,545,920 + n*123,040, in arrival
			// order (host 0, host 1, ...), delivered one serialization + 1 us later.
			n := 0
			for _, d := range st.obs.deliveries {
				if d.dst != 2 {
					continue
				}
				if wantAt := auUnblock + units.Time(n+1)*auSer1500 + auProp; d.at != wantAt || d.src != int32(n%2) {
					t.Fatalf("delivery %d to host 2 from %d at %d, want from %d at %d", n, d.src, d.at, n%2, wantAt)
				}
				n++
			}
			if n != 48 {
				t.Fatalf("%d deliveries to host 2, want 48", n)
			}
			if tc.cross {
				var got []units.Time
				for _, d := range st.obs.deliveries {
					if d.dst == 0 {
						got = append(got, d.at)
					}
				}
				if !sameTimes(got, []units.Time{3_446_080, 4_175_840}) {
					t.Errorf("lossy deliveries to host 0 at %v, want [3446080 4175840]", got)
				}
			}
			// docs/model.md#statistics: a sample per pool every 100 us while the network holds packets
			// (the package doc: the sampler stops once it is empty): 100, 200 and 300 us
			// see the blocked queue, 400 us the empty buffer (last delivery 343.45 us).
			var times []units.Time
			for _, b := range st.obs.samples {
				if b.Pool != 1 {
					continue
				}
				times = append(times, b.Time)
				full := b.Time < auUnblock
				if (full && (b.Shared != 18_432 || b.Headroom != 55_296)) || (!full && (b.Shared != 0 || b.Headroom != 0 || b.Egress != 0)) {
					t.Errorf("pool 1 sample %+v", b)
				}
			}
			if !sameTimes(times, []units.Time{100 * units.Microsecond, 200 * units.Microsecond, 300 * units.Microsecond, 400 * units.Microsecond}) {
				t.Errorf("pool 1 sampled at %v, want every 100 us through 400 us", times)
			}
			if c := st.net.Counters(); c.DroppedTotal() != 0 {
				t.Errorf("drops %v", c.Dropped)
			}
			checkDrained(t, st.net)
		})
	}
}

// sendN returns n back-to-back 1500-byte packets of class tc from src to dst at t=0.
func sendN(n int, src, dst int32, tc uint8, ecn uint8) []pktSpec {
	out := make([]pktSpec, n)
	for i := range out {
		out[i] = pktSpec{at: 0, src: src, dst: dst, length: 1500, dscp: tc << 3, ecn: ecn, flow: int64(src)}
	}
	return out
}

// TestAuditLosslessPoolWithoutRoom: docs/model.md#shared-buffer step 2 charges shared only if "the pool
// has room". With a fixed Xoff of 1 MiB and a 16,384-byte lossless pool (64 cells),
// ten 1,536-byte packets fill 15,360 B; the 11th (arriving at 11*123,040 + 1,000,000 =
// 2,353,440 ps) does not fit the pool although it is far below Xoff: it goes to
// headroom and pauses host 0. The pause reaches host 0 at 2,353,440 + 1,006,720 =
// 3,360,160 ps, during its 28th packet (started at 27*123,040 = 3,322,080), so 18
// packets (27,648 B) land in headroom. XonThreshold = max(4,608, 1 MiB - 4,608) is
// above any shared value, so the port resumes at the departure that empties its
// headroom (release is headroom first): the 18th, at 336,545,920 + 17*123,040 =
// 338,637,600 ps, after two refreshes (170,123,040 and 337,892,640). Host 0 then sends
// packets 29 and 30: they leave the host at 339,644,320 and 339,767,360 and are
// delivered 2*(123,040 + 1,000,000) later.
func TestAuditLosslessPoolWithoutRoom(t *testing.T) {
	cfg := defaultSwitch()
	cfg.Xoff = units.MiB
	cfg.Pools[1].Size = config.PoolBytes(16_384)
	st := auStar(t, 2, cfg)
	blockEgress(st, 1, 1<<3)
	newInjector(st.net, sendN(30, 0, 1, 3, NotECT))
	st.eng.RunUntil(100 * units.Microsecond)
	in := st.sw.ports[0]
	if in.ingShared[1] != 10*auCell1500 || in.ingHeadroom[1] != 18*auCell1500 {
		t.Fatalf("shared %d headroom %d, want %d and %d", in.ingShared[1], in.ingHeadroom[1], 10*auCell1500, 18*auCell1500)
	}
	st.eng.Run()
	sw := st.sw.ID()
	if got := pfcAt(st.obs, PFCTxPause, sw, 0); !sameTimes(got, []units.Time{2_353_440, 170_123_040, 337_892_640}) {
		t.Errorf("tx_pause at %v", got)
	}
	if got := pfcAt(st.obs, PFCTxResume, sw, 0); !sameTimes(got, []units.Time{338_637_600}) {
		t.Errorf("tx_resume at %v, want [338637600]", got)
	}
	d := st.obs.deliveries
	if len(d) != 30 {
		t.Fatalf("%d deliveries", len(d))
	}
	for i, wantAt := range map[int]units.Time{0: auUnblock + auSer1500 + auProp, 27: auUnblock + 28*auSer1500 + auProp,
		28: 339_644_320 + 2*(auSer1500+auProp), 29: 339_767_360 + 2*(auSer1500+auProp)} {
		if d[i].at != wantAt || d[i].trace != int64(i) {
			t.Errorf("delivery %d: packet %d at %d, want packet %d at %d", i, d[i].trace, d[i].at, i, wantAt)
		}
	}
	checkDrained(t, st.net)
}

// TestAuditHeadroomNotEmptyGoesToHeadroom: docs/model.md#shared-buffer step 2 needs headroom(p,P) empty:
// a port that holds headroom bytes charges a new arrival to headroom even when its
// shared occupancy is far below Xoff, and does not send a second pause while pausing.
func TestAuditHeadroomNotEmptyGoesToHeadroom(t *testing.T) {
	st := auStar(t, 2, defaultSwitch())
	blockEgress(st, 1, 1<<3)
	in := st.sw.ports[0]
	// Port 0 is pausing and holds one cell of headroom (state set before the run).
	in.ingHeadroom[1], st.sw.pools[1].headroom, in.pausing[1] = 256, 256, true
	newInjector(st.net, sendN(1, 0, 1, 3, NotECT))
	st.eng.RunUntil(50 * units.Microsecond)
	if in.ingShared[1] != 0 || in.ingHeadroom[1] != 256+auCell1500 || st.sw.pools[1].headroom != 256+auCell1500 {
		t.Fatalf("shared %d headroom %d (pool %d), want 0 and %d", in.ingShared[1], in.ingHeadroom[1], st.sw.pools[1].headroom, 256+auCell1500)
	}
	if got := pfcAt(st.obs, PFCTxPause, st.sw.ID(), 0); len(got) != 0 {
		t.Fatalf("a second pause was sent at %v", got)
	}
}

// TestAuditLossyDynamicEgressLimit: docs/model.md#shared-buffer lossy step 1, limit = EgressAlpha *
// (PoolSize - PoolUsed) with PoolUsed the whole pool's occupancy. A 65,536-byte lossy
// pool, egress blocked, 60 packets of 1,536 B per sender. One queue: admitted while
// q + 1,536 <= alpha*(65,536 - q): 38 packets for alpha 8, 21 for 1, 14 for 0.5. Two
// queues fed alternately (host 0 -> 2, host 1 -> 3): the first admits while q + 1,536
// <= 8*(65,536 - 2q), 21 packets; the second while q + 1,536 <= 8*(65,536 - 2q -
// 1,536), 20 packets. Everything else is an egress-limit drop (the pool never fills).
func TestAuditLossyDynamicEgressLimit(t *testing.T) {
	tests := []struct {
		name   string
		alpha  float64
		queues int
		want   []int64
	}{
		{"alpha 8", 8, 1, []int64{38}},
		{"alpha 1", 1, 1, []int64{21}},
		{"alpha 0.5", 0.5, 1, []int64{14}},
		{"alpha 8, two queues share the pool", 8, 2, []int64{21, 20}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultSwitch()
			cfg.Pools[0].Size = config.PoolBytes(65_536)
			cfg.EgressAlpha = tc.alpha
			st := auStar(t, 4, cfg)
			var specs []pktSpec
			for i := 0; i < 60; i++ {
				for q := 0; q < tc.queues; q++ {
					specs = append(specs, sendN(1, int32(q), int32(q+2), 0, NotECT)...)
				}
			}
			for q := 0; q < tc.queues; q++ {
				blockEgress(st, q+2, 1)
			}
			newInjector(st.net, specs)
			st.eng.RunUntil(100 * units.Microsecond)
			var adm int64
			for q := 0; q < tc.queues; q++ {
				got := st.sw.ports[q+2].tc[0].egress / auCell1500
				if got != tc.want[q] {
					t.Errorf("queue %d admitted %d packets, want %d", q, got, tc.want[q])
				}
				adm += got
			}
			c := st.net.Counters()
			if c.Dropped[DropEgressLimit] != int64(60*tc.queues)-adm || c.Dropped[DropPoolFull] != 0 {
				t.Errorf("drops %v, want %d egress-limit", c.Dropped, int64(60*tc.queues)-adm)
			}
			st.eng.Run()
			checkDrained(t, st.net)
		})
	}
}

// TestAuditLossyCheckOrder: docs/model.md#shared-buffer checks the egress limit (step 1) before the pool
// (step 2), and both are inclusive ("drop if queue + s > limit", "if PoolUsed + s >
// PoolSize"). Ten 1,536-byte packets into a blocked queue:
//   - fixed limit 3,072 B, pool 4,096 B: 2 admitted; the 3rd exceeds both (4,608 >
//     3,072 and > 4,096) and is an egress-limit drop, as are the rest;
//   - fixed limit 64 MiB, pool 4,608 B: 3 admitted (exactly full), 7 pool-full drops;
//   - fixed limit 4,608 B, pool 1 MiB: 3 admitted (exactly at the limit), 7 egress-limit.
func TestAuditLossyCheckOrder(t *testing.T) {
	tests := []struct {
		name              string
		limit             units.Bytes
		pool              units.Bytes
		admitted, egr, pf int64
	}{
		{"both exceeded: egress-limit first", 3072, 4096, 2, 8, 0},
		{"pool exactly full", 64 * units.MiB, 4608, 3, 0, 7},
		{"queue exactly at the limit", 4608, units.MiB, 3, 7, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultSwitch()
			cfg.EgressLimitMode = config.EgressFixed
			cfg.EgressQueueLimit = tc.limit
			cfg.Pools[0].Size = config.PoolBytes(tc.pool)
			st := auStar(t, 2, cfg)
			blockEgress(st, 1, 1)
			newInjector(st.net, sendN(10, 0, 1, 0, NotECT))
			st.eng.RunUntil(100 * units.Microsecond)
			c := st.net.Counters()
			if got := st.sw.ports[1].tc[0].egress / auCell1500; got != tc.admitted || c.Dropped[DropEgressLimit] != tc.egr || c.Dropped[DropPoolFull] != tc.pf {
				t.Errorf("admitted %d, drops %v; want %d admitted, %d egress-limit, %d pool-full", got, c.Dropped, tc.admitted, tc.egr, tc.pf)
			}
			// The drop is counted at the egress port (docs/model.md#statistics per (port, TC)).
			if ps := st.sw.PortStats(1)[0]; ps.Drops[DropEgressLimit] != tc.egr || ps.Drops[DropPoolFull] != tc.pf {
				t.Errorf("egress port drops %v", ps.Drops)
			}
			st.eng.Run()
			checkDrained(t, st.net)
		})
	}
}

// TestAuditLosslessNeverDroppedAtEgress: seed "[a lossless class] is never dropped at
// egress", docs/model.md#shared-buffer lossless step 4: a fixed egress limit below one frame and a blocked
// egress do not drop lossless packets; they pause the sender and are all delivered.
func TestAuditLosslessNeverDroppedAtEgress(t *testing.T) {
	for _, mode := range []config.EgressLimitMode{config.EgressFixed, config.EgressDynamic} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg := defaultSwitch()
			cfg.EgressLimitMode = mode
			cfg.EgressQueueLimit = 1000
			cfg.EgressAlpha = 0.001 // dynamic: far below one frame too
			cfg.Xoff = 20_000       // the senders pause and fill headroom as well
			st := auStar(t, 3, cfg)
			blockEgress(st, 2, 1<<3|1<<4)
			specs := append(sendN(100, 0, 2, 3, NotECT), sendN(100, 1, 2, 4, NotECT)...)
			newInjector(st.net, specs)
			st.eng.Run()
			c := st.net.Counters()
			if c.DroppedTotal() != 0 || c.Delivered != 200 {
				t.Fatalf("delivered %d, drops %v", c.Delivered, c.Dropped)
			}
			if len(pfcAt(st.obs, PFCTxPause, st.sw.ID(), 0)) == 0 {
				t.Fatal("host 0 was never paused")
			}
			checkDrained(t, st.net)
		})
	}
}

// TestAuditECNExcludesDepartingPacket: docs/model.md#ecn-marking with a step curve (EcnMinThreshold =
// EcnMaxThreshold = 3,072 B) and EcnWeight 1, no randomness: ten ECT(0) packets queued
// behind a blocked egress depart one by one; departure n sees q = (9-n)*1,536 B
// excluding itself, so all but the last two (q = 1,536 and 0) become CE. Counting the
// departing packet would mark all but the last one.
func TestAuditECNExcludesDepartingPacket(t *testing.T) {
	checkECNBehindBlockedEgress(t, config.EcnAtDequeue, 1, func(i int) bool { return i < 8 })
}

// checkECNBehindBlockedEgress queues ten ECT(0) 1,500-byte packets behind a blocked
// egress with a step at 3,072 B, marking at at and EcnWeight w, and checks that
// exactly the packets i with marked(i) arrive CE, and the counters.
func checkECNBehindBlockedEgress(t *testing.T, at config.EcnMarkAt, w float64, marked func(i int) bool) {
	t.Helper()
	cfg := defaultSwitch()
	cfg.EcnMinThreshold, cfg.EcnMaxThreshold = 3072, 3072
	cfg.EcnMarkAt, cfg.EcnWeight = at, w
	st := auStar(t, 2, cfg)
	blockEgress(st, 1, 1)
	newInjector(st.net, sendN(10, 0, 1, 0, ECT0))
	st.eng.Run()
	d := st.obs.deliveries
	if len(d) != 10 {
		t.Fatalf("%d deliveries", len(d))
	}
	var want int64
	for i, x := range d {
		if marked(i) {
			want++
		}
		if (x.ecn == CE) != marked(i) || x.trace != int64(i) {
			t.Errorf("packet %d: ECN %d, want CE = %v", x.trace, x.ecn, marked(i))
		}
	}
	if st.net.Counters().CEMarked != want || st.sw.PortStats(1)[0].ECNMarked != want {
		t.Errorf("CE counters %d / %d, want %d", st.net.Counters().CEMarked, st.sw.PortStats(1)[0].ECNMarked, want)
	}
	checkDrained(t, st.net)
}

// TestAuditECNAtEnqueue: Switch.EcnMarkAt enqueue (docs/model.md#ecn-marking) updates
// the average and marks a packet when it is admitted, on the queue including it. The
// setup of TestAuditECNExcludesDepartingPacket (step at 3,072 B, egress blocked):
// arrival n (0-based) sees q = (n+1)*1,536 B. With EcnWeight 1 every packet but the
// first becomes CE (9), where dequeue marking marks the first eight; with EcnWeight
// 0.5 the average is 768, 1,920, then 0.5*1,920 + 0.5*4,608 = 3,264 >= 3,072 at the
// third arrival: packets 2..9 (8). Departures neither mark nor move the average.
func TestAuditECNAtEnqueue(t *testing.T) {
	for _, tc := range []struct {
		w     float64
		first int // first marked packet
	}{{1, 1}, {0.5, 2}} {
		t.Run("EcnWeight"+strconv.FormatFloat(tc.w, 'g', -1, 64), func(t *testing.T) {
			checkECNBehindBlockedEgress(t, config.EcnAtEnqueue, tc.w, func(i int) bool { return i >= tc.first })
		})
	}
}

// TestAuditXonThresholdFloor: docs/model.md#priority-flow-control XonThreshold = max(Xon, XoffThreshold -
// XonOffset). Fixed Xoff 6,144 B: four 1,536-byte packets fit (6,144 <= 6,144), the 5th
// (arriving at 5*123,040 + 1,000,000 = 1,615,200 ps) pauses host 0, which has sent 22
// packets when the pause arrives at 2,621,920 (its 22nd started at 21*123,040 =
// 2,583,840): 4 in shared, 18 in headroom. From 336,545,920 the egress sends one every
// 123,040 ps, releasing headroom first; after departure i (1-based) shared is 6,144
// while i <= 18, then 6,144 - 1,536*(i-18). Resume at the first departure with
// shared <= XonThreshold:
//   - Xon 4,608, XonOffset 4,608: max(4,608, 1,536) = 4,608 -> departure 19;
//   - Xon 0, XonOffset 4,608: 1,536 -> departure 21;
//   - Xon 4,608, XonOffset 0: 6,144 -> departure 18 (headroom just empty).
func TestAuditXonThresholdFloor(t *testing.T) {
	for _, tc := range []struct {
		xon, off units.Bytes
		dep      int
	}{{4608, 4608, 19}, {0, 4608, 21}, {4608, 0, 18}} {
		t.Run("Xon"+itoa(int(tc.xon))+"/XonOffset"+itoa(int(tc.off)), func(t *testing.T) {
			cfg := defaultSwitch()
			cfg.Xoff, cfg.Xon, cfg.XonOffset = 6144, tc.xon, tc.off
			st := auStar(t, 2, cfg)
			blockEgress(st, 1, 1<<3)
			newInjector(st.net, sendN(22, 0, 1, 3, NotECT))
			st.eng.Run()
			sw := st.sw.ID()
			if got := pfcAt(st.obs, PFCTxPause, sw, 0); !sameTimes(got, []units.Time{1_615_200, 1_615_200 + auHalf, 1_615_200 + 2*auHalf}) {
				t.Errorf("tx_pause at %v", got)
			}
			want := auUnblock + units.Time(tc.dep-1)*auSer1500
			if got := pfcAt(st.obs, PFCTxResume, sw, 0); !sameTimes(got, []units.Time{want}) {
				t.Errorf("tx_resume at %v, want [%d] (departure %d)", got, want, tc.dep)
			}
			if c := st.net.Counters(); c.Delivered != 22 || c.DroppedTotal() != 0 {
				t.Errorf("delivered %d, drops %v", c.Delivered, c.Dropped)
			}
			checkDrained(t, st.net)
		})
	}
}

// TestAuditECNPerClassOverride: docs/model.md#ecn-marking "per-class overrides allowed". TC1 gets a step
// at 3,072 B (EcnClasses), TC0 keeps the defaults (400 KB .. 1600 KB). Ten ECT(0)
// packets of each class wait behind a blocked egress; strict priority sends TC1 first.
// Each class's average follows its own queue: TC1's first 8 see >= 3,072 B behind them
// and are marked, TC0's queue (15,360 B at most) is far below 400 KB: none marked.
func TestAuditECNPerClassOverride(t *testing.T) {
	cfg := defaultSwitch()
	step := units.Bytes(3072)
	cfg.EcnClasses = map[int]config.EcnOverride{1: {EcnMinThreshold: &step, EcnMaxThreshold: &step}}
	st := auStar(t, 2, cfg)
	// Two frames 1 ps apart so that TC1's pause ends first (simultaneous expiries are
	// another matter: see the audit report).
	blockEgress(st, 1, 1<<1)
	at(st.eng, 1, func(now units.Time) { st.net.sendPFC(now, st.hosts[1].ports[0], 1<<0, PFCQuanta) })
	var specs []pktSpec
	for i := 0; i < 10; i++ {
		specs = append(specs, sendN(1, 0, 1, 0, ECT0)[0], sendN(1, 0, 1, 1, ECT0)[0])
	}
	newInjector(st.net, specs)
	st.eng.Run()
	marked := map[uint8]int{}
	for i, d := range st.obs.deliveries {
		if wantTC := uint8(1 - i/10); d.tc != wantTC {
			t.Fatalf("delivery %d is TC%d, want TC%d (strict priority)", i, d.tc, wantTC)
		}
		if d.ecn == CE {
			marked[d.tc]++
			if d.tc == 1 && i >= 8 {
				t.Errorf("TC1 delivery %d marked with less than 3,072 B behind it", i)
			}
		}
	}
	if marked[1] != 8 || marked[0] != 0 {
		t.Errorf("marked %v, want 8 of TC1 and none of TC0", marked)
	}
	if ps := st.sw.PortStats(1); ps[1].ECNMarked != 8 || ps[0].ECNMarked != 0 {
		t.Errorf("ECNMarked TC1 %d TC0 %d", ps[1].ECNMarked, ps[0].ECNMarked)
	}
	checkDrained(t, st.net)
}
