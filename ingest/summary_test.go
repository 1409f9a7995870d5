package ingest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSummarizeTwoFiles checks the totals against hand-computed values: flows and
// endpoints are unions over the files, histograms and bytes are sums.
func TestSummarizeTwoFiles(t *testing.T) {
	u := func(src, dst string, dport uint16, tos uint8, payload int) []byte {
		return ether(t, ipSpec{src: src, dst: dst, proto: layers.IPProtocolUDP, sport: 1000, dport: dport, tos: tos, payload: payload})
	}
	// File a: flows A (x2) and B; file b: flow A again, flow C, an ARP.
	a := writeTemp(t, "a.pcap", pcapFile(t, LinkEthernet, false, 65535,
		rec{ts: at(0), frame: u("10.0.0.1", "10.0.0.2", 4791, 26<<2|2, 72)},  // total 100
		rec{ts: at(10), frame: u("10.0.0.1", "10.0.0.2", 4791, 26<<2|3, 72)}, // 100, CE
		rec{ts: at(20), frame: u("10.0.0.2", "10.0.0.1", 4791, 0, 172)}))     // 200
	b := writeTemp(t, "b.pcapng", gz(t, ngFile(t, []ngIfaceSpec{{link: layers.LinkTypeEthernet}},
		rec{ts: at(5), frame: u("10.0.0.1", "10.0.0.2", 4791, 26<<2|2, 72)}, // 100
		rec{ts: at(15), frame: u("10.0.0.3", "10.0.0.2", 80, 46<<2, 372)},   // 400
		rec{ts: at(16), frame: etherFrame(t, nil, layers.EthernetTypeARP, make([]byte, 28))})))
	s, err := Summarize([]string{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("packets", s.Packets, int64(6))
	check("ipv4", s.IPv4Packets, int64(5))
	check("ipv6", s.IPv6Packets, int64(0))
	check("non-ip", s.NonIPPackets, int64(1))
	check("flows", s.Flows, int64(3))
	check("endpoints", s.Endpoints, int64(3))
	check("dscp", s.DSCP, map[string]int64{"0": 1, "26": 3, "46": 1})
	check("ecn", s.ECN, map[string]int64{"0": 2, "1": 0, "2": 2, "3": 1})
	check("bytes", s.Bytes, int64(900))
	check("first", s.FirstTS, "2024-05-01T12:00:00.000000000Z")
	check("last", s.LastTS, "2024-05-01T12:00:00.000020000Z")
	check("duration", s.DurationS, 20e-6)
	check("rate", s.MeanRateBps, 900*8/20e-6)
	check("skipped arp", s.Skipped["arp"], int64(1))
	check("files", len(s.Files), 2)
	fa, fb := s.Files[0], s.Files[1]
	check("a flows", fa.Flows, int64(2))
	check("a endpoints", fa.Endpoints, int64(2))
	check("a format", fa.Format, "pcap")
	check("b flows", fb.Flows, int64(2))
	check("b endpoints", fb.Endpoints, int64(3))
	check("b format", fb.Format, "pcapng+gzip")
	check("b resolution", fb.TSResolution, "ns")
	check("b linktypes", fb.LinkTypes, []string{"ETHERNET(1)"})
	check("b first", fb.FirstTS, "2024-05-01T12:00:00.000005000Z")
	check("b bytes", fb.Bytes, int64(500))
}

// TestSummaryJSONKeys pins the JSON keys of `replay inspect --json` (issue 2).
func TestSummaryJSONKeys(t *testing.T) {
	p := writeTemp(t, "x.pcap", exampleTrace(t))
	s, err := Summarize([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]json.RawMessage) string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		sort.Strings(k)
		return strings.Join(k, " ")
	}
	top := "by_family bytes dscp duration_s ecn endpoints files first_ts flows ipv4_packets ipv6_packets last_ts mean_rate_bps non_ip_packets packets skipped"
	if got := keys(m); got != top {
		t.Errorf("keys %q, want %q", got, top)
	}
	var files []map[string]json.RawMessage
	if err := json.Unmarshal(m["files"], &files); err != nil || len(files) != 1 {
		t.Fatal(err, files)
	}
	perFile := "by_family bytes dscp duration_s ecn endpoints first_ts flows format in_order ipv4_packets ipv6_packets last_ts linktypes mean_rate_bps non_ip_packets packets path skipped ts_resolution"
	if got := keys(files[0]); got != perFile {
		t.Errorf("per-file keys %q, want %q", got, perFile)
	}
	var skipped map[string]int64
	json.Unmarshal(m["skipped"], &skipped)
	if len(skipped) != len(SkipReasons()) || skipped["arp"] != 1 || skipped["family-filtered"] != 0 {
		t.Errorf("skipped %v", skipped)
	}
	if _, ok := skipped["ipv6"]; ok {
		t.Errorf("skipped has the reason ipv6, which IPv6 support removed: %v", skipped)
	}
	var byFamily map[string]map[string]json.RawMessage
	if err := json.Unmarshal(m["by_family"], &byFamily); err != nil {
		t.Fatal(err)
	}
	for _, fam := range []string{"ipv4", "ipv6"} {
		if got := keys(byFamily[fam]); got != "dscp ecn flows packets" {
			t.Errorf("by_family.%s keys %q, want %q", fam, got, "dscp ecn flows packets")
		}
	}
	if len(byFamily) != 2 || string(byFamily["ipv6"]["packets"]) != "1" || string(byFamily["ipv4"]["packets"]) != "5" {
		t.Errorf("by_family %s", m["by_family"])
	}
}

func TestSummarizeEmpty(t *testing.T) {
	p := writeTemp(t, "empty.pcap", pcapFile(t, LinkEthernet, false, 65535))
	s, err := Summarize([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Packets != 0 || s.FirstTS != "" || s.DurationS != 0 || s.MeanRateBps != 0 || len(s.DSCP) != 0 {
		t.Errorf("%+v", s)
	}
	var b strings.Builder
	if err := s.WriteText(&b); err != nil || !strings.Contains(b.String(), "first            -") {
		t.Errorf("text %q %v", b.String(), err)
	}
}

// TestFlowSet checks the flow set against a Go map on random keys (zero key and
// colliding low bits included).
func TestFlowSet(t *testing.T) {
	var s flowSet
	m := map[flowKey]bool{}
	r := uint64(1)
	for i := 0; i < 50000; i++ {
		r = r*6364136223846793005 + 1442695040888963407
		k := flowKey{a: r >> 50 << 32, b: r & 7}
		if i%1000 == 0 {
			k = flowKey{}
		}
		if got, want := s.insert(k), !m[k]; got != want {
			t.Fatalf("insert %v = %v, want %v", k, got, want)
		}
		m[k] = true
	}
	if s.len() != len(m) {
		t.Fatalf("len %d, want %d", s.len(), len(m))
	}
}

// Summarize reads in-order files once, without the reorder buffer, and other ones
// again with it; either way its summary is the windowed pass's, warnings included,
// and a Visitor sees the windowed Reader's packets in its order, restarted once when
// a file is out of order (after the packets before the first late one).
func TestSummarizeSkipsTheReorderBufferOnlyWhenItMay(t *testing.T) {
	u := func(sport uint16) []byte {
		return ether(t, ipSpec{src: "10.0.0.1", dst: "10.0.0.2", proto: layers.IPProtocolUDP, sport: sport, dport: 9, payload: 100})
	}
	mk := func(name string, truncate bool, us ...int64) string {
		var rs []rec
		for i, x := range us {
			rs = append(rs, rec{ts: at(x), frame: u(uint16(i))})
		}
		data := pcapFile(t, LinkEthernet, false, 65535, rs...)
		if truncate {
			data = data[:len(data)-10]
		}
		return writeTemp(t, name, data)
	}
	sorted := mk("sorted.pcap", false, 0, 1, 1, 7, 9)
	jitter := mk("jitter.pcap", false, 0, 5, 3, 9, 40000, 2)
	truncSorted := mk("trunc-sorted.pcap", true, 0, 1, 2, 3)
	truncJitter := mk("trunc-jitter.pcap", true, 0, 2, 1, 3)
	cases := []struct {
		name     string
		paths    []string
		inOrder  []bool
		warnings int
		restarts int
		before   int // packets visited before the restart: those before the first late one
	}{
		{"sorted", []string{sorted}, []bool{true}, 0, 0, 0},
		{"jitter", []string{jitter}, []bool{false}, 1, 1, 2}, // the packet 40 ms late
		// merged 0 0 1 1 5, then jitter's 3, late
		{"both", []string{sorted, jitter}, []bool{true, false}, 1, 1, 5},
		{"truncated sorted", []string{truncSorted}, []bool{true}, 1, 0, 0},
		// merged 0 0 1 1 2, then the truncated file's 1, late
		{"truncated jitter", []string{truncJitter, sorted}, []bool{false, true}, 1, 1, 5},
	}
	norm := func(s *Summary) {
		slices.SortFunc(s.EndpointAddrs, ipaddr.Addr.Compare)
		for i := range s.Files {
			slices.SortFunc(s.Files[i].EndpointAddrs, ipaddr.Addr.Compare)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var warns, want []string
			v := &recorder{}
			got, err := SummarizeVisit(c.paths, Options{Warn: func(m string) { warns = append(warns, m) }}, v)
			if err != nil {
				t.Fatal(err)
			}
			if v.restarts != c.restarts || v.before != c.before {
				t.Errorf("%d restarts after %d packets, want %d after %d", v.restarts, v.before, c.restarts, c.before)
			}
			r, err := Open(c.paths, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var all []Packet
			for {
				var p Packet
				ok, err := r.Next(&p)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				all = append(all, p)
			}
			r.Close()
			if !reflect.DeepEqual(v.pkts, all) {
				t.Errorf("visited %d packets, not the %d the windowed Reader delivers", len(v.pkts), len(all))
			}
			ref, _, err := summarize(c.paths, Options{ReorderWindow: DefaultReorderWindow, Warn: func(m string) { want = append(want, m) }}, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			norm(got)
			norm(ref)
			if !reflect.DeepEqual(got, ref) {
				t.Errorf("summary\n%+v\nwant the windowed pass's\n%+v", got, ref)
			}
			if !reflect.DeepEqual(got.InOrderFiles(), c.inOrder) {
				t.Errorf("InOrderFiles = %v, want %v", got.InOrderFiles(), c.inOrder)
			}
			if !reflect.DeepEqual(warns, want) || len(warns) != c.warnings {
				t.Errorf("warnings %q, want %q", warns, want)
			}
		})
	}
}

// recorder is a Visitor that keeps the packets it sees.
type recorder struct {
	pkts     []Packet
	restarts int
	before   int
}

func (r *recorder) Visit(p *Packet) error { r.pkts = append(r.pkts, *p); return nil }

func (r *recorder) Restart() { r.restarts++; r.before = len(r.pkts); r.pkts = nil }
