package plots

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Benchmarks of figure construction plus rendering at the default page size:
// go test ./plots -run '^$' -bench . -benchmem

func benchRender(b *testing.B, make func() (*Figure, error)) {
	b.ReportAllocs()
	for b.Loop() {
		f, err := make()
		if err != nil {
			b.Fatal(err)
		}
		for _, format := range []Format{PNG, SVG} {
			if _, err := f.Render(format); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// 312 port-classes (40 drawn) x 1000 bins.
func BenchmarkPFCPauseTimeline312x1000(b *testing.B) {
	g := PauseGrid{BinWidth: 10 * units.Microsecond}
	for r := range 312 {
		row := PauseRow{Node: fmt.Sprintf("leaf%d", r), Port: r % 32, TC: 3, Paused: make([]float64, 1000)}
		for j := range row.Paused {
			row.Paused[j] = math.Max(0, math.Sin(float64(j*(r+1))/37))
		}
		g.Rows = append(g.Rows, row)
	}
	benchRender(b, func() (*Figure, error) { return PFCPauseTimeline(g, Options{}) })
}

// 4 reasons x 5000 bins.
func BenchmarkDropsOverTime5000(b *testing.B) {
	d := DropBins{BinWidth: units.Millisecond}
	for _, r := range []string{"headroom", "egress-limit", "pool-full", "oversize"} {
		c := make([]float64, 5000)
		for i := range c {
			c[i] = float64((i * len(r)) % 23)
		}
		d.Reasons = append(d.Reasons, ReasonCounts{Reason: r, Counts: c})
	}
	benchRender(b, func() (*Figure, error) { return DropsOverTime(d, Options{}) })
}

func BenchmarkHashComparison(b *testing.B) {
	c := sampleComparison()
	benchRender(b, func() (*Figure, error) { return HashComparison(c, Options{}) })
}

func BenchmarkBufferOccupancy(b *testing.B) {
	s := sampleBuffers()
	benchRender(b, func() (*Figure, error) { return BufferOccupancy(s, Options{}) })
}

// 100,000 samples per pool, 8 pools.
func BenchmarkBufferOccupancyLong(b *testing.B) {
	var s PoolOccupancy
	for p := range 8 {
		xys := make(plotter.XYs, 100000)
		for i := range xys {
			xys[i] = plotter.XY{X: float64(i) * 1e6, Y: 1e5 * (1 + math.Sin(float64(i*(p+1))/500))}
		}
		s.Series = append(s.Series, PoolSeries{Node: fmt.Sprintf("spine%d", p), Pool: "lossless", Samples: xys})
	}
	benchRender(b, func() (*Figure, error) { return BufferOccupancy(s, Options{}) })
}

// 20,000 bins of ECN marks plus 500 queues.
func BenchmarkECNMarking(b *testing.B) {
	m := ECNMarks{BinWidth: units.Microsecond}
	for q := range 500 {
		m.Queues = append(m.Queues, QueueMarks{Node: fmt.Sprintf("leaf%d", q), Port: q % 32, TC: 3, Marked: float64(q), Packets: 1000})
	}
	for i := range 20000 {
		m.Marked = append(m.Marked, float64(i%50))
		m.Packets = append(m.Packets, 100)
	}
	benchRender(b, func() (*Figure, error) { return ECNMarking(m, Options{}) })
}
