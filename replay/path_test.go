package replay

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

func TestFlowPath(t *testing.T) {
	cfg := config.Default()
	c, err := NewClos(cfg.Topology)
	if err != nil {
		t.Fatal(err)
	}
	// Nine /24 groups: 10.0.0.x on rack-p0-r0, 10.0.4.x (group 4) on rack-p1-r0.
	var eps [][4]byte
	for g := 0; g < 5; g++ {
		eps = append(eps, [4]byte{10, 0, byte(g), 1})
	}
	hm, err := MapHosts(MapSubnet, eps, c.Grid, 24)
	if err != nil {
		t.Fatal(err)
	}
	src, dst := addr("10.0.0.1"), addr("10.0.4.1")
	hops, err := c.FlowPath(&cfg, hm, src, dst, 17, 1000, 4791)
	if err != nil {
		t.Fatal(err)
	}
	if len(hops) != 6 || hops[0].Node != "host-p0-r0-h0" || hops[5].Next != "host-p1-r0-h0" {
		t.Fatalf("hops %+v", hops)
	}
	key := ecmp.MakeKey(src.As4(), dst.As4(), 17, 1000, 4791, false)
	for i, h := range hops {
		if i > 0 && hops[i-1].Next != h.Node {
			t.Errorf("hop %d starts at %s, previous ended at %s", i, h.Node, hops[i-1].Next)
		}
		switch h.Node[:4] {
		case "rack", "fabr":
			if h.Next[:4] == "host" || h.Next[:4] == "rack" {
				if h.SetSize != 1 {
					t.Errorf("%s down hop set size %d", h.Node, h.SetSize)
				}
				continue
			}
			if h.SetSize != 4 {
				t.Fatalf("%s up hop set size %d, want 4", h.Node, h.SetSize)
			}
			salt := ecmp.DefaultSalt(h.Node, cfg.Seed)
			want := ecmp.CRC32WithSalt.Hash(salt, &key)
			if h.Member != int(want%4) || h.Hash == "" {
				t.Errorf("%s: member %d hash %s, want member %d of hash %#08x", h.Node, h.Member, h.Hash, want%4, want)
			}
		}
	}
	if _, err := c.FlowPath(&cfg, hm, src, addr("192.0.2.1"), 6, 1, 2); err == nil {
		t.Error("unknown endpoint accepted")
	}
	if _, err := c.FlowPath(&cfg, hm, src, src, 6, 1, 2); err == nil {
		t.Error("intra-host path accepted")
	}
}
