package switchmodel

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// docs/model.md#event-order-and-determinism: a frame's arrival takes the key of its
// sender when the frame starts, whoever schedules the event. The switch is node 0,
// host i node i+1. One host sends a train of two frames at t=0 (the second frame's
// arrival is scheduled by the switch, when the first arrives), the other one frame at
// t=ser, which arrives with the train's second at 2 ser + prop: the lower sending
// node's arrival runs first, so it leaves first for host 2. (Had the switch's own key
// ordered the train's second arrival, as when the receiver schedules it, the train
// would always go first.) The switch's egress finishes the train's first frame at that
// same picosecond: its transmit-done (node 0) runs before both arrivals.
func TestArrivalKeyIsTheSenders(t *testing.T) {
	c := 100 * units.Gbps
	prop := units.Microsecond
	ser := units.SerializationTime(1518+20, c) // 1500-byte packets
	for _, tc := range []struct {
		name          string
		train, single int32
		want          []int64 // trace indices in delivery order
	}{
		// Train from host 1 (node 2), single from host 0 (node 1): the single first.
		{"train from the higher node", 1, 0, []int64{0, 2, 1}},
		// Train from host 0 (node 1), single from host 1 (node 2): the train first.
		{"train from the lower node", 0, 1, []int64{0, 1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStar(t, 3, defaultSwitch(), LinkSpec{Speed: c, PropagationDelay: prop})
			newInjector(st.net, []pktSpec{
				{at: 0, src: tc.train, dst: 2, length: 1500, flow: 1},
				{at: 0, src: tc.train, dst: 2, length: 1500, flow: 1},
				{at: ser, src: tc.single, dst: 2, length: 1500, flow: 2},
			})
			st.eng.Run()
			checkDrained(t, st.net)
			d := st.obs.deliveries
			if len(d) != 3 {
				t.Fatalf("%d deliveries, want 3", len(d))
			}
			// The switch sends the three back to back from ser + prop on.
			for i, w := range tc.want {
				at := units.Time(i+2)*ser + 2*prop
				if d[i].trace != w || d[i].at != at {
					t.Errorf("delivery %d: trace %d at %v, want trace %d at %v", i, d[i].trace, d[i].at, w, at)
				}
			}
		})
	}
}
