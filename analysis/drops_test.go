package analysis

import (
	"reflect"
	"testing"
)

func TestDropCounter(t *testing.T) {
	c := NewDropCounter(1000, 4) // bins of 250 ps
	for _, d := range []Drop{
		{TimePs: 10, Node: "rack-p0-r0", Tier: "rack", TC: 3, Reason: "headroom", FlowID: 1, Bytes: 1000},
		{TimePs: 260, Node: "rack-p0-r0", Tier: "rack", TC: 0, Reason: "egress-limit", FlowID: 2, Bytes: 100},
		{TimePs: 499, Node: "fabric-p0-f1", Tier: "fabric", TC: 0, Reason: "egress-limit", FlowID: 2, Bytes: 100},
		{TimePs: 999, Node: "fabric-p0-f1", Tier: "fabric", TC: 0, Reason: "pool-full", FlowID: 3, Bytes: 50},
		{TimePs: 5000, Node: "fabric-p0-f1", Tier: "fabric", TC: 0, Reason: "pool-full", FlowID: 3, Bytes: 50}, // after the end: last bin
	} {
		c.Add(d)
	}
	got := c.Result()
	want := DropStats{
		Total: 5, Bytes: 1300, Lossless: 1,
		ByReason: map[string]int64{"headroom": 1, "egress-limit": 2, "pool-full": 2},
		ByNode:   map[string]int64{"rack-p0-r0": 2, "fabric-p0-f1": 3},
		ByTier:   map[string]int64{"rack": 2, "fabric": 3},
		ByTC:     map[string]int64{"3": 1, "0": 4},
		Rate: DropRate{BinPs: 250, Reasons: []string{"egress-limit", "headroom", "pool-full"},
			Counts: [][]int64{{0, 2, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, 2}}, Total: []int64{1, 2, 0, 2}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DropCounter\n got %+v\nwant %+v", got, want)
	}
}

func TestTopFlowsByDrops(t *testing.T) {
	flows := []FlowDrops{{FlowID: 1, Dropped: 5}, {FlowID: 2, Dropped: 0}, {FlowID: 3, Dropped: 9}, {FlowID: 4, Dropped: 5}, {FlowID: 5, Dropped: 1}}
	got := TopFlowsByDrops(flows, 3)
	var ids []int64
	for _, f := range got {
		ids = append(ids, f.FlowID)
	}
	if !reflect.DeepEqual(ids, []int64{3, 1, 4}) {
		t.Errorf("top flows = %v, want [3 1 4]", ids)
	}
	if got := TopFlowsByDrops(flows, 0); len(got) != 0 {
		t.Errorf("k=0 kept %v", got)
	}
}

func TestECN(t *testing.T) {
	qs := []QueueCounters{
		{PortClass: PortClass{"a", 0, 3}, TxPackets: 100, ECNMarked: 10},
		{PortClass: PortClass{"b", 0, 3}, TxPackets: 100, ECNMarked: 0},
		{PortClass: PortClass{"c", 1, 3}, TxPackets: 10, ECNMarked: 5},
	}
	got := ECNByQueue(qs)
	if len(got) != 2 || got[0].Node != "c" || !near(got[0].Fraction, 0.5) || !near(got[1].Fraction, 0.1) {
		t.Errorf("ECNByQueue = %+v", got)
	}
	s := NewECNSeries(100, 2)
	s.Add(10, true)
	s.Add(20, false)
	s.Add(60, false)
	s.Add(700, true)
	s.Finish()
	if !reflect.DeepEqual(s.Delivered, []int64{2, 2}) || !reflect.DeepEqual(s.Fraction, []float64{0.5, 0.5}) {
		t.Errorf("ECNSeries = %+v", s)
	}
	if x, y := s.XY(1); s.Len() != 2 || x != 50 || y != 0.5 {
		t.Errorf("ECNSeries XY(1) = %v, %v", x, y)
	}
}

func TestDelayQuantile(t *testing.T) {
	b := []DelayBucket{{200, 400, 20}, {0, 100, 50}, {100, 200, 30}, {400, 800, 0}}
	cases := []struct{ p, want float64 }{
		{0, 0}, {0.25, 50}, {0.5, 100}, {0.9, 300}, {0.99, 390}, {1, 400},
	}
	for _, c := range cases {
		if got := DelayQuantile(b, c.p); !near(got, c.want) {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	cdf := NewDelayCDF(3, b)
	wantPts := []CDFPoint{{0, 0}, {100, 0.5}, {200, 0.8}, {400, 1}}
	if cdf.Packets != 100 || !near(cdf.P99Ps, 390) || !near(cdf.P50Ps, 100) || cdf.MaxPs != 400 || !reflect.DeepEqual(cdf.Points, wantPts) {
		t.Errorf("CDF = %+v", cdf)
	}
	if cdf.Len() != 4 {
		t.Errorf("Len = %d", cdf.Len())
	}
	if x, y := cdf.XY(2); x != 200 || y != 0.8 {
		t.Errorf("XY(2) = %v, %v", x, y)
	}
	if e := NewDelayCDF(0, nil); e.Packets != 0 || e.Points != nil || DelayQuantile(nil, 0.5) != 0 {
		t.Errorf("empty CDF = %+v", e)
	}
}
