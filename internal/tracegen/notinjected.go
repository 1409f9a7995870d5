package tracegen

import (
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/tracefabric/tracefabric/internal/units"
)

// WriteNotInjected writes a pcap at path holding one packet of every kind a replay
// does not inject as captured, beside two it does: UDP 10.0.0.1 -> 10.0.1.1 of 1000
// bytes (injected), 10.0.0.1 -> 10.0.0.1 (intra-host), 10.0.0.1 -> 10.0.1.1 of 4000
// bytes (longer than an MTU of 1500: split into 3), 10.0.1.1 -> 10.0.0.1 of 1500
// (injected), 1 us apart, then a broadcast ARP request (skipped by the reader).
func WriteNotInjected(path string) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	enc, err := NewEncoder(DefaultSnaplen)
	if err != nil {
		return err
	}
	w := pcapgo.NewWriterNanos(f)
	if err := w.WriteFileHeader(uint32(enc.Snaplen()), layers.LinkTypeEthernet); err != nil {
		return err
	}
	write := func(i int, data []byte, wire int) error {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1_700_000_000, int64(i)*1000).UTC(), CaptureLength: len(data), Length: wire}
		return w.WritePacket(ci, data)
	}
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.1.1")
	for i, p := range []Packet{
		{Src: a, Dst: b, Length: 1000}, // injected as captured
		{Src: a, Dst: a, Length: 1000}, // intra-host
		{Src: a, Dst: b, Length: 4000}, // 4000 > MTU 1500: split into 3
		{Src: b, Dst: a, Length: 1500}, // injected as captured
	} {
		p.Time, p.Proto, p.SrcPort, p.DstPort = units.Time(i)*units.Microsecond, layers.IPProtocolUDP, 1000, 2000
		data, wire, err := enc.Encode(&p)
		if err != nil {
			return fmt.Errorf("packet %d: %w", i, err)
		}
		if err := write(i, data, wire); err != nil {
			return err
		}
	}
	arp := make([]byte, 60) // broadcast ARP request: ethertype 0x0806
	copy(arp, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 10, 0, 0, 1, 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1})
	return write(4, arp, len(arp))
}
