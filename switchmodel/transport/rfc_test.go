package transport

import (
	"testing"

	"github.com/tracefabric/tracefabric/internal/config"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// bench drives one TCP sender by hand: every data packet it sends is lost on the wire
// (the first switch drops it), and the test plays the receiver, feeding the ACKs the
// RFC's scenario calls for at the times it chooses. Expected windows are the RFC's
// arithmetic, written out in each test.
type bench struct {
	st    *star
	f     *flow
	h     switchmodel.HandlerID
	steps []func()
	sends []sendRec
}

// sendRec is one data packet the sender put into its NIC.
type sendRec struct {
	at  units.Time
	seq int32
}

// SMSS of every bench flow: segments of 1000 payload bytes.
const benchSMSS = 1000

func newBench(t *testing.T, tr config.Transport, kind Kind) *bench {
	t.Helper()
	st := newStar(t, 2, config.Default().Switch, tr, link100G())
	if err := st.layer.NewFlow(0, FlowSpec{Kind: kind, Src: 0, Dst: 1, Key: st.key(0), Reverse: st.key(1), SMSS: benchSMSS}); err != nil {
		t.Fatal(err)
	}
	b := &bench{st: st, f: st.layer.flows[0]}
	st.layer.lose = func(p *switchmodel.Packet) bool {
		if p.Class == switchmodel.ClosedData {
			b.sends = append(b.sends, sendRec{st.eng.Now(), p.Seq})
		}
		return true
	}
	b.h = st.eng.Register(b)
	return b
}

// at runs fn at time t (in the order scheduled for equal times).
func (b *bench) at(t units.Time, fn func()) {
	b.steps = append(b.steps, fn)
	b.st.eng.Schedule(t, b.h, 0, int64(len(b.steps)-1))
}

func (b *bench) Handle(now units.Time, kind int32, arg int64) { b.steps[arg]() }

// offer makes n segments of the given payload available now.
func (b *bench) offer(n int, payload int32) {
	for i := 0; i < n; i++ {
		b.st.layer.Offer(0, Segment{Length: payload + 40, Payload: payload, ECN: switchmodel.ECT0, TraceIndex: int64(i)})
	}
}

// ack feeds the sender an ACK for everything before segment a.
func (b *bench) ack(a int32, ece bool) {
	p := &switchmodel.Packet{FlowID: 0, Class: switchmodel.Ack, Seq: a, Echo: ece}
	b.st.layer.Received(b.st.eng.Now(), b.st.hosts[0], p)
}

// sentAt counts the data packets sent at time t; nxt is one past the highest segment
// sent so far.
func (b *bench) sentAt(t units.Time) int {
	n := 0
	for _, s := range b.sends {
		if s.at == t {
			n++
		}
	}
	return n
}

func (b *bench) nxt() int32 {
	var n int32
	for _, s := range b.sends {
		n = max(n, s.seq+1)
	}
	return n
}

func (b *bench) run(until units.Time) { b.st.eng.RunUntil(until) }

func noLT() config.Transport {
	tr := config.DefaultTransport()
	tr.LimitedTransmit = false
	return tr
}

// RFC 5681 section 4.1: "a TCP SHOULD set cwnd to no more than RW before beginning
// transmission if the TCP has not sent data in an interval exceeding the
// retransmission timeout", RW = min(IW, cwnd). First the window grows to 30
// segments: 20 segments are available at 0 (10 go, IW = 10 x 1000 B), and each of the
// 20 is acknowledged on its own, 1 ns apart from 20 us: each ACK adds one SMSS (slow
// start; the sender was cwnd-limited in that window of data, RFC 7661), so cwnd =
// 10,000 + 20 x 1,000 = 30,000 B; the last segment left with the ACK of segment 4, at
// 20 us + 4 ns. RTO = MinRto = 10 ms (RTT samples of about 20 us). Then 40 segments
// become available `idle` later: how many leave at once is the restarted window.
// Linux halves cwnd once per RTO of idle time beyond the first, not below RW.
func TestTCPIdleRestart(t *testing.T) {
	const lastSend = 20*units.Microsecond + 4
	rto := 10 * units.Millisecond
	for _, c := range []struct {
		mode config.IdleRestart
		idle units.Time
		want int // segments sent at once
	}{
		{config.IdleRfc5681, rto, 30},                         // not longer than the RTO: the window stays
		{config.IdleRfc5681, rto + 1, 10},                     // restart at IW
		{config.IdleRfc5681, 5 * rto, 10},                     // the same however long
		{config.IdleLinux, rto, 30},                           // no restart
		{config.IdleLinux, rto + 1, 15},                       // 1 ps beyond one RTO: halved once
		{config.IdleLinux, 2*rto + 500*units.Microsecond, 10}, // halved twice: 7.5 -> RW = 10
		{config.IdleOff, 5 * rto, 30},
	} {
		tr := config.DefaultTransport()
		tr.IdleRestart = c.mode
		b := newBench(t, tr, NewReno)
		b.at(0, func() { b.offer(20, 1000) })
		for k := int32(1); k <= 20; k++ {
			b.at(20*units.Microsecond+units.Time(k-1), func() { b.ack(k, false) })
		}
		b.at(lastSend+c.idle, func() {
			if b.f.cwnd != 30_000 || b.f.rto != rto || b.f.lastSend != lastSend {
				t.Errorf("%v: before the burst cwnd %v, RTO %v, last send %v; the scenario wants 30000, %v, %v", c.mode, b.f.cwnd, b.f.rto, b.f.lastSend, rto, lastSend)
			}
			b.offer(40, 1000)
		})
		b.run(lastSend + c.idle + 1)
		if got := b.sentAt(lastSend + c.idle); got != c.want {
			t.Errorf("%v, idle %v: %d segments sent at once, want %d (cwnd %v)", c.mode, c.idle, got, c.want, b.f.cwnd)
		}
	}
}

// RFC 7661: a sender that is not cwnd-limited does not grow its window. An
// application that sends one segment every 100 us, each acknowledged 10 us later, has
// never more than one in flight: after 50 of them cwnd is still IW, and a burst of 30
// segments sends 10. One that sends 6 at a time (each acknowledged on its own) grows
// the window in slow start only while it is below twice its largest flight (Linux's
// tcp_is_cwnd_limited): to 12 segments, and a burst then sends 12.
func TestTCPGrowsOnlyWhenCwndLimited(t *testing.T) {
	for _, c := range []struct {
		perBurst int
		want     int
	}{{1, 10}, {6, 12}} {
		b := newBench(t, config.DefaultTransport(), NewReno)
		var seq int32
		for k := 0; k < 50; k++ {
			at := units.Time(k) * 100 * units.Microsecond
			b.at(at, func() { b.offer(c.perBurst, 1000) })
			for j := 0; j < c.perBurst; j++ {
				seq++
				s := seq
				b.at(at+10*units.Microsecond+units.Time(j), func() { b.ack(s, false) })
			}
		}
		burst := 50 * 100 * units.Microsecond
		b.at(burst, func() { b.offer(30, 1000) })
		b.run(burst + 1)
		if got := b.sentAt(burst); got != c.want || b.f.cwnd != float64(c.want*1000) {
			t.Errorf("%d in flight at a time: the burst sent %d segments, cwnd %v; want %d and %d B", c.perBurst, got, b.f.cwnd, c.want, c.want*1000)
		}
	}
}

// RFC 3042: "transmit new data upon the arrival of a duplicate ACK when ... the amount
// of outstanding data would remain less than or equal to the congestion window plus 2
// segments ... The congestion window (cwnd) MUST NOT be changed", and RFC 5681 3.2:
// at the third duplicate ACK "additional data sent in limited transmit MUST NOT be
// included in" ssthresh = max(FlightSize/2, 2 SMSS). cwnd = IW = 10,000 B, segments
// 0..9 in flight, 0 lost: the first two duplicate ACKs send segments 10 and 11 (flight
// 11,000 and 12,000 <= 12,000), cwnd stays 10,000; the third retransmits 0 with
// ssthresh = 10,000 / 2 = 5,000 (not 12,000 / 2) and cwnd = 5,000 + 3 x 1,000. A
// segment that does not fit (2,500 B: 12,500 > 12,000) is not sent; without
// LimitedTransmit neither is segment 10.
func TestTCPLimitedTransmit(t *testing.T) {
	for _, c := range []struct {
		name   string
		lt     bool
		tenth  int32 // payload of segment 10
		sentLT []int32
	}{
		{"on", true, 1000, []int32{10, 11}},
		{"segment too large", true, 2500, nil},
		{"off", false, 1000, nil},
	} {
		tr := config.DefaultTransport()
		tr.LimitedTransmit = c.lt
		b := newBench(t, tr, NewReno)
		b.at(0, func() {
			b.offer(10, 1000)
			b.offer(1, c.tenth)
			b.offer(9, 1000)
		})
		const t0 = 20 * units.Microsecond
		var cwnds []float64
		for k := 0; k < 3; k++ {
			b.at(t0+units.Time(k), func() { b.ack(0, false); cwnds = append(cwnds, b.f.cwnd) })
		}
		b.run(t0 + 10)
		var lt []int32
		for _, s := range b.sends {
			if s.at > 0 && s.seq >= 10 {
				lt = append(lt, s.seq)
			}
		}
		if len(lt) != len(c.sentLT) || len(lt) > 0 && (lt[0] != c.sentLT[0] || lt[1] != c.sentLT[1]) {
			t.Errorf("%s: new segments sent on the duplicate ACKs %v, want %v", c.name, lt, c.sentLT)
		}
		if cwnds[0] != 10_000 || cwnds[1] != 10_000 {
			t.Errorf("%s: cwnd after the first two duplicate ACKs %v, want 10000 (unchanged)", c.name, cwnds[:2])
		}
		if b.f.ssthresh != 5000 || b.f.cwnd != 8000 || !b.f.inRecovery || b.sentAt(t0+2) != 1 {
			t.Errorf("%s: after the third: ssthresh %v, cwnd %v, recovery %v, %d retransmitted; want 5000, 8000, true, 1", c.name, b.f.ssthresh, b.f.cwnd, b.f.inRecovery, b.sentAt(t0+2))
		}
	}
}

// RFC 6582 3.2 step 5: on a partial ACK "Deflate the congestion window by the amount
// of new data acknowledged ... If the partial ACK acknowledges at least one SMSS of
// new data, then add back SMSS bytes"; step 3 (full ACK, option 1): "Set cwnd to min
// (ssthresh, max(FlightSize, SMSS) + SMSS)". Limited transmit off, so that only
// RFC 6582's rules move the window.
//
// Large hole: segments 0..9 of 1000 B in flight, 0 and 5 lost. Duplicate ACKs for
// 1-4 and 6-9: the third enters recovery (ssthresh 5,000, cwnd 8,000), the next five
// inflate to 13,000 and send segments 10, 11, 12. The retransmission of 0 is
// acknowledged up to 5: 5,000 B, so cwnd = 13,000 - 5,000 + 1,000 = 9,000 and 5 is
// resent. The ACK of 14 (everything) ends recovery: min(5,000, max(0, 1,000) +
// 1,000) = 2,000.
//
// Small hole: segment 0 carries 100 B, 1..19 1000 B; 0 and 1 lost. 0..9 fit the IW
// (flight 9,100 B); eight duplicate ACKs: recovery at the third (ssthresh 4,550,
// cwnd 7,550), then 12,550. The partial ACK of 0 acknowledges 100 B < SMSS: cwnd =
// 12,550 - 100 = 12,450, nothing added back.
func TestTCPPartialAck(t *testing.T) {
	t.Run("large hole", func(t *testing.T) {
		b := newBench(t, noLT(), NewReno)
		b.at(0, func() { b.offer(20, 1000) })
		const t0 = 20 * units.Microsecond
		for k := 0; k < 8; k++ {
			b.at(t0+units.Time(k), func() { b.ack(0, false) })
		}
		var partial, full float64
		var resent bool
		b.at(t0+10, func() {
			if b.f.cwnd != 13_000 || b.nxt() != 13 {
				t.Errorf("before the partial ACK: cwnd %v, next %d; want 13000, 13", b.f.cwnd, b.nxt())
			}
			n := len(b.sends)
			b.ack(5, false)
			partial = b.f.cwnd
			resent = len(b.sends) > n && b.sends[n].seq == 5
		})
		b.at(t0+20, func() { b.ack(14, false); full = b.f.cwnd })
		b.run(t0 + 30)
		if partial != 9000 || !resent {
			t.Errorf("partial ACK of 5,000 B: cwnd %v (resent 5: %v), want 9000", partial, resent)
		}
		if full != 2000 || b.f.inRecovery {
			t.Errorf("full ACK: cwnd %v (recovery %v), want 2000", full, b.f.inRecovery)
		}
	})
	t.Run("small hole", func(t *testing.T) {
		b := newBench(t, noLT(), NewReno)
		b.at(0, func() {
			b.offer(1, 100)
			b.offer(19, 1000)
		})
		const t0 = 20 * units.Microsecond
		for k := 0; k < 8; k++ {
			b.at(t0+units.Time(k), func() { b.ack(0, false) })
		}
		var before, after float64
		b.at(t0+10, func() { before = b.f.cwnd; b.ack(1, false); after = b.f.cwnd })
		b.run(t0 + 20)
		if before != 12_550 || after != 12_450 || b.f.ssthresh != 4550 {
			t.Errorf("cwnd %v -> %v on a partial ACK of 100 B (ssthresh %v), want 12550 -> 12450 (4550)", before, after, b.f.ssthresh)
		}
	})
}

// RFC 5681 3.1: ssthresh = max(FlightSize/2, 2 SMSS) "when ... the given segment has
// not yet been resent by way of the retransmission timer"; "if the given segment has
// already been retransmitted by the retransmission timer at least once, the value of
// ssthresh is held constant". 10 segments in flight and no ACK: the timeout at
// InitialRto = 10 ms sets ssthresh = 5,000 and resends segment 0 (RTO doubles: 20 ms);
// the timeouts at 30 ms and 70 ms, with one segment in flight, keep 5,000 (not
// max(500, 2,000)).
func TestTCPRepeatedTimeoutKeepsSsthresh(t *testing.T) {
	b := newBench(t, config.DefaultTransport(), NewReno)
	b.at(0, func() { b.offer(10, 1000) })
	var at []float64
	for _, ms := range []units.Time{10, 30, 70} {
		b.at(ms*units.Millisecond+1, func() { at = append(at, b.f.ssthresh) })
	}
	b.run(71 * units.Millisecond)
	if b.f.timeouts != 3 || len(at) != 3 || at[0] != 5000 || at[1] != 5000 || at[2] != 5000 || b.f.cwnd != 1000 {
		t.Errorf("%d timeouts, ssthresh after each %v, cwnd %v; want 3, [5000 5000 5000], 1000", b.f.timeouts, at, b.f.cwnd)
	}
	for i, ms := range []units.Time{10, 30, 70} {
		if b.sentAt(ms*units.Millisecond) != 1 {
			t.Errorf("timeout %d at %d ms resent %d segments, want 1", i+1, ms, b.sentAt(ms*units.Millisecond))
		}
	}
}

// A DCTCP window cut by ECE covers the segments sent before it; the loss of the first
// segment sent after the cut is a new congestion event (RFC 3168 6.1.2: one reaction
// per window of data) and cuts the window again. 40 segments available, 0..9 sent
// (IW); the ACK of 0 carries ECE: slow start to 11,000, then the cut with alpha = 1
// to 5,500 (ssthresh 5,500), the cut covering segments before 10. The ACKs of 1..9
// grow cwnd by SMSS^2/cwnd each (congestion avoidance: 5,681.8, 5,857.8, 6,028.5,
// 6,194.4, ...) and let segment 10 go with the ACK of 4 (flight 5,000 + 1,000 <=
// 6,194.4), then one segment per ACK up to 15. Segment 10 is lost: the third
// duplicate ACK retransmits it with ssthresh = max(FlightSize/2, 2 SMSS) = (16 - 10)
// x 1,000 / 2 = 3,000 and cwnd = 6,000.
func TestDCTCPLossAfterECECut(t *testing.T) {
	b := newBench(t, noLT(), DCTCP)
	b.at(0, func() { b.offer(40, 1000) })
	const t0 = 20 * units.Microsecond
	var cut float64
	b.at(t0, func() { b.ack(1, true); cut = b.f.cwnd })
	for k := int32(2); k <= 10; k++ {
		b.at(t0+units.Time(k), func() { b.ack(k, false) })
	}
	var first, before int32 = -1, 0
	b.at(t0+50, func() { before = b.nxt() })
	for k := 0; k < 3; k++ {
		b.at(t0+100+units.Time(k), func() { b.ack(10, false) })
	}
	b.run(t0 + 200)
	for _, s := range b.sends {
		if s.at > t0 {
			first = s.seq
			break
		}
	}
	if cut != 5500 || first != 10 || before != 16 {
		t.Fatalf("ECE cut to %v, first segment after it %d, highest sent before the duplicate ACKs %d; want 5500, 10, 15", cut, first, before-1)
	}
	if b.f.ssthresh != 3000 || b.f.cwnd != 6000 || !b.f.inRecovery {
		t.Errorf("after the third duplicate ACK: ssthresh %v, cwnd %v, recovery %v; want 3000, 6000, true", b.f.ssthresh, b.f.cwnd, b.f.inRecovery)
	}
}

// RFC 6928 section 2: "The upper bound for the initial window will be min (10*MSS,
// max (2*MSS, 14600))"; InitialWindowBytes 0 drops the byte bound (Linux's 10
// segments whatever their size).
func TestInitialWindowRFC6928(t *testing.T) {
	for _, c := range []struct {
		smss  float64
		bound units.Bytes
		want  float64
	}{
		{1460, 14600, 14600}, {536, 14600, 5360}, {1000, 14600, 10000}, {4000, 14600, 14600},
		{8960, 14600, 17920}, // 2 SMSS: above 14,600
		{8960, 0, 89600}, {1460, 0, 14600},
	} {
		if got := initialWindow(10, c.smss, c.bound); got != c.want {
			t.Errorf("SMSS %v, bound %v: IW %v, want %v", c.smss, c.bound, got, c.want)
		}
	}
}
