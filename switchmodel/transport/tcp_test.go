package transport

import (
	"fmt"
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// A short flow (within the initial window) in an empty fabric is never held back by
// its sender: each segment enters the NIC when it becomes available, so its delivery
// is what store and forward over two 100 Gb/s, 1 us links gives (hand-computed).
func TestTCPShortFlowNotHeldBack(t *testing.T) {
	tr := config.DefaultTransport()
	tr.Mode = config.TransportClosed
	st := newStar(t, 2, config.Default().Switch, tr, link100G())
	if err := st.layer.NewFlow(0, FlowSpec{Kind: NewReno, Src: 0, Dst: 1, Key: st.key(0), Reverse: st.key(1), SMSS: 1460}); err != nil {
		t.Fatal(err)
	}
	// 10 segments of 1500 B: five at t = 0 (they queue in the NIC), five 2 us apart.
	const ser = 1538 * 80 // wire bytes x 80 ps per byte at 100 Gb/s
	var list []offer
	var want []units.Time
	for i := 0; i < 5; i++ {
		list = append(list, offer{at: 0, flow: 0, seg: tcpSeg(1500, switchmodel.NotECT, int64(i))})
		// NIC start i*ser; each hop adds ser + 1 us.
		want = append(want, units.Time(i*ser+2*(ser+1_000_000)))
	}
	for i := 0; i < 5; i++ {
		at := units.Time(10_000_000 + i*2_000_000)
		list = append(list, offer{at: at, flow: 0, seg: tcpSeg(1500, switchmodel.NotECT, int64(5+i))})
		want = append(want, at+2*(ser+1_000_000))
	}
	scheduleOffers(st, list)
	st.eng.Run()
	if len(st.rec.deliveries) != 10 {
		t.Fatalf("%d deliveries", len(st.rec.deliveries))
	}
	for i, d := range st.rec.deliveries {
		if d.seq != int32(i) || d.at != want[i] {
			t.Errorf("segment %d (seq %d) delivered at %d ps, want %d", i, d.seq, d.at, want[i])
		}
	}
	s, _ := st.layer.Stats(0)
	if !s.Complete || s.Retransmits != 0 || s.Sent != 10 || s.LastDelivery != want[9] {
		t.Errorf("stats %+v", s)
	}
	if g := st.layer.Generated(); g[switchmodel.Ack] != 10 {
		t.Errorf("%d ACKs, want one per segment", g[switchmodel.Ack])
	}
	checkConservation(t, st)
}

// jain is Jain's fairness index of xs.
func jain(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	return s * s / (float64(len(xs)) * s2)
}

// DCTCP steady state (docs/model.md#tcp): N long flows through one 100 Gb/s
// bottleneck with step marking at K keep the link busy, the queue around K and the
// flows fair.
func TestDCTCPSteadyState(t *testing.T) {
	const K = 200_000
	for _, n := range []int{2, 8, 16} {
		t.Run(fmt.Sprintf("N%d", n), func(t *testing.T) {
			sw := config.Default().Switch
			sw.EcnMinThreshold, sw.EcnMaxThreshold, sw.EcnMaxProbability = K, K, 1
			sw.BufferStatsReportInterval = 10 * units.Microsecond
			tr := config.DefaultTransport()
			st := newStar(t, n+1, sw, tr, link100G())
			// Each flow has 100 Gb/s x 60 ms of jumbo segments available at t = 0.
			perFlow := int(100e9 * 0.060 / 8 / 9000 / float64(n))
			for f := 0; f < n; f++ {
				if err := st.layer.NewFlow(int32(f), FlowSpec{Kind: DCTCP, Src: int32(f + 1), Dst: 0, Key: st.key(f), Reverse: st.key(100 + f), SMSS: 8960}); err != nil {
					t.Fatal(err)
				}
			}
			o := &bulk{l: st.layer, n: n, per: perFlow}
			st.eng.Schedule(0, st.eng.Register(o), 0, 0)
			const from, to = 5 * units.Millisecond, 55 * units.Millisecond
			st.eng.RunUntil(to)
			// Bottleneck: wire bytes delivered in [from, to).
			perFlowBytes := make([]float64, n)
			var wire float64
			for _, d := range st.rec.deliveries {
				if d.at >= from && d.at < to {
					wire += float64(d.length + 38)
					perFlowBytes[d.flow] += float64(d.length)
				}
			}
			util := wire * 8 / (100e9 * float64(to-from) / 1e12)
			var qsum, qmax float64
			var qn int
			for _, s := range st.rec.samples {
				if s.Time >= from && s.Time < to && s.Pool == 0 {
					q := float64(s.Egress)
					qsum += q
					qmax = max(qmax, q)
					qn++
				}
			}
			qmean := qsum / float64(qn)
			rtt := 4*1e-6 + float64(2*(9038+84))*8/100e9
			bound := K + float64(n)*9000 + 100e9*rtt/8
			j := jain(perFlowBytes)
			t.Logf("N=%d: utilisation %.4f, queue mean %.0f B max %.0f B (bound %.0f), Jain %.5f", n, util, qmean, qmax, bound, j)
			if util < 0.95 {
				t.Errorf("utilisation %.4f < 0.95", util)
			}
			if qmean < K/2 || qmean > 2*K {
				t.Errorf("queue mean %.0f B outside [K/2, 2K] = [%d, %d]", qmean, K/2, 2*K)
			}
			if qmax >= bound {
				t.Errorf("queue max %.0f B >= K + N*SMSS + C*RTT = %.0f B", qmax, bound)
			}
			if j < 0.99 {
				t.Errorf("Jain's index %.5f < 0.99: %v", j, perFlowBytes)
			}
			if len(st.rec.drops) != 0 {
				t.Errorf("%d drops", len(st.rec.drops))
			}
		})
	}
}

// bulk offers every flow's segments at once (a backlogged application).
type bulk struct {
	l      *Layer
	n, per int
}

func (b *bulk) Handle(now units.Time, kind int32, arg int64) {
	for i := 0; i < b.per; i++ {
		for f := 0; f < b.n; f++ {
			b.l.Offer(int32(f), tcpSeg(9000, switchmodel.ECT0, int64(i)))
		}
	}
}

// NewReno on a lossy 16-to-1 incast: the bottleneck drops, every segment still
// arrives exactly once (fast retransmit, timeouts), and with MinRto 10 ms the worst
// flow's completion shows a timeout.
func TestNewRenoLossyIncast(t *testing.T) {
	const n, per = 16, 30 // 16 flows of 30 jumbo segments: tail drops need a timeout
	sw := config.Default().Switch
	sw.BufferSize = 4 * units.MiB // a small lossy pool: the incast overflows it (the initial window is 2 jumbo segments, RFC 6928)
	tr := config.DefaultTransport()
	st := newStar(t, n+1, sw, tr, link100G())
	for f := 0; f < n; f++ {
		if err := st.layer.NewFlow(int32(f), FlowSpec{Kind: NewReno, Src: int32(f + 1), Dst: 0, Key: st.key(f), Reverse: st.key(100 + f), SMSS: 8960}); err != nil {
			t.Fatal(err)
		}
	}
	b := &bulkECN{bulk: bulk{l: st.layer, n: n, per: per}, ecn: switchmodel.NotECT}
	st.eng.Schedule(0, st.eng.Register(b), 0, 0)
	st.eng.Run()
	if len(st.rec.drops) == 0 {
		t.Fatal("no drops: the incast does not overflow the buffer")
	}
	var retx, timeouts int64
	var worst units.Time
	for f := 0; f < n; f++ {
		s, _ := st.layer.Stats(int32(f))
		if !s.Complete || s.Delivered != per || s.Segments != per {
			t.Errorf("flow %d: delivered %d of %d segments (complete %v)", f, s.Delivered, s.Segments, s.Complete)
		}
		retx += s.Retransmits
		timeouts += s.Timeouts
		worst = max(worst, s.LastDelivery-s.FirstAvail)
		if s.Sent != per+s.Retransmits {
			t.Errorf("flow %d: sent %d = %d segments + %d retransmits?", f, s.Sent, per, s.Retransmits)
		}
	}
	// Each segment reached the receiver's application once: count first deliveries.
	seen := map[[2]int64]bool{}
	for _, d := range st.rec.deliveries {
		seen[[2]int64{d.flow, int64(d.seq)}] = true
	}
	if len(seen) != n*per {
		t.Errorf("%d distinct segments delivered, want %d", len(seen), n*per)
	}
	t.Logf("%d drops, %d retransmits, %d timeouts, worst FCT %v", len(st.rec.drops), retx, timeouts, worst)
	if retx == 0 {
		t.Error("no retransmits")
	}
	if worst < tr.MinRto {
		t.Errorf("worst FCT %v shows no timeout (MinRto %v)", worst, tr.MinRto)
	}
	checkConservation(t, st)
	if !st.layer.Idle() {
		t.Error("layer not idle after the run")
	}
}

type bulkECN struct {
	bulk
	ecn uint8
}

func (b *bulkECN) Handle(now units.Time, kind int32, arg int64) {
	for i := 0; i < b.per; i++ {
		for f := 0; f < b.n; f++ {
			b.l.Offer(int32(f), tcpSeg(9000, b.ecn, int64(i)))
		}
	}
}
