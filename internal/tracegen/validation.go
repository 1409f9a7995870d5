package tracegen

import (
	"fmt"
	"math/rand/v2"
	"net/netip"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Backlog is an N-to-1 transfer whose every packet is available at Start: each sender
// hands Packets packets of Length bytes to its transport at once (Flow.AtOnce), for a
// closed-loop replay to send as fast as congestion control allows. Its flows' packets
// share one timestamp: use it in a Scenario with Ties.
type Backlog struct {
	Start    units.Time
	Senders  []netip.Addr
	Receiver netip.Addr
	Class    Class
	Packets  int // per sender, >= 1
	Length   int // packet size L
}

// Generate implements Generator.
func (b *Backlog) Generate(r *rand.Rand) ([]Flow, error) {
	if len(b.Senders) == 0 || b.Packets < 1 {
		return nil, fmt.Errorf("backlog needs senders and at least one packet each")
	}
	out := make([]Flow, len(b.Senders))
	for j, s := range b.Senders {
		f := newFlow(b.Class, s, b.Receiver, randomPort(r, b.Class, false), randomPort(r, b.Class, true))
		f.Start, f.Packets, f.Length, f.AtOnce = b.Start, b.Packets, b.Length, true
		out[j] = f
	}
	return out, nil
}

// Validation returns the scenarios committed under testdata/validation, the traces of
// docs/validation.md's cross-checks with other simulators: HPCCS1(16) and its lone
// flow HPCCS1(1).
func Validation() []*Scenario { return []*Scenario{HPCCS1(HPCCS1Senders), HPCCS1(1)} }

// The S1 scenario of docs/validation.md.
const (
	// HPCCS1Senders is S1's number of senders.
	HPCCS1Senders = 16
	// HPCCS1Packets is the packets each S1 sender sends.
	HPCCS1Packets = 2000
	// HPCCS1Length is the IPv4 total length of an S1 packet: 20 IPv4 + 8 UDP + 1006
	// (ns-3's 6-byte sequence header and its 1000-byte payload), so that the frame
	// (L + 18 = 1052 bytes) plus preamble and gap takes the 1072 wire bytes of ns-3's
	// 1048-byte packet and 24-byte inter-frame gap.
	HPCCS1Length = 1034
)

// HPCCS1 is the S1 cross-check with HPCC's ns-3 RDMA stack (docs/validation.md), for
// a topology of one rack of 17 hosts (Topology Pods 1, RacksPerPod 1, HostsPerRack 17,
// FabricPerPod 1): n senders, 10.0.0.1 .. 10.0.0.n (hosts h0 .. h(n-1) under the
// subnet mapping), each hand one RoCEv2 flow (UDP 4791, DSCP 26, ECT(0)) of
// HPCCS1Packets packets of HPCCS1Length bytes to its transport at t = 0, towards
// 10.0.0.17 (host h16 with 16 senders; h1 with one: the subnet mapping numbers the
// endpoints it sees). Written with ties: every packet of the trace has timestamp 0.
// HPCCS1(16) is hpcc-s1.pcap, HPCCS1(1) hpcc-s1-lone.pcap.
func HPCCS1(n int) *Scenario {
	senders := make([]netip.Addr, n)
	for i := range senders {
		senders[i] = HostAddr(0, 0, i)
	}
	name := "hpcc-s1.pcap"
	if n == 1 {
		name = "hpcc-s1-lone.pcap"
	}
	b := Backlog{Senders: senders, Receiver: HostAddr(0, 0, HPCCS1Senders), Class: RoCEv2,
		Packets: HPCCS1Packets, Length: HPCCS1Length}
	return &Scenario{Name: name, Seed: 27, Epoch: epoch, Snaplen: 54, Ties: true, Generators: []Generator{&b}}
}
