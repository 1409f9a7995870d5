package replay

import (
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// TestTraceIndexAcrossFiles: with several captures, trace_index numbers the records
// of the merged capture: a packet of the second file is offset by the first file's
// record count.
func TestTraceIndexAcrossFiles(t *testing.T) {
	mk := func(start units.Time, n int) string {
		var pkts []tracegen.Packet
		for i := range n {
			pkts = append(pkts, tracegen.Packet{Time: start + units.Time(i)*10*units.Microsecond, Src: addr("10.0.0.1"),
				Dst: addr("10.0.1.1"), Proto: layers.IPProtocolUDP, SrcPort: 1, DstPort: 2, Length: 500})
		}
		return writeTrace(t, pkts)
	}
	a, b := mk(0, 3), mk(5*units.Microsecond, 2) // b's packets interleave with a's
	pr, err := Prepare(Options{Traces: []string{a, b}, RecordPackets: true})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	if _, err := pr.Run(out, ""); err != nil {
		t.Fatal(err)
	}
	rows, _, err := records.ReadAll(records.OpenPackets(filepath.Join(out, records.PacketsFile)))
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, r := range rows {
		got = append(got, r.TraceIndex)
	}
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	want := []int64{0, 1, 2, 3, 4}
	if len(got) != len(want) {
		t.Fatalf("trace indices %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("trace indices %v, want %v", got, want)
		}
	}
}
