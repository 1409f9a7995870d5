package replay

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
)

// TestTimeRange: a capture whose span does not fit the picosecond clock (a years-long
// gap) is an input error naming the span and the --speedup that would fit, never a
// run with wrapped injection times; with that speedup it replays.
func TestTimeRange(t *testing.T) {
	gap := 60 * 24 * 3600 * units.Second // 60 days: beyond the clock's ~53 days
	pkts := []tracegen.Packet{
		{Time: 0, Src: addr("10.0.0.1"), Dst: addr("10.0.1.1"), Proto: layers.IPProtocolUDP, SrcPort: 1, DstPort: 2, Length: 100},
		{Time: gap, Src: addr("10.0.0.1"), Dst: addr("10.0.1.1"), Proto: layers.IPProtocolUDP, SrcPort: 1, DstPort: 2, Length: 100},
	}
	trace := writeTrace(t, pkts)
	_, err := Prepare(Options{Traces: []string{trace}})
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "--speedup") || !strings.Contains(err.Error(), "trace.pcap") {
		t.Fatalf("60-day capture: err = %v, want an input error naming the file and --speedup", err)
	}
	pr, err := Prepare(Options{Traces: []string{trace}, Speedup: 10})
	if err != nil {
		t.Fatal(err)
	}
	run, err := pr.Run(filepath.Join(t.TempDir(), "run"), "")
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(gap / 10); run.Simulation.SimTimePs < want || run.Simulation.Delivered != 2 {
		t.Errorf("speedup 10: sim time %d ps (want >= %d), delivered %d", run.Simulation.SimTimePs, want, run.Simulation.Delivered)
	}
}
