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

// TestEventDrainUndrain: the lone flow's spine is drained at D = 1 ms and undrained
// at U = 1.5 ms with ReconvergenceDelay R = 100 us, LocalRepairDelay 0 (a drain has no
// local repair). By hand, on the default Clos (every link 100 Gb/s, 1 us): a 1500-byte
// packet serializes in 1500 x 8 / 100e9 s = 120 ns plus the 38 bytes of framing
// (1538 x 8 / 100 = 123.04 ns = 123,040 ps), so one hop is 123,040 + 1,000,000 =
// 1,123,040 ps and packet i (sent at i x 10 us) reaches its source fabric switch
// fabric-p0-fX, which picks the spine, at i x 10,000,000 + 2 x 1,123,040 ps. The
// fabric switches install the drained routes at D + R = 1,100,000,000 ps: packets
// 0..109 (packet 109 at 1,092,246,080) take the spine S, packets 110..159 another
// spine (110 at 1,102,246,080); the undrained routes come at U + R = 1,600,000,000 ps:
// packet 160 (at 1,602,246,080) takes S again (modulo hashing of the full set picks
// the original member), and so on to 199. The packets on S when it is withdrawn
// (those past the fabric switch before D + R) continue: nothing is dropped and every
// packet arrives 6 hops after it left. The drain withdraws S from every equal-cost
// set that has it: the two fabric switches of its plane (fabric-p0-fX toward pod 1,
// fabric-p1-fX toward pod 0), each one set with S's member not live; the undrain puts
// it back in both.
func TestEventDrainUndrain(t *testing.T) {
	trace, hosts := loneFlow(t)
	_, healthy, _, nodes := runEvents(t, trace, hosts, nil)
	spine := nodes[healthy[0].Path[3]]
	if !strings.HasPrefix(spine, "spine-") {
		t.Fatalf("healthy path %v", healthy[0].Path)
	}
	plane := strings.Split(strings.TrimPrefix(spine, "spine-s"), "-")[0]
	const (
		hop = int64(123_040 + 1_000_000)
		D   = int64(1_000_000_000)
		U   = int64(1_500_000_000)
		R   = int64(100_000_000)
	)
	cfg := parseConfig(t, fmt.Sprintf("Routing: {LocalRepairDelay: 0, ReconvergenceDelay: %dps}\nEvents:\n  - {At: %dps, Kind: drain, Node: %s}\n  - {At: %dps, Kind: undrain, Node: %s}\n", R, D, spine, U, spine))
	run, pkts, drops, nodes := runEvents(t, trace, hosts, cfg)
	if len(drops) != 0 {
		t.Fatalf("%d drops: a drain drops nothing", len(drops))
	}
	if run.Simulation.Delivered != 200 || len(pkts) != 200 {
		t.Fatalf("delivered %d of %d packets", run.Simulation.Delivered, len(pkts))
	}
	for _, p := range pkts {
		if got := p.DeliverPs - p.InjectPs; p.Fate != records.FateDelivered || got != 6*hop {
			t.Errorf("packet %d: fate %v, delivered after %d ps, want %d", p.TraceIndex, p.Fate, got, 6*hop)
		}
		// Its routing decision at the fabric switch, by hand.
		at := p.TraceIndex*10_000_000 + 2*hop
		if p.InjectPs+2*hop != at {
			t.Errorf("packet %d injected at %d, want %d", p.TraceIndex, p.InjectPs, at-2*hop)
		}
		onS := at < D+R || at > U+R
		if got := nodes[p.Path[3]] == spine; got != onS {
			t.Errorf("packet %d (at the fabric switch at %d ps) crossed %s: on the drained spine %v, want %v", p.TraceIndex, at, nodes[p.Path[3]], got, onS)
		}
		if f := nodes[p.Path[2]]; f != "fabric-p0-f"+plane {
			t.Errorf("packet %d crossed %s, want fabric-p0-f%s (the rack's set is untouched)", p.TraceIndex, f, plane)
		}
	}
	if got := pkts[110].TraceIndex; got != 110 {
		t.Fatalf("packets out of order: %d at 110", got)
	}
	if len(run.Events) != 2 {
		t.Fatalf("%d events", len(run.Events))
	}
	for i, ev := range run.Events {
		at := []int64{D, U}[i]
		if ev.TimePs != at || ev.ReconvergedPs != at+R || ev.LocalRepairPs != -1 || ev.SetsChanged != 2 || ev.RoutesMoved != 0 {
			t.Errorf("event %d %s: %+v; want at %d, reconverged %d, no local repair, 2 sets changed, no route moved", i, ev.Kind, ev, at, at+R)
		}
		if ev.FlowsMoved != 1 {
			t.Errorf("event %d %s: %d flows moved, want 1 (the lone flow)", i, ev.Kind, ev.FlowsMoved)
		}
		if ev.After == nil || len(ev.After.Sets) != 2 {
			t.Fatalf("event %d %s: after %+v, want the two sets of plane %s", i, ev.Kind, ev.After, plane)
		}
		want := map[string]bool{"fabric-p0-f" + plane: true, "fabric-p1-f" + plane: true}
		for _, s := range ev.After.Sets {
			if !want[s.Node] {
				t.Errorf("event %d: set %d of %s changed", i, s.Set, s.Node)
			}
			delete(want, s.Node)
			found := false
			for _, m := range s.Members {
				if m.Peer == spine {
					found = true
					if m.Live != (ev.Kind == "undrain") {
						t.Errorf("event %d %s: %s's member to %s live %v", i, ev.Kind, s.Node, spine, m.Live)
					}
				} else if !m.Live {
					t.Errorf("event %d %s: %s's member to %s not live", i, ev.Kind, s.Node, m.Peer)
				}
			}
			if !found || len(s.Members) != 4 {
				t.Errorf("event %d: %s's set %+v: want 4 members, one to %s", i, s.Node, s.Members, spine)
			}
		}
		// Bytes on the changed sets after the event, by hand: the drain's interval
		// [D + R, U) carries packets 110..149 (at the fabric switch before U), 40
		// frames of 1518 bytes (1500 + 14 Ethernet header + 4 FCS; the 20 bytes of
		// preamble and gap are not frame bytes), none on S; the undrain's
		// [U + R, end) packets 160..199, all on S.
		var total, onSpine int64
		for _, s := range ev.After.Sets {
			for _, m := range s.Members {
				total += m.Bytes
				if m.Peer == spine {
					onSpine += m.Bytes
				}
			}
		}
		wantOn := []int64{0, 40 * 1518}[i]
		if total != 40*1518 || onSpine != wantOn {
			t.Errorf("event %d %s: %d bytes on the changed sets, %d on %s; want %d and %d", i, ev.Kind, total, onSpine, spine, 40*1518, wantOn)
		}
	}
}
