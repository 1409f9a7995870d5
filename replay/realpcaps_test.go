package replay

// Real captures through the whole replay: the captures of ../shared/pcaps (beside the
// repository, read in place) go through Prepare and Run into a temporary directory,
// and the records are checked against run.json, against each other and against
// tshark's counts in expected.tsv.

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// realPcaps returns ../shared/pcaps (relative to the repository root), or skips.
func realPcaps(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "shared", "pcaps")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("skipping: the real captures are absent (%s: %v); they live beside the repository in ../shared/pcaps", dir, err)
	}
	return dir
}

// expectedIP reads tshark's counts of each capture's IPv4 packets (expected.tsv's
// ipv4_packets) and IPv6 packets (ingest/testdata/tshark-ipv6.tsv, see the script
// beside it).
func expectedIP(t *testing.T, dir string) map[string][2]int64 {
	t.Helper()
	out := map[string][2]int64{}
	for fam, path := range []string{filepath.Join(dir, "expected.tsv"), repoPath(t, "ingest/testdata/tshark-ipv6.tsv")} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			cols := strings.Split(sc.Text(), "\t")
			if len(cols) < 2 || cols[0] == "file" || strings.HasPrefix(cols[0], "#") {
				continue
			}
			n, err := strconv.ParseInt(cols[1], 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, sc.Text(), err)
			}
			c := out[cols[0]]
			c[fam] = n
			out[cols[0]] = c
		}
		f.Close()
	}
	return out
}

// traceSection is the part of run.json's trace that the checks use.
type traceSection struct {
	Packets     int64            `json:"packets"`
	Skipped     map[string]int64 `json:"skipped"`
	IPv4Packets int64            `json:"ipv4_packets"`
	IPv6Packets int64            `json:"ipv6_packets"`
	Flows       int64            `json:"flows"`
	DurationS   float64          `json:"duration_s"`
	DSCP        map[string]int64 `json:"dscp"`
	IntraHost   int64            `json:"intra_host"`
	Replayed    int64            `json:"replayed"`
	Oversize    struct {
		Packets   int64 `json:"packets"`
		SplitInto int64 `json:"split_into"`
		Dropped   int64 `json:"dropped"`
	} `json:"oversize"`
	IdleGaps struct {
		MaxIdleS  float64 `json:"max_idle_s"`
		Shortened int64   `json:"shortened"`
		RemovedS  float64 `json:"removed_s"`
	} `json:"idle_gaps"`
}

// unicastSpan reads the capture as the run did (window included) and returns the
// number of IPv4 and IPv6 packets, of multicast ones (IPv4 224.0.0.0/4 and
// 255.255.255.255, IPv6 ff00::/8), and the first and last timestamp of the others
// (the packets a replay injects).
func unicastSpan(t *testing.T, opt *Options) (ipv4, ipv6, multicast, first, last int64) {
	t.Helper()
	r, err := ingest.Open(opt.Traces, ingest.Options{Window: opt.Window, ReorderWindow: opt.ReorderWindow, Family: opt.Family})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var p ingest.Packet
	for {
		ok, err := r.Next(&p)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return
		}
		d4, d16 := p.Dst.As4(), p.Dst.As16()
		if p.Dst.Is6() {
			ipv6++
		} else {
			ipv4++
		}
		if p.Dst.Is4() && (d4[0] >= 224 && d4[0] <= 239 || d4 == [4]byte{255, 255, 255, 255}) || p.Dst.Is6() && d16[0] == 0xff {
			multicast++
			continue
		}
		if ipv4+ipv6 == multicast+1 {
			first = p.Timestamp
		}
		last = p.Timestamp
	}
}

type realRun struct {
	opt   Options
	run   *records.Run
	out   string
	trace traceSection
	ports []records.PortRow
	nodes []string
	flows []records.FlowRow
}

func replayReal(t *testing.T, path string, mutate func(*Options)) *realRun {
	t.Helper()
	opt := Options{Traces: []string{path}, RecordPackets: true}
	if mutate != nil {
		mutate(&opt)
	}
	pr, err := Prepare(opt)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	out := filepath.Join(t.TempDir(), "run")
	run, err := pr.Run(out, "")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	r := &realRun{opt: opt, run: run, out: out}
	if err := json.Unmarshal(run.Trace, &r.trace); err != nil {
		t.Fatalf("run.json trace: %v", err)
	}
	if r.ports, r.nodes, err = records.ReadAll(records.OpenPorts(filepath.Join(out, records.PortsFile))); err != nil {
		t.Fatal(err)
	}
	if r.flows, _, err = records.ReadAll(records.OpenFlows(filepath.Join(out, records.FlowsFile))); err != nil {
		t.Fatal(err)
	}
	return r
}

// check asserts what holds for every run of a real capture.
func (r *realRun) check(t *testing.T, want [2]int64, speedup float64) {
	t.Helper()
	s := &r.run.Simulation
	tr := &r.trace
	if !r.run.Complete {
		t.Error("run.json: complete is false")
	}
	// The trace: tshark's IPv4 and IPv6 counts (of the window), all of it replayed
	// but the multicast and broadcast packets; every packet is replayed or skipped for
	// a reason.
	ipv4, ipv6, multicast, first, last := unicastSpan(t, &r.opt)
	if r.opt.Window.IsZero() && r.opt.Family == 0 && (ipv4 != want[0] || ipv6 != want[1]) {
		t.Errorf("the capture has %d IPv4 and %d IPv6 packets; tshark counts %d and %d", ipv4, ipv6, want[0], want[1])
	}
	if tr.IPv4Packets != ipv4 || tr.IPv6Packets != ipv6 || tr.Skipped["multicast"] != multicast || tr.Replayed != ipv4+ipv6-multicast {
		t.Errorf("trace: ipv4_packets %d, ipv6_packets %d, multicast %d, replayed %d; want %d, %d, %d, %d",
			tr.IPv4Packets, tr.IPv6Packets, tr.Skipped["multicast"], tr.Replayed, ipv4, ipv6, multicast, ipv4+ipv6-multicast)
	}
	var skipped int64
	for _, n := range tr.Skipped {
		skipped += n
	}
	if tr.Packets != tr.Replayed+skipped {
		t.Errorf("trace: %d packets, %d replayed + %d skipped (%v)", tr.Packets, tr.Replayed, skipped, tr.Skipped)
	}
	// docs/model.md#replay: injected = IP packets - intra-host - oversize + the pieces they were
	// split into (an oversize packet dropped at its NIC counts as injected and dropped).
	if want := tr.Replayed - tr.IntraHost - tr.Oversize.Packets + tr.Oversize.SplitInto + tr.Oversize.Dropped; s.Injected != want {
		t.Errorf("injected %d, want replayed %d - intra-host %d - oversize %d + pieces %d + oversize dropped %d = %d",
			s.Injected, tr.Replayed, tr.IntraHost, tr.Oversize.Packets, tr.Oversize.SplitInto, tr.Oversize.Dropped, want)
	}
	// docs/model.md#invariants conservation, fabric-wide.
	if s.Injected != s.Delivered+s.DroppedTotal()+s.UndrainedTotal() {
		t.Errorf("injected %d != delivered %d + dropped %d + undrained %d", s.Injected, s.Delivered, s.DroppedTotal(), s.UndrainedTotal())
	}
	// docs/model.md#headroom-sizing: no lossless drop under Headroom auto.
	if s.LosslessDrops != 0 || s.Dropped[records.ReasonHeadroom] != 0 {
		t.Errorf("%d lossless (headroom) drops under Headroom auto", s.Dropped[records.ReasonHeadroom])
	}
	// The last packet enters at (last - first - idle time removed) / speedup: simulated
	// time covers it.
	if min := (float64(last-first)/1e9 - tr.IdleGaps.RemovedS) * 1e12 / speedup; float64(s.SimTimePs) < min {
		t.Errorf("sim_time_ps %d is shorter than the replayed packets' span %g s less %g s of idle gaps / speedup %g = %.0f ps",
			s.SimTimePs, float64(last-first)/1e9, tr.IdleGaps.RemovedS, speedup, min)
	}
	// Per flow and summed over flows.
	var pk, del, drop, und int64
	for _, f := range r.flows {
		if f.Packets != f.Delivered+f.Dropped+f.Undrained || f.Undrained < 0 {
			t.Fatalf("flow %d: packets %d != delivered %d + dropped %d + undrained %d", f.FlowID, f.Packets, f.Delivered, f.Dropped, f.Undrained)
		}
		pk, del, drop, und = pk+f.Packets, del+f.Delivered, drop+f.Dropped, und+f.Undrained
	}
	if pk != s.Injected || del != s.Delivered || drop != s.DroppedTotal() || und != s.UndrainedTotal() {
		t.Errorf("flows sum to %d/%d/%d/%d, run.json %d/%d/%d/%d (injected/delivered/dropped/undrained)",
			pk, del, drop, und, s.Injected, s.Delivered, s.DroppedTotal(), s.UndrainedTotal())
	}
	// docs/model.md#invariants conservation per switch, from ports.arrow: every data frame a switch
	// received was sent on, dropped there, or is still in it.
	type bal struct{ rx, tx, drops int64 }
	per := map[int32]*bal{}
	var hostRx, hostTx, hostOversize, allTx int64
	for i := range r.ports {
		p := &r.ports[i]
		allTx += p.TxPackets
		if p.Tier == records.TierHost {
			hostRx += p.RxPackets
			hostTx += p.TxPackets
			hostOversize += p.Drops[records.ReasonOversize]
			continue
		}
		b := per[p.Node]
		if b == nil {
			b = &bal{}
			per[p.Node] = b
		}
		b.rx, b.tx, b.drops = b.rx+p.RxPackets, b.tx+p.TxPackets, b.drops+p.DropsTotal()
	}
	// (Undrained counts the frames buffered in the node and those on its outgoing
	// links, which were already transmitted.)
	for node, b := range per {
		if held := b.rx - b.tx - b.drops; held < 0 || held > s.Undrained[r.nodes[node]] {
			t.Errorf("switch %s: rx %d - tx %d - drops %d = %d, not within undrained %d", r.nodes[node], b.rx, b.tx, b.drops, held, s.Undrained[r.nodes[node]])
		}
	}
	if hostRx != s.Delivered {
		t.Errorf("hosts received %d packets, run.json delivered %d", hostRx, s.Delivered)
	}
	if hostTx+hostOversize > s.Injected {
		t.Errorf("hosts sent %d (+%d oversize drops) of %d injected", hostTx, hostOversize, s.Injected)
	}
	if allTx != s.PacketHops {
		t.Errorf("ports transmitted %d packets, run.json packet_hops %d", allTx, s.PacketHops)
	}
	// Every record file reads back with its documented schema and row count.
	for name, rows := range r.run.Records {
		if name == records.RunFile {
			continue
		}
		tbl, err := records.ReadTable(filepath.Join(r.out, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if tbl.NumRows() != rows {
			t.Errorf("%s: %d rows, run.json says %d", name, tbl.NumRows(), rows)
		}
		if want, err := records.Schema(name); err != nil || !tbl.Schema().Equal(want) {
			t.Errorf("%s: schema differs from the documented one (%v)", name, err)
		}
		tbl.Release()
	}
	if r.run.Records[records.PacketsFile] != s.Injected {
		t.Errorf("packets.arrow has %d rows, %d packets injected", r.run.Records[records.PacketsFile], s.Injected)
	}
}

// hostTxByTC sums what the host NICs sent, per traffic class.
func (r *realRun) hostTxByTC() map[uint8]int64 {
	out := map[uint8]int64{}
	for _, p := range r.ports {
		if p.Tier == records.TierHost && p.TxPackets > 0 {
			out[p.TC] += p.TxPackets
		}
	}
	return out
}

// checkHostTxByTC checks the data packets the hosts sent per traffic class.
func (r *realRun) checkHostTxByTC(t *testing.T, want map[uint8]int64) {
	t.Helper()
	got := r.hostTxByTC()
	if len(got) != len(want) {
		t.Errorf("host transmissions by TC %v, want %v", got, want)
		return
	}
	for tc, n := range want {
		if got[tc] != n {
			t.Errorf("host transmissions by TC %v, want %v", got, want)
			return
		}
	}
}

// TestRealPcaps replays real captures of several kinds (oversize GRO frames, IP
// fragments, mixed DSCPs including a lossless class, QinQ, many flows, pcapng) through
// the default fabric.
func TestRealPcaps(t *testing.T) {
	dir := realPcaps(t)
	hosts32 := func(o *Options) {
		cfg := config.Default()
		cfg.Topology.HostsPerRack = 32
		o.Config = &cfg
	}
	want := expectedIP(t, dir)
	tests := []struct {
		file    string
		speedup float64
		mutate  func(*Options)
		extra   func(t *testing.T, r *realRun)
	}{
		// GRO/TSO frames up to 65,212 bytes, split at the 9,000-byte MTU: tshark finds
		// 63 IPv4 packets over 9000 bytes needing 312 pieces (sum of ceil(len/9000)).
		{"sll2-http-large-gro-frames.pcap", 1, nil, func(t *testing.T, r *realRun) {
			if o := r.trace.Oversize; o.Packets != 63 || o.SplitInto != 312 || o.Dropped != 0 {
				t.Errorf("oversize %+v, want 63 packets split into 312", o)
			}
			if r.run.Simulation.Injected != 159-63+312 {
				t.Errorf("injected %d, want 408", r.run.Simulation.Injected)
			}
		}},
		{"afs-rx-fragments-dscp48.pcap", 1, nil, nil},
		// IPv4 DSCP 0:1370, 8:1616, 38:9, 46:16 (tshark, expected.tsv) -> TC0, TC1,
		// TC4 (lossless), TC5.
		{"tls-browsing-dscp8-38-46-ipv6.pcap ipv4", 1, func(o *Options) { o.Family = ipaddr.IPv4 }, func(t *testing.T, r *realRun) {
			r.checkHostTxByTC(t, map[uint8]int64{0: 1370, 1: 1616, 4: 9, 5: 16})
			if r.trace.IPv6Packets != 0 || r.trace.Skipped["family-filtered"] != 4440 {
				t.Errorf("--family ipv4: %d IPv6 packets, %d family-filtered; want 0 and 4440", r.trace.IPv6Packets, r.trace.Skipped["family-filtered"])
			}
		}},
		// IPv6 DSCP 0:1663, 8:2447, 38:313, 46:17 (tshark, ingest/testdata/tshark-ipv6.tsv).
		{"tls-browsing-dscp8-38-46-ipv6.pcap ipv6", 1, func(o *Options) { o.Family = ipaddr.IPv6 }, func(t *testing.T, r *realRun) {
			r.checkHostTxByTC(t, map[uint8]int64{0: 1663, 1: 2447, 4: 313, 5: 17})
			for _, f := range r.flows {
				if !f.Src.Is6() || !f.Dst.Is6() {
					t.Fatalf("--family ipv6: flow %d is %v -> %v", f.FlowID, f.Src, f.Dst)
				}
			}
		}},
		// Both families: 167 unicast endpoints need more than the default 128 hosts
		// (32 per rack here); the classes add up: TC0 1370+1663, TC1 1616+2447, TC4
		// 9+313, TC5 16+17.
		{"tls-browsing-dscp8-38-46-ipv6.pcap both", 1, hosts32, func(t *testing.T, r *realRun) {
			r.checkHostTxByTC(t, map[uint8]int64{0: 3033, 1: 4063, 4: 322, 5: 33})
			fam := map[bool]int{}
			for _, f := range r.flows {
				fam[f.Src.Is6()]++
			}
			if fam[false] != 397 || fam[true] != 268 {
				t.Errorf("flows.arrow: %d IPv4 and %d IPv6 flows, want 397 and 268 (tshark)", fam[false], fam[true])
			}
		}},
		// This capture jumps 4.5 years (2010 -> 2015) after packet 26: at speedup 1 the
		// injection time does not fit int64 picoseconds (see the audit report); at
		// speedup 1000 it does (1.4e17 ps).
		{"web-client-508-flows-qinq.pcap", 1000, nil, nil},
		// 11 endpoints, 4 of them in 192.168.0.0/24: the default subnet mapping fits.
		{"lan-ftp-225-flows-ipv6-arp.pcap", 1, nil, nil},
		{"irc-dcc-ect0.pcapng", 1, nil, nil},
		// Three hosts per rack: hash mapping (several endpoints per host; packets
		// between endpoints of one host are intra-host).
		{"lan-ftp-225-flows-ipv6-arp.pcap hash", 1, func(o *Options) {
			cfg := config.Default()
			cfg.Topology.HostsPerRack = 3
			o.Config = &cfg
			o.Hosts = MapHash
		}, nil},
	}
	// Loaded: the browsing client's downloads compressed 10^7 times are an incast on
	// its rack port. All classes lossless with a small fixed Xoff: PFC pauses, nothing
	// is dropped. All classes lossy in a 256 KiB buffer: drops, only lossy reasons.
	allLossless := func(o *Options) {
		cfg := config.Default()
		cfg.Topology.HostsPerRack = 32 // both families: 167 endpoints
		cfg.Switch.Pools = []config.Pool{{Name: "lossless", Size: config.PoolShare(1), TrafficClasses: []int{0, 1, 2, 3, 4, 5, 6, 7}}}
		cfg.Switch.PfcEnabled = []int{0, 1, 2, 3, 4, 5, 6, 7}
		cfg.Switch.Xoff = 3000
		o.Config = &cfg
	}
	allLossy := func(o *Options) {
		cfg := config.Default()
		cfg.Topology.HostsPerRack = 32
		cfg.Switch.Pools = []config.Pool{{Name: "lossy", Size: config.PoolShare(1), TrafficClasses: []int{0, 1, 2, 3, 4, 5, 6, 7}}}
		cfg.Switch.PfcEnabled = nil
		cfg.Switch.BufferSize = 256 * units.KiB
		o.Config = &cfg
	}
	tests = append(tests,
		struct {
			file    string
			speedup float64
			mutate  func(*Options)
			extra   func(t *testing.T, r *realRun)
		}{"tls-browsing-dscp8-38-46-ipv6.pcap lossless-loaded", 1e7, allLossless, func(t *testing.T, r *realRun) {
			s := r.run.Simulation
			if s.PFCFrames == 0 || s.DroppedTotal() != 0 || s.Delivered != s.Injected {
				t.Errorf("PFC frames %d, drops %v, delivered %d of %d: want pauses and no drop", s.PFCFrames, s.Dropped, s.Delivered, s.Injected)
			}
			// Every PFC frame carries the 8 classes of the single pool; every frame sent
			// on a link was received at its other end (the run drained).
			type link struct {
				a, b int32
				tc   uint8
			}
			tx, rx := map[link][2]int64{}, map[link][2]int64{}
			var perClass int64
			for _, p := range r.ports {
				perClass += p.PFCPauseTx + p.PFCResumeTx
				tx[link{p.Node, p.Peer, p.TC}] = [2]int64{p.PFCPauseTx, p.PFCResumeTx}
				rx[link{p.Peer, p.Node, p.TC}] = [2]int64{p.PFCPauseRx, p.PFCResumeRx}
			}
			if perClass != 8*s.PFCFrames {
				t.Errorf("per-class PFC tx counters sum to %d, want 8 x %d frames", perClass, s.PFCFrames)
			}
			for l, n := range tx {
				if rx[l] != n {
					t.Errorf("node %d -> %d TC%d: sent %v pause/resume frames, the peer received %v", l.a, l.b, l.tc, n, rx[l])
				}
			}
			// paused_ps (docs/model.md#statistics time paused, at the paused sender) equals the time
			// between each rx_pause that paused the class and the rx_resume or expire
			// that ended it, from pfc.arrow.
			events, _, err := records.ReadAll(records.OpenPFC(filepath.Join(r.out, records.PFCFile)))
			if err != nil {
				t.Fatal(err)
			}
			type key struct {
				node, port int32
				tc         uint8
			}
			since, paused := map[key]int64{}, map[key]int64{}
			for _, e := range events {
				k := key{e.Node, e.Port, e.TC}
				switch e.Event {
				case records.EventRxPause:
					if _, on := since[k]; !on {
						since[k] = e.TimePs
					}
				case records.EventRxResume, records.EventExpire:
					if t0, on := since[k]; on {
						paused[k] += e.TimePs - t0
						delete(since, k)
					}
				}
			}
			if len(since) != 0 {
				t.Errorf("%d classes still paused at the end of a drained run", len(since))
			}
			var n int
			for _, p := range r.ports {
				if k := (key{p.Node, p.Port, p.TC}); p.PausedPs != paused[k] {
					t.Errorf("node %d port %d TC%d: paused_ps %d, pfc.arrow intervals sum to %d", p.Node, p.Port, p.TC, p.PausedPs, paused[k])
				} else if p.PausedPs > 0 {
					n++
				}
			}
			if n == 0 {
				t.Error("no port was paused")
			}
		}},
		struct {
			file    string
			speedup float64
			mutate  func(*Options)
			extra   func(t *testing.T, r *realRun)
		}{"tls-browsing-dscp8-38-46-ipv6.pcap lossy-loaded", 1e7, allLossy, func(t *testing.T, r *realRun) {
			s := r.run.Simulation
			d := s.Dropped
			if d[records.ReasonEgressLimit]+d[records.ReasonPoolFull] == 0 || s.DroppedTotal() != d[records.ReasonEgressLimit]+d[records.ReasonPoolFull] || s.PFCFrames != 0 {
				t.Errorf("drops %v, PFC frames %d: want egress-limit / pool-full drops only", d, s.PFCFrames)
			}
			if got := r.run.Records[records.DropsFile]; got != s.DroppedTotal() {
				t.Errorf("drops.arrow has %d rows, %d drops", got, s.DroppedTotal())
			}
		}},
	)
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			file, _, _ := strings.Cut(tc.file, " ")
			r := replayReal(t, filepath.Join(dir, file), func(o *Options) {
				o.Speedup = tc.speedup
				if tc.mutate != nil {
					tc.mutate(o)
				}
			})
			r.check(t, want[file], tc.speedup)
			if tc.extra != nil {
				tc.extra(t, r)
			}
			s := r.run.Simulation
			t.Logf("injected %d delivered %d dropped %d undrained %d intra-host %d hops %d sim %d ps",
				s.Injected, s.Delivered, s.DroppedTotal(), s.UndrainedTotal(), r.trace.IntraHost, s.PacketHops, s.SimTimePs)
		})
	}
}

// TestRealPcapSubnetMapping: with three hosts per rack, lan-ftp's four 192.168.0.x
// unicast endpoints fit no rack: the group spills over two racks and the replay runs;
// on a fabric of 5 hosts its 6 unicast endpoints do not fit, and the error says how
// many endpoints and hosts and what to change. tls-browsing's 167 endpoints (135
// subnets) exceed the default fabric's 128 hosts: the error names the smallest
// HostsPerRack that fits (21) and the families, each of which fits alone; with 21
// hosts a rack every endpoint gets a host of its own.
func TestRealPcapSubnetMapping(t *testing.T) {
	dir := realPcaps(t)
	lan := filepath.Join(dir, "lan-ftp-225-flows-ipv6-arp.pcap")
	cfg := config.Default()
	cfg.Topology.HostsPerRack = 3
	pr, err := Prepare(Options{Traces: []string{lan}, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	if pr.HostMap.Len() != 6 || pr.HostMap.Split != 1 {
		t.Errorf("%d endpoints, %d groups split; want 6 and 1 (the 192.168.0.0/24 group)", pr.HostMap.Len(), pr.HostMap.Split)
	}
	cfg = config.Default()
	cfg.Topology.Pods, cfg.Topology.RacksPerPod, cfg.Topology.HostsPerRack = 1, 1, 5
	_, err = Prepare(Options{Traces: []string{lan}, Config: &cfg})
	if !errors.Is(err, ErrInput) || !errors.Is(err, ErrHostMap) {
		t.Fatalf("6 endpoints on 5 hosts: error %v does not wrap ErrInput and ErrHostMap", err)
	}
	for _, s := range []string{"6 endpoints", "5 hosts in 1 racks", "--hosts hash", "HostsPerRack=6"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
	tls := filepath.Join(dir, "tls-browsing-dscp8-38-46-ipv6.pcap")
	_, err = Prepare(Options{Traces: []string{tls}})
	for _, s := range []string{"167 endpoints in 135 subnets (IPv4 /24, IPv6 /64) but 128 hosts in 8 racks", "HostsPerRack=21", "--family ipv4 or ipv6"} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("tls-browsing: error %v does not mention %q", err, s)
		}
	}
	cfg = config.Default()
	cfg.Topology.HostsPerRack = 21
	pr, err = Prepare(Options{Traces: []string{tls}, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	eps, used := pr.HostMap.PerRack()
	var total, hosts int
	for r := range eps {
		total, hosts = total+eps[r], hosts+used[r]
		if eps[r] > 21 {
			t.Errorf("%s: %d endpoints on 21 hosts", pr.HostMap.Racks[r].Name, eps[r])
		}
	}
	if total != 167 || hosts != 167 {
		t.Errorf("tls-browsing on 8 x 21 hosts: %d endpoints on %d hosts, want 167 on 167", total, hosts)
	}
	t.Logf("tls-browsing on 8 racks of 21 hosts: endpoints per rack %v; %d groups, %d moved whole, %d split", eps, pr.HostMap.Groups, pr.HostMap.Moved, pr.HostMap.Split)
}

// TestRealPcapDeterministic: two runs of a real capture write byte-identical records,
// here under load with every class lossless (PFC pauses, refreshes and resumes).
func TestRealPcapDeterministic(t *testing.T) {
	dir := realPcaps(t)
	path := filepath.Join(dir, "tls-browsing-dscp8-38-46-ipv6.pcap")
	loaded := func(o *Options) {
		cfg := config.Default()
		cfg.Topology.HostsPerRack = 32 // both families: 167 endpoints
		cfg.Switch.Pools = []config.Pool{{Name: "lossless", Size: config.PoolShare(1), TrafficClasses: []int{0, 1, 2, 3, 4, 5, 6, 7}}}
		cfg.Switch.PfcEnabled = []int{0, 1, 2, 3, 4, 5, 6, 7}
		cfg.Switch.Xoff = 3000
		o.Config = &cfg
		o.Speedup = 1e7
	}
	a := replayReal(t, path, loaded)
	b := replayReal(t, path, loaded)
	if a.run.Simulation.PFCFrames == 0 {
		t.Fatal("no PFC frames: the run is not loaded")
	}
	sameFiles(t, a.run, a.out, b.out)
}
