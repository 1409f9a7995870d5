package ingest

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
)

func udpTo(t testing.TB, dst string, dport uint16, tos uint8) []byte {
	return ether(t, ipSpec{src: "10.0.0.1", dst: dst, proto: layers.IPProtocolUDP, sport: 1000, dport: dport, tos: tos, payload: 10})
}

// TestFormats reads the same three packets from every container variant.
func TestFormats(t *testing.T) {
	ts := []time.Time{at(0).Add(123), at(5), at(9)} // the first has nanoseconds
	arp := etherFrame(t, nil, layers.EthernetTypeARP, make([]byte, 28))
	recs := []rec{{ts: ts[0], frame: udpTo(t, "10.0.0.2", 1, 0)}, {ts: ts[1], frame: arp}, {ts: ts[2], frame: udpTo(t, "10.0.0.3", 2, 4)}}
	usRecs := append([]rec(nil), recs...)
	usRecs[0].ts = ts[0].Truncate(time.Microsecond)
	pcapUS := pcapFile(t, LinkEthernet, false, 65535, recs...)
	pcapNS := pcapFile(t, LinkEthernet, true, 65535, recs...)
	ng := ngFile(t, []ngIfaceSpec{{link: layers.LinkTypeEthernet, tsresol: 9}}, recs...)
	// pcapgo's NgWriter always writes nanoseconds: build the microsecond one by hand.
	b := &ngb{}
	b.shb().idb(LinkEthernet, 0, -1)
	for _, r := range usRecs {
		b.epb(0, uint64(r.ts.UnixMicro()), r.frame, 0)
	}
	ngUS := b.out
	bb := &ngb{be: true}
	bb.shb().idb(LinkEthernet, 0, 9)
	for _, r := range recs {
		bb.epb(0, uint64(r.ts.UnixNano()), r.frame, 0)
	}
	ngBE := bb.out

	cases := []struct {
		name   string
		data   []byte
		format string
		gzip   bool
		res    string
		nanos  bool
	}{
		{"pcap us little-endian", pcapUS, "pcap", false, "us", false},
		{"pcap ns little-endian", pcapNS, "pcap", false, "ns", true},
		{"pcap us big-endian", swapPcap(t, pcapUS), "pcap", false, "us", false},
		{"pcap ns big-endian", swapPcap(t, pcapNS), "pcap", false, "ns", true},
		{"pcap gzip", gz(t, pcapNS), "pcap", true, "ns", true},
		{"pcapng ns", ng, "pcapng", false, "ns", true},
		{"pcapng us (default tsresol)", ngUS, "pcapng", false, "us", false},
		{"pcapng gzip", gz(t, ng), "pcapng", true, "ns", true},
		{"pcapng big-endian", ngBE, "pcapng", false, "ns", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pkts, r, warns, err := readAll(t, Options{}, c.data)
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) != 0 {
				t.Errorf("warnings: %q", warns)
			}
			want0 := ts[0]
			if !c.nanos {
				want0 = ts[0].Truncate(time.Microsecond)
			}
			if len(pkts) != 2 {
				t.Fatalf("%d packets, want 2", len(pkts))
			}
			if pkts[0].Timestamp != want0.UnixNano() || pkts[1].Timestamp != ts[2].UnixNano() {
				t.Errorf("timestamps %d %d, want %d %d", pkts[0].Timestamp, pkts[1].Timestamp, want0.UnixNano(), ts[2].UnixNano())
			}
			if pkts[0].Index != 0 || pkts[1].Index != 2 {
				t.Errorf("indexes %d %d, want 0 2 (the ARP record counts)", pkts[0].Index, pkts[1].Index)
			}
			if pkts[1].Dst != ipaddr.MustParse("10.0.0.3") || pkts[1].DstPort != 2 || pkts[1].DSCP != 1 {
				t.Errorf("second packet %+v", pkts[1])
			}
			fs := r.Files()[0]
			if fs.Format != c.format || (fs.Compression == "gzip") != c.gzip || !reflect.DeepEqual(fs.Resolutions, []string{c.res}) ||
				!reflect.DeepEqual(fs.LinkTypes, []LinkType{LinkEthernet}) {
				t.Errorf("stats %+v", fs)
			}
			if fs.Records != 3 || fs.IPv4 != 2 || fs.Skipped[SkipARP] != 1 {
				t.Errorf("counts %+v", fs.Counts)
			}
		})
	}
}

// TestLinkTypesInFiles writes one file per link type (SLL2's 276 included).
func TestLinkTypesInFiles(t *testing.T) {
	ip := ipv4Bytes(t, ipSpec{src: "1.2.3.4", dst: "5.6.7.8", proto: layers.IPProtocolUDP, sport: 7, dport: 4791, tos: 26<<2 | 2})
	for _, c := range []struct {
		link  LinkType
		frame []byte
	}{
		{LinkEthernet, etherFrame(t, []layers.EthernetType{layers.EthernetTypeQinQ, layers.EthernetTypeDot1Q}, layers.EthernetTypeIPv4, ip)},
		{LinkRaw, ip},
		{LinkIPv4, ip},
		{LinkLinuxSLL, sll(0x0800, ip)},
		{LinkLinuxSLL2, sll2(0x0800, ip)},
		{LinkNull, loopback(binary.LittleEndian, 2, ip)},
		{LinkLoop, loopback(binary.BigEndian, 2, ip)},
	} {
		t.Run(c.link.String(), func(t *testing.T) {
			pkts, r, _, err := readAll(t, Options{}, pcapFile(t, c.link, false, 65535, rec{ts: at(1), frame: c.frame}))
			if err != nil {
				t.Fatal(err)
			}
			if len(pkts) != 1 || pkts[0].Tuple() != (FiveTuple{ipaddr.MustParse("1.2.3.4"), ipaddr.MustParse("5.6.7.8"), 7, 4791, 17}) || pkts[0].DSCP != 26 || pkts[0].ECN != 2 {
				t.Fatalf("packets %+v", pkts)
			}
			if lt := r.Files()[0].LinkTypes; !reflect.DeepEqual(lt, []LinkType{c.link}) {
				t.Errorf("link types %v", lt)
			}
		})
	}
}

// TestPcapngMixedInterfaces: two interfaces with different link types and
// resolutions in one pcapng.
func TestPcapngMixedInterfaces(t *testing.T) {
	ip := ipv4Bytes(t, ipSpec{src: "1.2.3.4", dst: "5.6.7.8", proto: layers.IPProtocolUDP, sport: 7, dport: 9})
	b := &ngb{}
	b.shb().idb(LinkEthernet, 65535, 9).idb(LinkLinuxSLL2, 128, 6)
	b.epb(0, uint64(at(0).Add(7).UnixNano()), etherFrame(t, nil, layers.EthernetTypeIPv4, ip), 0)
	b.epb(1, uint64(at(3).UnixMicro()), sll2(0x0800, ip), 0)
	b.epb(0, uint64(at(4).Add(9).UnixNano()), etherFrame(t, nil, layers.EthernetTypeIPv6, make([]byte, 40)), 0) // version 0: bad-ipv6-header
	b.block(5, make([]byte, 20))                                                                                // interface statistics: skipped
	b.epb(1, uint64(at(5).UnixMicro()), sll2(0x0806, make([]byte, 28)), 0)
	b.block(0x00000BAD, make([]byte, 9))                      // custom block: skipped
	b.spb(etherFrame(t, nil, layers.EthernetTypeIPv4, ip), 0) // simple packet: interface 0, previous timestamp
	pkts, r, warns, err := readAll(t, Options{}, b.out)
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	if len(pkts) != 3 || pkts[0].Timestamp != at(0).Add(7).UnixNano() || pkts[1].Timestamp != at(3).UnixNano() || pkts[1].Index != 1 ||
		pkts[2].Index != 4 || pkts[2].Timestamp != at(5).UnixNano() {
		t.Fatalf("packets %+v", pkts)
	}
	fs := r.Files()[0]
	if !reflect.DeepEqual(fs.LinkTypes, []LinkType{LinkEthernet, LinkLinuxSLL2}) || !reflect.DeepEqual(fs.Resolutions, []string{"ns", "us"}) {
		t.Errorf("link types %v, resolutions %v", fs.LinkTypes, fs.Resolutions)
	}
	if fs.Skipped[SkipBadIPv6] != 1 || fs.Skipped[SkipARP] != 1 {
		t.Errorf("counts %+v", fs.Counts)
	}
}

// TestSnaplenSmallerThanRecords: records longer than the header's snaplen are read
// (as tshark does), and a short snaplen keeps the real IPv4 total length.
func TestSnaplenSmallerThanRecords(t *testing.T) {
	f := ether(t, ipSpec{src: "1.1.1.1", dst: "2.2.2.2", sport: 1, dport: 2, payload: 1400})
	pkts, _, _, err := readAll(t, Options{}, pcapFile(t, LinkEthernet, false, 68,
		rec{ts: at(0), frame: f, caplen: 68}, rec{ts: at(1), frame: f}))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkts) != 2 || pkts[0].CapLen != 68 || pkts[0].TotalLen != 1440 || pkts[1].CapLen != uint32(len(f)) || pkts[0].SrcPort != 1 {
		t.Fatalf("packets %+v", pkts)
	}
}

func TestMerge(t *testing.T) {
	a := pcapFile(t, LinkEthernet, false, 65535,
		rec{ts: at(1), frame: udpTo(t, "10.0.0.2", 1, 0)},
		rec{ts: at(4), frame: udpTo(t, "10.0.0.2", 2, 0)},
		rec{ts: at(6), frame: udpTo(t, "10.0.0.2", 3, 0)})
	b := pcapFile(t, LinkEthernet, true, 65535,
		rec{ts: at(2), frame: udpTo(t, "10.0.0.3", 1, 0)},
		rec{ts: at(4), frame: udpTo(t, "10.0.0.3", 2, 0)},
		rec{ts: at(9), frame: udpTo(t, "10.0.0.3", 3, 0)})
	pkts, r, _, err := readAll(t, Options{}, a, b)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pkts {
		got = append(got, string(rune('a'+p.FileIndex))+string(rune('0'+p.Index)))
	}
	// Ties go to the file listed first.
	if want := "a0 b0 a1 b1 a2 b2"; strings.Join(got, " ") != want {
		t.Errorf("order %q, want %q", strings.Join(got, " "), want)
	}
	if tot := r.Total(); tot.Records != 6 || tot.IPv4 != 6 {
		t.Errorf("total %+v", tot)
	}
}

func TestReorder(t *testing.T) {
	mk := func(us ...int64) []byte {
		var rs []rec
		for i, u := range us {
			rs = append(rs, rec{ts: at(u), frame: udpTo(t, "10.0.0.2", uint16(i), 0)})
		}
		return pcapFile(t, LinkEthernet, false, 65535, rs...)
	}
	order := func(pkts []Packet) []int64 {
		var o []int64
		for _, p := range pkts {
			o = append(o, p.Index)
		}
		return o
	}
	cases := []struct {
		name   string
		window time.Duration
		us     []int64
		want   []int64 // record indexes delivered, in order
		late   int64
	}{
		{"in order", 0, []int64{0, 1, 2, 3}, []int64{0, 1, 2, 3}, 0},
		{"jitter within 10ms", 0, []int64{0, 5, 3, 4, 20, 19}, []int64{0, 2, 3, 1, 5, 4}, 0},
		{"equal timestamps keep file order", 0, []int64{5, 5, 1, 5}, []int64{2, 0, 1, 3}, 0},
		{"later than window is out-of-order", 0, []int64{0, 20000, 30000, 5000, 30001}, []int64{0, 1, 2, 4}, 1},
		{"window equal to the lag reorders", time.Microsecond, []int64{0, 3, 2, 10, 9}, []int64{0, 2, 1, 4, 3}, 0},
		{"window 1us", time.Microsecond, []int64{0, 5, 10, 2, 11, 7}, []int64{0, 1, 2, 4}, 2},
		{"reordering off keeps file order", -1, []int64{0, 20000, 5000, 1}, []int64{0, 1, 2, 3}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pkts, r, warns, err := readAll(t, Options{ReorderWindow: c.window}, mk(c.us...))
			if err != nil {
				t.Fatal(err)
			}
			if got := order(pkts); !reflect.DeepEqual(got, c.want) {
				t.Errorf("order %v, want %v", got, c.want)
			}
			fs := r.Files()[0]
			if fs.Skipped[SkipOutOfOrder] != c.late || fs.IPv4+c.late != int64(len(c.us)) {
				t.Errorf("out-of-order %d ipv4 %d, want %d", fs.Skipped[SkipOutOfOrder], fs.IPv4, c.late)
			}
			if (c.late > 0) != (len(warns) > 0) {
				t.Errorf("warnings %q", warns)
			}
			if c.window >= 0 {
				for i := 1; i < len(pkts); i++ {
					if pkts[i].Timestamp < pkts[i-1].Timestamp {
						t.Errorf("time goes back at %d", i)
					}
				}
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "notes.pcap")
	os.WriteFile(bad, []byte("hello, this is not a capture file at all"), 0o644)
	_, err := Open([]string{bad}, Options{})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "not a pcap or pcapng file") {
		t.Errorf("bad magic: %v", err)
	}
	_, err = Open([]string{filepath.Join(dir, "missing.pcap")}, Options{})
	if err == nil || !strings.Contains(err.Error(), "missing.pcap") {
		t.Errorf("missing file: %v", err)
	}
	if _, err = Open(nil, Options{}); err == nil {
		t.Error("no files: no error")
	}
	// Gzip is recognised by content, whatever the name.
	g := filepath.Join(dir, "trace.bin")
	os.WriteFile(g, gz(t, pcapFile(t, LinkEthernet, false, 65535, rec{ts: at(1), frame: udpTo(t, "10.0.0.2", 1, 0)})), 0o644)
	s, err := Summarize([]string{g}, Options{})
	if err != nil || s.IPv4Packets != 1 || s.Files[0].Format != "pcap+gzip" {
		t.Errorf("gzip by content: %v %+v", err, s)
	}
}

// TestPcapngSections: a second section (big-endian, its own interfaces) restarts
// the interface numbering.
func TestPcapngSections(t *testing.T) {
	ip := ipv4Bytes(t, ipSpec{src: "1.2.3.4", dst: "5.6.7.8", proto: layers.IPProtocolUDP, sport: 7, dport: 9})
	a := &ngb{}
	a.shb().idb(LinkEthernet, 0, 6).epb(0, uint64(at(1).UnixMicro()), etherFrame(t, nil, layers.EthernetTypeIPv4, ip), 0)
	b := &ngb{be: true}
	b.shb().idb(LinkLinuxSLL2, 0, 9).epb(0, uint64(at(2).UnixNano()), sll2(0x0800, ip), 0)
	pkts, r, warns, err := readAll(t, Options{}, append(a.out, b.out...))
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	if len(pkts) != 2 || pkts[1].Timestamp != at(2).UnixNano() || pkts[1].Src != ipaddr.MustParse("1.2.3.4") {
		t.Fatalf("packets %+v", pkts)
	}
	if lt := r.Files()[0].LinkTypes; !reflect.DeepEqual(lt, []LinkType{LinkEthernet, LinkLinuxSLL2}) {
		t.Errorf("link types %v", lt)
	}
}

// TestPcapLinkTypeFCSBits: the upper bits of the pcap link-type field (FCS length)
// do not change the link type.
func TestPcapLinkTypeFCSBits(t *testing.T) {
	data := pcapFile(t, LinkEthernet, false, 65535, rec{ts: at(1), frame: udpTo(t, "10.0.0.2", 1, 0)})
	binary.LittleEndian.PutUint32(data[20:24], 0x14000000|uint32(LinkEthernet))
	pkts, r, _, err := readAll(t, Options{}, data)
	if err != nil || len(pkts) != 1 || r.Files()[0].LinkTypes[0] != LinkEthernet {
		t.Fatalf("%v %+v", err, pkts)
	}
}

// FileStats.InOrder records whether the reorder window had anything to do; a file
// known to be in order (Options.InOrder) is read without the reorder buffer, with the
// same packets in the same order, and if it is not in order after all (it changed
// since the pass that said so) the read fails rather than delivering another trace.
func TestInOrderFiles(t *testing.T) {
	mk := func(us ...int64) []byte {
		var rs []rec
		for i, u := range us {
			rs = append(rs, rec{ts: at(u), frame: udpTo(t, "10.0.0.2", uint16(i), 0)})
		}
		// An ARP record (not IPv4) earlier than everything does not count.
		rs = append(rs, rec{ts: at(0), frame: etherFrame(t, nil, layers.EthernetTypeARP, make([]byte, 28))})
		return pcapFile(t, LinkEthernet, false, 65535, rs...)
	}
	cases := []struct {
		name    string
		us      []int64
		inOrder bool
	}{
		{"in order", []int64{1, 2, 2, 3, 50000}, true},
		{"one step back", []int64{1, 3, 2, 4}, false},
		{"late beyond the window", []int64{1, 30000, 2}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := mk(c.us...)
			want, r, _, err := readAll(t, Options{}, data)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Files()[0].InOrder; got != c.inOrder {
				t.Fatalf("InOrder = %v, want %v", got, c.inOrder)
			}
			got, r2, _, err := readAll(t, Options{InOrder: []bool{true}}, data)
			if !c.inOrder {
				if err == nil || !strings.Contains(err.Error(), "mem0.pcap: packet 2 is earlier than the packet before it") ||
					!strings.Contains(err.Error(), "the file changed") {
					t.Fatalf("err = %v, want the file-changed error for packet 2", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("packets without the buffer %v, with it %v", got, want)
			}
			if a, b := r2.Files()[0].Counts, r.Files()[0].Counts; a != b {
				t.Errorf("counts %+v, want %+v", a, b)
			}
			// InOrder for other files than this one changes nothing here.
			if _, _, _, err := readAll(t, Options{InOrder: []bool{false, true}}, data); err != nil {
				t.Fatal(err)
			}
		})
	}
}
