package analysis

import (
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// The fixture: two pods, one rack each with two fabric uplinks, two spine planes of
// two spines. Node indices:
var fixtureNodes = []string{
	"host-p0-r0-h0", "host-p1-r0-h0", // 0 1
	"rack-p0-r0", "rack-p1-r0", // 2 3
	"fabric-p0-f0", "fabric-p0-f1", "fabric-p1-f0", "fabric-p1-f1", // 4 5 6 7
	"spine-s0-0", "spine-s0-1", "spine-s1-0", "spine-s1-1", // 8 9 10 11
}

const (
	nH0, nH1, nR0, nR1, nF0, nF1, nG0, nG1, nS00, nS01, nS10, nS11 = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
)

// links: node -> peers in port order.
var fixtureLinks = map[int32][]int32{
	nH0: {nR0}, nH1: {nR1},
	nR0: {nH0, nF0, nF1}, nR1: {nH1, nG0, nG1},
	nF0: {nR0, nS00, nS01}, nF1: {nR0, nS10, nS11},
	nG0: {nR1, nS00, nS01}, nG1: {nR1, nS10, nS11},
	nS00: {nF0, nG0}, nS01: {nF0, nG0}, nS10: {nF1, nG1}, nS11: {nF1, nG1},
}

func tierOf(n int32) records.Tier {
	switch {
	case n <= nH1:
		return records.TierHost
	case n <= nR1:
		return records.TierRack
	case n <= nG1:
		return records.TierFabric
	}
	return records.TierSpine
}

type fixture struct {
	drops, pfc, packets bool
	complete            bool
	lieRows             bool // run.json lists a wrong row count for flows.arrow
	// closed: a closed-loop run: transport.arrow (rows out of time order, as DCQCN's
	// lazily written rate changes are), its run.json counts, flows re-sent by DCQCN
	// (flow 1) and DCTCP (flow 2) that both completed.
	closed bool
	// noMarks: no queue marked CE (with drops and pfc off: nothing congested);
	// offeredLoad: run.json's offered_load, raw (absent when empty).
	noMarks     bool
	offeredLoad string
}

func writeFixture(t *testing.T, fx fixture) string {
	t.Helper()
	dir := t.TempDir()
	d := records.Dictionaries{Nodes: fixtureNodes}
	rows := map[string]int64{}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	write := func(name string, appendAll func(path string) int64) {
		rows[name] = appendAll(filepath.Join(dir, name))
	}
	write(records.PortsFile, func(p string) int64 {
		w, err := records.NewPortsWriter(p, d)
		must(err)
		for n := int32(0); n < int32(len(fixtureNodes)); n++ {
			for port, peer := range fixtureLinks[n] {
				r := records.PortRow{Node: n, Tier: tierOf(n), Port: int32(port), Peer: peer, TC: 3, TxPackets: 10, TxBytes: 10}
				if n == nH0 {
					r.TxBytes = 100 // the busiest host link: 800 bits in the 10 ns simulated, 80% of 100 Gbps
				}
				if n == nR1 && port == 0 && !fx.noMarks {
					r.ECNMarked = 4
				}
				must(w.Append(&r))
			}
		}
		must(w.Close())
		return w.Rows()
	})
	write(records.LoadBalanceFile, func(p string) int64 {
		w, err := records.NewLoadBalanceWriter(p, d)
		must(err)
		for _, n := range []int32{nR0, nR1, nF0, nF1, nG0, nG1} {
			for m := int32(0); m < 2; m++ {
				r := records.LoadBalanceRow{Node: n, Tier: tierOf(n), Set: 0, Member: m, Port: m + 1, Peer: fixtureLinks[n][m+1], HashMethod: records.HashCRC32}
				// flow 1: r0 member 1, f1 member 0; flow 2: r1 member 0, g0 member 1.
				if (n == nR0 && m == 1) || (n == nF1 && m == 0) {
					r.Flows, r.Bytes = 1, 3000
				}
				if (n == nR1 && m == 0) || (n == nG0 && m == 1) {
					r.Flows, r.Bytes = 1, 1000
				}
				must(w.Append(&r))
			}
		}
		must(w.Close())
		return w.Rows()
	})
	write(records.PFCFile, func(p string) int64 {
		w, err := records.NewPFCWriter(p, d)
		must(err)
		if fx.pfc {
			for _, r := range []records.PFCRow{
				{TimePs: 1000, Node: nR1, Port: 2, Peer: nG1, TC: 3, Event: records.EventTxPause, Quanta: 65535},
				{TimePs: 1000, Node: nG1, Port: 0, Peer: nR1, TC: 3, Event: records.EventRxPause, Quanta: 65535},
				{TimePs: 2000, Node: nS10, Port: 1, Peer: nG1, TC: 3, Event: records.EventRxPause, Quanta: 65535},
				{TimePs: 5000, Node: nS10, Port: 1, Peer: nG1, TC: 3, Event: records.EventRxResume},
				{TimePs: 6000, Node: nG1, Port: 0, Peer: nR1, TC: 3, Event: records.EventExpire},
				{TimePs: 7000, Node: nG0, Port: 0, Peer: nR1, TC: 3, Event: records.EventRxResume}, // nothing open
			} {
				must(w.Append(&r))
			}
		}
		must(w.Close())
		return w.Rows()
	})
	write(records.DropsFile, func(p string) int64 {
		w, err := records.NewDropsWriter(p, d)
		must(err)
		if fx.drops {
			for _, r := range []records.DropRow{
				{TimePs: 1500, Node: nR1, Tier: records.TierRack, Port: 1, TC: 3, Reason: records.ReasonHeadroom, FlowID: 1, Bytes: 1000},
				{TimePs: 2500, Node: nF1, Tier: records.TierFabric, Port: 1, TC: 3, Reason: records.ReasonEgressLimit, FlowID: 1, Bytes: 1000},
				{TimePs: 9500, Node: nG0, Tier: records.TierFabric, Port: 0, TC: 3, Reason: records.ReasonEgressLimit, FlowID: 2, Bytes: 500},
			} {
				must(w.Append(&r))
			}
		}
		must(w.Close())
		return w.Rows()
	})
	dropped := func(n int64) int64 {
		if fx.drops {
			return n
		}
		return 0
	}
	if fx.closed {
		write(records.TransportFile, func(p string) int64 {
			w, err := records.NewTransportWriter(p, d)
			must(err)
			for _, r := range []records.TransportRow{
				{TimePs: 1200, FlowID: 1, Node: nH1, Event: records.EventCNP},
				{TimePs: 2400, FlowID: 1, Node: nH1, Event: records.EventCNP},
				{TimePs: 9000, FlowID: 2, Node: nH1, Event: records.EventWindowCut, Value: 18000},
				{TimePs: 1500, FlowID: 1, Node: nH0, Event: records.EventRateCut, Value: 50e9}, // written late: its timer was evaluated at 9000
				{TimePs: 5500, FlowID: 1, Node: nH0, Event: records.EventRateCut, Value: 25e9},
				// As earlier versions of replay wrote them: a "cut" that left the rate where it
				// was (a sender at MinRate); not a reduction, not counted.
				{TimePs: 7500, FlowID: 1, Node: nH0, Event: records.EventRateCut, Value: 25e9},
				{TimePs: 9800, FlowID: 1, Node: nH0, Event: records.EventRateIncrease, Value: 60e9},
			} {
				must(w.Append(&r))
			}
			must(w.Close())
			return w.Rows()
		})
	}
	write(records.FlowsFile, func(p string) int64 {
		w, err := records.NewFlowsWriter(p, d)
		must(err)
		for _, r := range []records.FlowRow{
			{FlowID: 1, Src: ipaddr.MustParse("10.0.0.1"), Dst: ipaddr.MustParse("10.0.1.1"), Proto: 17, Sport: 1000, Dport: 4791, DSCP: 26, TC: 3,
				SrcHost: nH0, DstHost: nH1, Packets: 3, Bytes: 3000, Delivered: 3 - dropped(2), Dropped: dropped(2), FirstPs: 0, LastPs: 3000,
				DelayMeanPs: 1500, RackMember: 1, FabricMember: 0, SizeBytes: 3000, IdealFctPs: 2000},
			{FlowID: 2, Src: ipaddr.MustParse("10.0.1.1"), Dst: ipaddr.MustParse("10.0.0.1"), Proto: 17, Sport: 1001, Dport: 4791, DSCP: 26, TC: 3,
				SrcHost: nH1, DstHost: nH0, Packets: 2, Bytes: 1000, Delivered: 2 - dropped(1), Dropped: dropped(1), FirstPs: 8000, LastPs: 9000,
				DelayMeanPs: 3000, RackMember: 0, FabricMember: 1, SizeBytes: 1000, IdealFctPs: 1000},
		} {
			// Open loop: a flow completes when none of its packets dropped; closed loop,
			// both completed, flow 1 (DCQCN) after 2 CNPs, flow 2 (DCTCP) after 3 ECE ACKs.
			switch {
			case fx.closed:
				r.Transport, r.Completion = records.TransportDCQCN, records.CompletionComplete
				r.FctPs, r.CongestionSignals = 6000, 2
				if r.FlowID == 2 {
					r.Transport, r.FctPs, r.CongestionSignals = records.TransportDCTCP, 1500, 3
				}
			case r.Dropped > 0:
				r.Completion = records.CompletionDropped
			default:
				r.Completion, r.FctPs = records.CompletionComplete, 2*r.IdealFctPs
			}
			must(w.Append(&r))
		}
		must(w.Close())
		return w.Rows()
	})
	write(records.DelayFile, func(p string) int64 {
		w, err := records.NewDelayWriter(p, d)
		must(err)
		for _, r := range []records.DelayRow{{TC: 3, LoPs: 1000, HiPs: 2000, Packets: 1}, {TC: 3, LoPs: 2000, HiPs: 4000, Packets: 1}} {
			if fx.drops {
				must(w.Append(&r))
			}
		}
		if !fx.drops {
			r := records.DelayRow{TC: 3, LoPs: 1000, HiPs: 2000, Packets: 5}
			must(w.Append(&r))
		}
		must(w.Close())
		return w.Rows()
	})
	write(records.BufferFile, func(p string) int64 {
		w, err := records.NewBufferWriter(p, d)
		must(err)
		for _, r := range []records.BufferRow{
			{TimePs: 0, Node: nR1, Pool: 0, SharedBytes: 100, IngressBytes: 100},
			{TimePs: 5000, Node: nR1, Pool: 0, SharedBytes: 9000, HeadroomBytes: 500, IngressBytes: 9500, EgressBytes: 9500},
			{TimePs: 5000, Node: nF0, Pool: 0, SharedBytes: 10, IngressBytes: 10},
		} {
			must(w.Append(&r))
		}
		must(w.Close())
		return w.Rows()
	})
	if fx.packets {
		write(records.PacketsFile, func(p string) int64 {
			w, err := records.NewPacketsWriter(p, d)
			must(err)
			for _, r := range []records.PacketRow{
				{TraceIndex: 0, FlowID: 1, TC: 3, Bytes: 1000, InjectPs: 0, DeliverPs: 1500, Fate: records.FateDelivered, CE: true, Path: []int32{nH0, nR0, nF1, nS10, nG1, nR1, nH1}},
				{TraceIndex: 1, FlowID: 2, TC: 3, Bytes: 1000, InjectPs: 8000, DeliverPs: 9500, Fate: records.FateDelivered, Path: []int32{nH1, nR1, nG0, nS01, nF0, nR0, nH0}},
			} {
				must(w.Append(&r))
			}
			must(w.Close())
			return w.Rows()
		})
	}
	if fx.lieRows {
		rows[records.FlowsFile]++
	}
	sim := records.Simulation{SimTimePs: 10000, Injected: 5, Delivered: 5 - dropped(3), Dropped: map[records.DropReason]int64{}, CEMarked: 4}
	if fx.noMarks {
		sim.CEMarked = 0
	}
	if fx.drops {
		sim.Dropped[records.ReasonHeadroom] = 1
		sim.Dropped[records.ReasonEgressLimit] = 2
		sim.LosslessDrops = 1
	}
	run := &records.Run{Version: "test", Seed: 1, HashMethod: records.HashCRC32, Simulation: sim, Records: rows, Complete: fx.complete,
		Trace: json.RawMessage(`{"packets": 5, "flows": 2, "ipv4_packets": 3, "ipv6_packets": 2}`), Transport: records.ModeOpen, Config: json.RawMessage(`{"Switch": {"Mtu": "1500B"}, "Topology": {"HostLink": {"Speed": "100Gbps"}}}`)}
	run.Topology.BDPBytes = 2000
	if fx.closed {
		run.Transport = records.ModeClosed
		run.Trace = json.RawMessage(`{"packets": 5, "flows": 2, "ipv4_packets": 3, "ipv6_packets": 2, "replaced": {"tcp-ack": 4, "roce-ack": 0, "roce-cnp": 1}}`)
		run.Simulation.ControlPackets = map[records.PacketKind]records.ControlCount{
			records.KindAck: {Generated: 5, Delivered: 4, Dropped: 1}, records.KindCNP: {Generated: 2, Delivered: 2}}
		run.Simulation.Retransmits, run.Simulation.Timeouts = 1, 0
	}
	must(records.WriteRun(filepath.Join(dir, records.RunFile), run))
	if fx.offeredLoad != "" { // a run.json of a replay that measures it
		var m map[string]any
		data, err := os.ReadFile(filepath.Join(dir, records.RunFile))
		must(err)
		must(json.Unmarshal(data, &m))
		m["offered_load"] = json.RawMessage(fx.offeredLoad)
		data, err = json.Marshal(m)
		must(err)
		must(os.WriteFile(filepath.Join(dir, records.RunFile), data, 0o644))
	}
	return dir
}

func TestLoadAnalyze(t *testing.T) {
	dir := writeFixture(t, fixture{drops: true, pfc: true, packets: true, complete: true})
	run, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Analyze(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Drops.Total != 3 || s.Drops.Lossless != 1 || s.Drops.ByReason[records.ReasonEgressLimit] != 2 || s.Drops.ByTier["fabric"] != 2 {
		t.Errorf("drops %+v", s.Drops)
	}
	if len(s.Drops.TopFlows) != 2 || s.Drops.TopFlows[0].FlowID != 1 || s.Drops.TopFlows[0].Src != "10.0.0.1" {
		t.Errorf("top flows %+v", s.Drops.TopFlows)
	}
	p := s.PFC
	if p.PauseIntervals != 2 || p.PausedPs != 5000+3000 || p.IgnoredEvents != 1 || len(p.Storms) != 1 {
		t.Fatalf("pfc %+v", p)
	}
	st := p.Storms[0]
	if st.StartPs != 1000 || st.DurationPs != 5000 || st.Depth != 2 || st.Ports != 2 || st.Root != "rack-p1-r0:2" || st.Victims != 1 {
		t.Errorf("storm %+v", st)
	}
	if ids := run.VictimIDs[0]; len(ids) != 1 || ids[0] != 1 {
		t.Errorf("victims %v", ids)
	}
	if s.ECN.Marked != 4 || len(s.ECN.Queues) != 1 || s.ECN.OverTime == nil || ecnBin(s.ECN.OverTime, 1500, true) != 1 || ecnBin(s.ECN.OverTime, 9500, false) != 1 {
		t.Errorf("ecn %+v", s.ECN)
	}
	// Two flows: the member loads are read, but too few flows to judge a set.
	rack := s.Imbalance.Tiers[TierRole(records.TierRack)]
	if rack == nil || rack.Judged || rack.Sets != 0 || rack.Unjudged != 2 || rack.FlowCount != 2 || !math.IsNaN(rack.MaxMean) ||
		!strings.Contains(rack.Reason, "too few flows (2)") {
		t.Errorf("rack tier %+v", rack)
	}
	for _, si := range s.Imbalance.Sets {
		if si.Node == "rack-p0-r0" && (!reflect.DeepEqual(si.BytesLoad, []float64{0, 3000}) || si.Label != "rack-p0-r0 uplinks" || !near(si.Bytes.MaxMean, 2)) {
			t.Errorf("rack-p0-r0's set %+v", si)
		}
	}
	if p := s.Polarization; p.Flows != 2 || p.Judged || !math.IsNaN(p.AMI) || !strings.Contains(p.Reason, "too few flows (2)") {
		t.Errorf("polarization %+v", p)
	}
	// 2 of the 5 injected packets delivered, one in [1000, 2000) ps, one in [2000,
	// 4000): over the delivered, p99 = 2000 + 2000 x 0.98; over the injected, the
	// 3 undelivered rank slowest and the rank 4.95 is among them: unfinished.
	if !near(s.Delay.All.P99Ps, 2000+2000*(0.98)) || !math.IsInf(s.Delay.P99Ps, 1) || !slices.Contains(s.Delay.Unfinished, "p99_ps") {
		t.Errorf("delivered p99 %v, p99 %v (unfinished %v)", s.Delay.All.P99Ps, s.Delay.P99Ps, s.Delay.Unfinished)
	}
	if len(s.Buffer) != 2 || s.Buffer[0].Node != "rack-p1-r0" || s.Buffer[0].Peak != 9500 {
		t.Errorf("buffer %+v", s.Buffer)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "ignored") {
		t.Errorf("warnings %q", s.Warnings)
	}
	h := strings.Join(s.Headline, "\n")
	for _, want := range []string{"3 packets dropped", "1 lossless (headroom) drop:", "1 storm (deepest 2 hops", "Too few flows (2 at the rack tier, 2 at the fabric tier) to judge balance",
		"Too few flows (2) crossing both the rack and the fabric tier to judge polarization"} {
		if !strings.Contains(h, want) {
			t.Errorf("headline lacks %q:\n%s", want, h)
		}
	}
	// Stable summary.json keys.
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"drops.total", "drops.lossless", "drops.by_reason", "pfc.pause_intervals", "pfc.paused_ps",
		"pfc.storms", "ecn.marked", "imbalance.tiers.rack.max_mean", "imbalance.tiers.fabric.cov", "imbalance.tiers.fabric.jain",
		"imbalance.tiers.rack.chi2_p", "imbalance.tiers.rack.idle_fraction", "imbalance.tiers.rack.judged", "imbalance.tiers.rack.reason",
		"polarization.ami", "polarization.ami_by_rack", "polarization.judged", "polarization.nmi", "polarization.nmi_normalization",
		"pfc.storm_count", "ecn.delivered_ce_fraction", "delay.flow_mean_p99_ps", "bootstrap.interval", "headline"} {
		if _, ok := lookup(m, key); !ok {
			t.Errorf("summary.json lacks %s", key)
		}
	}
	storm, _ := lookup(m, "pfc.storms")
	for _, k := range []string{"start_ps", "duration_ps", "ports", "depth", "root"} {
		if _, ok := storm.([]any)[0].(map[string]any)[k]; !ok {
			t.Errorf("storm lacks %s", k)
		}
	}
	out := t.TempDir()
	if err := WriteTables(out, s.Tables()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "pfc_storms.csv"))
	if err != nil || !strings.Contains(string(b), "1000,5000,2,2,rack-p1-r0:2,3,") {
		t.Errorf("pfc_storms.csv: %v\n%s", err, b)
	}
}

// ecnBin is the marked (or delivered) count of the bin of e holding time tp.
func ecnBin(e *ECNSeries, tp int64, marked bool) int64 {
	b := (tp - int64(e.StartPs)) / int64(e.BinPs)
	if b < 0 || b >= int64(len(e.Delivered)) {
		return -1
	}
	if marked {
		return e.Marked[b]
	}
	return e.Delivered[b]
}

func lookup(m map[string]any, key string) (any, bool) {
	var v any = m
	for _, k := range strings.Split(key, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func TestLoadQuietRun(t *testing.T) {
	dir := writeFixture(t, fixture{complete: true})
	run, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Analyze(run, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	h := strings.Join(s.Headline, "\n")
	for _, want := range []string{"No packets were dropped.", "No PFC pauses."} {
		if !strings.Contains(h, want) {
			t.Errorf("headline lacks %q:\n%s", want, h)
		}
	}
	if run.ECNOverTime != nil || s.ECN.Note == "" {
		t.Errorf("ECN over time without packets.arrow: %+v", s.ECN)
	}
	js, _ := json.Marshal(s)
	if !strings.Contains(string(js), `"storms":[]`) || !strings.Contains(string(js), `"by_reason":{}`) {
		t.Errorf("empty lists must be [] / {} in JSON: %.300s", js)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings %q", s.Warnings)
	}
	// Every packet delivered, the 5 in [1000, 2000) ps: p99 = 1000 + 1000 x 4.95 / 5.
	if !near(s.Delay.P99Ps, 1990) || len(s.Delay.Unfinished) != 0 {
		t.Errorf("p99 %v (unfinished %v), want 1990", s.Delay.P99Ps, s.Delay.Unfinished)
	}
}

func TestLoadBadInput(t *testing.T) {
	cases := []struct {
		name  string
		fx    fixture
		spoil func(dir string)
		is    error
		says  string
	}{
		{"missing-file", fixture{complete: true}, func(dir string) { os.Remove(filepath.Join(dir, records.DropsFile)) }, os.ErrNotExist, "drops.arrow"},
		{"truncated-arrow", fixture{complete: true}, func(dir string) {
			p := filepath.Join(dir, records.FlowsFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, records.ErrNotRecordFile, "flows.arrow"},
		{"incomplete-run", fixture{}, nil, records.ErrIncomplete, "complete"},
		{"no-run-json", fixture{complete: true}, func(dir string) { os.Remove(filepath.Join(dir, records.RunFile)) }, os.ErrNotExist, "run.json"},
		{"other-schema-version", fixture{complete: true}, func(dir string) {
			p := filepath.Join(dir, records.RunFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), `"schema_version": 3`, `"schema_version": 1`, 1)), 0o644)
		}, records.ErrSchemaVersion, "schema_version 1, this build reads 2 to 3 (written by an older tracefabric"},
		{"row-count-mismatch", fixture{complete: true, lieRows: true}, nil, ErrRecordsMismatch, "flows.arrow has 2 rows, run.json lists 3"},
		{"packets-listed-but-missing", fixture{complete: true, packets: true}, func(dir string) { os.Remove(filepath.Join(dir, records.PacketsFile)) }, os.ErrNotExist, "packets.arrow"},
		{"wrong-file-kind", fixture{complete: true}, func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, records.DelayFile))
			os.WriteFile(filepath.Join(dir, records.PFCFile), b, 0o644)
		}, records.ErrNotRecordFile, "pfc.arrow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeFixture(t, c.fx)
			if c.spoil != nil {
				c.spoil(dir)
			}
			_, err := Load(dir)
			t.Log(err)
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("err = %v, want %v naming %q", err, c.is, c.says)
			}
		})
	}
}

func TestFindRuns(t *testing.T) {
	one := writeFixture(t, fixture{complete: true})
	if got, err := FindRuns(one); err != nil || len(got) != 1 || got[0] != one {
		t.Errorf("FindRuns(run) = %v, %v", got, err)
	}
	all := t.TempDir()
	for _, m := range []string{"xor16", "crc32"} {
		if err := os.Rename(writeFixture(t, fixture{complete: true}), filepath.Join(all, m)); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(all, ".tmp-partial"), 0o755)
	got, err := FindRuns(all)
	if err != nil || len(got) != 2 || filepath.Base(got[0]) != "crc32" || filepath.Base(got[1]) != "xor16" {
		t.Errorf("FindRuns(--hash all dir) = %v, %v", got, err)
	}
	if _, err := FindRuns(t.TempDir()); !errors.Is(err, ErrNoRuns) {
		t.Errorf("empty dir: %v", err)
	}
}

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// The whole summary.json of the fixture run, pinned: any change in a number, key or
// sentence shows up here (go test ./analysis -run Golden -update after review).
func TestSummaryGolden(t *testing.T) {
	run, err := Load(writeFixture(t, fixture{drops: true, pfc: true, packets: true, complete: true}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Analyze(run, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	s.Dir = "RUN"
	got, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "fixture_summary.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("summary differs from %s (rerun with -update after checking):\n%s", golden, got)
	}
}

// A closed-loop run: transport.arrow's events counted by kind, per flow and over time
// whatever their order in the file; run.json's control packets and replaced packets;
// flow completion per transport. Expectations by hand from the fixture's rows.
func TestLoadClosedLoop(t *testing.T) {
	run, err := Load(writeFixture(t, fixture{complete: true, closed: true}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Analyze(run, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tr := s.Transport
	if tr == nil {
		t.Fatal("no transport summary for a closed-loop run")
	}
	wantEvents := map[string]int64{"cnp": 2, "rate_cut": 2, "rate_increase": 1, "window_cut": 1, "fast_retransmit": 0, "timeout": 0}
	if !reflect.DeepEqual(tr.Events, wantEvents) {
		t.Errorf("events %v, want %v", tr.Events, wantEvents)
	}
	if !reflect.DeepEqual(tr.FlowsByTransport, map[string]int64{"dcqcn": 1, "dctcp": 1}) {
		t.Errorf("flows by transport %v", tr.FlowsByTransport)
	}
	one := func(total int64) PerFlow {
		return PerFlow{Flows: 1, WithAny: 1, Total: total, Mean: float64(total), Max: total}
	}
	if tr.CNPsPerFlow != one(2) || tr.RateCutsPerFlow != one(2) || tr.ECEPerFlow != one(3) {
		t.Errorf("per flow: CNPs %+v, rate cuts %+v, ECE %+v", tr.CNPsPerFlow, tr.RateCutsPerFlow, tr.ECEPerFlow)
	}
	if tr.ControlPackets["ack"] != (records.ControlCount{Generated: 5, Delivered: 4, Dropped: 1}) || tr.ControlPackets["cnp"].Generated != 2 ||
		tr.Replaced["tcp-ack"] != 4 || tr.Replaced["roce-cnp"] != 1 || tr.Retransmits != 1 || tr.Timeouts != 0 {
		t.Errorf("run.json counts: control %v, replaced %v, retransmits %d, timeouts %d", tr.ControlPackets, tr.Replaced, tr.Retransmits, tr.Timeouts)
	}
	// Over time: every event in the bin of its own time, the late rate cut at 1500 ps
	// included.
	ot := tr.OverTime
	binOf := func(ps int64) int { return int((units.Time(ps) - ot.StartPs) / ot.BinPs) }
	for k, kind := range ot.Kinds {
		var sum int64
		for _, n := range ot.Counts[k] {
			sum += n
		}
		if sum != wantEvents[kind] {
			t.Errorf("%s over time sums to %d, want %d", kind, sum, wantEvents[kind])
		}
	}
	if n := tr.CNPOverTime; n == nil || !reflect.DeepEqual(n.Kinds, []string{"cnp", "rate_cut"}) || sum64(n.Counts[0]) != 2 || sum64(n.Counts[1]) != 2 ||
		n.StartPs+units.Time(len(n.Counts[0]))*n.BinPs <= 5500 || n.StartPs > 1200 {
		t.Errorf("CNPs over time %+v: want 2 CNPs and 2 rate cuts over [1200, 5500] ps", n)
	}
	cut := slices.Index(ot.Kinds, "rate_cut")
	if b1, b2 := binOf(1500), binOf(5500); cut < 0 || b1 == b2 || ot.Counts[cut][b1] != 1 || ot.Counts[cut][b2] != 1 {
		t.Errorf("rate cuts over time %v (start %d, bin %d)", ot.Counts[cut], ot.StartPs, ot.BinPs)
	}
	// MTU 1500 B, BDP 2000 B: flow 2 (1000 B, DCTCP) is < MTU with slowdown 1500/1000;
	// flow 1 (3000 B, DCQCN) is in [BDP, 5 BDP) with slowdown 6000/2000.
	f := s.FCT
	if f.MTUBytes != 1500 || f.BDPBytes != 2000 || f.Flows != 2 || f.Complete != 2 || f.SlowdownP50 != 1.5 || f.SlowdownP99 != 3 {
		t.Errorf("fct %+v", f)
	}
	row := func(tr, bucket string) SlowdownRow {
		for _, r := range f.Rows {
			if r.Transport == tr && r.Name == bucket {
				return r
			}
		}
		t.Fatalf("no row %s/%s", tr, bucket)
		return SlowdownRow{}
	}
	if r := row("dcqcn", "BDP to 5 BDP"); r.Complete != 1 || *r.P99 != 3 || r.LoByte != 2000 || r.HiByte != 10000 {
		t.Errorf("dcqcn row %+v", r)
	}
	if r := row("dctcp", "< MTU"); r.Complete != 1 || *r.P50 != 1.5 {
		t.Errorf("dctcp row %+v", r)
	}
	h := strings.Join(s.Headline, "\n")
	for _, want := range []string{"Flow completion: 2 of 2 flows complete; slowdown p50 1.50, p99 3.00 (flows 2 KB to 10 KB: p99 3.00).",
		"Closed loop: 2 CNPs (1 of 1 DCQCN flows got any), 2 rate cuts; 1 DCTCP window cut; 1 retransmitted packet, 0 timeouts."} {
		if !strings.Contains(h, want) {
			t.Errorf("headline lacks %q:\n%s", want, h)
		}
	}
	// An open-loop run has no transport.arrow and no transport summary: not an error.
	open, err := Load(writeFixture(t, fixture{complete: true}))
	if err != nil {
		t.Fatal(err)
	}
	if so, _ := Analyze(open, Options{}); so.Transport != nil || open.ClosedLoop != nil || so.FCT.Complete != 2 || so.FCT.SlowdownP99 != 2 {
		t.Errorf("open loop: transport %+v, fct %+v", so.Transport, so.FCT)
	}
}

func sum64(xs []int64) (s int64) {
	for _, x := range xs {
		s += x
	}
	return s
}

// A run where nothing congested (no drop, PFC pause or CE mark) says so in one line
// with the busiest host link's load, instead of a line per signal: from run.json's
// offered_load when it has one, else the mean over the run from ports.arrow (host-p0-
// r0-h0's 100 bytes in the 10 ns simulated: 800 bits / 1e-8 s = 80 Gb/s, 80% of its
// 100 Gbps).
func TestNothingCongested(t *testing.T) {
	for _, c := range []struct {
		name string
		fx   fixture
		want string
	}{
		{"ports.arrow", fixture{complete: true, noMarks: true},
			"Nothing congested: no drop, PFC pause or ECN mark; the busiest host link, host-p0-r0-h0 to rack-p0-r0, carried 80% of its 100Gbps on average over the 10 ns simulated (ports.arrow; this run.json has no offered_load, the peak in 1 ms bins)."},
		{"run.json", fixture{complete: true, noMarks: true, offeredLoad: `{"bin_ps": 1000000000, "busiest_link": "host-p1-r0-h0 -> rack-p1-r0", "p99_bps": 9.5e9, "p99_share": 0.095, "peak_share": 0.12, "speedup": 1}`},
			"Nothing congested: no drop, PFC pause or ECN mark; the busiest host link, host-p1-r0-h0 -> rack-p1-r0, peaked at 12% of its 100Gbps in 1 ms bins (p99 9.5%; run.json offered_load)."},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, err := Load(writeFixture(t, c.fx))
			if err != nil {
				t.Fatal(err)
			}
			s, err := Analyze(run, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if s.Congestion.Congested || s.Headline[0] != c.want {
				t.Errorf("congested %v, headline[0]\n%q, want\n%q", s.Congestion.Congested, s.Headline[0], c.want)
			}
			for _, l := range s.Headline {
				if l == "No packets were dropped." || l == "No PFC pauses." || l == "No packets were ECN-marked." {
					t.Errorf("the headline repeats %q", l)
				}
			}
		})
	}
	// Marks are congestion: the usual lines.
	run, err := Load(writeFixture(t, fixture{complete: true}))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Analyze(run, DefaultOptions())
	if err != nil || !s.Congestion.Congested || s.Congestion.Signals["ecn_marks"] != 4 || !slices.Contains(s.Headline, "No packets were dropped.") {
		t.Errorf("a run with CE marks: %v, congestion %+v, headline %q", err, s.Congestion, s.Headline)
	}
}
