package tracegen

import (
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/units"
)

func TestBackgroundGenerator(t *testing.T) {
	hosts := Hosts(0, 1)
	b := &Background{Duration: 3 * units.Second, Hosts: hosts, Flows: 2000, MaxPackets: 64,
		Mix: []Share{
			{Class: RoCEv2, Weight: 3, Lengths: []int{RoCELength}},
			{Class: TCPData, Weight: 1, Lengths: []int{MaxLength, 1500}},
		},
		Rates: []units.BitRate{10 * units.Gbps}}
	fs, err := b.Generate(rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	srcs := map[netip.Addr]int{}
	roce := 0
	for i, f := range fs {
		if err := f.Check(); err != nil {
			t.Fatalf("flow %d: %v", i, err)
		}
		srcs[f.Src]++
		if f.Src == f.Dst || f.Start < 0 || f.Start >= b.Duration || f.Packets < 1 || f.Packets > 64 {
			t.Fatalf("flow %d: %+v", i, f)
		}
		if f.LastLength > f.Length || (f.Packets > 1 && f.LastLength < minLength(f.Proto)) {
			t.Fatalf("flow %d: last length %d of %d", i, f.LastLength, f.Length)
		}
		if f.DstPort == RoCEPort {
			roce++
			if f.DSCP != 26 || f.ECN != ECT0 || f.Length != RoCELength {
				t.Fatalf("flow %d: RoCE flow %+v", i, f)
			}
		}
	}
	// Sources go round the hosts: 2000 flows over 128 hosts is 15 or 16 each.
	for _, h := range hosts {
		if n := srcs[h]; n != 15 && n != 16 {
			t.Errorf("host %v sources %d flows, want 15 or 16", h, n)
		}
	}
	if share := float64(roce) / float64(len(fs)); math.Abs(share-0.75) > 0.03 {
		t.Errorf("RoCE share %.3f, want 0.75 by weight", share)
	}
}

func TestManyFlowsGenerator(t *testing.T) {
	m := ManyFlowsMix()
	fs, err := m.Generate(rand.New(rand.NewPCG(3, 1)))
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		a, b   netip.Addr
		sp, dp uint16
		p      layers.IPProtocol
	}
	seen := map[key]bool{}
	tcp, aToB := 0, 0
	for i, f := range fs {
		k := key{f.Src, f.Dst, f.SrcPort, f.DstPort, f.Proto}
		if seen[k] {
			t.Fatalf("flow %d: duplicate 5-tuple %+v", i, k)
		}
		seen[k] = true
		if f.Src.As4()[1] == f.Dst.As4()[1] {
			t.Fatalf("flow %d: %v -> %v stays in one pod", i, f.Src, f.Dst)
		}
		if f.Src.As4()[1] == 0 {
			aToB++
		}
		if f.Proto == layers.IPProtocolTCP {
			tcp++
			if f.ECN != ECT0 || f.SrcPort < 32768 || f.SrcPort > 60999 {
				t.Fatalf("flow %d: TCP %+v", i, f)
			}
		} else if f.ECN != NotECT || f.DSCP != 0 {
			t.Fatalf("flow %d: UDP %+v", i, f)
		}
		if f.DstPort < 1024 || f.Start >= m.Window || f.Burst != 8 || f.Rate != 25*units.Gbps {
			t.Fatalf("flow %d: %+v", i, f)
		}
	}
	if len(fs) != 4000 || math.Abs(float64(tcp)/4000-0.6) > 0.03 || math.Abs(float64(aToB)/4000-0.5) > 0.03 {
		t.Errorf("%d flows, %d TCP, %d from pod 0", len(fs), tcp, aToB)
	}
}

func TestStreamAndIncastGenerators(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	s := &Stream{Src: HostAddr(0, 0, 0), Dst: HostAddr(1, 0, 0), Class: Expedited, Duration: units.Second,
		Length: 200, Interval: 20 * units.Millisecond}
	fs, err := s.Generate(r)
	if err != nil || len(fs) != 1 || fs[0].Packets != 50 || fs[0].DSCP != 46 || fs[0].Interval != 20*units.Millisecond {
		t.Fatalf("voice stream: %+v, %v", fs, err)
	}
	// 10 Gb/s of 4140-byte packets: one every 3.3424 us, 299 in 1 ms.
	s = &Stream{Src: HostAddr(0, 0, 0), Dst: HostAddr(1, 0, 0), Class: RoCEv2, Duration: units.Millisecond,
		Length: RoCELength, Rate: 10 * units.Gbps}
	if fs, err = s.Generate(r); err != nil || fs[0].Packets != 299 || fs[0].DstPort != RoCEPort {
		t.Fatalf("paced stream: %+v, %v", fs, err)
	}
	in := DemoLossy()
	if fs, err = in.Generate(r); err != nil || len(fs) != 16 || fs[0].DstPort != 5201 || fs[0].Packets != 553 {
		t.Fatalf("TCP incast: %d flows, %v", len(fs), err)
	}
	for j, f := range fs {
		// Sender j starts j/16 of a 723.04 ns packet time after the start.
		if want := in.Start + units.Time(j)*723_040/16; f.Start != want || f.Rate != LineRate {
			t.Fatalf("sender %d starts at %v at %v, want %v at line rate", j, f.Start, f.Rate, want)
		}
	}
	for _, bad := range []Incast{{}, {Senders: in.Senders}, {Senders: in.Senders, Duration: 1, Rate: -1}} {
		if _, err := bad.Generate(r); err == nil {
			t.Errorf("incast %+v: no error", bad)
		}
	}
}
