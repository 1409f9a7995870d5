package analysis

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/records"
)

// TestEventWindows: events at 10 and 20 with a window of 5 count a value t in [10-5,
// 10) as before the first, in [10, 15) as after it, and so on; 25 is in no window
// ([20, 25) excludes it), 4 neither.
func TestEventWindows(t *testing.T) {
	c := newWindowCounter([]int64{10, 20}, 5)
	for _, v := range []int64{4, 5, 9, 10, 14, 15, 19, 20, 24, 25} {
		c.add(v)
	}
	if want := []int64{2, 2}; !slices.Equal(c.before, want) { // 5, 9; 15, 19
		t.Errorf("before %v, want %v", c.before, want)
	}
	if want := []int64{2, 2}; !slices.Equal(c.after, want) { // 10, 14; 20, 24
		t.Errorf("after %v, want %v", c.after, want)
	}
	// Overlapping windows: events at 10 and 12 (window 5) both hold 11 after and 7 before.
	c = newWindowCounter([]int64{10, 12}, 5)
	c.add(11)
	c.add(7)
	if !slices.Equal(c.after, []int64{1, 0}) || !slices.Equal(c.before, []int64{1, 2}) {
		t.Errorf("overlapping: before %v after %v, want [1 2] and [1 0]", c.before, c.after)
	}
	var nilc *windowCounter
	nilc.add(3) // a run without events counts nothing and does not fail
}

// TestFailures: run.json's event with its after-loads gives the most loaded member's
// load over its set's live-member mean: 600 bytes against (600 + 200 + 100) / 3 live
// members (the dead one's 0 left out) = 2; pause intervals starting in the windows are
// counted; a run with none of events, watchdog or deadlocks has no Failures.
func TestFailures(t *testing.T) {
	if failures(&records.Run{}, nil, nil, nil) != nil {
		t.Fatal("Failures for a run without events, watchdog or deadlocks")
	}
	ml := records.EventMember{Node: "f0", Set: 2, Member: 1, Port: 5, Peer: "s1", Live: true, Bytes: 600, Share: 600.0 / 900}
	run := &records.Run{Events: []records.Event{{Kind: "switch-down", Target: "s0", Cycle: -1, TimePs: EventWindowPs * 3, FlowsMoved: 7,
		Dropped: map[records.DropReason]int64{records.ReasonLinkDown: 4},
		After: &records.EventAfter{Sets: []records.EventSet{
			{Node: "f1", Set: 2, Members: []records.EventMember{{Live: true, Bytes: 10}}},
			{Node: "f0", Set: 2, Members: []records.EventMember{{Live: false, Bytes: 0}, ml, {Live: true, Bytes: 200}, {Live: true, Bytes: 100}}},
		}, MostLoaded: &ml}}}}
	ivs := []PauseInterval{{StartPs: EventWindowPs*2 + 1}, {StartPs: EventWindowPs * 3}, {StartPs: EventWindowPs*4 - 1}, {StartPs: EventWindowPs * 4}}
	f := failures(run, nil, nil, ivs)
	if f == nil || len(f.Events) != 1 || len(f.Deadlocks) != 0 || f.Deadlocks == nil {
		t.Fatalf("failures %+v", f)
	}
	e := f.Events[0]
	if e.MaxMean != 2 || e.MostLoaded.Peer != "s1" || e.FlowsMoved != 7 || e.FailureDrops[records.ReasonLinkDown] != 4 {
		t.Errorf("event %+v, want max/mean 2, s1, 7 moved, 4 link-down", e)
	}
	if e.PausesBefore != 1 || e.PausesAfter != 2 {
		t.Errorf("pauses %d before, %d after, want 1 and 2", e.PausesBefore, e.PausesAfter)
	}
}

// TestSlowdownWindows: messages started around events at 100 and 200 (window 50):
// before the first 4 messages of slowdowns 1, 2, 3, 4: p50 the ceil(0.5 x 4) = 2nd
// smallest, 2, p99 the 4th, 4; after it 3 messages 5, 1 and one unfinished: p50 the
// 2nd, 5, p99 the 3rd, unfinished (+Inf, named). The second event's before window
// [150, 200) is empty (NaN quantiles); its after window holds 210's 7 alone.
func TestSlowdownWindows(t *testing.T) {
	c := newSlowdownWindows([]int64{100, 200}, 50)
	inf := math.Inf(1)
	for _, m := range []struct {
		t int64
		v float64
	}{{50, 3}, {60, 1}, {99, 4}, {70, 2}, {100, 5}, {149, inf}, {120, 1}, {210, 7}, {49, 9}, {250, 9}} {
		c.add(m.t, m.v)
	}
	b, a := windowSlowdown(c.before[0]), windowSlowdown(c.after[0])
	if b.Messages != 4 || b.Complete != 4 || b.P50 != 2 || b.P99 != 4 || len(b.Unfinished) != 0 {
		t.Errorf("before %+v, want 4 messages, p50 2, p99 4", b)
	}
	if a.Messages != 3 || a.Complete != 2 || a.P50 != 5 || !math.IsInf(a.P99, 1) || !slices.Equal(a.Unfinished, []string{"slowdown_p99"}) {
		t.Errorf("after %+v, want 3 messages, 2 complete, p50 5, p99 unfinished", a)
	}
	e := windowSlowdown(c.before[1])
	if e.Messages != 0 || !math.IsNaN(e.P50) || !math.IsNaN(e.P99) {
		t.Errorf("empty window %+v", e)
	}
	if x := windowSlowdown(c.after[1]); x.Messages != 1 || x.P50 != 7 || x.P99 != 7 {
		t.Errorf("second after %+v, want 7 alone", x)
	}
	js, err := json.Marshal(a)
	if err != nil || !strings.Contains(string(js), `"slowdown_p99":null`) {
		t.Errorf("json %s %v: want p99 null", js, err)
	}
}
