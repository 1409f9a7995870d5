package analysis

import "sort"

// QueueCounters is what ports.arrow says about one egress queue (node, port, tc):
// data packets sent and packets marked CE there.
type QueueCounters struct {
	PortClass
	Tier      string
	TxPackets int64
	ECNMarked int64
}

// QueueECN is one egress queue's marking: Fraction = Marked / TxPackets (0 when it
// sent nothing). A packet is counted at every queue that marked it (a packet already
// CE is not marked again, so in practice once).
type QueueECN struct {
	PortClass
	Tier      string  `json:"tier"`
	TxPackets int64   `json:"tx_packets"`
	Marked    int64   `json:"marked"`
	Fraction  float64 `json:"fraction"`
}

// ECNByQueue returns the marking of every queue that marked at least one packet,
// highest fraction first (ties: more marks, then port-class order).
func ECNByQueue(qs []QueueCounters) []QueueECN {
	var out []QueueECN
	for _, q := range qs {
		if q.ECNMarked <= 0 {
			continue
		}
		e := QueueECN{PortClass: q.PortClass, Tier: q.Tier, TxPackets: q.TxPackets, Marked: q.ECNMarked}
		if q.TxPackets > 0 {
			e.Fraction = float64(q.ECNMarked) / float64(q.TxPackets)
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Fraction != b.Fraction {
			return a.Fraction > b.Fraction
		}
		if a.Marked != b.Marked {
			return a.Marked > b.Marked
		}
		return portClassLess(a.PortClass, b.PortClass)
	})
	return out
}

// ECNSeries is the CE-marked fraction of delivered packets over time, by delivery
// time: bin b covers [b*BinPs, (b+1)*BinPs) ps; Fraction[b] = Marked[b]/Delivered[b]
// (0 for an empty bin). It needs per-packet records (replay --record-packets).
type ECNSeries struct {
	BinPs     int64     `json:"bin_ps"`
	Delivered []int64   `json:"delivered"`
	Marked    []int64   `json:"marked"`
	Fraction  []float64 `json:"fraction"`
}

// NewECNSeries makes an empty series of bins bins over simPs ps.
func NewECNSeries(simPs int64, bins int) *ECNSeries {
	bins = max(bins, 1)
	simPs = max(simPs, 1)
	binPs := (simPs + int64(bins) - 1) / int64(bins)
	n := (simPs + binPs - 1) / binPs
	return &ECNSeries{BinPs: binPs, Delivered: make([]int64, n), Marked: make([]int64, n), Fraction: make([]float64, n)}
}

// Add counts one delivered packet (deliverPs, ps) and whether it arrived CE.
func (s *ECNSeries) Add(deliverPs int64, ce bool) {
	b := int64(0)
	if deliverPs > 0 {
		b = min(deliverPs/s.BinPs, int64(len(s.Delivered)-1))
	}
	s.Delivered[b]++
	if ce {
		s.Marked[b]++
	}
}

// Finish computes the fractions.
func (s *ECNSeries) Finish() {
	for i, d := range s.Delivered {
		s.Fraction[i] = 0
		if d > 0 {
			s.Fraction[i] = float64(s.Marked[i]) / float64(d)
		}
	}
}

// Len and XY make an ECNSeries a gonum/plot plotter.XYer (x: bin start in ps, y: CE
// fraction) without this package importing plot.
func (s *ECNSeries) Len() int { return len(s.Fraction) }

// XY returns bin i's start time (ps) and CE fraction.
func (s *ECNSeries) XY(i int) (x, y float64) { return float64(int64(i) * s.BinPs), s.Fraction[i] }
