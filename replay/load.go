package replay

import (
	"fmt"
	"math"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/switchmodel"
)

// Offered load (docs/model.md#offered-load): what the replayed packets offer the host
// links, in 1 ms bins of simulated time. A packet of size L injected at t offers its
// wire bytes, max(64, L + 18) + 20 (each MTU piece's, when --oversize splits it; none
// when --oversize drops it), to bin floor(t / 1 ms) of its source host's link in
// direction tx (host to rack) and of its destination host's link in direction rx
// (rack to host); an intra-host packet offers nothing. A link direction's load in a
// bin is its bytes x 8 / 1 ms; over the Bins bins from time 0 to the last injection
// (empty bins included) its p99 is the nearest-rank 99th percentile: the
// ceil(0.99 x Bins)-th smallest bin. The busiest link is the host link direction
// with the highest p99 relative to its speed. The accumulation keeps per link
// direction the bin being filled and the Bins - ceil(0.99 Bins) + 1 largest bins so far (a min-heap):
// exact, and at most 1% of the bins in memory.
//
// --target-load P searches the speedup at which the busiest link's p99 is P% of its
// speed (targetSpeedup): each candidate speedup is evaluated over the trace cache
// (which --target-load keeps whatever --cache says), the copies merged in the run's
// order, so that the run's own offered_load gives the same number. A run from the
// cache computes its offered_load the same way, on a goroutine of its own beside the
// simulation; a run that reads the capture accumulates it where the arrivals are
// prepared.

// loadBin is the offered load's bin: 1 ms of simulated time.
const loadBin = units.Millisecond

// offeredLoad accumulates the host links' offered load of one replay.
type offeredLoad struct {
	mtu   int32
	drop  bool  // --oversize drop: oversize packets never reach their link
	bins  int64 // bins from time 0 to the last injection
	keep  int   // bins kept per link direction: the largest keep
	cur   []int64
	acc   []uint64
	peak  []uint64
	top   []binHeap
	speed []units.BitRate // per host
}

// newOfferedLoad returns an accumulator for the given hosts' link speeds and a replay
// whose last injection is at last.
func newOfferedLoad(speed []units.BitRate, mtu int32, drop bool, last units.Time) *offeredLoad {
	bins := int64(last/loadBin) + 1
	l := &offeredLoad{mtu: mtu, drop: drop, bins: bins, keep: int(bins - p99Rank(bins) + 1), speed: speed,
		cur: make([]int64, 2*len(speed)), acc: make([]uint64, 2*len(speed)), peak: make([]uint64, 2*len(speed)),
		top: make([]binHeap, 2*len(speed))}
	for i := range l.cur {
		l.cur[i] = -1
	}
	return l
}

// p99Rank is the nearest rank of the 99th percentile of n values: ceil(0.99 n).
func p99Rank(n int64) int64 { return (99*n + 99) / 100 }

// add accounts a packet of size length from host src to host dst injected at t.
func (l *offeredLoad) add(t units.Time, src, dst int32, length uint32) {
	if src == dst {
		return
	}
	var wire uint64
	if n := int32(length); n <= l.mtu {
		wire = uint64(switchmodel.FrameSize(n)) + 20
	} else if l.drop {
		return
	} else {
		full := n / l.mtu
		wire = uint64(full) * (uint64(switchmodel.FrameSize(l.mtu)) + 20)
		if rem := n - full*l.mtu; rem > 0 {
			wire += uint64(switchmodel.FrameSize(rem)) + 20
		}
	}
	b := int64(t / loadBin)
	l.put(2*int(src), b, wire)
	l.put(2*int(dst)+1, b, wire)
}

func (l *offeredLoad) put(i int, bin int64, wire uint64) {
	if l.cur[i] != bin {
		l.flush(i)
		l.cur[i] = bin
	}
	l.acc[i] += wire
}

// flush closes link direction i's bin being filled.
func (l *offeredLoad) flush(i int) {
	v := l.acc[i]
	if l.cur[i] < 0 || v == 0 {
		return
	}
	l.peak[i] = max(l.peak[i], v)
	h := &l.top[i]
	switch {
	case len(*h) < l.keep:
		h.push(v)
	case v > (*h)[0]:
		h.replaceMin(v)
	}
	l.acc[i], l.cur[i] = 0, -1
}

// loadResult is the accumulator's outcome: the busiest link direction (host, dir 0
// tx, 1 rx; host -1 when no packet crossed a host link), its p99 bytes per bin and
// share, and the peak share.
type loadResult struct {
	host            int32
	dir             int
	p99             uint64
	p99Share, peakS float64
}

func (l *offeredLoad) result() loadResult {
	r := loadResult{host: -1}
	for i := range l.cur {
		l.flush(i)
		sp := float64(l.speed[i/2])
		var p99 uint64
		if h := l.top[i]; len(h) == l.keep {
			p99 = h[0]
		}
		if share := bpsOf(p99) / sp; p99 > 0 && (r.host < 0 || share > r.p99Share) {
			r.host, r.dir, r.p99, r.p99Share = int32(i/2), i%2, p99, share
		}
		r.peakS = max(r.peakS, bpsOf(l.peak[i])/sp)
	}
	return r
}

// bpsOf is the rate of a bin of b bytes.
func bpsOf(b uint64) float64 { return float64(b) * 8 / loadBin.Seconds() }

// json is run.json's offered_load.
func (r loadResult) json(pr *Prepared, bins int64) *records.OfferedLoad {
	o := &records.OfferedLoad{BinPs: int64(loadBin), Bins: bins, P99Bps: bpsOf(r.p99), P99Share: r.p99Share, PeakShare: r.peakS,
		Speedup: pr.Opt.Speedup}
	if r.host >= 0 {
		o.BusiestLink, o.Direction = pr.Topo.Nodes[r.host].Name, [2]string{"tx", "rx"}[r.dir]
	}
	return o
}

// hostSpeeds are the speeds of the hosts' links, by host id.
func (pr *Prepared) hostSpeeds() []units.BitRate {
	sp := make([]units.BitRate, pr.Topo.Hosts)
	for h := range sp {
		sp[h] = pr.Topo.Links[pr.Topo.Nodes[h].Ports[0].Link].Speed
	}
	return sp
}

// lastInjection is when the replay's latest packet enters at speedup: the latest
// capture offset (idle gaps shortened) plus the latest copy's offset.
func (pr *Prepared) lastInjection(speedup float64) units.Time {
	return injectAt(pr.Summary.MaxUnicast-pr.Summary.FirstUnicast-pr.Idle.RemovedNs+pr.repl.maxOffset(), speedup)
}

// newLoad is the accumulator of a run of pr.
func (pr *Prepared) newLoad() *offeredLoad { return pr.newLoadAt(pr.Opt.Speedup) }

func (pr *Prepared) newLoadAt(speedup float64) *offeredLoad {
	return newOfferedLoad(pr.hostSpeeds(), int32(pr.Opt.Config.Switch.Mtu), pr.Opt.Oversize == OversizeDrop, pr.lastInjection(speedup))
}

// evalLoad is the offered load of pr's trace cache replayed by pr's copies at
// speedup, in the run's order: the offered_load of a run from the cache, and what
// --target-load's search evaluates.
func (pr *Prepared) evalLoad(c *traceCache, speedup float64) *offeredLoad {
	l := pr.newLoadAt(speedup)
	o := newCacheOrder(c, pr.repl)
	for {
		p, k, off := o.step()
		if p == nil {
			return l
		}
		src, dst := pr.hostsOf(p.tid, k)
		l.add(injectAt(off, speedup), src, dst, p.length)
	}
}

// hostsOf returns the hosts of tuple tid in copy k (0: the capture itself).
func (pr *Prepared) hostsOf(tid int32, k int) (src, dst int32) {
	h := pr.hosts[tid]
	if k > 0 {
		return pr.repl.hostOf[k][h[0]], pr.repl.hostOf[k][h[1]]
	}
	return h[0], h[1]
}

// targetSpeedup finds the smallest speedup at which the busiest host link's p99
// offered load reaches target (a share of its speed; docs/model.md#offered-load):
// from a speedup well below the linear estimate target / p99(1) (a hundredth of it,
// lowered until the p99 is below the target), it steps up by factors of 1.1 until the
// p99 reaches the target, then bisects that step (in log speedup) 40 times. The p99
// of 1 ms bins is not monotone in the speedup and can jump over the target (a burst
// falls into fewer bins at once): when neither side of the final bracket is within
// 1% of the target, the upper side is taken, with a warning that says so.
func (pr *Prepared) targetSpeedup(target float64) (float64, loadResult, error) {
	c, err := pr.readCache()
	if err != nil {
		return 0, loadResult{}, err
	}
	eval := func(s float64) loadResult { return pr.evalLoad(c, s).result() }
	lo := 1.0
	r1 := eval(lo)
	if r1.peakS == 0 {
		return 0, r1, inputErrf("--target-load: no replayed packet crosses a host link (every packet is intra-host)")
	}
	for r1.p99Share == 0 && lo < 1e15 { // a sparse capture: most bins empty
		lo *= 10
		r1 = eval(lo)
	}
	if r1.p99Share > 0 {
		lo *= target / r1.p99Share / 100
	}
	loR := eval(lo)
	for loR.p99Share >= target && lo > 1e-12 {
		lo /= 10
		loR = eval(lo)
	}
	hi, hiR := 0.0, loadResult{}
	for s := lo * 1.1; ; s *= 1.1 {
		r := eval(s)
		if r.p99Share >= target {
			hi, hiR = s, r
			break
		}
		lo, loR = s, r
		if pr.lastInjection(s) < loadBin || s > 1e15 {
			// Compressed into one bin, the capture offers at most its bytes per 1 ms.
			return 0, r, inputErrf("--target-load %g: the busiest host link's p99 offered load cannot reach %g%% of its speed: with the whole capture in one 1 ms bin it is %.3g%% (%s); more copies than racks share hosts (--replicate N), or lower the target",
				100*target, 100*target, 100*r.p99Share, pr.Topo.Nodes[r.host].Name)
		}
	}
	for i := 0; i < 40 && math.Abs(hiR.p99Share/target-1) > 0.001; i++ {
		mid := math.Sqrt(lo * hi)
		if r := eval(mid); r.p99Share >= target {
			hi, hiR = mid, r
		} else {
			lo, loR = mid, r
		}
	}
	switch {
	case math.Abs(hiR.p99Share/target-1) <= 0.01:
		return hi, hiR, nil
	case math.Abs(loR.p99Share/target-1) <= 0.01:
		return lo, loR, nil
	}
	if pr.Opt.Warn != nil {
		pr.Opt.Warn(fmt.Sprintf("--target-load %g: the busiest host link's p99 offered load jumps from %.3g%% at speedup %.6g to %.3g%% at speedup %.6g (a burst falls into fewer 1 ms bins at once); using speedup %.6g",
			100*target, 100*loR.p99Share, lo, 100*hiR.p99Share, hi, hi))
	}
	return hi, hiR, nil
}

// binHeap is a min-heap of bin sizes (no interface boxing: nothing allocated but
// its growth).
type binHeap []uint64

func (h *binHeap) push(v uint64) {
	*h = append(*h, v)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p] <= a[i] {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

// replaceMin replaces the smallest value by v and restores the heap.
func (h binHeap) replaceMin(v uint64) {
	h[0] = v
	for i := 0; ; {
		l, r, s := 2*i+1, 2*i+2, i
		if l < len(h) && h[l] < h[s] {
			s = l
		}
		if r < len(h) && h[r] < h[s] {
			s = r
		}
		if s == i {
			return
		}
		h[i], h[s] = h[s], h[i]
		i = s
	}
}

// copyMerge orders the copies' next packets by (time, copy): a min-heap.
type copyMerge struct{ h []copyHead }

type copyHead struct {
	at int64
	k  int
}

func newCopyMerge(n int) *copyMerge { return &copyMerge{h: make([]copyHead, 0, n)} }

func (m *copyMerge) len() int { return len(m.h) }

func (m *copyMerge) less(i, j int) bool {
	a, b := m.h[i], m.h[j]
	return a.at < b.at || a.at == b.at && a.k < b.k
}

func (m *copyMerge) push(at int64, k int) {
	m.h = append(m.h, copyHead{at, k})
	for i := len(m.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !m.less(i, p) {
			break
		}
		m.h[i], m.h[p] = m.h[p], m.h[i]
		i = p
	}
}

func (m *copyMerge) pop() (int64, int) {
	top := m.h[0]
	last := len(m.h) - 1
	m.h[0] = m.h[last]
	m.h = m.h[:last]
	for i := 0; ; {
		l, r, s := 2*i+1, 2*i+2, i
		if l < len(m.h) && m.less(l, s) {
			s = l
		}
		if r < len(m.h) && m.less(r, s) {
			s = r
		}
		if s == i {
			break
		}
		m.h[i], m.h[s] = m.h[s], m.h[i]
		i = s
	}
	return top.at, top.k
}

// describe is the line that says what --target-load found.
func (r loadResult) describe(pr *Prepared, target float64) string {
	name := "-"
	if r.host >= 0 {
		name = pr.Topo.Nodes[r.host].Name + " " + [2]string{"tx", "rx"}[r.dir]
	}
	return fmt.Sprintf("--target-load %g%%: speedup %.6g (busiest host link %s: p99 %.2f%% of its speed over 1 ms bins, peak %.2f%%)",
		100*target, pr.Opt.Speedup, name, 100*r.p99Share, 100*r.peakS)
}
