package tracegen

import (
	"bytes"
	"cmp"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/units"
)

var (
	genOnce  sync.Once
	genBytes map[string][]byte
	genStats map[string]Stats
)

// generated writes every committed scenario once per test binary.
func generated(t *testing.T) (map[string][]byte, map[string]Stats) {
	t.Helper()
	genOnce.Do(func() {
		genBytes, genStats = map[string][]byte{}, map[string]Stats{}
		for _, s := range Committed() {
			var buf bytes.Buffer
			st, err := s.WritePcap(&buf)
			if err != nil {
				panic(err)
			}
			genBytes[s.Name], genStats[s.Name] = buf.Bytes(), st
		}
	})
	return genBytes, genStats
}

// TestCommittedTracesUpToDate regenerates each committed trace in memory and
// compares it byte for byte with testdata/pcaps (go test skips testdata
// directories, so this is what catches drift between generator and files).
func TestCommittedTracesUpToDate(t *testing.T) {
	gen, _ := generated(t)
	for _, s := range Committed() {
		path := filepath.Join("..", "..", "testdata", "pcaps", s.Name)
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (regenerate with: go run ./testdata/pcaps/generate)", err)
		}
		if !bytes.Equal(gen[s.Name], want) {
			t.Errorf("%s differs from its scenario (%d bytes generated, %d committed): "+
				"run go run ./testdata/pcaps/generate and commit the result", path, len(gen[s.Name]), len(want))
		}
	}
}

func TestDeterministic(t *testing.T) {
	gen, _ := generated(t)
	s := Demo()
	var again bytes.Buffer
	if _, err := s.WritePcap(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), gen[s.Name]) {
		t.Fatal("two writes of the demo scenario differ")
	}
	s.Seed++
	var other bytes.Buffer
	if _, err := s.WritePcap(&other); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(other.Bytes(), gen[s.Name]) {
		t.Fatal("a different seed gave the same trace")
	}
}

// TestTraceProperties decodes every committed trace with gopacket and checks what
// the package promises: headers only, real total lengths, valid checksums, strictly
// increasing timestamps, and each class's DSCP/ECN/ports.
func TestTraceProperties(t *testing.T) {
	gen, stats := generated(t)
	for _, s := range Committed() {
		t.Run(s.Name, func(t *testing.T) {
			snaplen := cmp.Or(s.Snaplen, DefaultSnaplen)
			recs := readTrace(t, gen[s.Name], snaplen)
			st := stats[s.Name]
			var v6 int64
			if int64(len(recs)) != st.Packets || len(recs) == 0 {
				t.Fatalf("read %d packets, stats say %d", len(recs), st.Packets)
			}
			var bytesSum int64
			var prev time.Time
			for i := range recs {
				r := &recs[i]
				bytesSum += int64(r.totalLen)
				if i > 0 && !r.at.After(prev) {
					t.Fatalf("packet %d: timestamp %v not after %v", i, r.at, prev)
				}
				prev = r.at
				if r.totalLen > MaxLength || r.origLen != max(60, r.totalLen+14) || r.capLen != min(snaplen, r.origLen) {
					t.Fatalf("packet %d: total length %d, frame %d, captured %d", i, r.totalLen, r.origLen, r.capLen)
				}
				if r.v6 {
					v6++
					if r.src.Is4() || r.dst.Is4() || r.ipHeader[0] != 0x60|r.dscp>>2 || r.ipHeader[7] != 64 {
						t.Fatalf("packet %d: IPv6 header % x", i, r.ipHeader[:8])
					}
				} else if onesSum(0, r.ipHeader) != 0xffff {
					t.Fatalf("packet %d: bad IPv4 header checksum", i)
				}
				if !l4ChecksumOK(r) {
					t.Fatalf("packet %d: bad %v checksum for a zero payload of the real length", i, r.proto)
				}
				pl := r.payload()
				if r.proto == layers.IPProtocolUDP && r.dport == RoCEPort && len(pl) > 0 {
					pl = pl[1:] // the BTH opcode
				}
				if !bytes.Equal(pl, make([]byte, len(pl))) {
					t.Fatalf("packet %d: payload bytes are not zero", i)
				}
				checkClass(t, i, r)
			}
			if bytesSum != st.Bytes || v6 != st.IPv6 || !recs[0].at.Equal(st.First) || !prev.Equal(st.Last) {
				t.Fatalf("stats %+v disagree with the file (bytes %d, first %v, last %v)", st, bytesSum, recs[0].at, prev)
			}
		})
	}
}

// checkClass checks that a packet is one of the package's classes.
func checkClass(t *testing.T, i int, r *record) {
	t.Helper()
	var c Class
	switch {
	case r.proto == layers.IPProtocolUDP && r.dport == RoCEPort:
		c = RoCEv2
		if r.sport < 49152 {
			t.Fatalf("packet %d: RoCEv2 source port %d outside 49152..65535", i, r.sport)
		}
		switch pl := r.payload(); {
		case len(pl) == 0:
		case pl[0] == OpcodeAcknowledge: // midconn.pcap: a receiver's ACK, in the data's class
			c.ECN = NotECT
		case pl[0] == OpcodeCNP: // midconn.pcap: a CNP, DSCP 48
			c.DSCP, c.ECN = 48, NotECT
		}
	case r.proto == layers.IPProtocolTCP:
		c = TCPData
	case r.proto == layers.IPProtocolUDP && r.dscp == 46:
		c = Expedited
	default:
		c = UDPData
	}
	if r.proto == layers.IPProtocolTCP && r.ecn == NotECT {
		c.ECN = NotECT // tcp-incast.pcap: Not-ECT senders and pure ACKs
	}
	if r.dscp != c.DSCP || r.ecn != c.ECN {
		t.Fatalf("packet %d (%s): DSCP %d ECN %d, want %d %d", i, c.Name, r.dscp, r.ecn, c.DSCP, c.ECN)
	}
}

// TestSubnetPlacement checks the traces against the default subnet host mapping
// (docs/model.md#host-mapping): all eight /24s (and /64s) present, at most 16
// endpoints a rack, 10.P.R.(h+1) mapped to host-pP-rR-hh, fd00:0:P:R::(h+1) to
// host-pP-rR-hh in ipv6.pcap and to host-pP-rR-h(8+h) in mixed.pcap (after the rack's
// 8 IPv4 endpoints), and every scenario role where the scenario's doc says it is.
func TestSubnetPlacement(t *testing.T) {
	gen, _ := generated(t)
	for _, s := range Committed() {
		t.Run(s.Name, func(t *testing.T) {
			recs := readTrace(t, gen[s.Name], cmp.Or(s.Snaplen, DefaultSnaplen))
			eps := map[netip.Addr]bool{}
			fams := map[bool]bool{}
			for _, r := range recs {
				eps[r.src], eps[r.dst] = true, true
				fams[r.v6] = true
			}
			m, groups := subnetMap(t, eps)
			// reqresp.pcap has 18 endpoints in six /24s: the client's (10.0.0), the
			// server's (10.1.0) and the 16 incast senders' (10.0.1, 10.0.2, 10.1.1,
			// 10.1.2). The subnet mapping gives the six groups the first six racks in
			// address order (the server's 10.1.0 lands in p0-r3), so its addresses do
			// not name their hosts; every sender is still in another rack than the
			// server, which is what the scenario needs.
			if s.Name == "reqresp.pcap" {
				if groups != 6 {
					t.Fatalf("%d subnet groups, want 6", groups)
				}
				return
			}
			if groups != len(fams)*Pods*RacksPerPod {
				t.Fatalf("%d subnet groups, want %d (one per rack and family)", groups, len(fams)*Pods*RacksPerPod)
			}
			v4PerRack := map[[2]int]int{}
			for a, p := range m {
				if a.Is4() {
					v4PerRack[[2]int{p.pod, p.rack}]++
				}
			}
			for a, p := range m {
				want := HostAddr(p.pod, p.rack, p.host)
				if a.Is6() {
					want = HostAddr6(p.pod, p.rack, p.host-v4PerRack[[2]int{p.pod, p.rack}])
				}
				if a != want {
					t.Errorf("%v maps to host-p%d-r%d-h%d, not to the host its address names", a, p.pod, p.rack, p.host)
				}
				if s.Name == "mixed.pcap" && a.Is6() && p.host < 8 {
					t.Errorf("mixed.pcap: %v maps to host-p%d-r%d-h%d, want h8-h15", a, p.pod, p.rack, p.host)
				}
			}
			if s.Name == "many-flows.pcap" {
				for i, r := range recs {
					if m[r.src].pod == m[r.dst].pod {
						t.Fatalf("packet %d: %v -> %v does not cross pods", i, r.src, r.dst)
					}
				}
			}
		})
	}
	for _, in := range []Incast{DemoLossless(), IncastLossless(), IncastLossy(), IPv6Lossless()} {
		rx := podRack(in.Receiver)
		for _, snd := range in.Senders {
			if podRack(snd) == rx {
				t.Errorf("incast to %v: sender %v is in the receiver's rack", in.Receiver, snd)
			}
		}
	}
	for _, in := range []Incast{IncastLossless(), IncastLossy()} {
		for _, snd := range in.Senders {
			if snd.As4()[1] == in.Receiver.As4()[1] {
				t.Errorf("incast.pcap: sender %v is in the receiver's pod", snd)
			}
		}
	}
}

// podRack is the pod and rack an address of HostAddr or HostAddr6 names.
func podRack(a netip.Addr) [2]byte {
	if a.Is6() {
		b := a.As16()
		return [2]byte{b[5], b[7]}
	}
	b := a.As4()
	return [2]byte{b[1], b[2]}
}

// TestIncastsAtLineRate checks in the written traces that every incast sender sends
// PacketsPerSender packets back to back at 100 Gb/s: consecutive timestamps one wire
// time apart (to within the nanosecond rounding). An incast's packets are those from
// a sender to the receiver at the incast's destination port during the incast (a
// background flow may join the same two hosts at another time or port).
func TestIncastsAtLineRate(t *testing.T) {
	gen, _ := generated(t)
	mixed4, mixed6 := MixedIncasts()
	cases := []struct {
		file    string
		in      Incast
		snaplen int
	}{
		{"demo.pcap", DemoLossless(), DefaultSnaplen}, {"demo.pcap", DemoLossy(), DefaultSnaplen},
		{"incast.pcap", IncastLossless(), DefaultSnaplen}, {"incast.pcap", IncastLossy(), DefaultSnaplen},
		{"ipv6.pcap", IPv6Lossless(), Snaplen6}, {"ipv6.pcap", IPv6Lossy(), Snaplen6},
		{"mixed.pcap", mixed4, Snaplen6}, {"mixed.pcap", mixed6, Snaplen6},
	}
	for _, c := range cases {
		recs := readTrace(t, gen[c.file], c.snaplen)
		wire := units.SerializationTime(int64(c.in.Length+WireOverhead), LineRate)
		for _, snd := range c.in.Senders {
			var times []time.Time
			dport := cmp.Or(c.in.DstPort, c.in.Class.DstPort, 5201)
			from, to := epoch.Add(time.Duration(c.in.Start/units.Nanosecond)), epoch.Add(time.Duration((c.in.Start+c.in.Duration)/units.Nanosecond)+time.Microsecond)
			for _, r := range recs {
				if r.src == snd && r.dst == c.in.Receiver && r.dport == dport && !r.at.Before(from) && r.at.Before(to) {
					if r.totalLen != c.in.Length {
						t.Fatalf("%s: %v -> %v: length %d, want %d", c.file, snd, c.in.Receiver, r.totalLen, c.in.Length)
					}
					times = append(times, r.at)
				}
			}
			if len(times) != c.in.PacketsPerSender() {
				t.Fatalf("%s: %v -> %v: %d packets, want %d", c.file, snd, c.in.Receiver, len(times), c.in.PacketsPerSender())
			}
			span := units.Time(times[len(times)-1].Sub(times[0])) * units.Nanosecond
			want := wire * units.Time(len(times)-1)
			if d := span - want; d < -units.Nanosecond || d > units.Nanosecond {
				t.Fatalf("%s: %v: %d packets span %v, want %v at line rate", c.file, snd, len(times), span, want)
			}
			if got := units.Time(len(times)) * wire; got > c.in.Duration || got+wire <= c.in.Duration {
				t.Fatalf("%s: %v: %d packets take %v, want the largest count within %v", c.file, snd, len(times), got, c.in.Duration)
			}
		}
	}
}

// Default switch of docs/model.md#shared-buffer, docs/model.md#headroom-sizing, docs/model.md#clos-builder, for the sizing check below.
const (
	bufferSize    = 32 << 20
	headroomPort  = 208_384 // docs/model.md#headroom-sizing worked example
	rackPorts     = HostsPerRack + 4
	losslessShare = 0.40
	lossyShare    = 0.60
	xoffAlpha     = 1.0 / 8
	egressAlpha   = 8.0
	rackUplinks   = 4
)

// TestIncastSizing is a fluid estimate, with the default switch (docs/model.md#configuration-rules), that each
// incast queues at the receiver's rack switch at least twice what it takes to pause
// (lossless: every active ingress port above its dynamic Xoff) or to drop
// (lossy: one egress queue above its dynamic limit), assuming ECMP
// spreads other racks' senders over the rack's 4 fabric uplinks. The simulator, not
// this test, is the judge; this keeps the scenarios from being weakened by accident.
func TestIncastSizing(t *testing.T) {
	pools := float64(bufferSize - rackPorts*headroomPort)
	cases := []struct {
		name     string
		in       Incast
		lossless bool
		margin   float64
	}{
		{"demo lossless", DemoLossless(), true, 2},
		{"demo lossy", DemoLossy(), false, 2},
		{"incast lossless", IncastLossless(), true, 2},
		{"incast lossy", IncastLossy(), false, 2},
		{"ipv6 lossless", IPv6Lossless(), true, 2},
		{"ipv6 lossy", IPv6Lossy(), false, 2},
		{"mixed ipv4", func() Incast { a, _ := MixedIncasts(); return a }(), false, 2},
		{"mixed ipv6", func() Incast { _, b := MixedIncasts(); return b }(), false, 2},
	}
	for _, c := range cases {
		same, other := 0, 0
		for _, s := range c.in.Senders {
			if podRack(s) == podRack(c.in.Receiver) {
				same++
			} else {
				other++
			}
		}
		in := float64(same+min(other, rackUplinks)) * float64(LineRate)
		queued := (in - float64(LineRate)) * c.in.Duration.Seconds() / 8
		var need float64
		if c.lossless {
			if c.in.Class.TC() != 3 {
				t.Fatalf("%s: class TC%d is not lossless by default", c.name, c.in.Class.TC())
			}
			k := float64(same + min(other, rackUplinks))
			pool := losslessShare * pools
			need = k * xoffAlpha * pool / (1 + k*xoffAlpha) // k ports at equilibrium Xoff
		} else {
			if c.in.Class.TC() != 0 {
				t.Fatalf("%s: class TC%d is not TC0", c.name, c.in.Class.TC())
			}
			pool := lossyShare * pools
			need = egressAlpha * pool / (1 + egressAlpha) // q = alpha (pool - q)
		}
		t.Logf("%s: %d senders (%d in the receiver's rack), %v, %d B packets: %.1f MB queued at the rack, %.1f MB needed (x%.1f)",
			c.name, len(c.in.Senders), same, c.in.Duration, c.in.Length, queued/1e6, need/1e6, queued/need)
		if queued < c.margin*need {
			t.Errorf("%s: queues %.0f B at the receiver's rack, want at least %.1f x %.0f B", c.name, queued, c.margin, need)
		}
	}
}

func TestFlowCheck(t *testing.T) {
	good := Flow{Src: HostAddr(0, 0, 0), Dst: HostAddr(1, 0, 0), Proto: layers.IPProtocolTCP,
		Packets: 1, Length: 1500, Rate: LineRate}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		mod  func(f *Flow)
	}{
		{"mixed families", func(f *Flow) { f.Src = netip.MustParseAddr("::1") }},
		{"ipv6 zone", func(f *Flow) { f.Src, f.Dst = netip.MustParseAddr("fe80::1%eth0"), netip.MustParseAddr("fe80::2") }},
		{"short ipv6 tcp", func(f *Flow) { f.Src, f.Dst, f.Length = HostAddr6(0, 0, 0), HostAddr6(1, 0, 0), 59 }},
		{"icmp", func(f *Flow) { f.Proto = layers.IPProtocolICMPv4 }},
		{"short tcp", func(f *Flow) { f.Length = 39 }},
		{"beyond an IPv4 packet", func(f *Flow) { f.Length = MaxSuperFrame + 1 }},
		{"short last", func(f *Flow) { f.LastLength = 20 }},
		{"dscp", func(f *Flow) { f.DSCP = 64 }},
		{"ecn", func(f *Flow) { f.ECN = 4 }},
		{"no packets", func(f *Flow) { f.Packets = 0 }},
		{"no pacing", func(f *Flow) { f.Rate = 0 }},
		{"negative start", func(f *Flow) { f.Start = -1 }},
		{"negative burst", func(f *Flow) { f.Burst = -1 }},
	}
	for _, c := range cases {
		f := good
		c.mod(&f)
		if err := f.Check(); !errors.Is(err, ErrPacket) {
			t.Errorf("%s: Check() = %v, want an ErrPacket", c.name, err)
		}
	}
	// A scenario names the generator and flow of a bad flow.
	s := &Scenario{Name: "bad", Generators: []Generator{FlowList{good}, FlowList{good, func() Flow { f := good; f.Packets = 0; return f }()}}}
	if _, err := s.WritePcap(&bytes.Buffer{}); err == nil || !errors.Is(err, ErrPacket) ||
		!bytes.Contains([]byte(err.Error()), []byte("generator 1 (tracegen.FlowList), flow 1")) {
		t.Errorf("bad scenario: %v", err)
	}
}

// TestFlowPacing pins a small scenario by hand: a 3-packet flow at 100 Gb/s and a
// periodic flow, merged by time with nanosecond rounding and the 1 ns tie rule.
func TestFlowPacing(t *testing.T) {
	a := Flow{Src: HostAddr(0, 0, 0), Dst: HostAddr(0, 1, 0), Proto: layers.IPProtocolUDP,
		Packets: 3, Length: 1000, LastLength: 100, Rate: LineRate}
	b := Flow{Src: HostAddr(0, 2, 0), Dst: HostAddr(0, 3, 0), Proto: layers.IPProtocolTCP,
		Packets: 2, Length: 40, Interval: 83_200, Start: 83_200} // same time as a's 2nd packet
	s := &Scenario{Name: "pacing", Epoch: time.Unix(100, 0), Generators: []Generator{FlowList{a, b}}}
	var buf bytes.Buffer
	st, err := s.WritePcap(&buf)
	if err != nil {
		t.Fatal(err)
	}
	recs := readTrace(t, buf.Bytes(), DefaultSnaplen)
	// a: 1038 wire bytes at 100 Gb/s = 83.04 ns -> packets at 0, 83.04, 166.08 ns.
	// b: 83.2 ns, 166.4 ns. Rounded up: 0, 84 (a), 84 -> 85 (b), 167 (a), 167 -> 168 (b).
	want := []struct {
		ns  int64
		src netip.Addr
		len int
	}{{0, a.Src, 1000}, {84, a.Src, 1000}, {85, b.Src, 40}, {167, a.Src, 100}, {168, b.Src, 40}}
	if len(recs) != len(want) || st.Packets != 5 || st.Bytes != 2180 || st.Flows != 2 {
		t.Fatalf("got %d packets, stats %+v", len(recs), st)
	}
	for i, w := range want {
		if got := recs[i].at.Sub(time.Unix(100, 0)).Nanoseconds(); got != w.ns || recs[i].src != w.src || recs[i].totalLen != w.len {
			t.Errorf("packet %d: %d ns from %v, %d B; want %d ns from %v, %d B", i, got, recs[i].src, recs[i].totalLen, w.ns, w.src, w.len)
		}
	}
}

func TestBoundedPareto(t *testing.T) {
	r := newTestRand()
	const n = 200000
	var sum float64
	hist := map[int]int{}
	for i := 0; i < n; i++ {
		x := boundedPareto(r, 1.2, 1, 256)
		if x < 1 || x > 256 {
			t.Fatalf("draw %d outside [1, 256]", x)
		}
		hist[x]++
		sum += float64(x)
	}
	// P(X < 2) for a Pareto(1.2) on [1, 257): (1 - 2^-1.2) / (1 - 257^-1.2) = 0.5669.
	if p := float64(hist[1]) / n; p < 0.56 || p > 0.573 {
		t.Errorf("P(X=1) = %.4f, want 0.5669", p)
	}
	if hist[256] == 0 {
		t.Error("the upper bound is never drawn")
	}
	t.Logf("mean packets per flow %.2f", sum/n)
}
