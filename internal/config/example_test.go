package config_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
)

// Load a file with human units, override two attributes as --set does, and read the
// derived quantities.
func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "config-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "fabric.yaml")
	os.WriteFile(path, []byte(`
Seed: 7
Switch:
  BufferSize: 16MiB
  EcnMinThreshold: 200KB
Topology:
  Pods: 1
`), 0o644)

	cfg, warnings, err := config.Load(path, []string{"HostLink.Speed=25G", "Switch.Headroom=auto"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("buffer:", cfg.Switch.BufferSize, "cells:", int64(cfg.Switch.BufferSize/cfg.Switch.CellSize))
	fmt.Println("ECN:", cfg.Switch.Ecn(3).MinThreshold, "to", cfg.Switch.Ecn(3).MaxThreshold)
	fmt.Println("host link:", cfg.Topology.HostLink.Speed, "tiers:", cfg.Tiers())
	// Two 25G host links (1us + 9038 B + 84 B each way) and two 100G rack-fabric links.
	fmt.Println("base RTT:", cfg.BaseRTT(), "BDP:", int64(cfg.BDP()), "B")
	layout, _ := cfg.Layout(config.TierRack)
	fmt.Println("rack headroom per port:", int64(layout.Headroom[0]), "B (host),", int64(layout.Headroom[16]), "B (uplink)")
	fmt.Println("warnings:", len(warnings))
	// Output:
	// buffer: 16MiB cells: 65536
	// ECN: 200KB to 1600KB
	// host link: 25Gbps tiers: [rack fabric]
	// base RTT: 15297600ps BDP: 47805 B
	// rack headroom per port: 117760 B (host), 236032 B (uplink)
	// warnings: 0
}

// A typo fails with the file, line and attribute path, and a suggestion.
func ExampleParse_typo() {
	_, _, err := config.Parse([]byte("Switch:\n  CellSize: 256\n  BufferSze: 16MiB\n"), "fabric.yaml", nil)
	fmt.Println(err)
	// Output:
	// fabric.yaml:3: Switch.BufferSze: unknown attribute (did you mean BufferSize?)
}

// Every broken rule is reported at once, each naming the attribute and the rule.
func ExampleConfig_Validate() {
	c := config.Default()
	c.Switch.EcnWeight = 0
	c.Switch.Pools[1].TrafficClasses = []int{3, 4, 7}
	fmt.Println(c.Validate())
	// Output:
	// Switch.Pools[1].TrafficClasses: TC 7 is also in pool 0 (each TC maps to exactly one pool); Switch.Pools[1].TrafficClasses: pool "lossless" mixes lossless TCs [3 4] (PFC enabled) with lossy TCs [7] (a pool is lossless if its TCs have PFC, lossy otherwise; move them to separate pools or change PfcEnabled); Switch.EcnWeight: 0 is outside (0,1] (EWMA weight: 1 = instantaneous)
}

// the worked example of docs/model.md#headroom-sizing: 100 Gb/s, 1 us links, MTU 9000, 256-byte cells.
func ExampleAutoHeadroom() {
	h := config.AutoHeadroom(100*units.Gbps, units.Microsecond, 9000, 256)
	fmt.Println(int64(h), "B =", int64(h/256), "cells")
	// Output:
	// 236032 B = 922 cells
}
