package replay

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// oneRackTrace is a capture of one rack: 6 endpoints of 192.168.0.0/24 (the default
// mapping puts them all on rack-p0-r0), 12 UDP and TCP flows of 3 to 14 packets.
func oneRackTrace(t *testing.T) string {
	var pkts []tracegen.Packet
	for f := 0; f < 12; f++ {
		src := addr(fmt.Sprintf("192.168.0.%d", 1+f%6))
		dst := addr(fmt.Sprintf("192.168.0.%d", 1+(f+1+f/6)%6))
		proto := layers.IPProtocolUDP
		if f%2 == 1 {
			proto = layers.IPProtocolTCP
		}
		for i := 0; i < 3+f; i++ {
			pkts = append(pkts, tracegen.Packet{Time: units.Time(f)*3*units.Microsecond + units.Time(i)*2*units.Microsecond,
				Src: src, Dst: dst, Proto: proto, SrcPort: uint16(1000 + f), DstPort: 80, Length: 1000 + 100*i, ECN: tracegen.ECT0})
		}
	}
	sortPackets(pkts)
	return writeTrace(t, pkts)
}

// --replicate 4 of a capture of one rack: 4 x the flows, each copy on a rack of its
// own (copy k on rack (0 + k x 8 / 4) mod 8), with addresses of its own (the first
// octet raised by k x address_step), and every copy's flows carry the original's
// packets; the records are the same twice, with --replicate-jitter too.
func TestReplicateOneRack(t *testing.T) {
	trace := oneRackTrace(t)
	orig, _ := runTraceAbs(t, trace, nil)
	origFlows := flowsOf(t, orig, "")
	for _, jitter := range []time.Duration{0, 50 * time.Microsecond} {
		var dirs []string
		var run *records.Run
		for range 2 {
			r, dir := runTraceAbs(t, trace, func(o *Options) { o.Replicate, o.ReplicateJitter = []int{4}, jitter })
			run, dirs = r, append(dirs, dir)
		}
		sameFiles(t, run, dirs[0], dirs[1])
		rp := run.Replication
		if rp == nil || rp.Copies != 4 || rp.AddressStep < 1 || !slices.Equal(rp.RackShift, []int{0, 2, 4, 6}) {
			t.Fatalf("jitter %v: replication %+v", jitter, rp)
		}
		flows, nodes := readFlowsNodes(t, dirs[0])
		if len(flows) != 4*len(origFlows) || run.Simulation.Injected != 4*orig.Simulation.Injected {
			t.Errorf("jitter %v: %d flows, %d packets; want 4 x %d, 4 x %d", jitter, len(flows), run.Simulation.Injected, len(origFlows), orig.Simulation.Injected)
		}
		// Copy k: its first octet is 192 + k x step; its hosts on one rack.
		byCopy := map[int][]string{}
		racks := map[int]map[string]bool{}
		for _, f := range flows {
			k := -1
			for c := range 4 {
				if f.Src.As4()[0] == byte(192+c*rp.AddressStep) && f.Dst.As4()[0] == byte(192+c*rp.AddressStep) {
					k = c
				}
			}
			if k < 0 {
				t.Fatalf("flow %v -> %v belongs to no copy", f.Src, f.Dst)
			}
			if racks[k] == nil {
				racks[k] = map[string]bool{}
			}
			for _, h := range []int32{f.SrcHost, f.DstHost} {
				racks[k][strings.Join(strings.Split(strings.TrimPrefix(nodes[h], "host-"), "-")[:2], "-")] = true
			}
			o := f
			o.Src, o.Dst = ipaddr.FromUint32(f.Src.Uint32()-uint32(k*rp.AddressStep)<<24), ipaddr.FromUint32(f.Dst.Uint32()-uint32(k*rp.AddressStep)<<24)
			byCopy[k] = append(byCopy[k], flowKey6(o))
		}
		for k := range 4 {
			want := fmt.Sprintf("p%d-r%d", (2*k)/4, (2*k)%4)
			if len(racks[k]) != 1 || !racks[k][want] {
				t.Errorf("jitter %v: copy %d on racks %v, want %s", jitter, k, racks[k], want)
			}
			slices.Sort(byCopy[k])
			if !slices.Equal(byCopy[k], origFlows) {
				t.Errorf("jitter %v: copy %d's flows (addresses mapped back) %v, want the original's %v", jitter, k, byCopy[k], origFlows)
			}
		}
		if jitter == 0 && !slices.Equal(rp.OffsetsNs, []int64{0, 0, 0, 0}) || jitter > 0 && (rp.OffsetsNs[0] != 0 || slices.Max(rp.OffsetsNs) >= int64(jitter) || slices.Max(rp.OffsetsNs) == 0) {
			t.Errorf("jitter %v: offsets %v", jitter, rp.OffsetsNs)
		}
		// Without --replicate the capture is on one rack, and the mapping says so.
		if w := orig.HostMapping.Warning; !strings.Contains(w, "rack-p0-r0") || run.HostMapping.RacksUsed != 4 {
			t.Errorf("host_mapping warning %q without copies; %d racks used with 4", w, run.HostMapping.RacksUsed)
		}
	}
}

// flowsOf lists a run's flows as flowKey6 strings, sorted.
func flowsOf(t *testing.T, run *records.Run, dir string) []string {
	t.Helper()
	if dir == "" {
		// runTraceAbs's directory is not returned with the run: read it again from
		// the options.
		opt, err := OptionsFromRun(&run.Options)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := Prepare(opt)
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(t.TempDir(), "again")
		if _, err := pr.Run(dir, ""); err != nil {
			t.Fatal(err)
		}
	}
	flows, _ := readFlowsNodes(t, dir)
	var out []string
	for _, f := range flows {
		out = append(out, flowKey6(f))
	}
	slices.Sort(out)
	return out
}

// flowKey6 is a flow's addresses, protocol, ports and packets.
func flowKey6(f records.FlowRow) string {
	return fmt.Sprint(f.Src, f.Dst, f.Proto, f.Sport, f.Dport, f.Packets)
}

func readFlowsNodes(t *testing.T, dir string) ([]records.FlowRow, []string) {
	t.Helper()
	flows, nodes, err := records.ReadAll(records.OpenFlows(filepath.Join(dir, records.FlowsFile)))
	if err != nil {
		t.Fatal(err)
	}
	return flows, nodes
}

// --replicate 2,1 of two captures: copy 1 holds the first capture only.
func TestReplicatePerTrace(t *testing.T) {
	a := oneRackTrace(t)
	b := writeTrace(t, []tracegen.Packet{{Time: 0, Src: addr("10.0.1.1"), Dst: addr("10.1.1.1"), Proto: layers.IPProtocolUDP, SrcPort: 1, DstPort: 2, Length: 500},
		{Time: units.Microsecond, Src: addr("10.0.1.1"), Dst: addr("10.1.1.1"), Proto: layers.IPProtocolUDP, SrcPort: 1, DstPort: 2, Length: 500}})
	one, _ := runTraceAbs(t, a, nil)
	run, _ := runTraceAbs(t, a, func(o *Options) { o.Traces = append(o.Traces, b); o.Replicate = []int{2, 1} })
	if want := 2*one.Simulation.Injected + 2; run.Simulation.Injected != want || run.Replication.Packets != want || !slices.Equal(run.Replication.PerTrace, []int{2, 1}) {
		t.Errorf("injected %d (replication %+v), want 2 x %d + 2", run.Simulation.Injected, run.Replication, one.Simulation.Injected)
	}
	if _, err := Prepare(Options{Traces: []string{a, b}, Replicate: []int{2, 1, 1}}); err == nil || !strings.Contains(err.Error(), "one per trace") {
		t.Errorf("3 counts for 2 traces: %v", err)
	}
}

// The address step is the smallest that keeps every copy's address distinct from the
// endpoints and the other copies, and out of the multicast range when it can.
func TestAddressStep(t *testing.T) {
	for _, c := range []struct {
		eps  []string
		n    int
		want uint32
	}{
		{[]string{"10.0.0.1", "10.0.0.2"}, 4, 1},
		{[]string{"10.0.0.1", "11.0.0.1"}, 2, 2},       // step 1 would copy 10.0.0.1 onto 11.0.0.1
		{[]string{"10.0.0.1", "12.0.0.1"}, 3, 3},       // steps 1 and 2 copy 10.0.0.1 onto 12.0.0.1
		{[]string{"223.0.0.1"}, 2, 17},                 // 224..239 are multicast: 223 + 17 = 240
		{[]string{"2001:db8::1", "2002:db8::1"}, 2, 2}, // IPv6: the leading 16 bits
		{[]string{"10.0.0.1", "2001:db8::1"}, 3, 1},    // both families
	} {
		var eps []ipaddr.Addr
		for _, s := range c.eps {
			eps = append(eps, ipaddr.MustParse(s))
		}
		got, err := addressStep(eps, c.n)
		if err != nil || got != c.want {
			t.Errorf("%v x %d: step %d (%v), want %d", c.eps, c.n, got, err, c.want)
		}
	}
}

// --target-load 80 on the incast traces: the busiest host link's p99 offered load in
// 1 ms bins, computed here from the capture (ingest's packets, the mapping that
// testdata/pcaps/README.md gives its addresses, the speedup run.json records), is
// within 1% of 80% of 100 Gb/s; run.json's offered_load says the same. With 3 copies
// (rotated by floor(k x 8 / 3) = 0, 2 and 5 racks) and jitter, likewise.
func TestTargetLoad(t *testing.T) {
	for _, c := range []struct {
		trace  string
		copies int
		jitter time.Duration
	}{{"incast", 1, 0}, {"tcp-incast", 1, 0}, {"tcp-incast", 3, 200 * time.Microsecond}} {
		trace := repoPath(t, "testdata/pcaps/"+c.trace+".pcap")
		run, _ := runTraceAbs(t, trace, func(o *Options) {
			o.TargetLoad = 80
			if c.copies > 1 {
				o.Replicate, o.ReplicateJitter = []int{c.copies}, c.jitter
			}
		})
		speedup := run.Options.Speedup
		var offsets []int64
		shift := []int{0}
		if rp := run.Replication; rp != nil {
			offsets, shift = rp.OffsetsNs, rp.RackShift
		}
		if c.copies > 1 && !slices.Equal(shift, []int{0, 2, 5}) { // floor(k x 8 / 3)
			t.Fatalf("rack shifts %v, want 0, 2, 5", shift)
		}
		share, link := p99FromTrace(t, trace, speedup, offsets, shift)
		if share < 0.792 || share > 0.808 {
			t.Errorf("%d copies: speedup %g: the busiest host link (%s) p99 is %.4f of its speed, want 0.8 within 1%%", c.copies, speedup, link, share)
		}
		ol := run.OfferedLoad
		if ol == nil || ol.BinPs != int64(units.Millisecond) || ol.Speedup != speedup || ol.BusiestLink+" "+ol.Direction != link ||
			ol.P99Share < share*(1-1e-9) || ol.P99Share > share*(1+1e-9) || ol.PeakShare < ol.P99Share {
			t.Errorf("%d copies: offered_load %+v; computed here %s %.6f", c.copies, ol, link, share)
		}
		if run.Options.TargetLoad != 80 {
			t.Errorf("options.target_load %v", run.Options.TargetLoad)
		}
		t.Logf("%s, %d copies: speedup %g, %s p99 %.4f, peak %.4f", c.trace, c.copies, speedup, link, share, ol.PeakShare)
	}
}

// p99FromTrace computes, independently of the replay, the busiest host link's p99
// offered load (a share of 100 Gb/s) of a committed trace at speedup: host h of rack
// r of pod p is 10.p.r.(h+1) (testdata/pcaps/README.md); copy k (offsets, shift)
// enters offsets[k] ns later on hosts shifted by shift[k] racks of 16 hosts. A
// packet of size L offers max(64, L + 18) + 20 wire bytes (no packet is above the
// MTU) to 1 ms bin floor(inject / 1 ms) of its source host's tx and its destination
// host's rx; p99 is the ceil(0.99 n)-th smallest of the n bins from 0 to the last
// injection.
func p99FromTrace(t *testing.T, trace string, speedup float64, offsets []int64, shift []int) (float64, string) {
	t.Helper()
	r, err := ingest.Open([]string{trace}, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if offsets == nil {
		offsets = []int64{0}
	}
	host := func(a ipaddr.Addr, k int) int {
		b := a.As4()
		id := (int(b[1])*4+int(b[2]))*16 + int(b[3]) - 1
		return (id + shift[k]*16) % 128
	}
	bins := map[[2]int]map[int64]int64{} // (host, dir) -> bin -> bytes
	var t0 int64 = -1
	var last int64
	var p ingest.Packet
	for {
		ok, err := r.Next(&p)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if t0 < 0 {
			t0 = p.Timestamp
		}
		wire := int64(max(64, int(p.TotalLen)+18) + 20)
		for k := range offsets {
			at := int64(float64(p.Timestamp-t0+offsets[k]) * 1000 / speedup)
			if speedup == 1 {
				at = (p.Timestamp - t0 + offsets[k]) * 1000
			}
			last = max(last, at)
			bin := at / int64(units.Millisecond)
			for dir, h := range []int{host(p.Src, k), host(p.Dst, k)} {
				key := [2]int{h, dir}
				if bins[key] == nil {
					bins[key] = map[int64]int64{}
				}
				bins[key][bin] += wire
			}
		}
	}
	n := last/int64(units.Millisecond) + 1
	best, name := 0.0, ""
	keys := slices.SortedFunc(maps.Keys(bins), func(a, b [2]int) int { return cmp.Or(a[0]-b[0], a[1]-b[1]) })
	for _, key := range keys { // ties: the first host, tx before rx
		m := bins[key]
		vals := make([]int64, n)
		for b, v := range m {
			vals[b] = v
		}
		slices.Sort(vals)
		rank := (99*n + 99) / 100
		share := float64(vals[rank-1]) * 8 / 1e-3 / 100e9
		if share > best {
			best, name = share, fmt.Sprintf("host-p%d-r%d-h%d %s", key[0]/64, key[0]/16%4, key[0]%16, []string{"tx", "rx"}[key[1]])
		}
	}
	return best, name
}

// Closed loop, a copy's flows are decided by the captured flows they copy: --replicate
// 2 of midconn.pcap doubles every count of closed_loop and the packets injected
// (TestMidConnectionTrace has one copy's).
func TestReplicateClosedLoop(t *testing.T) {
	run, _ := runTrace(t, "testdata/pcaps/midconn.pcap", func(o *Options) {
		closedOpts(o)
		o.Replicate, o.ReplicateJitter = []int{2}, 10*time.Microsecond
	})
	cl := run.ClosedLoop
	want := map[string]int64{records.FallbackFragmented: 2, records.FallbackControlWithoutSender: 6, records.FallbackTooManySegments: 0}
	if cl.Flows != 26 || cl.Closed != 12 || cl.ControlOnly != 4 || cl.Open != 2 || !maps.Equal(cl.Fallback, want) ||
		run.Simulation.Injected != 2*74 || run.Simulation.Delivered != 2*74 || run.Replication.Packets != 2*93 {
		t.Errorf("closed_loop %+v, injected %d, delivered %d, replication %+v", cl, run.Simulation.Injected, run.Simulation.Delivered, run.Replication)
	}
}
