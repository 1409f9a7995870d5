package replay

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
)

// TestTopologyBaseRTTOfTheClos: the fabric's longest path gives config's BaseRTT and
// BDP (docs/model.md#fabric-bdp) for every Clos shape: 6 links across pods, 4 inside
// one pod, 2 in a single rack.
func TestTopologyBaseRTTOfTheClos(t *testing.T) {
	for _, c := range []struct{ pods, racks, links int }{{2, 4, 6}, {1, 4, 4}, {1, 1, 2}, {3, 2, 6}} {
		cfg := config.Default()
		cfg.Topology.Pods, cfg.Topology.RacksPerPod = c.pods, c.racks
		cfg.Topology.FabricSpineLink.PropagationDelay = 3 * cfg.Topology.HostLink.PropagationDelay
		topo, err := NewTopology(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		rtt, bdp := topo.BaseRTT(&cfg)
		if len(topo.Longest) != c.links || rtt != cfg.BaseRTT() || bdp != cfg.BDP() {
			t.Errorf("%d pods x %d racks: longest %d links, BaseRTT %v BDP %v; config: %v %v", c.pods, c.racks, len(topo.Longest), rtt, bdp, cfg.BaseRTT(), cfg.BDP())
		}
	}
	// The default: 16.37856 us and 204,732 B (docs/model.md#fabric-bdp).
	cfg := config.Default()
	topo, err := NewTopology(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rtt, bdp := topo.BaseRTT(&cfg); rtt != 16_378_560 || bdp != 204_732 {
		t.Errorf("default BaseRTT %v BDP %v", rtt, bdp)
	}
}
