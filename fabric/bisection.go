package fabric

import "github.com/tracefabric/tracefabric/internal/units"

// Bisection is the bisection bandwidth of docs/topology.md#describe: the maximum
// flow, over the links' speeds in one direction, from the hosts of the first half
// of the racks (Racks order) to the hosts of the other half. With one rack it is the
// flow between the two halves of its hosts. Dinic's algorithm, O(V^2 E) at worst and
// far less on these layered graphs.
func (f *Fabric) Bisection() units.BitRate {
	n := len(f.Nodes) + 2
	src, dst := int32(n-2), int32(n-1)
	type edge struct {
		to  int32
		cap int64
	}
	var edges []edge
	adj := make([][]int32, n)
	add := func(a, b int32, c int64) {
		adj[a] = append(adj[a], int32(len(edges)))
		edges = append(edges, edge{b, c})
		adj[b] = append(adj[b], int32(len(edges)))
		edges = append(edges, edge{a, 0})
	}
	for i := range f.Links {
		l := &f.Links[i]
		add(l.A.Node, l.B.Node, int64(l.Speed))
		add(l.B.Node, l.A.Node, int64(l.Speed))
	}
	const inf = int64(1) << 62
	if len(f.Racks) == 1 {
		hs := f.Racks[0].Hosts
		for i, h := range hs {
			if i < len(hs)/2 {
				add(src, h, inf)
			} else {
				add(h, dst, inf)
			}
		}
	} else {
		for r, rack := range f.Racks {
			for _, h := range rack.Hosts {
				if r < len(f.Racks)/2 {
					add(src, h, inf)
				} else {
					add(h, dst, inf)
				}
			}
		}
	}
	level := make([]int32, n)
	iter := make([]int, n)
	queue := make([]int32, 0, n)
	var total int64
	for {
		for i := range level {
			level[i] = -1
		}
		level[src] = 0
		queue = append(queue[:0], src)
		for qi := 0; qi < len(queue); qi++ {
			v := queue[qi]
			for _, e := range adj[v] {
				if edges[e].cap > 0 && level[edges[e].to] < 0 {
					level[edges[e].to] = level[v] + 1
					queue = append(queue, edges[e].to)
				}
			}
		}
		if level[dst] < 0 {
			return units.BitRate(total)
		}
		for i := range iter {
			iter[i] = 0
		}
		var dfs func(v int32, up int64) int64
		dfs = func(v int32, up int64) int64 {
			if v == dst {
				return up
			}
			for ; iter[v] < len(adj[v]); iter[v]++ {
				e := adj[v][iter[v]]
				to := edges[e].to
				if edges[e].cap > 0 && level[to] == level[v]+1 {
					if d := dfs(to, min(up, edges[e].cap)); d > 0 {
						edges[e].cap -= d
						edges[e^1].cap += d
						return d
					}
				}
			}
			return 0
		}
		for {
			d := dfs(src, inf)
			if d == 0 {
				break
			}
			total += d
		}
	}
}
