package plots

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tracefabric/tracefabric/internal/units"
)

// DefaultMaxQueues is the number of queues an ECN marking figure shows when
// ECNMarks.MaxQueues is zero.
const DefaultMaxQueues = 20

// ECNMarks is CE marking per queue and, optionally, fabric-wide over time.
type ECNMarks struct {
	Queues []QueueMarks
	// MaxQueues caps the queues drawn: the highest marked fractions are kept.
	// Zero: DefaultMaxQueues.
	MaxQueues int

	// Over time (optional; no panel when Marked is empty): packets CE-marked and
	// packets counted (sent, or delivered) per bin, fabric-wide. Both slices have
	// the same length.
	Start, BinWidth units.Time
	Marked, Packets []float64
}

// QueueMarks is one egress queue (node, port, traffic class): packets it CE-marked
// and packets it sent.
type QueueMarks struct {
	Node            string
	Port, TC        int
	Marked, Packets float64
}

// Label is "node:port/tcN".
func (q QueueMarks) Label() string { return fmt.Sprintf("%s:%d/tc%d", q.Node, q.Port, q.TC) }

// ECNMarking draws the CE-marked fraction (%) of the queues that marked most, as
// horizontal bars, and when bins are given, the fabric-wide marked fraction per
// time bin under it. It returns a NoDataError ("no ECN marks") when nothing was
// marked.
func ECNMarking(m ECNMarks, o Options) (*Figure, error) {
	o = o.withDefaults()
	maxQ := m.MaxQueues
	if maxQ <= 0 {
		maxQ = DefaultMaxQueues
	}
	type queue struct {
		label        string
		marked, sent float64 // packets
		frac         float64
	}
	var qs []queue
	for _, q := range m.Queues {
		if !finite(q.Marked) || !finite(q.Packets) || q.Marked < 0 || q.Marked > q.Packets {
			return nil, fmt.Errorf("plots: %s: queue %s: %v marked of %v packets: want 0 <= marked <= packets",
				NameECNMarking, q.Label(), q.Marked, q.Packets)
		}
		if q.Marked > 0 {
			qs = append(qs, queue{label: safeText(q.Label(), 34), marked: q.Marked, sent: q.Packets, frac: q.Marked / q.Packets})
		}
	}
	if len(m.Marked) != len(m.Packets) {
		return nil, fmt.Errorf("plots: %s: %d marked bins but %d packet bins", NameECNMarking, len(m.Marked), len(m.Packets))
	}
	var markedOverTime float64
	for i := range m.Marked {
		if !finite(m.Marked[i]) || !finite(m.Packets[i]) || m.Marked[i] < 0 || m.Marked[i] > m.Packets[i] {
			return nil, fmt.Errorf("plots: %s: bin %d: %v marked of %v packets: want 0 <= marked <= packets",
				NameECNMarking, i, m.Marked[i], m.Packets[i])
		}
		markedOverTime += m.Marked[i]
	}
	if len(m.Marked) > 0 && m.BinWidth <= 0 {
		return nil, fmt.Errorf("plots: %s: BinWidth %d ps must be > 0", NameECNMarking, m.BinWidth)
	}
	if len(qs) == 0 && markedOverTime == 0 {
		return nil, noData(NameECNMarking, "no ECN marks")
	}
	slices.SortStableFunc(qs, func(a, b queue) int {
		if c := cmp.Compare(b.frac, a.frac); c != 0 {
			return c
		}
		if c := cmp.Compare(b.marked, a.marked); c != 0 {
			return c
		}
		return cmp.Compare(a.label, b.label)
	})
	all := len(qs)
	qs = qs[:min(all, maxQ)]

	var grid [][]*plot.Plot
	var notes []string
	if len(qs) > 0 {
		p := newPlot("CE-marked fraction per queue (node:port/tc)", "packets CE-marked (% of sent)", "")
		gridLines(p, true)
		n := len(qs)
		vals := make(plotter.Values, n)
		names := make([]string, n)
		for i, q := range qs {
			// Highest at the top: bars are drawn bottom-up.
			vals[n-1-i] = 100 * q.frac
			names[n-1-i] = q.label
		}
		rowH := vg.Points(12)
		p.Add(&hbars{values: vals, color: seriesColor(0)})
		p.NominalY(names...)
		p.Y.Tick.Label.Font.Size = vg.Points(8)
		p.X.Min = 0
		p.X.Max = math.Min(100, slices.Max(vals)*1.08)
		p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
		grid = append(grid, []*plot.Plot{p})
		if need := 1.6*vg.Inch + vg.Length(n)*rowH; need > o.Height {
			o.Height = need
		}
		if all > n {
			notes = append(notes, fmt.Sprintf("top %s of %s marking queues", units.FormatNumber(float64(n)), units.FormatNumber(float64(all))))
		} else {
			notes = append(notes, fmt.Sprintf("%s marking queues", units.FormatNumber(float64(all))))
		}
	}
	if markedOverTime > 0 {
		bins := len(m.Marked)
		tb := newTimeBins(m.Start, m.BinWidth, bins)
		p := newPlot("CE-marked fraction over time, all queues", timeAxisLabel(tb.unit), "CE-marked (% of packets)")
		gridLines(p, false)
		marked, packets := tb.sum(m.Marked), tb.sum(m.Packets)
		st := &stackedBins{edges: tb.edges, tops: [][]float64{make([]float64, tb.n)},
			colors: []color.Color{seriesColor(0)}}
		for j := range tb.n {
			if packets[j] > 0 {
				st.tops[0][j] = 100 * marked[j] / packets[j]
			}
		}
		p.Add(st)
		p.X.Min, p.X.Max = tb.edges[0], tb.edges[tb.n]
		p.Y.Min = 0
		grid = append(grid, []*plot.Plot{p})
		notes = append(notes, "bin = "+units.FormatPs(tb.width))
		if len(grid) == 2 {
			o.Height += 2.2 * vg.Inch
		}
	}
	note := notes[0]
	for _, s := range notes[1:] {
		note += "; " + s
	}
	pg := &page{
		title: "ECN marking",
		note:  note,
		grid:  grid,
	}
	return pg.figure(NameECNMarking, o), nil
}

// hbars draws horizontal bars from 0 to values[i] at y = i, 0.7 rows thick (a
// width in data units, so bars never touch or overlap whatever the page height;
// gonum's BarChart takes an absolute width).
type hbars struct {
	values []float64
	color  color.Color
}

func (b *hbars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	c.SetColor(b.color)
	for i, v := range b.values {
		if v <= 0 {
			continue
		}
		y := float64(i)
		c.Fill(rectPath(trX(0), trY(y-0.35), trX(v), trY(y+0.35)))
	}
}

func (b *hbars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmax = 0
	for _, v := range b.values {
		xmax = math.Max(xmax, v)
	}
	return 0, xmax, -0.5, float64(len(b.values)) - 0.5
}
