package switchmodel

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// TestPFCWatchdog: host 1 stalls at 0 (a receiver that never drains: it pauses its
// rack port for TC 3 and 4 and refreshes every half pause time, 167,769,600 ps) and
// stops at 300 ms with a resume; host 0 sends four lossless (TC 3) 1500-byte packets
// to it at 0 and one more at 600 ms. Defaults: DetectionTime = RestorationTime =
// 200 ms.
//
// By hand: the pause reaches the switch at 6,720 + 1,000,000 = 1,006,720 ps; the first
// packet is queued behind it at 123,040 + 1,000,000 = 1,123,040 ps, which starts the
// watchdog's clock: storm_detected at 1,123,040 + 200 ms = 200,001,123,040 ps. The
// stalled host's last pause leaves it at 1788 x 167,769,600 = 299,972,044,800 ps (the
// next would be after 300 ms) and arrives at 299,973,051,520: storm_restored 200 ms
// later, at 499,973,051,520. drop: the four packets are dropped pfc-watchdog at the
// detection (TC 3's paused time stops there: 200,000,116,320 ps); forward: they leave
// at the detection, the first delivered at 200,002,246,080; alert: they wait for the
// resume (300,001,006,720) and the first is delivered at 300,002,129,760. The packet
// of 600 ms is delivered 2 x (123,040 + 1,000,000) later in every case.
func TestPFCWatchdog(t *testing.T) {
	const (
		detected = units.Time(200_001_123_040)
		restored = units.Time(499_973_051_520)
		late     = 600 * units.Millisecond
	)
	for _, tc := range []struct {
		action       config.WatchdogAction
		drops        int
		firstDeliver units.Time
		pausedTC3    units.Time
	}{
		{config.WatchdogDrop, 4, late + 2*(auSer1500+auProp), detected - 1_006_720},
		{config.WatchdogForward, 0, detected + auSer1500 + auProp, detected - 1_006_720},
		{config.WatchdogAlert, 0, 300*units.Millisecond + auSerPFC + auProp + auSer1500 + auProp, 300*units.Millisecond - 1_006_720 + 1_006_720},
	} {
		t.Run(tc.action.String(), func(t *testing.T) {
			cfg := defaultSwitch()
			cfg.PfcWatchdog.Enabled = true
			cfg.PfcWatchdog.Action = tc.action
			st := auStar(t, 2, cfg)
			at(st.eng, 0, func(units.Time) { st.net.Stall(st.hosts[1], 1<<3|1<<4, true) })
			at(st.eng, 300*units.Millisecond, func(units.Time) { st.net.Stall(st.hosts[1], 0, false) })
			specs := sendN(4, 0, 1, 3, 0)
			specs = append(specs, pktSpec{at: late, src: 0, dst: 1, length: 1500, dscp: 3 << 3, flow: 0})
			newInjector(st.net, specs)
			st.eng.Run()
			det := pfcAt(st.obs, PFCStormDetected, st.sw.ID(), 1)
			res := pfcAt(st.obs, PFCStormRestored, st.sw.ID(), 1)
			if !sameTimes(det, []units.Time{detected}) || !sameTimes(res, []units.Time{restored}) {
				t.Errorf("storm_detected %v, storm_restored %v; want [%d] and [%d]", det, res, detected, restored)
			}
			for _, e := range st.obs.pfc {
				if (e.Kind == PFCStormDetected || e.Kind == PFCStormRestored) && e.TC != 3 {
					t.Errorf("watchdog event for TC %d: %+v (TC 4 had nothing waiting)", e.TC, e)
				}
			}
			if len(st.obs.drops) != tc.drops {
				t.Fatalf("%d drops, want %d", len(st.obs.drops), tc.drops)
			}
			for _, d := range st.obs.drops {
				if d.Reason != DropPFCWatchdog || d.Time != detected || d.Port != 1 {
					t.Errorf("drop %+v, want pfc-watchdog at port 1 at %d", d, detected)
				}
			}
			if len(st.obs.deliveries) != 5-tc.drops || st.obs.deliveries[0].at != tc.firstDeliver {
				t.Errorf("%d deliveries, first at %d; want %d, first at %d", len(st.obs.deliveries), st.obs.deliveries[0].at, 5-tc.drops, tc.firstDeliver)
			}
			if last := st.obs.deliveries[len(st.obs.deliveries)-1].at; last != late+2*(auSer1500+auProp) {
				t.Errorf("the 600 ms packet delivered at %d", last)
			}
			if tc.action != config.WatchdogAlert {
				if ps := st.sw.PortStats(1)[3].PausedPs; ps != tc.pausedTC3 {
					t.Errorf("TC 3 paused %d ps, want %d", ps, tc.pausedTC3)
				}
			}
			checkDrained(t, st.net)
		})
	}
}
