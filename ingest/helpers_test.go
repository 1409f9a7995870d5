package ingest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

// ipSpec describes an IPv4 packet to serialize.
type ipSpec struct {
	src, dst   string
	tos        uint8
	proto      layers.IPProtocol // default TCP
	sport      uint16
	dport      uint16
	flags      layers.IPv4Flag
	fragOff    uint16 // in 8-byte units
	options    bool   // add a Router Alert option (IHL 6)
	payload    int
	tags       []layers.EthernetType // VLAN tag EtherTypes, outermost first
	etherInner layers.EthernetType   // EtherType after the tags (default IPv4)
}

// ipv4Layers serializes the IPv4 packet (header and L4) of s.
func ipv4Bytes(t testing.TB, s ipSpec) []byte {
	t.Helper()
	if s.proto == 0 {
		s.proto = layers.IPProtocolTCP
	}
	if s.src == "" {
		s.src = "10.0.0.1"
	}
	if s.dst == "" {
		s.dst = "10.0.1.2"
	}
	ip := &layers.IPv4{Version: 4, IHL: 5, TOS: s.tos, TTL: 64, Protocol: s.proto,
		SrcIP: net.ParseIP(s.src).To4(), DstIP: net.ParseIP(s.dst).To4(), Flags: s.flags, FragOffset: s.fragOff}
	if s.options {
		ip.Options = []layers.IPv4Option{{OptionType: 148, OptionLength: 4, OptionData: []byte{0, 0}}}
	}
	var ls []gopacket.SerializableLayer
	ls = append(ls, ip)
	switch s.proto {
	case layers.IPProtocolTCP:
		tcp := &layers.TCP{SrcPort: layers.TCPPort(s.sport), DstPort: layers.TCPPort(s.dport), SYN: true, Window: 1000}
		tcp.SetNetworkLayerForChecksum(ip)
		ls = append(ls, tcp)
	case layers.IPProtocolUDP:
		udp := &layers.UDP{SrcPort: layers.UDPPort(s.sport), DstPort: layers.UDPPort(s.dport)}
		udp.SetNetworkLayerForChecksum(ip)
		ls = append(ls, udp)
	case layers.IPProtocolICMPv4:
		ls = append(ls, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0)})
	}
	ls = append(ls, gopacket.Payload(make([]byte, s.payload)))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// etherFrame wraps payload in Ethernet with s.tags; inner is the final EtherType.
func etherFrame(t testing.TB, tags []layers.EthernetType, inner layers.EthernetType, payload []byte) []byte {
	t.Helper()
	first := inner
	if len(tags) > 0 {
		first = tags[0]
	}
	ls := []gopacket.SerializableLayer{&layers.Ethernet{
		SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: first}}
	for i := range tags {
		next := inner
		if i+1 < len(tags) {
			next = tags[i+1]
		}
		ls = append(ls, &layers.Dot1Q{VLANIdentifier: uint16(100 + i), Type: next})
	}
	ls = append(ls, gopacket.Payload(payload))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, ls...); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// ether builds an Ethernet frame carrying the IPv4 packet s.
func ether(t testing.TB, s ipSpec) []byte {
	inner := s.etherInner
	if inner == 0 {
		inner = layers.EthernetTypeIPv4
	}
	return etherFrame(t, s.tags, inner, ipv4Bytes(t, s))
}

// sll builds a Linux cooked v1 frame.
func sll(proto uint16, payload []byte) []byte {
	h := make([]byte, 16)
	binary.BigEndian.PutUint16(h[0:2], 0)   // packet type: to us
	binary.BigEndian.PutUint16(h[2:4], 1)   // ARPHRD_ETHER
	binary.BigEndian.PutUint16(h[4:6], 6)   // address length
	copy(h[6:12], []byte{2, 0, 0, 0, 0, 9}) // address
	binary.BigEndian.PutUint16(h[14:16], proto)
	return append(h, payload...)
}

// sll2 builds a Linux cooked v2 frame.
func sll2(proto uint16, payload []byte) []byte {
	h := make([]byte, 20)
	binary.BigEndian.PutUint16(h[0:2], proto)
	binary.BigEndian.PutUint32(h[4:8], 3) // ifindex
	binary.BigEndian.PutUint16(h[8:10], 1)
	h[11] = 6
	copy(h[12:18], []byte{2, 0, 0, 0, 0, 9})
	return append(h, payload...)
}

// loopback builds a NULL/LOOP frame with the family in the given byte order.
func loopback(order binary.ByteOrder, family uint32, payload []byte) []byte {
	h := make([]byte, 4)
	order.PutUint32(h, family)
	return append(h, payload...)
}

// rec is one record to write into a test capture.
type rec struct {
	ts     time.Time
	frame  []byte
	wire   int // original length; 0 means len(frame)
	iface  int // pcapng interface
	caplen int // captured bytes to keep; 0 means all
}

func (r rec) ci() (gopacket.CaptureInfo, []byte) {
	data := r.frame
	if r.caplen > 0 && r.caplen < len(data) {
		data = data[:r.caplen]
	}
	wire := r.wire
	if wire == 0 {
		wire = len(r.frame)
	}
	return gopacket.CaptureInfo{Timestamp: r.ts, CaptureLength: len(data), Length: wire, InterfaceIndex: r.iface}, data
}

// pcapFile writes a classic pcap with pcapgo (little-endian); nanos selects the
// nanosecond magic. link is patched in after writing, so values above 255
// (LINUX_SLL2), which gopacket v1.1.19's 8-bit LinkType cannot hold, work too.
func pcapFile(t testing.TB, link LinkType, nanos bool, snaplen uint32, recs ...rec) []byte {
	t.Helper()
	var b bytes.Buffer
	var w *pcapgo.Writer
	if nanos {
		w = pcapgo.NewWriterNanos(&b)
	} else {
		w = pcapgo.NewWriter(&b)
	}
	if err := w.WriteFileHeader(snaplen, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		ci, data := r.ci()
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	out := b.Bytes()
	binary.LittleEndian.PutUint32(out[20:24], uint32(link))
	return out
}

// swapPcap converts a little-endian classic pcap into big-endian.
func swapPcap(t testing.TB, le []byte) []byte {
	t.Helper()
	be := append([]byte(nil), le...)
	sw32 := func(o int) { binary.BigEndian.PutUint32(be[o:], binary.LittleEndian.Uint32(le[o:])) }
	sw16 := func(o int) { binary.BigEndian.PutUint16(be[o:], binary.LittleEndian.Uint16(le[o:])) }
	sw32(0)
	sw16(4)
	sw16(6)
	for o := 8; o < 24; o += 4 {
		sw32(o)
	}
	for o := 24; o+16 <= len(le); {
		for k := 0; k < 16; k += 4 {
			sw32(o + k)
		}
		o += 16 + int(binary.LittleEndian.Uint32(le[o+8:]))
	}
	return be
}

// ngIface describes a pcapng interface for ngFile.
type ngIfaceSpec struct {
	link    layers.LinkType
	tsresol uint8 // 0: default (microseconds)
}

// ngFile writes a pcapng with pcapgo's NgWriter: one interface per spec, then recs.
func ngFile(t testing.TB, ifaces []ngIfaceSpec, recs ...rec) []byte {
	t.Helper()
	var b bytes.Buffer
	first := pcapgo.NgInterface{LinkType: ifaces[0].link, SnapLength: 65535, TimestampResolution: pcapgo.NgResolution(ifaces[0].tsresol)}
	w, err := pcapgo.NewNgWriterInterface(&b, first, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ifaces[1:] {
		if _, err := w.AddInterface(pcapgo.NgInterface{LinkType: s.link, SnapLength: 65535, TimestampResolution: pcapgo.NgResolution(s.tsresol)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range recs {
		ci, data := r.ci()
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gz(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readAll reads every packet of in-memory captures; warnings are collected.
func readAll(t testing.TB, opt Options, files ...[]byte) ([]Packet, *Reader, []string, error) {
	t.Helper()
	var warns []string
	opt.Warn = func(m string) { warns = append(warns, m) }
	names := make([]string, len(files))
	for i := range files {
		names[i] = "mem" + string(rune('0'+i)) + ".pcap"
	}
	r, err := newReaderFrom(names, files, opt)
	if err != nil {
		return nil, nil, warns, err
	}
	var out []Packet
	for {
		var p Packet
		ok, err := r.Next(&p)
		if err != nil {
			return out, r, warns, err
		}
		if !ok {
			return out, r, warns, nil
		}
		out = append(out, p)
	}
}

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func at(us int64) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }

// ngb builds pcapng files by hand, for what pcapgo's NgWriter cannot write
// (microsecond interfaces, simple packet blocks, big-endian sections, corruption).
type ngb struct {
	be  bool
	out []byte
}

type appendOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func (b *ngb) order() appendOrder {
	if b.be {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

func pad4(n int) int { return (n + 3) &^ 3 }

// block appends a block of type typ with body (padded to 4 bytes).
func (b *ngb) block(typ uint32, body []byte) *ngb {
	o := b.order()
	n := 12 + pad4(len(body))
	h := make([]byte, 8)
	o.PutUint32(h[0:4], typ)
	o.PutUint32(h[4:8], uint32(n))
	b.out = append(b.out, h...)
	b.out = append(b.out, body...)
	b.out = append(b.out, make([]byte, pad4(len(body))-len(body))...)
	b.out = o.AppendUint32(b.out, uint32(n))
	return b
}

func (b *ngb) shb() *ngb {
	o := b.order()
	body := o.AppendUint32(nil, 0x1A2B3C4D)
	body = o.AppendUint16(body, 1)
	body = o.AppendUint16(body, 0)
	body = o.AppendUint64(body, ^uint64(0))
	return b.block(ngSHB, body)
}

// opt encodes one option.
func (b *ngb) opt(code uint16, val []byte) []byte {
	o := b.order()
	r := o.AppendUint16(nil, code)
	r = o.AppendUint16(r, uint16(len(val)))
	r = append(r, val...)
	return append(r, make([]byte, pad4(len(val))-len(val))...)
}

// idb appends an interface; tsresol < 0 leaves the option out (microseconds).
func (b *ngb) idb(link LinkType, snap uint32, tsresol int, extra ...[]byte) *ngb {
	o := b.order()
	body := o.AppendUint16(nil, uint16(link))
	body = o.AppendUint16(body, 0)
	body = o.AppendUint32(body, snap)
	if tsresol >= 0 {
		body = append(body, b.opt(9, []byte{uint8(tsresol)})...)
	}
	for _, e := range extra {
		body = append(body, e...)
	}
	body = append(body, 0, 0, 0, 0) // end of options
	return b.block(ngIDB, body)
}

// epb appends an enhanced packet block; ts is in the interface's units.
func (b *ngb) epb(iface uint32, ts uint64, frame []byte, wire int) *ngb {
	o := b.order()
	body := o.AppendUint32(nil, iface)
	body = o.AppendUint32(body, uint32(ts>>32))
	body = o.AppendUint32(body, uint32(ts))
	body = o.AppendUint32(body, uint32(len(frame)))
	if wire == 0 {
		wire = len(frame)
	}
	body = o.AppendUint32(body, uint32(wire))
	body = append(body, frame...)
	return b.block(ngEPB, body)
}

func (b *ngb) spb(frame []byte, wire int) *ngb {
	if wire == 0 {
		wire = len(frame)
	}
	return b.block(ngSPB, append(b.order().AppendUint32(nil, uint32(wire)), frame...))
}

// v6Spec describes an IPv6 packet built byte by byte (ipv6Packet), extension headers
// included.
type v6Spec struct {
	src, dst     string // default 2001:db8::1 and 2001:db8:1::2
	tc           uint8  // Traffic Class
	flow         uint32 // Flow Label (20 bits)
	exts         []v6Ext
	proto        uint8 // the upper-layer protocol after the extension headers
	sport, dport uint16
	tcpFlags     uint8 // default SYN
	doff         uint8 // TCP data offset, default 5
	payload      int   // bytes after the upper-layer header
	plen         int   // Payload Length written; 0: the real one
}

// v6Ext is one extension header: Hop-by-Hop (0), Routing (43), Destination Options
// (60) of n bytes (a multiple of 8; default 8), Authentication (51) of n bytes (a
// multiple of 4; default 12), Fragment (44) with its offset in bytes and M flag, or
// any other type of n bytes written with the Hdr Ext Len rule of options headers.
type v6Ext struct {
	typ  uint8
	n    int
	off  uint16 // Fragment: offset in bytes (a multiple of 8)
	more bool   // Fragment: M flag
}

// ipv6Packet serializes s: the 40-byte fixed header, the extension headers, then a
// TCP (6: 20 bytes or doff*4), UDP (17: 8 bytes), ICMPv6 (58: echo request, 8 bytes)
// or other (8 zero bytes) upper-layer header and s.payload zero bytes.
func ipv6Packet(s v6Spec) []byte {
	if s.src == "" {
		s.src = "2001:db8::1"
	}
	if s.dst == "" {
		s.dst = "2001:db8:1::2"
	}
	if s.doff == 0 {
		s.doff = 5
	}
	if s.tcpFlags == 0 {
		s.tcpFlags = 0x02
	}
	src, dst := netip.MustParseAddr(s.src).As16(), netip.MustParseAddr(s.dst).As16()
	var body []byte
	for i, e := range s.exts {
		next := s.proto
		if i+1 < len(s.exts) {
			next = s.exts[i+1].typ
		}
		switch e.typ {
		case 44:
			fo := e.off &^ 7
			if e.more {
				fo |= 1
			}
			body = append(body, next, 0, byte(fo>>8), byte(fo), 0, 0, 0x12, 0x34)
		case 51:
			n := e.n
			if n == 0 {
				n = 12
			}
			h := make([]byte, n)
			h[0], h[1] = next, byte(n/4-2)
			body = append(body, h...)
		default:
			n := e.n
			if n == 0 {
				n = 8
			}
			h := make([]byte, n)
			h[0], h[1] = next, byte(n/8-1)
			if n >= 4 {
				h[2], h[3] = 1, byte(n-4) // a PadN option over the rest
			}
			body = append(body, h...)
		}
	}
	switch s.proto {
	case 6:
		h := make([]byte, 4*int(s.doff))
		binary.BigEndian.PutUint16(h[0:], s.sport)
		binary.BigEndian.PutUint16(h[2:], s.dport)
		h[12], h[13] = s.doff<<4, s.tcpFlags
		body = append(body, h...)
	case 17:
		h := make([]byte, 8)
		binary.BigEndian.PutUint16(h[0:], s.sport)
		binary.BigEndian.PutUint16(h[2:], s.dport)
		binary.BigEndian.PutUint16(h[4:], uint16(8+s.payload))
		body = append(body, h...)
	case 58:
		body = append(body, 128, 0, 0, 0, 0, 1, 0, 1)
	default:
		body = append(body, make([]byte, 8)...)
	}
	body = append(body, make([]byte, s.payload)...)
	first := s.proto
	if len(s.exts) > 0 {
		first = s.exts[0].typ
	}
	plen := s.plen
	if plen == 0 {
		plen = len(body)
	}
	h := make([]byte, 40, 40+len(body))
	binary.BigEndian.PutUint32(h[0:], 6<<28|uint32(s.tc)<<20|s.flow&0xFFFFF)
	binary.BigEndian.PutUint16(h[4:], uint16(plen))
	h[6], h[7] = first, 64
	copy(h[8:24], src[:])
	copy(h[24:40], dst[:])
	return append(h, body...)
}
