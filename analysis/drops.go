package analysis

import (
	"cmp"
	"container/heap"
	"slices"
	"sort"

	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// Drop is one dropped packet (a drops.arrow row): when (ps), where, which class, why,
// which flow, its IP size in bytes and its kind (data, or a closed-loop receiver's
// ack, cnp or nak). A drop for reason headroom is a lossless
// drop: a lossless packet found its ingress port's headroom full, which correctly
// sized headroom never lets happen, so every such drop is a buffer-sizing failure and
// is reported apart.
type Drop struct {
	TimePs int64
	Node   NodeID
	Tier   records.Tier
	Role   Role // the node's role (docs/analysis.md#roles); "": counted by Tier
	Port   int32
	TC     uint8
	Reason records.DropReason
	FlowID int64
	Bytes  int64
	Kind   records.PacketKind
}

// DropRate is the drop count over time: Counts[r][b] drops of Reasons[r] in bin b,
// which covers [StartPs + b*BinPs, StartPs + (b+1)*BinPs) ps of simulated time. The
// bins cover the span from the first to the last drop, padded (see FineBins); without
// drops, the whole run. Total[b] sums the reasons.
type DropRate struct {
	StartPs units.Time           `json:"start_ps"`
	BinPs   units.Time           `json:"bin_ps"`
	Reasons []records.DropReason `json:"reasons"`
	Counts  [][]int64            `json:"counts"`
	Total   []int64              `json:"total"`
}

// DropStats is the drop summary of a run: the data packets dropped (captured packets,
// closed-loop senders' segments), like run.json's dropped and flows.arrow's dropped.
// ByNode is keyed by node name, ByTier by the dropping node's role
// (docs/analysis.md#roles: a topology file's role, else the records tier). Lossless counts the headroom drops. Control counts
// the closed-loop control packets (ack, cnp, nak) dropped, which no other number
// includes.
type DropStats struct {
	Total    int64                        `json:"total"`
	Bytes    int64                        `json:"bytes"`
	Lossless int64                        `json:"lossless"`
	ByReason map[records.DropReason]int64 `json:"by_reason"`
	ByNode   map[string]int64             `json:"by_node"`
	ByTier   map[Role]int64               `json:"by_tier"`
	ByTC     map[uint8]int64              `json:"by_tc"`
	Rate     DropRate                     `json:"rate"`
	TopFlows []FlowDrops                  `json:"top_flows"`
	Control  map[records.PacketKind]int64 `json:"control"`
}

// DropCounter accumulates drops one at a time (memory independent of the number of
// drops: O(nodes + reasons x FineBins)).
type DropCounter struct {
	s      DropStats
	nodes  Nodes
	byNode map[NodeID]int64
	simPs  int64
	bins   int
	reason map[records.DropReason]int // reason -> row of fine (row 0: all reasons)
	fine   *fineSeries
}

// NewDropCounter counts drops of a simulation that ran simPs picoseconds, whose nodes
// nodes names; Result bins them in at most bins bins (bins < 1 means 1) over the span
// of the drops.
func NewDropCounter(nodes Nodes, simPs int64, bins int) *DropCounter {
	c := &DropCounter{nodes: nodes, byNode: map[NodeID]int64{}, simPs: simPs, bins: max(bins, 1),
		reason: map[records.DropReason]int{}, fine: newFineSeries(1, false)}
	c.s.ByReason = map[records.DropReason]int64{}
	c.s.ByTier = map[Role]int64{}
	c.s.ByTC = map[uint8]int64{}
	c.s.Control = map[records.PacketKind]int64{}
	return c
}

// Add counts one drop: a control packet's only in Control.
func (c *DropCounter) Add(d Drop) {
	if d.Kind != records.KindData {
		c.s.Control[d.Kind]++
		return
	}
	c.s.Total++
	c.s.Bytes += d.Bytes
	if d.Reason == records.ReasonHeadroom {
		c.s.Lossless++
	}
	c.s.ByReason[d.Reason]++
	c.byNode[d.Node]++
	c.s.ByTier[roleOf(d.Role, d.Tier)]++
	c.s.ByTC[d.TC]++
	r, ok := c.reason[d.Reason]
	if !ok {
		r = c.fine.addRow()
		c.reason[d.Reason] = r
	}
	b := c.fine.index(d.TimePs)
	c.fine.rows[r][b]++
	c.fine.rows[0][b]++
}

// Result returns the statistics so far, reasons sorted by name. TopFlows is left to the
// caller (see TopFlowsByDrops).
func (c *DropCounter) Result() DropStats {
	s := c.s
	s.ByNode = make(map[string]int64, len(c.byNode))
	for n, k := range c.byNode {
		s.ByNode[c.nodes.Name(n)] += k
	}
	names := make([]records.DropReason, 0, len(c.reason))
	for n := range c.reason {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b records.DropReason) int { return cmp.Compare(a.String(), b.String()) })
	w := c.fine.ownWindow(c.simPs, c.bins)
	s.Rate.StartPs, s.Rate.BinPs = units.Time(w.start), units.Time(w.width)
	s.Rate.Total = c.fine.collect(0, w)
	s.Rate.Reasons = names
	s.Rate.Counts = make([][]int64, len(names))
	for i, n := range names {
		s.Rate.Counts[i] = c.fine.collect(c.reason[n], w)
	}
	return s
}

// FlowDrops is one flow's drop record (from flows.arrow): identity, injected packets
// and bytes, dropped packets.
type FlowDrops struct {
	FlowID  int64  `json:"flow_id"`
	Src     string `json:"src"`
	Dst     string `json:"dst"`
	Proto   uint8  `json:"proto"`
	Sport   uint16 `json:"sport"`
	Dport   uint16 `json:"dport"`
	TC      uint8  `json:"tc"`
	Packets int64  `json:"packets"`
	Bytes   int64  `json:"bytes"`
	Dropped int64  `json:"dropped"`
}

// TopFlows keeps the k flows with the most drops seen so far (ties: the lower
// FlowID), in O(k) memory. The zero value keeps nothing; use NewTopFlows.
type TopFlows struct {
	k int
	h flowHeap
}

// NewTopFlows keeps the top k flows by drops.
func NewTopFlows(k int) *TopFlows { return &TopFlows{k: max(k, 0)} }

// Add offers a flow; flows without drops are ignored.
func (t *TopFlows) Add(f FlowDrops) {
	if f.Dropped <= 0 || t.k == 0 {
		return
	}
	if len(t.h) < t.k {
		heap.Push(&t.h, f)
		return
	}
	if worse(t.h[0], f) {
		t.h[0] = f
		heap.Fix(&t.h, 0)
	}
}

// Result returns the kept flows, most drops first.
func (t *TopFlows) Result() []FlowDrops {
	out := append([]FlowDrops(nil), t.h...)
	sort.Slice(out, func(i, j int) bool { return worse(out[j], out[i]) })
	return out
}

// TopFlowsByDrops returns the k flows with the most drops, most first.
func TopFlowsByDrops(flows []FlowDrops, k int) []FlowDrops {
	t := NewTopFlows(k)
	for _, f := range flows {
		t.Add(f)
	}
	return t.Result()
}

// worse reports whether a ranks below b (fewer drops, or equal and a higher ID).
func worse(a, b FlowDrops) bool {
	if a.Dropped != b.Dropped {
		return a.Dropped < b.Dropped
	}
	return a.FlowID > b.FlowID
}

type flowHeap []FlowDrops

func (h flowHeap) Len() int           { return len(h) }
func (h flowHeap) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h flowHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *flowHeap) Push(x any)        { *h = append(*h, x.(FlowDrops)) }
func (h *flowHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
