package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/records"
)

// A derived Prepared replays exactly what a Prepared of its own configuration and
// speedup replays: the same record files, byte for byte, and the same totals. Closed
// loop from an open-loop Prepared reads the segment sizes it needs.
func TestDeriveEqualsPrepare(t *testing.T) {
	if testing.Short() {
		t.Skip("six replays")
	}
	load := func(sets ...string) *config.Config {
		cfg, _, err := config.Load("", sets)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	base, err := Prepare(Options{Traces: []string{incastTrace}, Config: load(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		cfg     *config.Config
		speedup float64
	}{
		{"buffer and hash, speedup 2", load("BufferSize=8MiB", "EcmpHashMethod=crc16"), 2},
		{"closed loop", load("Transport.Mode=closed", "BufferSize=12MiB"), 1},
		{"flowlets, speedup 0.5", load("LoadBalancingMethod=flowlet"), 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			d, err := base.Derive(tc.cfg, tc.speedup)
			if err != nil {
				t.Fatal(err)
			}
			a, err := d.Run(filepath.Join(dir, "derived"), "")
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := Prepare(Options{Traces: []string{incastTrace}, Config: tc.cfg, Speedup: tc.speedup, Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			b, err := fresh.Run(filepath.Join(dir, "fresh"), "")
			if err != nil {
				t.Fatal(err)
			}
			if a.Simulation.Injected != b.Simulation.Injected || a.Simulation.DroppedTotal() != b.Simulation.DroppedTotal() ||
				a.Transport != b.Transport || a.Options.Speedup != tc.speedup || b.Options.Speedup != tc.speedup {
				t.Errorf("derived: injected %d dropped %d %s speedup %v; prepared: %d %d %s %v", a.Simulation.Injected,
					a.Simulation.DroppedTotal(), a.Transport, a.Options.Speedup, b.Simulation.Injected, b.Simulation.DroppedTotal(), b.Transport, b.Options.Speedup)
			}
			for name := range a.Records {
				x, errx := os.ReadFile(filepath.Join(dir, "derived", name))
				y, erry := os.ReadFile(filepath.Join(dir, "fresh", name))
				if errx != nil || erry != nil {
					t.Fatalf("%s: %v %v", name, errx, erry)
				}
				if !bytes.Equal(x, y) {
					t.Errorf("%s differs between the derived and the prepared run", name)
				}
			}
			// Every record file but packets.arrow (--packets) and stages.arrow (not
			// for the Clos), and transport.arrow closed loop only.
			want := len(records.Files()) - 3
			if a.Transport == records.ModeClosed {
				want++
			}
			if len(a.Records) != want {
				t.Errorf("compared %d record files, want %d", len(a.Records), want)
			}
		})
	}
}

// Derive refuses another topology (the Clos and host mapping are the Prepared's),
// an invalid configuration and a speedup that is not a finite number > 0.
func TestDeriveRefuses(t *testing.T) {
	cfg, _, err := config.Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := Prepare(Options{Traces: []string{incastTrace}, Config: cfg, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	other := *cfg
	other.Topology.HostsPerRack = 32
	bad := *cfg
	bad.Switch.BufferSize = 0
	for name, c := range map[string]struct {
		cfg     *config.Config
		speedup float64
		want    string
	}{
		"topology": {&other, 1, "topology differs"},
		"invalid":  {&bad, 1, "BufferSize"},
		"speedup":  {cfg, 0, "--speedup 0"},
	} {
		if _, err := pr.Derive(c.cfg, c.speedup); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, c.want)
		}
	}
}

// incastTrace is the committed TCP incast (closed loop changes what it does).
var incastTrace = filepath.Join("..", "testdata", "pcaps", "tcp-incast.pcap")
