package transport

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
)

// Control packets carry their flow's IP header: an IPv4 TCP ACK is L = 40 bytes (a
// 64-byte frame, the Ethernet minimum) and an IPv6 one 60 (78: IPv6's fixed header is
// 40 bytes, IPv4's 20); a RoCE ACK 60 (78) and 80 (98)
// (docs/model.md#closed-loop-transports). Every control packet is built by the same
// code, so CNPs and NAKs follow the ACKs. Each flow sends one segment from host 0 to
// host 1 alone in a star; host 1's NIC then sends exactly one frame, the ACK.
func TestControlPacketLengthsByFamily(t *testing.T) {
	for _, c := range []struct {
		spec  FlowSpec
		seg   Segment
		frame int64
	}{
		{FlowSpec{Kind: NewReno, SMSS: 1460}, tcpSeg(1500, 0, 0), 64},
		{FlowSpec{Kind: NewReno, SMSS: 1440, IPv6: true}, Segment{Length: 1500, Payload: 1440}, 78},
		{FlowSpec{Kind: DCQCN}, Segment{Length: 1060}, 78},
		{FlowSpec{Kind: DCQCN, IPv6: true}, Segment{Length: 1080}, 98},
	} {
		st := newStar(t, 2, config.Default().Switch, config.DefaultTransport(), link100G())
		c.spec.Src, c.spec.Dst, c.spec.Key, c.spec.Reverse = 0, 1, st.key(1), st.key(2)
		if err := st.layer.NewFlow(0, c.spec); err != nil {
			t.Fatal(err)
		}
		scheduleOffers(st, []offer{{at: 0, flow: 0, seg: c.seg}})
		st.eng.Run()
		var packets, bytes int64
		for _, s := range st.hosts[1].PortStats(0) {
			packets += s.TxPackets
			bytes += s.TxBytes
		}
		if packets != 1 || bytes != c.frame || len(st.rec.deliveries) != 1 {
			t.Errorf("%v (IPv6 %v): the receiver sent %d frames of %d bytes for %d deliveries, want 1 frame of %d",
				c.spec.Kind, c.spec.IPv6, packets, bytes, len(st.rec.deliveries), c.frame)
		}
		checkConservation(t, st)
	}
}
