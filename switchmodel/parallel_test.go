package switchmodel

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/internal/units"
)

// injectAll queues every spec with InjectAt (the feed's way: injection class, each
// packet's index its position).
func injectAll(n *Network, specs []pktSpec) {
	keys := map[FlowKey]KeyID{}
	for i, s := range specs {
		id, p := n.NewPacket()
		p.TraceIndex = int64(i)
		p.FlowID = s.flow
		p.Src, p.Dst = s.src, s.dst
		p.Length = s.length
		p.DSCP = s.dscp
		p.ECN = s.ecn
		p.Key = keyID(n, keys, s.key)
		n.InjectAt(s.at, n.Hosts()[s.src], id)
	}
}

// parResult is what a run leaves: the digest of every observation in order, the
// counters and every port's statistics.
type parResult struct {
	now    units.Time
	digest uint64
	obs    int
	c      Counters
	ports  []string
	stats  ParallelStats
}

// runClosPartitioned replays randomTraffic through smallClos (no buffer samples:
// the sampler is not partitioned yet) sequentially (of nil) or partitioned by of.
func runClosPartitioned(t *testing.T, of func(c *clos) ([]int32, int, units.Time)) parResult {
	return runClosMode(t, of, false)
}

// runClosMode is runClosPartitioned, with Drain's end (drain) or Run's.
func runClosMode(t *testing.T, of func(c *clos) ([]int32, int, units.Time), drain bool) parResult {
	t.Helper()
	o := &hashObs{h: fnv.New64a()}
	c := buildClos(t, smallClos, 3, Observers{o, o, o, o, o, nil}) // buffer samples every 10 us
	injectAll(c.net, randomTraffic(11, len(c.hosts), 8000, 20*units.Microsecond))
	var r parResult
	const limit = units.Second
	switch {
	case of == nil && drain:
		if !c.net.Drain(limit) {
			t.Fatal("not drained")
		}
	case of == nil:
		c.eng.Run()
	default:
		parts, n, L := of(c)
		var st ParallelStats
		var err error
		if drain {
			st, err = c.net.DrainPartitioned(parts, n, L, limit)
			if err == nil && !st.Drained {
				t.Fatal("not drained")
			}
		} else {
			st, err = c.net.RunPartitioned(parts, n, L)
		}
		if err != nil {
			t.Fatal(err)
		}
		r.stats = st
	}
	checkDrained(t, c.net)
	r.now = c.eng.Now()
	r.digest, r.obs, r.c = o.h.Sum64(), o.n, c.net.Counters()
	for _, nd := range c.net.Nodes() {
		for i := range nd.NumPorts() {
			r.ports = append(r.ports, fmt.Sprint(nd.Name(), i, nd.PortStats(i)))
		}
	}
	return r
}

// byName assigns partitions from a node's name.
func byName(c *clos, f func(name string) int32) []int32 {
	of := make([]int32, len(c.net.Nodes()))
	for i, nd := range c.net.Nodes() {
		of[i] = f(nd.Name())
	}
	return of
}

func podOf(name string) int32 {
	if strings.Contains(name, "-p1") {
		return 1
	}
	return 0
}

// docs/parallel.md: the partitioned engine gives the sequential engine's records
// (every observation in order, hashed), counters (events included) and port
// statistics, for any partition: by pod with the spines spread (cut links: fabric to
// spine, 2 us), pods and spines apart, three and eight partitions, and random
// assignments of every node (hosts apart from their racks too; lookahead the smallest
// cut delay, 500 ns), PFC, drops and ECN marks included.
func TestPartitionedMatchesSequential(t *testing.T) { testPartitioned(t, false) }

// DrainPartitioned ends where Drain does: after the event that empties the network,
// before the pause expiries and refreshes still pending then (their rows are not
// written), at the same time, with the same events handled.
func TestDrainPartitionedMatchesDrain(t *testing.T) {
	run := runClosMode(t, nil, false)
	drain := runClosMode(t, nil, true)
	if drain.c.Events >= run.c.Events || drain.now >= run.now {
		t.Fatalf("Drain handled %d events to %v, Run %d to %v: want fewer, earlier", drain.c.Events, drain.now, run.c.Events, run.now)
	}
	testPartitioned(t, true)
}

func testPartitioned(t *testing.T, drain bool) {
	want := runClosMode(t, nil, drain)
	if want.c.PFCFrames == 0 || want.c.CEMarked == 0 || want.c.DroppedTotal() == 0 {
		t.Fatalf("the traffic should pause, mark and drop: %+v", want.c)
	}
	cases := []struct {
		name string
		of   func(c *clos) ([]int32, int, units.Time)
	}{
		{"pods, spines spread", func(c *clos) ([]int32, int, units.Time) {
			return byName(c, func(n string) int32 {
				if strings.HasPrefix(n, "spine") {
					return int32(n[len(n)-1]-'0') % 2
				}
				return podOf(n)
			}), 2, 2 * units.Microsecond
		}},
		{"pods and spines apart", func(c *clos) ([]int32, int, units.Time) {
			return byName(c, func(n string) int32 {
				if strings.HasPrefix(n, "spine") {
					return 2
				}
				return podOf(n)
			}), 3, 2 * units.Microsecond
		}},
	}
	for _, parts := range []int{2, 3, 8} {
		for seed := range uint64(2) {
			cases = append(cases, struct {
				name string
				of   func(c *clos) ([]int32, int, units.Time)
			}{fmt.Sprintf("random %d seed %d", parts, seed), func(c *clos) ([]int32, int, units.Time) {
				rng := rand.New(rand.NewPCG(seed, uint64(parts)))
				of := make([]int32, len(c.net.Nodes()))
				for i := range of {
					of[i] = int32(rng.IntN(parts))
				}
				return of, parts, 500 * units.Nanosecond
			}})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := runClosMode(t, tc.of, drain)
			if got.now != want.now {
				t.Errorf("ends at %v, sequential %v", got.now, want.now)
			}
			if got.digest != want.digest || got.obs != want.obs {
				t.Errorf("observations %x (%d), sequential %x (%d)", got.digest, got.obs, want.digest, want.obs)
			}
			if got.c != want.c {
				t.Errorf("counters %+v\nsequential %+v", got.c, want.c)
			}
			if !slices.Equal(got.ports, want.ports) {
				t.Error("port statistics differ")
			}
			sum := got.stats.Global
			for _, e := range got.stats.Events {
				sum += e
			}
			if sum != want.c.Events || got.stats.Global == 0 || got.stats.Windows == 0 || got.stats.CutFrames == 0 {
				t.Errorf("stats %+v: events %d, want %d; windows and cut frames > 0", got.stats, sum, want.c.Events)
			}
			t.Logf("%d windows, %d cut frames, events by partition %v", got.stats.Windows, got.stats.CutFrames, got.stats.Events)
		})
	}
}

// A cut link shorter than the lookahead, a pending global event: refused, and
// nothing ran.
func TestPartitionedRefuses(t *testing.T) {
	o := &hashObs{h: fnv.New64a()}
	c := buildClos(t, smallClos, 3, Observers{o, o, nil, o, o, nil})
	injectAll(c.net, randomTraffic(11, len(c.hosts), 100, units.Millisecond))
	all1 := make([]int32, len(c.net.Nodes()))
	for i := range all1 {
		all1[i] = int32(i % 2)
	}
	if _, err := c.net.RunPartitioned(all1, 2, 600*units.Nanosecond); !errors.Is(err, ErrNotPartitioned) || !strings.Contains(err.Error(), "delay") {
		t.Fatalf("err %v, want a cut link's delay below the lookahead", err)
	}
	at(c.eng, 5, func(units.Time) {})
	if _, err := c.net.RunPartitioned(all1, 2, 500*units.Nanosecond); !errors.Is(err, ErrNotPartitioned) || !strings.Contains(err.Error(), "global") {
		t.Fatalf("err %v, want the pending global event", err)
	}
	if c.eng.Pending() != 101 || c.eng.Processed() != 0 {
		t.Fatalf("pending %d processed %d after the refusals, want 101 and 0", c.eng.Pending(), c.eng.Processed())
	}
	c.eng.Run()
	checkDrained(t, c.net)

}

// A drain that does not drain by its limit (1 us after the first injections of
// 8,000 packets over 20 us) ends partitioned as Drain does: the packets left are
// re-homed into the network, where InFlight, Buffered and ForEachOutstanding find
// them in the sequential run's places (a cut link's frames on its sender's link),
// and the observations, counters, port statistics and end time are Drain's; for
// the pod plan and plans of 2, 3 and 8.
func TestDrainPartitionedUndrained(t *testing.T) {
	type end struct {
		digest      uint64
		obs         int
		c           Counters
		now         units.Time
		held, walks string
	}
	run := func(of func(c *clos) ([]int32, int)) end {
		o := &hashObs{h: fnv.New64a()}
		c := buildClos(t, smallClos, 3, Observers{o, o, o, o, o, nil})
		injectAll(c.net, randomTraffic(11, len(c.hosts), 8000, 20*units.Microsecond))
		const limit = 3 * units.Microsecond
		if of == nil {
			if c.net.Drain(limit) {
				t.Fatal("drained: the test needs packets left")
			}
		} else {
			parts, k := of(c)
			st, err := c.net.DrainPartitioned(parts, k, 500*units.Nanosecond, limit)
			if err != nil || st.Drained {
				t.Fatalf("err %v drained %v", err, st.Drained)
			}
		}
		var e end
		e.digest, e.obs, e.c, e.now = o.h.Sum64(), o.n, c.net.Counters(), c.eng.Now()
		for _, nd := range c.net.Nodes() {
			e.held += fmt.Sprint(nd.Name(), nd.Buffered(), nd.InFlight(), " ")
		}
		walked := int64(0)
		c.net.ForEachOutstanding(func(nd Node, p *Packet) {
			walked++
			e.walks += fmt.Sprint(nd.Name(), p.FlowID, p.TraceIndex, p.Seq, p.Hops, " ")
		})
		if walked != e.c.Outstanding() {
			t.Fatalf("walked %d packets, %d outstanding", walked, e.c.Outstanding())
		}
		if err := c.net.CheckAccounting(); err != nil {
			t.Fatal(err)
		}
		return e
	}
	want := run(nil)
	if want.c.Outstanding() == 0 {
		t.Fatal("nothing left")
	}
	for _, k := range []int{2, 3, 8} {
		got := run(func(c *clos) ([]int32, int) {
			of := make([]int32, len(c.net.Nodes()))
			for i := range of {
				of[i] = int32(i % k) // every link may be cut: the lookahead is 500 ns
			}
			return of, k
		})
		if got.digest != want.digest || got.obs != want.obs || got.c != want.c || got.now != want.now {
			t.Errorf("%d partitions: obs %d %x counters %+v now %v, want %d %x %+v %v", k, got.obs, got.digest, got.c, got.now,
				want.obs, want.digest, want.c, want.now)
		}
		if got.held != want.held {
			t.Errorf("%d partitions: held\n%s\nwant\n%s", k, got.held, want.held)
		}
		if got.walks != want.walks {
			t.Errorf("%d partitions: ForEachOutstanding differs", k)
		}
	}
}

// benchClos is a larger Clos for the partitioned engine's benchmark: 2 pods of 4
// racks of 8 hosts (64 hosts), 4 fabric switches per pod, 4 spines per plane, all
// links 100 Gb/s, 1 us.
var benchClos = closSpec{pods: 2, racks: 4, hostsPerRack: 8, fabrics: 4, spines: 4,
	host: LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond},
	up:   LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond},
	top:  LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond}}

// BenchmarkPartitioned replays 200k random packets over 2 ms through benchClos
// sequentially (threads 1) and as 2 partitions (a pod each, spines spread): wall and
// CPU-free metrics per run, the windows, the events per window and the partitions'
// waiting share at barriers.
func BenchmarkPartitioned(b *testing.B) {
	specs := randomTraffic(5, 64, 200_000, 2*units.Millisecond)
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads%d", threads), func(b *testing.B) {
			var hops, events, windows int64
			var wait, busy float64
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				c := buildClos(b, benchClos, 3, Observers{})
				injectAll(c.net, specs)
				b.StartTimer()
				cpu0 := procCPU()
				if threads == 1 {
					c.eng.Run()
				} else {
					of := byName(c, func(n string) int32 {
						if strings.HasPrefix(n, "spine") {
							return int32(n[len(n)-1]-'0') % 2
						}
						return podOf(n)
					})
					st, err := c.net.RunPartitioned(of, 2, units.Microsecond)
					if err != nil {
						b.Fatal(err)
					}
					windows += st.Windows
					wait += st.Waiting.Seconds()
					busy += st.Busy.Seconds()
					if i == 0 {
						b.Logf("events by partition %v, %d windows (critical path %d events), %d cut frames; setup %v, wall %v, busy %v, barriers %v",
							st.Events, st.Windows, st.Critical, st.CutFrames, st.Setup, st.Wall, st.Busy, st.Barriers)
					}
				}
				cpu += procCPU() - cpu0
				cn := c.net.Counters()
				hops += cn.PacketHops
				events += int64(cn.Events)
			}
			b.ReportMetric(float64(hops)/b.Elapsed().Seconds(), "hops/s")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			if windows > 0 {
				b.ReportMetric(float64(events)/float64(windows), "events/window")
				b.ReportMetric(wait/(wait+busy), "waiting")
				b.ReportMetric(b.Elapsed().Seconds()/float64(windows)*1e9, "ns/window")
			}
		})
	}
}

// procCPU is the process's user+system CPU time.
func procCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// docs/parallel.md section 6, test 3: PFC across the partition boundary. A star
// whose switch (node 0) is in partition 0 and its hosts in partitions 1 and 2: four
// hosts send lossless (TC3) line-rate bursts to host 4, the switch pauses them, every
// pause and resume frame crosses a cut link. Each frame is received 84 wire bytes
// (6,720 ps at 100 Gb/s) plus the 1 us delay after it starts, in the partitioned run
// as in the sequential one; the PFC rows, deliveries and port statistics are equal.
func TestPartitionedPFCAcrossTheCut(t *testing.T) {
	l := LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond}
	run := func(part bool) (*obs, []string, Counters) {
		cfg := defaultSwitch()
		cfg.BufferSize = 4 * units.MiB
		cfg.BufferStatsReportInterval = 0 // the sampler is not partitioned yet
		st := newStarOpts(t, cfg, repeatLink(l, 5), Options{})
		var specs []pktSpec
		for i := 0; i < 400; i++ {
			for s := int32(0); s < 4; s++ {
				specs = append(specs, pktSpec{at: units.Time(i) * 123_040, src: s, dst: 4, length: 1500, dscp: 3 << 3, flow: int64(s)})
			}
		}
		injectAll(st.net, specs)
		if part {
			of := make([]int32, len(st.net.Nodes()))
			for i, h := range st.hosts {
				of[h.ID()] = 1 + int32(i%2)
			}
			if _, err := st.net.RunPartitioned(of, 3, units.Microsecond); err != nil {
				t.Fatal(err)
			}
		} else {
			st.eng.Run()
		}
		checkDrained(t, st.net)
		var ports []string
		for _, nd := range st.net.Nodes() {
			for i := range nd.NumPorts() {
				ports = append(ports, fmt.Sprint(nd.Name(), i, nd.PortStats(i)))
			}
		}
		return st.obs, ports, st.net.Counters()
	}
	seqObs, seqPorts, seqC := run(false)
	parObs, parPorts, parC := run(true)
	if seqC.PFCFrames == 0 {
		t.Fatal("no PFC frames: the test does not test")
	}
	if !slices.Equal(seqObs.pfc, parObs.pfc) || !slices.Equal(seqPorts, parPorts) || seqC != parC {
		t.Fatalf("partitioned PFC rows, port statistics or counters differ (%d and %d rows)", len(seqObs.pfc), len(parObs.pfc))
	}
	if len(seqObs.deliveries) != len(parObs.deliveries) {
		t.Fatalf("%d deliveries, sequential %d", len(parObs.deliveries), len(seqObs.deliveries))
	}
	for i := range seqObs.deliveries {
		if a, b := seqObs.deliveries[i], parObs.deliveries[i]; a.at != b.at || a.trace != b.trace {
			t.Fatalf("delivery %d: %d at %v, sequential %d at %v", i, b.trace, b.at, a.trace, a.at)
		}
	}
	// Every frame the switch starts towards a host arrives 6,720 ps + 1 us later.
	var tx, rx []units.Time
	for _, e := range parObs.pfc {
		switch {
		case e.Node == 0 && (e.Kind == PFCTxPause || e.Kind == PFCTxResume):
			tx = append(tx, e.Time+6_720+units.Microsecond)
		case e.Node != 0 && (e.Kind == PFCRxPause || e.Kind == PFCRxResume):
			rx = append(rx, e.Time)
		}
	}
	slices.Sort(tx)
	slices.Sort(rx)
	// A frame pausing several classes gives a row per class: compare the distinct times.
	if tx, rx = slices.Compact(tx), slices.Compact(rx); len(tx) == 0 || !slices.Equal(tx, rx) {
		t.Fatalf("pause frames received at %v, want their start + 6720 ps + 1 us: %v", rx, tx)
	}
	t.Logf("%d PFC frames, %d PFC rows, %d distinct frame times", parC.PFCFrames, len(parObs.pfc), len(tx))
}

// DrainPartitioned on a PFC star with 100 us links (windows of 100 us) and a low
// static Xoff: when the last packet is delivered, the hosts still hold pause expiries
// 36 us later, within the last window; they must not run (their events and rows after
// the end are not the sequential run's). (The senders' partitions pause at their
// last free before the end; the branches that resume a partition paused earlier
// with events before the end, or one that held nothing all window, are not reached
// by this test or by TestDrainPartitionedMatchesDrain: mutations of them survive.)
func TestDrainPartitionedStopsAtTheLastFree(t *testing.T) {
	l := LinkSpec{Speed: 400 * units.Gbps, PropagationDelay: 100 * units.Microsecond}
	run := func(part int) (*obs, []string, Counters, units.Time) {
		cfg := defaultSwitch()
		cfg.BufferSize = 256 * units.MiB
		cfg.Xoff = 50_000 // pause early: the senders stay paused, their timers pending
		cfg.BufferStatsReportInterval = 0
		st := newStarOpts(t, cfg, repeatLink(l, 5), Options{})
		var specs []pktSpec
		for i := 0; i < 400; i++ {
			for s := int32(0); s < 4; s++ {
				specs = append(specs, pktSpec{at: units.Time(i) * 30_760, src: s, dst: 4, length: 1500, dscp: 3 << 3, flow: int64(s)})
			}
		}
		injectAll(st.net, specs)
		if part > 0 {
			of := make([]int32, len(st.net.Nodes()))
			for i, h := range st.hosts {
				of[h.ID()] = int32(1 + i%part)
			}
			ps, err := st.net.DrainPartitioned(of, part+1, 100*units.Microsecond, units.Second)
			if err != nil || !ps.Drained {
				t.Fatal(err, ps.Drained)
			}
		} else if !st.net.Drain(units.Second) {
			t.Fatal("not drained")
		} else {
			nt, _ := st.eng.NextTime()
			if st.eng.Pending() == 0 || nt >= st.eng.Now()+l.PropagationDelay {
				t.Fatalf("sequential: end %v, %d pending, next at %v: want a timer pending within a window of the end", st.eng.Now(), st.eng.Pending(), nt)
			}
		}
		checkDrained(t, st.net)
		var ports []string
		for _, nd := range st.net.Nodes() {
			for i := range nd.NumPorts() {
				ports = append(ports, fmt.Sprint(nd.Name(), i, nd.PortStats(i)))
			}
		}
		return st.obs, ports, st.net.Counters(), st.eng.Now()
	}
	so, sp, sc, sn := run(0)
	if sc.PFCFrames == 0 {
		t.Fatal("no PFC")
	}
	for _, part := range []int{1, 2, 4} {
		po, pp, pc, pn := run(part)
		if pn != sn || pc != sc || !slices.Equal(so.pfc, po.pfc) || !slices.Equal(sp, pp) || len(so.deliveries) != len(po.deliveries) {
			t.Errorf("%d host partitions: end %v events %d pfc rows %d; sequential %v %d %d", part, pn, pc.Events, len(po.pfc), sn, sc.Events, len(so.pfc))
		}
	}
}

// The buffer sampler sleeps while the network is empty and an injection wakes it for
// the next multiple of its interval (10 us here). A first burst (its packets
// delivered by 152 us), then a second at 5,009.5 us, inside a window of 2 us (pods
// apart, the spines with the second pod or alone) that would cross 5,010 us while
// its first frames reach the racks: equal to the sequential run. (Removing the
// window's cap at the next multiple does not fail this test: at 5,009.5 us the
// sampler is found awake, a tick pending at 5,010 us, probably kept awake by the
// refreshed pause frames of the first burst's pauses; a test of a real wake inside
// a window is still to be written.)
func TestPartitionedSamplerWakes(t *testing.T) {
	specs := randomTraffic(11, 12, 2000, 20*units.Microsecond)
	for src := int32(1); src < 3; src++ { // 9000-byte frames that fill the rack at 5,011.2 us
		for range 3 {
			specs = append(specs, pktSpec{at: 5_009_500 * units.Nanosecond, src: src, dst: 0, length: 9000, dscp: 0, flow: int64(src)})
		}
	}
	for _, s := range randomTraffic(12, 12, 2000, 20*units.Microsecond) {
		s.at += 5_009_500 * units.Nanosecond
		specs = append(specs, s)
	}
	run := func(parts int) (uint64, int, Counters) {
		o := &hashObs{h: fnv.New64a()}
		c := buildClos(t, smallClos, 3, Observers{o, o, o, o, o, nil})
		injectAll(c.net, specs)
		if parts == 0 {
			c.eng.Run()
		} else {
			of := byName(c, func(n string) int32 {
				if strings.HasPrefix(n, "spine") {
					return int32(parts - 1)
				}
				return podOf(n)
			})
			if _, err := c.net.RunPartitioned(of, parts, 2*units.Microsecond); err != nil {
				t.Fatal(err)
			}
		}
		checkDrained(t, c.net)
		return o.h.Sum64(), o.n, c.net.Counters()
	}
	wd, wn, wc := run(0)
	for _, parts := range []int{2, 3} {
		if d, n, c := run(parts); d != wd || n != wn || c != wc {
			t.Errorf("%d partitions: observations %x (%d), counters %+v; sequential %x (%d) %+v", parts, d, n, c, wd, wn, wc)
		}
	}
}
