package analysis

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/records"
)

func TestDropCounter(t *testing.T) {
	// A 99 us burst of 100 drops, one per us, at 2 s of a 3 s run: the bins cover the
	// burst padded by 5% (1 us bins from 1999.995 ms), not the run in 15 ms bins.
	const at = 2_000_000_000_000
	reasons := []records.DropReason{records.ReasonEgressLimit, records.ReasonPoolFull, records.ReasonHeadroom, records.ReasonEgressLimit}
	rack, fabric := nid("rack-p0-r0"), nid("fabric-p0-f1")
	c := NewDropCounter(testNodes(), 3_000_000_000_000, 200)
	for k := range 100 {
		d := Drop{TimePs: at + int64(k)*1_000_000, Node: rack, Tier: records.TierRack, TC: 0, Reason: reasons[k%4], FlowID: 2, Bytes: 100}
		if d.Reason == records.ReasonHeadroom {
			d.Node, d.Tier, d.TC = fabric, records.TierFabric, 3
		}
		c.Add(d)
	}
	// Closed-loop control packets dropped, one long before the burst: counted in
	// Control only (not in the totals, reasons, nodes or the time bins).
	for _, k := range []records.PacketKind{records.KindAck, records.KindCNP, records.KindAck, records.KindAck, records.KindCNP} {
		c.Add(Drop{TimePs: 1000, Node: rack, Tier: records.TierRack, Reason: records.ReasonPoolFull, FlowID: 3, Bytes: 64, Kind: k})
	}
	got := c.Result()
	total := make([]int64, 109)
	counts := [][]int64{make([]int64, 109), make([]int64, 109), make([]int64, 109)}
	for k := range 100 {
		total[k+5]++
		counts[map[records.DropReason]int{records.ReasonEgressLimit: 0, records.ReasonHeadroom: 1, records.ReasonPoolFull: 2}[reasons[k%4]]][k+5]++
	}
	want := DropStats{
		Total: 100, Bytes: 10000, Lossless: 25,
		ByReason: map[records.DropReason]int64{records.ReasonHeadroom: 25, records.ReasonEgressLimit: 50, records.ReasonPoolFull: 25},
		ByNode:   map[string]int64{"rack-p0-r0": 75, "fabric-p0-f1": 25},
		ByTier:   map[Role]int64{"rack": 75, "fabric": 25},
		ByTC:     map[uint8]int64{3: 25, 0: 75},
		Rate: DropRate{StartPs: at - 5_000_000, BinPs: 1_000_000, Reasons: []records.DropReason{records.ReasonEgressLimit, records.ReasonHeadroom, records.ReasonPoolFull},
			Counts: counts, Total: total},
		Control: map[records.PacketKind]int64{records.KindAck: 3, records.KindCNP: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DropCounter\n got %+v\nwant %+v", got, want)
	}

	// Drops spread over the run, one after its end: bins of a 1-2-5 width over
	// [0, last drop], the last one included.
	c = NewDropCounter(nil, 1000, 4)
	for _, tp := range []int64{10, 260, 499, 999, 5000} {
		c.Add(Drop{TimePs: tp, Reason: records.ReasonPoolFull})
	}
	r := c.Result().Rate
	if r.StartPs != 0 || r.BinPs != 2000 || !reflect.DeepEqual(r.Total, []int64{4, 0, 1}) {
		t.Errorf("spread drops: %+v", r)
	}

	// No drops: the whole run.
	r = NewDropCounter(nil, 1000, 4).Result().Rate
	if r.StartPs != 0 || r.BinPs != 250 || len(r.Total) != 4 {
		t.Errorf("no drops: %+v", r)
	}
}

// The fine bins widen tenfold to take events on either side of their range, merging
// by sum or by maximum, and a window's bins are exact sums of fine bins.
func TestFineSeries(t *testing.T) {
	for _, useMax := range []bool{false, true} {
		f := newFineSeries(1, useMax)
		events := []int64{1000, 1001, 5, 123_456, 999_999, 1000}
		var sum, peak int64
		for i, tp := range events {
			v := int64(i + 1)
			b := f.index(tp)
			if useMax {
				f.rows[0][b] = max(f.rows[0][b], v)
			} else {
				f.rows[0][b] += v
			}
			sum, peak = sum+v, max(peak, v)
		}
		if f.lo != 5 || f.hi != 999_999 || f.width != 10_000 { // 5 after 1000: three widenings
			t.Errorf("max=%v: lo %d hi %d width %d", useMax, f.lo, f.hi, f.width)
		}
		w := f.ownWindow(2_000_000, 10)
		got := f.collect(0, w)
		var gs, gp int64
		for _, v := range got {
			gs, gp = gs+v, max(gp, v)
		}
		if !useMax && gs != sum || useMax && gp != peak {
			t.Errorf("max=%v: window %+v bins %v: sum %d peak %d, want %d %d", useMax, w, got, gs, gp, sum, peak)
		}
		if w.start != 0 || w.width != 200_000 || w.bins != 6 {
			t.Errorf("max=%v: window %+v", useMax, w)
		}
	}
}

func TestChooseWindow(t *testing.T) {
	for _, c := range []struct {
		lo, hi, unit int64
		bins         int
		sim          int64
		want         window
	}{
		// 3 ms at 1 s of a 3 s run: 3.3 ms padded, 20 us bins.
		{1_000_000_000_000, 1_003_000_000_000, 1, 200, 3_000_000_000_000, window{999_840_000_000, 20_000_000, 166}},
		// A lone event: 1 us around it (1,000,001 ps: 5 ns bins would need 201).
		{5_000_000, 5_000_000, 1, 200, 3_000_000_000_000, window{4_500_000, 10_000, 101}},
		// Near the start: clipped at 0; [0, 209,999,996) in 5 us bins.
		{100, 200_000_000, 1, 100, 1_000_000_000, window{0, 5_000_000, 42}},
		// Bins a multiple of a coarse fine width; run length unknown: no padding past
		// the last event.
		{0, 999, 1000, 200, 0, window{0, 1000, 1}},
		{0, 2_000_000, 1000, 10, 0, window{0, 500_000, 5}},
	} {
		if got := chooseWindow(c.lo, c.hi, c.unit, c.bins, c.sim); got != c.want {
			t.Errorf("chooseWindow(%d, %d, %d, %d, %d) = %+v, want %+v", c.lo, c.hi, c.unit, c.bins, c.sim, got, c.want)
		}
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
		{PortClass: PortClass{nid("a"), 0, 3}, TxPackets: 100, ECNMarked: 10},
		{PortClass: PortClass{nid("b"), 0, 3}, TxPackets: 100, ECNMarked: 0},
		{PortClass: PortClass{nid("c"), 1, 3}, TxPackets: 10, ECNMarked: 5},
	}
	got := ECNByQueue(qs, testNodes())
	if len(got) != 2 || got[0].Node != "c" || !near(got[0].Fraction, 0.5) || !near(got[1].Fraction, 0.1) {
		t.Errorf("ECNByQueue = %+v", got)
	}
	s := NewECNSeries(100, 2)
	s.Add(10, true)
	s.Add(20, false)
	s.Add(60, false)
	s.Add(700, true)
	s.Finish()
	if s.StartPs != 0 || s.BinPs != 500 || !reflect.DeepEqual(s.Delivered, []int64{3, 1}) || !reflect.DeepEqual(s.Fraction, []float64{1.0 / 3, 1}) {
		t.Errorf("ECNSeries = %+v", s)
	}
	if x, y := s.XY(1); s.Len() != 2 || x != 500 || y != 1 {
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

// Counts in the headline carry thousands separators, whatever their size.
func TestHeadlineThousands(t *testing.T) {
	s := &Summary{
		Run:   RunInfo{Injected: 2_000_000},
		Drops: DropStats{Total: 1_234_567, Lossless: 4_321, ByReason: map[records.DropReason]int64{records.ReasonHeadroom: 4_321, records.ReasonPoolFull: 1_230_246}},
		PFC: PFCSummary{PausedPorts: 1_024, PauseIntervals: 3_560, PausedPs: 5e9, LongestPs: 1e6,
			Storms: make([]Episode, 1_001), StormVictims: 12_345},
		ECN:   ECNSummary{Marked: 15_195, Queues: make([]QueueECN, 1_500), Delivered: 10, DeliveredCE: 5},
		Delay: DelaySummary{All: DelayCDF{Packets: 16_668, P50Ps: 1e6, P99Ps: 2e6}},
	}
	h := strings.Join(headline(s), "\n")
	for _, want := range []string{"1,234,567 packets dropped", "of 2,000,000 injected", "1,230,246 pool-full", "4,321 lossless",
		"1,024 port-classes in 3,560 intervals", "1,001 storms", "12,345 victim flows", "15,195 marks at 1,500 queues", "16,668 delivered packets"} {
		if !strings.Contains(h, want) {
			t.Errorf("headline lacks %q:\n%s", want, h)
		}
	}
	if regexp.MustCompile(`\d{4}`).MatchString(strings.ReplaceAll(h, "p99", "")) {
		t.Errorf("a number of four or more digits without separators:\n%s", h)
	}
}

// Buffer series kept by Analyze share their bins; activity in bursts far apart (1 s
// and 2 s of a 3 s run) gets a window per burst instead of 15 ms bins over the run.
func TestBufferWindows(t *testing.T) {
	const sim = 3_000_000_000_000
	a := NewBufferSeries(nid("rack-p0-r1"), 3, sim, TimeBins)
	b := NewBufferSeries(nid("rack-p1-r3"), 0, sim, TimeBins)
	for tp := int64(100_000_000); tp < sim; tp += 100_000_000 { // a sample every 100 us
		var va, vb int64
		if tp >= 1_000_000_000_000 && tp <= 1_003_000_000_000 {
			va = 1000 + (tp-1_000_000_000_000)/1_000_000
		}
		if tp >= 2_000_000_000_000 && tp <= 2_002_000_000_000 {
			vb = 7000
		}
		a.Add(tp, va, 0, va, va)
		b.Add(tp, vb, 0, vb, vb)
	}
	a.Finish()
	b.Finish()
	if a.Windows != 1 || a.StartPs > 1_000_000_000_000 || len(a.Ingress) > TimeBins || slices.Max(a.Ingress) != 4000 {
		t.Errorf("own window: start %d width %d bins %d peak %d", a.StartPs, a.BinPs, len(a.Ingress), slices.Max(a.Ingress))
	}
	series := []BufferSeries{*a, *b}
	commonWindow(series)
	for _, s := range series {
		if s.Windows != 2 || len(s.TimesPs) != len(s.Ingress) || len(s.TimesPs) > 2*TimeBins || s.BinPs != series[0].BinPs {
			t.Fatalf("%s: %d windows, %d times, %d bins, width %d", s.Node, s.Windows, len(s.TimesPs), len(s.Ingress), s.BinPs)
		}
		jumps := 0
		for i := 1; i < len(s.TimesPs); i++ {
			if d := s.TimesPs[i] - s.TimesPs[i-1]; d != s.BinPs {
				jumps++
				if d < 900_000_000_000 {
					t.Errorf("%s: a jump of %d ps between windows", s.Node, d)
				}
			}
		}
		if jumps != 1 || s.BinPs > 20_000_000 {
			t.Errorf("%s: %d jumps, bins of %d ps (a 3 ms burst should span 150 bins or more)", s.Node, jumps, s.BinPs)
		}
	}
	if slices.Max(series[0].Ingress) != 4000 || slices.Max(series[1].Ingress) != 7000 {
		t.Errorf("peaks %d %d", slices.Max(series[0].Ingress), slices.Max(series[1].Ingress))
	}
}
