package replay

import (
	"encoding/json"
	"maps"
	"net/netip"
	"slices"
	"testing"

	"github.com/tracefabric/tracefabric/internal/tracegen"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// The application model of docs/model.md#application-model on midconn.pcap, one case
// per flow pair (tracegen.MidConnectionScenario, testdata/pcaps/README.md), open and
// closed loop through the empty default fabric: what each flow becomes, which
// captured packets are replaced or replayed, and the one start instant that the FCT
// and the ideal FCT share.
func TestMidConnectionTrace(t *testing.T) {
	const trace = "testdata/pcaps/midconn.pcap"
	type tuple struct {
		src, dst     netip.Addr
		sport, dport uint16
	}
	key := func(f records.FlowRow) tuple {
		return tuple{f.Src.Netip(), f.Dst.Netip(), f.Sport, f.Dport}
	}
	a, b := tracegen.MidAckFirst[0], tracegen.MidAckFirst[1]
	c, d := tracegen.MidOneWay[0], tracegen.MidOneWay[1]
	g, h := tracegen.MidReuse[0], tracegen.MidReuse[1]
	i, j := tracegen.MidFragmented[0], tracegen.MidFragmented[1]
	k, l := tracegen.MidRoCE[0], tracegen.MidRoCE[1]
	// What closed loop makes of each flow of the scenario, and its captured packets.
	want := map[tuple]struct {
		transport string // flows.arrow transport
		packets   int64  // data packets injected (closed loop: its segments; none lost)
	}{
		{b, a, 443, 40000}:  {"dctcp", 3},   // starts with data (no SYN): 3 segments; its 4 ACKs replaced
		{a, b, 40000, 443}:  {"dctcp", 4},   // starts with 3 pure ACKs (replaced), then 4 segments
		{c, d, 40000, 5001}: {"dctcp", 8},   // one-way transfer
		{d, c, 5001, 40000}: {"newreno", 0}, // its 4 ACKs: control only, left out (no data)
		{tracegen.MidAcksOnly[0], tracegen.MidAcksOnly[1], 40000, 22}: {"open", 5}, // 5 ACKs, nobody sends the other way: replayed
		{g, h, 40001, 80}:   {"dctcp", 8},  // two connections: SYN, 2 segments, FIN, twice (its 6 ACKs replaced)
		{h, g, 80, 40001}:   {"dctcp", 10}, // SYN-ACK, 3 segments, FIN, twice
		{i, j, 40002, 80}:   {"open", 4},   // IP fragments: replayed open loop
		{j, i, 80, 40002}:   {"open", 4},   // their ACKs: the reverse has no sender, replayed
		{k, l, 50000, 4791}: {"dcqcn", 20},
		{l, k, 50001, 4791}: {"dcqcn", 0}, // the RoCE ACKs (matched by addresses): left out
		{tracegen.MidCNPOnly[0], tracegen.MidCNPOnly[1], 50002, 4791}: {"open", 3}, // CNPs with no data the other way: replayed
		{tracegen.MidUDP[0], tracegen.MidUDP[1], 5004, 5004}:          {"open", 5},
	}
	// One 1500-byte segment between pods, alone: 6 links of 100 Gb/s and 1 us, each
	// serializing its 1538 wire bytes (docs/model.md#serialization-time).
	hop := units.SerializationTime(int64(tracegen.MidAckFirstLen)+38, 100*units.Gbps) + units.Microsecond
	ackFirst := tuple{a, b, 40000, 443}

	oneWay := tuple{c, d, 40000, 5001}
	runs := map[bool]map[tuple]records.FlowRow{}
	closedDir := ""
	for _, closed := range []bool{false, true} {
		mut := func(o *Options) {
			o.RecordPackets = true
			if closed {
				closedOpts(o)
			}
		}
		run, dir := runTrace(t, trace, mut)
		if closed {
			closedDir = dir
		}
		_, again := runTrace(t, trace, mut)
		sameFiles(t, run, dir, again)
		s := run.Simulation
		var tr struct {
			Replaced map[string]int64 `json:"replaced"`
		}
		if err := json.Unmarshal(run.Trace, &tr); err != nil {
			t.Fatal(err)
		}
		// 93 captured packets; closed loop replaces the pure ACKs of the re-sent and
		// control-only TCP flows (3 + 4 + 4 + 6 = 17) and the 2 RoCE ACKs, and
		// replays the 5 + 4 ACKs and 3 CNPs whose reverse direction has no sender.
		injected := int64(93)
		if closed {
			injected = 93 - 17 - 2
			if w := map[string]int64{"tcp-ack": 17, "roce-ack": 2, "roce-cnp": 0}; !maps.Equal(tr.Replaced, w) {
				t.Errorf("trace.replaced %v, want %v", tr.Replaced, w)
			}
			cl := run.ClosedLoop
			wantFallback := map[string]int64{records.FallbackFragmented: 1, records.FallbackControlWithoutSender: 3, records.FallbackTooManySegments: 0}
			if cl == nil || cl.Flows != 13 || cl.Closed != 6 || cl.ControlOnly != 2 || cl.Open != 1 || !maps.Equal(cl.Fallback, wantFallback) {
				t.Errorf("closed_loop %+v, want 13 flows: 6 closed, 2 control only, 1 open, fallback %v", cl, wantFallback)
			}
		} else if run.ClosedLoop != nil {
			t.Errorf("open loop: closed_loop %+v", run.ClosedLoop)
		}
		if s.Injected != injected || s.Delivered != injected || s.Retransmits != 0 {
			t.Errorf("closed %v: injected %d, delivered %d, retransmits %d; want %d, all delivered, none resent", closed, s.Injected, s.Delivered, s.Retransmits, injected)
		}
		flows := map[tuple]records.FlowRow{}
		for _, f := range readFlows(t, dir) {
			flows[key(f)] = f
			// The empty fabric holds nothing back: every flow completes in its ideal time,
			// but closed loop the one-way transfer's 8 jumbo segments at line rate, more
			// than RFC 6928's initial window (below).
			if f.Completion != records.CompletionComplete || f.FctPs != f.IdealFctPs && !(closed && key(f) == oneWay) {
				t.Errorf("closed %v: flow %d %v: %v, FCT %d, ideal %d: want complete in its ideal time", closed, f.FlowID, key(f), f.Completion, f.FctPs, f.IdealFctPs)
			}
			w, ok := want[key(f)]
			switch {
			case !ok:
				t.Errorf("unexpected flow %v", key(f))
			case closed && (f.Transport.String() != w.transport || f.Packets != w.packets):
				t.Errorf("closed loop: flow %v: %v, %d packets; want %s, %d", key(f), f.Transport, f.Packets, w.transport, w.packets)
			case !closed && f.Transport != records.TransportOpen:
				t.Errorf("open loop: flow %v is %v", key(f), f.Transport)
			}
		}
		if len(flows) != len(want) {
			t.Errorf("%d flows, want %d", len(flows), len(want))
		}
		runs[closed] = flows
	}
	// Flow ids are the same open and closed loop.
	for tu, f := range runs[false] {
		if runs[true][tu].FlowID != f.FlowID {
			t.Errorf("flow %v: id %d open loop, %d closed loop", tu, f.FlowID, runs[true][tu].FlowID)
		}
	}
	// The flow that opens with pure ACKs: its first captured packet is an ACK at 5 us
	// (first_ps, open and closed); closed loop, its application starts with its first
	// data segment at 1 ms, so FCT and ideal both count from there: 3 x 10 us between
	// the 4 segments, plus the last one's 6 hops. Open loop the ACKs are its packets:
	// it starts at 5 us.
	last := 30*units.Microsecond + 6*hop
	for closed, flows := range runs {
		f := flows[ackFirst]
		start := 5 * units.Microsecond
		if closed {
			start = tracegen.MidAckFirstAt
		}
		if f.FirstPs != int64(5*units.Microsecond) || f.IdealFctPs != int64(tracegen.MidAckFirstAt+last-start) {
			t.Errorf("closed %v: the ack-first flow: first_ps %d, ideal %d; want %d, %d", closed, f.FirstPs, f.IdealFctPs,
				5*units.Microsecond, tracegen.MidAckFirstAt+last-start)
		}
	}
	// The one-way transfer closed loop: SMSS 9000 - 40 = 8,960 (no SYN), initial
	// window min(10 SMSS, max(2 SMSS, 14,600)) = 17,920 B: two segments go at once, the
	// third with the first ACK, one round trip between pods later: 6 hops of the data
	// (9,038 wire bytes: 723,040 ps + 1 us each) and 6 of the ACK (84 wire bytes:
	// 6,720 ps + 1 us each), 16,378,560 ps. Without the byte bound (Linux's 10
	// segments) nothing holds it back.
	var sent []int64
	for _, p := range readPackets(t, closedDir) {
		if p.FlowID == runs[true][oneWay].FlowID {
			sent = append(sent, p.InjectPs)
		}
	}
	slices.Sort(sent)
	if len(sent) != 8 || sent[1]-sent[0] > int64(units.Microsecond) || sent[2]-sent[0] != 16_378_560 {
		t.Errorf("one-way transfer closed loop: segments injected at %v; want two at once and the third 16378560 ps after the first", sent)
	}
	_, dir := runTrace(t, trace, func(o *Options) {
		closedOpts(o)
		o.Config.Transport.InitialWindowBytes = 0
	})
	for _, f := range readFlows(t, dir) {
		if key(f) == oneWay && (f.Completion != records.CompletionComplete || f.FctPs != f.IdealFctPs) {
			t.Errorf("one-way transfer, InitialWindowBytes 0: %v, FCT %d, ideal %d; want complete in its ideal time", f.Completion, f.FctPs, f.IdealFctPs)
		}
	}
	// The reused 5-tuple is one flow from its first SYN to its last FIN, in both modes.
	for closed, flows := range runs {
		f := flows[tuple{g, h, 40001, 80}]
		// (The capture moves a packet that ties with the one before it 1 ns later.)
		if f.FirstPs < int64(100*units.Microsecond) || f.FirstPs > int64(101*units.Microsecond) || f.FctPs < int64(2*units.Millisecond+70*units.Microsecond)-f.FirstPs {
			t.Errorf("closed %v: the reused 5-tuple: first_ps %d, FCT %d; want from 100 us past the second FIN at 2.07 ms", closed, f.FirstPs, f.FctPs)
		}
	}
}
