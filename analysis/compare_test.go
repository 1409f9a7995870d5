package analysis

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/records"
)

// syntheticRun builds a run of n flows over 4 racks x 4 fabric uplinks and 4 fabric
// switches x 4 spine uplinks. polarized: the fabric member equals the rack member (one
// unsalted hash mod 4 at both tiers); otherwise independent choices.
func syntheticRun(method string, n int, polarized bool, seed uint64) *Run {
	r := rand.New(rand.NewPCG(seed, 99))
	keys := rand.New(rand.NewPCG(5, 5)) // the same trace for every method
	run := &Run{Dir: "/out/" + method, Info: RunInfo{Method: method, SimPs: 1e9, TracePackets: int64(10 * n), Complete: true}}
	for i := 0; i < 4; i++ {
		run.Flows.Sets = append(run.Flows.Sets, SetDef{Node: nid("rack-p0-r" + itoa1(i)), Tier: records.TierRack, Members: 4, Offset: 4 * i})
	}
	for j := 0; j < 4; j++ {
		run.Flows.Sets = append(run.Flows.Sets, SetDef{Node: nid("fabric-p0-f" + itoa1(j)), Tier: records.TierFabric, Members: 4, Offset: 16 + 4*j})
	}
	for i := 0; i < n; i++ {
		rack := keys.IntN(4)
		bytes := float64(100 + keys.IntN(10000))
		rm := r.IntN(4)
		fm := r.IntN(4)
		if polarized {
			fm = rm
		}
		run.Flows.Flows = append(run.Flows.Flows, FlowSample{
			Rack: nid("rack-p0-r" + itoa1(rack)), RackCell: int32(4*rack + rm), RackMember: int32(rm), Packets: 10,
			FabricCell: int32(16 + 4*rm + fm), FabricMember: int32(fm),
			Bytes: bytes, Dropped: float64(keys.IntN(3) / 2), Delivered: 10, DelayMeanPs: float64(1e6 + keys.IntN(1e6)),
		})
	}
	return run
}

func itoa1(i int) string { return string(rune('0' + i)) }

func TestCompare(t *testing.T) {
	runs := []*Run{syntheticRun("crc32", 4000, true, 1), syntheticRun("crc32WithSalt", 4000, false, 2)}
	opt := Options{Seed: 7, Bootstrap: 200}
	c, err := Compare(runs, opt)
	if err != nil {
		t.Fatal(err)
	}
	// Which interval each metric got: BCa by default, normal for AMI, none for the
	// unresampled NMI and the run-level numbers.
	for m, want := range map[string]string{MetricAMI: "normal", MetricAMIByRack: "normal", MetricNMI: "none",
		MetricLossless: "none", MetricPausedPs: "none", MetricP99Delay: "none", MetricDrops: ""} {
		if got := c.IntervalBy[m]; got != want || c.Interval != "BCa" {
			t.Errorf("%s: interval %q (default %q), want %q", m, got, c.Interval, want)
		}
	}
	pol := c.ByMethod["crc32"].Metrics[MetricAMI]
	salt := c.ByMethod["crc32WithSalt"].Metrics[MetricAMI]
	if !near(pol.Value, 1) || math.Abs(salt.Value) > 0.01 {
		t.Errorf("AMI polarized %v, salted %v", pol, salt)
	}
	if b := c.Best[MetricAMI]; b.Method != "crc32WithSalt" || !b.Clear || b.RunnerUp != "crc32" ||
		!b.Difference.HasCI || !near(b.Difference.Value, salt.Value-pol.Value) || !(b.Difference.Hi < 0) {
		t.Errorf("best AMI %+v", b)
	}
	// Drops are the same flows' drops in both runs: a tie, no method is best.
	if b := c.Best[MetricDrops]; !b.Tie || b.Method != "" || len(b.Tied) != 2 {
		t.Errorf("best drops %+v, want a tie", b)
	}
	// Polarized: each fabric switch uses a single spine uplink, so 3 of 4 idle.
	fi := TierMetric(TierRole(records.TierFabric), "idle_fraction")
	if v := c.ByMethod["crc32"].Metrics[fi].Value; !near(v, 0.75) {
		t.Errorf("polarized fabric idle fraction %v, want 0.75", v)
	}
	if b := c.Best[TierMetric(TierRole(records.TierFabric), "jain")]; b.Method != "crc32WithSalt" || !b.Higher {
		t.Errorf("best fabric Jain %+v", b)
	}
	if b := c.Best[TierMetric(TierRole(records.TierFabric), "chi2_p")]; b.Ranked || b.Method != "" {
		t.Errorf("chi-square p-values are ranked: %+v", b)
	}
	for _, m := range c.Methods {
		e := c.ByMethod[m].Metrics[MetricDrops]
		if !(e.HasCI && e.Lo <= e.Value && e.Value <= e.Hi) {
			t.Errorf("%s drops %v: point outside CI", m, e)
		}
		if e := c.ByMethod[m].Metrics[MetricPausedPs]; e.HasCI {
			t.Errorf("%s paused_ps has a CI: %v", m, e)
		}
	}
	again, err := Compare(runs, opt)
	j1, _ := json.Marshal(c)
	j2, _ := json.Marshal(again)
	if err != nil || string(j1) != string(j2) {
		t.Errorf("Compare is not deterministic for a seed")
	}
	if len(c.Headline) == 0 || !strings.Contains(strings.Join(c.Headline, " "), "crc32WithSalt") {
		t.Errorf("headline %q", c.Headline)
	}
	tb := c.Table()
	if len(tb.Rows) != 2*len(c.Metrics) {
		t.Errorf("table has %d rows, want %d", len(tb.Rows), 2*len(c.Metrics))
	}
	var sb strings.Builder
	if err := tb.WriteCSV(&sb); err != nil || !strings.HasPrefix(sb.String(), "method,metric,unit,value,lo,hi,best,judged\n") {
		t.Errorf("CSV: %v %q", err, sb.String()[:60])
	}
	js, err := json.Marshal(c)
	if err != nil || !strings.Contains(string(js), `"polarization.ami":{"value":`) || !strings.Contains(string(js), `"interval":"BCa"`) {
		t.Errorf("JSON: %v %.200s", err, js)
	}
}

// Ties are ties: when every method has the same value (0 drops everywhere), no method
// is best (best null, tie true), and a value inside the noise is not "most polarized".
func TestCompareTies(t *testing.T) {
	a, b := syntheticRun("crc16", 600, false, 11), syntheticRun("xor16", 600, false, 12)
	for _, r := range []*Run{a, b} {
		for i := range r.Flows.Flows {
			r.Flows.Flows[i].Dropped = 0
		}
	}
	c, err := Compare([]*Run{a, b}, Options{Seed: 1, Bootstrap: 300})
	if err != nil {
		t.Fatal(err)
	}
	bd := c.Best[MetricDrops]
	if !bd.Tie || bd.Method != "" || bd.Value != 0 {
		t.Errorf("drops: %+v, want a tie at 0", bd)
	}
	js, _ := json.Marshal(bd)
	if !strings.Contains(string(js), `"method":null`) || !strings.Contains(string(js), `"tie":true`) {
		t.Errorf("tie JSON %s, want method null and tie true", js)
	}
	h := strings.Join(c.Headline, "\n")
	if !strings.Contains(h, "No method dropped a packet.") || strings.Contains(h, "Fewest drops") {
		t.Errorf("headline:\n%s", h)
	}
	// Two independent hashings of 600 flows: the AMIs differ by noise only.
	if strings.Contains(h, "Most polarized") {
		t.Errorf("a difference inside the bootstrap noise is called most polarized:\n%s", h)
	}
	if tb := c.Table(); strings.Contains(csvOf(t, tb), ",drops.total,packets,0,0,0,true") {
		t.Errorf("a tied method is marked best in the table")
	}
}

func csvOf(t *testing.T, tb Table) string {
	var sb strings.Builder
	if err := tb.WriteCSV(&sb); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

func TestCompareRefusesOtherTraces(t *testing.T) {
	_, err := Compare([]*Run{syntheticRun("crc32", 100, true, 1), syntheticRun("xor16", 120, true, 1)}, Options{Bootstrap: 10})
	if !errors.Is(err, ErrNotComparable) {
		t.Errorf("err = %v, want ErrNotComparable", err)
	}
	if _, err := Compare(nil, Options{}); !errors.Is(err, ErrNotComparable) {
		t.Errorf("no runs: err = %v", err)
	}
	x, y := syntheticRun("crc32", 100, true, 1), syntheticRun("xor16", 100, true, 1)
	x.Flows.Fingerprint, y.Flows.Fingerprint = FlowFingerprint{1, 1, 1}, FlowFingerprint{2, 1, 1}
	if _, err := Compare([]*Run{x, y}, Options{Bootstrap: 10}); !errors.Is(err, ErrNotComparable) {
		t.Errorf("different flows: err = %v", err)
	}
	// Same method twice: named by directory.
	a, b := syntheticRun("crc32", 50, true, 1), syntheticRun("crc32", 50, true, 2)
	b.Dir = "/other/crc32-again"
	c, err := Compare([]*Run{a, b}, Options{Bootstrap: 10})
	if err != nil || !reflect.DeepEqual(c.Methods, []string{"crc32", "crc32-again"}) {
		t.Errorf("methods %v, err %v", c.Methods, err)
	}
}

func TestFormatEstimate(t *testing.T) {
	for _, c := range []struct {
		metric string
		e      Estimate
		want   string
	}{
		{MetricDrops, Estimate{Value: 123456.4, Lo: 120000.2, Hi: 130000.7, HasCI: true}, "123,456 [120,000, 130,001]"},
		{MetricStorms, Estimate{Value: 1200}, "1,200"},
		{MetricPausedPs, Estimate{Value: 2.5e9}, "2.5 ms"},
		{MetricAMI, Estimate{Value: 0.5, Lo: 0.25, Hi: 0.75, HasCI: true}, "0.5 [0.25, 0.75]"},
		{MetricCEFraction, Estimate{Value: 0.0125}, "1.25%"},
		{MetricAMI, Estimate{Value: math.NaN()}, "-"},
	} {
		if got := FormatEstimate(c.metric, c.e); got != c.want {
			t.Errorf("FormatEstimate(%s, %+v) = %q, want %q", c.metric, c.e, got, c.want)
		}
	}
}

// An open and a closed replay of one trace: named by transport, comparable although
// their flow sizes differ (open loop counts captured pure ACKs, closed loop replaces
// them), not when the same mode's sizes or the same timing's start times differ.
// Slowdown p50 and p99 by hand.
func TestCompareOpenClosed(t *testing.T) {
	mk := func(transport string, seed uint64) *Run {
		r := syntheticRun("crc32WithSalt", 400, false, seed)
		r.Dir = "/out/tcp-" + transport
		r.Info.Transport = transport
		r.Info.Options.Speedup = 1
		r.Flows.Fingerprint = FlowFingerprint{Tuple: 7, Start: 8, Size: 9}
		for i := range r.Flows.Flows {
			f := &r.Flows.Flows[i]
			// Open: slowdown 1 + i mod 10, flow 0 of every ten incomplete; closed: slowdown
			// 1 + (i mod 10) / 10, all complete.
			f.SizeBytes, f.Data, f.Completion = 1000, true, records.CompletionComplete
			if transport == records.ModeOpen {
				f.Slowdown = SlowdownOf(true, int64(1000*(1+i%10)), 1000)
				if i%10 == 0 {
					f.Completion, f.Slowdown = records.CompletionDropped, math.NaN()
				}
			} else {
				f.Slowdown = SlowdownOf(true, int64(1000+100*(i%10)), 1000)
			}
		}
		return r
	}
	open, closed := mk(records.ModeOpen, 1), mk(records.ModeClosed, 2)
	closed.Flows.Fingerprint.Size = 10
	c, err := Compare([]*Run{open, closed}, Options{Seed: 3, Bootstrap: 200})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Methods, []string{"open", "closed"}) || c.By != NamedByTransport || !reflect.DeepEqual(c.Differs, []string{TraitTransport}) || c.Noun() != "run" {
		t.Errorf("names %v by %q, differs %v", c.Methods, c.By, c.Differs)
	}
	// Open: 400 flows with data, 40 unfinished (slowest) and 40 each at slowdowns
	// 2..10: the median is the 200th smallest, 6 (40 x 5 = 200); p99: the 396th, past
	// the 360 completed: unfinished. Closed: 400 flows, 40 each at 1.0..1.9: the 200th
	// smallest is 1.4, the 396th 1.9.
	want := map[string][2]float64{"open": {6, math.Inf(1)}, "closed": {1.4, 1.9}}
	for m, w := range want {
		p50, p99 := c.ByMethod[m].Metrics[MetricSlowdownP50], c.ByMethod[m].Metrics[MetricSlowdownP99]
		if !near(p50.Value, w[0]) || !(near(p99.Value, w[1]) || math.IsInf(w[1], 1) && p99.Unfinished()) || !p99.HasCI || p99.Lo > p99.Value || p99.Hi < p99.Value {
			t.Errorf("%s slowdown p50 %v, p99 %v; want %v", m, p50, p99, w)
		}
		if f := c.ByMethod[m].FCT; f.SlowdownP50 != p50.Value || f.SlowdownP99 != p99.Value {
			t.Errorf("%s: FCT summary %v/%v, comparison %v/%v", m, f.SlowdownP50, f.SlowdownP99, p50.Value, p99.Value)
		}
	}
	if b := c.Best[MetricSlowdownP99]; b.Method != "closed" || !b.Clear {
		t.Errorf("best slowdown p99 %+v", b)
	}
	if h := strings.Join(c.Headline, "\n"); !strings.Contains(h, "Lowest FCT slowdown p99 (unfinished flows rank slowest): closed (1.9 [") ||
		!strings.Contains(h, "clearly ahead of open, whose 99th percentile falls among the unfinished flows, which rank slowest: 10% of the 400 flows with data did not complete.") ||
		!strings.Contains(h, "Most flows completed: closed (100% [100%, 100%]), clearly ahead of open") || strings.Contains(h, "Best hash") {
		t.Errorf("headline:\n%s", h)
	}
	// The same mode with other sizes, or the same timing with other start times: other
	// flows.
	closed.Info.Transport = records.ModeOpen
	if _, err := Compare([]*Run{open, closed}, Options{Bootstrap: 10}); !errors.Is(err, ErrNotComparable) || !strings.Contains(err.Error(), "size_bytes") {
		t.Errorf("same mode, other sizes: %v", err)
	}
	closed.Info.Transport, closed.Flows.Fingerprint.Start = records.ModeClosed, 11
	if _, err := Compare([]*Run{open, closed}, Options{Bootstrap: 10}); !errors.Is(err, ErrNotComparable) || !strings.Contains(err.Error(), "first_ps") {
		t.Errorf("same timing, other starts: %v", err)
	}
	closed.Info.Options.Speedup = 2 // other timing: starts differ by design; named by both
	c, err = Compare([]*Run{open, closed}, Options{Bootstrap: 10})
	if err != nil || !reflect.DeepEqual(c.Methods, []string{"transport=open, speedup=1", "transport=closed, speedup=2"}) || c.By != NamedByTraits ||
		!reflect.DeepEqual(c.Differs, []string{TraitTransport, TraitSpeedup}) {
		t.Errorf("other speedup: %v, names %v by %q, differs %v", err, c.Methods, c.By, c.Differs)
	}
	closed.Flows.Fingerprint.Tuple = 12
	if _, err := Compare([]*Run{open, closed}, Options{Bootstrap: 10}); !errors.Is(err, ErrNotComparable) || !strings.Contains(err.Error(), "5-tuples") {
		t.Errorf("other tuples: %v", err)
	}
}

// Runs are named by what differs between them, from run.json: the hash or the
// transport alone by its value, anything else as key=value (options by their
// run.json key, configuration attributes by their path); nothing: the directory.
func TestRunNames(t *testing.T) {
	mk := func(dir string, edit func(r *Run)) *Run {
		r := &Run{Dir: "/out/" + dir, Info: RunInfo{Method: "crc32WithSalt", Transport: "open", Seed: 1,
			Options: records.RunOptions{Speedup: 1, LB: "none", Hash: "crc32WithSalt", Traces: []string{"/t/" + dir + ".pcap"}},
			Config:  json.RawMessage(`{"Seed": 1, "Switch": {"BufferSize": "32MiB", "EcmpHashMethod": "crc32WithSalt", "Pools": [{"Name": "lossy", "Size": "60%"}]}}`)}}
		edit(r)
		return r
	}
	same := func(*Run) {}
	for _, c := range []struct {
		name    string
		a, b    func(*Run)
		names   []string
		by      string
		differs []string
	}{
		{"hash", same, func(r *Run) {
			r.Info.Method, r.Info.Options.Hash = "crc16", "crc16"
			r.Info.Config = json.RawMessage(strings.Replace(string(r.Info.Config), `"EcmpHashMethod": "crc32WithSalt"`, `"EcmpHashMethod": "crc16"`, 1))
		}, []string{"crc32WithSalt", "crc16"}, NamedByHash, []string{TraitHash}},
		{"load balancing", same, func(r *Run) { r.Info.Options.LB = "flowlet" }, []string{"lb=none", "lb=flowlet"}, NamedByTraits, []string{TraitLB}},
		{"speedup and seed", same, func(r *Run) { r.Info.Options.Speedup, r.Info.Seed = 4, 2 },
			[]string{"speedup=1, seed=1", "speedup=4, seed=2"}, NamedByTraits, []string{TraitSpeedup, TraitSeed}},
		{"an option", same, func(r *Run) { r.Info.Options.MaxIdleNs = 1000 }, []string{"max_idle_ns=0", "max_idle_ns=1000"}, NamedByTraits, []string{"max_idle_ns"}},
		{"configuration", same, func(r *Run) {
			r.Info.Config = json.RawMessage(`{"Seed": 1, "Switch": {"BufferSize": "64MiB", "EcmpHashMethod": "crc32WithSalt", "Pools": [{"Name": "lossy", "Size": "50%"}]}}`)
		}, []string{"Switch.BufferSize=32MiB, Switch.Pools[0].Size=60%", "Switch.BufferSize=64MiB, Switch.Pools[0].Size=50%"}, NamedByTraits,
			[]string{"Switch.BufferSize", "Switch.Pools[0].Size"}},
		{"nothing", same, same, []string{"a", "b"}, NamedByDir, []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			names, by, differs, err := runNames([]*Run{mk("a", c.a), mk("b", c.b)})
			if err != nil || !reflect.DeepEqual(names, c.names) || by != c.by || !reflect.DeepEqual(differs, c.differs) {
				t.Errorf("names %q by %q, differs %q (%v); want %q by %q, differs %q", names, by, differs, err, c.names, c.by, c.differs)
			}
		})
	}
}

// "Clearly ahead" needs a practical difference besides a significant one: with every
// flow dropping 100 packets in one run and 101 in the other, the paired interval of
// the 4,000-packet difference excludes 0 but it is 0.99% of the runner-up's 404,000,
// below the 5% that counts: "statistically ahead by 0.99%"; at 110 packets a flow
// (9.1%) it is clearly ahead.
func TestComparePracticalDifference(t *testing.T) {
	mk := func(method string, drops float64) *Run {
		r := syntheticRun(method, 4000, false, 1) // the same member choices: only drops differ
		r.Info.Options.Hash = method
		for i := range r.Flows.Flows {
			r.Flows.Flows[i].Dropped = drops
		}
		return r
	}
	for _, c := range []struct {
		runnerUp           float64
		significant, clear bool
		words              string
	}{
		{101, true, false, "]), statistically ahead of xor16 by 0.99% (the paired 95% BCa interval of the difference, -4000 ["},
		{110, true, true, "]), clearly ahead of xor16 (the paired 95% BCa interval of the difference, -4e+04 ["},
	} {
		c2, err := Compare([]*Run{mk("crc16", 100), mk("xor16", c.runnerUp)}, Options{Seed: 1, Bootstrap: 200})
		if err != nil {
			t.Fatal(err)
		}
		b := c2.Best[MetricDrops]
		if b.Method != "crc16" || b.Significant != c.significant || b.Clear != c.clear || b.Practical != c.clear || b.Threshold != 0.05*4000*c.runnerUp {
			t.Errorf("runner-up at %v a flow: best %+v", c.runnerUp, b)
		}
		h := strings.Join(c2.Headline, "\n")
		if !strings.Contains(h, "Fewest drops: crc16 (400,000 [") || !strings.Contains(h, c.words) {
			t.Errorf("runner-up at %v a flow: headline\n%s\nlacks %q", c.runnerUp, h, c.words)
		}
		if c.clear && !strings.Contains(h, "excludes 0, and the difference is at least 5% of the runner-up's value and 10 packets).") ||
			!c.clear && !strings.Contains(h, "excludes 0, but a practical difference is at least 5% of the runner-up's value and 10 packets).") {
			t.Errorf("runner-up at %v a flow: the headline does not state the rule:\n%s", c.runnerUp, h)
		}
	}
}

// The practical thresholds, by the kind of metric.
func TestPracticalThreshold(t *testing.T) {
	for _, c := range []struct {
		metric   string
		runnerUp float64
		want     float64
	}{
		{TierMetric(TierRole(records.TierRack), "max_mean"), 2, 0.1},
		{TierMetric(TierRole(records.TierRack), "cov"), 0.1, 0.01}, // 5% is 0.005: the floor
		{TierMetric(TierRole(records.TierRack), "cov"), 0.5, 0.025},
		{TierMetric(TierRole(records.TierRack), "idle_fraction"), 0.5, 0.01},
		{MetricCEFraction, 0.9, 0.01},
		{MetricAMI, 0.9, 0.05},
		{MetricDrops, 100, 10}, // 5% is 5: the floor
		{MetricDrops, 1000, 50},
		{MetricStorms, 4, 1},
		{MetricPauseIntervals, 1000, 50},
		{MetricSlowdownP99, 40, 2},
		{MetricP99Delay, 3e9, 1.5e8},
	} {
		if got, rule := PracticalThreshold(c.metric, c.runnerUp); !near(got, c.want) || rule == "" {
			t.Errorf("%s at %v: threshold %v (%q), want %v", c.metric, c.runnerUp, got, rule, c.want)
		}
	}
}

// A run that leaves flows unfinished never ranks first on FCT or flow delay: crc16
// left 27% of its 1,000 flows unfinished and its completed flows have the lowest
// slowdown (1.1) and delay (1 us); xor16 completed every flow at slowdown 2 and 2 us.
// Counted only over completed flows, crc16 would win both p99s; with unfinished flows
// ranked slowest, its p99s fall among them (unfinished), xor16 is clearly ahead, and
// clearly the one that completed most flows.
func TestUnfinishedFlowsRankWorst(t *testing.T) {
	mk := func(method string, unfinishedShare float64, slowdown, delay float64) *Run {
		r := syntheticRun(method, 1000, false, 1)
		r.Info.Options.Hash = method
		for i := range r.Flows.Flows {
			f := &r.Flows.Flows[i]
			f.SizeBytes, f.Data, f.Completion = 1000, true, records.CompletionComplete
			f.Slowdown, f.DelayMeanPs = slowdown, delay
			if float64(i%100) < 100*unfinishedShare {
				f.Completion, f.Slowdown = records.CompletionDropped, math.NaN()
			}
		}
		return r
	}
	c, err := Compare([]*Run{mk("crc16", 0.27, 1.1, 1e6), mk("xor16", 0, 2, 2e6)}, Options{Seed: 1, Bootstrap: 200})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{MetricSlowdownP99, MetricFlowMeanP99, MetricCompleteFraction} {
		if b := c.Best[m]; b.Method != "xor16" || !b.Clear {
			t.Errorf("%s: best %+v, want xor16, clearly", m, b)
		}
	}
	if e := c.ByMethod["crc16"].Metrics[MetricSlowdownP99]; !e.Unfinished() || !strings.Contains(e.Reason, "27% of the 1,000 flows with data did not complete") {
		t.Errorf("crc16 slowdown p99 %v (%q), want unfinished, saying 27%%", e, e.Reason)
	}
	if e := c.ByMethod["crc16"].Metrics[MetricCompleteFraction]; !near(e.Value, 0.73) {
		t.Errorf("crc16 complete fraction %v, want 0.73", e)
	}
	// The median: 730 of 1,000 finished at 1.1, so the 500th flow is one of them:
	// crc16's median flow did finish faster, and it is the best there.
	if b := c.Best[MetricSlowdownP50]; b.Method != "crc16" || c.ByMethod["crc16"].Metrics[MetricSlowdownP50].Value != 1.1 {
		t.Errorf("slowdown p50: best %+v", b)
	}
	h := strings.Join(c.Headline, "\n")
	if !strings.Contains(h, "Lowest FCT slowdown p99 (unfinished flows rank slowest): xor16 (2 [2, 2]), clearly ahead of crc16, whose 99th percentile falls among the unfinished flows") {
		t.Errorf("headline:\n%s", h)
	}
	js, err := json.Marshal(c.ByMethod["crc16"].Metrics[MetricSlowdownP99])
	if err != nil || !strings.Contains(string(js), `"value":null`) || !strings.Contains(string(js), `"unfinished":true`) || strings.Contains(string(js), "judged") {
		t.Errorf("an unfinished estimate in JSON: %s %v", js, err)
	}
	var back Estimate
	if err := json.Unmarshal(js, &back); err != nil || !back.Unfinished() {
		t.Errorf("an unfinished estimate read back: %v %v", back, err)
	}
	if row := csvOf(t, c.Table()); !strings.Contains(row, "crc16,fct.slowdown_p99,,inf,inf,inf,false,true\n") {
		t.Errorf("hash_comparison.csv lacks the unfinished p99 as inf:\n%s", row)
	}
}
