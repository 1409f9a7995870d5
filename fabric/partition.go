package fabric

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracefabric/tracefabric/internal/units"
)

// Partition methods (Plan.Method).
const (
	PartitionSequential = "sequential" // one partition (Plan.Reason says why)
	PartitionPods       = "pods"       // whole pods, spines spread in plane order
	PartitionGraph      = "graph"      // BFS-grown regions refined by moves (any topology)
)

// MaxPartitionImbalance is the largest imbalance (heaviest partition's weight over
// the mean) the graph partition accepts when it trades balance for a larger
// lookahead: a cut avoiding every link shorter than D is kept only when its
// imbalance is at most this; else the partition may cut shorter links.
const MaxPartitionImbalance = 1.25

// Plan is the partition of a fabric for the parallel engine (issue 24): every node
// in one of Parts partitions, the links between partitions (the cut) and the
// lookahead, the smallest propagation delay over the cut (no event can reach another
// partition sooner).
type Plan struct {
	// Asked is the number of partitions asked for; Parts the number made (1:
	// sequential, Reason says why).
	Asked, Parts int
	// Method is PartitionSequential, PartitionPods or PartitionGraph.
	Method string
	// Reason says, in the user's terms, why the plan is sequential ("" otherwise),
	// or why fewer partitions than asked were made.
	Reason string
	// Of is the partition of every node (index: node).
	Of []int32
	// Cut lists the ids of the links whose ends are in different partitions,
	// ascending.
	Cut []int32
	// Lookahead is the smallest propagation delay over Cut (0: sequential).
	Lookahead units.Time
	// Weight is each partition's work weight: the sum of its nodes' bandwidths
	// (Fabric.Bandwidth), as the packet-hops a node handles grow with its ports
	// and their speeds.
	Weight []units.BitRate
	// Imbalance is the heaviest partition's weight over the mean (1: balanced).
	Imbalance float64
}

// minSwitchesPerPartition: a partition averages at least this many switches, so a
// fabric of fewer than 2x switches runs sequentially (too small to divide).
const minSwitchesPerPartition = 2

// Partition divides the fabric into at most n partitions for the parallel engine.
// It is a pure function of the fabric and n: the same input gives the same plan.
//
// Work weight: a node weighs its bandwidth (the sum of its port speeds, hosts
// included), as the packet-hops it serves grow with them. A host always stays with
// its rack switch (a rack and its hosts form one unit), so host links are never cut.
//
// Clos shapes (clos, five-stage, rail-optimized: generated, with the Pod label on
// every rack and fabric switch and at least n pods): whole pods (racks, their hosts
// and the pod's fabric switches) go to partitions in pod order, in contiguous runs
// of about equal weight; the shared top tier (spines, super-spines), in node order
// (plane by plane), fills each partition up to the mean weight in turn. Pods are
// kept whole because a pod's rack-fabric links carry every packet of the pod twice
// and are as short as the spine links: cutting only spine links makes the cut the
// links a packet between pods crosses anyway, and balances with equal pods. Spines
// go by plane (a run of whole planes where the counts allow) because a spine's
// links reach every pod, so wherever it goes the same number of its links are cut;
// only the balance decides, and contiguous planes keep the plan readable.
//
// Every other fabric (a leaf-spine, an explicit topology file, an HPCC
// topology.txt, or a Clos with fewer pods than n) gets a deterministic graph
// partition of the units (racks with their hosts, other switches). Links of delay 0
// are contracted first (they can never be cut). Then, for each distinct positive
// link delay D from the largest down, links shorter than D are contracted too (the
// cut's lookahead is then at least D), the units are divided into regions grown by
// BFS from seeds spread by hop distance (each step the lightest region takes its
// frontier unit with the most links into it), and a refinement pass moves single
// units to the partition where they have the most links while the imbalance stays
// within MaxPartitionImbalance (a greedy Fiduccia-Mattheyses pass, repeated until
// no move reduces the cut). The first D whose partition has at least two parts and
// an imbalance within MaxPartitionImbalance is taken (the smallest D always is):
// the largest lookahead with acceptable balance, then the fewest cut links.
//
// The plan is sequential (one partition, Reason set) when n <= 1, when the fabric
// has fewer than 2*minSwitchesPerPartition switches, when links of delay 0 join
// every switch, or when the lookahead is 0 (a cut link of delay 0). Partition
// never fails on a valid fabric; the error is for n < 0.
func Partition(f *Fabric, n int) (*Plan, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: %d partitions: want 1 or more (0: the CPUs the process may use)", ErrInvalid, n)
	}
	p := &Plan{Asked: n}
	switches := len(f.Nodes) - f.Hosts
	switch {
	case n <= 1:
		return p.sequential(f, "1 thread"), nil
	case switches < 2*minSwitchesPerPartition:
		return p.sequential(f, fmt.Sprintf("the fabric has %d switches: too few to divide (at least %d, %d per partition)",
			switches, 2*minSwitchesPerPartition, minSwitchesPerPartition)), nil
	}
	if k := switches / minSwitchesPerPartition; n > k {
		p.Reason = fmt.Sprintf("%d partitions asked, %d made: %d switches, at least %d per partition", n, k, switches, minSwitchesPerPartition)
		n = k
	}
	units, unitOf := f.units()
	var of []int32
	if pods := f.pods(); f.UpDown && pods >= n {
		of = f.podPartition(n, pods)
		p.Method = PartitionPods
		p.fill(f, of)
		if p.Imbalance > MaxPartitionImbalance {
			// Pods too few or too heavy for n equal shares: the graph partition's,
			// if better balanced.
			if g, _ := f.graphPartition(n, units, unitOf); g != nil {
				q := &Plan{}
				q.fill(f, g)
				if q.Parts >= 2 && q.Imbalance < p.Imbalance {
					of, p.Method = g, PartitionGraph
				}
			}
		}
	} else {
		var why string
		of, why = f.graphPartition(n, units, unitOf)
		if of == nil {
			return p.sequential(f, why), nil
		}
		p.Method = PartitionGraph
	}
	p.fill(f, of)
	if p.Parts < 2 {
		return p.sequential(f, "the fabric does not divide"), nil
	}
	if p.Lookahead == 0 {
		for _, id := range p.Cut {
			if l := &f.Links[id]; l.Delay == 0 {
				return p.sequential(f, fmt.Sprintf("lookahead 0: link %s - %s has delay 0", f.Nodes[l.A.Node].Name, f.Nodes[l.B.Node].Name)), nil
			}
		}
	}
	if p.Parts < n && p.Reason == "" {
		p.Reason = fmt.Sprintf("%d partitions asked, %d made", p.Asked, p.Parts)
	}
	return p, nil
}

// sequential makes p the one-partition plan.
func (p *Plan) sequential(f *Fabric, reason string) *Plan {
	*p = Plan{Asked: p.Asked, Method: PartitionSequential, Reason: reason}
	p.fill(f, make([]int32, len(f.Nodes)))
	p.Lookahead = 0
	return p
}

// fill computes the plan's parts (renumbered in order of their first node, empty
// ones dropped), cut, lookahead, weights and imbalance from the assignment of.
func (p *Plan) fill(f *Fabric, of []int32) {
	renum := map[int32]int32{}
	p.Of = make([]int32, len(of))
	for i, q := range of {
		r, ok := renum[q]
		if !ok {
			r = int32(len(renum))
			renum[q] = r
		}
		p.Of[i] = r
	}
	p.Parts = len(renum)
	p.Weight = make([]units.BitRate, p.Parts)
	for i := range f.Nodes {
		p.Weight[p.Of[i]] += f.Bandwidth(int32(i))
	}
	p.Cut, p.Lookahead = nil, 0
	for id := range f.Links {
		l := &f.Links[id]
		if p.Of[l.A.Node] != p.Of[l.B.Node] {
			if len(p.Cut) == 0 || l.Delay < p.Lookahead {
				p.Lookahead = l.Delay
			}
			p.Cut = append(p.Cut, int32(id))
		}
	}
	p.Imbalance = imbalance(p.Weight)
}

func imbalance(w []units.BitRate) float64 {
	var sum, hi float64
	for _, x := range w {
		sum += float64(x)
		hi = max(hi, float64(x))
	}
	if sum == 0 {
		return 1
	}
	return hi / (sum / float64(len(w)))
}

// units groups the nodes into units that stay together: a rack switch with its
// hosts, every other switch alone. It returns the units (node lists, in order of
// their first switch) and each node's unit.
func (f *Fabric) units() ([][]int32, []int32) {
	unitOf := make([]int32, len(f.Nodes))
	var us [][]int32
	for i := f.Hosts; i < len(f.Nodes); i++ {
		unitOf[i] = int32(len(us))
		us = append(us, []int32{int32(i)})
	}
	for h := 0; h < f.Hosts; h++ {
		u := unitOf[f.Nodes[h].Ports[0].Peer]
		unitOf[h] = u
		us[u] = append(us[u], int32(h))
	}
	return us, unitOf
}

// pods counts the distinct pods of a labelled fabric: every switch with hosts has a
// Pod label >= 0, the pods numbered 0..P-1. 0 when the labels do not describe pods.
func (f *Fabric) pods() int {
	pods := 0
	for _, r := range f.Racks {
		pod := f.Nodes[r.Node].Pod
		if pod < 0 {
			return 0
		}
		pods = max(pods, pod+1)
	}
	return pods
}

// podPartition assigns whole pods to n partitions (contiguous runs of about equal
// weight), hosts with their rack, and the switches without a pod (spines) in node
// order filling each partition up to the mean weight in turn.
func (f *Fabric) podPartition(n, pods int) []int32 {
	of := make([]int32, len(f.Nodes))
	podW := make([]int64, pods)
	var podTotal, total int64
	podOf := func(i int) int {
		nd := &f.Nodes[i]
		if nd.IsHost() {
			return f.Nodes[nd.Ports[0].Peer].Pod
		}
		return nd.Pod
	}
	for i := range f.Nodes {
		w := int64(f.Bandwidth(int32(i)))
		total += w
		if pod := podOf(i); pod >= 0 {
			podW[pod] += w
			podTotal += w
		}
	}
	// Pod p's partition: where the midpoint of its weight falls in n equal shares of
	// the pods' weight.
	partOfPod := make([]int32, pods)
	var cum int64
	for pod, w := range podW {
		mid := float64(cum) + float64(w)/2
		partOfPod[pod] = int32(min(int(mid*float64(n)/float64(max(podTotal, 1))), n-1))
		cum += w
	}
	load := make([]float64, n)
	for i := range f.Nodes {
		if pod := podOf(i); pod >= 0 {
			of[i] = partOfPod[pod]
			load[of[i]] += float64(f.Bandwidth(int32(i)))
		}
	}
	mean := float64(total) / float64(n)
	c := 0
	for i := f.Hosts; i < len(f.Nodes); i++ {
		if podOf(i) >= 0 {
			continue
		}
		w := float64(f.Bandwidth(int32(i)))
		for c < n-1 && load[c]+w/2 > mean {
			c++
		}
		of[i] = int32(c)
		load[c] += w
	}
	return of
}

// unitGraph is the graph of units after contraction: weights and, per unit, its
// neighbours with the number of links to each (sorted by neighbour).
type unitGraph struct {
	w   []int64
	adj [][]nbr
	// members of each contracted unit (original units), for the answer
	members [][]int32
}

type nbr struct {
	u     int32
	links int64
}

// contract merges the units joined by links of delay < d (and of delay 0) and
// returns the contracted graph and each original unit's contracted unit.
func (f *Fabric) contract(us [][]int32, unitOf []int32, d units.Time) (*unitGraph, []int32) {
	parent := make([]int32, len(us))
	for i := range parent {
		parent[i] = int32(i)
	}
	var find func(int32) int32
	find = func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for id := range f.Links {
		l := &f.Links[id]
		if l.Delay == 0 || l.Delay < d {
			a, b := find(unitOf[l.A.Node]), find(unitOf[l.B.Node])
			if a != b {
				if a > b {
					a, b = b, a
				}
				parent[b] = a // the lower index represents: deterministic
			}
		}
	}
	cu := make([]int32, len(us))
	idx := map[int32]int32{}
	g := &unitGraph{}
	for u := range us {
		r := find(int32(u))
		c, ok := idx[r]
		if !ok {
			c = int32(len(g.w))
			idx[r] = c
			g.w = append(g.w, 0)
			g.members = append(g.members, nil)
		}
		cu[u] = c
		g.members[c] = append(g.members[c], int32(u))
		for _, node := range us[u] {
			g.w[c] += int64(f.Bandwidth(node))
		}
	}
	links := make([]map[int32]int64, len(g.w))
	for id := range f.Links {
		l := &f.Links[id]
		a, b := cu[unitOf[l.A.Node]], cu[unitOf[l.B.Node]]
		if a == b {
			continue
		}
		for _, e := range [2][2]int32{{a, b}, {b, a}} {
			if links[e[0]] == nil {
				links[e[0]] = map[int32]int64{}
			}
			links[e[0]][e[1]]++
		}
	}
	g.adj = make([][]nbr, len(g.w))
	for u, m := range links {
		for v, k := range m {
			g.adj[u] = append(g.adj[u], nbr{v, k})
		}
		slices.SortFunc(g.adj[u], func(a, b nbr) int { return int(a.u - b.u) })
	}
	return g, cu
}

// graphPartition divides the units into n partitions (see Partition), or returns
// nil and the reason the fabric does not divide.
func (f *Fabric) graphPartition(n int, us [][]int32, unitOf []int32) ([]int32, string) {
	var delays []units.Time
	for id := range f.Links {
		l := &f.Links[id]
		if l.Delay > 0 && !f.Nodes[l.A.Node].IsHost() && !f.Nodes[l.B.Node].IsHost() {
			delays = append(delays, l.Delay)
		}
	}
	slices.Sort(delays)
	delays = slices.Compact(delays)
	var best []int32
	bestImb := 0.0
	for k := len(delays) - 1; k >= 0; k-- {
		g, cu := f.contract(us, unitOf, delays[k])
		if len(g.w) < 2 {
			continue
		}
		parts := g.partition(min(n, len(g.w)))
		of := make([]int32, len(f.Nodes))
		w := make([]units.BitRate, n)
		used := map[int32]bool{}
		for i := range f.Nodes {
			of[i] = parts[cu[unitOf[i]]]
			w[of[i]] += f.Bandwidth(int32(i))
			used[of[i]] = true
		}
		var ws []units.BitRate
		for q := range w {
			if used[int32(q)] {
				ws = append(ws, w[q])
			}
		}
		if len(ws) < 2 {
			continue
		}
		imb := imbalance(ws)
		if imb <= MaxPartitionImbalance {
			return of, ""
		}
		if best == nil || imb < bestImb {
			best, bestImb = of, imb
		}
	}
	if best == nil {
		id := -1
		for i := range f.Links {
			if l := &f.Links[i]; l.Delay == 0 && !f.Nodes[l.A.Node].IsHost() && !f.Nodes[l.B.Node].IsHost() {
				id = i
				break
			}
		}
		if id < 0 {
			return nil, "the fabric does not divide"
		}
		l := &f.Links[id]
		return nil, fmt.Sprintf("lookahead 0: links of delay 0 join every switch (e.g. %s - %s)", f.Nodes[l.A.Node].Name, f.Nodes[l.B.Node].Name)
	}
	return best, ""
}

// partition divides g's units into n regions: BFS growth from spread seeds, then
// refinement (see Partition). n <= len(g.w).
func (g *unitGraph) partition(n int) []int32 {
	nu := len(g.w)
	// Seeds: unit 0's farthest unit first, then each next the unit farthest (in hops)
	// from the seeds so far; ties the lowest index.
	dist := make([]int32, nu)
	for i := range dist {
		dist[i] = -1
	}
	bfs := func(from int32) []int32 {
		d := make([]int32, nu)
		for i := range d {
			d[i] = -1
		}
		d[from] = 0
		q := []int32{from}
		for len(q) > 0 {
			u := q[0]
			q = q[1:]
			for _, e := range g.adj[u] {
				if d[e.u] < 0 {
					d[e.u] = d[u] + 1
					q = append(q, e.u)
				}
			}
		}
		return d
	}
	farthest := func(d []int32, taken []bool) int32 {
		best := int32(-1)
		for u := range d {
			if !taken[u] && (best < 0 || d[u] > d[best]) {
				best = int32(u)
			}
		}
		return best
	}
	taken := make([]bool, nu)
	seeds := []int32{farthest(bfs(0), taken)}
	taken[seeds[0]] = true
	copy(dist, bfs(seeds[0]))
	for len(seeds) < n {
		s := farthest(dist, taken)
		seeds = append(seeds, s)
		taken[s] = true
		for u, d := range bfs(s) {
			if d < dist[u] {
				dist[u] = d
			}
		}
	}
	of := make([]int32, nu)
	for i := range of {
		of[i] = -1
	}
	load := make([]int64, n)
	for q, s := range seeds {
		of[s] = int32(q)
		load[q] = g.w[s]
	}
	// Growth: the lightest region with a frontier takes the frontier unit with the
	// most links into it (ties: lowest index).
	into := make([][]int64, n) // links from unit to region q
	for q := range into {
		into[q] = make([]int64, nu)
	}
	for q, s := range seeds {
		for _, e := range g.adj[s] {
			into[q][e.u] += e.links
		}
	}
	left := nu - n
	stuck := make([]bool, n)
	for left > 0 {
		q := -1
		for r := 0; r < n; r++ {
			if !stuck[r] && (q < 0 || load[r] < load[q]) {
				q = r
			}
		}
		if q < 0 {
			break // unreachable: the fabric is connected
		}
		best := int32(-1)
		for u := 0; u < nu; u++ {
			if of[u] < 0 && into[q][u] > 0 && (best < 0 || into[q][u] > into[q][best]) {
				best = int32(u)
			}
		}
		if best < 0 {
			stuck[q] = true
			continue
		}
		of[best] = int32(q)
		load[q] += g.w[best]
		left--
		for _, e := range g.adj[best] {
			into[q][e.u] += e.links
		}
	}
	for u := range of { // only with a disconnected graph
		if of[u] < 0 {
			of[u] = 0
			load[0] += g.w[u]
		}
	}
	g.refine(of, load)
	return of
}

// refine moves single units to the partition where they have the most links, while
// the move reduces the cut (or keeps it and improves the balance) and keeps the
// heaviest partition within MaxPartitionImbalance of the mean (or no heavier than
// before); units in index order, passes until none moves (at most 20).
func (g *unitGraph) refine(of []int32, load []int64) {
	n, nu := len(load), len(of)
	var total int64
	count := make([]int, n)
	for u, q := range of {
		total += g.w[u]
		count[q]++
	}
	limit := float64(total) / float64(n) * MaxPartitionImbalance
	links := make([]int64, n)
	move := func(u int, to int32) { // unit u to partition to
		from := of[u]
		of[u] = to
		load[from] -= g.w[u]
		load[to] += g.w[u]
		count[from]--
		count[to]++
	}
	// Rebalance: while the heaviest partition is above the limit, move the unit of
	// it whose move to a lighter partition costs the fewest cut links (ties: the
	// lightest target, then the lowest unit and partition), as long as the target
	// stays lighter than the heaviest was (each move lowers the sum of squared
	// loads, so this ends).
	for iter := 0; iter < nu; iter++ {
		h := int32(0)
		for q := range load {
			if load[q] > load[h] {
				h = int32(q)
			}
		}
		if float64(load[h]) <= limit || count[h] == 1 {
			break
		}
		bu, bq, bg := -1, int32(-1), int64(0)
		for u := range of {
			if of[u] != h {
				continue
			}
			clear(links)
			for _, e := range g.adj[u] {
				links[of[e.u]] += e.links
			}
			for q := int32(0); q < int32(n); q++ {
				if q == h || load[q]+g.w[u] >= load[h] {
					continue
				}
				gain := links[q] - links[h]
				if bu < 0 || gain > bg || (gain == bg && load[q]+g.w[u] < load[bq]+g.w[bu]) {
					bu, bq, bg = u, q, gain
				}
			}
		}
		if bu < 0 {
			break
		}
		move(bu, bq)
	}
	for pass := 0; pass < 20; pass++ {
		moved := false
		for u := range of {
			from := of[u]
			if count[from] == 1 {
				continue
			}
			clear(links)
			for _, e := range g.adj[u] {
				links[of[e.u]] += e.links
			}
			best, bestGain := int32(-1), int64(0)
			for q := int32(0); q < int32(n); q++ {
				if q == from {
					continue
				}
				gain := links[q] - links[from]
				after := load[q] + g.w[u]
				if float64(after) > limit && after > load[from] {
					continue
				}
				balances := after < load[from]
				if gain > bestGain || (gain == 0 && bestGain == 0 && best < 0 && balances && links[q] > 0) {
					best, bestGain = q, gain
				}
			}
			if best < 0 {
				continue
			}
			move(u, best)
			moved = true
		}
		if !moved {
			return
		}
	}
}

// PlanSummary is a plan as `replay topology --threads N` prints it (text and JSON).
type PlanSummary struct {
	Asked      int                `json:"threads"`
	Parts      int                `json:"partitions"`
	Method     string             `json:"method"`
	Reason     string             `json:"reason,omitempty"`
	Partitions []PartitionSummary `json:"parts"`
	// CutLinks names the cut links ("a - b"), in link id order.
	CutLinks    []string `json:"cut_links"`
	LookaheadPs int64    `json:"lookahead_ps"`
	Imbalance   float64  `json:"imbalance"`
}

// PartitionSummary is one partition of a PlanSummary.
type PartitionSummary struct {
	Nodes     int   `json:"nodes"`
	Hosts     int   `json:"hosts"`
	Switches  int   `json:"switches"`
	WeightBps int64 `json:"weight_bps"`
}

// Summary describes p on f.
func (p *Plan) Summary(f *Fabric) PlanSummary {
	s := PlanSummary{Asked: p.Asked, Parts: p.Parts, Method: p.Method, Reason: p.Reason, LookaheadPs: int64(p.Lookahead),
		Imbalance: p.Imbalance, Partitions: make([]PartitionSummary, p.Parts), CutLinks: []string{}}
	for i, q := range p.Of {
		ps := &s.Partitions[q]
		ps.Nodes++
		if f.Nodes[i].IsHost() {
			ps.Hosts++
		} else {
			ps.Switches++
		}
	}
	for q, w := range p.Weight {
		s.Partitions[q].WeightBps = int64(w)
	}
	for _, id := range p.Cut {
		l := &f.Links[id]
		s.CutLinks = append(s.CutLinks, f.Nodes[l.A.Node].Name+" - "+f.Nodes[l.B.Node].Name)
	}
	return s
}

// maxCutShown is how many cut links Text names.
const maxCutShown = 6

// Text prints the summary for a terminal: one line per partition, the cut (its
// first links by name), the lookahead and the imbalance; or the sequential reason.
func (s PlanSummary) Text() string {
	var b strings.Builder
	threads := fmt.Sprintf("%d threads", s.Asked)
	if s.Asked == 1 {
		threads = "1 thread"
	}
	if s.Parts == 1 {
		fmt.Fprintf(&b, "partitions for %s: 1, sequential (%s)\n", threads, s.Reason)
		return b.String()
	}
	how := "a graph partition"
	if s.Method == PartitionPods {
		how = "whole pods, spines by plane"
	}
	fmt.Fprintf(&b, "partitions for %s: %d (%s)\n", threads, s.Parts, how)
	if s.Reason != "" {
		fmt.Fprintf(&b, "  %s\n", s.Reason)
	}
	var total int64
	for _, p := range s.Partitions {
		total += p.WeightBps
	}
	for q, p := range s.Partitions {
		fmt.Fprintf(&b, "  partition %d: %d nodes (%d hosts, %d switches), weight %v (%.1f%%)\n",
			q, p.Nodes, p.Hosts, p.Switches, units.BitRate(p.WeightBps), 100*float64(p.WeightBps)/float64(total))
	}
	shown := s.CutLinks[:min(len(s.CutLinks), maxCutShown)]
	more := ""
	if len(s.CutLinks) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(s.CutLinks)-len(shown))
	}
	fmt.Fprintf(&b, "  cut: %d links (%s%s)\n", len(s.CutLinks), strings.Join(shown, ", "), more)
	fmt.Fprintf(&b, "  lookahead %v (the smallest delay of a cut link)\n", units.Time(s.LookaheadPs))
	fmt.Fprintf(&b, "  imbalance %.3f (the heaviest partition's weight over the mean)\n", s.Imbalance)
	return b.String()
}
