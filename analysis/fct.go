package analysis

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/tracefabric/tracefabric/records"
)

// Flow completion (docs/model.md#flow-completion): each completed flow's slowdown,
// fct_ps / ideal_fct_ps, summarised per size bucket and transport as m3 does. The
// buckets split flows by their size (flows.arrow size_bytes, the captured IPv4 bytes)
// at the MTU, the fabric BDP and five BDPs: [0, MTU), [MTU, BDP), [BDP, 5 BDP),
// >= 5 BDP. Quantiles are empirical: the p-quantile is the smallest slowdown with at
// least a fraction p of the bucket's flows at or below it (gonum stat.Quantile,
// Empirical).

// FlowFCT is what the slowdown needs of one flow.
type FlowFCT struct {
	SizeBytes  int64
	FctPs      int64 // meaningful when Complete
	IdealFctPs int64
	Transport  records.Transport
	Complete   bool
}

// FCTBucket names a size bucket and its bounds: [Lo, Hi), Hi -1 for no bound.
type FCTBucket struct {
	Name   string `json:"bucket"`
	LoByte int64  `json:"lo_bytes"`
	HiByte int64  `json:"hi_bytes"`
}

// FCTBuckets returns the four size buckets for an MTU and a fabric BDP (bytes). A BDP
// at or below the MTU leaves [MTU, BDP) empty; bounds never decrease.
func FCTBuckets(mtu, bdp int64) []FCTBucket {
	b1 := max(bdp, mtu)
	b2 := max(5*bdp, b1)
	return []FCTBucket{
		{Name: "< MTU", LoByte: 0, HiByte: mtu},
		{Name: "MTU to BDP", LoByte: mtu, HiByte: b1},
		{Name: "BDP to 5 BDP", LoByte: b1, HiByte: b2},
		{Name: ">= 5 BDP", LoByte: b2, HiByte: -1},
	}
}

// SlowdownRow is the slowdown of the completed flows of one (transport, bucket); the
// quantiles are nil when no flow of the bucket completed (undefined, not 0). Transport
// "all" and bucket "all" aggregate.
type SlowdownRow struct {
	Transport string `json:"transport"`
	FCTBucket
	Flows    int      `json:"flows"`    // flows in the bucket
	Complete int      `json:"complete"` // of which completed (the quantiles' sample)
	P50      *float64 `json:"p50"`
	P95      *float64 `json:"p95"`
	P99      *float64 `json:"p99"`
	Max      *float64 `json:"max"`
}

// FCTSlowdown summarises flows: one row per transport present (in the records'
// order) and bucket, then the transport "all" rows, each transport's buckets followed
// by its bucket "all". A flow without data of its own (size and ideal FCT 0: a
// closed-loop flow whose captured packets were all replaced control packets) is in no
// row.
func FCTSlowdown(flows []FlowFCT, mtu, bdp int64) []SlowdownRow {
	var p fctPoint
	rows, _ := slowdownRows(len(flows), func(i int) *fctPoint {
		f := &flows[i]
		p = fctPoint{size: f.SizeBytes, slowdown: SlowdownOf(f.Complete, f.FctPs, f.IdealFctPs), transport: f.Transport, noData: f.SizeBytes == 0 && f.IdealFctPs == 0,
			unfinished: !f.Complete}
		return &p
	}, mtu, bdp)
	return rows
}

// SlowdownOf is a flow's slowdown fct / ideal (ps) when it completed with an ideal
// FCT > 0, else NaN.
func SlowdownOf(complete bool, fctPs, idealPs int64) float64 {
	if !complete || idealPs <= 0 {
		return math.NaN()
	}
	return float64(fctPs) / float64(idealPs)
}

// fctPoint is what the slowdown rows need of one flow.
type fctPoint struct {
	size       int64
	slowdown   float64 // NaN unless completed
	transport  records.Transport
	noData     bool
	unfinished bool // with data, not completed
}

// slowdownRows is FCTSlowdown over n flows given one at a time (flow may reuse its
// result), in one pass; ranked holds the p50 and p99 over every flow with data, an
// unfinished flow slowest (+Inf; as FlowStat), NaN without one.
func slowdownRows(n int, flow func(i int) *fctPoint, mtu, bdp int64) (rows []SlowdownRow, ranked [2]float64) {
	buckets := FCTBuckets(mtu, bdp)
	all := FCTBucket{Name: "all", LoByte: 0, HiByte: -1}
	const nb = 5 // the four buckets and "all"
	type cell struct {
		flows int
		s     []float64
	}
	var cells [records.NumTransports + 1][nb]cell // transports, then "all"
	var present [records.NumTransports]bool
	unfinished := 0
	for i := range n {
		f := flow(i)
		if f.noData || f.transport >= records.NumTransports {
			continue
		}
		if f.unfinished {
			unfinished++
		}
		present[f.transport] = true
		b := len(buckets) - 1
		for b > 0 && f.size < buckets[b].LoByte {
			b--
		}
		v := f.slowdown
		ok := !math.IsNaN(v)
		for _, t := range [2]int{int(f.transport), int(records.NumTransports)} {
			for _, k := range [2]int{b, nb - 1} {
				c := &cells[t][k]
				c.flows++
				if ok {
					c.s = append(c.s, v)
				}
			}
		}
	}
	var out []SlowdownRow
	emit := func(name string, t int) {
		for k, b := range append(buckets, all) {
			c := &cells[t][k]
			row := SlowdownRow{Transport: name, FCTBucket: b, Flows: c.flows, Complete: len(c.s)}
			if len(c.s) > 0 {
				slices.Sort(c.s)
				q := func(p float64) *float64 { v := stat.Quantile(p, stat.Empirical, c.s, nil); return &v }
				row.P50, row.P95, row.P99 = q(0.5), q(0.95), q(0.99)
				m := c.s[len(c.s)-1]
				row.Max = &m
			}
			out = append(out, row)
		}
	}
	kinds := 0
	for _, p := range present {
		if p {
			kinds++
		}
	}
	if kinds > 1 {
		for t := records.Transport(0); t < records.NumTransports; t++ {
			if present[t] {
				emit(t.String(), int(t))
			}
		}
	}
	emit("all", int(records.NumTransports))
	// The quantiles with the unfinished flows ranked slowest, from the completed
	// flows' sorted slowdowns (cell all/all, sorted by emit): the empirical rule's
	// value is the ceil(p N)-th smallest of the N, unfinished past the completed.
	done := cells[records.NumTransports][nb-1].s
	total := float64(len(done) + unfinished)
	for k, p := range [2]float64{0.5, 0.99} {
		ranked[k] = math.NaN()
		if total == 0 {
			continue
		}
		i := max(int(math.Ceil(p*total)), 1) - 1 // as tailQuantile: fidx = p x total
		ranked[k] = math.Inf(1)
		if i < len(done) {
			ranked[k] = done[i]
		}
	}
	return out, ranked
}

// FCTSummary is the flow-completion part of a Summary (docs/analysis.md#flow-completion).
//
// Flows counts the flows with data of their own (size_bytes > 0); NoDataFlows the
// others (closed loop: every captured packet of the flow was a control packet the
// simulated receivers replaced, e.g. the ACKs of a one-way transfer), which have no
// completion time. Complete counts the flows that completed and ByCompletion all of
// Flows by completion (every reason listed), CompleteFraction = Complete / Flows
// (NaN without flows). SlowdownP50 and SlowdownP99 are the empirical quantiles of
// fct_ps / ideal_fct_ps over the flows with data, an unfinished flow counted as
// slower than every completed one (+Inf): +Inf ("unfinished",
// null in JSON and named in Unfinished) when the quantile falls among the
// unfinished flows, NaN without flows. Rows give the slowdown of the completed
// flows per transport and size bucket (FCTSlowdown), with the MTU and fabric BDP
// that bound the buckets.
type FCTSummary struct {
	MTUBytes         int64            `json:"mtu_bytes"`
	BDPBytes         int64            `json:"bdp_bytes"`
	Flows            int64            `json:"flows"`
	NoDataFlows      int64            `json:"no_data_flows"`
	Complete         int64            `json:"complete"`
	CompleteFraction float64          `json:"complete_fraction"`
	ByCompletion     map[string]int64 `json:"by_completion"`
	SlowdownP50      float64          `json:"slowdown_p50"`
	SlowdownP99      float64          `json:"slowdown_p99"`
	// Unfinished names the quantiles (slowdown_p50, slowdown_p99) that fall among the
	// unfinished flows: +Inf, written null.
	Unfinished []string      `json:"unfinished"`
	Reason     string        `json:"reason,omitempty"`
	Rows       []SlowdownRow `json:"rows"`
}

// MarshalJSON writes undefined (NaN) measures as null.
func (s FCTSummary) MarshalJSON() ([]byte, error) {
	type plain FCTSummary
	return marshalNullNaN(plain(s))
}

// NoCompletedFlow is why a slowdown is undefined.
const NoCompletedFlow = "no flow completed"

// MessageSample is what the slowdown needs of one message (messages.arrow, docs/model.md#messages).
type MessageSample struct {
	SizeBytes  int64
	Slowdown   float64 // NaN unless complete with an ideal FCT > 0
	Transport  records.Transport
	Completion records.Completion
}

// FCT summarises the flows' completion for an MTU and a fabric BDP (bytes).
func (ft *FlowTable) FCT(mtu, bdp int64) FCTSummary {
	return fctSummary(len(ft.Flows), func(i int) (fctPoint, records.Completion) {
		fs := &ft.Flows[i]
		return fctPoint{size: fs.SizeBytes, slowdown: fs.Slowdown, transport: fs.Transport, noData: !fs.Data, unfinished: unfinished(fs)}, fs.Completion
	}, mtu, bdp)
}

// MessageFCT summarises the messages' completion as FCT does the flows'
// (docs/analysis.md#flow-completion): the counts (Flows, Complete, ByCompletion, the
// rows' flows and complete) count messages, bucketed by message size.
func MessageFCT(msgs []MessageSample, mtu, bdp int64) FCTSummary {
	return fctSummary(len(msgs), func(i int) (fctPoint, records.Completion) {
		m := &msgs[i]
		return fctPoint{size: m.SizeBytes, slowdown: m.Slowdown, transport: m.Transport, noData: m.SizeBytes == 0,
			unfinished: m.Completion != records.CompletionComplete && m.SizeBytes > 0}, m.Completion
	}, mtu, bdp)
}

// fctSummary is the completion summary of n items (flows or messages) given one at
// a time.
func fctSummary(n int, item func(i int) (fctPoint, records.Completion), mtu, bdp int64) FCTSummary {
	s := FCTSummary{MTUBytes: mtu, BDPBytes: bdp, ByCompletion: map[string]int64{}}
	for c := records.Completion(0); c < records.NumCompletions; c++ {
		s.ByCompletion[c.String()] = 0
	}
	var p fctPoint
	var all [2]float64
	s.Rows, all = slowdownRows(n, func(i int) *fctPoint {
		p, _ = item(i)
		return &p
	}, mtu, bdp)
	for i := range n {
		q, c := item(i)
		if q.noData {
			s.NoDataFlows++
			continue
		}
		s.Flows++
		s.ByCompletion[c.String()]++
		if c == records.CompletionComplete {
			s.Complete++
		}
	}
	s.CompleteFraction, s.Unfinished = math.NaN(), []string{}
	if s.Flows > 0 {
		s.CompleteFraction = float64(s.Complete) / float64(s.Flows)
	}
	s.SlowdownP50, s.SlowdownP99 = all[0], all[1]
	for _, q := range []struct {
		name string
		v    float64
	}{{"slowdown_p50", s.SlowdownP50}, {"slowdown_p99", s.SlowdownP99}} {
		if math.IsInf(q.v, 1) {
			s.Unfinished = append(s.Unfinished, q.name)
		}
	}
	switch {
	case math.IsNaN(s.SlowdownP50):
		s.Reason = NoFlowWithData
	case s.Complete == 0:
		s.Reason = NoCompletedFlow
	}
	return s
}

// UnfinishedWord is how a quantile that falls among the unfinished flows (+Inf) is
// written for people.
const UnfinishedWord = "unfinished"

// NoFlowWithData is why a slowdown is undefined.
const NoFlowWithData = "no flow with data"

// FormatSlowdown formats a slowdown (a ratio >= 1) for people: three significant
// digits, "1.00", "45.9", "312"; "unfinished" for +Inf (a quantile among the
// unfinished flows); "-" when undefined.
func FormatSlowdown(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.IsInf(v, 1):
		return UnfinishedWord
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%#.3g", v)
}
