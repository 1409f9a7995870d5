package replay

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
)

func TestClosDefaultShape(t *testing.T) {
	c, err := NewClos(config.Default().Topology)
	if err != nil {
		t.Fatal(err)
	}
	// 128 hosts, 8 racks, 8 fabric, 16 spines.
	if got, want := len(c.Nodes), 128+8+8+16; got != want {
		t.Fatalf("nodes = %d, want %d", got, want)
	}
	// links: 128 host + 8 racks*4 fabric + 8 fabric*4 spines = 192.
	if got := c.Links(); got != 192 {
		t.Errorf("links = %d, want 192", got)
	}
	names := map[string]bool{}
	for _, n := range c.Nodes {
		if names[n.Name] {
			t.Errorf("duplicate name %s", n.Name)
		}
		names[n.Name] = true
	}
	for _, want := range []string{"host-p0-r1-h5", "rack-p0-r1", "fabric-p0-f2", "spine-s2-3", "host-p1-r3-h15"} {
		if !names[want] {
			t.Errorf("missing node %s", want)
		}
	}
	// fabric-p1-f2 links to every spine of plane 2, at ports 4..7.
	f := c.FabricNode(1, 2)
	for i := 0; i < 4; i++ {
		p := c.Nodes[f].Ports[4+i]
		if c.Nodes[p.Peer].Name != "spine-s2-"+string(rune('0'+i)) {
			t.Errorf("fabric-p1-f2 port %d -> %s", 4+i, c.Nodes[p.Peer].Name)
		}
		back := c.Nodes[p.Peer].Ports[p.PeerPort]
		if back.Peer != f || back.PeerPort != 4+i {
			t.Errorf("port %d peer back-reference wrong", 4+i)
		}
	}
	if bw := c.Bandwidth(c.RackNode(0)); bw != 20*100e9 {
		t.Errorf("rack bandwidth %d, want 2 Tbps", bw)
	}
}

// walk follows first members of equal-cost sets from src to dst and returns hops.
func walk(t *testing.T, c *Clos, src, dst int32, pick func(set []int) int) []string {
	t.Helper()
	var path []string
	node := int(src)
	for i := 0; i < 10; i++ {
		path = append(path, c.Nodes[node].Name)
		hops := c.NextHops(node, dst)
		if hops == nil {
			if node != int(dst) {
				t.Fatalf("dead end at %s", c.Nodes[node].Name)
			}
			return path
		}
		port := hops[pick(hops)]
		node = c.Nodes[node].Ports[port].Peer
	}
	t.Fatalf("no arrival after 10 hops: %v", path)
	return nil
}

func TestClosRouting(t *testing.T) {
	for _, pods := range []int{1, 2, 3} {
		topo := config.Default().Topology
		topo.Pods = pods
		topo.HostsPerRack = 3
		c, err := NewClos(topo)
		if err != nil {
			t.Fatal(err)
		}
		hosts := int32(c.Grid.Hosts())
		for s := int32(0); s < hosts; s++ {
			for d := int32(0); d < hosts; d++ {
				if s == d {
					continue
				}
				for _, pick := range []func([]int) int{func([]int) int { return 0 }, func(s []int) int { return len(s) - 1 }} {
					p := walk(t, c, s, d, pick)
					sr, dr := int(s)/3, int(d)/3
					want := 7 // host rack fabric spine fabric rack host
					switch {
					case sr == dr:
						want = 3
					case sr/topo.RacksPerPod == dr/topo.RacksPerPod:
						want = 5
					}
					if len(p) != want {
						t.Fatalf("pods=%d %d->%d path %v has %d nodes, want %d", pods, s, d, p, len(p), want)
					}
				}
			}
		}
	}
}
