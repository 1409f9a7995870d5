package tracegen

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/tracefabric/tracefabric/internal/atomicfile"
	"github.com/tracefabric/tracefabric/internal/units"
)

// Generator expands into flows, drawing any randomness from r.
type Generator interface {
	Generate(r *rand.Rand) ([]Flow, error)
}

// Scenario is a seeded list of generators written as one pcap file.
type Scenario struct {
	// Name is the file name the scenario is committed under (for example "demo.pcap").
	Name string
	// Seed derives every random stream (see the package doc).
	Seed uint64
	// Epoch is the wall-clock time of time 0.
	Epoch time.Time
	// Snaplen is the number of frame bytes captured per packet; 0: DefaultSnaplen.
	Snaplen int
	// Generators produce the flows, in order.
	Generators []Generator
	// Ties keeps equal timestamps: a packet whose time rounds to the previous
	// packet's nanosecond keeps it (packets that are available together, Flow.AtOnce),
	// instead of moving 1 ns after it. Packets of one time stay in scenario order
	// (by flow, then within the flow).
	Ties bool
}

// Stats describes a written trace.
type Stats struct {
	Packets int64     // packet records
	IPv6    int64     // of which IPv6
	Bytes   int64     // sum of the packet sizes L
	Flows   int       // distinct directional 5-tuples (a flow and the ACKs going its way share one)
	First   time.Time // first timestamp
	Last    time.Time // last timestamp
}

// Flows expands every generator, in order, and validates each flow.
func (s *Scenario) Flows() ([]Flow, error) {
	var all []Flow
	for g, gen := range s.Generators {
		fs, err := gen.Generate(rand.New(rand.NewPCG(s.Seed, uint64(g)+1)))
		if err != nil {
			return nil, fmt.Errorf("tracegen: scenario %s, generator %d (%T): %w", s.Name, g, gen, err)
		}
		for i := range fs {
			if err := fs[i].Check(); err != nil {
				return nil, fmt.Errorf("tracegen: scenario %s, generator %d (%T), flow %d: %w", s.Name, g, gen, i, err)
			}
		}
		all = append(all, fs...)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("tracegen: scenario %s has no flows", s.Name)
	}
	return all, nil
}

// Packets calls yield for every packet of the scenario in time order (times in
// picoseconds as the flows define them, before rounding to nanoseconds).
func (s *Scenario) Packets(yield func(*Packet) error) (flows int, err error) {
	fs, err := s.Flows()
	if err != nil {
		return 0, err
	}
	h := make(cursorHeap, 0, len(fs))
	for i := range fs {
		c := &cursor{f: &fs[i], index: i, t: fs[i].Start}
		if fs[i].Burst > 0 {
			c.rng = rand.New(rand.NewPCG(s.Seed, 1<<32+uint64(i)))
		}
		h.push(c)
	}
	for len(h) > 0 {
		c := h[0]
		p, done := c.next()
		if done {
			h.pop()
		} else {
			h.fix()
		}
		if err := yield(&p); err != nil {
			return len(fs), err
		}
	}
	return len(fs), nil
}

// Timestamper turns picosecond times into strictly increasing nanosecond timestamps
// (non-decreasing with Ties).
type Timestamper struct {
	Epoch time.Time
	Ties  bool  // keep a timestamp equal to the previous one
	last  int64 // nanoseconds since Epoch of the previous packet
	init  bool  // a packet has been stamped
}

// Next returns the timestamp of a packet at t: t rounded up to whole nanoseconds, or
// 1 ns after the previous timestamp if that is not later (with Ties: if it is
// earlier).
func (ts *Timestamper) Next(t units.Time) time.Time {
	ns := int64((t + units.Nanosecond - 1) / units.Nanosecond)
	if ts.init && (ns < ts.last || ns == ts.last && !ts.Ties) {
		ns = ts.last + 1
	}
	ts.last, ts.init = ns, true
	return ts.Epoch.Add(time.Duration(ns))
}

// WritePcap writes the scenario as a classic nanosecond pcap to w.
func (s *Scenario) WritePcap(w io.Writer) (Stats, error) {
	enc, err := NewEncoder(s.Snaplen)
	if err != nil {
		return Stats{}, err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	pw := pcapgo.NewWriterNanos(bw)
	if err := pw.WriteFileHeader(uint32(enc.Snaplen()), layers.LinkTypeEthernet); err != nil {
		return Stats{}, fmt.Errorf("tracegen: %s: %w", s.Name, err)
	}
	var st Stats
	ts := Timestamper{Epoch: s.Epoch, Ties: s.Ties}
	type tuple struct {
		src, dst   netip.Addr
		proto      layers.IPProtocol
		sport, dpt uint16
	}
	tuples := map[tuple]bool{}
	_, err = s.Packets(func(p *Packet) error {
		tuples[tuple{p.Src, p.Dst, p.Proto, p.SrcPort, p.DstPort}] = true
		data, n, err := enc.Encode(p)
		if err != nil {
			return fmt.Errorf("tracegen: %s, packet %d: %w", s.Name, st.Packets, err)
		}
		at := ts.Next(p.Time)
		if st.Packets == 0 {
			st.First = at
		}
		st.Last = at
		st.Packets++
		if p.Src.Is6() {
			st.IPv6++
		}
		st.Bytes += int64(p.Length)
		ci := gopacket.CaptureInfo{Timestamp: at, CaptureLength: len(data), Length: n}
		if err := pw.WritePacket(ci, data); err != nil {
			return fmt.Errorf("tracegen: %s, packet %d: %w", s.Name, st.Packets-1, err)
		}
		return nil
	})
	st.Flows = len(tuples)
	if err != nil {
		return st, err
	}
	if err := bw.Flush(); err != nil {
		return st, fmt.Errorf("tracegen: %s: %w", s.Name, err)
	}
	return st, nil
}

// WriteFile writes the scenario to path atomically: to a temporary file in the same
// directory, renamed over path only when complete. An existing path must be a
// regular file. Use WritePcap to write to a stream.
func (s *Scenario) WriteFile(path string) (Stats, error) {
	return writeFileAtomic(path, s.WritePcap)
}

func writeFileAtomic(path string, write func(io.Writer) (Stats, error)) (st Stats, err error) {
	err = atomicfile.Write(path, func(w io.Writer) error {
		st, err = write(w)
		return err
	})
	if err != nil {
		return st, fmt.Errorf("tracegen: %w", err)
	}
	return st, nil
}

func unixNano(ns int64) time.Time { return time.Unix(0, ns).UTC() }
