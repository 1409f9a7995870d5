package analysis

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

func ev(t int64, node string, port int32, peer string, kind records.PFCEventKind, quanta uint16) PFCEvent {
	return PFCEvent{TimePs: t, Node: nid(node), Port: port, Peer: nid(peer), TC: 3, Kind: kind, Quanta: quanta}
}

func TestPauseIntervals(t *testing.T) {
	fa := PortClass{nid("fabric-p0-f0"), 2, 3}
	faName, r0 := "fabric-p0-f0", nid("rack-p0-r0")
	cases := []struct {
		name    string
		events  []PFCEvent
		end     int64
		want    []PauseInterval
		ignored int
	}{
		{"pause-refresh-resume", []PFCEvent{
			ev(100, faName, 2, "rack-p0-r0", records.EventRxPause, 65535),
			ev(200, faName, 2, "rack-p0-r0", records.EventRxPause, 65535),
			ev(500, faName, 2, "rack-p0-r0", records.EventRxResume, 0),
		}, 1000, []PauseInterval{{PortClass: fa, Peer: r0, PeerPort: -1, StartPs: 100, EndPs: 500, Refreshes: 1, EndedBy: EndResume}}, 0},
		{"expiry-closes", []PFCEvent{
			ev(100, faName, 2, "rack-p0-r0", records.EventRxPause, 65535),
			ev(335_644_260, faName, 2, "rack-p0-r0", records.EventExpire, 0),
			ev(400_000_000, faName, 2, "rack-p0-r0", records.EventRxResume, 0), // after expiry: nothing open
		}, 1e9, []PauseInterval{{PortClass: fa, Peer: r0, PeerPort: -1, StartPs: 100, EndPs: 335_644_260, EndedBy: EndExpire}}, 1},
		{"resume-without-pause-ignored", []PFCEvent{
			ev(100, faName, 2, "rack-p0-r0", records.EventRxResume, 0),
			ev(150, faName, 2, "rack-p0-r0", records.EventExpire, 0),
		}, 1000, nil, 2},
		{"open-at-end", []PFCEvent{
			ev(700, faName, 2, "rack-p0-r0", records.EventRxPause, 100),
		}, 1000, []PauseInterval{{PortClass: fa, Peer: r0, PeerPort: -1, StartPs: 700, EndPs: 1000, EndedBy: EndSim}}, 0},
		{"zero-quanta-pause-resumes", []PFCEvent{
			ev(100, faName, 2, "rack-p0-r0", records.EventRxPause, 10),
			ev(300, faName, 2, "rack-p0-r0", records.EventRxPause, 0),
		}, 1000, []PauseInterval{{PortClass: fa, Peer: r0, PeerPort: -1, StartPs: 100, EndPs: 300, EndedBy: EndResume}}, 0},
		{"tx-names-peer-port", []PFCEvent{
			ev(90, "rack-p0-r0", 17, faName, records.EventTxPause, 65535),
			ev(100, faName, 2, "rack-p0-r0", records.EventRxPause, 65535),
			ev(110, "rack-p0-r0", 17, faName, records.EventTxResume, 0),
			ev(120, faName, 2, "rack-p0-r0", records.EventRxResume, 0),
		}, 1000, []PauseInterval{{PortClass: fa, Peer: r0, PeerPort: 17, StartPs: 100, EndPs: 120, EndedBy: EndResume}}, 0},
		{"classes-are-separate", []PFCEvent{
			ev(100, faName, 2, "rack-p0-r0", records.EventRxPause, 10),
			{TimePs: 200, Node: fa.Node, Port: 2, Peer: r0, TC: 4, Kind: records.EventRxResume},
			ev(300, faName, 2, "rack-p0-r0", records.EventRxResume, 0),
		}, 1000, []PauseInterval{{PortClass: fa, Peer: r0, PeerPort: -1, StartPs: 100, EndPs: 300, EndedBy: EndResume}}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b PauseBuilder
			for _, e := range c.events {
				if err := b.Add(e); err != nil {
					t.Fatal(err)
				}
			}
			got := b.Finish(c.end)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("intervals\n got %+v\nwant %+v", got, c.want)
			}
			if b.Ignored != c.ignored {
				t.Errorf("ignored = %d, want %d", b.Ignored, c.ignored)
			}
		})
	}
}

func TestPauseIntervalsOrder(t *testing.T) {
	_, err := PauseIntervals([]PFCEvent{ev(200, "a", 0, "b", records.EventRxPause, 1), ev(100, "a", 0, "b", records.EventRxResume, 0)}, 1000)
	if !errors.Is(err, ErrPFCOrder) {
		t.Fatalf("err = %v, want ErrPFCOrder", err)
	}
}

func TestPauseStats(t *testing.T) {
	a := PortClass{nid("a"), 1, 3}
	b := PortClass{nid("b"), 0, 3}
	ivs := []PauseInterval{
		{PortClass: a, Peer: nid("x"), StartPs: 0, EndPs: 100},
		{PortClass: b, Peer: nid("y"), StartPs: 50, EndPs: 60},
		{PortClass: a, Peer: nid("x"), StartPs: 200, EndPs: 500},
	}
	got := PauseStats(ivs, 1000, testNodes())
	want := []PausedPort{
		{Class: a, PortName: PortName{"a", 1, 3}, Peer: "x", Intervals: 2, TotalPs: 400, LongestPs: 300, Fraction: 0.4, FirstPs: 0, LastEndPs: 500},
		{Class: b, PortName: PortName{"b", 0, 3}, Peer: "y", Intervals: 1, TotalPs: 10, LongestPs: 10, Fraction: 0.01, FirstPs: 50, LastEndPs: 60},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PauseStats\n got %+v\nwant %+v", got, want)
	}
}

func iv(node string, port int32, peer string, peerPort int32, start, end int64) PauseInterval {
	return PauseInterval{PortClass: PortClass{nid(node), port, 3}, Peer: nid(peer), PeerPort: peerPort, StartPs: start, EndPs: end}
}

type epWant struct {
	start, dur int64
	ports      int
	depth      int
	root       string
	storm      bool
	members    []int32
}

func TestEpisodes(t *testing.T) {
	// The example in Episode's doc.
	doc := []PauseInterval{
		iv("F", 2, "R", 7, 0, 1000),  // I1: R pauses F
		iv("S", 0, "F", 1, 200, 800), // I2: F, paused, pauses S
		iv("H", 0, "S", 4, 300, 500), // I3: S, paused, pauses H
		iv("G", 1, "R", 8, 100, 300), // I4: fan-out of R
		iv("Y", 5, "X", 0, 50, 400),  // I5: unrelated
	}
	cases := []struct {
		name      string
		intervals []PauseInterval
		stormPs   int64
		want      []epWant
	}{
		{"doc-example", doc, 0, []epWant{
			{0, 1000, 4, 3, "R:7", true, []int32{0, 3, 1, 2}},
			{50, 350, 1, 1, "X:0", false, []int32{4}},
		}},
		{"doc-example-short-threshold", doc, 350, []epWant{
			{0, 1000, 4, 3, "R:7", true, []int32{0, 3, 1, 2}},
			{50, 350, 1, 1, "X:0", true, []int32{4}},
		}},
		{"touching-not-overlapping", []PauseInterval{
			iv("A", 0, "B", -1, 0, 100),
			iv("Z", 0, "A", -1, 100, 200),
		}, 0, []epWant{
			{0, 100, 1, 1, "B", false, []int32{0}},
			{100, 100, 1, 1, "A", false, []int32{1}},
		}},
		{"upstream-started-first-linked-not-deeper", []PauseInterval{
			iv("Z", 0, "A", -1, 0, 500),
			iv("A", 0, "B", -1, 100, 300),
		}, 0, []epWant{{0, 500, 2, 1, "A", false, []int32{0, 1}}}},
		{"overlapping-unlinked-separate", []PauseInterval{
			iv("A", 0, "B", -1, 0, 500),
			iv("C", 0, "D", -1, 100, 300),
		}, 0, []epWant{
			{0, 500, 1, 1, "B", false, []int32{0}},
			{100, 200, 1, 1, "D", false, []int32{1}},
		}},
		{"other-class-linked", []PauseInterval{
			iv("A", 0, "B", -1, 0, 500),
			{PortClass: PortClass{nid("Z"), 0, 4}, Peer: nid("A"), PeerPort: -1, StartPs: 100, EndPs: 300},
		}, 0, []epWant{{0, 500, 2, 2, "B", true, []int32{0, 1}}}},
		{"classes-of-one-frame-are-one-episode", []PauseInterval{
			iv("A", 0, "B", 5, 0, 500),
			{PortClass: PortClass{nid("A"), 0, 4}, Peer: nid("B"), PeerPort: 5, StartPs: 0, EndPs: 500},
		}, 0, []epWant{{0, 500, 2, 1, "B:5", false, []int32{0, 1}}}},
		{"deadlock-cycle", []PauseInterval{
			iv("A", 0, "B", -1, 0, 1000),
			iv("B", 1, "A", -1, 0, 1000),
		}, 0, []epWant{{0, 1000, 2, 2, "B", true, []int32{0, 1}}}},
		{"long-single-pause-is-storm", []PauseInterval{
			iv("A", 0, "B", -1, 0, 2_000_000_000),
		}, 0, []epWant{{0, 2_000_000_000, 1, 1, "B", true, []int32{0}}}},
		{"same-port-twice", []PauseInterval{
			iv("A", 0, "B", -1, 0, 500),
			iv("A", 1, "B", -1, 100, 200),
			iv("A", 0, "B", -1, 400, 600), // fan-out link to the second... via B
		}, 0, []epWant{{0, 600, 2, 1, "B", false, []int32{0, 1, 2}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Episodes(c.intervals, testNodes(), c.stormPs)
			if len(got) != len(c.want) {
				t.Fatalf("got %d episodes %+v, want %d", len(got), got, len(c.want))
			}
			for i, w := range c.want {
				g := got[i]
				if g.StartPs != w.start || g.DurationPs != w.dur || g.Ports != w.ports || g.Depth != w.depth ||
					g.Root != w.root || g.Storm != w.storm || !reflect.DeepEqual(g.Intervals, w.members) {
					t.Errorf("episode %d\n got %+v\nwant %+v", i, g, w)
				}
			}
		})
	}
}

func TestVictims(t *testing.T) {
	ivs := []PauseInterval{
		iv("F", 2, "R", 7, 1000, 2000),
		iv("S", 0, "F", 1, 1200, 1800),
	}
	eps := Episodes(ivs, testNodes(), 0)
	flows := []FlowPath{
		{FlowID: 1, TC: 3, FirstPs: 0, LastPs: 1500, Hops: []PortKey{{nid("H"), 0}, {nid("S"), 0}, {nid("F"), 2}}}, // both ports: once
		{FlowID: 2, TC: 3, FirstPs: 2000, LastPs: 3000, Hops: []PortKey{{nid("F"), 2}}},                            // after the pause
		{FlowID: 3, TC: 4, FirstPs: 0, LastPs: 3000, Hops: []PortKey{{nid("F"), 2}}},                               // other class
		{FlowID: 4, TC: 3, FirstPs: 1700, LastPs: 1700, Hops: []PortKey{{nid("S"), 0}}},                            // inside
		{FlowID: 5, TC: 3, FirstPs: 0, LastPs: 3000, Hops: []PortKey{{nid("F"), 1}}},                               // other port
	}
	ids := Victims(eps, ivs, flows, -1)
	if len(eps) != 1 || eps[0].Victims != 2 || !reflect.DeepEqual(ids[0], []uint64{1, 4}) {
		t.Errorf("victims = %v, episodes %+v", ids, eps)
	}
}

func TestDistinctVictims(t *testing.T) {
	ivs := []PauseInterval{
		iv("F", 2, "R", 7, 1000, 2000),   // episode 0: depth 1, 1000 ps
		iv("Q", 1, "P", 0, 1500, 5500),   // episode 1: depth 1, 4000 ps
		iv("K", 0, "L", 0, 10000, 10100), // episode 2: unrelated, nobody crosses it
	}
	eps := Episodes(ivs, testNodes(), 0)
	v := NewVictimCounter(eps, ivs, -1)
	for _, f := range []FlowPath{
		{FlowID: 1, TC: 3, FirstPs: 0, LastPs: 3000, Hops: []PortKey{{nid("F"), 2}, {nid("Q"), 1}}}, // both episodes
		{FlowID: 2, TC: 3, FirstPs: 0, LastPs: 1200, Hops: []PortKey{{nid("F"), 2}}},                // the short one
	} {
		v.Add(&f)
	}
	v.Flush() // Add queues; results are complete after Flush
	if eps[0].Victims != 2 || eps[1].Victims != 1 {
		t.Errorf("per-episode victims %d %d", eps[0].Victims, eps[1].Victims)
	}
	for _, c := range []struct {
		threshold int64
		want      int
	}{{1000, 2}, {4000, 1}, {4001, 0}} {
		if got := v.Distinct(c.threshold); got != c.want {
			t.Errorf("Distinct(%d) = %d, want %d", c.threshold, got, c.want)
		}
	}
}

func TestAnalyzeStormThreshold(t *testing.T) {
	ivs := []PauseInterval{iv("A", 0, "B", 1, 1000, 6000)}
	run := &Run{Info: RunInfo{SimPs: 10000}, Intervals: ivs, Episodes: Episodes(ivs, testNodes(), 0)}
	for _, c := range []struct {
		threshold units.Time
		storms    int
		says      string
	}{{0, 0, "no storms"}, {5000, 1, "1 storm (deepest 1 hop, longest 5 ns)"}, {5001, 0, "no storms"}} {
		s, err := Analyze(run, Options{StormDurationPs: int64(c.threshold)})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.PFC.Storms) != c.storms || !strings.Contains(strings.Join(s.Headline, " "), c.says) {
			t.Errorf("threshold %v: %d storms, headline %q", c.threshold, len(s.PFC.Storms), s.Headline)
		}
	}
}
