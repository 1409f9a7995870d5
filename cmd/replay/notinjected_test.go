package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/internal/tracegen"
)

// The run summary lists every packet of the trace that was not injected as
// captured, by reason: a record skipped by the reader (ARP here), a packet whose two
// ends map to one host, a packet longer than the MTU split into MTU-sized pieces.
func TestRunSummaryNotInjected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mixed.pcap")
	if err := tracegen.WriteNotInjected(path); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCmd("run", path, "-o", filepath.Join(t.TempDir(), "out"), "--set", "Switch.Mtu=1500")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "not injected as captured: 1 arp (skipped), 1 intra-host, 1 oversize split into 3 packets\n"
	if !strings.Contains(stdout, want) {
		t.Errorf("summary lacks %q:\n%s", want, stdout)
	}
	// 2 packets as captured + 3 pieces; the intra-host packet and the ARP record are not injected.
	if !strings.Contains(stdout, "injected 5 packets") {
		t.Errorf("summary does not say injected 5 packets:\n%s", stdout)
	}
}
