package replay

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/fabric"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// parseConfig is config.Parse of a YAML text and --set overrides, fatal on error.
func parseConfig(t *testing.T, yaml string, sets ...string) *config.Config {
	t.Helper()
	c, _, err := config.Parse([]byte(yaml), "", sets)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClosFileSameRecords: the default configuration and a topology file with the
// clos generator's default parameters give byte-identical records on every committed
// trace, open and closed loop (the records of main before topology files are pinned
// by /work/baseline's records.sh for the default path).
func TestClosFileSameRecords(t *testing.T) {
	traces, _ := filepath.Glob(repoPath(t, "testdata/pcaps/*.pcap"))
	if len(traces) < 5 {
		t.Fatalf("committed traces: %v", traces)
	}
	file := repoPath(t, "testdata/topologies/clos.yaml")
	for _, tr := range traces {
		rel, _ := filepath.Rel(repoPath(t, ""), tr)
		for _, mode := range []string{"open", "closed"} {
			opts := func(file string) func(*Options) {
				return func(o *Options) {
					c := parseConfig(t, "", "Transport.Mode="+mode, fmt.Sprintf("Topology.File=%q", file))
					o.Config, o.RecordPackets = c, true
				}
			}
			run, a := runTrace(t, rel, opts(""))
			_, b := runTrace(t, rel, opts(file))
			sameFiles(t, run, a, b)
		}
	}
}

// TestLeafSpineEqualsOnePod: a leaf-spine file of 8 leaves x 16 hosts and 4 spines,
// named as the Clos, replays exactly as Topology.Pods 1 with 8 racks (leaves are the racks'
// records tier, spines the fabric's).
func TestLeafSpineEqualsOnePod(t *testing.T) {
	file := repoPath(t, "testdata/topologies/leaf-spine.yaml")
	for _, mode := range []string{"open", "closed"} {
		run, a := runTrace(t, "testdata/pcaps/demo.pcap", func(o *Options) {
			o.Config, o.RecordPackets = parseConfig(t, "", "Topology.Pods=1", "Topology.RacksPerPod=8", "Transport.Mode="+mode), true
		})
		_, b := runTrace(t, "testdata/pcaps/demo.pcap", func(o *Options) {
			o.Config, o.RecordPackets = parseConfig(t, "", fmt.Sprintf("Topology.File=%q", file), "Transport.Mode="+mode), true
		})
		sameFiles(t, run, a, b)
	}
}

// TestWCMPFlowShares: leaf-0 of testdata/topologies/explicit.yaml reaches the other
// leaf over a 400G link to spine-0 and a 100G link to spine-1; 4,000 one-packet
// flows from its hosts split 4:1 between them. The count on the 400G member must lie
// in the binomial interval n*p +- 3.29*sqrt(n*p*(1-p)) (99.9%, p = 0.8).
func TestWCMPFlowShares(t *testing.T) {
	const n = 4000
	var pkts []tracegen.Packet
	for i := range n {
		src := netip.AddrFrom4([4]byte{10, 0, 0, byte(1 + i%8)})
		dst := netip.AddrFrom4([4]byte{10, 0, 1, byte(1 + (i/8)%8)})
		pkts = append(pkts, tracegen.Packet{Time: units.Time(i) * units.Microsecond, Src: src, Dst: dst,
			Proto: layers.IPProtocolUDP, SrcPort: uint16(10000 + i), DstPort: 7000, Length: 200})
	}
	trace := writeTrace(t, pkts)
	cfg := parseConfig(t, "Switches:\n  shallow: {BufferSize: 16MiB}\n", fmt.Sprintf("Topology.File=%q", repoPath(t, "testdata/topologies/explicit.yaml")))
	pr, err := Prepare(Options{Traces: []string{trace}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	if _, err := pr.Run(out, ""); err != nil {
		t.Fatal(err)
	}
	rows, nodes, err := records.ReadAll(records.OpenLoadBalance(filepath.Join(out, records.LoadBalanceFile)))
	if err != nil {
		t.Fatal(err)
	}
	byPeer := map[string]int64{}
	for _, r := range rows {
		if nodes[r.Node] == "leaf-0" {
			byPeer[nodes[r.Peer]] += r.Flows
		}
	}
	p := 0.8
	mean, sd := n*p, math.Sqrt(n*p*(1-p))
	lo, hi := mean-3.29*sd, mean+3.29*sd
	if got := float64(byPeer["spine-0"]); got < lo || got > hi || byPeer["spine-0"]+byPeer["spine-1"] != n {
		t.Errorf("flows on the 400G member %v, 100G %v; want %d in all and [%.0f, %.0f] on the 400G one", byPeer["spine-0"], byPeer["spine-1"], n, lo, hi)
	}
	t.Logf("400G member: %d of %d flows (binomial 99.9%% interval [%.0f, %.0f])", byPeer["spine-0"], n, lo, hi)
	// The flows' records name the member by its index in the set: 0 the 400G port.
	flows := readFlows(t, out)
	var m0 int64
	for _, f := range flows {
		if f.RackMember == 0 {
			m0++
		}
	}
	if m0 != byPeer["spine-0"] {
		t.Errorf("flows.arrow: %d flows on rack member 0, loadbalance.arrow %d", m0, byPeer["spine-0"])
	}
}

// hpccFabricYAML is testdata/topologies/hpcc-2x2.txt written as a topology file by
// hand: hosts 0,1 on switch 4, hosts 2,3 on switch 5, switches 4 and 5 joined to
// spines 6 and 7 by 400G links, every delay 1 us.
const hpccFabricYAML = `
Switches:
  - {Role: leaf, Name: switch-4}
  - {Role: leaf, Name: switch-5}
  - {Role: spine, Name: switch-6}
  - {Role: spine, Name: switch-7}
Hosts:
  - {Switches: switch-4, Name: host-0, Link: {Speed: 100Gbps, PropagationDelay: 1us}}
  - {Switches: switch-4, Name: host-1, Link: {Speed: 100Gbps, PropagationDelay: 1us}}
  - {Switches: switch-5, Name: host-2, Link: {Speed: 100Gbps, PropagationDelay: 1us}}
  - {Switches: switch-5, Name: host-3, Link: {Speed: 100Gbps, PropagationDelay: 1us}}
Links:
  - {From: "switch-[45]", To: "switch-[67]", Speed: 400Gbps, PropagationDelay: 1us}
`

// TestHPCCTopologyEqualsFile: the HPCC topology.txt and the same fabric as a topology
// file give the same nodes, the same routes from every switch to every host, and
// the same BaseRTT: 4 links of 2 x 1 us + serialization of 9038 B and 84 B each way.
func TestHPCCTopologyEqualsFile(t *testing.T) {
	yamlFile := filepath.Join(t.TempDir(), "hpcc.yaml")
	if err := os.WriteFile(yamlFile, []byte(hpccFabricYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	var topos []*Topology
	for _, f := range []string{repoPath(t, "testdata/topologies/hpcc-2x2.txt"), yamlFile} {
		cfg := parseConfig(t, "", fmt.Sprintf("Topology.File=%q", f))
		topo, err := NewTopology(cfg)
		if err != nil {
			t.Fatal(err)
		}
		topos = append(topos, topo)
	}
	a, b := topos[0], topos[1]
	if len(a.Nodes) != len(b.Nodes) || a.Hosts != 4 || b.Hosts != 4 {
		t.Fatalf("nodes %d/%d hosts %d/%d", len(a.Nodes), len(b.Nodes), a.Hosts, b.Hosts)
	}
	for i := range a.Nodes {
		if a.Nodes[i].Name != b.Nodes[i].Name || a.Nodes[i].Tier != b.Nodes[i].Tier {
			t.Errorf("node %d: %s/%v vs %s/%v", i, a.Nodes[i].Name, a.Nodes[i].Tier, b.Nodes[i].Name, b.Nodes[i].Tier)
		}
	}
	for s := int32(a.Hosts); s < int32(len(a.Nodes)); s++ {
		for d := int32(0); d < 4; d++ {
			ha, _ := a.Routes.NextHops(s, d)
			hb, _ := b.Routes.NextHops(s, d)
			var pa, pb []string
			for _, p := range ha.Ports {
				pa = append(pa, a.Nodes[a.Nodes[s].Ports[p].Peer].Name)
			}
			for _, p := range hb.Ports {
				pb = append(pb, b.Nodes[b.Nodes[s].Ports[p].Peer].Name)
			}
			if !slices.Equal(pa, pb) || len(pa) == 0 {
				t.Errorf("%s -> %s: %v vs %v", a.Nodes[s].Name, a.Nodes[d].Name, pa, pb)
			}
		}
	}
	// switch-4 to host-2: both spines.
	s4, _ := a.Lookup("switch-4")
	if h, _ := a.Routes.NextHops(s4, 2); len(h.Ports) != 2 {
		t.Errorf("switch-4 -> host-2: %v, want both spines", h.Ports)
	}
	cfg := config.Default()
	ra, _ := a.BaseRTT(&cfg)
	rb, _ := b.BaseRTT(&cfg)
	// By hand: host links 100G: 9038 B = 723.04 ns, 84 B = 6.72 ns; 400G: 180.76 and
	// 1.68 ns; 2 us of propagation per link.
	want := units.Time(2*(2_000_000+723_040+6_720) + 2*(2_000_000+180_760+1_680))
	if ra != want || rb != want {
		t.Errorf("BaseRTT %v (topology.txt) and %v (file), want %v", ra, rb, want)
	}
}

// TestProfileDeepSpineAbsorbsIncast: a lossy incast from pods 0 and 1 into a host of
// pod 2 over 10G fabric-spine links: the one spine's egress toward pod 2 receives
// 18 Gb/s for 30 ms and sends 10. With the default 32 MiB buffer the spine drops;
// with a spine profile of 1 GiB and only lossy classes it drops less (here nothing).
func TestProfileDeepSpineAbsorbsIncast(t *testing.T) {
	var flows tracegen.FlowList
	for i, src := range []string{"10.0.0.1", "10.0.0.2", "10.0.1.1", "10.0.1.2"} {
		flows = append(flows, tracegen.Flow{Proto: layers.IPProtocolUDP, Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr("10.0.2.1"),
			SrcPort: uint16(5000 + i), DstPort: 7000, Start: units.Time(i) * 100 * units.Nanosecond,
			Packets: 1875, Length: 9000, Rate: 4500 * units.Mbps})
	}
	var pkts []tracegen.Packet
	sc := tracegen.Scenario{Name: "deep-spine", Seed: 1, Generators: []tracegen.Generator{flows}}
	if _, err := sc.Packets(func(p *tracegen.Packet) error { pkts = append(pkts, *p); return nil }); err != nil {
		t.Fatal(err)
	}
	trace := writeTrace(t, pkts)
	sets := []string{"Topology.Pods=3", "Topology.RacksPerPod=1", "Topology.HostsPerRack=2", "Topology.FabricPerPod=1",
		"Topology.SpinesPerPlane=1", "Topology.FabricSpineLink.Speed=10Gbps"}
	spineDrops := func(yaml string) (int64, int64) {
		cfg := parseConfig(t, yaml, sets...)
		pr, err := Prepare(Options{Traces: []string{trace}, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "run")
		run, err := pr.Run(out, "")
		if err != nil {
			t.Fatal(err)
		}
		rows, _, err := records.ReadAll(records.OpenDrops(filepath.Join(out, records.DropsFile)))
		if err != nil {
			t.Fatal(err)
		}
		var spine int64
		for _, r := range rows {
			if r.Tier == records.TierSpine {
				spine++
			}
		}
		return spine, run.Simulation.DroppedTotal()
	}
	def, defAll := spineDrops("")
	deep, deepAll := spineDrops(`
Switches:
  spine:
    BufferSize: 1GiB
    PfcEnabled: []
    Pools: [{Name: lossy, Size: 100%, TrafficClasses: [0, 1, 2, 3, 4, 5, 6, 7]}]
`)
	t.Logf("spine drops: default %d (of %d), 1 GiB lossy spine %d (of %d)", def, defAll, deep, deepAll)
	if def == 0 || deep >= def {
		t.Errorf("spine drops: default %d, deep profile %d: want the deep spine to drop fewer", def, deep)
	}
}

// TestProfileTooSmallBufferNamesProfile: a profile whose buffer cannot hold its
// switches' headroom is refused, the error naming the profile (the Clos: at parse
// time; a topology file: when the fabric is built, with the switch and the file).
func TestProfileTooSmallBufferNamesProfile(t *testing.T) {
	_, _, err := config.Parse([]byte("Switches:\n  spine:\n    BufferSize: 256KiB\n"), "cfg.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "cfg.yaml:3: Switches.spine.BufferSize: over-committed buffer") || !strings.Contains(err.Error(), `profile "spine"`) {
		t.Errorf("Clos: %v", err)
	}
	file := repoPath(t, "testdata/topologies/explicit.yaml")
	cfg := parseConfig(t, "Switches:\n  shallow: {BufferSize: 1MiB}\n", fmt.Sprintf("Topology.File=%q", file))
	_, err = NewTopology(cfg)
	if !errors.Is(err, fabric.ErrInvalid) || !strings.Contains(err.Error(), "explicit.yaml:5: switch leaf-0 (role leaf") ||
		!strings.Contains(err.Error(), `Switches.shallow.BufferSize: over-committed buffer`) || !strings.Contains(err.Error(), `in switch profile "shallow"`) {
		t.Errorf("file: %v", err)
	}
	// A profile that does not exist.
	_, err = NewTopology(parseConfig(t, "", fmt.Sprintf("Topology.File=%q", file)))
	if err == nil || !strings.Contains(err.Error(), `explicit.yaml:5: switch leaf-0 (and 1 more): profile "shallow" does not exist`) {
		t.Errorf("missing profile: %v", err)
	}
}

// TestRailOptimizedPaths: in testdata/topologies/rail-optimized.yaml (servers of 8
// NICs, groups of 8 servers), NIC 0 of servers 0 and 1 share rail leaf rail-g0-r0:
// their flow crosses only it. NIC 0 of server 0 to NIC 1 of server 1 changes rail:
// rail-g0-r0, a spine, rail-g0-r1. Checked on the simulated packets' paths.
func TestRailOptimizedPaths(t *testing.T) {
	csv := filepath.Join(t.TempDir(), "hosts.csv")
	if err := os.WriteFile(csv, []byte("10.0.0.1,srv0-nic0\n10.0.0.2,srv1-nic0\n10.0.0.3,srv1-nic1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b, c := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")
	pkts := []tracegen.Packet{
		{Time: 0, Src: a, Dst: b, Proto: layers.IPProtocolUDP, SrcPort: 1, DstPort: 2, Length: 1000},
		{Time: units.Microsecond, Src: a, Dst: c, Proto: layers.IPProtocolUDP, SrcPort: 1, DstPort: 2, Length: 1000},
	}
	trace := writeTrace(t, pkts)
	cfg := parseConfig(t, "", fmt.Sprintf("Topology.File=%q", repoPath(t, "testdata/topologies/rail-optimized.yaml")))
	pr, err := Prepare(Options{Traces: []string{trace}, Config: cfg, Hosts: csv, RecordPackets: true})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	if _, err := pr.Run(out, ""); err != nil {
		t.Fatal(err)
	}
	rows, nodes, err := records.ReadAll(records.OpenPackets(filepath.Join(out, records.PacketsFile)))
	if err != nil || len(rows) != 2 {
		t.Fatalf("packets %v, %v", rows, err)
	}
	name := func(p []int32) []string {
		var s []string
		for _, n := range p {
			s = append(s, nodes[n])
		}
		return s
	}
	if got := name(rows[0].Path); !slices.Equal(got, []string{"srv0-nic0", "rail-g0-r0", "srv1-nic0"}) {
		t.Errorf("same rail: %v", got)
	}
	got := name(rows[1].Path)
	if len(got) != 5 || got[0] != "srv0-nic0" || got[1] != "rail-g0-r0" || !strings.HasPrefix(got[2], "spine-") || got[3] != "rail-g0-r1" || got[4] != "srv1-nic1" {
		t.Errorf("across rails: %v, want srv0-nic0 rail-g0-r0 spine-? rail-g0-r1 srv1-nic1", got)
	}
	// replay path agrees.
	hops, err := pr.Topo.FlowPath(cfg, pr.HostMap, a, c, 17, 1, 2)
	if err != nil || len(hops) != 4 || hops[2].Node != got[2] {
		t.Errorf("FlowPath %+v, %v", hops, err)
	}
}
