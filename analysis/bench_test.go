package analysis

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/records"
)

// clos is a generated Clos topology in the shape of docs/model.md#clos-builder.
type clos struct {
	nodes  []string
	tiers  []records.Tier
	links  map[int32][]int32 // node -> peers in port order
	hosts  []int32
	rackOf map[int32]int32
	racks  []int32 // by pod*racksPerPod + r
	fabric [][]int32
	pods   int
}

func newClos(pods, racksPerPod, hostsPerRack, fabricPerPod, spinesPerPlane int) *clos {
	c := &clos{links: map[int32][]int32{}, rackOf: map[int32]int32{}, pods: pods}
	add := func(name string, t records.Tier) int32 {
		c.nodes = append(c.nodes, name)
		c.tiers = append(c.tiers, t)
		return int32(len(c.nodes) - 1)
	}
	link := func(a, b int32) {
		c.links[a] = append(c.links[a], b)
		c.links[b] = append(c.links[b], a)
	}
	spines := make([][]int32, fabricPerPod)
	for pl := range fabricPerPod {
		for s := range spinesPerPlane {
			spines[pl] = append(spines[pl], add(fmt.Sprintf("spine-s%d-%d", pl, s), records.TierSpine))
		}
	}
	for p := range pods {
		var fabs []int32
		for f := range fabricPerPod {
			fabs = append(fabs, add(fmt.Sprintf("fabric-p%d-f%d", p, f), records.TierFabric))
		}
		c.fabric = append(c.fabric, fabs)
		for r := range racksPerPod {
			rack := add(fmt.Sprintf("rack-p%d-r%d", p, r), records.TierRack)
			c.racks = append(c.racks, rack)
			for h := range hostsPerRack {
				host := add(fmt.Sprintf("host-p%d-r%d-h%d", p, r, h), records.TierHost)
				c.hosts = append(c.hosts, host)
				c.rackOf[host] = rack
				link(host, rack)
			}
			for _, f := range fabs {
				link(rack, f)
			}
		}
	}
	for p := range pods {
		for pl, f := range c.fabric[p] {
			for _, s := range spines[pl] {
				link(f, s)
			}
		}
	}
	return c
}

// upPorts returns the ports of a switch's equal-cost up set (peers of a higher tier).
func (c *clos) upPorts(n int32) []int32 {
	var ps []int32
	for port, peer := range c.links[n] {
		if c.tiers[peer] > c.tiers[n] {
			ps = append(ps, int32(port))
		}
	}
	return ps
}

func (c *clos) port(a, b int32) int32 {
	return int32(slices.Index(c.links[a], b))
}

// writeBenchRun writes a complete run with nFlows flows and about nEvents PFC events.
func writeBenchRun(tb testing.TB, dir string, nFlows, nEvents int) {
	c := newClos(2, 4, 16, 4, 4)
	d := records.Dictionaries{Nodes: c.nodes}
	r := rand.New(rand.NewPCG(1, 2))
	rows := map[string]int64{}
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	const simPs = int64(1e12) // 1 s
	// ports
	pw, err := records.NewPortsWriter(filepath.Join(dir, records.PortsFile), d)
	must(err)
	for n := range c.nodes {
		for port, peer := range c.links[int32(n)] {
			for _, tc := range []uint8{0, 3} {
				must(pw.Append(&records.PortRow{Node: int32(n), Tier: c.tiers[n], Port: int32(port), Peer: peer, TC: tc, TxPackets: 1000, ECNMarked: int64(r.IntN(10))}))
			}
		}
	}
	must(pw.Close())
	rows[records.PortsFile] = pw.Rows()
	// flows and loadbalance
	type mk struct{ n, m int32 }
	lbFlows, lbBytes := map[mk]int64{}, map[mk]int64{}
	fw, err := records.NewFlowsWriter(filepath.Join(dir, records.FlowsFile), d)
	must(err)
	var drops int64
	for i := range nFlows {
		src := c.hosts[r.IntN(len(c.hosts))]
		dst := c.hosts[r.IntN(len(c.hosts))]
		for c.rackOf[dst] == c.rackOf[src] && r.IntN(8) != 0 {
			dst = c.hosts[r.IntN(len(c.hosts))]
		}
		f := records.FlowRow{FlowID: int64(i), Src: ipaddr.From4([4]byte{10, 0, byte(src >> 8), byte(src)}), Dst: ipaddr.From4([4]byte{10, 0, byte(dst >> 8), byte(dst)}),
			Proto: 17, Sport: uint16(r.IntN(65536)), Dport: 4791, DSCP: 26, TC: 3, SrcHost: src, DstHost: dst,
			Packets: 10, Bytes: int64(1000 + r.IntN(100000)), FirstPs: r.Int64N(simPs), RackMember: -1, FabricMember: -1}
		f.LastPs = min(simPs, f.FirstPs+r.Int64N(simPs/100))
		f.Dropped = int64(r.IntN(20) / 18)
		drops += f.Dropped
		f.Delivered = f.Packets - f.Dropped
		f.DelayMeanPs = int64(2e6 + r.IntN(5e6))
		rack := c.rackOf[src]
		if c.rackOf[dst] != rack {
			f.RackMember = int32(r.IntN(4))
			lbFlows[mk{rack, f.RackMember}]++
			lbBytes[mk{rack, f.RackMember}] += f.Bytes
			fab := c.links[rack][c.upPorts(rack)[f.RackMember]]
			if c.nodes[rack][6] != c.nodes[c.rackOf[dst]][6] { // other pod
				f.FabricMember = int32(r.IntN(4))
				lbFlows[mk{fab, f.FabricMember}]++
				lbBytes[mk{fab, f.FabricMember}] += f.Bytes
			}
		}
		must(fw.Append(&f))
	}
	must(fw.Close())
	rows[records.FlowsFile] = fw.Rows()
	lw, err := records.NewLoadBalanceWriter(filepath.Join(dir, records.LoadBalanceFile), d)
	must(err)
	for n := range c.nodes {
		if c.tiers[n] != records.TierRack && c.tiers[n] != records.TierFabric {
			continue
		}
		for m, port := range c.upPorts(int32(n)) {
			k := mk{int32(n), int32(m)}
			must(lw.Append(&records.LoadBalanceRow{Node: int32(n), Tier: c.tiers[n], Member: int32(m), Port: port, Peer: c.links[int32(n)][port],
				Flows: lbFlows[k], Flowlets: lbFlows[k], Bytes: lbBytes[k], Packets: lbFlows[k] * 10, HashMethod: records.HashCRC32}))
		}
	}
	must(lw.Close())
	rows[records.LoadBalanceFile] = lw.Rows()
	// PFC: episodes of a rack pausing a fabric port, the fabric pausing a spine port
	// and sometimes the spine pausing the other pod's fabric, with refreshes.
	var evs []records.PFCRow
	pause := func(t int64, paused, pauser int32, refresh int, end int64, resume bool) {
		evs = append(evs, records.PFCRow{TimePs: t, Node: pauser, Port: c.port(pauser, paused), Peer: paused, TC: 3, Event: records.EventTxPause, Quanta: 65535})
		evs = append(evs, records.PFCRow{TimePs: t, Node: paused, Port: c.port(paused, pauser), Peer: pauser, TC: 3, Event: records.EventRxPause, Quanta: 65535})
		for k := 1; k <= refresh; k++ {
			evs = append(evs, records.PFCRow{TimePs: t + int64(k)*(end-t)/int64(refresh+1), Node: paused, Port: c.port(paused, pauser), Peer: pauser, TC: 3, Event: records.EventRxPause, Quanta: 65535})
		}
		kind := records.EventExpire
		if resume {
			kind = records.EventRxResume
		}
		evs = append(evs, records.PFCRow{TimePs: end, Node: paused, Port: c.port(paused, pauser), Peer: pauser, TC: 3, Event: kind})
	}
	for len(evs) < nEvents {
		t := r.Int64N(simPs - 1e9)
		pod := r.IntN(c.pods)
		rack := c.racks[pod*4+r.IntN(4)]
		fab := c.fabric[pod][r.IntN(4)]
		d1 := int64(1e6 + r.IntN(5e8))
		pause(t, fab, rack, r.IntN(3), t+d1, r.IntN(2) == 0)
		if r.IntN(2) == 0 {
			spine := c.links[fab][c.upPorts(fab)[r.IntN(4)]]
			t2 := t + d1/4
			pause(t2, spine, fab, r.IntN(2), t2+d1/2, true)
		}
	}
	slices.SortStableFunc(evs, func(a, b records.PFCRow) int { return cmp.Compare(a.TimePs, b.TimePs) })
	ew, err := records.NewPFCWriter(filepath.Join(dir, records.PFCFile), d)
	must(err)
	for i := range evs {
		must(ew.Append(&evs[i]))
	}
	must(ew.Close())
	rows[records.PFCFile] = ew.Rows()
	// drops, delay, buffer
	dw, err := records.NewDropsWriter(filepath.Join(dir, records.DropsFile), d)
	must(err)
	for i := int64(0); i < drops; i++ {
		must(dw.Append(&records.DropRow{TimePs: i * (simPs / max(drops, 1)), Node: c.racks[int(i)%len(c.racks)], Tier: records.TierRack, TC: 3, Reason: records.ReasonHeadroom, FlowID: i, Bytes: 1000}))
	}
	must(dw.Close())
	rows[records.DropsFile] = dw.Rows()
	yw, err := records.NewDelayWriter(filepath.Join(dir, records.DelayFile), d)
	must(err)
	for k := int64(0); k < 40; k++ {
		must(yw.Append(&records.DelayRow{TC: 3, LoPs: 1 << k, HiPs: 2 << k, Packets: int64(r.IntN(1000))}))
	}
	must(yw.Close())
	rows[records.DelayFile] = yw.Rows()
	bw, err := records.NewBufferWriter(filepath.Join(dir, records.BufferFile), d)
	must(err)
	for t := int64(0); t < simPs; t += 1e8 { // every 100 us
		for _, rack := range c.racks {
			v := int64(r.IntN(1 << 20))
			must(bw.Append(&records.BufferRow{TimePs: t, Node: rack, SharedBytes: v, IngressBytes: v, EgressBytes: v}))
		}
	}
	must(bw.Close())
	rows[records.BufferFile] = bw.Rows()
	run := &records.Run{Version: "bench", Seed: 1, HashMethod: records.HashCRC32, Records: rows, Complete: true,
		Trace:      json.RawMessage(fmt.Sprintf(`{"packets": %d, "flows": %d}`, 10*nFlows, nFlows)),
		Simulation: records.Simulation{SimTimePs: simPs, Injected: int64(10 * nFlows), Dropped: map[records.DropReason]int64{records.ReasonHeadroom: drops}, LosslessDrops: drops}}
	must(records.WriteRun(filepath.Join(dir, records.RunFile), run))
}

func benchLoadAnalyze(b *testing.B, flows, events int) {
	dir := b.TempDir()
	writeBenchRun(b, dir, flows, events)
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		run, err := Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		s, err := Analyze(run, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if b.N == 1 {
			b.ReportMetric(float64(len(s.PFC.Storms)), "storms")
			b.ReportMetric(float64(s.PFC.PauseIntervals), "intervals")
		}
	}
	b.StopTimer()
	// CPU time (user+system) per op: the machine is shared, wall time is not ours alone.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user+system CPU time in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkLoadAnalyze: Load + Analyze of a run with N flows and N PFC events.
func BenchmarkLoadAnalyze(b *testing.B) {
	for _, n := range []int{250_000, 1_000_000} {
		b.Run(fmt.Sprintf("flows=events=%d", n), func(b *testing.B) { benchLoadAnalyze(b, n, n) })
	}
}

// BenchmarkCompareBootstrap: the bootstrap of one run's 1M flows (B = 20 replicates;
// the cost is linear in B); fct: every flow completed, so that the slowdown p50 and
// p99 are resampled too (the p50 visits half the completed flows per replicate).
func BenchmarkCompareBootstrap(b *testing.B) {
	for _, fct := range []bool{false, true} {
		b.Run(fmt.Sprintf("fct=%v", fct), func(b *testing.B) {
			run := syntheticRun("crc32", 1_000_000, false, 1)
			if fct {
				r := rand.New(rand.NewPCG(9, 9))
				for i := range run.Flows.Flows {
					f := &run.Flows.Flows[i]
					f.Data, f.SizeBytes, f.Slowdown = true, int64(f.Bytes), 1+r.ExpFloat64()
				}
			}
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			for range b.N {
				if _, err := Compare([]*Run{run}, Options{Bootstrap: 20, Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkEpisodes: storm episodes of 1M pause intervals.
func BenchmarkEpisodes(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	nodes := make(Nodes, 200)
	for i := range nodes {
		nodes[i] = fmt.Sprintf("n%d", i)
	}
	ivs := make([]PauseInterval, 1_000_000)
	for i := range ivs {
		s := r.Int64N(1e12)
		ivs[i] = PauseInterval{PortClass: PortClass{NodeID(r.IntN(200)), int32(r.IntN(8)), 3}, Peer: NodeID(r.IntN(200)), StartPs: s, EndPs: s + r.Int64N(1e7)}
	}
	slices.SortFunc(ivs, func(a, b PauseInterval) int { return cmp.Compare(a.StartPs, b.StartPs) })
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		Episodes(ivs, nodes, 0)
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// BenchmarkVictimCounter: the victim search of 1M flows (half of them in the paused
// class, six hops each, up to 64 ms long, in random time order as in the synthetic
// run of cmd/analyze) against 250k pause intervals (20 us to 2 ms) on 256
// port-classes over 45 s: one op is NewVictimCounter and the 1M Add calls.
func BenchmarkVictimCounter(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const span = 45_000_000_000_000
	ports := make([]PortKey, 256)
	for i := range ports {
		ports[i] = PortKey{NodeID(i / 4), int32(i % 4)}
	}
	ivs := make([]PauseInterval, 250_000)
	for i := range ivs {
		s, p := r.Int64N(span), ports[r.IntN(len(ports))]
		ivs[i] = PauseInterval{PortClass: PortClass{p.Node, p.Port, 3}, StartPs: s, EndPs: s + 20_000_000 + r.Int64N(2_000_000_000)}
	}
	slices.SortFunc(ivs, func(a, b PauseInterval) int { return cmp.Compare(a.StartPs, b.StartPs) })
	eps := make([]Episode, len(ivs)) // one episode per interval: the search is what is timed
	for i := range eps {
		eps[i] = Episode{Intervals: []int32{int32(i)}, Depth: 1 + i%2, DurationPs: ivs[i].EndPs - ivs[i].StartPs}
	}
	flows := make([]FlowPath, 1_000_000)
	for i := range flows {
		first := r.Int64N(span)
		fl := FlowPath{FlowID: uint64(i), TC: uint8(3 * r.IntN(2)), FirstPs: first, LastPs: first + r.Int64N(64_000_000_000)}
		for range 6 {
			fl.Hops = append(fl.Hops, ports[r.IntN(len(ports))])
		}
		flows[i] = fl
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		v := NewVictimCounter(eps, ivs, MaxVictimIDs)
		for i := range flows {
			v.Add(&flows[i])
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}
