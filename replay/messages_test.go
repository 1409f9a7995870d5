package replay

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

func readMessages(t *testing.T, dir string) []records.MessageRow {
	t.Helper()
	rows, _, err := records.ReadAll(records.OpenMessages(filepath.Join(dir, records.MessagesFile)))
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(rows, func(a, b records.MessageRow) int {
		if a.FlowID != b.FlowID {
			return int(a.FlowID - b.FlowID)
		}
		return int(a.Message - b.Message)
	})
	return rows
}

// The message rule (docs/model.md#messages), open and closed loop, on a hand-built
// capture: a (10.0.0.1:40000) and b (10.0.1.1:80), MessageGap 50 us.
//
//	a->b: 3 data packets at 0, 1, 2 us             message 0
//	      2 data packets at 100, 101 us (gap 98)   message 1
//	b->a: 1 data packet at 110 us                  message 0, follows a's 1
//	      a pure ACK at 112 us                     no message
//	a->b: 1 data packet at 120 us                  message 2, follows b's 0 (turn-around, 19 us gap)
//	      a payload-less FIN at 121 us             no message
//
// Each message's size is its data packets' sizes; in the empty fabric every message
// completes in its ideal time; in closed loop the same messages.
func TestMessageRule(t *testing.T) {
	a, b := addr("10.0.0.1"), addr("10.0.1.1")
	tcp := func(at units.Time, src bool, length int, flags uint8) tracegen.Packet {
		p := tracegen.Packet{Time: at, Src: a, Dst: b, Proto: layers.IPProtocolTCP, SrcPort: 40000, DstPort: 80, Length: length, TCPFlags: flags}
		if !src {
			p.Src, p.Dst, p.SrcPort, p.DstPort = b, a, 80, 40000
		}
		return p
	}
	us := units.Microsecond
	pkts := []tracegen.Packet{
		tcp(0, true, 1000, 0), tcp(us, true, 1000, 0), tcp(2*us, true, 500, 0),
		tcp(100*us, true, 1500, 0), tcp(101*us, true, 1500, 0),
		tcp(110*us, false, 800, 0), tcp(112*us, false, 40, tracegen.TCPAck),
		tcp(120*us, true, 300, 0), tcp(121*us, true, 40, tracegen.TCPFin|tracegen.TCPAck),
	}
	trace := writeTrace(t, pkts)
	type want struct {
		flow, msg          int32
		start              units.Time
		packets, size      int64
		followsF, followsM int64
	}
	wants := []want{
		{0, 0, 0, 3, 2500, -1, -1},
		{0, 1, 100 * us, 2, 3000, -1, -1},
		{0, 2, 120 * us, 1, 300, 1, 0},
		{1, 0, 110 * us, 1, 800, 0, 1},
	}
	for _, closed := range []bool{false, true} {
		_, dir := runTraceAbs(t, trace, func(o *Options) {
			c := config.Default()
			if closed {
				c.Transport.Mode = config.TransportClosed
			}
			c.Transport.MessageGap = 50 * us
			o.Config = &c
		})
		got := readMessages(t, dir)
		if len(got) != len(wants) {
			t.Fatalf("closed %v: %d messages, want %d: %+v", closed, len(got), len(wants), got)
		}
		for i, w := range wants {
			g := got[i]
			if g.FlowID != int64(w.flow) || g.Message != w.msg || g.StartPs != int64(w.start) || g.CapturedPs != g.StartPs ||
				g.Packets != w.packets || g.SizeBytes != w.size || g.FollowsFlowID != w.followsF || int64(g.FollowsMessage) != w.followsM {
				t.Errorf("closed %v: message %d: %+v, want %+v", closed, i, g, w)
			}
			if g.Completion != records.CompletionComplete || g.FctPs != g.IdealFctPs || g.IdealFctPs <= 0 {
				t.Errorf("closed %v: message %d: %v, FCT %d, ideal %d: want complete in its ideal time", closed, i, g.Completion, g.FctPs, g.IdealFctPs)
			}
		}
	}
}

// reqresp.pcap (testdata/pcaps/README.md): one connection of 50 exchanges, a 16-to-1
// incast into the server's host 20 us before the 21st request. Per message, the
// requests that start while the incast's 5 MB drain from the server's link (400 us)
// take up to tens of times their ideal, every other message within 1.25 of it (the
// first response sends 16 segments in a 10-segment initial window); per direction
// each flow's slowdown is 1.00: the connection's lifetime.
// Causality request: every message that follows the other direction's leaves its
// sender (packets.arrow inject_ps) no earlier than that message's last packet was
// delivered (deliver_ps), where captured timing sends some responses first.
func TestRequestResponseMessages(t *testing.T) {
	const trace = "testdata/pcaps/reqresp.pcap"
	conv := tracegen.ReqResp
	// The incast's 5 MB take 400 us of the server's link: a request that starts then
	// queues behind it.
	in := tracegen.ReqRespIncast
	hit := func(m records.MessageRow) bool {
		return m.StartPs >= int64(in.Start) && m.StartPs < int64(in.Start+450*units.Microsecond)
	}
	for _, causal := range []bool{false, true} {
		_, dir := runTrace(t, trace, func(o *Options) {
			closedOpts(o)
			o.RecordPackets = true
			if causal {
				o.Config.Transport.Causality = config.CausalityRequest
			}
		})
		flows := readFlows(t, dir)
		var client, server int64 = -1, -1
		for _, f := range flows {
			switch {
			case f.Dport == conv.ServerPort:
				client = f.FlowID
			case f.Sport == conv.ServerPort:
				server = f.FlowID
			}
			if f.Dport == conv.ServerPort || f.Sport == conv.ServerPort {
				if f.Completion != records.CompletionComplete || float64(f.FctPs) > 1.01*float64(f.IdealFctPs) {
					t.Errorf("causal %v: flow %d: %v, slowdown %.3f; want complete, 1.00 per direction", causal, f.FlowID, f.Completion, float64(f.FctPs)/float64(f.IdealFctPs))
				}
			}
		}
		msgs := readMessages(t, dir)
		var reqs, rsps, reqBytes, rspBytes int64
		var hits []float64
		byKey := map[[2]int64]records.MessageRow{}
		for _, m := range msgs {
			byKey[[2]int64{m.FlowID, int64(m.Message)}] = m
			if m.FlowID != client && m.FlowID != server {
				continue
			}
			if m.FlowID == client {
				reqs++
				reqBytes += m.SizeBytes
			} else {
				rsps++
				rspBytes += m.SizeBytes
			}
			if m.Completion != records.CompletionComplete || m.FctPs < m.IdealFctPs {
				t.Errorf("causal %v: message %+v: want complete, fct >= ideal", causal, m)
				continue
			}
			s := float64(m.FctPs) / float64(m.IdealFctPs)
			switch {
			case m.FlowID == client && hit(m):
				hits = append(hits, s)
			case s > 1.25:
				t.Errorf("causal %v: message %d of flow %d (start %v) slowdown %.2f: want <= 1.25 away from the incast", causal, m.Message, m.FlowID, units.Time(m.StartPs), s)
			}
		}
		t.Logf("causal %v: requests started during the incast: slowdowns %.2f", causal, hits)
		// Each is slower than every message away from the incast (1.25). The last
		// starts as the incast's tail drains (about 375 us in), so its slowdown
		// depends on the tail's last few packets: 1.61 under the insertion-order
		// tie-break, 1.44 under the order key (docs/model.md#event-order-and-determinism).
		if len(hits) < 2 || slices.Min(hits) <= 1.25 || slices.Max(hits) < 10 {
			t.Errorf("causal %v: requests during the incast: slowdowns %.2f; want at least two, each > 1.25, one >= 10", causal, hits)
		}
		if reqs != 50 || rsps != 50 || reqBytes != 50*600 || rspBytes != 50*16*1500 {
			t.Errorf("causal %v: %d requests of %d B, %d responses of %d B; want 50 x 600, 50 x 16 x 1500", causal, reqs, reqBytes, rsps, rspBytes)
		}
		// From packets.arrow: each follower's first send against the delivery of the
		// message it follows (its packets: the other flow's data packets, longer than
		// a SYN's 44 bytes, sent in [start, next start)).
		pk := readPackets(t, dir)
		early := 0
		for _, m := range msgs {
			if (m.FlowID != client && m.FlowID != server) || m.FollowsFlowID < 0 {
				continue
			}
			t0 := m.StartPs
			t1 := int64(1 << 62)
			if nx, ok := byKey[[2]int64{m.FlowID, int64(m.Message) + 1}]; ok {
				t1 = nx.StartPs
			}
			first := int64(-1)
			for _, p := range pk {
				if p.FlowID == m.FlowID && p.Bytes > 44 && p.InjectPs >= t0 && p.InjectPs < t1 && (first < 0 || p.InjectPs < first) {
					first = p.InjectPs
				}
			}
			tr := byKey[[2]int64{m.FollowsFlowID, int64(m.FollowsMessage)}]
			u0, u1 := tr.StartPs, int64(1<<62)
			if nx, ok := byKey[[2]int64{tr.FlowID, int64(tr.Message) + 1}]; ok {
				u1 = nx.StartPs
			}
			delivered := int64(-1)
			for _, p := range pk {
				if p.FlowID == tr.FlowID && p.Bytes > 44 && p.InjectPs >= u0 && p.InjectPs < u1 {
					delivered = max(delivered, p.DeliverPs)
				}
			}
			if first < 0 || delivered < 0 {
				t.Fatalf("causal %v: message %+v: no packets (first %d, the one it follows delivered %d)", causal, m, first, delivered)
			}
			if first < delivered {
				early++
				if causal {
					t.Errorf("message %d of flow %d left at %v, before message %d of flow %d was delivered at %v", m.Message, m.FlowID, units.Time(first),
						tr.Message, tr.FlowID, units.Time(delivered))
				}
			}
		}
		t.Logf("causal %v: %d of 99 followers left before the message they follow was delivered", causal, early)
		if !causal && early == 0 {
			t.Error("captured timing: no message left before the one it follows arrived; the incast does not test causality")
		}
	}
}
