package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

func TestFlowPath(t *testing.T) {
	cfg := config.Default()
	c, err := NewTopology(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Nine /24 groups: 10.0.0.x on rack-p0-r0, 10.0.4.x (group 4) on rack-p1-r0.
	var eps []ipaddr.Addr
	for g := 0; g < 5; g++ {
		eps = append(eps, ipaddr.From4([4]byte{10, 0, byte(g), 1}))
	}
	hm, err := MapRacks(MapSubnet, eps, c.HostRacks, c, 24, 0)
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

// TestFlowPathIPv6: an IPv6 flow's hops hash its 37-byte key (ecmp.MakeKey6) with each
// switch's method and salt; the two addresses must be of one family.
func TestFlowPathIPv6(t *testing.T) {
	cfg := config.Default()
	c, err := NewTopology(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Five /64 groups: 2001:db8:0:0::/64 on rack-p0-r0, 2001:db8:0:4::/64 on rack-p1-r0.
	var eps []ipaddr.Addr
	for g := 0; g < 5; g++ {
		eps = append(eps, ipaddr.From16([16]byte{0x20, 0x01, 0x0d, 0xb8, 6: 0, 7: byte(g), 15: 1}))
	}
	eps = append(eps, ipaddr.MustParse("10.0.0.1"))
	hm, err := MapRacks(MapSubnet, eps, c.HostRacks, c, 24, 64)
	if err != nil {
		t.Fatal(err)
	}
	src, dst := addr("2001:db8::1"), addr("2001:db8:0:4::1")
	for _, m := range ecmp.AllMethods {
		cfg.Switch.EcmpHashMethod = m
		hops, err := c.FlowPath(&cfg, hm, src, dst, 6, 49152, 443)
		if err != nil {
			t.Fatal(err)
		}
		// 10.0.0.1 is group 0 (rack-p0-r0, h0): the IPv6 groups follow, so
		// 2001:db8::/64 is group 1 (rack-p0-r1) and 2001:db8:0:4::/64 group 5 (rack-p1-r1).
		if len(hops) != 6 || hops[0].Node != "host-p0-r1-h0" || hops[5].Next != "host-p1-r1-h0" {
			t.Fatalf("%v: hops %+v", m, hops)
		}
		key := ecmp.MakeKey6(src.As16(), dst.As16(), 6, 49152, 443, false)
		for _, h := range hops {
			if h.SetSize < 2 {
				continue
			}
			ec := cfg.ECMP(h.Node)
			want := m.Hash(ec.Salt, &key)
			if h.Member != int(want%uint32(h.SetSize)) || h.Hash != fmt.Sprintf("0x%08x", want) {
				t.Errorf("%v %s: member %d hash %s, want member %d of hash %#08x", m, h.Node, h.Member, h.Hash, want%uint32(h.SetSize), want)
			}
		}
	}
	if _, err := c.FlowPath(&cfg, hm, addr("10.0.0.1"), dst, 6, 1, 2); err == nil || !strings.Contains(err.Error(), "one family") {
		t.Errorf("mixed families: err = %v", err)
	}
	if _, err := c.FlowPath(&cfg, hm, src, addr("2001:db8:0:9::1"), 6, 1, 2); err == nil {
		t.Error("unknown IPv6 endpoint accepted")
	}
}
