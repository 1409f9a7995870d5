package switchmodel

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// docs/model.md#ports-links-and-scheduling strict priority (TC7 down to TC0). A pause frame for the default lossless
// pool pauses TC3 and TC4 together; both timers end at the same picosecond. rxPFC
// schedules one expiry event per class in TC order 0..7, and expire() kicks the port
// after unpausing only its own class: at the expiry instant TC3 is unpaused first and
// its frame starts while TC4 is still marked paused, so a TC3 frame overtakes the
// waiting TC4 frames. Want: the TC4 frames first.
func TestAuditSimultaneousExpiryKeepsPriority(t *testing.T) {
	st := newStar(t, 2, defaultSwitch(), LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond})
	at(st.eng, 0, func(now units.Time) { st.net.sendPFC(now, st.hosts[1].ports[0], 1<<3|1<<4, PFCQuanta) })
	newInjector(st.net, []pktSpec{
		{at: 0, src: 0, dst: 1, length: 1500, dscp: 3 << 3},
		{at: 0, src: 0, dst: 1, length: 1500, dscp: 4 << 3},
		{at: 0, src: 0, dst: 1, length: 1500, dscp: 4 << 3},
	})
	st.eng.Run()
	var order []uint8
	for _, d := range st.obs.deliveries {
		order = append(order, d.tc)
	}
	if len(order) != 3 || order[0] != 4 || order[1] != 4 || order[2] != 3 {
		t.Fatalf("delivery order by TC %v after a simultaneous expiry of TC3 and TC4, want [4 4 3]", order)
	}
}
