package main

import (
	"fmt"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/fabric"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/plots"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
)

// railFabric is a small rail-optimized fabric: 4 servers of 2 NICs in 2 rail groups,
// rail leaves rail-g{group}-r{rail} (2 NICs each) joined to 2 spines; host links
// 100 Gb/s, spine links 400 Gb/s (so that no spine link is a bottleneck).
const railFabric = `Generator: rail-optimized
Servers: 4
Rails: 2
ServersPerGroup: 2
Spines: 2
HostLink: {Speed: 100Gbps, PropagationDelay: 1us}
SpineLink: {Speed: 400Gbps, PropagationDelay: 1us}
`

// railAddr is the address of NIC rail of server s, placed on its host by the CSV map.
func railAddr(s, rail int) string { return fmt.Sprintf("10.0.%d.%d", s, rail+1) }

// fabricRun replays streams through the topology file text with the addresses of
// railAddr mapped to their NICs by a CSV file; mutate adjusts the options.
func fabricRun(t *testing.T, text string, mutate func(*replay.Options), streams ...tracegen.Stream) string {
	t.Helper()
	dir := t.TempDir()
	topo := filepath.Join(dir, "fabric.yaml")
	if err := os.WriteFile(topo, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var csv strings.Builder
	for s := range 4 {
		for r := range 2 {
			fmt.Fprintf(&csv, "%s,srv%d-nic%d\n", railAddr(s, r), s, r)
		}
	}
	hosts := filepath.Join(dir, "hosts.csv")
	if err := os.WriteFile(hosts, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "trace.pcap")
	sc := &tracegen.Scenario{Name: "trace.pcap", Seed: 7, Epoch: time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)}
	for i := range streams {
		sc.Generators = append(sc.Generators, &streams[i])
	}
	if _, err := sc.WriteFile(trace); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load("", []string{fmt.Sprintf("Topology.File=%q", topo)})
	if err != nil {
		t.Fatal(err)
	}
	o := replay.Options{Traces: []string{trace}, Config: cfg, Hosts: hosts, Version: "test"}
	if mutate != nil {
		mutate(&o)
	}
	pr, err := replay.Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	if _, err := pr.Run(out, ""); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFabricHeatNumbers: the heat map's numbers by hand. One UDP flow of 10
// packets of 1,000 B from srv0-nic0 (leaf rail-g0-r0) to srv1-nic1 (leaf
// rail-g0-r1), and one 5,000 B packet of another flow that --oversize drop drops at
// the source NIC (Mtu 4000). Each link of the path host -> leaf -> spine -> leaf ->
// host sent the 10 frames once, 10 x (1,000 + 18 + 20) = 10,380 wire bytes, so its
// utilization is 10,380 x 8 / (speed x simulated time); every other link, and the
// reverse directions, sent nothing. The one drop is at srv0-nic0's port: its link has
// drops 1, every other none; the picture's line for rail-g0-r0's hosts takes its
// busiest link (srv0-nic0's) and adds the drops.
func TestFabricHeatNumbers(t *testing.T) {
	out := fabricRun(t, railFabric, func(o *replay.Options) {
		o.Oversize = replay.OversizeDrop
		o.Config.Switch.Mtu = 4000
	},
		tracegen.Stream{Src: netip.MustParseAddr(railAddr(0, 0)), Dst: netip.MustParseAddr(railAddr(1, 1)), Class: tracegen.UDPData,
			Duration: 100 * units.Microsecond, Length: 1000, Interval: 10 * units.Microsecond},
		tracegen.Stream{Src: netip.MustParseAddr(railAddr(0, 0)), Dst: netip.MustParseAddr(railAddr(1, 1)), Class: tracegen.TCPData,
			Start: 200 * units.Microsecond, Duration: units.Microsecond, Length: 5000, Interval: units.Microsecond})
	in, err := loadRun(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := in.run.Info.Dropped[records.ReasonOversize]; d != 1 || in.run.Info.DroppedTotal() != 1 || in.run.Info.Delivered != 10 {
		t.Fatalf("dropped %v, delivered %d: want the oversize packet dropped and 10 delivered", in.run.Info.Dropped, in.run.Info.Delivered)
	}
	f, heat := heatOf(t, in)
	sim := float64(in.run.Info.SimPs) / 1e12
	name := func(n int32) string { return f.Nodes[n].Name }
	linkOf := func(a, b string) int {
		for id, l := range f.Links {
			if x, y := name(l.A.Node), name(l.B.Node); x == a && y == b || x == b && y == a {
				return id
			}
		}
		t.Fatalf("no link %s - %s", a, b)
		return -1
	}
	// The spine the flow took: the one whose link from rail-g0-r0 carried anything.
	spine := ""
	for _, s := range []string{"spine-0", "spine-1"} {
		if heat.Utilization[linkOf("rail-g0-r0", s)] > 0 {
			if spine != "" {
				t.Fatalf("both spines carried the one flow")
			}
			spine = s
		}
	}
	if spine == "" {
		t.Fatal("no spine link carried the flow")
	}
	path := map[int]float64{
		linkOf("srv0-nic0", "rail-g0-r0"): 100e9,
		linkOf("rail-g0-r0", spine):       400e9,
		linkOf(spine, "rail-g0-r1"):       400e9,
		linkOf("rail-g0-r1", "srv1-nic1"): 100e9,
	}
	const wire = 10 * (1000 + 18 + 20)
	for id := range f.Links {
		want := 0.0
		if speed, ok := path[id]; ok {
			want = wire * 8 / (speed * sim)
		}
		if got := heat.Utilization[id]; math.Abs(got-want) > 1e-12*math.Max(want, 1) {
			t.Errorf("link %d %s - %s: utilization %g, want %g", id, name(f.Links[id].A.Node), name(f.Links[id].B.Node), got, want)
		}
		wantDrops := int64(0)
		if id == linkOf("srv0-nic0", "rail-g0-r0") {
			wantDrops = 1
		}
		if heat.Drops[id] != wantDrops {
			t.Errorf("link %d %s - %s: drops %d, want %d", id, name(f.Links[id].A.Node), name(f.Links[id].B.Node), heat.Drops[id], wantDrops)
		}
	}
	// The picture: rail-g0-r0's hosts box line stands for srv0-nic0's and srv1-nic0's
	// host links: the busier one's utilization and the one drop.
	hostLink := linkOf("srv0-nic0", "rail-g0-r0")
	found := false
	for _, l := range f.Picture().Links {
		if !containsLink(l, int32(hostLink)) {
			continue
		}
		found = true
		if len(l.Links) != 2 || !containsLink(l, int32(linkOf("srv1-nic0", "rail-g0-r0"))) {
			t.Errorf("the hosts line of rail-g0-r0 stands for links %v", l.Links)
		}
		u, d := heat.Of(l)
		if u != heat.Utilization[hostLink] || d != 1 {
			t.Errorf("hosts line of rail-g0-r0: utilization %g, drops %d; want %g and 1", u, d, heat.Utilization[hostLink])
		}
	}
	if !found {
		t.Error("no picture line for srv0-nic0's link")
	}
	if _, err := fabricHeatFigure(in); err != nil {
		t.Fatal(err)
	}
	t.Logf("host link utilization %.3g%% over %.3g us simulated (spine %s)", 100*heat.Utilization[hostLink], sim*1e6, spine)
}

func containsLink(l fabric.PictureLink, id int32) bool {
	for _, x := range l.Links {
		if x == id {
			return true
		}
	}
	return false
}

// TestRoleTables: the per-tier tables of a run through a topology file group by the
// file's roles. Three TCP senders on three other rail leaves (srv0-nic1, srv2-nic0,
// srv2-nic1; 10 flows each, every flow at 10 Gb/s for 200 us) send to srv1-nic0 on
// rail-g0-r0: 3:1 into its 100 Gb/s host link, while the spine links (400 Gb/s) carry
// at most 300 Gb/s; 4 MiB switch buffers. By hand: every drop is at the egress port of rail-g0-r0 (role leaf,
// records tier rack), so drops by tier read {leaf: all of run.json's drops}; every
// flow crosses exactly one equal-cost set, its source leaf's uplinks (the spines'
// down sets are single links), so imbalance.tiers holds leaf alone with a flow count
// of 30; the marking queues are leaves'. The records' tier names (rack, fabric) appear
// in none of the tables, and the report says "role".
func TestRoleTables(t *testing.T) {
	out := fabricRun(t, railFabric, func(o *replay.Options) { o.Config.Switch.BufferSize = 4 * units.MiB }, railIncast()...)
	code, stdout, stderr := runCmd(out)
	if code != 0 {
		t.Fatalf("analyze: %d\n%s%s", code, stdout, stderr)
	}
	sum := readJSON(t, filepath.Join(out, "analysis", "summary.json"))
	rj := readRunJSON(t, out)
	total := rj.Simulation.DroppedTotal()
	if total == 0 {
		t.Fatal("the incast dropped nothing")
	}
	byTier, _ := lookup(sum, "drops", "by_tier")
	if m, ok := byTier.(map[string]any); !ok || len(m) != 1 || m["leaf"] != float64(total) {
		t.Errorf("drops.by_tier %v, want {leaf: %d}", byTier, total)
	}
	byNode, _ := lookup(sum, "drops", "by_node")
	if m, ok := byNode.(map[string]any); !ok || len(m) != 1 || m["rail-g0-r0"] != float64(total) {
		t.Errorf("drops.by_node %v, want {rail-g0-r0: %d}", byNode, total)
	}
	tiers, _ := lookup(sum, "imbalance", "tiers")
	if m, ok := tiers.(map[string]any); !ok || len(m) != 1 || m["leaf"] == nil {
		t.Fatalf("imbalance.tiers %v, want leaf alone", tiers)
	}
	if n := number(t, sum, "imbalance", "tiers", "leaf", "flow_count"); n != 30 {
		t.Errorf("leaf flow_count %v, want 30", n)
	}
	queues, _ := lookup(sum, "ecn", "queues")
	for _, q := range queues.([]any) {
		if tier := q.(map[string]any)["tier"]; tier != "leaf" {
			t.Errorf("ECN queue %v: tier %v, want leaf", q, tier)
		}
	}
	tables := filepath.Join(out, "analysis", "tables")
	dropsBy, err := os.ReadFile(filepath.Join(tables, "drops_by.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("tier,leaf,%d\n", total); !strings.Contains(string(dropsBy), want) {
		t.Errorf("drops_by.csv has no %q:\n%s", want, dropsBy)
	}
	ecmpTiers, err := os.ReadFile(filepath.Join(tables, "ecmp_tiers.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, csv := range []string{string(dropsBy), string(ecmpTiers)} {
		if strings.Contains(csv, ",rack,") || strings.Contains(csv, "\nrack,") || strings.Contains(csv, "fabric") {
			t.Errorf("a per-tier table names a records tier:\n%s", csv)
		}
	}
	if !strings.HasPrefix(strings.SplitN(string(ecmpTiers), "\n", 3)[1], "leaf,bytes,") {
		t.Errorf("ecmp_tiers.csv:\n%s", ecmpTiers)
	}
	md, err := os.ReadFile(filepath.Join(out, "analysis", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**By role**", "| role | drops |", "**Imbalance per role", fmt.Sprintf("| leaf | %s |", units.FormatShare(total, total))} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md has no %q:\n%s", want, md)
		}
	}
	// The Clos's names stay the tiers': the same words through analysis.Role.
	if analysis.TierRole(records.TierRack) != "rack" {
		t.Error("the Clos's rack tier is not role rack")
	}
}

// railIncast is TestRoleTables' incast: three senders on three other rail leaves
// (srv0-nic1, srv2-nic0, srv2-nic1; 10 flows each at 10 Gb/s for 200 us) into
// srv1-nic0 on rail-g0-r0.
func railIncast() []tracegen.Stream {
	var streams []tracegen.Stream
	for _, src := range [][2]int{{0, 1}, {2, 0}, {2, 1}} {
		for k := range 10 {
			streams = append(streams, tracegen.Stream{Src: netip.MustParseAddr(railAddr(src[0], src[1])), Dst: netip.MustParseAddr(railAddr(1, 0)), Class: tracegen.TCPData,
				Start: units.Time(k) * 100 * units.Nanosecond, Duration: 200 * units.Microsecond, Length: 1500, Rate: 100 * units.Gbps / 10})
		}
	}
	return streams
}

// TestFabricHeatFromPackets: the heat map of a loaded run against numbers computed
// here from other records than the ports.arrow it reads. The incast of railIncast
// (4 MiB buffers: it drops at rail-g0-r0), recorded with --record-packets: every
// packet's path in packets.arrow says which links carried it, in which direction
// (consecutive nodes; a dropped packet's path ends at the dropping node, which it
// reached), so a link direction sent the sum of (IP length + 18 bytes of Ethernet
// header and FCS + 20 of preamble and gap) of the packets that crossed it; a link's
// utilization is its busier direction x 8 over speed x simulated time. Its drops are
// drops.arrow's rows charged to its two ports. Open loop without lossless traffic:
// no frame is sent that packets.arrow does not list (no PFC frames, no ACKs), and
// nothing is left undrained.
func TestFabricHeatFromPackets(t *testing.T) {
	out := fabricRun(t, railFabric, func(o *replay.Options) {
		o.Config.Switch.BufferSize = 4 * units.MiB
		o.RecordPackets = true
	}, railIncast()...)
	in, err := loadRun(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if in.run.Info.Undrained != 0 || in.run.Info.DroppedTotal() == 0 || in.run.Info.PFCFrames != 0 {
		t.Fatalf("undrained %d, dropped %d, PFC frames %d: want drops, nothing undrained, no pause", in.run.Info.Undrained, in.run.Info.DroppedTotal(), in.run.Info.PFCFrames)
	}
	f, heat := heatOf(t, in)
	// Links by their ends (the rail fabric has no parallel links), ports to links.
	type dir struct{ from, to int32 }
	linkOf := map[dir]int{}
	type port struct{ node, port int32 }
	portLink := map[port]int{}
	for id, l := range f.Links {
		linkOf[dir{l.A.Node, l.B.Node}], linkOf[dir{l.B.Node, l.A.Node}] = id, id
		portLink[port{l.A.Node, l.A.Port}], portLink[port{l.B.Node, l.B.Port}] = id, id
	}
	pkts, _, err := records.ReadAll(records.OpenPackets(filepath.Join(out, records.PacketsFile)))
	if err != nil {
		t.Fatal(err)
	}
	sent := map[dir]int64{}
	for _, p := range pkts {
		for i := 0; i+1 < len(p.Path); i++ {
			d := dir{p.Path[i], p.Path[i+1]}
			if _, ok := linkOf[d]; !ok {
				t.Fatalf("packet %d: %d -> %d is no link", p.TraceIndex, d.from, d.to)
			}
			sent[d] += int64(p.Bytes) + 18 + 20
		}
	}
	drops, _, err := records.ReadAll(records.OpenDrops(filepath.Join(out, records.DropsFile)))
	if err != nil {
		t.Fatal(err)
	}
	wantDrops := make([]int64, len(f.Links))
	for _, d := range drops {
		id, ok := portLink[port{d.Node, d.Port}]
		if !ok {
			t.Fatalf("drop at node %d port %d: no link", d.Node, d.Port)
		}
		wantDrops[id]++
	}
	if int64(len(drops)) != in.run.Info.DroppedTotal() {
		t.Fatalf("%d rows in drops.arrow, run.json says %d", len(drops), in.run.Info.DroppedTotal())
	}
	sim := float64(in.run.Info.SimPs) / 1e12
	busiest, withDrops := 0.0, 0
	for id, l := range f.Links {
		b := max(sent[dir{l.A.Node, l.B.Node}], sent[dir{l.B.Node, l.A.Node}])
		want := float64(b) * 8 / (float64(l.Speed) * sim)
		if got := heat.Utilization[id]; math.Abs(got-want) > 1e-12*math.Max(want, 1) {
			t.Errorf("link %d %s - %s: utilization %g, want %g from packets.arrow", id, f.Nodes[l.A.Node].Name, f.Nodes[l.B.Node].Name, got, want)
		}
		if heat.Drops[id] != wantDrops[id] {
			t.Errorf("link %d %s - %s: drops %d, want %d from drops.arrow", id, f.Nodes[l.A.Node].Name, f.Nodes[l.B.Node].Name, heat.Drops[id], wantDrops[id])
		}
		busiest = max(busiest, want)
		if wantDrops[id] > 0 {
			withDrops++
		}
	}
	if busiest == 0 || withDrops == 0 {
		t.Fatalf("busiest link %g, %d links with drops: the incast did not load the fabric", busiest, withDrops)
	}
	t.Logf("%d packets, %d drops on %d links; busiest link %.1f%% over %.3g us", len(pkts), len(drops), withDrops, 100*busiest, sim*1e6)
}

// TestReportStagePolarization: analyze of a five-stage run with the unsalted crc32
// (every switch the same hash h of a flow: members h mod 2, h mod 4, h mod 2, so
// each stage's choice is a function of the other's: AMI 1 in both pairs, as
// replay's TestStagesFiveStagePolarization pins from the records) reports both pairs:
// summary.json polarization_stages, tables/polarization_stages.csv (rows by hand:
// stages 1 -> 2 leaf -> spine, 2 -> 3 spine -> super-spine, source stages.arrow),
// the report's table and a headline line for stage 2 -> 3 (stage 1 -> 2 is the rack
// and fabric line).
func TestReportStagePolarization(t *testing.T) {
	dir := t.TempDir()
	topo := filepath.Join("..", "..", "testdata", "topologies", "five-stage-no-planes.yaml")
	cfg, _, err := config.Load("", []string{fmt.Sprintf("Topology.File=%q", topo), "Switch.EcmpHashMethod=crc32"})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := replay.Prepare(replay.Options{Traces: []string{filepath.Join("..", "..", "testdata", "pcaps", "many-flows.pcap")}, Config: cfg, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	if _, err := pr.Run(out, ""); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCmd(out); code != 0 {
		t.Fatalf("analyze: %d\n%s%s", code, stdout, stderr)
	}
	sum := readJSON(t, filepath.Join(out, "analysis", "summary.json"))
	stages, _ := lookup(sum, "polarization_stages")
	ps, ok := stages.([]any)
	if !ok || len(ps) != 2 {
		t.Fatalf("polarization_stages %v, want 2 pairs", stages)
	}
	for i, p := range ps {
		m := p.(map[string]any)
		if m["from"] != float64(i+1) || m["to"] != float64(i+2) || m["from_stages_arrow"] != true || m["judged"] != true ||
			math.Abs(m["ami"].(float64)-1) > 1e-9 || math.Abs(m["nmi"].(float64)-1) > 1e-9 || m["flows"] != float64(4000) {
			t.Errorf("pair %d: %v; want stages %d -> %d from stages.arrow over 4,000 flows, AMI and NMI 1", i, m, i+1, i+2)
		}
	}
	csv, err := os.ReadFile(filepath.Join(out, "analysis", "tables", "polarization_stages.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "1,2,leaf,spine,4000,true,1,") || !strings.HasPrefix(lines[2], "2,3,spine,super-spine,4000,true,1,") ||
		!strings.HasSuffix(lines[1], ",stages.arrow") || !strings.HasSuffix(lines[2], ",stages.arrow") {
		t.Errorf("polarization_stages.csv:\n%s", csv)
	}
	md, err := os.ReadFile(filepath.Join(out, "analysis", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Polarization between consecutive ECMP stages", "stage 2 -> 3 (spine -> super-spine)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md has no %q", want)
		}
	}
	head, _ := lookup(sum, "headline")
	n := 0
	for _, l := range head.([]any) {
		if strings.HasPrefix(l.(string), "Polarization between the choices of stage 2 -> 3 (spine -> super-spine): AMI 1 ") {
			n++
		}
		if strings.Contains(l.(string), "choices of stage 1 -> 2") {
			t.Errorf("headline repeats the rack and fabric pair: %q", l)
		}
	}
	if n != 1 {
		t.Errorf("headline %v: want one line for stage 2 -> 3", head)
	}
}

// heatOf rebuilds the run's fabric and reads its heat map.
func heatOf(t *testing.T, in *runInput) (*fabric.Fabric, *plots.LinkHeat) {
	t.Helper()
	f, err := recordedFabric(in)
	if err != nil || f == nil {
		t.Fatal(f, err)
	}
	heat, err := linkHeat(in, f)
	if err != nil {
		t.Fatal(err)
	}
	return f, heat
}
