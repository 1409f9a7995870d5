package replay

import (
	"path/filepath"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/records"
)

// docs/records.md: flows.arrow ce_marked = "delivered packets that arrived marked CE by
// the fabric". A packet captured with CE already set (no congestion anywhere) is not
// marked by the fabric: run.json ce_marked and ports ecn_marked are 0, so the flow's
// ce_marked (and packets.arrow ce) must be 0 too. run.go Delivered counts
// p.CEMarked(), i.e. ECN == CE at delivery, whatever the capture said.
func TestCEFromTraceNotCountedAsFabricMark(t *testing.T) {
	pkts := []tracegen.Packet{{Time: 0, Src: addr("10.0.0.1"), Dst: addr("10.0.1.1"), Proto: layers.IPProtocolUDP,
		SrcPort: 1000, DstPort: 2000, ECN: 3, Length: 1000}}
	pr, err := Prepare(Options{Traces: []string{writeTrace(t, pkts)}, RecordPackets: true})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	run, err := pr.Run(out, "")
	if err != nil {
		t.Fatal(err)
	}
	flows, _, err := records.ReadAll(records.OpenFlows(filepath.Join(out, records.FlowsFile)))
	if err != nil {
		t.Fatal(err)
	}
	if run.Simulation.CEMarked != 0 || flows[0].CEMarked != run.Simulation.CEMarked {
		t.Fatalf("run.json ce_marked %d, flows.arrow ce_marked %d: a CE packet from the capture is counted as marked by the fabric",
			run.Simulation.CEMarked, flows[0].CEMarked)
	}
}
