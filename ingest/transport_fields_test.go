package ingest

import (
	"net/netip"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/tracegen"
)

// TestDecodeTransportFields: the TCP data offset and flags and the first byte of a UDP
// payload (a RoCEv2 BTH opcode), which closed-loop replay uses to tell pure ACKs,
// RoCE ACKs and CNPs from data (docs/model.md#closed-loop-transports). Frames come
// from tracegen's encoder (gopacket layers); expectations are the header fields the
// test wrote.
func TestDecodeTransportFields(t *testing.T) {
	enc, err := tracegen.NewEncoder(96)
	if err != nil {
		t.Fatal(err)
	}
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.1.1")
	cases := []struct {
		name      string
		pkt       tracegen.Packet
		cutTo     int // captured frame bytes (0: as encoded)
		flags     uint8
		doff      uint8
		payload   int
		known     bool
		opcode    uint8
		hasOpcode bool
		mss       uint16
	}{
		{name: "tcp data", pkt: tracegen.Packet{Proto: layers.IPProtocolTCP, Length: 1500}, flags: tracegen.TCPAck | tracegen.TCPPsh, doff: 5, payload: 1460, known: true},
		{name: "tcp pure ack", pkt: tracegen.Packet{Proto: layers.IPProtocolTCP, Length: 40, TCPFlags: tracegen.TCPAck}, flags: tracegen.TCPAck, doff: 5, payload: 0, known: true},
		{name: "tcp syn", pkt: tracegen.Packet{Proto: layers.IPProtocolTCP, Length: 40, TCPFlags: tracegen.TCPSyn}, flags: tracegen.TCPSyn, doff: 5, payload: 0, known: true},
		// A SYN's MSS option (RFC 9293 3.7.1): a 24-byte TCP header; cut by the
		// capture, or on a segment that is not a SYN, it is not read.
		{name: "tcp syn mss", pkt: tracegen.Packet{Proto: layers.IPProtocolTCP, Length: 44, TCPFlags: tracegen.TCPSyn, MSS: 1460}, flags: tracegen.TCPSyn, doff: 6, known: true, mss: 1460},
		{name: "tcp syn-ack mss 8960", pkt: tracegen.Packet{Proto: layers.IPProtocolTCP, Length: 44, TCPFlags: tracegen.TCPSyn | tracegen.TCPAck, MSS: 8960}, flags: tracegen.TCPSyn | tracegen.TCPAck, doff: 6, known: true, mss: 8960},
		{name: "tcp syn mss cut", pkt: tracegen.Packet{Proto: layers.IPProtocolTCP, Length: 44, TCPFlags: tracegen.TCPSyn, MSS: 1460}, cutTo: 14 + 20 + 22, flags: tracegen.TCPSyn, doff: 6, known: true},
		{name: "tcp data with mss option", pkt: tracegen.Packet{Proto: layers.IPProtocolTCP, Length: 1500, MSS: 1460}, flags: tracegen.TCPAck | tracegen.TCPPsh, doff: 6, payload: 1456, known: true},
		{name: "tcp fin ack", pkt: tracegen.Packet{Proto: layers.IPProtocolTCP, Length: 40, TCPFlags: tracegen.TCPFin | tracegen.TCPAck}, flags: tracegen.TCPFin | tracegen.TCPAck, doff: 5, known: true},
		// The capture kept 10 of the TCP header's 20 bytes: flags unknown, payload
		// computed for a 20-byte header.
		{name: "tcp header cut", pkt: tracegen.Packet{Proto: layers.IPProtocolTCP, Length: 1000}, cutTo: 14 + 20 + 10, payload: 960, known: false},
		{name: "roce send", pkt: tracegen.Packet{Proto: layers.IPProtocolUDP, DstPort: 4791, Length: 4140}, opcode: 0, hasOpcode: true},
		{name: "roce ack", pkt: tracegen.Packet{Proto: layers.IPProtocolUDP, DstPort: 4791, Length: 60, Opcode: tracegen.OpcodeAcknowledge}, opcode: 0x11, hasOpcode: true},
		{name: "roce cnp", pkt: tracegen.Packet{Proto: layers.IPProtocolUDP, DstPort: 4791, Length: 60, Opcode: tracegen.OpcodeCNP}, opcode: 0x81, hasOpcode: true},
		{name: "udp payload cut", pkt: tracegen.Packet{Proto: layers.IPProtocolUDP, DstPort: 4791, Length: 60, Opcode: tracegen.OpcodeCNP}, cutTo: 14 + 20 + 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.pkt.Src, c.pkt.Dst, c.pkt.SrcPort = a, b, 5000
			if c.pkt.DstPort == 0 {
				c.pkt.DstPort = 80
			}
			frame, wire, err := enc.Encode(&c.pkt)
			if err != nil {
				t.Fatal(err)
			}
			if c.cutTo > 0 {
				frame = frame[:c.cutTo]
			}
			var p Packet
			if r := Decode(LinkEthernet, frame, uint32(wire), &p); r != OK {
				t.Fatalf("reason %v", r)
			}
			if p.HeaderLen != 20 || p.TCPFlags != c.flags || p.TCPDataOffset != c.doff {
				t.Errorf("header length %d flags %#x data offset %d, want 20, %#x, %d", p.HeaderLen, p.TCPFlags, p.TCPDataOffset, c.flags, c.doff)
			}
			if n, known := p.TCPPayload(); n != c.payload || known != c.known {
				t.Errorf("TCPPayload = %d, %v; want %d, %v", n, known, c.payload, c.known)
			}
			if p.TCPMSS != c.mss {
				t.Errorf("TCPMSS %d, want %d", p.TCPMSS, c.mss)
			}
			if p.UDPPayload0 != c.opcode || p.HasUDPPayload0 != c.hasOpcode {
				t.Errorf("UDP payload byte %#x (%v), want %#x (%v)", p.UDPPayload0, p.HasUDPPayload0, c.opcode, c.hasOpcode)
			}
		})
	}
}
