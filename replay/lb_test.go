package replay

import (
	"path/filepath"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// TestLoadBalanceFlowlets pins loadbalance.arrow's flowlets column as docs/records.md
// states it: 0 under LoadBalancingMethod none, and under flowlet at least one flowlet
// per flow on a member (a flow's first packet starts one), with moved_in = moved_out.
func TestLoadBalanceFlowlets(t *testing.T) {
	for _, lb := range []ecmp.LoadBalancing{ecmp.None, ecmp.Flowlet} {
		t.Run(lb.String(), func(t *testing.T) {
			cfg := config.Default()
			cfg.Switch.LoadBalancingMethod = lb
			_, out := runTrace(t, "testdata/pcaps/many-flows.pcap", func(o *Options) { o.Config = &cfg })
			rows, _, err := records.ReadAll(records.OpenLoadBalance(filepath.Join(out, records.LoadBalanceFile)))
			if err != nil {
				t.Fatal(err)
			}
			var flows, flowlets, in, outMoves int64
			for _, r := range rows {
				flows += r.Flows
				flowlets += r.Flowlets
				in += r.MovedIn
				outMoves += r.MovedOut
				if lb == ecmp.None && r.Flowlets != 0 {
					t.Fatalf("none: %d flowlets on node %d set %d member %d", r.Flowlets, r.Node, r.Set, r.Member)
				}
			}
			if flows == 0 || in != outMoves {
				t.Fatalf("flows %d, moved in %d out %d", flows, in, outMoves)
			}
			if lb == ecmp.Flowlet && flowlets < flows-in {
				t.Errorf("flowlet: %d flowlets for %d member-flows (%d moved in)", flowlets, flows, in)
			}
			t.Logf("%s: flows %d flowlets %d moved %d", lb, flows, flowlets, in)
		})
	}
}
