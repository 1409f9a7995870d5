package replay

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// BenchmarkReplayDemo replays testdata/pcaps/demo.pcap end to end (records included)
// and reports packets/s and packet-hops/s.
func BenchmarkReplayDemo(b *testing.B) {
	pr, err := Prepare(Options{Traces: []string{repoPath(b, "testdata/pcaps/demo.pcap")}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	runN(b, pr)
}

// benchTrace returns the path of the generated benchmark trace of n packets (seed 1),
// writing it under the OS temp directory the first time (a 1M-packet trace is 80 MB).
func benchTrace(b *testing.B, n int) string { return benchTraceOf(b, n, "") }

// benchTraceOf is benchTrace restricted to one class (tracegen.Benchmark.Only).
func benchTraceOf(b *testing.B, n int, only string) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "tracefabric-bench")
	path := filepath.Join(dir, fmt.Sprintf("bench-%d-seed1%s.pcap", n, only))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if _, err := tracegen.WriteBenchmarkFile(path, tracegen.Benchmark{Packets: n, Seed: 1, Only: only}); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkReplay1M is issue 5's benchmark: a generated trace of 1M packets through the
// default topology, end to end (Prepare, which reads the trace, and Run, which reads it
// again and writes the records). packets/s and hops/s are per second of the whole
// iteration; sim-packets/s and sim-hops/s per second of the run's simulation loop
// (run.json's wall_s).
func BenchmarkReplay1M(b *testing.B) { benchReplayTrace(b, benchTrace(b, 1_000_000), nil) }

// BenchmarkReplayClosedTCP1M and BenchmarkReplayClosedRoCE1M: closed loop
// (docs/model.md#closed-loop-transports) on 1M data packets of TCP (DCTCP, the packets
// being ECT(0)) or RoCEv2 (DCQCN) through the default topology. ACKs, CNPs and NAKs
// count as packet-hops; sim-hops/s is the simulation loop's rate on its one core.
func BenchmarkReplayClosedTCP1M(b *testing.B) {
	benchReplayTrace(b, benchTraceOf(b, 1_000_000, "tcp"), closedOpts)
}

func BenchmarkReplayClosedRoCE1M(b *testing.B) {
	benchReplayTrace(b, benchTraceOf(b, 1_000_000, "roce"), closedOpts)
}

func benchReplayTrace(b *testing.B, trace string, mutate func(*Options)) {
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	var hops, pkts int64
	var simWall, simCPU float64
	for i := 0; i < b.N; i++ {
		opt := Options{Traces: []string{trace}}
		if mutate != nil {
			mutate(&opt)
		}
		pr, err := Prepare(opt)
		if err != nil {
			b.Fatal(err)
		}
		run, err := pr.Run(filepath.Join(b.TempDir(), "run"), "")
		if err != nil {
			b.Fatal(err)
		}
		hops += run.Simulation.PacketHops
		pkts += run.Simulation.Injected
		simWall += run.Simulation.WallS
		simCPU += run.Simulation.CPUS
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(pkts)/s, "packets/s")
	b.ReportMetric(float64(hops)/s, "hops/s")
	reportCPU(b, cpu0, pkts, hops)
	b.ReportMetric(float64(pkts)/simWall, "sim-packets/s")
	b.ReportMetric(float64(hops)/simWall, "sim-hops/s")
	b.ReportMetric(float64(hops)/simCPU, "sim-hops/cpu-s")
}

// BenchmarkReplay1MRun is BenchmarkReplay1M without Prepare (done once, untimed):
// the run alone, which reads the trace once more and writes the records.
func BenchmarkReplay1MRun(b *testing.B) { benchRun1M(b, 0) }

// benchRun1M prepares the 1M-packet benchmark trace once (untimed) with the given
// Options.Threads and times its runs.
func benchRun1M(b *testing.B, threads int) {
	pr, err := Prepare(Options{Traces: []string{benchTrace(b, 1_000_000)}, Threads: threads})
	if err != nil {
		b.Fatal(err)
	}
	var par []switchmodel.ParallelStats
	parStatsHook = func(st switchmodel.ParallelStats) { par = append(par, st) }
	defer func() { parStatsHook = nil }()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	pkts, hops := runN(b, pr)
	reportCPU(b, cpu0, pkts, hops)
	reportParallel(b, par)
}

// reportParallel reports, for the partitioned runs, the model of larger machines that
// issue 24 asks for: windows per run, events per window (all partitions'), the
// event-count bound of the speedup (events / the sum over windows of the busiest
// partition's), the fraction of the partitions' time spent waiting at barriers
// (partitions x wall - busy, over partitions x wall; the coordinator's serial work
// counts as partition 0's waiting), and the coordinator's work at barriers per wall
// second.
func reportParallel(b *testing.B, par []switchmodel.ParallelStats) {
	if len(par) == 0 {
		return
	}
	var windows int64
	var events, critical uint64
	var wall, waiting, barriers, busy time.Duration
	parts := 0
	for _, st := range par {
		windows += st.Windows
		events += sumEvents(st.Events)
		critical += st.Critical
		wall += st.Wall
		waiting += st.Waiting
		barriers += st.Barriers
		busy += st.Busy
		parts = st.Partitions
	}
	b.ReportMetric(float64(windows)/float64(len(par)), "windows/op")
	b.ReportMetric(float64(events)/float64(windows), "events/window")
	b.ReportMetric(float64(busy.Microseconds())/float64(windows)/float64(parts), "busy-us/window/part")
	b.ReportMetric(float64(events)/float64(critical), "bound-x")
	b.ReportMetric(waiting.Seconds()/(float64(parts)*wall.Seconds()), "wait-frac")
	b.ReportMetric(barriers.Seconds()/wall.Seconds(), "coord-frac")
}

func sumEvents(evs []uint64) uint64 {
	var s uint64
	for _, e := range evs {
		s += e
	}
	return s
}

// BenchmarkReplay1MRunThreads is BenchmarkReplay1MRun on the partitioned engine:
// --threads 2 (the records are the same; run it paired with BenchmarkReplay1MRun,
// -count 4, on a quiet machine). wall-s/op is run.json's wall_s, cpu-s/op the
// process's CPU time (the partitions' threads, their spinning at barriers, the feed,
// the GC), per run.
func BenchmarkReplay1MRunThreads(b *testing.B) { benchRun1M(b, 2) }

// cpuTime is the process's user+system CPU time (GC included): on a shared machine the
// wall-clock rate depends on the neighbours, CPU time much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports packets and packet-hops per CPU second since cpu0.
func reportCPU(b *testing.B, cpu0 time.Duration, pkts, hops int64) {
	c := (cpuTime() - cpu0).Seconds()
	b.ReportMetric(c/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(pkts)/c, "packets/cpu-s")
	b.ReportMetric(float64(hops)/c, "hops/cpu-s")
}

// TestFlowTable checks the injector's flow index against a map: random tuples of
// both families with many repeats and collisions in the low bits, through several
// growths.
func TestFlowTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var ft flowTable
	ref := map[ingest.FiveTuple]int32{}
	for i := 0; i < 200_000; i++ {
		src, dst := [4]byte{10, 0, byte(rng.IntN(4)), byte(rng.IntN(256))}, [4]byte{10, 1, 0, byte(rng.IntN(64))}
		p := ingest.Packet{Src: ipaddr.From4(src), Dst: ipaddr.From4(dst),
			SrcPort: uint16(rng.IntN(8)), DstPort: 4791, Proto: uint8(6 + 11*rng.IntN(2))}
		switch rng.IntN(4) {
		case 0: // IPv6: the same bytes in 2001:db8::/96
			p.Src = ipaddr.From16([16]byte{0x20, 0x01, 0x0d, 0xb8, 12: src[0], 13: src[1], 14: src[2], 15: src[3]})
			p.Dst = ipaddr.From16([16]byte{0x20, 0x01, 0x0d, 0xb8, 12: dst[0], 13: dst[1], 14: dst[2], 15: dst[3]})
		case 1: // IPv4-mapped IPv6: not the IPv4 flow of the same bytes
			p.Src, p.Dst = ipaddr.From16(p.Src.As16()), ipaddr.From16(p.Dst.As16())
		}
		fid, slot := ft.find(&p)
		want, ok := ref[p.Tuple()]
		switch {
		case ok && fid != want:
			t.Fatalf("packet %d %v: flow %d, want %d", i, p.Tuple(), fid, want)
		case !ok && fid != -1:
			t.Fatalf("packet %d %v: new flow found as %d", i, p.Tuple(), fid)
		case !ok:
			ref[p.Tuple()] = int32(len(ref))
			ft.insert(slot, &p, int32(len(ref)-1))
		}
		if got, want := ft.get(p.Src, p.Dst, p.SrcPort, p.DstPort, p.Proto), ref[p.Tuple()]; got != want {
			t.Fatalf("packet %d %v: get says flow %d, want %d", i, p.Tuple(), got, want)
		}
	}
	if ft.len() != len(ref) || len(ref) < 10_000 || ft.v6.n < 2_000 {
		t.Fatalf("%d flows in the table (%d IPv6), %d in the map", ft.len(), ft.v6.n, len(ref))
	}
	if got := ft.get(ipaddr.From4([4]byte{192, 0, 2, 1}), ipaddr.From4([4]byte{192, 0, 2, 2}), 1, 2, 6); got != -1 {
		t.Fatalf("get of a tuple never inserted = %d, want -1", got)
	}
}

// TestSummaryEndpoints: the endpoints Prepare maps (ingest.Summary.EndpointAddrs) are
// exactly the distinct IP addresses of the replayed packets, on the testdata traces,
// several files together, and the real captures when present.
func TestSummaryEndpoints(t *testing.T) {
	td := func(n string) string { return repoPath(t, "testdata/pcaps/"+n) }
	sets := [][]string{{td("demo.pcap")}, {td("incast.pcap")}, {td("many-flows.pcap")},
		{td("demo.pcap"), td("incast.pcap"), td("many-flows.pcap")}}
	real, _ := filepath.Glob(repoPath(t, "../shared/pcaps/*.pcap"))
	ng, _ := filepath.Glob(repoPath(t, "../shared/pcaps/*.pcapng"))
	if real = append(real, ng...); len(real) > 0 {
		for _, p := range real {
			sets = append(sets, []string{p})
		}
		sets = append(sets, real)
	} else {
		t.Log("../shared/pcaps absent: real captures not checked")
	}
	failed := 0
	for _, paths := range sets {
		for _, w := range []time.Duration{0, -1} {
			opt := ingest.Options{ReorderWindow: w}
			want, err := ingest.Summarize(paths, opt)
			if err != nil {
				failed++
				continue
			}
			eps := want.EndpointAddrs
			seen, all := map[ipaddr.Addr]bool{}, map[ipaddr.Addr]bool{} // unicast endpoints, all addresses
			r, err := ingest.Open(paths, opt)
			if err != nil {
				t.Fatal(err)
			}
			var p ingest.Packet
			for {
				ok, err := r.Next(&p)
				if err != nil || !ok {
					break
				}
				all[p.Src], all[p.Dst] = true, true
				if !p.Multicast() { // multicast packets are not replayed: no hosts for them
					seen[p.Src], seen[p.Dst] = true, true
				}
			}
			r.Close()
			if len(eps) != len(seen) || int64(len(all)) != want.Endpoints {
				t.Fatalf("%v: %d endpoints to map, %d seen in unicast packets; summary %d endpoints, %d addresses seen", paths, len(eps), len(seen), want.Endpoints, len(all))
			}
			for _, a := range eps {
				if !seen[a] {
					t.Fatalf("%v: endpoint %v not in the trace", paths, a)
				}
			}
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d trace sets failed to read", failed, 2*len(sets))
	}
}

// runN runs pr b.N times and reports packets/s and packet-hops/s of wall time.
func runN(b *testing.B, pr *Prepared) (pkts, hops int64) {
	for i := 0; i < b.N; i++ {
		run, err := pr.Run(filepath.Join(b.TempDir(), "run"), "")
		if err != nil {
			b.Fatal(err)
		}
		hops += run.Simulation.PacketHops
		pkts += run.Simulation.Injected
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(pkts)/s, "packets/s")
	b.ReportMetric(float64(hops)/s, "hops/s")
	return pkts, hops
}
