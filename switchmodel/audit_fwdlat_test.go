package switchmodel

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// docs/model.md#headroom-sizing / 9: under Headroom auto there is no headroom drop "for any trace", N-to-1
// incasts included. docs/model.md#ports-links-and-scheduling lets ForwardingLatency (any value >= 0) delay a frame
// before ingress admission, i.e. before the pause decision, but 3.10's W has no term
// for it: the C*ForwardingLatency/8 wire bytes in the forwarding line when the pause is
// decided all land in headroom.
func TestAuditForwardingLatencyHeadroom(t *testing.T) {
	for _, length := range []int32{46, 1500} {
		for _, fwd := range []units.Time{0, units.Microsecond, 4 * units.Microsecond, 20 * units.Microsecond} {
			t.Run("L"+itoa(int(length))+"/"+fwd.String(), func(t *testing.T) {
				cfg := defaultSwitch()
				cfg.ForwardingLatency = fwd
				st := newStar(t, 9, cfg, LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond})
				if len(st.warns) != 0 {
					t.Fatalf("warnings %v", st.warns)
				}
				n := 2000
				if length < 100 {
					n = 20000
				}
				newInjector(st.net, incast([]int32{1, 2, 3, 4, 5, 6, 7, 8}, 0, n, length, 3<<3, 0, 100*units.Gbps))
				st.eng.Run()
				if d := st.net.Counters().Dropped[DropHeadroom]; d != 0 {
					t.Errorf("ForwardingLatency %v, L=%d: %d headroom drops under Headroom auto (headroom %d B per port)", fwd, length, d, st.sw.Headroom(0, 1))
				}
				checkDrained(t, st.net)
			})
		}
	}
}
