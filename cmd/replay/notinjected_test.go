package main

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
)

// The run summary lists every packet of the trace that was not injected as
// captured, by reason: a record skipped by the reader (ARP here), a packet whose two
// ends map to one host, a packet longer than the MTU split into MTU-sized pieces.
func TestRunSummaryNotInjected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mixed.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := tracegen.NewEncoder(tracegen.DefaultSnaplen)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriterNanos(f)
	if err := w.WriteFileHeader(uint32(enc.Snaplen()), layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	write := func(i int, data []byte, wire int) {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1_700_000_000, int64(i)*1000).UTC(), CaptureLength: len(data), Length: wire}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.1.1")
	for i, p := range []tracegen.Packet{
		{Src: a, Dst: b, Length: 1000}, // injected as captured
		{Src: a, Dst: a, Length: 1000}, // intra-host
		{Src: a, Dst: b, Length: 4000}, // 4000 > MTU 1500: split into 3
		{Src: b, Dst: a, Length: 1500}, // injected as captured
	} {
		p.Time, p.Proto, p.SrcPort, p.DstPort = units.Time(i)*units.Microsecond, layers.IPProtocolUDP, 1000, 2000
		data, wire, err := enc.Encode(&p)
		if err != nil {
			t.Fatal(err)
		}
		write(i, data, wire)
	}
	arp := make([]byte, 60) // broadcast ARP request: ethertype 0x0806
	copy(arp, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 10, 0, 0, 1, 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1})
	write(4, arp, len(arp))
	if err := f.Close(); err != nil {
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
