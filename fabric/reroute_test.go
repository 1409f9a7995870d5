package fabric

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
)

// shapes are every fabric the project builds: the generated Clos (three and two
// tiers) and every topology file of testdata (leaf-spine, five-stage with and without
// planes, rail-optimized, explicit lists with WCMP and parallel links, the ring, the
// HPCC format).
func shapes(t testing.TB) map[string]*Fabric {
	out := map[string]*Fabric{}
	for _, pods := range []int{1, 2, 3} {
		topo := config.Default().Topology
		topo.Pods = pods
		f, err := FromConfig(topo)
		if err != nil {
			t.Fatal(err)
		}
		out[fmt.Sprintf("clos-pods%d", pods)] = f
	}
	files, err := filepath.Glob("../testdata/topologies/*")
	if err != nil || len(files) < 9 {
		t.Fatalf("topology files %v: %v", files, err)
	}
	for _, file := range files {
		f, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(file)] = f
	}
	return out
}

// sameRouting reports the first difference between a and b in distances or in a
// switch's next hops (ports and weights) toward a rack.
func sameRouting(f *Fabric, a, b *Routes) error {
	for i := range a.Dist {
		for r := range f.Racks {
			if a.Dist[i][r] != b.Dist[i][r] {
				return fmt.Errorf("%s -> rack %s: distance %d, want %d", f.Nodes[f.Hosts+i].Name, f.Nodes[f.Racks[r].Node].Name, a.Dist[i][r], b.Dist[i][r])
			}
			x, y := hopsOf(a, i, r), hopsOf(b, i, r)
			if !slices.Equal(x.Ports, y.Ports) || !slices.Equal(x.Weights, y.Weights) {
				return fmt.Errorf("%s -> rack %s: next hops %v %v, want %v %v", f.Nodes[f.Hosts+i].Name, f.Nodes[f.Racks[r].Node].Name, x.Ports, x.Weights, y.Ports, y.Weights)
			}
		}
	}
	return nil
}

func hopsOf(rt *Routes, i, r int) NextHops {
	if s := rt.ByRack[i][r]; s >= 0 {
		return rt.Sets[i][s]
	}
	return NextHops{}
}

// differing lists the switches whose next hops toward some rack differ in a and b.
func differing(f *Fabric, a, b *Routes) []int32 {
	var out []int32
	for i := range a.ByRack {
		for r := range f.Racks {
			if !slices.Equal(hopsOf(a, i, r).Ports, hopsOf(b, i, r).Ports) {
				out = append(out, int32(f.Hosts+i))
				break
			}
		}
	}
	return out
}

// TestRerouteEqualsRoute: on every shape, 300 random events of every kind (a link
// down or up, several links at once, a switch down or up, a drain, an undrain, host
// links included, events piling up: a link down on a drained switch's fabric, a
// switch down next to a down link, ...) each rerouted incrementally from the last
// incremental routes; after every event the routes equal a full Route of the state
// (distances, next hops and weights toward every rack at every switch), and the
// switches Reroute says changed are exactly those whose next hops differ between the
// full routes before and after. The routes before are not modified (compared with
// their own full recompute).
func TestRerouteEqualsRoute(t *testing.T) {
	for name, f := range shapes(t) {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(23, uint64(len(f.Nodes))))
			st := &State{LinkDown: make([]bool, len(f.Links)), NodeDown: make([]bool, len(f.Nodes)), Drained: make([]bool, len(f.Nodes))}
			inc := Route(f, st)
			full := Route(f, st)
			kinds := map[string]int{}
			for step := range 300 {
				var ch Change
				var kind string
				switch k := rng.IntN(4); {
				case k == 0 || k == 1 && step%7 == 0:
					// one link, or 1-3 links of one switch (a pattern)
					n := rng.IntN(3) + 1
					if k == 0 {
						n = 1
					}
					s := int32(f.Hosts + rng.IntN(len(f.Nodes)-f.Hosts))
					ports := f.Nodes[s].Ports
					down := rng.IntN(2) == 0
					for j := 0; j < n; j++ {
						l := ports[rng.IntN(len(ports))].Link
						if st.LinkDown[l] != down && !slices.Contains(ch.Links, l) {
							st.LinkDown[l] = down
							ch.Links = append(ch.Links, l)
						}
					}
					kind = map[bool]string{true: "link-down", false: "link-up"}[down]
				case k == 1:
					l := int32(rng.IntN(len(f.Links)))
					st.LinkDown[l] = !st.LinkDown[l]
					ch.Links = []int32{l}
					kind = map[bool]string{true: "link-down", false: "link-up"}[st.LinkDown[l]]
				case k == 2:
					s := int32(f.Hosts + rng.IntN(len(f.Nodes)-f.Hosts))
					st.NodeDown[s] = !st.NodeDown[s]
					ch.Nodes = []int32{s}
					kind = map[bool]string{true: "switch-down", false: "switch-up"}[st.NodeDown[s]]
				default:
					s := int32(f.Hosts + rng.IntN(len(f.Nodes)-f.Hosts))
					st.Drained[s] = !st.Drained[s]
					ch.Nodes = []int32{s}
					kind = map[bool]string{true: "drain", false: "undrain"}[st.Drained[s]]
				}
				kinds[kind]++
				prev := inc
				next, changed := inc.Reroute(st, ch)
				want := Route(f, st)
				if err := sameRouting(f, next, want); err != nil {
					t.Fatalf("step %d, %s %v: %v", step, kind, ch, err)
				}
				if d := differing(f, full, want); !slices.Equal(changed, d) {
					t.Fatalf("step %d, %s %v: changed %v, want %v", step, kind, ch, changed, d)
				}
				if err := sameRouting(f, prev, full); err != nil {
					t.Fatalf("step %d: the routes before were modified: %v", step, err)
				}
				inc, full = next, want
				// Back to health now and then, so that events act on a mostly healthy
				// fabric as well as on a battered one.
				if step%50 == 49 {
					ch = Change{}
					for l := range st.LinkDown {
						if st.LinkDown[l] {
							st.LinkDown[l] = false
							ch.Links = append(ch.Links, int32(l))
						}
					}
					for n := range st.NodeDown {
						if st.NodeDown[n] || st.Drained[n] {
							st.NodeDown[n], st.Drained[n] = false, false
							ch.Nodes = append(ch.Nodes, int32(n))
						}
					}
					inc, _ = inc.Reroute(st, ch)
					full = Route(f, st)
					if err := sameRouting(f, inc, full); err != nil {
						t.Fatalf("step %d, back to health: %v", step, err)
					}
				}
			}
			for _, k := range []string{"link-down", "link-up", "switch-down", "switch-up", "drain", "undrain"} {
				if kinds[k] == 0 {
					t.Errorf("no %s event: %v", k, kinds)
				}
			}
		})
	}
}

// benchFabric is a large Clos: 8 pods of 32 racks of 16 hosts (4,096 hosts, 256
// racks), 4 fabric switches per pod, 16 spines per plane (64 spines, 352 switches).
func benchFabric(b *testing.B) *Fabric {
	topo := config.Default().Topology
	topo.Pods, topo.RacksPerPod, topo.HostsPerRack, topo.FabricPerPod, topo.SpinesPerPlane = 8, 32, 16, 4, 16
	f, err := FromConfig(topo)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

// BenchmarkReroute compares a routing event's cost, full recompute against
// incremental, for a spine going down and a rack's uplink going down on benchFabric.
func BenchmarkReroute(b *testing.B) {
	f := benchFabric(b)
	healthy := Route(f, nil)
	spine, _ := f.Lookup("spine-s0-0")
	rack, _ := f.Lookup("rack-p0-r0")
	uplink := f.Nodes[rack].Ports[16].Link // its first uplink (after 16 host ports)
	for _, ev := range []struct {
		name string
		ch   Change
		set  func(*State)
	}{
		{"spine-down", Change{Nodes: []int32{spine}}, func(s *State) { s.NodeDown[spine] = true }},
		{"uplink-down", Change{Links: []int32{uplink}}, func(s *State) { s.LinkDown[uplink] = true }},
		{"drain", Change{Nodes: []int32{spine}}, func(s *State) { s.Drained[spine] = true }},
	} {
		st := &State{LinkDown: make([]bool, len(f.Links)), NodeDown: make([]bool, len(f.Nodes)), Drained: make([]bool, len(f.Nodes))}
		ev.set(st)
		b.Run(ev.name+"/full", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Route(f, st)
			}
		})
		b.Run(ev.name+"/incremental", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				healthy.Reroute(st, ev.ch)
			}
		})
	}
}
