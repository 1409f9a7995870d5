package plots

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tracefabric/tracefabric/internal/units"
)

// DefaultMaxSets is the number of equal-cost sets an ECMP member load figure
// shows when ECMPLoad.MaxSets is zero.
const DefaultMaxSets = 6

// ECMPLoad is the traffic each member of each equal-cost set carried.
type ECMPLoad struct {
	Sets []ECMPSet
	// MaxSets caps the sets drawn: the most imbalanced (highest max/mean of member
	// load) are kept. Zero: DefaultMaxSets.
	MaxSets int
	// Measure names what ECMPSet.Bytes counts, for the labels: "bytes" (the
	// default, when empty) or e.g. "flows".
	Measure string
}

// ECMPSet is one equal-cost set of one switch. Bytes holds the bytes (or the
// ECMPLoad.Measure) each member carried; Members names them (port or peer), one
// per value, or is nil for members named by their index (0, 1, ...). Name says which
// set it is for a reader ("rack-p0-r0 uplinks"); empty, the set is "node set Set".
type ECMPSet struct {
	Node    string
	Set     string
	Name    string
	Members []string
	Bytes   plotter.Valuer
}

// Label is Name, or "node set Set".
func (s ECMPSet) Label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Node + " set " + s.Set
}

// ECMPMemberLoad draws, for the most imbalanced equal-cost sets, each member's
// share of the set's bytes (or Measure) in % as bars, one small panel per set on a common
// scale, with the uniform share (100/n %) as a dashed reference line. Sets are
// ranked by max/mean of member load. It returns a NoDataError ("no traffic on
// equal-cost sets") when no set carried bytes.
func ECMPMemberLoad(l ECMPLoad, o Options) (*Figure, error) {
	o = o.withDefaults()
	measure := l.Measure
	if measure == "" {
		measure = "bytes"
	}
	measure = safeText(measure, 12)
	maxSets := l.MaxSets
	if maxSets <= 0 {
		maxSets = DefaultMaxSets
	}
	type set struct {
		label   string
		members []string
		shares  []float64 // %
		maxMean float64
	}
	var sets []set
	for _, s := range l.Sets {
		if s.Bytes == nil || s.Bytes.Len() == 0 {
			continue
		}
		n := s.Bytes.Len()
		if s.Members != nil && len(s.Members) != n {
			return nil, fmt.Errorf("plots: %s: set %s: %d member names for %d values",
				NameECMPMemberLoad, s.Label(), len(s.Members), n)
		}
		var total, peak float64
		for i := range n {
			v := s.Bytes.Value(i)
			if !finite(v) || v < 0 {
				return nil, fmt.Errorf("plots: %s: set %s member %d: %v %s must be finite and >= 0",
					NameECMPMemberLoad, s.Label(), i, v, measure)
			}
			total += v
			peak = math.Max(peak, v)
		}
		if total == 0 {
			continue
		}
		st := set{label: safeText(s.Label(), 24), maxMean: peak / (total / float64(n))}
		for i := range n {
			name := strconv.Itoa(i)
			if s.Members != nil {
				name = safeText(s.Members[i], 12)
			}
			st.members = append(st.members, name)
			st.shares = append(st.shares, 100*s.Bytes.Value(i)/total)
		}
		sets = append(sets, st)
	}
	if len(sets) == 0 {
		return nil, noData(NameECMPMemberLoad, "no traffic on equal-cost sets")
	}
	slices.SortStableFunc(sets, func(a, b set) int {
		if c := cmp.Compare(b.maxMean, a.maxMean); c != 0 {
			return c
		}
		return cmp.Compare(a.label, b.label)
	})
	all := len(sets)
	sets = sets[:min(all, maxSets)]

	cols := min(3, len(sets))
	rows := (len(sets) + cols - 1) / cols
	if need := vg.Inch*0.9 + vg.Length(rows)*2.4*vg.Inch; rows > 1 && need > o.Height {
		o.Height = need
	}
	ymax := 0.0
	for _, s := range sets {
		ymax = math.Max(ymax, slices.Max(s.shares))
	}
	ymax = math.Min(100, ymax*1.08)
	panelW := (o.Width-2*pageMargin)/vg.Length(cols) - 0.8*vg.Inch

	var panels []*plot.Plot
	for k, s := range sets {
		ylabel := ""
		if k%cols == 0 {
			ylabel = "share of set " + measure + " (%)"
		}
		p := newPlot(fmt.Sprintf("%s (max/mean %s)", s.label, units.FormatDecimal(roundSig(s.maxMean, 3))), "", ylabel)
		gridLines(p, false)
		n := len(s.shares)
		bw := max(vg.Points(2), panelW/vg.Length(n)*0.7)
		bars, err := plotter.NewBarChart(plotter.Values(s.shares), bw)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: set %s: %w", NameECMPMemberLoad, s.label, err)
		}
		bars.Color = seriesColor(2)
		bars.LineStyle.Width = 0
		p.Add(bars)
		uniform := 100 / float64(n)
		ref := plotter.NewFunction(func(float64) float64 { return uniform })
		ref.Color = colorRef
		ref.Width = vg.Points(1.2)
		ref.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(ref)
		p.NominalX(s.members...)
		p.X.Tick.Label.Font.Size = vg.Points(8)
		longest := 0
		for _, m := range s.members {
			longest = max(longest, len(m))
		}
		if n > 8 || float64(n*longest) > 40 {
			p.X.Tick.Label.Rotation = math.Pi / 2
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YCenter
		}
		p.Y.Min, p.Y.Max = 0, ymax
		p.Title.TextStyle.Font.Size = vg.Points(10)
		panels = append(panels, p)
	}
	grid := make([][]*plot.Plot, rows)
	for r := range rows {
		grid[r] = make([]*plot.Plot, cols)
		for c := range cols {
			if k := r*cols + c; k < len(panels) {
				grid[r][c] = panels[k]
			}
		}
	}
	note := "dashed line: uniform share (100/n %)"
	if all > len(sets) {
		note = fmt.Sprintf("%s most imbalanced of %s equal-cost sets, by max/mean of member %s; ", units.FormatNumber(float64(len(sets))), units.FormatNumber(float64(all)), measure) + note
	}
	pg := &page{
		title: "ECMP member load: share of each set's " + measure + " per member",
		note:  note,
		grid:  grid,
	}
	return pg.figure(NameECMPMemberLoad, o), nil
}
