package switchmodel

import (
	"syscall"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel/ecmp"
)

// pacer injects one packet per period from host src to dst, forever (benchmarks).
type pacer struct {
	net      *Network
	h        HandlerID
	src      *Host
	dst      int32
	period   units.Time
	left     int
	length   int32
	dscp     uint8
	injected int
}

func (p *pacer) Handle(now units.Time, kind int32, arg int64) {
	id, pk := p.net.NewPacket()
	pk.Src, pk.Dst, pk.Length, pk.DSCP, pk.ECN = p.src.Index(), p.dst, p.length, p.dscp, ECT0
	pk.TraceIndex = int64(p.injected)
	p.net.Inject(p.src, id)
	p.injected++
	if p.left--; p.left > 0 {
		p.net.eng.Schedule(now+p.period, p.h, 0, 0)
	}
}

// BenchmarkPacketHop measures the switch model's work per packet-hop: a host sends
// 1500-byte packets at line rate through two switches to another host (3 packet-hops
// per packet), including admission, buffer accounting, ECN, scheduling and links.
func BenchmarkPacketHop(b *testing.B) {
	l := LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond}
	eng := NewEngine()
	net := NewNetwork(eng, Options{Seed: 1})
	cfg := defaultSwitch()
	s1, _ := net.AddSwitch("s1", config.TierNone, &cfg, nil)
	s2, _ := net.AddSwitch("s2", config.TierNone, &cfg, nil)
	h0, _ := net.AddHost("h0")
	h1, _ := net.AddHost("h1")
	_, a, _ := net.Connect(h0, s1, l)
	x, y, _ := net.Connect(s1, s2, l)
	_, c, _ := net.Connect(h1, s2, l)
	_ = a
	set1, _ := s1.AddEqualCostSet([]int{x})
	set2, _ := s2.AddEqualCostSet([]int{c})
	s1.SetRoute(h1.Index(), set1)
	s2.SetRoute(h1.Index(), set2)
	_ = y
	if _, err := net.Start(); err != nil {
		b.Fatal(err)
	}
	p := &pacer{net: net, src: h0, dst: h1.Index(), length: 1500, dscp: 3 << 3,
		period: units.SerializationTime(1538, l.Speed), left: b.N}
	p.h = eng.Register(p)
	eng.Schedule(0, p.h, 0, 0)
	// Warm the arena so steady state allocates nothing.
	b.ReportAllocs()
	b.ResetTimer()
	done := cpuClock(b, func() float64 { return float64(net.hops) }, "hop")
	eng.Run()
	b.StopTimer()
	done()
	cn := net.Counters()
	if cn.Delivered != int64(b.N) {
		b.Fatalf("delivered %d of %d", cn.Delivered, b.N)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(cn.PacketHops), "ns/hop")
	b.ReportMetric(float64(cn.PacketHops)/b.Elapsed().Seconds()/1e6, "Mhops/s")
	b.ReportMetric(float64(cn.Events)/float64(cn.PacketHops), "events/hop")
}

// permPacer makes every host send to host (i+shift) mod H at a fraction of line rate,
// with a new flow key per packet group, until left packets were sent in total.
type permPacer struct {
	net    *Network
	h      HandlerID
	hosts  []*Host
	period units.Time
	left   int
	n      int
	keys   map[FlowKey]KeyID
}

func (p *permPacer) Handle(now units.Time, kind int32, arg int64) {
	src := p.hosts[arg]
	dst := (int(arg) + len(p.hosts)/2 + 1) % len(p.hosts)
	id, pk := p.net.NewPacket()
	pk.Src, pk.Dst, pk.Length, pk.DSCP = src.Index(), int32(dst), 1500, uint8(p.n%2)*3<<3
	if p.keys == nil {
		p.keys = map[FlowKey]KeyID{}
	}
	pk.Key = keyID(p.net, p.keys, ecmp.MakeKey([4]byte{byte(arg)}, [4]byte{byte(dst)}, ecmp.ProtoUDP, uint16(p.n>>4)<<8, 0, false))
	pk.TraceIndex = int64(p.n)
	p.n++
	p.net.Inject(src, id)
	if p.left--; p.left > len(p.hosts) {
		p.net.eng.Schedule(now+p.period, p.h, 0, arg)
	}
}

// BenchmarkClosHops measures packet-hops through a small three-tier Clos (12 hosts,
// 4 racks, 4 fabric, 4 spines, ecmp balancers) with every host sending across pods at
// half of line rate: the per-hop cost replay sees, with Select and both packet kinds.
func BenchmarkClosHops(b *testing.B) {
	c := buildClos(b, smallClos, 1, Observers{})
	p := &permPacer{net: c.net, hosts: c.hosts, left: b.N + len(c.hosts),
		period: 2 * units.SerializationTime(1538, smallClos.host.Speed) * 4}
	p.h = c.eng.Register(p)
	for i := range c.hosts {
		c.eng.Schedule(units.Time(i), p.h, 0, int64(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	done := cpuClock(b, func() float64 { return float64(c.net.hops) }, "hop")
	c.eng.Run()
	b.StopTimer()
	done()
	cn := c.net.Counters()
	b.ReportMetric(float64(cn.PacketHops)/b.Elapsed().Seconds()/1e6, "Mhops/s")
	b.ReportMetric(float64(cn.PacketHops)/float64(max(cn.Injected, 1)), "hops/pkt")
}

// cpuTime is the process's user+system CPU time: on a shared machine the wall-clock
// time per op depends on the neighbours, CPU time much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuClock reports CPU ns per op (and per unit, when unit is not "") at the end of a
// benchmark: defer cpuClock(b, n, "hop")() after ResetTimer.
func cpuClock(b *testing.B, per func() float64, unit string) func() {
	c0 := cpuTime()
	return func() {
		c := float64(cpuTime() - c0)
		b.ReportMetric(c/float64(b.N), "cpu-ns/op")
		if unit != "" {
			b.ReportMetric(c/per(), "cpu-ns/"+unit)
		}
	}
}
