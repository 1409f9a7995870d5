package tracegen

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Benchmark describes a large synthetic trace for benchmarks: Packets packets over
// Flows flows between random pairs of the 128 default hosts, arriving as a Poisson
// process at an aggregate offered Load. Each flow has a class drawn from a fixed mix
// (40% RoCEv2 with 4140-, 1100- and 48-byte packets; 45% TCP with 9000-, 1500- and
// 40-byte packets; 10% UDP 1200-byte; 5% DSCP 46 200-byte); each packet picks a flow
// uniformly and a length by the class's weights.
type Benchmark struct {
	Packets int
	Seed    uint64
	Flows   int           // 0: 4096
	Load    units.BitRate // aggregate offered load in wire bits/s; 0: 3.2 Tb/s (25 Gb/s per host)
	Snaplen int           // 0: DefaultSnaplen
	Epoch   int64         // Unix nanoseconds of time 0; 0: the committed scenarios' epoch
	// Only restricts the mix to one class, for closed-loop benchmarks: "tcp" (TCP data,
	// ECT(0), 9000- and 1500-byte segments, no pure ACKs) or "roce" (RoCEv2, 4140-byte
	// packets); "" is the mix above.
	Only string
}

type benchClass struct {
	class   Class
	weight  float64
	lengths []int
	lweight []float64
}

var benchMix = [...]benchClass{
	{RoCEv2, 0.40, []int{RoCELength, 1100, 48}, []float64{0.7, 0.1, 0.2}},
	{TCPData, 0.45, []int{MaxLength, 1500, 40}, []float64{0.5, 0.3, 0.2}},
	{UDPData, 0.10, []int{1200}, []float64{1}},
	{Expedited, 0.05, []int{200}, []float64{1}},
}

// template is one flow's frame of one length, as the Encoder serializes it with TCP
// sequence number 0.
type template struct {
	data     []byte
	frameLen int
	length   int // IPv4 total length
	csum     uint16
}

type benchFlow struct {
	Flow
	class *benchClass
	seq   uint32
	tmpl  []template
}

// benchGen draws the benchmark's packets.
type benchGen struct {
	r     *rand.Rand
	flows []benchFlow
	mean  float64 // mean inter-arrival time, ps
	t     units.Time
}

func newBenchGen(b *Benchmark) (*benchGen, *Encoder, error) {
	if b.Packets < 1 || b.Flows < 0 || b.Load < 0 {
		return nil, nil, fmt.Errorf("tracegen: benchmark needs Packets >= 1 and non-negative Flows, Load (got %d, %d, %v)",
			b.Packets, b.Flows, b.Load)
	}
	nf, load := b.Flows, b.Load
	if nf == 0 {
		nf = 4096
	}
	if load == 0 {
		load = 3200 * units.Gbps
	}
	enc, err := NewEncoder(b.Snaplen)
	if err != nil {
		return nil, nil, err
	}
	g := &benchGen{r: rand.New(rand.NewPCG(b.Seed, 0xbe4c)), flows: make([]benchFlow, nf)}
	mix := benchMix[:]
	switch b.Only {
	case "":
	case "tcp":
		mix = []benchClass{{TCPData, 1, []int{MaxLength, 1500}, []float64{0.6, 0.4}}}
	case "roce":
		mix = []benchClass{{RoCEv2, 1, []int{RoCELength}, []float64{1}}}
	default:
		return nil, nil, fmt.Errorf("tracegen: benchmark class %q: want tcp, roce or nothing", b.Only)
	}
	var meanBits float64
	for i := range mix {
		c := &mix[i]
		for j, l := range c.lengths {
			meanBits += float64(float64(c.weight*c.lweight[j]) * float64(8*(l+WireOverhead))) // no FMA
		}
	}
	g.mean = meanBits / float64(load) * float64(units.Second)
	hosts := Hosts(0, 1)
	for i := range g.flows {
		bf := &g.flows[i]
		x := g.r.Float64()
		bf.class = &mix[len(mix)-1]
		for k := range mix {
			if x < mix[k].weight {
				bf.class = &mix[k]
				break
			}
			x -= mix[k].weight
		}
		src := hosts[g.r.IntN(len(hosts))]
		dst := src
		for dst == src {
			dst = hosts[g.r.IntN(len(hosts))]
		}
		c := bf.class.class
		bf.Flow = newFlow(c, src, dst, randomPort(g.r, c, false), randomPort(g.r, c, true))
		for _, l := range bf.class.lengths {
			p := bf.packet(0, l)
			data, n, err := enc.Encode(&p)
			if err != nil {
				return nil, nil, err
			}
			t := template{data: append([]byte(nil), data...), frameLen: n, length: l}
			if c.Proto == layers.IPProtocolTCP {
				t.csum = binary.BigEndian.Uint16(data[tcpChecksumOffset:])
			}
			bf.tmpl = append(bf.tmpl, t)
		}
	}
	return g, enc, nil
}

// Offsets in an untagged Ethernet + 20-byte IPv4 + TCP frame.
const (
	tcpSeqOffset      = 14 + 20 + 4
	tcpChecksumOffset = 14 + 20 + 16
)

// next draws the next packet: its time, flow and template.
func (g *benchGen) next() (t units.Time, f *benchFlow, tm *template) {
	g.t += units.Time(g.r.ExpFloat64() * g.mean)
	f = &g.flows[g.r.IntN(len(g.flows))]
	li, x := len(f.tmpl)-1, g.r.Float64()
	for k, w := range f.class.lweight {
		if x < w {
			li = k
			break
		}
		x -= w
	}
	return g.t, f, &f.tmpl[li]
}

// patch writes the frame of f's next packet with template tm into dst (len(tm.data)
// bytes) and advances f's sequence number: the template's bytes with the TCP
// sequence number set and the checksum updated incrementally (RFC 1624), which gives
// exactly what the Encoder would serialize.
func patch(dst []byte, f *benchFlow, tm *template) {
	copy(dst, tm.data)
	if f.Proto != layers.IPProtocolTCP {
		return
	}
	seq := f.seq
	f.seq += uint32(tm.length - 40)
	binary.BigEndian.PutUint32(dst[tcpSeqOffset:], seq)
	sum := uint32(^tm.csum) + seq>>16 + seq&0xffff
	sum = sum>>16 + sum&0xffff
	sum = sum>>16 + sum&0xffff
	binary.BigEndian.PutUint16(dst[tcpChecksumOffset:], ^uint16(sum))
}

// WriteBenchmark writes the benchmark trace b to w as a nanosecond pcap. It keeps
// only the flow table in memory, so any number of packets streams.
func WriteBenchmark(w io.Writer, b Benchmark) (Stats, error) {
	g, enc, err := newBenchGen(&b)
	if err != nil {
		return Stats{}, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	pw := pcapgo.NewWriterNanos(bw)
	if err := pw.WriteFileHeader(uint32(enc.Snaplen()), layers.LinkTypeEthernet); err != nil {
		return Stats{}, fmt.Errorf("tracegen: benchmark: %w", err)
	}
	ts := Timestamper{Epoch: epoch}
	if b.Epoch != 0 {
		ts.Epoch = unixNano(b.Epoch)
	}
	st := Stats{Flows: len(g.flows)}
	buf := make([]byte, enc.Snaplen())
	for i := 0; i < b.Packets; i++ {
		t, f, tm := g.next()
		data := buf[:len(tm.data)]
		patch(data, f, tm)
		at := ts.Next(t)
		if i == 0 {
			st.First = at
		}
		st.Last = at
		st.Bytes += int64(tm.length)
		ci := gopacket.CaptureInfo{Timestamp: at, CaptureLength: len(data), Length: tm.frameLen}
		if err := pw.WritePacket(ci, data); err != nil {
			return st, fmt.Errorf("tracegen: benchmark, packet %d: %w", i, err)
		}
		st.Packets++
	}
	if err := bw.Flush(); err != nil {
		return st, fmt.Errorf("tracegen: benchmark: %w", err)
	}
	return st, nil
}

// WriteBenchmarkFile writes the benchmark trace b to path atomically.
func WriteBenchmarkFile(path string, b Benchmark) (Stats, error) {
	return writeFileAtomic(path, func(w io.Writer) (Stats, error) { return WriteBenchmark(w, b) })
}
