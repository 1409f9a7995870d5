package tracegen

import (
	"net/netip"
	"time"

	"github.com/google/gopacket/layers"
	"github.com/tracefabric/tracefabric/internal/units"
)

// epoch is time 0 of the committed scenarios.
var epoch = time.Date(2026, time.January, 15, 12, 0, 0, 0, time.UTC)

// us and ms shorten the scenario tables.
const (
	us = units.Microsecond
	ms = units.Millisecond
)

// Committed returns the scenarios committed under testdata/pcaps, by file name.
func Committed() []*Scenario {
	return []*Scenario{Demo(), IncastScenario(), ManyFlowsScenario(), TCPIncastScenario(), IPv6Scenario(), MixedScenario(), MidConnectionScenario(),
		RequestResponseScenario()}
}

// hostsOf returns HostAddr(pod, rack, h) for each h.
func hostsOf(pod, rack int, hosts ...int) []netip.Addr {
	out := make([]netip.Addr, len(hosts))
	for i, h := range hosts {
		out[i] = HostAddr(pod, rack, h)
	}
	return out
}

// DemoLossless: 12 senders in 6 other racks (pod 0 racks 1-3 and pod 1 racks 0-2,
// hosts 1 and 2 of each) send RoCEv2 (TC3, lossless) at 100 Gb/s to host-p0-r0-h0
// for 300 us from t = 1 s.
func DemoLossless() Incast {
	return Incast{
		Start: 1000 * ms, Duration: 300 * us,
		Senders: concat(hostsOf(0, 1, 1, 2), hostsOf(0, 2, 1, 2), hostsOf(0, 3, 1, 2),
			hostsOf(1, 0, 1, 2), hostsOf(1, 1, 1, 2), hostsOf(1, 2, 1, 2)),
		Receiver: HostAddr(0, 0, 0), Class: RoCEv2, Length: RoCELength,
	}
}

// DemoLossy: 16 senders (8 in the receiver's rack, hosts 1-8 of pod 1 rack 3, and 8
// in other racks: hosts 3 and 4 of pod 1 racks 0-2 and pod 0 rack 3) send 9000-byte
// TCP (TC0, lossy) at 100 Gb/s to host-p1-r3-h0 for 400 us from t = 2 s.
func DemoLossy() Incast {
	return Incast{
		Start: 2000 * ms, Duration: 400 * us,
		Senders: concat(hostsOf(1, 3, 1, 2, 3, 4, 5, 6, 7, 8), hostsOf(1, 0, 3, 4), hostsOf(1, 1, 3, 4),
			hostsOf(1, 2, 3, 4), hostsOf(0, 3, 3, 4)),
		Receiver: HostAddr(1, 3, 0), Class: TCPData, Length: MaxLength,
	}
}

// Demo is demo.pcap: 3 s of a light background mix over all 128 hosts (RoCEv2,
// TCP, voice-like DSCP 46 streams) plus DemoLossless at 1 s and DemoLossy at 2 s.
func Demo() *Scenario {
	lossless, lossy := DemoLossless(), DemoLossy()
	gens := []Generator{
		&Background{
			Start: 0, Duration: 3000 * ms, Hosts: Hosts(0, 1), Flows: 600, MaxPackets: 64,
			Mix: []Share{
				{Class: RoCEv2, Weight: 0.5, Lengths: []int{RoCELength, 1100, 300}},
				{Class: TCPData, Weight: 0.5, Lengths: []int{MaxLength, 1500, 576}},
			},
			Rates: []units.BitRate{10 * units.Gbps, 25 * units.Gbps, 40 * units.Gbps},
		},
		&lossless,
		&lossy,
	}
	// Four voice-like DSCP 46 streams: 200-byte packets every 20 ms for 3 s.
	for i, pair := range [][2]netip.Addr{
		{HostAddr(0, 0, 15), HostAddr(1, 0, 15)},
		{HostAddr(1, 1, 15), HostAddr(0, 1, 15)},
		{HostAddr(0, 2, 15), HostAddr(0, 3, 15)},
		{HostAddr(1, 2, 15), HostAddr(1, 3, 15)},
	} {
		gens = append(gens, &Stream{Src: pair[0], Dst: pair[1], Class: Expedited,
			Start: units.Time(i) * 5 * ms, Duration: 3000 * ms, Length: 200, Interval: 20 * ms})
	}
	return &Scenario{Name: "demo.pcap", Seed: 1, Epoch: epoch, Snaplen: DefaultSnaplen, Generators: gens}
}

// IncastLossless: 16 senders in pod 1 (hosts 0-3 of each rack) send RoCEv2 at
// 100 Gb/s to host-p0-r0-h0 for 300 us from t = 100 us. Every packet crosses rack,
// fabric, spine, fabric, rack: the receiver's rack and the pod-0 fabric switches
// congest, and pauses spread rack <- fabric <- spine <- fabric <- rack.
func IncastLossless() Incast {
	return Incast{
		Start: 100 * us, Duration: 300 * us,
		Senders: concat(hostsOf(1, 0, 0, 1, 2, 3), hostsOf(1, 1, 0, 1, 2, 3), hostsOf(1, 2, 0, 1, 2, 3),
			hostsOf(1, 3, 0, 1, 2, 3)),
		Receiver: HostAddr(0, 0, 0), Class: RoCEv2, Length: RoCELength,
	}
}

// IncastLossy: 16 senders in pod 1 (hosts 5-8 of each rack) send 9000-byte TCP at
// 100 Gb/s to host-p0-r2-h0 for 1 ms from t = 10 ms, after the lossless backlog has
// drained.
func IncastLossy() Incast {
	return Incast{
		Start: 10 * ms, Duration: 1000 * us,
		Senders: concat(hostsOf(1, 0, 5, 6, 7, 8), hostsOf(1, 1, 5, 6, 7, 8), hostsOf(1, 2, 5, 6, 7, 8),
			hostsOf(1, 3, 5, 6, 7, 8)),
		Receiver: HostAddr(0, 2, 0), Class: TCPData, Length: MaxLength,
	}
}

// IncastVictims are four steady 10 Gb/s RoCEv2 flows from host 4 of each pod-1 rack
// to other pod-0 racks (r1 and r3), from 0 to 4 ms: they share uplinks and spines
// with IncastLossless but not its receiver, so PFC pauses make them victims.
func IncastVictims() []Stream {
	dsts := []netip.Addr{HostAddr(0, 1, 0), HostAddr(0, 1, 1), HostAddr(0, 3, 0), HostAddr(0, 3, 1)}
	out := make([]Stream, len(dsts))
	for r, d := range dsts {
		out[r] = Stream{Src: HostAddr(1, r, 4), Dst: d, Class: RoCEv2, Start: 0, Duration: 4 * ms,
			Length: RoCELength, Rate: 10 * units.Gbps}
	}
	return out
}

// IncastScenario is incast.pcap: IncastVictims, IncastLossless and IncastLossy.
func IncastScenario() *Scenario {
	lossless, lossy := IncastLossless(), IncastLossy()
	var gens []Generator
	for _, v := range IncastVictims() {
		gens = append(gens, &v)
	}
	gens = append(gens, &lossless, &lossy)
	return &Scenario{Name: "incast.pcap", Seed: 2, Epoch: epoch, Snaplen: DefaultSnaplen, Generators: gens}
}

// ManyFlowsMix is many-flows.pcap's generator: 4000 flows between pod 0 and pod 1
// (every flow crosses the spines), 60% TCP and 40% UDP with random ports, starting in
// the first 500 us, 1 to 256 packets each (bounded Pareto, mean about 4) of 9000 or
// 1500 bytes, in bursts of 8 packets at 25 Gb/s separated by exponential gaps of mean
// 100 us (the default flowlet gap).
func ManyFlowsMix() ManyFlows {
	return ManyFlows{
		Start: 0, Window: 500 * us, A: Hosts(0), B: Hosts(1), Flows: 4000, TCPShare: 0.6,
		MaxPackets: 256, Lengths: []int{MaxLength, 1500}, Rate: 25 * units.Gbps, Burst: 8, BurstGap: 100 * us,
	}
}

// ManyFlowsScenario is many-flows.pcap.
func ManyFlowsScenario() *Scenario {
	m := ManyFlowsMix()
	return &Scenario{Name: "many-flows.pcap", Seed: 3, Epoch: epoch, Snaplen: DefaultSnaplen, Generators: []Generator{&m}}
}

func concat(lists ...[]netip.Addr) []netip.Addr {
	var out []netip.Addr
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// TCPIncastScenario is tcp-incast.pcap, for closed-loop replay: TCP flows in both
// directions with their captured ACKs, ECN-capable and not, that congest the default
// fabric.
//   - From t = 50 us, 16 senders in pod 1 (hosts 5 and 6 of every rack, and hosts 7
//     and 8) send 9000-byte TCP segments at 100 Gb/s for 300 us to host-p0-r1-h0:
//     the first 8 ECT(0) (DCTCP under Transport.Tcp auto), the other 8 Not-ECT
//     (NewReno); the receiver's captured ACKs go back every second segment. Open
//     loop, 1.6 Tb/s meets one 100 Gb/s port and drops at egress-limit.
//   - Over [0, 2 ms), 200 request-response exchanges between pod 0 and pod 1 (a
//     1000-byte request, a 16-packet response of 4000 bytes at 25 Gb/s, ECT(0)), both
//     directions with ACKs: short flows that share the fabric with the incast.
func TCPIncastScenario() *Scenario {
	senders := concat(hostsOf(1, 0, 5, 6), hostsOf(1, 1, 5, 6), hostsOf(1, 2, 5, 6), hostsOf(1, 3, 5, 6))
	others := concat(hostsOf(1, 0, 7, 8), hostsOf(1, 1, 7, 8), hostsOf(1, 2, 7, 8), hostsOf(1, 3, 7, 8))
	recv := HostAddr(0, 1, 0)
	ect := Incast{Start: 50 * us, Duration: 300 * us, Senders: senders, Receiver: recv, Class: TCPData, Length: MaxLength}
	notECT := Incast{Start: 50 * us, Duration: 300 * us, Senders: others, Receiver: recv,
		Class: Class{Name: "tcp-not-ect", Proto: layers.IPProtocolTCP, DSCP: 0, ECN: NotECT}, Length: MaxLength}
	rr := RequestResponse{Start: 0, Spacing: 10 * us, Clients: Hosts(0), Servers: Hosts(1), Pairs: 200,
		Request: 1000, Response: 16, Length: 4000, Rate: 25 * units.Gbps, ECN: ECT0}
	gens := []Generator{
		&WithAcks{Gen: &ect, Every: 2, Delay: 10 * us},
		&WithAcks{Gen: &notECT, Every: 2, Delay: 10 * us},
		&rr,
	}
	return &Scenario{Name: "tcp-incast.pcap", Seed: 4, Epoch: epoch, Snaplen: DefaultSnaplen, Generators: gens}
}

// hosts6Of returns HostAddr6(pod, rack, h) for each h.
func hosts6Of(pod, rack int, hosts ...int) []netip.Addr {
	out := make([]netip.Addr, len(hosts))
	for i, h := range hosts {
		out[i] = HostAddr6(pod, rack, h)
	}
	return out
}

// IPv6Lossless is ipv6.pcap's lossless incast: 8 senders in other racks (hosts 1 and
// 2 of p0-r1, p0-r3, p1-r0, p1-r2) send RoCEv2 (TC3) 4160-byte IPv6 packets at
// 100 Gb/s for 250 us from t = 500 us to host-p0-r0-h0.
func IPv6Lossless() Incast {
	return Incast{Start: 500 * us, Duration: 250 * us,
		Senders:  concat(hosts6Of(0, 1, 1, 2), hosts6Of(0, 3, 1, 2), hosts6Of(1, 0, 1, 2), hosts6Of(1, 2, 1, 2)),
		Receiver: HostAddr6(0, 0, 0), Class: RoCEv2, Length: RoCELength6}
}

// IPv6Lossy is ipv6.pcap's lossy incast: 16 senders, 8 in the receiver's rack (hosts
// 1-8 of p1-r3) and 8 in other racks (hosts 3 and 4 of p1-r0, p1-r1, p1-r2 and
// p0-r2), send 9000-byte TCP at 100 Gb/s for 300 us from t = 2 ms to host-p1-r3-h0.
func IPv6Lossy() Incast {
	return Incast{Start: 2 * ms, Duration: 300 * us,
		Senders: concat(hosts6Of(1, 3, 1, 2, 3, 4, 5, 6, 7, 8),
			hosts6Of(1, 0, 3, 4), hosts6Of(1, 1, 3, 4), hosts6Of(1, 2, 3, 4), hosts6Of(0, 2, 3, 4)),
		Receiver: HostAddr6(1, 3, 0), Class: TCPData, Length: MaxLength}
}

// IPv6Scenario is ipv6.pcap: an IPv6-only fabric (every address fd00:0:p:r::(h+1),
// so the subnet mapping's /64 groups put HostAddr6(p, r, h) on host-pP-rR-hH), with
// snaplen Snaplen6.
//   - Background over [0, 4 ms): 300 flows among all 128 hosts, half RoCEv2 (4160,
//     1120 or 320-byte packets), half TCP (9000, 1500 or 596 bytes), 1 to 32 packets
//     each at 10, 25 or 40 Gb/s.
//   - Lossless incast at t = 500 us (IPv6Lossless): 8 senders in other racks, RoCEv2
//     (TC3) at 100 Gb/s for 250 us to host-p0-r0-h0: PFC pauses, no drop.
//   - Lossy incast at t = 2 ms (IPv6Lossy): 16 senders, 8 of them in the receiver's
//     rack, 9000-byte TCP at 100 Gb/s for 300 us to host-p1-r3-h0: egress-limit
//     drops.
func IPv6Scenario() *Scenario {
	lossless, lossy := IPv6Lossless(), IPv6Lossy()
	gens := []Generator{
		&Background{
			Start: 0, Duration: 4 * ms, Hosts: Hosts6(0, 1), Flows: 300, MaxPackets: 32,
			Mix: []Share{
				{Class: RoCEv2, Weight: 0.5, Lengths: []int{RoCELength6, 1120, 320}},
				{Class: TCPData, Weight: 0.5, Lengths: []int{MaxLength, 1500, 596}},
			},
			Rates: []units.BitRate{10 * units.Gbps, 25 * units.Gbps, 40 * units.Gbps},
		},
		&lossless,
		&lossy,
	}
	return &Scenario{Name: "ipv6.pcap", Seed: 5, Epoch: epoch, Snaplen: Snaplen6, Generators: gens}
}

// DualStackHosts are the endpoints of mixed.pcap in pods: hosts 0-7 of every rack by
// their IPv4 address (HostAddr) and the same hosts by their IPv6 address (HostAddr6).
// The subnet mapping puts the IPv4 /24 groups on racks first (hosts h0-h7), then the
// IPv6 /64 groups on the same racks in turn (hosts h8-h15): HostAddr6(p, r, h) is
// host-pP-rR-h(8+h).
func DualStackHosts(pods ...int) (v4, v6 []netip.Addr) {
	return hostRange(HostAddr, 8, pods), hostRange(HostAddr6, 8, pods)
}

// MixedIncasts are mixed.pcap's TCP incasts into rack p0-r2 from t = 1 ms, 9000-byte
// segments at 100 Gb/s for 300 us, one per family: 11 IPv4 senders (hosts 1-7 of
// p0-r2 and host 1 of every pod-1 rack) to 10.0.2.1 (host-p0-r2-h0), and 11 IPv6
// senders (the same hosts' IPv6 addresses, which map to h9-h15 of p0-r2 and h9 of the
// pod-1 racks) to fd00:0:0:2::1 (host-p0-r2-h8). Every endpoint is among hosts 0-7 of
// its family (DualStackHosts).
func MixedIncasts() (v4, v6 Incast) {
	v4 = Incast{Start: 1 * ms, Duration: 300 * us, Receiver: HostAddr(0, 2, 0), Class: TCPData, Length: MaxLength,
		Senders: concat(hostsOf(0, 2, 1, 2, 3, 4, 5, 6, 7), hostsOf(1, 0, 1), hostsOf(1, 1, 1), hostsOf(1, 2, 1), hostsOf(1, 3, 1))}
	v6 = Incast{Start: 1 * ms, Duration: 300 * us, Receiver: HostAddr6(0, 2, 0), Class: TCPData, Length: MaxLength,
		Senders: concat(hosts6Of(0, 2, 1, 2, 3, 4, 5, 6, 7), hosts6Of(1, 0, 1), hosts6Of(1, 1, 1), hosts6Of(1, 2, 1), hosts6Of(1, 3, 1))}
	return v4, v6
}

// MixedScenario is mixed.pcap: IPv4 and IPv6 together (DualStackHosts), with
// snaplen Snaplen6.
//   - 800 flows between pod 0 and pod 1 over [0, 500 us), 400 of each family, 60%
//     TCP and 40% UDP with random ports, 1 to 64 packets (bounded Pareto) of 9000 or
//     1500 bytes in bursts of 8 at 25 Gb/s with exponential gaps of mean 100 us:
//     every flow meets the rack and fabric equal-cost sets, hashed with its family's
//     key.
//   - Two RoCEv2 streams (TC3) over [0, 1.5 ms) at 10 Gb/s, one per family, from host
//     4 of p1-r1 to host 4 of p0-r1.
//   - TCP incasts at t = 1 ms, one per family, into rack p0-r2 (MixedIncasts): the
//     receivers' ports congest and drop (egress-limit) in both families.
func MixedScenario() *Scenario {
	a4, a6 := DualStackHosts(0)
	b4, b6 := DualStackHosts(1)
	mix := func(a, b []netip.Addr) ManyFlows {
		return ManyFlows{Start: 0, Window: 500 * us, A: a, B: b, Flows: 400, TCPShare: 0.6, MaxPackets: 64,
			Lengths: []int{MaxLength, 1500}, Rate: 25 * units.Gbps, Burst: 8, BurstGap: 100 * us}
	}
	m4, m6 := mix(a4, b4), mix(a6, b6)
	roce4 := Stream{Src: HostAddr(1, 1, 4), Dst: HostAddr(0, 1, 4), Class: RoCEv2, Duration: 1500 * us, Length: RoCELength, Rate: 10 * units.Gbps}
	roce6 := Stream{Src: HostAddr6(1, 1, 4), Dst: HostAddr6(0, 1, 4), Class: RoCEv2, Duration: 1500 * us, Length: RoCELength6, Rate: 10 * units.Gbps}
	in4, in6 := MixedIncasts()
	return &Scenario{Name: "mixed.pcap", Seed: 6, Epoch: epoch, Snaplen: Snaplen6, Generators: []Generator{&m4, &m6, &roce4, &roce6, &in4, &in6}}
}

// MidConnection pairs of midconn.pcap: each case of docs/model.md#application-model
// between two hosts in different pods (host h of rack r of pod 0 and of pod 1), so
// that every packet crosses the spines; every /24 of the default fabric appears.
var (
	MidAckFirst    = [2]netip.Addr{HostAddr(0, 0, 0), HostAddr(1, 0, 0)} // a -> b opens with pure ACKs, its data 1 ms later
	MidOneWay      = [2]netip.Addr{HostAddr(0, 1, 0), HostAddr(1, 1, 0)} // one-way transfer: the ACKs' direction is control only
	MidAcksOnly    = [2]netip.Addr{HostAddr(0, 2, 0), HostAddr(1, 2, 0)} // pure ACKs with no data either way
	MidReuse       = [2]netip.Addr{HostAddr(0, 3, 0), HostAddr(1, 3, 0)} // two connections on one 5-tuple
	MidFragmented  = [2]netip.Addr{HostAddr(0, 0, 1), HostAddr(1, 1, 1)} // TCP first fragments
	MidRoCE        = [2]netip.Addr{HostAddr(0, 1, 1), HostAddr(1, 2, 1)} // RoCEv2 data with the receiver's ACKs
	MidCNPOnly     = [2]netip.Addr{HostAddr(0, 2, 1), HostAddr(1, 3, 1)} // RoCEv2 CNPs with no data
	MidUDP         = [2]netip.Addr{HostAddr(0, 3, 1), HostAddr(1, 0, 1)} // plain UDP (open loop)
	MidAckFirstAt  = 1 * ms                                              // the ack-first flow's first data segment
	MidAckFirstLen = 1500                                                // its 4 data segments' size, 10 us apart
)

// MidConnectionScenario is midconn.pcap: flows caught mid-connection, as production
// captures nearly always are, one case each (testdata/pcaps/README.md lists them
// with what closed loop does to each):
//   - a -> b opens with 3 pure ACKs (acknowledging b's data) at 5, 15 and 25 us and
//     sends its 4 data segments of 1500 bytes from 1 ms, 10 us apart, with no FIN;
//     b -> a starts with data (1000 bytes at 0, 10 and 20 us, no SYN) and then
//     acknowledges a's segments;
//   - a one-way transfer: 8 segments of 9000 bytes at line rate from 50 us, the
//     receiver's pure ACKs every second segment 10 us later;
//   - 5 pure ACKs from 40 us, 20 us apart, with no packet the other way;
//   - one 5-tuple (port 40001 to 80) carrying two connections, at 100 us and 2 ms:
//     SYN, SYN-ACK, ACK, 2 request segments of 1500 bytes, 3 response segments of
//     4000, FIN, FIN, ACK;
//   - 4 TCP segments of 1500 bytes, each an IPv4 first fragment (MF set), from
//     300 us, with pure ACKs back;
//   - RoCEv2: 20 packets of 4140 bytes at line rate from 400 us and 2 ACKs (BTH
//     opcode 0x11) back from another UDP port;
//   - RoCEv2: 3 CNPs (opcode 0x81) from 500 us with no data the other way;
//   - plain UDP: 5 packets of 200 bytes, DSCP 46, 20 us apart from 600 us.
func MidConnectionScenario() *Scenario {
	tcp := layers.IPProtocolTCP
	ack := MinLength(tcp, false)
	one := func(src, dst netip.Addr, sport, dport uint16, at units.Time, length int, flags uint8) Flow {
		return Flow{Src: src, Dst: dst, Proto: tcp, SrcPort: sport, DstPort: dport, ECN: ECT0, Start: at, Packets: 1,
			Length: length, Interval: 1, TCPFlags: flags}
	}
	a, b := MidAckFirst[0], MidAckFirst[1]
	flows := FlowList{
		{Src: b, Dst: a, Proto: tcp, SrcPort: 443, DstPort: 40000, ECN: ECT0, Start: 0, Packets: 3, Length: 1000, Interval: 10 * us},
		{Src: a, Dst: b, Proto: tcp, SrcPort: 40000, DstPort: 443, ECN: NotECT, Start: 5 * us, Packets: 3, Length: ack, Interval: 10 * us, TCPFlags: TCPAck},
		{Src: a, Dst: b, Proto: tcp, SrcPort: 40000, DstPort: 443, ECN: ECT0, Start: MidAckFirstAt, Packets: 4, Length: MidAckFirstLen, Interval: 10 * us},
		{Src: b, Dst: a, Proto: tcp, SrcPort: 443, DstPort: 40000, ECN: NotECT, Start: MidAckFirstAt + 12*us, Packets: 4, Length: ack, Interval: 10 * us, TCPFlags: TCPAck},
	}
	c, d := MidOneWay[0], MidOneWay[1]
	oneWay := Flow{Src: c, Dst: d, Proto: tcp, SrcPort: 40000, DstPort: 5001, ECN: ECT0, Start: 50 * us, Packets: 8, Length: MaxLength, Rate: LineRate}
	flows = append(flows, oneWay, Flow{Src: d, Dst: c, Proto: tcp, SrcPort: 5001, DstPort: 40000, ECN: NotECT,
		Start: 50*us + oneWay.gap(MaxLength) + 10*us, Packets: 4, Length: ack, Interval: 2 * oneWay.gap(MaxLength), TCPFlags: TCPAck})
	flows = append(flows, Flow{Src: MidAcksOnly[0], Dst: MidAcksOnly[1], Proto: tcp, SrcPort: 40000, DstPort: 22, ECN: NotECT,
		Start: 40 * us, Packets: 5, Length: ack, Interval: 20 * us, TCPFlags: TCPAck})
	g, h := MidReuse[0], MidReuse[1]
	for _, at := range []units.Time{100 * us, 2 * ms} {
		flows = append(flows,
			one(g, h, 40001, 80, at, ack, TCPSyn),
			one(h, g, 80, 40001, at+10*us, ack, TCPSyn|TCPAck),
			one(g, h, 40001, 80, at+20*us, ack, TCPAck),
			Flow{Src: g, Dst: h, Proto: tcp, SrcPort: 40001, DstPort: 80, ECN: ECT0, Start: at + 21*us, Packets: 2, Length: 1500, Interval: 2 * us},
			Flow{Src: h, Dst: g, Proto: tcp, SrcPort: 80, DstPort: 40001, ECN: ECT0, Start: at + 40*us, Packets: 3, Length: 4000, Interval: 2 * us},
			one(g, h, 40001, 80, at+60*us, ack, TCPAck),
			one(g, h, 40001, 80, at+70*us, ack, TCPFin|TCPAck),
			one(h, g, 80, 40001, at+80*us, ack, TCPFin|TCPAck),
			one(g, h, 40001, 80, at+90*us, ack, TCPAck),
		)
	}
	i, j := MidFragmented[0], MidFragmented[1]
	flows = append(flows,
		Flow{Src: i, Dst: j, Proto: tcp, SrcPort: 40002, DstPort: 80, ECN: ECT0, Start: 300 * us, Packets: 4, Length: 1500, Interval: 5 * us, MoreFragments: true},
		Flow{Src: j, Dst: i, Proto: tcp, SrcPort: 80, DstPort: 40002, ECN: NotECT, Start: 312 * us, Packets: 4, Length: ack, Interval: 5 * us, TCPFlags: TCPAck})
	k, l := MidRoCE[0], MidRoCE[1]
	flows = append(flows,
		Flow{Src: k, Dst: l, Proto: layers.IPProtocolUDP, SrcPort: 50000, DstPort: RoCEPort, DSCP: RoCEv2.DSCP, ECN: ECT0, Start: 400 * us, Packets: 20, Length: RoCELength, Rate: LineRate},
		Flow{Src: l, Dst: k, Proto: layers.IPProtocolUDP, SrcPort: 50001, DstPort: RoCEPort, DSCP: RoCEv2.DSCP, Start: 410 * us, Packets: 2, Length: 60, Interval: 5 * us, Opcode: OpcodeAcknowledge})
	flows = append(flows,
		Flow{Src: MidCNPOnly[0], Dst: MidCNPOnly[1], Proto: layers.IPProtocolUDP, SrcPort: 50002, DstPort: RoCEPort, DSCP: 48, Start: 500 * us, Packets: 3, Length: 60, Interval: 10 * us, Opcode: OpcodeCNP},
		Flow{Src: MidUDP[0], Dst: MidUDP[1], Proto: layers.IPProtocolUDP, SrcPort: 5004, DstPort: 5004, DSCP: Expedited.DSCP, Start: 600 * us, Packets: 5, Length: 200, Interval: 20 * us})
	return &Scenario{Name: "midconn.pcap", Seed: 7, Epoch: epoch, Snaplen: DefaultSnaplen, Generators: []Generator{flows}}
}

// ReqResp is reqresp.pcap's conversation and ReqRespIncast the incast in its middle.
var (
	ReqResp = Conversation{Client: HostAddr(0, 0, 0), Server: HostAddr(1, 0, 0), ClientPort: 40100, ServerPort: 8080,
		Start: 0, Exchanges: 50, Request: 600, Response: 16, Length: 1500, Rate: 25 * units.Gbps,
		ServerThink: 20 * us, ClientThink: 150 * us, ECN: ECT0, MSS: 1460}
	ReqRespIncast = Incast{Start: ReqResp.RequestAt(20) - 20*us, Duration: 25 * us,
		Senders:  concat(hostsOf(0, 1, 1, 2, 3, 4), hostsOf(0, 2, 1, 2, 3, 4), hostsOf(1, 1, 1, 2, 3, 4), hostsOf(1, 2, 1, 2, 3, 4)),
		Receiver: ReqResp.Server, Class: TCPData, Length: MaxLength}
)

// RequestResponseScenario is reqresp.pcap: one TCP connection carrying 50
// request/response exchanges (ReqResp: 600-byte requests, 16-packet responses of
// 1500 bytes at 25 Gb/s 20 us after each request, the next request 150 us after the
// response, MSS 1460 announced), and in its middle a 16-to-1 incast of 9000-byte
// DCTCP segments at line rate into the server's host for 25 us from 20 us before the
// 21st request (5 MB, 400 us of the server's link; the receiver's ACKs every second
// segment): the requests that reach the server meanwhile queue behind it.
func RequestResponseScenario() *Scenario {
	c, in := ReqResp, ReqRespIncast
	return &Scenario{Name: "reqresp.pcap", Seed: 11, Epoch: epoch, Snaplen: DefaultSnaplen,
		Generators: []Generator{&c, &WithAcks{Gen: &in, Every: 2, Delay: 10 * us}}}
}
