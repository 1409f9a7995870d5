package analysis

import (
	"sort"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// QueueCounters is what ports.arrow says about one egress queue (node, port, tc):
// data packets sent, packets marked CE there and its occupancy watermark.
type QueueCounters struct {
	PortClass
	Tier      records.Tier
	Role      Role   // the node's role (docs/analysis.md#roles); "": Tier's
	Peer      NodeID // the node at the other end of the port's link
	TxPackets int64
	TxBytes   int64 // frame bytes sent
	ECNMarked int64
	// WatermarkBytes is the queue's largest occupancy over the run (bytes).
	WatermarkBytes int64
}

// QueueECN is one egress queue's marking: Fraction = Marked / TxPackets (0 when it
// sent nothing). A packet is counted at every queue that marked it (a packet already
// CE is not marked again, so in practice once).
type QueueECN struct {
	Class PortClass `json:"-"`
	PortName
	Tier      Role    `json:"tier"` // the node's role (records tier without a topology file)
	TxPackets int64   `json:"tx_packets"`
	Marked    int64   `json:"marked"`
	Fraction  float64 `json:"fraction"`
}

// ECNByQueue returns the marking of every queue that marked at least one packet,
// highest fraction first (ties: more marks, then port-class name order), naming nodes
// by nodes.
func ECNByQueue(qs []QueueCounters, nodes Nodes) []QueueECN {
	var out []QueueECN
	for _, q := range qs {
		if q.ECNMarked <= 0 {
			continue
		}
		e := QueueECN{Class: q.PortClass, PortName: nodes.Port(q.PortClass), Tier: roleOf(q.Role, q.Tier), TxPackets: q.TxPackets, Marked: q.ECNMarked}
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
		return portNameLess(a.PortName, b.PortName)
	})
	return out
}

// ECNSeries is the CE-marked fraction of delivered packets over time, by delivery
// time: bin b covers [StartPs + b*BinPs, StartPs + (b+1)*BinPs) ps, over the span of
// the deliveries (padded, see FineBins); Fraction[b] = Marked[b]/Delivered[b] (0 for
// an empty bin). It needs per-packet records (replay --record-packets). Add, then
// Finish, then read.
type ECNSeries struct {
	StartPs   units.Time `json:"start_ps"`
	BinPs     units.Time `json:"bin_ps"`
	Delivered []int64    `json:"delivered"`
	Marked    []int64    `json:"marked"`
	Fraction  []float64  `json:"fraction"`

	simPs int64
	bins  int
	fine  *fineSeries // rows: delivered, marked
}

// NewECNSeries makes an empty series of a simulation of simPs ps, to be binned in at
// most bins bins.
func NewECNSeries(simPs int64, bins int) *ECNSeries {
	return &ECNSeries{simPs: simPs, bins: max(bins, 1), fine: newFineSeries(2, false)}
}

// Add counts one delivered packet (deliverPs, ps) and whether it arrived CE.
func (s *ECNSeries) Add(deliverPs int64, ce bool) {
	b := s.fine.index(deliverPs)
	s.fine.rows[0][b]++
	if ce {
		s.fine.rows[1][b]++
	}
}

// Finish bins the deliveries and computes the fractions.
func (s *ECNSeries) Finish() {
	w := s.fine.ownWindow(s.simPs, s.bins)
	s.StartPs, s.BinPs = units.Time(w.start), units.Time(w.width)
	s.Delivered, s.Marked = s.fine.collect(0, w), s.fine.collect(1, w)
	s.Fraction = make([]float64, w.bins)
	for i, d := range s.Delivered {
		if d > 0 {
			s.Fraction[i] = float64(s.Marked[i]) / float64(d)
		}
	}
}

// Len and XY make an ECNSeries a gonum/plot plotter.XYer (x: bin start in ps, y: CE
// fraction) without this package importing plot.
func (s *ECNSeries) Len() int { return len(s.Fraction) }

// XY returns bin i's start time (ps) and CE fraction.
func (s *ECNSeries) XY(i int) (x, y float64) {
	return float64(s.StartPs + units.Time(i)*s.BinPs), s.Fraction[i]
}
