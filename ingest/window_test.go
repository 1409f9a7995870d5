package ingest

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/gopacket/layers"
)

// Multicast and broadcast destinations are IP packets that a replay skips: the
// summary counts them among the IPv4 or IPv6 packets and under skipped["multicast"],
// and leaves their groups (and sources that send nothing else) out of EndpointAddrs.
// IPv6 multicast is ff00::/8.
func TestMulticastSummary(t *testing.T) {
	udp := func(src, dst string) []byte {
		return ether(t, ipSpec{src: src, dst: dst, proto: layers.IPProtocolUDP, sport: 1, dport: 2})
	}
	udp6 := func(src, dst string) []byte {
		return etherFrame(t, nil, layers.EthernetTypeIPv6, ipv6Packet(v6Spec{src: src, dst: dst, proto: 17, sport: 1, dport: 2}))
	}
	recs := []rec{
		{ts: at(0), frame: udp("10.0.0.9", "224.0.0.22")},      // IGMP-like report: the first packet
		{ts: at(1), frame: udp("10.0.0.1", "10.0.1.1")},        // unicast
		{ts: at(2), frame: udp("10.0.0.1", "239.255.255.250")}, // SSDP
		{ts: at(3), frame: udp("10.0.0.2", "255.255.255.255")}, // limited broadcast
		{ts: at(4), frame: udp("10.0.1.1", "10.0.0.1")},        // unicast: the last one
		{ts: at(5), frame: udp("10.0.0.2", "239.0.0.1")},       // multicast: the last packet
		{ts: at(6), frame: udp("10.0.0.2", "223.255.255.255")}, // not multicast (class C)
		{ts: at(7), frame: udp("10.0.0.2", "240.0.0.1")},       // reserved, not multicast
		{ts: at(8), frame: udp6("fd00::1", "ff02::16")},        // MLD-like report
		{ts: at(9), frame: udp6("fd00::1", "fd00::2")},         // unicast
		{ts: at(10), frame: udp6("fd00::2", "ff3e::8000:1")},   // SSM group
		{ts: at(11), frame: udp6("fd00::2", "fe80::1")},        // link-local unicast: the last one
		{ts: at(12), frame: udp6("fd00::2", "fe80::ff00:1")},   // ff in the middle: unicast
		{ts: at(13), frame: udp6("fd00::9", "ff01::1")},        // node-local multicast: the last packet
	}
	s, err := Summarize([]string{writeTemp(t, "m.pcap", pcapFile(t, LinkEthernet, false, 65535, recs...))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.IPv4Packets != 8 || s.IPv6Packets != 6 || s.Skipped["multicast"] != 7 || s.Unicast != 7 || s.NonIPPackets != 0 {
		t.Errorf("ipv4 %d, ipv6 %d, multicast %d, unicast %d, non-ip %d; want 8, 6, 7, 7, 0",
			s.IPv4Packets, s.IPv6Packets, s.Skipped["multicast"], s.Unicast, s.NonIPPackets)
	}
	if s.FirstUnicast != at(1).UnixNano() || s.LastUnicast != at(12).UnixNano() {
		t.Errorf("unicast first %d last %d", s.FirstUnicast, s.LastUnicast)
	}
	var eps []string
	for _, a := range s.EndpointAddrs {
		eps = append(eps, a.String())
	}
	slices.Sort(eps)
	// 10.0.0.9 and fd00::9 send only multicast; the groups are not hosts.
	if want := []string{"10.0.0.1", "10.0.0.2", "10.0.1.1", "223.255.255.255", "240.0.0.1",
		"fd00::1", "fd00::2", "fe80::1", "fe80::ff00:1"}; !slices.Equal(eps, want) {
		t.Errorf("endpoints to map %v, want %v", eps, want)
	}
	if s.Flows != 14 || s.UnicastFlows != 7 || s.ByFamily.IPv6.Flows != 6 {
		t.Errorf("flows %d (unicast %d, ipv6 %d), want 14 (7, 6)", s.Flows, s.UnicastFlows, s.ByFamily.IPv6.Flows)
	}
	if s.Endpoints != 18 {
		t.Errorf("endpoints %d, want 18 (groups and multicast-only sources included)", s.Endpoints)
	}
	if f := s.Files[0]; f.Skipped["multicast"] != 7 || f.IPv4Packets != 8 || f.IPv6Packets != 6 {
		t.Errorf("per file: %+v", f.Skipped)
	}
}

// A window keeps the packets in [start, start+duration) of the merged capture: a
// start relative to the first IPv4 packet or absolute, and counts the others
// out-of-window in their files.
func TestWindow(t *testing.T) {
	mk := func(us ...int64) []byte {
		var recs []rec
		for _, u := range us {
			recs = append(recs, rec{ts: at(u), frame: ether(t, ipSpec{proto: layers.IPProtocolUDP, sport: 1, dport: 2})})
		}
		return pcapFile(t, LinkEthernet, false, 65535, recs...)
	}
	a, b := mk(0, 10, 20, 30, 40), mk(5, 15, 25, 35, 45)
	us := func(pkts []Packet) []int64 {
		var out []int64
		for _, p := range pkts {
			out = append(out, (p.Timestamp-t0.UnixNano())/1000)
		}
		return out
	}
	for _, c := range []struct {
		name   string
		w      Window
		want   []int64
		outA   int64 // out-of-window in file a
		lo, hi int64 // us after t0
	}{
		{"relative start", Window{Start: 15_000}, []int64{15, 20, 25, 30, 35, 40, 45}, 2, 15, -1},
		{"relative start and duration", Window{Start: 10_000, Duration: 20_000}, []int64{10, 15, 20, 25}, 3, 10, 30},
		{"absolute start", Window{Start: at(33).UnixNano(), Absolute: true, Duration: 10_000}, []int64{35, 40}, 4, 33, 43},
		{"past the end", Window{Start: 1_000_000}, nil, 5, 1000, -1},
		{"zero start with a duration", Window{Duration: 1}, []int64{0}, 4, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			pkts, r, _, err := readAll(t, Options{Window: c.w}, a, b)
			if err != nil {
				t.Fatal(err)
			}
			if got := us(pkts); !slices.Equal(got, c.want) {
				t.Errorf("packets at %v us, want %v", got, c.want)
			}
			fs := r.Files()
			if fs[0].Skipped[SkipOutOfWindow] != c.outA || fs[0].IPv4+fs[0].Skipped[SkipOutOfWindow] != 5 || fs[0].IPv6 != 0 {
				t.Errorf("file a: out-of-window %d, ipv4 %d; want %d and 5 in all", fs[0].Skipped[SkipOutOfWindow], fs[0].IPv4, c.outA)
			}
			tot := r.Total()
			if tot.IPv4 != int64(len(c.want)) || tot.Skipped[SkipOutOfWindow] != 10-int64(len(c.want)) || tot.NonIP() != 0 {
				t.Errorf("total ipv4 %d, out-of-window %d", tot.IPv4, tot.Skipped[SkipOutOfWindow])
			}
			lo, hi, ok := r.WindowBounds()
			if !ok || lo != at(c.lo).UnixNano() || (c.hi >= 0 && hi != at(c.hi).UnixNano()+int64(c.w.Duration%1000)) {
				t.Errorf("bounds %d..%d (%v)", lo, hi, ok)
			}
		})
	}
	s, err := Summarize([]string{writeTemp(t, "a.pcap", a), writeTemp(t, "b.pcap", b)}, Options{Window: Window{Start: 10_000, Duration: 20_000}})
	if err != nil {
		t.Fatal(err)
	}
	if s.IPv4Packets != 4 || s.Skipped["out-of-window"] != 6 || s.Packets != 10 || s.FirstTS != FormatTime(at(10).UnixNano()) {
		t.Errorf("summary: %+v", s)
	}
}

// A span whose last packet is earlier than its first (reordering off, timestamps
// going backwards) is reported as negative, with no mean rate.
func TestNegativeDuration(t *testing.T) {
	udp := ether(t, ipSpec{proto: layers.IPProtocolUDP, sport: 1, dport: 2})
	path := writeTemp(t, "back.pcap", pcapFile(t, LinkEthernet, false, 65535,
		rec{ts: at(2_000_000), frame: udp}, rec{ts: at(0), frame: udp}))
	s, err := Summarize([]string{path}, Options{ReorderWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	s.WriteText(&b)
	if !strings.Contains(b.String(), "duration         -2 s (negative: the last packet is earlier than the first; timestamps go backwards)") ||
		!strings.Contains(b.String(), "mean rate        -\n") || s.DurationS != -2 {
		t.Errorf("%s", b.String())
	}
}
