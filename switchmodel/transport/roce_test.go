package transport

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// A RoCE flow that loses a retransmission recovers one NakInterval after its first
// NAK, not after RoceTimeout (docs/model.md#dcqcn). 20 packets of L = 1060 (a 1098-byte
// wire frame, 87,840 ps at 100 Gb/s) leave back to back at 0 from host 0 to host 1
// (one switch, 1 us links); packet 5 is lost, and so is its first retransmission.
//
//   - Packet 6 reaches the receiver at 8 x 87,840 + 2 us = 2,702,720 ps: NAK 1.
//   - The NAK (a 98-byte frame, 7,840 ps per hop) reaches the sender at 2,702,720 +
//     2 x (7,840 + 1 us) = 4,718,400 ps; it goes back to 5 and resends 5..19, and the
//     resent 5 is lost. 6..19 arrive out of sequence again: no NAK, the receiver
//     still waits for the same packet.
//   - 500 us after NAK 1 (502,702,720 ps) the receiver still waits for 5: NAK 2,
//     at the sender at 504,718,400 ps; 5..19 go again, the last (14 wire times later)
//     delivered at 504,718,400 + 14 x 87,840 + 2 x 87,840 + 2 us = 508,123,840 ps.
//
// With NakInterval 0 (one NAK per gap) the flow waits for RoceTimeout instead.
func TestRoCELostRetransmissionRecoversByNakInterval(t *testing.T) {
	for _, c := range []struct {
		interval units.Time
	}{{500 * units.Microsecond}, {0}} {
		tr := config.DefaultTransport()
		tr.NakInterval = c.interval
		st := newStar(t, 2, config.Default().Switch, tr, link100G())
		if err := st.layer.NewFlow(0, FlowSpec{Kind: DCQCN, Src: 0, Dst: 1, Key: st.key(0), Reverse: st.key(1)}); err != nil {
			t.Fatal(err)
		}
		sends5 := 0
		st.layer.lose = func(p *switchmodel.Packet) bool {
			if p.Class == switchmodel.ClosedData && p.Seq == 5 {
				sends5++
				return sends5 <= 2
			}
			return false
		}
		var list []offer
		for i := 0; i < 20; i++ {
			list = append(list, offer{at: 0, flow: 0, seg: roceSeg(1060, int64(i))})
		}
		scheduleOffers(st, list)
		st.eng.Run()
		s, _ := st.layer.Stats(0)
		naks := st.layer.Generated()[switchmodel.Nak]
		if c.interval > 0 {
			if !s.Complete || s.LastDelivery != 508_123_840 || s.Timeouts != 0 || naks != 2 || s.Retransmits != 30 {
				t.Errorf("NakInterval %v: complete %v, last delivery %d ps, %d timeouts, %d NAKs, %d retransmits; want true, 508123840, 0, 2, 30",
					c.interval, s.Complete, s.LastDelivery, s.Timeouts, naks, s.Retransmits)
			}
		} else if !s.Complete || s.Timeouts != 1 || naks != 1 || s.LastDelivery < tr.RoceTimeout {
			t.Errorf("NakInterval 0: complete %v, %d timeouts, %d NAKs, last delivery %v; want one NAK and recovery after RoceTimeout %v",
				s.Complete, s.Timeouts, naks, s.LastDelivery, tr.RoceTimeout)
		}
		checkConservation(t, st)
	}
}

// The receiver re-sends its NAK while it waits and stops when the packet arrives: a
// lost NAK is re-sent too. Packet 5 of 20 is lost once, and so is the NAK asking for
// it: NAK 2 goes 500 us after NAK 1 (2,702,720 + 500 us), the go-back delivers 5..19,
// and no third NAK follows (the check 500 us after NAK 2 finds the gap closed).
func TestRoCELostNakResent(t *testing.T) {
	st := newStar(t, 2, config.Default().Switch, config.DefaultTransport(), link100G())
	if err := st.layer.NewFlow(0, FlowSpec{Kind: DCQCN, Src: 0, Dst: 1, Key: st.key(0), Reverse: st.key(1)}); err != nil {
		t.Fatal(err)
	}
	var nakAt []units.Time
	lost := false
	st.layer.lose = func(p *switchmodel.Packet) bool {
		switch {
		case p.Class == switchmodel.ClosedData && p.Seq == 5 && !lost:
			lost = true
			return true
		case p.Class == switchmodel.Nak:
			nakAt = append(nakAt, st.eng.Now())
			return len(nakAt) == 1
		}
		return false
	}
	var list []offer
	for i := 0; i < 20; i++ {
		list = append(list, offer{at: 0, flow: 0, seg: roceSeg(1060, int64(i))})
	}
	scheduleOffers(st, list)
	st.eng.RunUntil(50 * units.Millisecond)
	if ev := st.layer.flows[0].nakEv; ev >= 0 {
		t.Errorf("a NAK re-send check is still pending at %v, after the gap closed", ev)
	}
	s, _ := st.layer.Stats(0)
	if len(nakAt) != 2 || nakAt[0] != 2_702_720 || nakAt[1] != 502_702_720 || !s.Complete || s.Timeouts != 0 {
		t.Errorf("NAKs at %v, complete %v, %d timeouts; want [2702720 502702720], true, 0", nakAt, s.Complete, s.Timeouts)
	}
	checkConservation(t, st)
}

// NicControlPriority (docs/model.md#nic-control-packets): a RoCE receiver's ACK leaves
// its NIC before the host's own queued data, after the frame on the wire; with none
// it waits behind that data in its class. Host 1 sends ten 9000-byte open-loop
// packets (TC 3, 723,040 ps each) to host 2 from t = 0; a RoCE packet (L = 1060) from
// host 0 reaches host 1 at 2 x 87,840 + 2 us = 2,175,680 ps, during host 1's fourth
// frame (2,169,120 to 2,892,160 ps): its ACK starts at 2,892,160 ps ahead of the six
// frames left, or at 10 x 723,040 = 7,230,400 ps behind them. A TCP flow's ACK waits
// unless NicControlPriority is all.
func TestNicControlPriority(t *testing.T) {
	for _, c := range []struct {
		prio config.NicControlPriority
		kind Kind
		want units.Time
	}{
		{config.ControlRoce, DCQCN, 2_892_160},
		{config.ControlNone, DCQCN, 7_230_400},
		{config.ControlAll, DCQCN, 2_892_160},
		{config.ControlRoce, NewReno, 7_230_400},
		{config.ControlAll, NewReno, 2_892_160},
	} {
		tr := config.DefaultTransport()
		tr.NicControlPriority = c.prio
		st := newStar(t, 3, config.Default().Switch, tr, link100G())
		if err := st.layer.NewFlow(0, FlowSpec{Kind: c.kind, Src: 0, Dst: 1, Key: st.key(0), Reverse: st.key(1), SMSS: 1020}); err != nil {
			t.Fatal(err)
		}
		// The data packet: DSCP 26 (TC 3), as the bulk.
		scheduleOffers(st, []offer{{at: 0, flow: 0, seg: Segment{Length: 1060, Payload: 1020, DSCP: 26, ECN: switchmodel.ECT0}}})
		bulk := &burster{net: st.net, src: st.hosts[1], dst: 2}
		h := st.eng.Register(bulk)
		for i := 0; i < 10; i++ {
			st.eng.Schedule(0, h, 0, 0)
		}
		st.eng.Run()
		var ackAt units.Time = -1
		for _, d := range st.rec.nic {
			if d.node == st.hosts[1].ID() && d.class == switchmodel.Ack {
				ackAt = d.at
			}
		}
		if ackAt != c.want {
			t.Errorf("%v, %v flow: the ACK left host 1 at %d ps, want %d", c.prio, c.kind, ackAt, c.want)
		}
		checkConservation(t, st)
	}
}
