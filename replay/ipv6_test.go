package replay

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/records"
)

// TestMixedTrace replays the committed dual-stack trace (testdata/pcaps/mixed.pcap:
// IPv4 and IPv6 flows between the pods, a TCP incast per family into one rack)
// through the default fabric: every packet is accounted for, fabric-wide, per flow
// and per family; flows.arrow has the trace's flows of each family (ingest's
// by_family); the IPv6 endpoints take the hosts after their rack's IPv4 ones
// (tracegen.DualStackHosts); both incasts drop; two runs write identical records.
func TestMixedTrace(t *testing.T) {
	const trace = "testdata/pcaps/mixed.pcap"
	sum, err := ingest.Summarize([]string{repoPath(t, trace)}, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.IPv4Packets == 0 || sum.IPv6Packets == 0 {
		t.Fatalf("mixed.pcap: %d IPv4 and %d IPv6 packets", sum.IPv4Packets, sum.IPv6Packets)
	}
	run, dir := runTrace(t, trace, nil)
	s := run.Simulation
	if s.Injected != sum.IPPackets() || s.Injected != s.Delivered+s.DroppedTotal()+s.UndrainedTotal() {
		t.Errorf("injected %d (trace %d) != delivered %d + dropped %d + undrained %d", s.Injected, sum.IPPackets(), s.Delivered, s.DroppedTotal(), s.UndrainedTotal())
	}
	if s.LosslessDrops != 0 || s.DroppedTotal() != s.Dropped[records.ReasonEgressLimit] {
		t.Errorf("drops %v: want egress-limit drops only", s.Dropped)
	}
	var tr struct {
		IPv4     int64 `json:"ipv4_packets"`
		IPv6     int64 `json:"ipv6_packets"`
		ByFamily struct {
			IPv4, IPv6 struct{ Packets, Flows int64 }
		} `json:"by_family"`
		Replayed int64 `json:"replayed"`
	}
	if err := json.Unmarshal(run.Trace, &tr); err != nil {
		t.Fatal(err)
	}
	if tr.IPv4 != sum.IPv4Packets || tr.IPv6 != sum.IPv6Packets || tr.ByFamily.IPv6.Flows != sum.ByFamily.IPv6.Flows || tr.Replayed != sum.IPPackets() {
		t.Errorf("run.json trace %+v, ingest %d + %d packets", tr, sum.IPv4Packets, sum.IPv6Packets)
	}

	flows, nodes, err := records.ReadAll(records.OpenFlows(filepath.Join(dir, records.FlowsFile)))
	if err != nil {
		t.Fatal(err)
	}
	var n [2]int64        // flows per family
	var pk, drop [2]int64 // packets and drops per family
	for _, f := range flows {
		fam := f.Src.Family()
		if f.Dst.Family() != fam || !fam.Valid() {
			t.Fatalf("flow %d: %v -> %v", f.FlowID, f.Src, f.Dst)
		}
		if f.Packets != f.Delivered+f.Dropped+f.Undrained {
			t.Fatalf("flow %d: %d packets != %d + %d + %d", f.FlowID, f.Packets, f.Delivered, f.Dropped, f.Undrained)
		}
		n[fam.Index()]++
		pk[fam.Index()] += f.Packets
		drop[fam.Index()] += f.Dropped
		if fam == ipaddr.IPv6 {
			// fd00:0:P:R::(h+1) is host-pP-rR-h(8+h).
			a := f.Src.As16()
			if want := hostName(int(a[5]), int(a[7]), 8+int(a[15])-1); nodes[f.SrcHost] != want {
				t.Errorf("flow %d: %v on %s, want %s", f.FlowID, f.Src, nodes[f.SrcHost], want)
			}
		}
	}
	if n[0] != sum.ByFamily.IPv4.Flows || n[1] != sum.ByFamily.IPv6.Flows {
		t.Errorf("flows.arrow: %d IPv4 and %d IPv6 flows; the trace has %d and %d", n[0], n[1], sum.ByFamily.IPv4.Flows, sum.ByFamily.IPv6.Flows)
	}
	if pk[0] != sum.IPv4Packets || pk[1] != sum.IPv6Packets || drop[0] == 0 || drop[1] == 0 {
		t.Errorf("packets per family %v (trace %d, %d), drops per family %v: want both incasts to drop", pk, sum.IPv4Packets, sum.IPv6Packets, drop)
	}
	drops, _, err := records.ReadAll(records.OpenDrops(filepath.Join(dir, records.DropsFile)))
	if err != nil {
		t.Fatal(err)
	}
	var dropRows [2]int64
	for _, d := range drops {
		if d.Src.Family() != d.Dst.Family() || d.Proto != 6 || d.Dport != 5201 {
			t.Fatalf("drop %+v: want the incasts' TCP packets", d)
		}
		dropRows[d.Src.Family().Index()]++
	}
	if dropRows != drop {
		t.Errorf("drops.arrow rows per family %v, flows.arrow %v", dropRows, drop)
	}

	// Deterministic, both families together.
	_, again := runTrace(t, trace, nil)
	for _, name := range records.Files() {
		x, errx := os.ReadFile(filepath.Join(dir, name))
		y, erry := os.ReadFile(filepath.Join(again, name))
		if (errx == nil) != (erry == nil) || errx == nil && !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs", name)
		}
	}
}

// TestIPv6Trace replays the committed IPv6-only trace: its lossless RoCEv2 incast
// pauses without a drop, its lossy TCP incast drops at the egress limit, and every
// record is IPv6.
func TestIPv6Trace(t *testing.T) {
	run, dir := runTrace(t, "testdata/pcaps/ipv6.pcap", nil)
	s := run.Simulation
	if s.PFCFrames == 0 || s.LosslessDrops != 0 || s.Dropped[records.ReasonEgressLimit] == 0 ||
		s.Injected != s.Delivered+s.DroppedTotal()+s.UndrainedTotal() {
		t.Errorf("PFC frames %d, drops %v, lossless %d, injected %d, delivered %d: want pauses, egress-limit drops, conservation",
			s.PFCFrames, s.Dropped, s.LosslessDrops, s.Injected, s.Delivered)
	}
	flows, _, err := records.ReadAll(records.OpenFlows(filepath.Join(dir, records.FlowsFile)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range flows {
		if !f.Src.Is6() || !f.Dst.Is6() {
			t.Fatalf("flow %d: %v -> %v is not IPv6", f.FlowID, f.Src, f.Dst)
		}
	}
	lossy := tracegen.IPv6Lossy()
	drops, _, err := records.ReadAll(records.OpenDrops(filepath.Join(dir, records.DropsFile)))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drops {
		if d.Dst.Netip() != lossy.Receiver || d.Proto != 6 {
			t.Fatalf("drop %+v: want the lossy incast's packets to %v", d, lossy.Receiver)
		}
	}
}

// hostName is the default grid's name of host h of rack r of pod p.
func hostName(p, r, h int) string {
	return defaultGrid.HostName(int32((p*4+r)*16 + h))
}
