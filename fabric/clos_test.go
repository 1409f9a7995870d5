package fabric

import (
	"slices"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
)

// closNextHops is docs/model.md#routing's up/down rule for the Clos, written from the
// port numbering of docs/model.md#clos-builder (the reference the shortest-path
// routing must reproduce).
func closNextHops(t config.Topology, f *Fabric, node int32, dst int32) []int32 {
	seq := func(from, n int) []int32 {
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(from + i)
		}
		return s
	}
	nd := &f.Nodes[node]
	dstRack := int(dst) / t.HostsPerRack
	dstPod := dstRack / t.RacksPerPod
	switch nd.Tier {
	case config.TierRack:
		if nd.Pod*t.RacksPerPod+nd.Index == dstRack {
			return []int32{int32(int(dst) % t.HostsPerRack)}
		}
		return seq(t.HostsPerRack, t.FabricPerPod)
	case config.TierFabric:
		if nd.Pod == dstPod {
			return []int32{int32(dstRack % t.RacksPerPod)}
		}
		return seq(t.RacksPerPod, t.SpinesPerPlane)
	case config.TierSpine:
		return []int32{int32(dstPod)}
	}
	return nil
}

func TestClosRoutesAreUpDown(t *testing.T) {
	for _, pods := range []int{1, 2, 3} {
		topo := config.Default().Topology
		topo.Pods = pods
		topo.HostsPerRack = 3
		topo.SpinesPerPlane = 2
		f, err := FromConfig(topo)
		if err != nil {
			t.Fatal(err)
		}
		rt := Route(f, nil)
		for _, s := range f.Switches() {
			for dst := int32(0); dst < int32(f.Hosts); dst++ {
				h, ok := rt.NextHops(s, dst)
				want := closNextHops(topo, f, s, dst)
				if !ok || !slices.Equal(h.Ports, want) || h.Weights != nil {
					t.Fatalf("pods %d: %s -> %s: got %v %v, want %v", pods, f.Nodes[s].Name, f.Nodes[dst].Name, h.Ports, ok, want)
				}
			}
		}
	}
}

func TestClosDefaultShape(t *testing.T) {
	f, err := FromConfig(config.Default().Topology)
	if err != nil {
		t.Fatal(err)
	}
	// 128 hosts, 8 racks, 8 fabric, 16 spines; 128 + 32 + 32 links.
	if len(f.Nodes) != 160 || f.Hosts != 128 || len(f.Links) != 192 || len(f.Racks) != 8 {
		t.Fatalf("%v, %d nodes, %d racks", f, len(f.Nodes), len(f.Racks))
	}
	for name, tier := range map[string]config.Tier{"host-p0-r1-h5": config.TierHost, "rack-p0-r1": config.TierRack,
		"fabric-p0-f2": config.TierFabric, "spine-s2-3": config.TierSpine, "host-p1-r3-h15": config.TierHost} {
		i, ok := f.Lookup(name)
		if !ok || f.Nodes[i].Tier != tier {
			t.Errorf("%s: found %v, tier %v", name, ok, f.Nodes[i].Tier)
		}
	}
	if i, _ := f.Lookup("host-p0-r1-h5"); i != 16+5 {
		t.Errorf("host-p0-r1-h5 is node %d, want 21", i)
	}
	// fabric-p1-f2 links to spines s2-0..3 at ports 4..7, and back.
	fb, _ := f.Lookup("fabric-p1-f2")
	for i := 0; i < 4; i++ {
		p := f.Nodes[fb].Ports[4+i]
		if f.Nodes[p.Peer].Name != "spine-s2-"+string(rune('0'+i)) {
			t.Errorf("port %d -> %s", 4+i, f.Nodes[p.Peer].Name)
		}
		back := f.Nodes[p.Peer].Ports[p.PeerPort]
		if back.Peer != fb || back.PeerPort != int32(4+i) || back.Link != p.Link {
			t.Errorf("port %d: back-reference %+v", 4+i, back)
		}
		l := f.Links[p.Link]
		if (l.A != End{fb, int32(4 + i)} || l.B != End{p.Peer, p.PeerPort}) {
			t.Errorf("link %d ends %+v %+v", p.Link, l.A, l.B)
		}
	}
}
