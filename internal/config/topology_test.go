package config

import (
	"errors"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// TestBaseRTTDefault hand-computes docs/model.md#fabric-bdp for the defaults: 6 links of 100 Gb/s and
// 1 us; per link 2 us + 9038*8/100G (723,040 ps) + 84*8/100G (6,720 ps) = 2,729,760 ps.
func TestBaseRTTDefault(t *testing.T) {
	c := Default()
	if got, want := c.BaseRTT(), units.Time(6*2729760); got != want {
		t.Fatalf("BaseRTT = %d ps, want %d ps", got, want)
	}
	// 100e9 b/s * 16.37856 us / 8 = 204,732 B.
	if got := c.BDP(); got != 204732 {
		t.Fatalf("BDP = %d B, want 204,732", got)
	}
	c.Topology.Pods = 1
	if got, want := c.BaseRTT(), units.Time(4*2729760); got != want {
		t.Fatalf("Pods 1: BaseRTT = %d, want %d", got, want)
	}
	c.Topology.RacksPerPod = 1
	if got, want := c.BaseRTT(), units.Time(2*2729760); got != want {
		t.Fatalf("one rack: BaseRTT = %d, want %d", got, want)
	}
}

func TestBaseRTTMixedLinks(t *testing.T) {
	c := Default()
	c.Topology.HostLink = Link{Speed: 25 * units.Gbps, PropagationDelay: 500 * units.Nanosecond}
	c.Topology.FabricSpineLink = Link{Speed: 400 * units.Gbps, PropagationDelay: 2 * units.Microsecond}
	// host link: 1us + 9038*8/25G = 2,892,160 + 84*8/25G = 26,880 -> 3,919,040
	// rack-fabric: 2,729,760; fabric-spine: 4us + 180,760 + 1,680 = 4,182,440
	want := units.Time(2*3919040 + 2*2729760 + 2*4182440)
	if got := c.BaseRTT(); got != want {
		t.Fatalf("BaseRTT = %d, want %d", got, want)
	}
	// 25e9 * 21,662,480 ps / 8 = 67,695.25 -> 67,695 B (host link speed).
	if got := c.BDP(); got != 67695 {
		t.Fatalf("BDP = %d, want 67,695", got)
	}
}

func TestPortsAndCapacity(t *testing.T) {
	c := Default()
	want := map[Tier]int{TierRack: 20, TierFabric: 8, TierSpine: 2}
	for role, n := range want {
		if got := len(c.Ports(role)); got != n {
			t.Errorf("%v: %d ports, want %d", role, got, n)
		}
		r := c.Capacity(role)
		if r.Bandwidth != units.BitRate(n)*100*units.Gbps || r.SwitchingCapacity != r.Bandwidth || r.Oversubscribed {
			t.Errorf("%v: %+v", role, r)
		}
	}
	c.Switch.SwitchingCapacity = 1 * units.Tbps
	if r := c.Capacity(TierRack); !r.Oversubscribed || r.Bandwidth != 2*units.Tbps {
		t.Errorf("rack with 1Tbps capacity: %+v", r)
	}
	if r := c.Capacity(TierFabric); r.Oversubscribed {
		t.Errorf("fabric 800G with 1Tbps capacity: %+v", r)
	}
	c.Topology.Pods = 1
	if got := len(c.Ports(TierFabric)); got != 4 {
		t.Errorf("Pods 1: fabric has %d ports, want 4", got)
	}
	if len(c.Tiers()) != 2 || len(c.Ports(TierSpine)) != 0 {
		t.Errorf("Pods 1: roles %v, spine ports %d", c.Tiers(), len(c.Ports(TierSpine)))
	}
}

func TestLayoutDefault(t *testing.T) {
	c := Default()
	l, err := c.Layout(TierRack)
	if err != nil {
		t.Fatal(err)
	}
	// 20 ports x 236,032 B x 1 lossless pool = 4,720,640 B; left 28,833,792 B.
	if l.TotalHeadroom != 4720640 || l.LosslessPools != 1 || l.Cells != 131072 {
		t.Fatalf("layout %+v", l)
	}
	left := 32*units.MiB - 4720640
	// 60% = 17,300,275.2 -> 67,579 cells = 17,300,224; 40% = 11,533,516.8 -> 45,052 cells = 11,533,312.
	if l.PoolSizes[0] != 17300224 || l.PoolSizes[1] != 11533312 || l.PoolSizes[0]+l.PoolSizes[1] > left {
		t.Fatalf("pool sizes %v", l.PoolSizes)
	}
	c.Switch.Headroom = FixedHeadroom(2 * units.MiB)
	_, err = c.Layout(TierRack)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrInvalid) || e.Violations[0].Attr != "Switch.BufferSize" {
		t.Fatalf("20 x 2MiB headroom accepted: %v", err)
	}
}

func TestDefaultEcn(t *testing.T) {
	s := Default().Switch
	p := 0.5
	m := 2 * units.MB
	s.EcnClasses = map[int]EcnOverride{3: {EcnMaxProbability: &p, EcnMaxThreshold: &m}}
	s.EcnEnabled = []int{3}
	if e := s.Ecn(3); !e.Enabled || e.MaxProbability != 0.5 || e.MaxThreshold != m || e.MinThreshold != 400*units.KB || e.Weight != 1 {
		t.Errorf("Ecn(3) = %+v", e)
	}
	if e := s.Ecn(0); e.Enabled || e.MaxProbability != 0.2 {
		t.Errorf("Ecn(0) = %+v", e)
	}
	if s.PoolOf(3) != 1 || s.PoolOf(7) != 0 || !s.Lossless(1) || s.Lossless(0) {
		t.Errorf("pools: PoolOf(3)=%d PoolOf(7)=%d", s.PoolOf(3), s.PoolOf(7))
	}
}
