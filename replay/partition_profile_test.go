package replay

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracefabric/tracefabric/fabric"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// partProfile replays a run's event stream as the windowed parallel engine of
// docs/parallel.md would cut it for one partition plan: a window opens at the first
// event at or after the previous window's end and lasts the plan's lookahead; in
// each window each partition handles the events of its nodes (an event belongs to the
// node it acts for), and global events run alone at barriers. The engine's work is
// then sum over windows of the busiest partition's events plus the global events, in
// event units: total / that is the speedup at no barrier cost.
type partProfile struct {
	plan     *fabric.Plan
	start    units.Time // the open window's start
	open     bool
	counts   []int64 // events per partition in the open window
	windows  int64
	sumMax   int64 // sum over windows of the busiest partition's events
	global   int64
	total    int64
	perPart  []int64 // events per partition over the run
	maxEvWin int64
}

func newPartProfile(p *fabric.Plan) *partProfile {
	return &partProfile{plan: p, counts: make([]int64, p.Parts), perPart: make([]int64, p.Parts)}
}

func (pp *partProfile) event(now units.Time, node int32) {
	pp.total++
	if node < 0 {
		pp.global++
		return
	}
	if !pp.open || now >= pp.start+pp.plan.Lookahead {
		pp.flush()
		pp.start, pp.open = now, true
	}
	part := pp.plan.Of[node]
	pp.counts[part]++
	pp.perPart[part]++
}

func (pp *partProfile) flush() {
	if !pp.open {
		return
	}
	var m, sum int64
	for i, c := range pp.counts {
		m = max(m, c)
		sum += c
		pp.counts[i] = 0
	}
	pp.sumMax += m
	pp.maxEvWin = max(pp.maxEvWin, sum)
	pp.windows++
}

// speedup is the bound at no barrier cost.
func (pp *partProfile) speedup() float64 {
	return float64(pp.total) / float64(pp.sumMax+pp.global)
}

// speedupAt is the bound when an event costs evCost and a barrier barrier (the
// sequential run costing total events).
func (pp *partProfile) speedupAt(evCost, barrier time.Duration) float64 {
	seq := float64(pp.total) * evCost.Seconds()
	par := float64(pp.sumMax+pp.global)*evCost.Seconds() + float64(pp.windows)*barrier.Seconds()
	return seq / par
}

type profHandler struct {
	h     switchmodel.EventHandler
	eng   *switchmodel.Engine
	profs []*partProfile
}

func (ph *profHandler) Handle(now units.Time, kind int32, arg int64) {
	ph.h.Handle(now, kind, arg)
	node := ph.eng.Acting()
	for _, pp := range ph.profs {
		pp.event(now, node)
	}
}

// profileRun runs pr sequentially, attributing every event to the partitions of
// fabric.Partition(f, n) for each n; it returns the profiles and the run's CPU time.
func profileRun(tb testing.TB, pr *Prepared, ns []int) ([]*partProfile, time.Duration) {
	tb.Helper()
	cfg, err := methodConfig(pr.Opt.Config, "")
	if err != nil {
		tb.Fatal(err)
	}
	var profs []*partProfile
	for _, n := range ns {
		p, err := fabric.Partition(pr.Topo.Fabric, n)
		if err != nil {
			tb.Fatal(err)
		}
		if p.Parts < 2 {
			tb.Fatalf("plan for %d: sequential: %s", n, p.Reason)
		}
		profs = append(profs, newPartProfile(p))
	}
	out, err := records.CreateOutputDir(filepath.Join(tb.TempDir(), "run"))
	if err != nil {
		tb.Fatal(err)
	}
	defer out.Abort()
	s, err := newSim(pr, cfg, out)
	if err != nil {
		tb.Fatal(err)
	}
	s.eng.WrapHandlers(func(h switchmodel.EventHandler) switchmodel.EventHandler {
		return &profHandler{h: h, eng: s.eng, profs: profs}
	})
	if err := s.run(); err != nil {
		tb.Fatal(err)
	}
	cpu := s.cpu
	if err := s.close(); err != nil {
		tb.Fatal(err)
	}
	for _, pp := range profs {
		pp.flush()
	}
	return profs, cpu
}

func reportProfiles(tb testing.TB, profs []*partProfile, cpu time.Duration) {
	for _, pp := range profs {
		ev := cpu / time.Duration(pp.total)
		var parts string
		for _, c := range pp.perPart {
			parts += fmt.Sprintf(" %.3f", float64(c)/float64(pp.total-pp.global))
		}
		tb.Logf("threads %d (%s, lookahead %v): %d events (%d global), %d windows, %.1f events/window (max %d), shares%s; "+
			"bound %.2fx at no barrier cost; %.2fx at 1 us, %.2fx at 5 us per barrier (%v per event)",
			pp.plan.Parts, pp.plan.Method, pp.plan.Lookahead, pp.total, pp.global, pp.windows,
			float64(pp.total)/float64(pp.windows), pp.maxEvWin, parts,
			pp.speedup(), pp.speedupAt(ev, time.Microsecond), pp.speedupAt(ev, 5*time.Microsecond), ev)
	}
}

// The profile's bookkeeping by hand: three windows of lookahead 10 over two
// partitions, and a global event.
func TestPartProfileWindows(t *testing.T) {
	pp := newPartProfile(&fabric.Plan{Parts: 2, Of: []int32{0, 1, 1}, Lookahead: 10})
	for _, e := range []struct {
		at   units.Time
		node int32
	}{
		{0, 0}, {3, 1}, {9, 2}, // window [0, 10): part 0 one event, part 1 two
		{10, 0}, {12, switchmodel.NoNode}, {15, 0}, // [10, 20): part 0 two; a global event
		{40, 1}, // [40, 50): part 1 one
	} {
		pp.event(e.at, e.node)
	}
	pp.flush()
	if pp.windows != 3 || pp.sumMax != 2+2+1 || pp.global != 1 || pp.total != 7 || pp.maxEvWin != 3 {
		t.Fatalf("windows %d sumMax %d global %d total %d maxEvWin %d, want 3 5 1 7 3",
			pp.windows, pp.sumMax, pp.global, pp.total, pp.maxEvWin)
	}
	if s := pp.speedup(); s != 7.0/6 {
		t.Fatalf("speedup %v, want 7/6", s)
	}
}

// BenchmarkReplay1MPartitionProfile runs the 1M-packet benchmark trace through the
// default fabric sequentially and reports how the windowed parallel engine of
// docs/parallel.md would divide its events for 2, 3, 4 and 8 partitions (the
// metrics are for 2): windows, events per window, and the speedup bound.
func BenchmarkReplay1MPartitionProfile(b *testing.B) {
	pr, err := Prepare(Options{Traces: []string{benchTrace(b, 1_000_000)}})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		profs, cpu := profileRun(b, pr, []int{2, 3, 4, 8})
		reportProfiles(b, profs, cpu)
		p := profs[0]
		b.ReportMetric(float64(p.windows), "windows")
		b.ReportMetric(float64(p.total)/float64(p.windows), "events/window")
		b.ReportMetric(p.speedup(), "bound-x2")
	}
}

// TestPartitionProfileDemo is the profile of the demo trace (a smoke test of the
// wrapper: the profiled run handles every event once).
func TestPartitionProfileDemo(t *testing.T) {
	pr, err := Prepare(Options{Traces: []string{repoPath(t, "testdata/pcaps/demo.pcap")}})
	if err != nil {
		t.Fatal(err)
	}
	profs, cpu := profileRun(t, pr, []int{2, 4})
	run, err := pr.Run(filepath.Join(t.TempDir(), "run"), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, pp := range profs {
		if pp.total != run.Simulation.Events {
			t.Fatalf("threads %d: %d events profiled, the run handled %d", pp.plan.Parts, pp.total, run.Simulation.Events)
		}
	}
	reportProfiles(t, profs, cpu)
}
