package fabric

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// TestPartitionDefaultClos: replay's default fabric (config.Default().Topology, the
// one FromConfig builds for a run without a topology file) into 2 partitions, by
// hand. Nodes: hosts 0..127 (pod 0: 0..63), racks 128..135 (pod 0: 128..131), fabric
// switches 136..143 (pod 0: 136..139), spines 144..159 (plane j: 144+4j..147+4j).
// Weights (bandwidth, hosts included): host 100G, rack 16x100G + 4x100G = 2000G,
// fabric switch 4x100G + 4x100G = 800G, spine 2x100G = 200G; a pod is 64x100G +
// 4x2000G + 4x800G = 17600G, the spines 16x200G = 3200G, the mean 19200G. Pod 0 goes
// to partition 0, pod 1 to partition 1; spines in node order fill partition 0 up to
// the mean: 8 spines (planes 0 and 1, 144..151), the other 8 (planes 2, 3) to
// partition 1. Cut: the spine links of fabric switches 2, 3 of pod 0 (to planes 2, 3)
// and 0, 1 of pod 1 (to planes 0, 1). Link ids: host links 0..127, rack-fabric
// 128..159, fabric-spine 160 + (pod*4 + f)*4 + i: pod 0 f2..f3 = 168..175, pod 1
// f0..f1 = 176..183. Lookahead: their delay, 1 us.
func TestPartitionDefaultClos(t *testing.T) {
	f, err := FromConfig(config.Default().Topology)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Partition(f, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]int32, 160)
	for i := range want {
		switch {
		case i < 64, i >= 128 && i < 132, i >= 136 && i < 140, i >= 144 && i < 152:
			want[i] = 0
		default:
			want[i] = 1
		}
	}
	if !slices.Equal(p.Of, want) {
		t.Errorf("assignment %v\nwant %v", p.Of, want)
	}
	var cut []int32
	for id := int32(168); id < 184; id++ {
		cut = append(cut, id)
	}
	if p.Parts != 2 || p.Method != PartitionPods || p.Reason != "" {
		t.Errorf("parts %d, method %q, reason %q; want 2, pods, none", p.Parts, p.Method, p.Reason)
	}
	if !slices.Equal(p.Cut, cut) {
		t.Errorf("cut %v, want 168..183", p.Cut)
	}
	if p.Lookahead != units.Microsecond {
		t.Errorf("lookahead %v, want 1us", p.Lookahead)
	}
	if w := []units.BitRate{19200 * units.Gbps, 19200 * units.Gbps}; !slices.Equal(p.Weight, w) || p.Imbalance != 1 {
		t.Errorf("weights %v, imbalance %v; want %v, 1", p.Weight, p.Imbalance, w)
	}
	if f.Nodes[168-160+0].Name == "" || f.Nodes[f.Links[168].A.Node].Name != "fabric-p0-f2" || f.Nodes[f.Links[168].B.Node].Name != "spine-s2-0" {
		t.Errorf("link 168 is %s - %s, want fabric-p0-f2 - spine-s2-0 (the numbering this test assumes)",
			f.Nodes[f.Links[168].A.Node].Name, f.Nodes[f.Links[168].B.Node].Name)
	}
}

// twoSites: two sites of two leaves (2 hosts each) and a spine, 1 us inside a site,
// joined by a 10 us link between the spines and a 5 us link a1 - b1. Link ids: host
// links 0..7, then the Links entries in order: 8 a0-sa, 9 a1-sa, 10 b0-sb, 11 b1-sb,
// 12 sa-sb, 13 a1-b1.
func twoSites(intra, inter1, inter2 string) string {
	return fmt.Sprintf(`Switches:
  - {Role: leaf, Name: a0}
  - {Role: leaf, Name: a1}
  - {Role: spine, Name: sa}
  - {Role: leaf, Name: b0}
  - {Role: leaf, Name: b1}
  - {Role: spine, Name: sb}
Hosts:
  - {Switches: leaf, PerSwitch: 2}
Links:
  - {From: a0, To: sa, Speed: 100Gbps, PropagationDelay: %[1]s}
  - {From: a1, To: sa, Speed: 100Gbps, PropagationDelay: 1us}
  - {From: b0, To: sb, Speed: 100Gbps, PropagationDelay: 1us}
  - {From: b1, To: sb, Speed: 100Gbps, PropagationDelay: %[1]s}
  - {From: sa, To: sb, Speed: 100Gbps, PropagationDelay: %[2]s}
  - {From: a1, To: b1, Speed: 100Gbps, PropagationDelay: %[3]s}
`, intra, inter1, inter2)
}

// TestPartitionUnequalDelays: the two sites divide at the two links between them;
// the lookahead is the smaller of their delays, 5 us (not the 1 us inside a site,
// nor the 10 us of the other link). A link of delay 0 inside a site changes nothing
// (it is never cut). Every link between switches of delay 0 makes the fabric
// sequential, and the reason names one.
func TestPartitionUnequalDelays(t *testing.T) {
	for _, c := range []struct {
		name, file string
		cut        []int32
		look       units.Time
		reason     string
	}{
		{"1us sites, 10us and 5us between", twoSites("1us", "10us", "5us"), []int32{12, 13}, 5 * units.Microsecond, ""},
		{"0 inside a site", twoSites("0us", "10us", "5us"), []int32{12, 13}, 5 * units.Microsecond, ""},
		{"7us and 3us between", twoSites("1us", "3us", "7us"), []int32{12, 13}, 3 * units.Microsecond, ""},
		{"all 0", strings.ReplaceAll(twoSites("0us", "0us", "0us"), "1us", "0us"), nil, 0,
			"lookahead 0: links of delay 0 join every switch (e.g. a0 - sa)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse([]byte(c.file), "sites.yaml")
			if err != nil {
				t.Fatal(err)
			}
			p, err := Partition(f, 2)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p.Cut, c.cut) || p.Lookahead != c.look || p.Reason != c.reason {
				t.Errorf("cut %v, lookahead %v, reason %q; want %v, %v, %q", p.Cut, p.Lookahead, p.Reason, c.cut, c.look, c.reason)
			}
			if c.reason != "" {
				if p.Parts != 1 || p.Method != PartitionSequential {
					t.Errorf("parts %d, method %s: want sequential", p.Parts, p.Method)
				}
				return
			}
			// Site a (a0, a1, sa and their hosts) in one partition, site b in the other.
			for i := range f.Nodes {
				name := f.Nodes[i].Name
				site := int32(0)
				if strings.HasPrefix(name, "b") || name == "sb" {
					site = 1
				}
				if p.Of[i] != site {
					t.Errorf("%s in partition %d, want %d", name, p.Of[i], site)
				}
			}
			if p.Imbalance != 1 {
				t.Errorf("imbalance %v, want 1 (equal sites)", p.Imbalance)
			}
		})
	}
}

// TestPartitionSequential: one thread, too small a fabric, and a cut of delay 0 on
// a Clos (its spine links, all of delay 0: the first cut is link 168, fabric-p0-f2 -
// spine-s2-0, see TestPartitionDefaultClos) give one partition and say why. With
// only the rack-fabric links at 0, the pods are whole and the cut's 1 us stands.
func TestPartitionSequential(t *testing.T) {
	def, err := FromConfig(config.Default().Topology)
	if err != nil {
		t.Fatal(err)
	}
	zeroSpine := config.Default().Topology
	zeroSpine.FabricSpineLink.PropagationDelay = 0
	zs, err := FromConfig(zeroSpine)
	if err != nil {
		t.Fatal(err)
	}
	zeroRack := config.Default().Topology
	zeroRack.RackFabricLink.PropagationDelay = 0
	zr, err := FromConfig(zeroRack)
	if err != nil {
		t.Fatal(err)
	}
	small, err := LeafSpine{Leaves: 1, Spines: 2, HostsPerLeaf: 4, HostLink: defaultLink, SpineLink: defaultLink}.Build("", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		f      *Fabric
		n      int
		reason string
	}{
		{"one thread", def, 1, "1 thread"},
		{"zero means one", def, 0, "1 thread"},
		{"3 switches", small, 4, "the fabric has 3 switches: too few to divide (at least 4, 2 per partition)"},
		{"spine links of delay 0", zs, 2, "lookahead 0: link fabric-p0-f2 - spine-s2-0 has delay 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Partition(c.f, c.n)
			if err != nil {
				t.Fatal(err)
			}
			if p.Parts != 1 || p.Method != PartitionSequential || p.Reason != c.reason || len(p.Cut) != 0 || p.Lookahead != 0 || p.Imbalance != 1 {
				t.Errorf("%d parts (%s), reason %q, cut %v, lookahead %v, imbalance %v; want sequential, %q", p.Parts, p.Method, p.Reason, p.Cut, p.Lookahead, p.Imbalance, c.reason)
			}
			for i, q := range p.Of {
				if q != 0 {
					t.Fatalf("node %d in partition %d", i, q)
				}
			}
		})
	}
	p, err := Partition(zr, 2)
	if err != nil {
		t.Fatal(err)
	}
	if p.Parts != 2 || p.Lookahead != units.Microsecond || len(p.Cut) != 16 {
		t.Errorf("rack links at 0: %d parts, lookahead %v, %d cut links; want 2, 1us, 16", p.Parts, p.Lookahead, len(p.Cut))
	}
	if _, err := Partition(def, -1); err == nil {
		t.Error("-1 partitions: no error")
	}
}

// TestPartitionTopologies: every committed topology and the default Clos, into 2,
// 3, 4 and 8 partitions: the invariants of checkPlan, balance within
// MaxPartitionImbalance (or one unit above the mean), never sequential, twice the same plan, and the same plan from the file read again.
func TestPartitionTopologies(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "topologies", "*"))
	if err != nil || len(files) < 5 {
		t.Fatalf("%d topology files: %v", len(files), err)
	}
	files = append(files, "")
	for _, file := range files {
		load := func() *Fabric {
			var f *Fabric
			var err error
			if file == "" {
				f, err = FromConfig(config.Default().Topology)
			} else {
				f, err = Load(file)
			}
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		f := load()
		for _, n := range []int{2, 3, 4, 8} {
			t.Run(fmt.Sprintf("%s/%d", filepath.Base(file), n), func(t *testing.T) {
				p, err := Partition(f, n)
				if err != nil {
					t.Fatal(err)
				}
				checkPlan(t, f, p, n)
				if p.Parts < 2 {
					t.Errorf("sequential: %s", p.Reason)
				}
				// Balance: within MaxPartitionImbalance, unless the units are too
				// coarse for it (8 leaves of 3600G in 6 partitions: two share one);
				// then the heaviest partition is at most the mean plus the heaviest
				// unit (a rack with its hosts).
				var unit, sum units.BitRate
				us, _ := f.units()
				for _, u := range us {
					var w units.BitRate
					for _, node := range u {
						w += f.Bandwidth(node)
					}
					unit, sum = max(unit, w), sum+w
				}
				mean := float64(sum) / float64(p.Parts)
				if hi := p.Imbalance * mean; p.Imbalance > MaxPartitionImbalance && hi > mean+float64(unit) {
					t.Errorf("imbalance %.3f above %v and the heaviest %v above the mean + the heaviest unit %v: weights %v",
						p.Imbalance, MaxPartitionImbalance, units.BitRate(hi), units.BitRate(mean)+unit, p.Weight)
				}
				if want := map[int]bool{2: true, 4: true}; want[n] && p.Imbalance > MaxPartitionImbalance {
					t.Errorf("%d parts: imbalance %.3f above %v", n, p.Imbalance, MaxPartitionImbalance)
				}
				if again, _ := Partition(f, n); !reflect.DeepEqual(p, again) {
					t.Error("a second call gives another plan")
				}
				if other, _ := Partition(load(), n); !reflect.DeepEqual(p, other) {
					t.Error("the fabric built again gives another plan")
				}
			})
		}
	}
}

// checkPlan checks what every plan satisfies, from the fabric and the assignment
// alone: each node in one of Parts non-empty partitions (at most max(n, 1)), every
// host with its rack switch, the cut exactly the links whose ends are in different
// partitions (ascending), the lookahead the smallest of their delays and positive
// when divided, the weights the sums of the nodes' bandwidths, the imbalance
// max/mean, and a reason when sequential.
func checkPlan(t *testing.T, f *Fabric, p *Plan, n int) {
	t.Helper()
	if len(p.Of) != len(f.Nodes) || p.Parts < 1 || p.Parts > max(n, 1) {
		t.Fatalf("%d assignments for %d nodes, %d parts for n %d", len(p.Of), len(f.Nodes), p.Parts, n)
	}
	w := make([]units.BitRate, p.Parts)
	for i, q := range p.Of {
		if q < 0 || int(q) >= p.Parts {
			t.Fatalf("node %s in partition %d of %d", f.Nodes[i].Name, q, p.Parts)
		}
		w[q] += f.Bandwidth(int32(i))
		if f.Nodes[i].IsHost() {
			if r := f.Nodes[i].Ports[0].Peer; p.Of[r] != q {
				t.Errorf("host %s in partition %d, its rack %s in %d", f.Nodes[i].Name, q, f.Nodes[r].Name, p.Of[r])
			}
		}
	}
	var cut []int32
	look := units.Time(-1)
	for id, l := range f.Links {
		if p.Of[l.A.Node] != p.Of[l.B.Node] {
			cut = append(cut, int32(id))
			if look < 0 || l.Delay < look {
				look = l.Delay
			}
		}
	}
	if look < 0 {
		look = 0
	}
	if !slices.Equal(p.Cut, cut) || p.Lookahead != look {
		t.Errorf("cut %v, lookahead %v; the assignment cuts %v, smallest delay %v", p.Cut, p.Lookahead, cut, look)
	}
	if !slices.Equal(p.Weight, w) {
		t.Errorf("weights %v, the assignment's %v", p.Weight, w)
	}
	for q, x := range w {
		if x == 0 {
			t.Errorf("partition %d is empty", q)
		}
	}
	var sum, hi float64
	for _, x := range w {
		sum += float64(x)
		hi = max(hi, float64(x))
	}
	if want := hi / (sum / float64(len(w))); p.Imbalance != want {
		t.Errorf("imbalance %v, want %v", p.Imbalance, want)
	}
	switch {
	case p.Parts == 1 && (p.Reason == "" || p.Method != PartitionSequential):
		t.Errorf("sequential with reason %q, method %q", p.Reason, p.Method)
	case p.Parts > 1 && (p.Lookahead <= 0 || len(p.Cut) == 0):
		t.Errorf("%d parts with lookahead %v and %d cut links", p.Parts, p.Lookahead, len(p.Cut))
	}
}

// randomFabric: k switches joined by a random spanning tree plus extra links
// (parallel links allowed), delays drawn from {0, 1, 2, 5, 7} us, 0..3 hosts per
// switch (at least one host).
func randomFabric(t *testing.T, r *rand.Rand) *Fabric {
	k := 2 + r.IntN(24)
	hosts := make([]int, k)
	total := 0
	for i := range hosts {
		hosts[i] = r.IntN(4)
		total += hosts[i]
	}
	if total == 0 {
		hosts[0], total = 1, 1
	}
	b := newBuilder(ShapeExplicit, "random")
	var hostSw []int
	for s, c := range hosts {
		for h := range c {
			b.node(Node{Name: fmt.Sprintf("s%d-h%d", s, h), Role: RoleHost, Group: RoleHost, Pod: -1, Plane: -1})
			hostSw = append(hostSw, s)
		}
	}
	for s := range k {
		b.node(Node{Name: fmt.Sprintf("s%d", s), Role: "switch", Group: "switch", Pod: -1, Plane: -1, Index: s})
	}
	delays := []units.Time{0, units.Microsecond, 2 * units.Microsecond, 5 * units.Microsecond, 7 * units.Microsecond}
	link := func() config.Link {
		return config.Link{Speed: units.BitRate(1+r.IntN(4)) * 100 * units.Gbps, PropagationDelay: delays[r.IntN(len(delays))]}
	}
	for h, s := range hostSw {
		b.connect(int32(h), int32(total+s), link(), "HostLink", 0)
	}
	for s := 1; s < k; s++ {
		b.connect(int32(total+r.IntN(s)), int32(total+s), link(), "tree", 0)
	}
	for range r.IntN(2 * k) {
		a, c := r.IntN(k), r.IntN(k)
		if a != c {
			b.connect(int32(total+a), int32(total+c), link(), "extra", 0)
		}
	}
	f, err := b.finish()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPartitionProperties: 400 random fabrics, each into 1..8 partitions: the
// invariants of checkPlan, no link of delay 0 in a cut, and the same plan twice.
func TestPartitionProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 3))
	divided := 0
	for i := range 400 {
		f := randomFabric(t, r)
		n := 1 + r.IntN(8)
		p, err := Partition(f, n)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkPlan(t, f, p, n) })
		for _, id := range p.Cut {
			if f.Links[id].Delay == 0 {
				t.Errorf("fabric %d: cut link %d has delay 0", i, id)
			}
		}
		if again, _ := Partition(f, n); !reflect.DeepEqual(p, again) {
			t.Errorf("fabric %d: a second call gives another plan", i)
		}
		if p.Parts > 1 {
			divided++
		}
	}
	if divided < 100 {
		t.Errorf("only %d of 400 random fabrics divided: the test checks too little", divided)
	}
}

// FuzzPartition: the invariants on fabrics drawn from the fuzzer's seed.
func FuzzPartition(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint8(3))
	f.Fuzz(func(t *testing.T, s1, s2 uint64, n uint8) {
		r := rand.New(rand.NewPCG(s1, s2))
		fab := randomFabric(t, r)
		p, err := Partition(fab, int(n%16))
		if err != nil {
			t.Fatal(err)
		}
		checkPlan(t, fab, p, int(n%16))
	})
}

// TestPartitionHPCC: testdata/topologies/hpcc-2x2.txt (hosts 0..3, leaves switch-4
// with hosts 0, 1 and switch-5 with 2, 3, spines switch-6 and switch-7; host links
// 100G, leaf-spine links 400G, all 1 us) into 2, by the documented algorithm by
// hand. Units, in switch order: u0 = switch-4 with its hosts (weight 2x100G +
// 2x400G + 2x100G = 1200G), u1 = switch-5 with its hosts (1200G), u2 = switch-6,
// u3 = switch-7 (800G each); the mean is 2000G. One delay: D = 1 us contracts
// nothing. Seeds: the unit farthest from u0 is u1 (two hops; the spines are one),
// then the unit farthest from u1 is u0. Growth: the regions weigh 1200G each, the
// first (u1's) takes its frontier unit with the most links, u2 and u3 tie, the
// lowest: u2; then the second takes u3. Both regions weigh 2000G: no move improves
// the cut (each unit has one link to each side, or its leaf's). Partition 0 is the
// one of node 0: {hosts 0, 1, switch-4, switch-7}; the cut is switch-4 - switch-6 and
// switch-5 - switch-7, lookahead 1 us, imbalance 1.
func TestPartitionHPCC(t *testing.T) {
	f, err := Load(filepath.Join("..", "testdata", "topologies", "hpcc-2x2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Partition(f, 2)
	if err != nil {
		t.Fatal(err)
	}
	part := map[string]int32{}
	for i := range f.Nodes {
		part[f.Nodes[i].Name] = p.Of[i]
	}
	want := map[string]int32{"host-0": 0, "host-1": 0, "switch-4": 0, "switch-7": 0, "host-2": 1, "host-3": 1, "switch-5": 1, "switch-6": 1}
	if !reflect.DeepEqual(part, want) {
		t.Errorf("assignment %v, want %v", part, want)
	}
	var cut []string
	for _, id := range p.Cut {
		l := &f.Links[id]
		cut = append(cut, f.Nodes[l.A.Node].Name+" - "+f.Nodes[l.B.Node].Name)
	}
	if !slices.Equal(cut, []string{"switch-4 - switch-6", "switch-5 - switch-7"}) || p.Lookahead != units.Microsecond || p.Imbalance != 1 || p.Method != PartitionGraph {
		t.Errorf("cut %v, lookahead %v, imbalance %v, method %s; want switch-4 - switch-6, switch-5 - switch-7, 1us, 1, graph", cut, p.Lookahead, p.Imbalance, p.Method)
	}
}
