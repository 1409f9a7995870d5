package replay

import (
	"maps"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/records"
)

// server.pcap (tracegen.ServerCapture, README "Bring your own capture") as its
// testdata/pcaps/README.md table says, counted there by hand: the default mapping
// puts its one /24 on one rack and warns, --hosts spread puts two endpoints on each
// rack; closed loop re-sends 141 of its 165 flows (the 12 backups and the 8 read
// directions, the replication and the 120 request and answer flows), leaves 13 out
// (the server's ACKs of the backups, the peer's of the replication), replays the 10
// DNS flows open loop and falls back for one (the ACKs to 192.168.40.33, whose data
// is not in the capture); 4 copies count 4 times as many.
func TestServerCapture(t *testing.T) {
	const trace = "testdata/pcaps/server.pcap"
	var warnings []string
	run, _ := runTrace(t, trace, func(o *Options) { o.Warn = func(s string) { warnings = append(warnings, s) } })
	hm := run.HostMapping
	if hm.Endpoints != 16 || hm.RacksUsed != 1 || hm.Racks[0].Endpoints != 16 || !strings.Contains(hm.Warning, "maps all 16 endpoints to rack rack-p0-r0") ||
		len(warnings) != 1 || warnings[0] != hm.Warning {
		t.Errorf("default mapping: %d endpoints on %d racks (first %+v), warning %q, warned %q", hm.Endpoints, hm.RacksUsed, hm.Racks[0], hm.Warning, warnings)
	}
	if s := run.Simulation; s.Injected != 8372 || s.Delivered != s.Injected {
		t.Errorf("injected %d, delivered %d: want the 8,375 packets but the 3 multicast", s.Injected, s.Delivered)
	}
	spread, _ := runTrace(t, trace, func(o *Options) { o.Hosts = MapSpread })
	for _, r := range spread.HostMapping.Racks {
		if r.Endpoints != 2 || r.HostsUsed != 2 {
			t.Errorf("--hosts spread: %s has %d endpoints on %d hosts, want 2 on 2", r.Name, r.Endpoints, r.HostsUsed)
		}
	}
	if spread.HostMapping.Warning != "" {
		t.Errorf("--hosts spread warns: %s", spread.HostMapping.Warning)
	}
	for _, copies := range []int64{1, 4} {
		run, _ := runTrace(t, trace, func(o *Options) {
			closedOpts(o)
			o.Hosts = MapSpread
			if copies > 1 {
				o.Replicate = []int{int(copies)}
			}
		})
		want := records.ClosedLoop{Flows: 165 * copies, Closed: 141 * copies, ControlOnly: 13 * copies, Open: 10 * copies,
			Fallback: map[string]int64{records.FallbackControlWithoutSender: copies, records.FallbackFragmented: 0, records.FallbackTooManySegments: 0}}
		got := run.ClosedLoop
		if got == nil || got.Flows != want.Flows || got.Closed != want.Closed || got.ControlOnly != want.ControlOnly || got.Open != want.Open ||
			!maps.Equal(got.Fallback, want.Fallback) {
			t.Errorf("%d copies: closed_loop %+v, want %+v", copies, got, want)
		}
	}
}
