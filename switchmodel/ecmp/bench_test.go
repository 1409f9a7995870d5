package ecmp

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Benchmarks of the per-packet path. Keys rotate over a fixed pool of flows so the
// flow table holds only existing flows (steady state).

const benchFlows = 1024

func benchKeys() []Key { return randomFlows(9, benchFlows) }

// BenchmarkHash: the method's hash plus hash mod n (the pure member choice).
func BenchmarkHash(b *testing.B) {
	keys := benchKeys()
	for _, m := range AllMethods {
		b.Run(m.String(), func(b *testing.B) {
			b.ReportAllocs()
			sum := 0
			for i := 0; b.Loop(); i++ {
				sum += Member(m, 0x5A17, &keys[i%benchFlows], 4)
			}
			_ = sum
		})
	}
}

// BenchmarkSelectNone: Balancer.Select with LoadBalancing none (hash, member choice
// and the record update, including the flow lookup that counts distinct flows).
func BenchmarkSelectNone(b *testing.B) {
	keys := benchKeys()
	for _, m := range AllMethods {
		b.Run(m.String(), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Method, cfg.Salt = m, 0x5A17
			bal := mustBalancer(b, cfg)
			set := bal.AddSet(4)
			for i := range keys {
				bal.Select(0, set, &keys[i], 0, 1500, nil)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				bal.Select(units.Time(i), set, &keys[i%benchFlows], 0, 1500, nil)
			}
		})
	}
}

// BenchmarkSelectFlowlet: flowlet load balancing with the default method; "continue"
// keeps every flow inside its flowlet, "new" makes every packet start a flowlet
// (4-member scan of the view).
func BenchmarkSelectFlowlet(b *testing.B) {
	keys := benchKeys()
	for _, c := range []struct {
		name  string
		table int
		step  units.Time
	}{
		{"exact/continue", 0, 1},
		{"exact/new", 0, DefaultGap},
		{"hashed4096/continue", 4096, 1},
		{"hashed4096/new", 4096, DefaultGap},
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg := flowletConfig()
			cfg.FlowTableSize = c.table
			bal := mustBalancer(b, cfg)
			set := bal.AddSet(4)
			v := newView(3000, 1500, 0, 1500)
			for i := range keys {
				bal.Select(0, set, &keys[i], 0, 1500, v)
			}
			now := units.Time(0)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				now += c.step
				bal.Select(now, set, &keys[i%benchFlows], 0, 1500, v)
			}
		})
	}
}

// BenchmarkHash6 is BenchmarkHash on 37-byte IPv6 keys (the IPv4 flows' addresses
// in fd00::/8).
func BenchmarkHash6(b *testing.B) {
	keys := benchKeys()
	for i, k := range keys {
		src, dst := k.Src().As4(), k.Dst().As4()
		keys[i] = MakeKey6([16]byte{0xfd, 1, 12: src[0], 13: src[1], 14: src[2], 15: src[3]},
			[16]byte{0xfd, 2, 12: dst[0], 13: dst[1], 14: dst[2], 15: dst[3]}, k.Proto(), k.SrcPort(), k.DstPort(), false)
	}
	for _, m := range AllMethods {
		b.Run(m.String(), func(b *testing.B) {
			b.ReportAllocs()
			sum := 0
			for i := 0; b.Loop(); i++ {
				sum += Member(m, 0x5A17, &keys[i%benchFlows], 4)
			}
			_ = sum
		})
	}
}
