package switchmodel

import (
	"math"
	"testing"

	"github.com/tracefabric/tracefabric/internal/units"
)

// departHeld makes one packet of class tc with codepoint ecn start transmitting on
// switch port e while the queue holds q bytes besides it, and returns its codepoint
// after the ECN marker.
func departHeld(st *star, e *port, tc uint8, q int64, ecn uint8) uint8 {
	s := st.sw
	const b = 256
	P := int(s.tcPool[tc])
	in := s.ports[0]
	id, p := st.net.NewPacket()
	p.TC, p.Frame, p.ECN, p.pool, p.inPort, p.charged = tc, 64, ecn, uint8(P), in.idx, b
	in.ingShared[P], s.pools[P].shared = b, b
	e.tc[tc].egress, e.egressTotal, s.pools[P].egress = q+b, q+b, q+b
	s.depart(0, e, id, p)
	out := p.ECN
	st.net.arena.release(id)
	in.ingShared[P], s.pools[P].shared, s.pools[P].egress = 0, 0, 0
	e.tc[tc].egress, e.egressTotal = 0, 0
	in.pausing[P] = false
	return out
}

// docs/model.md#ecn-marking: holding a queue at a fixed length, the marked fraction of ECT packets
// follows the RED curve: 0 below EcnMinThreshold, EcnMaxProbability*(avg-min)/(max-min)
// between, 1 at or above EcnMaxThreshold; min == max is a step.
func TestECNMarkedFractionFollowsRED(t *testing.T) {
	const n = 20000
	tests := []struct {
		name     string
		min, max units.Bytes
		maxP     float64
		q        int64
		want     float64
	}{
		{"empty", 400 * units.KB, 1600 * units.KB, 0.2, 0, 0},
		{"just below min", 400 * units.KB, 1600 * units.KB, 0.2, 399_872, 0},
		{"at min", 400 * units.KB, 1600 * units.KB, 0.2, 400_000, 0},
		{"a third", 400 * units.KB, 1600 * units.KB, 0.2, 800_000, 0.2 / 3},
		{"two thirds", 400 * units.KB, 1600 * units.KB, 0.2, 1_200_000, 0.4 / 3},
		{"just below max", 400 * units.KB, 1600 * units.KB, 0.2, 1_599_744, 0.2 * 1_199_744 / 1_200_000},
		{"at max", 400 * units.KB, 1600 * units.KB, 0.2, 1_600_000, 1},
		{"above max", 400 * units.KB, 1600 * units.KB, 0.2, 3_000_000, 1},
		{"probability 1 mid-way", 100 * units.KB, 300 * units.KB, 1, 200_000, 0.5},
		{"step below", 500 * units.KB, 500 * units.KB, 0.2, 499_968, 0},
		{"step at", 500 * units.KB, 500 * units.KB, 0.2, 500_000, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := defaultSwitch()
			cfg.EcnMinThreshold, cfg.EcnMaxThreshold, cfg.EcnMaxProbability = tc.min, tc.max, tc.maxP
			st := newStar(t, 2, cfg, LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond})
			e := st.sw.ports[1]
			if got := st.sw.MarkProbability(0, float64(tc.q)); math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("MarkProbability = %g, want %g", got, tc.want)
			}
			marked := 0
			for i := 0; i < n; i++ {
				if departHeld(st, e, 0, tc.q, ECT0) == CE {
					marked++
				}
			}
			frac := float64(marked) / n
			bound := 4*math.Sqrt(tc.want*(1-tc.want)/n) + 1e-12
			if math.Abs(frac-tc.want) > bound {
				t.Fatalf("marked %.4f, want %.4f +- %.4f (4 sigma)", frac, tc.want, bound)
			}
			if got := st.sw.PortStats(1)[0].ECNMarked; got != int64(marked) {
				t.Fatalf("ECNMarked counter %d, marked %d", got, marked)
			}
		})
	}
}

// docs/model.md#ecn-marking: only ECT(0) and ECT(1) become CE; Not-ECT and CE are untouched; a class
// with ECN disabled is never marked.
func TestECNOnlyECTMarked(t *testing.T) {
	cfg := defaultSwitch()
	cfg.EcnEnabled = []int{0, 1, 3, 4, 5, 6, 7} // not TC2
	st := newStar(t, 2, cfg, LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond})
	e := st.sw.ports[1]
	for _, tc := range []struct {
		cls       uint8
		in, want  uint8
		countsOne bool
	}{
		{0, NotECT, NotECT, false},
		{0, ECT0, CE, true},
		{0, ECT1, CE, true},
		{0, CE, CE, false},
		{2, ECT0, ECT0, false},
	} {
		before := st.sw.PortStats(1)[tc.cls].ECNMarked
		for i := 0; i < 100; i++ {
			if got := departHeld(st, e, tc.cls, 5_000_000, tc.in); got != tc.want {
				t.Fatalf("TC%d codepoint %d -> %d, want %d", tc.cls, tc.in, got, tc.want)
			}
		}
		if d := st.sw.PortStats(1)[tc.cls].ECNMarked - before; (d == 100) != tc.countsOne || (d != 0 && d != 100) {
			t.Fatalf("TC%d codepoint %d: ECNMarked +%d", tc.cls, tc.in, d)
		}
	}
}

// docs/model.md#ecn-marking: avg = (1-w)*avg + w*q with q excluding the departing packet, updated when a
// packet starts transmitting; EcnWeight honoured.
func TestECNEWMAWeight(t *testing.T) {
	for _, w := range []float64{1, 0.5, 0.25, 0.002} {
		cfg := defaultSwitch()
		cfg.EcnWeight = w
		st := newStar(t, 2, cfg, LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond})
		e := st.sw.ports[1]
		avg := 0.0
		for i, q := range []int64{1_000_000, 1_000_000, 0, 2_000_000, 256, 700_160} {
			departHeld(st, e, 5, q, NotECT)
			avg = (1-w)*avg + w*float64(q)
			if math.Abs(e.tc[5].avg-avg) > 1e-6 {
				t.Fatalf("w=%g step %d: avg %g, want %g", w, i, e.tc[5].avg, avg)
			}
		}
		if e.tc[4].avg != 0 {
			t.Fatal("another class's average moved")
		}
	}
	// With a small weight a sudden long queue is not marked at once.
	cfg := defaultSwitch()
	cfg.EcnWeight = 0.01
	st := newStar(t, 2, cfg, LinkSpec{Speed: 100 * units.Gbps, PropagationDelay: units.Microsecond})
	if departHeld(st, st.sw.ports[1], 0, 3_000_000, ECT0) != ECT0 {
		t.Fatal("marked on the instantaneous queue despite EcnWeight 0.01")
	}
}

// ECN end to end: a lossy 2-to-1 incast of ECT traffic builds a queue past the
// thresholds; CE packets appear, each one was ECT, and Not-ECT packets never change.
func TestECNIncast(t *testing.T) {
	c := 100 * units.Gbps
	st := newStar(t, 3, defaultSwitch(), LinkSpec{Speed: c, PropagationDelay: units.Microsecond})
	specs := incast([]int32{1}, 0, 600, 9000, 0, ECT0, c)
	specs = append(specs, incast([]int32{2}, 0, 600, 9000, 0, NotECT, c)...)
	newInjector(st.net, specs)
	st.eng.Run()
	ce := 0
	for _, d := range st.obs.deliveries {
		if d.ecn == CE {
			ce++
			if d.src != 1 {
				t.Fatal("a Not-ECT packet was marked")
			}
		}
	}
	if ce == 0 || int64(ce) != st.net.Counters().CEMarked {
		t.Fatalf("CE %d, counter %d", ce, st.net.Counters().CEMarked)
	}
	checkDrained(t, st.net)
}
