package tracegen

import (
	"fmt"
	"math/rand/v2"
	"net/netip"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Flow is a paced sequence of packets of one 5-tuple.
//
// Packet k+1 starts Interval after packet k, or, when Interval is zero, one wire time
// of packet k at Rate after it (wire bytes = Length + WireOverhead), so a flow at
// LineRate keeps a 100 Gb/s link exactly busy. With Burst > 0 the flow sends Burst
// packets back to back, then stays idle for an exponentially distributed time of mean
// BurstGap (drawn from the flow's own PCG), and so on.
type Flow struct {
	Src, Dst         netip.Addr
	Proto            layers.IPProtocol
	SrcPort, DstPort uint16
	DSCP, ECN        uint8
	Start            units.Time    // time of the first packet
	Packets          int           // number of packets, >= 1
	Length           int           // size L (IPv4 total length, 40 + IPv6 payload length) of every packet but the last
	LastLength       int           // size of the last packet; 0: Length
	Rate             units.BitRate // pacing rate in wire bits/s (used when Interval is 0)
	Interval         units.Time    // fixed spacing of packet starts; 0: from Rate
	Burst            int           // packets per burst; 0: one burst
	BurstGap         units.Time    // mean idle time between bursts
	TCPFlags         uint8         // TCP flags of every packet; 0: ACK|PSH (data)
	Opcode           uint8         // first UDP payload byte of every packet (a RoCEv2 BTH opcode; Packet.Opcode)
	MoreFragments    bool          // every packet an IPv4 first fragment (Packet.MoreFragments)
	MSS              uint16        // an MSS option on every packet (Packet.MSS): a SYN's
	// AtOnce puts every packet at Start (Rate, Interval and bursts unused): a backlog
	// the application hands over at once, for closed-loop replay to send as its
	// congestion control allows. Its packets share one timestamp, which only a
	// Scenario with Ties writes as such.
	AtOnce bool
}

// Check validates the flow; the error names the rule broken.
func (f *Flow) Check() error {
	p := f.packet(0, f.Length)
	if err := checkPacket(&p); err != nil {
		return err
	}
	if f.LastLength != 0 {
		p.Length = f.LastLength
		if err := checkPacket(&p); err != nil {
			return fmt.Errorf("last packet: %w", err)
		}
	}
	switch {
	case f.Packets < 1:
		return fmt.Errorf("%w: flow of %d packets", ErrPacket, f.Packets)
	case f.Start < 0:
		return fmt.Errorf("%w: start %v < 0", ErrPacket, f.Start)
	case f.AtOnce && (f.Burst != 0 || f.Interval != 0 || f.Rate != 0):
		return fmt.Errorf("%w: a flow AtOnce has no pacing (got interval %v, rate %v, burst %d)", ErrPacket, f.Interval, f.Rate, f.Burst)
	case f.AtOnce:
	case f.Interval < 0 || f.Rate < 0 || (f.Interval == 0 && f.Rate == 0):
		return fmt.Errorf("%w: pacing needs Interval > 0 or Rate > 0 (got %v, %v)", ErrPacket, f.Interval, f.Rate)
	case f.Burst < 0 || f.BurstGap < 0:
		return fmt.Errorf("%w: burst %d, gap %v must not be negative", ErrPacket, f.Burst, f.BurstGap)
	}
	return nil
}

func (f *Flow) packet(t units.Time, length int) Packet {
	return Packet{Time: t, Src: f.Src, Dst: f.Dst, Proto: f.Proto, SrcPort: f.SrcPort, DstPort: f.DstPort,
		DSCP: f.DSCP, ECN: f.ECN, Length: length, TCPFlags: f.TCPFlags, Opcode: f.Opcode, MoreFragments: f.MoreFragments, MSS: f.MSS}
}

// gap is the spacing after a packet of the given length.
func (f *Flow) gap(length int) units.Time {
	if f.AtOnce {
		return 0
	}
	if f.Interval > 0 {
		return f.Interval
	}
	return units.SerializationTime(int64(length+WireOverhead), f.Rate)
}

// Bytes is the sum of the flow's packet sizes L.
func (f *Flow) Bytes() int64 {
	last := f.Length
	if f.LastLength != 0 {
		last = f.LastLength
	}
	return int64(f.Packets-1)*int64(f.Length) + int64(last)
}

// cursor walks one flow's packets in time order.
type cursor struct {
	f       *Flow
	index   int // position of the flow in the scenario (tie-break)
	sent    int // packets emitted
	t       units.Time
	seq     uint32
	inBurst int
	rng     *rand.Rand
}

func (c *cursor) length() int {
	if c.sent == c.f.Packets-1 && c.f.LastLength != 0 {
		return c.f.LastLength
	}
	return c.f.Length
}

// next returns the cursor's current packet and advances; done reports that the flow
// has no packet left after this one.
func (c *cursor) next() (p Packet, done bool) {
	n := c.length()
	p = c.f.packet(c.t, n)
	p.Seq = c.seq
	c.seq += uint32(n - MinLength(c.f.Proto, c.f.Src.Is6()))
	c.sent++
	c.t += c.f.gap(n)
	if c.f.Burst > 0 {
		c.inBurst++
		if c.inBurst == c.f.Burst {
			c.inBurst = 0
			c.t += units.Time(c.rng.ExpFloat64() * float64(c.f.BurstGap))
		}
	}
	return p, c.sent == c.f.Packets
}

// cursorHeap is a min-heap of cursors ordered by (time, flow index).
type cursorHeap []*cursor

func (h cursorHeap) less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].index < h[j].index
}

func (h *cursorHeap) push(c *cursor) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

// fix restores the heap after the root changed.
func (h cursorHeap) fix() {
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h) && h.less(l, m) {
			m = l
		}
		if r < len(h) && h.less(r, m) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h *cursorHeap) pop() {
	s := *h
	n := len(s) - 1
	s[0] = s[n]
	s[n] = nil
	*h = s[:n]
	h.fix()
}
