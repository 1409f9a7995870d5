package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// loneFlow is 200 UDP packets of 1500 bytes, one every 10 us, from host-p0-r0-h0 to
// host-p1-r2-h3 (a CSV mapping).
func loneFlow(t *testing.T) (trace, hosts string) {
	var pkts []tracegen.Packet
	for i := range 200 {
		pkts = append(pkts, tracegen.Packet{Time: units.Time(i) * 10 * units.Microsecond, Src: addr("10.0.0.1"), Dst: addr("10.0.4.1"),
			Proto: layers.IPProtocolUDP, SrcPort: 1000, DstPort: 4791, DSCP: 0, ECN: 2, Length: 1500})
	}
	trace = writeTrace(t, pkts)
	hosts = filepath.Join(t.TempDir(), "hosts.csv")
	if err := os.WriteFile(hosts, []byte("10.0.0.1/32,host-p0-r0-h0\n10.0.4.1/32,host-p1-r2-h3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return trace, hosts
}

// runEvents runs trace with the configuration cfg (events included) and returns
// run.json, the packets and the drops.
func runEvents(t *testing.T, trace, hosts string, cfg *config.Config) (*records.Run, []records.PacketRow, []records.DropRow, []string) {
	t.Helper()
	run, out := runTraceAbs(t, trace, func(o *Options) { o.Hosts, o.RecordPackets, o.Config = hosts, true, cfg })
	pkts, nodes, err := records.ReadAll(records.OpenPackets(filepath.Join(out, records.PacketsFile)))
	if err != nil {
		t.Fatal(err)
	}
	drops, _, err := records.ReadAll(records.OpenDrops(filepath.Join(out, records.DropsFile)))
	if err != nil {
		t.Fatal(err)
	}
	return run, pkts, drops, nodes
}

// TestEventLoneFlowLinkDown: the lone flow's rack uplink goes down while packet 100
// is on it. By hand: packet i leaves the host at i x 10 us, reaches rack-p0-r0 at
// +123,040 + 1,000,000 ps and is on the rack's uplink from then for 123,040 + 1 us:
// packet 100 from 1,001,123,040 to 1,002,246,080 ps. The link goes down at
// 1,001,623,040: packet 100 is dropped link-down there, at rack-p0-r0. With
// LocalRepairDelay 0 the rack's set loses the member at once and packet 101 (at the
// rack at 1,011,123,040) takes another fabric switch; with 20 us, packets 101 and 102
// reach the rack before the repair (1,021,623,040) and are dropped link-down at
// admission, and 103 takes another member. Every delivered packet arrives 6 x
// (123,040 + 1,000,000) ps after it was sent, whichever member it took.
func TestEventLoneFlowLinkDown(t *testing.T) {
	trace, hosts := loneFlow(t)
	_, healthy, _, nodes := runEvents(t, trace, hosts, nil)
	fabricSw := nodes[healthy[0].Path[2]]
	if !strings.HasPrefix(fabricSw, "fabric-p0-") {
		t.Fatalf("healthy path %v", healthy[0].Path)
	}
	const T = 1_001_623_040
	hop := int64(123_040 + 1_000_000)
	for _, tc := range []struct {
		repair string
		drops  []int64
	}{{"0", []int64{100}}, {"20us", []int64{100, 101, 102}}} {
		t.Run("repair-"+tc.repair, func(t *testing.T) {
			cfg := parseConfig(t, fmt.Sprintf("Routing: {LocalRepairDelay: %s}\nEvents:\n  - {At: %dps, Kind: link-down, Link: [rack-p0-r0, %s]}\n", tc.repair, T, fabricSw))
			run, pkts, drops, nodes := runEvents(t, trace, hosts, cfg)
			if len(drops) != len(tc.drops) {
				t.Fatalf("%d drops, want %d", len(drops), len(tc.drops))
			}
			for i, d := range drops {
				want := int64(T)
				if i > 0 {
					want = tc.drops[i]*10_000_000 + hop // dropped at admission, before the repair
				}
				if d.Reason != records.ReasonLinkDown || d.TraceIndex != tc.drops[i] || d.TimePs != want || nodes[d.Node] != "rack-p0-r0" {
					t.Errorf("drop %d: %+v at %s, want packet %d link-down at rack-p0-r0 at %d", i, d, nodes[d.Node], tc.drops[i], want)
				}
			}
			last := tc.drops[len(tc.drops)-1]
			for _, p := range pkts {
				if p.Fate != records.FateDelivered {
					continue
				}
				if got := p.DeliverPs - p.InjectPs; got != 6*hop {
					t.Errorf("packet %d delivered after %d ps, want %d", p.TraceIndex, got, 6*hop)
				}
				if f := nodes[p.Path[2]]; (p.TraceIndex > last) == (f == fabricSw) {
					t.Errorf("packet %d crossed %s (the lost member is %s)", p.TraceIndex, f, fabricSw)
				}
			}
			ev := run.Events[0]
			if ev.Dropped[records.ReasonLinkDown] != int64(len(tc.drops)) || ev.FlowsMoved != 1 || ev.TimePs != T {
				t.Errorf("event %+v: want %d link-down drops, 1 flow moved, at %d", ev, len(tc.drops), T)
			}
			if run.Simulation.Delivered != 200-int64(len(tc.drops)) {
				t.Errorf("delivered %d", run.Simulation.Delivered)
			}
		})
	}
}

// TestEventsEveryKind replays the demo trace (10x faster, so that its traffic meets
// the events) through every kind of event, open and closed loop, with the PFC
// watchdog on: run.json's conservation holds (Run refuses to write it otherwise), the
// records are byte-identical when run twice, and each event is in run.json. Event
// times are capture time (the simulation's x 10). The stalled host is the RoCEv2
// incast's receiver (its lossless packets arrive at 1 s of capture time): the
// watchdog finds the storm and drops.
func TestEventsEveryKind(t *testing.T) {
	events := `
Switch: {PfcWatchdog: {Enabled: true, DetectionTime: 2ms, RestorationTime: 2ms}, HashTable: resilient}
Routing: {LocalRepairDelay: 10us, ReconvergenceDelay: 1ms}
Events:
  - {At: 20ms, Kind: link-down, Link: [rack-p0-r0, fabric-p0-f1]}
  - {At: 30ms, Kind: link-up, Link: [rack-p0-r0, fabric-p0-f1]}
  - {At: 40ms, Kind: switch-down, Node: spine-s1-2}
  - {At: 80ms, Kind: switch-up, Node: spine-s1-2}
  - {At: 50ms, Kind: drain, Node: fabric-p1-f3}
  - {At: 90ms, Kind: undrain, Node: fabric-p1-f3}
  - {At: 100ms, Kind: flap, Link: ["fabric-p0-f2", "spine-s2-*"], Period: 20ms, Count: 3}
  - {At: 60ms, Kind: speed, Link: [rack-p1-r1, "fabric-p1-*"], Speed: 25Gbps}
  - {At: 950ms, Kind: stall, Node: host-p0-r0-h0}
  - {At: 1500ms, Kind: unstall, Node: host-p0-r0-h0}
  - {At: 200ms, Kind: link-down, Link: [host-p1-r3-h5, rack-p1-r3]}
`
	for _, closed := range []bool{false, true} {
		t.Run(fmt.Sprintf("closed=%v", closed), func(t *testing.T) {
			cfg := parseConfig(t, events)
			mut := func(o *Options) {
				o.Config, o.Speedup = cfg, 10
				if closed {
					closedOpts(o)
					o.Config.Switch.PfcWatchdog = cfg.Switch.PfcWatchdog
					o.Config.Switch.HashTable = cfg.Switch.HashTable
					o.Config.Routing, o.Config.Events = cfg.Routing, cfg.Events
				}
			}
			run, a := runTrace(t, "testdata/pcaps/demo.pcap", mut)
			_, b := runTrace(t, "testdata/pcaps/demo.pcap", mut)
			sameFiles(t, run, a, b)
			kinds := map[string]int{}
			for _, e := range run.Events {
				kinds[e.Kind]++
			}
			for _, k := range []string{"link-down", "link-up", "switch-down", "switch-up", "drain", "undrain", "speed", "stall", "unstall"} {
				if kinds[k] == 0 {
					t.Errorf("no %s event in run.json: %v", k, kinds)
				}
			}
			if kinds["link-down"] != 5 || kinds["link-up"] != 4 {
				t.Errorf("link events %v: want 5 downs and 4 ups (one, the flap's 3, the host link)", kinds)
			}
			if run.PfcWatchdog == nil || len(run.PfcWatchdog.Storms) == 0 || run.Simulation.Dropped[records.ReasonPFCWatchdog] == 0 {
				t.Fatalf("pfc_watchdog %+v, %d pfc-watchdog drops: want a storm with drops", run.PfcWatchdog, run.Simulation.Dropped[records.ReasonPFCWatchdog])
			}
			s := run.Simulation
			if s.Injected != s.Delivered+s.DroppedTotal()+s.UndrainedTotal() {
				t.Errorf("conservation: %+v", s)
			}
			// Per flow too, and the flows add up to the fabric's data packets.
			flows, _, err := records.ReadAll(records.OpenFlows(filepath.Join(a, records.FlowsFile)))
			if err != nil {
				t.Fatal(err)
			}
			var pkts, del int64
			for _, f := range flows {
				if f.Packets != f.Delivered+f.Dropped+f.Undrained {
					t.Errorf("flow %d: %d packets, %d delivered + %d dropped + %d undrained", f.FlowID, f.Packets, f.Delivered, f.Dropped, f.Undrained)
				}
				pkts += f.Packets
				del += f.Delivered
			}
			if pkts == 0 || (!closed && (pkts != s.Injected || del != s.Delivered)) {
				t.Errorf("flows: %d packets, %d delivered; run.json %d injected, %d delivered", pkts, del, s.Injected, s.Delivered)
			}
			t.Logf("dropped %v, storms %d, events %d", s.Dropped, len(run.PfcWatchdog.Storms), len(run.Events))
		})
	}
}

// TestEventErrors: each bad event is one line naming the file, line, event and rule.
func TestEventErrors(t *testing.T) {
	trace, hosts := loneFlow(t)
	dir := t.TempDir()
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown node", "Events:\n  - {At: 1ms, Kind: switch-down, Node: spine-s9-9}\n",
			`cfg.yaml:2: Events[0].Node: "spine-s9-9" is no node and matches none (unknown node)`},
		{"unknown link end", "Events:\n  - {At: 1ms, Kind: link-down, Link: [rack-p0-r0, nowhere]}\n",
			`cfg.yaml:2: Events[0].Link: "nowhere" is no node and matches none (unknown node)`},
		{"no such link", "Events:\n  - {At: 1ms, Kind: link-down, Link: [rack-p0-r0, rack-p0-r1]}\n",
			`cfg.yaml:2: Events[0].Link: no link joins rack-p0-r0 and rack-p0-r1`},
		{"before the trace", "Events:\n  - {At: -1ms, Kind: switch-down, Node: spine-s0-0}\n",
			`cfg.yaml:2: Events[0].At: -1ms is before the trace`},
		{"overlap", "Events:\n  - {At: 1ms, Kind: link-down, Link: [rack-p0-r0, fabric-p0-f0]}\n  - {At: 5ms, Kind: flap, Link: [rack-p0-r0, \"fabric-p0-*\"], Period: 2ms, Count: 2}\n",
			`cfg.yaml:3: Events[1].At: link-down link rack-p0-r0 - fabric-p0-f0 at 5ms overlaps Events[0] (link-down at 1ms, not up again before): overlapping events on one link`},
		{"up of what is up", "Events:\n  - {At: 1ms, Kind: link-up, Link: [rack-p0-r0, fabric-p0-f0]}\n",
			`cfg.yaml:2: Events[0].At: link-up link rack-p0-r0 - fabric-p0-f0 at 1ms: it is not down then`},
		{"host as switch", "Events:\n  - {At: 1ms, Kind: drain, Node: host-p0-r0-h0}\n",
			`cfg.yaml:2: Events[0].Node: host-p0-r0-h0 is not a switch (drain names a switch)`},
		{"kind", "Events:\n  - {At: 1ms, Kind: explode, Node: spine-s0-0}\n",
			`cfg.yaml:2: Events[0].Kind: "explode" is unknown`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "cfg.yaml")
			if err := os.WriteFile(p, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, _, err := config.Load(p, nil)
			if err == nil {
				_, err = Prepare(Options{Traces: []string{trace}, Hosts: hosts, Config: cfg})
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if strings.Count(strings.TrimPrefix(err.Error(), p), "\n") != 0 {
				t.Errorf("error of several lines: %q", err)
			}
		})
	}
}

// ringTrace is, for the ring of testdata/topologies/ring.yaml, 3,000 lossless
// (DSCP 26, TC 3) 1500-byte packets from each host to the host two switches on, one
// every 124 ns (99% of 100 Gb/s): each ring link is offered twice its speed.
func ringTrace(t *testing.T) (trace, hosts string) {
	var pkts []tracegen.Packet
	for i := range 3000 {
		for k := range 5 {
			pkts = append(pkts, tracegen.Packet{Time: units.Time(i) * 124 * units.Nanosecond, Src: addr(fmt.Sprintf("10.0.0.%d", k+1)),
				Dst: addr(fmt.Sprintf("10.0.0.%d", (k+2)%5+1)), Proto: layers.IPProtocolUDP, SrcPort: 1000, DstPort: 4791, DSCP: 26, ECN: 2, Length: 1500})
		}
	}
	trace = writeTrace(t, pkts)
	hosts = filepath.Join(t.TempDir(), "hosts.csv")
	var csv strings.Builder
	for k := range 5 {
		fmt.Fprintf(&csv, "10.0.0.%d/32,s%d-h0\n", k+1, k)
	}
	if err := os.WriteFile(hosts, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return trace, hosts
}

// TestRingDeadlock: the ring's cyclic buffer dependency deadlocks; run.json names the
// cycle's five ports in order (s0's port 1 towards s1, then each switch's port 2
// towards the next), pfc.arrow has a deadlock row per port, and every undrained
// packet is the deadlock's. With the PFC watchdog (drop, 2 ms) the deadlock is
// resolved at the first storm, and everything drains.
func TestRingDeadlock(t *testing.T) {
	trace, hosts := ringTrace(t)
	ring := repoPath(t, "testdata/topologies/ring.yaml")
	for _, wd := range []bool{false, true} {
		t.Run(fmt.Sprintf("watchdog=%v", wd), func(t *testing.T) {
			y := fmt.Sprintf("Topology: {File: %q}\nSwitch: {BufferSize: 1MiB, PfcWatchdog: {Enabled: %v, DetectionTime: 2ms, RestorationTime: 2ms}}\n", ring, wd)
			cfg := parseConfig(t, y)
			run, out := runTraceAbs(t, trace, func(o *Options) { o.Hosts, o.Config, o.MaxDrain = hosts, cfg, 10*units.Millisecond })
			if len(run.Deadlocks) != 1 {
				t.Fatalf("deadlocks %+v, want 1", run.Deadlocks)
			}
			d := run.Deadlocks[0]
			var got []string
			for _, p := range d.Ports {
				got = append(got, fmt.Sprintf("%s:%d>%s", p.Node, p.Port, p.Peer))
			}
			if want := "s0:1>s1 s1:2>s2 s2:2>s3 s3:2>s4 s4:2>s0"; strings.Join(got, " ") != want {
				t.Errorf("cycle %v, want %s", got, want)
			}
			rows, nodes, err := records.ReadAll(records.OpenPFC(filepath.Join(out, records.PFCFile)))
			if err != nil {
				t.Fatal(err)
			}
			var dl, resolved int
			for _, r := range rows {
				switch r.Event {
				case records.EventDeadlock:
					dl++
					if r.TimePs != d.DetectedPs || r.TC != 3 || !strings.HasPrefix(nodes[r.Node], "s") {
						t.Errorf("deadlock row %+v", r)
					}
				case records.EventDeadlockResolved:
					resolved++
				}
			}
			sim := run.Simulation
			if !wd {
				if d.ResolvedPs != -1 || d.Undrained == 0 || d.Undrained != sim.UndrainedTotal() || dl != 5 || resolved != 0 {
					t.Errorf("deadlock %+v (%d deadlock rows, %d resolved), undrained %d: want unresolved, holding every undrained packet", d, dl, resolved, sim.UndrainedTotal())
				}
				return
			}
			if len(run.PfcWatchdog.Storms) == 0 || d.ResolvedPs != run.PfcWatchdog.Storms[0].DetectedPs || resolved != 5 || sim.UndrainedTotal() != 0 || d.Undrained != 0 {
				t.Errorf("deadlock %+v, storms %+v, %d resolved rows, undrained %d: want resolved by the first storm and drained", d, run.PfcWatchdog.Storms, resolved, sim.UndrainedTotal())
			}
		})
	}
}
