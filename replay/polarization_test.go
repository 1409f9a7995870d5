package replay

import (
	"path/filepath"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// The polarization invariant through the network (docs/model.md#ecmp-hashing): in the default
// 4 x 4 planes (4 uplinks per rack, 4 spines per fabric switch), a fabric switch that
// uses an unsalted method computes the rack's function again, so all the up traffic
// it receives from a rack member goes to one spine: each pod-0 fabric switch sends
// everything up through a single spine uplink. crc32WithSalt spreads it over all
// four. Replayed on many-flows.pcap (4,000 flows between the pods) and read from
// loadbalance.arrow.
func TestPolarizationThroughTheNetwork(t *testing.T) {
	for _, m := range ecmp.AllMethods {
		t.Run(m.String(), func(t *testing.T) {
			cfg := config.Default()
			cfg.Switch.EcmpHashMethod = m
			_, out := runTrace(t, "testdata/pcaps/many-flows.pcap", func(o *Options) { o.Config = &cfg })
			rows, nodes, err := records.ReadAll(records.OpenLoadBalance(filepath.Join(out, records.LoadBalanceFile)))
			if err != nil {
				t.Fatal(err)
			}
			used := map[string]int{} // fabric switch -> spine uplinks that carried bytes
			seen := map[string]bool{}
			for _, r := range rows {
				if r.Tier != records.TierFabric {
					continue
				}
				seen[nodes[r.Node]] = true
				if r.Bytes > 0 {
					used[nodes[r.Node]]++
				}
			}
			if len(seen) != 8 {
				t.Fatalf("%d fabric switches in loadbalance.arrow, want 8", len(seen))
			}
			want := 1
			if m == ecmp.CRC32WithSalt {
				want = 4
			}
			for sw := range seen {
				if used[sw] != want {
					t.Errorf("%s: %s used %d of its 4 spine uplinks, want %d", m, sw, used[sw], want)
				}
			}
		})
	}
}
