package tracegen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Default fabric shape (docs/model.md#clos-builder) that the address plan follows.
const (
	Pods         = 2
	RacksPerPod  = 4
	HostsPerRack = 16
)

// HostAddr is the address of host h of rack r of pod p: 10.p.r.(h+1).
func HostAddr(pod, rack, host int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, byte(pod), byte(rack), byte(host + 1)})
}

// HostAddr6 is the IPv6 address of host h of rack r of pod p: fd00:0:p:r::(h+1), in
// the rack's /64 fd00:0:p:r::/64 (a unique local prefix).
func HostAddr6(pod, rack, host int) netip.Addr {
	return netip.AddrFrom16([16]byte{0: 0xfd, 5: byte(pod), 7: byte(rack), 14: byte((host + 1) >> 8), 15: byte(host + 1)})
}

// Hosts lists HostAddr(p, r, h) for every pod p in pods, every rack and host of the
// default shape, in numeric order.
func Hosts(pods ...int) []netip.Addr { return hostRange(HostAddr, HostsPerRack, pods) }

// Hosts6 lists HostAddr6(p, r, h) as Hosts does.
func Hosts6(pods ...int) []netip.Addr { return hostRange(HostAddr6, HostsPerRack, pods) }

// hostRange lists addr(p, r, h) for every pod p in pods, rack r and host h < n.
func hostRange(addr func(p, r, h int) netip.Addr, n int, pods []int) []netip.Addr {
	var out []netip.Addr
	for _, p := range pods {
		for r := 0; r < RacksPerPod; r++ {
			for h := 0; h < n; h++ {
				out = append(out, addr(p, r, h))
			}
		}
	}
	return out
}

// randomPort draws a port for class c's flows: the class's fixed port if it has one
// and dst is true; RoCEv2 source ports from 49152..65535 (entropy per queue pair);
// other source ports from the Linux ephemeral range 32768..60999; other destination
// ports from 1024..65535.
func randomPort(r *rand.Rand, c Class, dst bool) uint16 {
	switch {
	case dst && c.DstPort != 0:
		return c.DstPort
	case dst:
		return uint16(1024 + r.IntN(65536-1024))
	case c.DstPort == RoCEPort:
		return uint16(49152 + r.IntN(16384))
	default:
		return uint16(32768 + r.IntN(61000-32768))
	}
}

func newFlow(c Class, src, dst netip.Addr, sport, dport uint16) Flow {
	return Flow{Src: src, Dst: dst, Proto: c.Proto, SrcPort: sport, DstPort: dport, DSCP: c.DSCP, ECN: c.ECN}
}

// Incast is an N-to-1 burst: every sender sends to Receiver at Rate (default
// LineRate) from Start for Duration, packets of Length bytes. Sender j starts j/N of a
// packet time after Start, so the senders' packets interleave evenly.
type Incast struct {
	Start, Duration units.Time
	Senders         []netip.Addr
	Receiver        netip.Addr
	Class           Class
	Length          int           // packet size L
	Rate            units.BitRate // per sender; 0: LineRate
	DstPort         uint16        // 0: the class's port, else 5201 for TCP, random for UDP
}

// PacketsPerSender is the number of packets each sender sends.
func (in *Incast) PacketsPerSender() int {
	wire := units.SerializationTime(int64(in.Length+WireOverhead), in.rate())
	return max(1, int(in.Duration/wire))
}

func (in *Incast) rate() units.BitRate {
	if in.Rate == 0 {
		return LineRate
	}
	return in.Rate
}

// Generate implements Generator.
func (in *Incast) Generate(r *rand.Rand) ([]Flow, error) {
	if len(in.Senders) == 0 || in.Duration <= 0 || in.Rate < 0 {
		return nil, fmt.Errorf("incast needs senders, a positive duration and rate")
	}
	dport := in.DstPort
	if dport == 0 && in.Class.DstPort == 0 && in.Class.Proto == layers.IPProtocolTCP {
		dport = 5201
	}
	if dport == 0 {
		dport = randomPort(r, in.Class, true)
	}
	wire := units.SerializationTime(int64(in.Length+WireOverhead), in.rate())
	n := in.PacketsPerSender()
	out := make([]Flow, len(in.Senders))
	for j, s := range in.Senders {
		f := newFlow(in.Class, s, in.Receiver, randomPort(r, in.Class, false), dport)
		f.Start = in.Start + wire*units.Time(j)/units.Time(len(in.Senders))
		f.Packets, f.Length, f.Rate = n, in.Length, in.rate()
		out[j] = f
	}
	return out, nil
}

// Stream is one steady flow: packets of Length bytes from Src to Dst every Interval
// (or back to back at Rate) from Start for Duration.
type Stream struct {
	Src, Dst        netip.Addr
	Class           Class
	Start, Duration units.Time
	Length          int
	Rate            units.BitRate
	Interval        units.Time
}

// Generate implements Generator.
func (s *Stream) Generate(r *rand.Rand) ([]Flow, error) {
	f := newFlow(s.Class, s.Src, s.Dst, randomPort(r, s.Class, false), randomPort(r, s.Class, true))
	f.Start, f.Length, f.Rate, f.Interval = s.Start, s.Length, s.Rate, s.Interval
	step := s.Interval
	if step == 0 {
		if s.Rate <= 0 {
			return nil, fmt.Errorf("stream needs a positive Rate or Interval")
		}
		step = units.SerializationTime(int64(s.Length+WireOverhead), s.Rate)
	}
	f.Packets = max(1, int(s.Duration/step))
	return []Flow{f}, nil
}

// Share is one class of a traffic mix: its weight and the packet lengths (IPv4 total
// lengths) its flows use, one drawn uniformly per flow.
type Share struct {
	Class   Class
	Weight  float64
	Lengths []int
}

// Background is a sparse mix of short flows among Hosts: Flows flows start at
// uniformly random times in [Start, Start+Duration); sources go round a shuffled list
// of Hosts (so every host sends when Flows >= len(Hosts)), each destination is another
// host drawn uniformly; the class is drawn by weight from Mix, the packet count from
// a bounded Pareto distribution (shape 1.2) on [1, MaxPackets], the pacing rate
// uniformly from Rates. The last packet of a flow has a length drawn uniformly between
// the protocol's minimum and the flow's length.
type Background struct {
	Start, Duration units.Time
	Hosts           []netip.Addr
	Flows           int
	Mix             []Share
	MaxPackets      int
	Rates           []units.BitRate
}

// Generate implements Generator.
func (b *Background) Generate(r *rand.Rand) ([]Flow, error) {
	if len(b.Hosts) < 2 || b.Flows < 1 || len(b.Mix) == 0 || len(b.Rates) == 0 || b.MaxPackets < 1 || b.Duration <= 0 {
		return nil, fmt.Errorf("background needs 2+ hosts, flows, a mix, rates, MaxPackets and a duration")
	}
	srcs := append([]netip.Addr(nil), b.Hosts...)
	r.Shuffle(len(srcs), func(i, j int) { srcs[i], srcs[j] = srcs[j], srcs[i] })
	out := make([]Flow, 0, b.Flows)
	for k := 0; k < b.Flows; k++ {
		src := srcs[k%len(srcs)]
		dst := src
		for dst == src {
			dst = b.Hosts[r.IntN(len(b.Hosts))]
		}
		sh, err := pickShare(r, b.Mix)
		if err != nil {
			return nil, err
		}
		f := newFlow(sh.Class, src, dst, randomPort(r, sh.Class, false), randomPort(r, sh.Class, true))
		f.Start = b.Start + units.Time(r.Int64N(int64(b.Duration)))
		f.Length = sh.Lengths[r.IntN(len(sh.Lengths))]
		f.Packets = boundedPareto(r, 1.2, 1, b.MaxPackets)
		if f.Packets > 1 {
			lo := MinLength(f.Proto, f.Src.Is6())
			f.LastLength = lo + r.IntN(f.Length-lo+1)
		}
		f.Rate = b.Rates[r.IntN(len(b.Rates))]
		out = append(out, f)
	}
	return out, nil
}

func pickShare(r *rand.Rand, mix []Share) (*Share, error) {
	var total float64
	for i := range mix {
		if mix[i].Weight < 0 || len(mix[i].Lengths) == 0 {
			return nil, fmt.Errorf("share %d (%s): negative weight or no lengths", i, mix[i].Class.Name)
		}
		total += mix[i].Weight
	}
	if total <= 0 {
		return nil, fmt.Errorf("mix weights sum to %v", total)
	}
	x := r.Float64() * total
	for i := range mix {
		if x < mix[i].Weight {
			return &mix[i], nil
		}
		x -= mix[i].Weight
	}
	return &mix[len(mix)-1], nil
}

// boundedPareto draws an integer from a Pareto distribution of shape alpha truncated
// to [lo, hi] (inverse transform), floored.
func boundedPareto(r *rand.Rand, alpha float64, lo, hi int) int {
	if hi <= lo {
		return lo
	}
	l, h := float64(lo), float64(hi+1)
	u := r.Float64()
	la, ha := math.Pow(l, alpha), math.Pow(h, alpha)
	// Explicit conversions round each product: no fused multiply-add, so the draw is
	// the same on every architecture.
	x := math.Pow(-(float64(u*ha)-float64(u*la)-ha)/(ha*la), -1/alpha)
	return min(hi, max(lo, int(x)))
}

// ManyFlows is Flows flows between two halves of the address space: each joins a host
// drawn uniformly from A and one from B, in a random direction. A TCPShare of them are
// TCP (class TCPData), the rest UDP (class UDPData); every flow has random source and
// destination ports and a unique 5-tuple. Flows start uniformly in [Start,
// Start+Window); packet counts are bounded Pareto (shape 1.2) on [1, MaxPackets]; each
// flow's packet length is drawn from Lengths; packets go in bursts of Burst at Rate,
// bursts separated by exponential gaps of mean BurstGap (so flows have flowlets).
type ManyFlows struct {
	Start, Window units.Time
	A, B          []netip.Addr
	Flows         int
	TCPShare      float64
	MaxPackets    int
	Lengths       []int
	Rate          units.BitRate
	Burst         int
	BurstGap      units.Time
}

// Generate implements Generator.
func (m *ManyFlows) Generate(r *rand.Rand) ([]Flow, error) {
	if len(m.A) == 0 || len(m.B) == 0 || m.Flows < 1 || m.Window <= 0 || len(m.Lengths) == 0 || m.MaxPackets < 1 {
		return nil, fmt.Errorf("many-flows needs hosts on both sides, flows, a window, lengths and MaxPackets")
	}
	type key struct {
		src, dst     netip.Addr
		sport, dport uint16
		proto        layers.IPProtocol
	}
	seen := make(map[key]bool, m.Flows)
	out := make([]Flow, 0, m.Flows)
	for len(out) < m.Flows {
		a, b := m.A[r.IntN(len(m.A))], m.B[r.IntN(len(m.B))]
		if r.IntN(2) == 1 {
			a, b = b, a
		}
		c := UDPData
		if r.Float64() < m.TCPShare {
			c = TCPData
		}
		f := newFlow(c, a, b, randomPort(r, c, false), randomPort(r, c, true))
		k := key{f.Src, f.Dst, f.SrcPort, f.DstPort, f.Proto}
		if seen[k] {
			continue
		}
		seen[k] = true
		f.Start = m.Start + units.Time(r.Int64N(int64(m.Window)))
		f.Length = m.Lengths[r.IntN(len(m.Lengths))]
		f.Packets = boundedPareto(r, 1.2, 1, m.MaxPackets)
		f.Rate, f.Burst, f.BurstGap = m.Rate, m.Burst, m.BurstGap
		out = append(out, f)
	}
	return out, nil
}

// FlowList is a generator of explicit flows.
type FlowList []Flow

// Generate implements Generator.
func (l FlowList) Generate(*rand.Rand) ([]Flow, error) { return append([]Flow(nil), l...), nil }

// WithAcks adds the captured ACKs of TCP data flows: for every TCP flow Gen makes, a
// reverse flow of pure ACKs (size 40, or 60 for IPv6; flag ACK, the data's DSCP, Not-ECT), one
// per Every data packets (a delayed ACK), each Delay after the data packet it
// acknowledges was captured (the capture point's view of the round trip).
type WithAcks struct {
	Gen   Generator
	Every int
	Delay units.Time
}

// Generate implements Generator.
func (w *WithAcks) Generate(r *rand.Rand) ([]Flow, error) {
	fs, err := w.Gen.Generate(r)
	if err != nil {
		return nil, err
	}
	if w.Every < 1 || w.Delay < 0 {
		return nil, fmt.Errorf("WithAcks needs Every >= 1 and Delay >= 0")
	}
	out := append([]Flow(nil), fs...)
	for _, f := range fs {
		if f.Proto != layers.IPProtocolTCP || f.Burst > 0 || f.Packets < w.Every {
			continue
		}
		gap := f.gap(f.Length)
		a := Flow{Src: f.Dst, Dst: f.Src, Proto: f.Proto, SrcPort: f.DstPort, DstPort: f.SrcPort, DSCP: f.DSCP,
			ECN: NotECT, TCPFlags: TCPAck, Length: MinLength(f.Proto, f.Src.Is6()), Packets: f.Packets / w.Every,
			Start: f.Start + gap*units.Time(w.Every-1) + w.Delay, Interval: gap * units.Time(w.Every)}
		out = append(out, a)
	}
	return out, nil
}

// RequestResponse is Pairs TCP exchanges, one every Spacing from Start: a client
// sends a Request-byte segment to a server, which answers Response packets of
// Length bytes at Rate a little later, both directions with their captured ACKs.
// Exchange i pairs client i mod len(Clients) with server 7i mod len(Servers), so
// every host takes part when Pairs covers the lists.
type RequestResponse struct {
	Start, Spacing units.Time
	Clients        []netip.Addr
	Servers        []netip.Addr
	Pairs          int
	Request        int // size L of the request
	Response       int // packets of the response
	Length         int // size L of each response packet
	Rate           units.BitRate
	ECN            uint8
}

// Generate implements Generator.
func (q *RequestResponse) Generate(r *rand.Rand) ([]Flow, error) {
	if len(q.Clients) == 0 || len(q.Servers) == 0 || q.Pairs < 1 || q.Response < 1 {
		return nil, fmt.Errorf("request-response needs clients, servers, pairs and a response")
	}
	var out []Flow
	for i := 0; i < q.Pairs; i++ {
		c, s := q.Clients[i%len(q.Clients)], q.Servers[(7*i)%len(q.Servers)]
		sport := randomPort(r, TCPData, false)
		at := q.Start + units.Time(i)*q.Spacing
		req := Flow{Src: c, Dst: s, Proto: layers.IPProtocolTCP, SrcPort: sport, DstPort: 443, ECN: q.ECN,
			Start: at, Packets: 1, Length: q.Request, Interval: 1}
		rsp := Flow{Src: s, Dst: c, Proto: layers.IPProtocolTCP, SrcPort: 443, DstPort: sport, ECN: q.ECN,
			Start: at + 10*units.Microsecond, Packets: q.Response, Length: q.Length, Rate: q.Rate}
		// The response's ACKs go back from the client every second packet.
		gap := rsp.gap(q.Length)
		ack := Flow{Src: c, Dst: s, Proto: layers.IPProtocolTCP, SrcPort: sport, DstPort: 443, ECN: NotECT,
			TCPFlags: TCPAck, Length: MinLength(layers.IPProtocolTCP, c.Is6()), Packets: max(1, q.Response/2), Start: rsp.Start + gap + 12*units.Microsecond,
			Interval: 2 * gap}
		out = append(out, req, rsp, ack)
	}
	return out, nil
}

// Conversation is one TCP connection that carries Exchanges request/response
// exchanges from Start, as a capture at the server would see it: a handshake (the
// client's SYN and the server's SYN-ACK, each announcing MSS, 10 us apart, the
// client's ACK 10 us later), then per exchange the client's request of Request bytes,
// the server's response of Response packets of Length bytes at Rate ServerThink after
// it, the client's pure ACKs of every second response packet 2 us after it, and the
// next request ClientThink after the response's last packet; the client's FIN after
// the last response and the server's 10 us later.
type Conversation struct {
	Client, Server           netip.Addr
	ClientPort, ServerPort   uint16
	Start                    units.Time
	Exchanges                int
	Request                  int // size L of a request
	Response                 int // packets of a response
	Length                   int // size L of a response packet
	Rate                     units.BitRate
	ServerThink, ClientThink units.Time
	ECN                      uint8
	MSS                      uint16
}

// RequestAt returns the captured time of exchange i's request.
func (c *Conversation) RequestAt(i int) units.Time {
	rsp := Flow{Rate: c.Rate}
	return c.Start + 30*units.Microsecond + units.Time(i)*(c.ServerThink+units.Time(c.Response)*rsp.gap(c.Length)+c.ClientThink)
}

// Generate implements Generator.
func (c *Conversation) Generate(*rand.Rand) ([]Flow, error) {
	if c.Exchanges < 1 || c.Response < 1 || c.Rate <= 0 {
		return nil, fmt.Errorf("a conversation needs exchanges, a response and a rate")
	}
	tcp := layers.IPProtocolTCP
	ack := MinLength(tcp, c.Client.Is6())
	up := func(at units.Time, length int, flags uint8) Flow {
		return Flow{Src: c.Client, Dst: c.Server, Proto: tcp, SrcPort: c.ClientPort, DstPort: c.ServerPort, ECN: c.ECN,
			Start: at, Packets: 1, Length: length, Interval: 1, TCPFlags: flags}
	}
	down := func(at units.Time, n, length int, flags uint8) Flow {
		return Flow{Src: c.Server, Dst: c.Client, Proto: tcp, SrcPort: c.ServerPort, DstPort: c.ClientPort, ECN: c.ECN,
			Start: at, Packets: n, Length: length, Rate: c.Rate, TCPFlags: flags}
	}
	syn, synAck := up(c.Start, ack+4, TCPSyn), down(c.Start+10*units.Microsecond, 1, ack+4, TCPSyn|TCPAck)
	syn.MSS, synAck.MSS = c.MSS, c.MSS
	out := []Flow{syn, synAck, up(c.Start+20*units.Microsecond, ack, TCPAck)}
	var end units.Time
	for i := 0; i < c.Exchanges; i++ {
		at := c.RequestAt(i)
		rsp := down(at+c.ServerThink, c.Response, c.Length, 0)
		gap := rsp.gap(c.Length)
		out = append(out, up(at, c.Request, 0), rsp)
		if c.Response >= 2 {
			acks := up(rsp.Start+gap+2*units.Microsecond, ack, TCPAck)
			acks.Packets, acks.Interval = c.Response/2, 2*gap
			out = append(out, acks)
		}
		end = rsp.Start + units.Time(c.Response)*gap
	}
	return append(out, up(end+c.ClientThink, ack, TCPFin|TCPAck), down(end+c.ClientThink+10*units.Microsecond, 1, ack, TCPFin|TCPAck)), nil
}
