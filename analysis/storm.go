package analysis

import (
	"cmp"
	"slices"
	"strconv"
)

// DefaultStormDurationPs is the default storm duration threshold: 1 ms in ps.
const DefaultStormDurationPs int64 = 1_000_000_000

// StormRule is the storm episode definition, in the words of
// docs/analysis.md#pfc-pauses-and-storms: the report states it as it is.
const StormRule = "A storm episode is a connected set of pause intervals that overlap in time and are linked either hop by hop (the paused sender's node is itself pausing its own upstream) or as siblings (paused by the same node, on any of its ports: one congestion event fanning out); its depth is the longest hop-by-hop chain. An episode is a storm if depth >= 2 or it lasts >= --storm-duration (default 1 ms)."

// StormChainRule says how a hop-by-hop chain is read when counting depth.
const StormChainRule = "A chain follows the pause upstream in time: each interval of it starts no earlier than the one it is linked from (so a PFC deadlock's cycle does not count forever)."

// Episode is a connected set of pause intervals (StormRule, docs/analysis.md#pfc-pauses-and-storms), and
// a storm when Storm is set.
//
// Two pause intervals are linked when they overlap in time (half-open spans share an
// instant) and either
//
//   - hop link: the node that paused one is the node paused in the other: B pauses A's
//     port toward B (interval I, paused node A), and A, while paused, pauses Z's port
//     toward A (interval J, pauser A). I is downstream, J upstream; or
//   - fan-out: both were paused by the same node (B pausing A and C at once: one
//     congestion point at one hop).
//
// Classes do not matter for linking: a PFC frame pauses every lossless class of a
// buffer pool at once, so the classes of one port paused by one frame are one event
// (they are fan-out siblings: same pausing node), and congestion in one class fills
// the shared pool that pauses the others. Overlapping intervals with neither relation
// (two unrelated congestion points) are separate episodes. An episode is a connected
// component of this relation. TC is the class of the root's first pause.
//
// Depth is the longest causal chain of hop links, counted in intervals (= hops the
// pause travelled): a hop link I -> J counts for depth only when J started at or after
// I (a pause spreads upstream after the downstream one started; ties in start time are
// ordered by the interval order, so chains never loop even in a PFC deadlock). A lone
// pause or a pure fan-out has depth 1.
//
// Root is the pausing port at the head of the deepest chain: the port (PeerPort of
// Peer, "node:port" by name, port omitted when unknown) that sent the pause of the chain's
// first interval, i.e. the most downstream congestion point whose pause started the
// chain. Among equally deep chains the one whose first interval started first wins
// (then the lower interval index). RootPaused is the port that first pause stopped.
//
// Example (time left to right, one class, rack R congested by an incast):
//
//	R pauses F:2   (I1)     |=========================|        F's port 2 faces R
//	F pauses S:0   (I2)          |================|             F, paused, pauses S
//	S pauses H:0   (I3)              |======|                   S, paused, pauses host H
//	R pauses G:1   (I4)        |=====|                          fan-out: R also pauses G
//	X pauses Y:5   (I5)      |===========|                      unrelated: own episode
//
// I1..I4 form one episode: start = I1's start, duration = I1's end - I1's start,
// ports = 4, depth = 3 (I1 -> I2 -> I3), root = R's port facing F. I5 overlaps them
// but is linked to none: a second episode of depth 1.
//
// An episode is a storm when Depth >= 2 or DurationPs >= the storm-duration threshold.
type Episode struct {
	StartPs    int64    `json:"start_ps"`
	DurationPs int64    `json:"duration_ps"`
	Ports      int      `json:"ports"`
	Depth      int      `json:"depth"`
	Root       string   `json:"root"`
	RootNode   string   `json:"root_node"`
	RootPort   int32    `json:"root_port"`
	TC         uint8    `json:"tc"`
	RootPaused PortName `json:"root_paused"`
	Storm      bool     `json:"storm"`
	// PausedPs is the sum of the member intervals' durations.
	PausedPs int64 `json:"paused_ps"`
	// Intervals are indices into the interval slice given to Episodes, by start time.
	Intervals []int32 `json:"-"`
	// Victims counts the flows that crossed one of the episode's paused ports while it
	// was paused (see Victims); filled by Victims, 0 before.
	Victims int `json:"victims"`
}

// EndPs is StartPs + DurationPs.
func (e *Episode) EndPs() int64 { return e.StartPs + e.DurationPs }

// Episodes groups pause intervals into episodes (see Episode) and marks storms with the
// threshold stormDurationPs (<= 0 means DefaultStormDurationPs); nodes names the
// roots. Episodes are ordered by start time. It runs in O(n log n) for n intervals
// plus the overlapping pairs at each node, and does not modify intervals.
func Episodes(intervals []PauseInterval, nodes Nodes, stormDurationPs int64) []Episode {
	if stormDurationPs <= 0 {
		stormDurationPs = DefaultStormDurationPs
	}
	if len(intervals) == 0 {
		return nil
	}
	l := newLinker(intervals)
	for _, j := range l.order {
		l.link(j)
	}
	eps := l.group()
	l.describe(eps, nodes, stormDurationPs)
	return eps
}

// linker links pause intervals into episodes: a sweep in start order keeps, per node,
// the intervals still open that pause it and that it sends, unites linked intervals
// (union-find) and tracks the deepest hop chain ending at each interval.
type linker struct {
	iv       []PauseInterval
	order    []int32            // interval indices by start time (ties: index)
	pos      []int32            // position of each interval in order, for tie breaks
	parent   []int32            // union-find
	depth    []int32            // longest hop chain ending at the interval, in intervals
	head     []int32            // first interval of that chain
	pausedAt map[NodeID][]int32 // paused node -> open intervals
	pausedBy map[NodeID][]int32 // pausing node -> open intervals
}

func newLinker(intervals []PauseInterval) *linker {
	n := len(intervals)
	l := &linker{iv: intervals, order: make([]int32, n), pos: make([]int32, n), parent: make([]int32, n),
		depth: make([]int32, n), head: make([]int32, n), pausedAt: map[NodeID][]int32{}, pausedBy: map[NodeID][]int32{}}
	for i := range l.order {
		l.order[i] = int32(i)
		l.parent[i] = int32(i)
	}
	slices.SortFunc(l.order, func(a, b int32) int {
		if c := cmp.Compare(intervals[a].StartPs, intervals[b].StartPs); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for p, i := range l.order {
		l.pos[i] = int32(p)
	}
	return l
}

func (l *linker) find(x int32) int32 {
	for l.parent[x] != x {
		l.parent[x] = l.parent[l.parent[x]]
		x = l.parent[x]
	}
	return x
}

func (l *linker) union(a, b int32) {
	ra, rb := l.find(a), l.find(b)
	if ra != rb {
		l.parent[max(ra, rb)] = min(ra, rb)
	}
}

// better reports whether a chain of depth d headed by h beats one of depth bd headed
// by bh: deeper, then the head that started first.
func (l *linker) better(d, h, bd, bh int32) bool {
	if d != bd {
		return d > bd
	}
	return l.pos[h] < l.pos[bh]
}

// open returns the intervals of node k in m still open at t, dropping the closed ones
// (the list keeps its storage for the next interval).
func (l *linker) open(m map[NodeID][]int32, k NodeID, t int64) []int32 {
	list := m[k]
	j := 0
	for _, i := range list {
		if l.iv[i].EndPs > t {
			list[j] = i
			j++
		}
	}
	m[k] = list[:j]
	return list[:j]
}

// link adds interval j (intervals arrive in start order): it is united with the open
// intervals it overlaps and is linked to, hop by hop or as a sibling, and its chain
// extends the deepest hop chain downstream of it.
func (l *linker) link(j int32) {
	iv := &l.iv[j]
	l.depth[j], l.head[j] = 1, j
	if iv.EndPs <= iv.StartPs {
		return // empty interval: overlaps nothing
	}
	t := iv.StartPs
	// Downstream: intervals in which j's pauser is itself paused (hop link i -> j).
	for _, i := range l.open(l.pausedAt, iv.Peer, t) {
		l.union(i, j)
		if l.better(l.depth[i]+1, l.head[i], l.depth[j], l.head[j]) {
			l.depth[j], l.head[j] = l.depth[i]+1, l.head[i]
		}
	}
	// Upstream already paused by j's node (started earlier): linked, not a chain.
	for _, i := range l.open(l.pausedBy, iv.Node, t) {
		l.union(i, j)
	}
	// Siblings: paused by the same node.
	for _, i := range l.open(l.pausedBy, iv.Peer, t) {
		l.union(i, j)
	}
	l.pausedAt[iv.Node] = append(l.pausedAt[iv.Node], j)
	l.pausedBy[iv.Peer] = append(l.pausedBy[iv.Peer], j)
}

// group makes one episode per component, numbered by their first interval in start
// order, with their intervals (in start order), start, duration and paused time.
func (l *linker) group() []Episode {
	n := len(l.iv)
	epOfRoot := make([]int32, n)
	for i := range epOfRoot {
		epOfRoot[i] = -1
	}
	epOf := make([]int32, n)
	var sizes []int32
	for _, j := range l.order {
		r := l.find(j)
		if epOfRoot[r] < 0 {
			epOfRoot[r] = int32(len(sizes))
			sizes = append(sizes, 0)
		}
		epOf[j] = epOfRoot[r]
		sizes[epOf[j]]++
	}
	eps := make([]Episode, len(sizes))
	members := make([]int32, n) // one backing array for every episode's Intervals
	off := int32(0)
	for e, sz := range sizes {
		eps[e].Intervals = members[off : off : off+sz]
		off += sz
	}
	for _, j := range l.order {
		iv := &l.iv[j]
		ep := &eps[epOf[j]]
		if len(ep.Intervals) == 0 {
			ep.StartPs = iv.StartPs
		}
		ep.Intervals = append(ep.Intervals, j)
		ep.DurationPs = max(ep.DurationPs, iv.EndPs-ep.StartPs)
		ep.PausedPs += iv.DurationPs()
	}
	return eps
}

// describe fills each episode's port count, depth and root (the head of its deepest
// chain, see Episode) and decides whether it is a storm.
func (l *linker) describe(eps []Episode, nodes Nodes, stormDurationPs int64) {
	pcID := map[PortClass]int32{}
	var seen []int32                // per port-class: episode+1 that last counted it
	roots := map[PortClass]string{} // one string per root port
	for e := range eps {
		ep := &eps[e]
		best := ep.Intervals[0]
		for _, j := range ep.Intervals {
			id, ok := pcID[l.iv[j].PortClass]
			if !ok {
				id = int32(len(seen))
				pcID[l.iv[j].PortClass] = id
				seen = append(seen, 0)
			}
			if seen[id] != int32(e)+1 {
				seen[id] = int32(e) + 1
				ep.Ports++
			}
			if l.better(l.depth[j], l.head[j], l.depth[best], l.head[best]) {
				best = j
			}
		}
		ep.Depth = int(l.depth[best])
		h := &l.iv[l.head[best]]
		ep.RootNode, ep.RootPort, ep.RootPaused, ep.TC = nodes.Name(h.Peer), h.PeerPort, nodes.Port(h.PortClass), h.TC
		ep.Root = ep.RootNode
		if h.PeerPort >= 0 {
			rk := PortClass{Node: h.Peer, Port: h.PeerPort}
			if ep.Root = roots[rk]; ep.Root == "" {
				ep.Root = ep.RootNode + ":" + strconv.Itoa(int(h.PeerPort))
				roots[rk] = ep.Root
			}
		}
		ep.Storm = ep.Depth >= 2 || ep.DurationPs >= stormDurationPs
	}
}
