package analysis

import (
	"slices"
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
	if failures(&records.Run{}, nil, nil) != nil {
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
	f := failures(run, nil, ivs)
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
