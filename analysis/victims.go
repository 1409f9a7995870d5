package analysis

import (
	"cmp"
	"math"
	"slices"
)

// PortKey identifies a switch or host egress port.
type PortKey struct {
	Node NodeID
	Port int32
}

// FlowPath is what the flow records say about where and when a flow went: its class,
// the egress ports it left through in path order, and the time of its first and last
// packet (ps).
type FlowPath struct {
	FlowID  uint64
	TC      uint8
	FirstPs int64
	LastPs  int64
	Hops    []PortKey
}

// Victims counts, per episode, the flows that crossed one of the episode's paused
// port-classes while it was paused, and returns per episode the victim flow IDs (up to
// keep per episode, in flow order; keep < 0 keeps all). It sets each Episode.Victims.
// See VictimCounter for the rule and its approximation.
func Victims(episodes []Episode, intervals []PauseInterval, flows []FlowPath, keep int) [][]uint64 {
	v := NewVictimCounter(episodes, intervals, keep)
	for i := range flows {
		v.Add(&flows[i])
	}
	return v.IDs()
}

// VictimCounter counts storm victims one flow at a time (flows can be streamed).
//
// A flow is a victim of an episode when its class matches one of the episode's pause
// intervals, its path leaves through that interval's paused port, and its active span
// [FirstPs, LastPs] overlaps the interval [StartPs, EndPs). Approximation: flow records
// hold only a flow's first and last packet times, not when it reached each port, so
// flows that were idle during the pause but active before and after it are counted (an
// overestimate); per-packet records (--record-packets) would be exact. A flow counts
// once per episode. Only the episodes given are considered: pass the storms for storm
// victims, or all episodes and filter later.
//
// Performance: flows arrive in flow order, which may be random in time, and each hop's
// lookup in a port-class's spans is then a cache miss. Add only queues a flow's hops
// that can meet a pause (its class paused somewhere, the port-class paused, the flow
// active within that port-class's first and last pause); every VictimBatch flows the
// queued hops are searched in time order, so that consecutive searches touch nearby
// spans, and the hits are applied in flow order. Results (Episode.Victims, IDs,
// Distinct) are complete after Flush, which IDs and Distinct call.
type VictimCounter struct {
	episodes []Episode
	byPort   map[PortClass]*portSpans
	tcs      [256]bool // classes with a paused port-class: flows of others are skipped
	ids      [][]uint64
	keep     int
	deep     int     // flows that hit an episode of depth >= 2
	shallow  []int64 // per other flow hit, the longest episode it hit
	probes   int64   // spans examined (tests check the index keeps this small)

	batchIDs []uint64    // flows of the batch (with a queued hop), in Add order
	queued   []queuedHop // their hops to search
	hits     []victimHit // (flow in batch, episode) found
	epsOf    []int32     // scratch: one flow's episodes
}

// VictimBatch is how many flows VictimCounter queues before searching their hops.
const VictimBatch = 1 << 16

type queuedHop struct {
	first, last int64
	p           *portSpans
	flow        int32 // index in batchIDs
}

type victimHit struct{ flow, ep int32 }

// Distinct returns how many distinct flows are victims of at least one storm when
// storms are the episodes of depth >= 2 or lasting at least stormDurationPs.
func (v *VictimCounter) Distinct(stormDurationPs int64) int {
	v.Flush()
	n := v.deep
	for _, d := range v.shallow {
		if d >= stormDurationPs {
			n++
		}
	}
	return n
}

type victimSpan struct {
	start, end int64
	maxEnd     int64 // the largest end of this span and those before it
	ep         int32
}

// portSpans is one port-class's pause intervals (of the episodes counted), ordered by
// start with the running maximum of their ends, and an index over time: the spans
// that can overlap a flow active from t on start at the first whose running maximum
// passes t; bucket g holds that span's index for t = lo + g*width, with its start and
// running maximum, so a flow's search starts at its bucket instead of a binary search
// over all spans, and a flow that overlaps nothing is settled by the bucket alone (one
// memory access: with flows in random time order, the cost is cache misses).
type portSpans struct {
	spans   []victimSpan
	lo, hi  int64 // first start, last end
	width   int64 // index bucket width (ps)
	buckets []spanBucket
}

type spanBucket struct {
	start, maxEnd int64 // of spans[k] (k = len(spans): start = maxEnd = MaxInt64)
	k             int32
}

// index builds the time index: as many buckets as spans over [lo, hi).
func (p *portSpans) index() {
	spans := p.spans
	slices.SortFunc(spans, func(a, b victimSpan) int { return cmp.Compare(a.start, b.start) })
	m := spans[0].end
	for k := range spans {
		m = max(m, spans[k].end)
		spans[k].maxEnd = m
	}
	p.lo, p.hi = spans[0].start, m
	g := int64(len(spans))
	p.width = max((p.hi-p.lo+g-1)/g, 1)
	p.buckets = make([]spanBucket, g)
	k := 0
	for b := range p.buckets {
		t := p.lo + int64(b)*p.width
		for k < len(spans) && spans[k].maxEnd <= t {
			k++
		}
		e := spanBucket{start: math.MaxInt64, maxEnd: math.MaxInt64, k: int32(k)}
		if k < len(spans) {
			e.start, e.maxEnd = spans[k].start, spans[k].maxEnd
		}
		p.buckets[b] = e
	}
}

// NewVictimCounter prepares counting for episodes (whose Victims it resets and then
// increments) built from intervals; keep bounds the IDs kept per episode (< 0: all).
func NewVictimCounter(episodes []Episode, intervals []PauseInterval, keep int) *VictimCounter {
	v := &VictimCounter{episodes: episodes, byPort: map[PortClass]*portSpans{}, ids: make([][]uint64, len(episodes)), keep: keep}
	for e := range episodes {
		episodes[e].Victims = 0
		for _, i := range episodes[e].Intervals {
			iv := &intervals[i]
			p := v.byPort[iv.PortClass]
			if p == nil {
				p = &portSpans{}
				v.byPort[iv.PortClass] = p
			}
			p.spans = append(p.spans, victimSpan{start: iv.StartPs, end: iv.EndPs, ep: int32(e)})
			v.tcs[iv.TC] = true
		}
	}
	for _, p := range v.byPort {
		p.index()
	}
	return v
}

// Add checks one flow (queued: see Flush). It keeps nothing of fl.
func (v *VictimCounter) Add(fl *FlowPath) {
	if !v.tcs[fl.TC] {
		return
	}
	flow := int32(-1)
	for _, h := range fl.Hops {
		p := v.byPort[PortClass{h.Node, h.Port, fl.TC}]
		if p == nil || fl.LastPs < p.lo || fl.FirstPs >= p.hi {
			continue
		}
		if flow < 0 {
			if v.queued == nil { // sized for a batch once: no regrowth per batch
				v.batchIDs, v.queued = make([]uint64, 0, VictimBatch), make([]queuedHop, 0, 2*VictimBatch)
			}
			flow = int32(len(v.batchIDs))
			v.batchIDs = append(v.batchIDs, fl.FlowID)
		}
		v.queued = append(v.queued, queuedHop{first: fl.FirstPs, last: fl.LastPs, p: p, flow: flow})
	}
	if len(v.batchIDs) >= VictimBatch {
		v.Flush()
	}
}

// Flush searches the queued hops, in time order, and applies the hits in flow order.
func (v *VictimCounter) Flush() {
	if len(v.batchIDs) == 0 {
		return
	}
	slices.SortFunc(v.queued, func(a, b queuedHop) int { return cmp.Compare(a.first, b.first) })
	v.hits = v.hits[:0]
	for i := range v.queued {
		v.search(&v.queued[i])
	}
	slices.SortFunc(v.hits, func(a, b victimHit) int {
		if c := cmp.Compare(a.flow, b.flow); c != 0 {
			return c
		}
		return cmp.Compare(a.ep, b.ep)
	})
	for i := 0; i < len(v.hits); {
		f := v.hits[i].flow
		v.epsOf = v.epsOf[:0]
		for ; i < len(v.hits) && v.hits[i].flow == f; i++ {
			if n := len(v.epsOf); n == 0 || v.epsOf[n-1] != v.hits[i].ep {
				v.epsOf = append(v.epsOf, v.hits[i].ep)
			}
		}
		v.apply(v.batchIDs[f], v.epsOf)
	}
	v.batchIDs, v.queued = v.batchIDs[:0], v.queued[:0]
}

// search finds the spans of q's port-class that overlap its flow's active span.
func (v *VictimCounter) search(q *queuedHop) {
	p := q.p
	spans := p.spans
	k := 0
	if q.first > p.lo {
		b := &p.buckets[min((q.first-p.lo)/p.width, int64(len(p.buckets)-1))]
		if b.maxEnd > q.first && b.start > q.last {
			return // the first candidate starts after the flow: nothing overlaps
		}
		k = int(b.k)
	}
	for ; k < len(spans) && spans[k].maxEnd <= q.first; k++ {
		v.probes++
	}
	for ; k < len(spans) && spans[k].start <= q.last; k++ {
		v.probes++
		if q.first < spans[k].end {
			v.hits = append(v.hits, victimHit{flow: q.flow, ep: spans[k].ep})
		}
	}
}

// apply counts flow id as a victim of the episodes eps (distinct, ascending).
func (v *VictimCounter) apply(id uint64, eps []int32) {
	deep, longest := false, int64(0)
	for _, e := range eps {
		deep = deep || v.episodes[e].Depth >= 2
		longest = max(longest, v.episodes[e].DurationPs)
		v.episodes[e].Victims++
		if v.keep < 0 || len(v.ids[e]) < v.keep {
			v.ids[e] = append(v.ids[e], id)
		}
	}
	if deep {
		v.deep++
	} else {
		v.shallow = append(v.shallow, longest)
	}
}

// IDs returns the kept victim flow IDs per episode (after Flush).
func (v *VictimCounter) IDs() [][]uint64 {
	v.Flush()
	return v.ids
}
