package analysis

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
)

// refEpisodes is a brute-force reference of Episodes: every pair checked for a link,
// depth by dynamic programming over the start order. Quadratic; for tests.
func refEpisodes(ivs []PauseInterval, stormPs int64) []Episode {
	n := len(ivs)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ivs[order[a]].StartPs < ivs[order[b]].StartPs })
	pos := make([]int, n)
	for p, i := range order {
		pos[i] = p
	}
	empty := func(i int) bool { return ivs[i].EndPs <= ivs[i].StartPs }
	overlap := func(a, b int) bool {
		return !empty(a) && !empty(b) && ivs[a].StartPs < ivs[b].EndPs && ivs[b].StartPs < ivs[a].EndPs
	}
	comp := make([]int, n)
	for i := range comp {
		comp[i] = i
	}
	var find func(int) int
	find = func(x int) int {
		if comp[x] != x {
			comp[x] = find(comp[x])
		}
		return comp[x]
	}
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			A, B := ivs[a], ivs[b]
			if overlap(a, b) && (A.Node == B.Peer || B.Node == A.Peer || A.Peer == B.Peer) {
				ra, rb := find(a), find(b)
				if ra != rb {
					comp[max(ra, rb)] = min(ra, rb)
				}
			}
		}
	}
	depth := make([]int, n)
	head := make([]int, n)
	better := func(d, h, bd, bh int) bool { return d > bd || d == bd && pos[h] < pos[bh] }
	for _, j := range order {
		depth[j], head[j] = 1, j
		for _, i := range order[:pos[j]] {
			if overlap(i, j) && ivs[i].Node == ivs[j].Peer && better(depth[i]+1, head[i], depth[j], head[j]) {
				depth[j], head[j] = depth[i]+1, head[i]
			}
		}
	}
	byComp := map[int]int{}
	var eps []Episode
	var best []int
	for _, j := range order {
		c := find(j)
		e, ok := byComp[c]
		if !ok {
			e = len(eps)
			byComp[c] = e
			eps = append(eps, Episode{StartPs: ivs[j].StartPs})
			best = append(best, j)
		}
		ep := &eps[e]
		ep.Intervals = append(ep.Intervals, int32(j))
		ep.DurationPs = max(ep.DurationPs, ivs[j].EndPs-ep.StartPs)
		ep.PausedPs += ivs[j].DurationPs()
		if better(depth[j], head[j], depth[best[e]], head[best[e]]) {
			best[e] = j
		}
	}
	for e := range eps {
		ports := map[PortClass]bool{}
		for _, j := range eps[e].Intervals {
			ports[ivs[j].PortClass] = true
		}
		ep := &eps[e]
		ep.Ports = len(ports)
		ep.Depth = depth[best[e]]
		h := ivs[head[best[e]]]
		ep.RootNode, ep.RootPort, ep.RootPaused, ep.TC = h.Peer, h.PeerPort, h.PortClass, h.TC
		ep.Root = h.Peer
		if h.PeerPort >= 0 {
			ep.Root = fmt.Sprintf("%s:%d", h.Peer, h.PeerPort)
		}
		ep.Storm = ep.Depth >= 2 || ep.DurationPs >= stormPs
	}
	return eps
}

// Episodes (a sweep with pruned active lists) agrees with the brute-force reference on
// random intervals full of overlaps, ties, chains, cycles and empty intervals.
func TestEpisodesMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	nodes := []string{"a", "b", "c", "d", "e", "f"}
	for trial := 0; trial < 400; trial++ {
		n := 1 + r.IntN(40)
		ivs := make([]PauseInterval, n)
		for i := range ivs {
			s := int64(r.IntN(100))
			node, peer := nodes[r.IntN(len(nodes))], nodes[r.IntN(len(nodes))]
			ivs[i] = PauseInterval{PortClass: PortClass{node, int32(r.IntN(2)), uint8(3 + r.IntN(2))}, Peer: peer, PeerPort: int32(r.IntN(3)) - 1,
				StartPs: s, EndPs: s + int64(r.IntN(30))}
		}
		got := Episodes(ivs, 40)
		want := refEpisodes(ivs, 40)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: intervals %+v\n got %+v\nwant %+v", trial, ivs, got, want)
		}
	}
}

// VictimCounter (time index per port, hops searched in batches) agrees with checking every interval of every
// episode, also when intervals of one port-class overlap.
func TestVictimsMatchReference(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	nodes := []string{"a", "b", "c", "d"}
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
		eps := Episodes(ivs, 0)
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
		ivs[i] = PauseInterval{PortClass: PortClass{"rack-p0-r0", 1, 3}, Peer: "fabric-p0-f0", StartPs: s, EndPs: s + 100}
	}
	eps := Episodes(ivs, 0)
	v := NewVictimCounter(eps, ivs, 0)
	r := rand.New(rand.NewPCG(1, 2))
	hop := []PortKey{{"host-p0-r0-h0", 0}, {"rack-p0-r0", 1}}
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
