package analysis

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"
)

// specEpisode is an episode as the definition in docs/analysis.md#pfc-pauses-and-storms
// (StormRule) reads, computed without Episodes' sweep.
type specEpisode struct {
	members    []int // interval indices, ascending
	start, end int64
	ports      int
	depth      int
	roots      map[[2]int64]bool // (pausing node, its port) heading a deepest chain
}

// specEpisodes implements the definition directly: two pause intervals are linked when
// they overlap in time (half-open spans share an instant) and either the paused
// sender's node of one is itself pausing its own upstream in the other (hop by hop:
// one's Node is the other's Peer), or both are paused by the same node (siblings).
// Episodes are the connected components (union-find over every pair). Depth is the
// number of intervals of the longest hop-by-hop chain I1 -> I2 -> ... in which
// I(k+1)'s pauser is I(k)'s paused node, each overlaps the next, and (the chain rule,
// StormChainRule) each starts no earlier than the one before (ties in start time in
// index order); found by enumerating every chain. With hopOnly, siblings are not
// linked: the rule the report used to state.
func specEpisodes(ivs []PauseInterval, hopOnly bool) []specEpisode {
	n := len(ivs)
	nonEmpty := func(i int) bool { return ivs[i].EndPs > ivs[i].StartPs }
	overlap := func(a, b int) bool {
		return nonEmpty(a) && nonEmpty(b) && ivs[a].StartPs < ivs[b].EndPs && ivs[b].StartPs < ivs[a].EndPs
	}
	hop := func(a, b int) bool { return overlap(a, b) && ivs[b].Peer == ivs[a].Node } // a downstream of b
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		if parent[x] != x {
			parent[x] = find(parent[x])
		}
		return parent[x]
	}
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			if a == b {
				continue
			}
			if hop(a, b) || !hopOnly && overlap(a, b) && ivs[a].Peer == ivs[b].Peer {
				parent[find(a)] = find(b)
			}
		}
	}
	after := func(a, b int) bool { // b comes after a in the chain order
		return ivs[b].StartPs > ivs[a].StartPs || ivs[b].StartPs == ivs[a].StartPs && b > a
	}
	// Every chain from each interval, by depth-first enumeration.
	// The longest chain starting at a (a is its most downstream interval).
	var longest func(a int) int
	longest = func(a int) int {
		best := 1
		for b := 0; b < n; b++ {
			if hop(a, b) && after(a, b) {
				best = max(best, longest(b)+1)
			}
		}
		return best
	}
	byRoot := map[int][]int{}
	for i := 0; i < n; i++ {
		byRoot[find(i)] = append(byRoot[find(i)], i)
	}
	var eps []specEpisode
	for _, members := range byRoot {
		sort.Ints(members)
		e := specEpisode{members: members, start: ivs[members[0]].StartPs, roots: map[[2]int64]bool{}}
		ports := map[PortClass]bool{}
		for _, i := range members {
			e.start = min(e.start, ivs[i].StartPs)
			ports[ivs[i].PortClass] = true
		}
		e.ports = len(ports)
		for _, i := range members {
			e.end = max(e.end, ivs[i].EndPs)
			e.depth = max(e.depth, longest(i))
		}
		e.end = max(e.end, e.start)
		for _, i := range members {
			if longest(i) == e.depth {
				e.roots[[2]int64{int64(ivs[i].Peer), int64(ivs[i].PeerPort)}] = true
			}
		}
		eps = append(eps, e)
	}
	// In time order; episodes starting together by their lowest-indexed interval that
	// starts then.
	first := func(e specEpisode) int {
		for _, i := range e.members {
			if ivs[i].StartPs == e.start {
				return i
			}
		}
		return -1
	}
	sort.Slice(eps, func(i, j int) bool {
		if eps[i].start != eps[j].start {
			return eps[i].start < eps[j].start
		}
		return first(eps[i]) < first(eps[j])
	})
	return eps
}

// randomIntervals are pause intervals among a few nodes, full of overlaps, ties,
// chains, cycles and empty intervals.
func randomIntervals(r *rand.Rand, n int, nodes []NodeID) []PauseInterval {
	ivs := make([]PauseInterval, n)
	for i := range ivs {
		s := int64(r.IntN(100))
		ivs[i] = PauseInterval{PortClass: PortClass{nodes[r.IntN(len(nodes))], int32(r.IntN(2)), uint8(3 + r.IntN(2))},
			Peer: nodes[r.IntN(len(nodes))], PeerPort: int32(r.IntN(3)) - 1, StartPs: s, EndPs: s + int64(r.IntN(30))}
	}
	return ivs
}

// Episodes (a sweep with pruned open lists) forms the episodes the definition
// describes, computed pair by pair: the same members, start, duration, ports and
// depth, a root among the heads of the deepest chains, and storms by the rule.
func TestEpisodesMatchSpec(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	nodes := []NodeID{nid("a"), nid("b"), nid("c"), nid("d"), nid("e"), nid("f")}
	names := testNodes()
	for trial := 0; trial < 400; trial++ {
		ivs := randomIntervals(r, 1+r.IntN(14), nodes)
		got := Episodes(ivs, names, 40)
		want := specEpisodes(ivs, false)
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d episodes, the definition gives %d\nintervals %+v", trial, len(got), len(want), ivs)
		}
		for k, w := range want {
			g := got[k]
			members := make([]int, len(g.Intervals))
			for i, m := range g.Intervals {
				members[i] = int(m)
			}
			sort.Ints(members)
			storm := w.depth >= 2 || w.end-w.start >= 40
			if !slices.Equal(members, w.members) || g.StartPs != w.start || g.EndPs() != w.end || g.Ports != w.ports || g.Depth != w.depth || g.Storm != storm {
				t.Fatalf("trial %d episode %d: got members %v start %d end %d ports %d depth %d storm %v, want %+v storm %v\nintervals %+v",
					trial, k, members, g.StartPs, g.EndPs(), g.Ports, g.Depth, g.Storm, w, storm, ivs)
			}
			found := false
			for root := range w.roots {
				found = found || names.Name(NodeID(root[0])) == g.RootNode && int32(root[1]) == g.RootPort
			}
			if !found {
				t.Fatalf("trial %d episode %d: root %s:%d is not the pauser of a deepest chain's first interval %v", trial, k, g.RootNode, g.RootPort, w.roots)
			}
		}
	}
}

// One congestion event fanning out is one episode: a rack paused by its fabric switch
// (the fabric switch pauses it and, on another port, a second rack at the same time)
// gives one episode of two paused ports by the sibling rule, where the hop-by-hop rule
// alone saw two unrelated episodes. A chain across a hop is one episode by both.
func TestEpisodesSiblingRule(t *testing.T) {
	f, r0, r1, h := nid("fabric-p0-f0"), nid("rack-p0-r0"), nid("rack-p0-r1"), nid("host-p0-r0-h0")
	ivs := []PauseInterval{
		{PortClass: PortClass{r0, 16, 3}, Peer: f, PeerPort: 0, StartPs: 1000, EndPs: 5000}, // f pauses rack 0
		{PortClass: PortClass{r1, 16, 3}, Peer: f, PeerPort: 1, StartPs: 2000, EndPs: 6000}, // f pauses rack 1: a sibling
	}
	if hopOnly := specEpisodes(ivs, true); len(hopOnly) != 2 {
		t.Fatalf("hop by hop alone: %d episodes, want 2 (the case must tell the rules apart)", len(hopOnly))
	}
	got := Episodes(ivs, testNodes(), 0)
	if len(got) != 1 || got[0].Ports != 2 || got[0].Depth != 1 || got[0].StartPs != 1000 || got[0].DurationPs != 5000 || got[0].Storm {
		t.Errorf("siblings: got %+v, want one episode of 2 ports, depth 1, 1000 + 5000 ps, not a storm", got)
	}
	// Rack 0, paused, pauses its host: a hop; the three are one episode of depth 2.
	ivs = append(ivs, PauseInterval{PortClass: PortClass{h, 0, 3}, Peer: r0, PeerPort: 0, StartPs: 3000, EndPs: 4000})
	if hopOnly := specEpisodes(ivs, true); len(hopOnly) != 2 {
		t.Fatalf("hop by hop alone: %d episodes, want 2", len(hopOnly))
	}
	got = Episodes(ivs, testNodes(), 0)
	if len(got) != 1 || got[0].Ports != 3 || got[0].Depth != 2 || !got[0].Storm || got[0].Root != "fabric-p0-f0:0" {
		t.Errorf("siblings and a hop: got %+v, want one storm of 3 ports, depth 2, root fabric-p0-f0:0", got)
	}
	if !reflect.DeepEqual(specEpisodes(ivs, false)[0].members, []int{0, 1, 2}) {
		t.Errorf("the definition's episode: %+v", specEpisodes(ivs, false))
	}
}

// VictimCounter (time index per port, hops searched in batches) agrees with checking every interval of every
// episode, also when intervals of one port-class overlap.
func TestVictimsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	nodes := []NodeID{nid("a"), nid("b"), nid("c"), nid("d")}
	for trial := 0; trial < 301; trial++ {
		nflows := 20
		if trial == 300 {
			nflows = VictimBatch + 5000 // across a batch boundary
		}
		ivs := make([]PauseInterval, 1+r.IntN(30))
		for i := range ivs {
			s := int64(r.IntN(100))
			ivs[i] = PauseInterval{PortClass: PortClass{nodes[r.IntN(4)], int32(r.IntN(2)), 3}, Peer: nodes[r.IntN(4)], StartPs: s, EndPs: s + int64(r.IntN(40))}
		}
		eps := Episodes(ivs, testNodes(), 0)
		flows := make([]FlowPath, nflows)
		for f := range flows {
			first := int64(r.IntN(120))
			fl := FlowPath{FlowID: uint64(f), TC: uint8(3 + r.IntN(2)/1), FirstPs: first, LastPs: first + int64(r.IntN(30))}
			for h := 0; h < 1+r.IntN(4); h++ {
				fl.Hops = append(fl.Hops, PortKey{nodes[r.IntN(4)], int32(r.IntN(2))})
			}
			flows[f] = fl
		}
		got := Victims(eps, ivs, flows, -1)
		want := make([][]uint64, len(eps))
		for e := range eps {
			for _, fl := range flows {
				hit := false
				for _, i := range eps[e].Intervals {
					iv := ivs[i]
					for _, h := range fl.Hops {
						if h.Node == iv.Node && h.Port == iv.Port && fl.TC == iv.TC && fl.FirstPs < iv.EndPs && iv.StartPs <= fl.LastPs {
							hit = true
						}
					}
				}
				if hit {
					want[e] = append(want[e], fl.FlowID)
				}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: got %v, want %v", trial, got, want)
		}
		// Keeping 3 IDs per episode keeps the first 3 in flow order.
		got3 := Victims(eps, ivs, flows, 3)
		for e := range want {
			if w := want[e][:min(3, len(want[e]))]; !reflect.DeepEqual(got3[e], w) && len(w) > 0 {
				t.Fatalf("trial %d episode %d: kept %v, want %v", trial, e, got3[e], w)
			}
			if eps[e].Victims != len(want[e]) {
				t.Fatalf("trial %d episode %d: %d victims, want %d", trial, e, eps[e].Victims, len(want[e]))
			}
		}
	}
}

// The time index finds a flow's candidate spans in a few steps however many pause
// intervals a port-class has, and flows outside every paused span or of an unpaused
// class examine none.
func TestVictimIndexProbes(t *testing.T) {
	const n = 10_000
	ivs := make([]PauseInterval, n)
	for i := range ivs {
		s := int64(i) * 200
		ivs[i] = PauseInterval{PortClass: PortClass{nid("rack-p0-r0"), 1, 3}, Peer: nid("fabric-p0-f0"), StartPs: s, EndPs: s + 100}
	}
	eps := Episodes(ivs, testNodes(), 0)
	v := NewVictimCounter(eps, ivs, 0)
	r := rand.New(rand.NewPCG(1, 2))
	hop := []PortKey{{nid("host-p0-r0-h0"), 0}, {nid("rack-p0-r0"), 1}}
	const flows = 1000
	for f := range flows {
		first := r.Int64N(n * 200)
		v.Add(&FlowPath{FlowID: uint64(f), TC: 3, FirstPs: first, LastPs: first + 150, Hops: hop})
	}
	v.Flush()
	if per := float64(v.probes) / flows; per > 4 {
		t.Errorf("%.1f spans examined per flow, want at most 4 (the index should skip the others)", per)
	}
	v.probes = 0
	v.Add(&FlowPath{TC: 3, FirstPs: n*200 + 1000, LastPs: n*200 + 2000, Hops: hop}) // after every pause
	v.Add(&FlowPath{TC: 0, FirstPs: 0, LastPs: n * 200, Hops: hop})                 // unpaused class
	if v.Flush(); v.probes != 0 || len(v.queued) != 0 {
		t.Errorf("flows that cannot be victims examined %d spans", v.probes)
	}
}
