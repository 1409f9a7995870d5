package replay

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/ingest"
)

// The three real captures that span more than the simulator's clock (years between
// two packets) are refused with an error that suggests --max-idle and a window, and
// replay with either.
func TestRealPcapsRefusedReplay(t *testing.T) {
	dir := realPcaps(t)
	want := expectedIP(t, dir)
	at := func(s string) int64 {
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return ts.UnixNano()
	}
	tests := []struct {
		name, file string
		opt        func(*Options)
		replayed   int64 // trace.replayed
		shortened  int64 // idle gaps shortened
	}{
		// 20 IPv4 packets on 2010-06-29, 4.5 years of nothing, 4663 on 2015-01-03.
		{"max-idle", "web-client-508-flows-qinq.pcap", func(o *Options) { o.MaxIdle = time.Second }, 4683, 1},
		// The window's 61 endpoints fall in 37 /24s: the subnet mapping would put 17 on
		// one rack of 16 hosts, so this replay hashes endpoints onto hosts.
		{"window", "web-client-508-flows-qinq.pcap", func(o *Options) {
			o.Window = ingest.Window{Start: at("2015-01-01T00:00:00Z"), Absolute: true}
			o.Hosts = MapHash
		}, 4663, 0},
		// 2008-10-23, 2015-03-31 and 2020-07-14.
		{"max-idle", "enip-cip-dscp47-lldp.pcap", func(o *Options) { o.MaxIdle = time.Second }, 760, 2},
		{"window", "enip-cip-dscp47-lldp.pcap", func(o *Options) {
			o.Window = ingest.Window{Start: at("2015-03-31T17:00:00Z"), Absolute: true, Duration: int64(time.Hour)}
		}, 11, 0},
		// Interfaces with different timestamp resolutions: 2015, 2061 and 1969. With
		// reordering off all 155 IPv4 and 4 IPv6 packets replay (time never goes
		// backwards; the 1969 ones enter at the latest time so far); the 59 IPv4
		// packets of its Ethernet interface go from one address to itself
		// (intra-host), the 96 IPv4 and 4 IPv6 packets of its SLL interface (1969)
		// enter the fabric.
		{"max-idle", "edge-pcapng-ether-sll-mixed-tsresol.pcapng", func(o *Options) {
			o.MaxIdle, o.ReorderWindow = time.Second, -1
		}, 159, 1},
		{"window", "edge-pcapng-ether-sll-mixed-tsresol.pcapng", func(o *Options) {
			o.Window = ingest.Window{Start: at("1969-12-31T00:00:00Z"), Absolute: true, Duration: int64(48 * time.Hour)}
			o.ReorderWindow = -1
		}, 100, 0},
	}
	for _, tc := range tests {
		t.Run(tc.file+" "+tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			_, err := Prepare(Options{Traces: []string{path}})
			if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "--max-idle") || !strings.Contains(err.Error(), "--start and --duration") {
				t.Fatalf("without --max-idle or a window: %v", err)
			}
			r := replayReal(t, path, tc.opt)
			r.check(t, want[tc.file], 1)
			if r.trace.Replayed != tc.replayed || r.trace.IdleGaps.Shortened < tc.shortened {
				t.Errorf("replayed %d, %d idle gaps shortened; want %d, at least %d", r.trace.Replayed, r.trace.IdleGaps.Shortened, tc.replayed, tc.shortened)
			}
			if tc.shortened > 0 && r.trace.IdleGaps.RemovedS < 365*86400 {
				t.Errorf("removed %g s of idle time, want years", r.trace.IdleGaps.RemovedS)
			}
			s := r.run.Simulation
			t.Logf("replayed %d, injected %d, delivered %d, %d idle gaps shortened (%g s removed), sim %d ps",
				r.trace.Replayed, s.Injected, s.Delivered, r.trace.IdleGaps.Shortened, r.trace.IdleGaps.RemovedS, s.SimTimePs)
		})
	}
}
