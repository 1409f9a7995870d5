package analysis

import (
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
// by its bucket "all".
func FCTSlowdown(flows []FlowFCT, mtu, bdp int64) []SlowdownRow {
	buckets := FCTBuckets(mtu, bdp)
	all := FCTBucket{Name: "all", LoByte: 0, HiByte: -1}
	present := map[records.Transport]bool{}
	for _, f := range flows {
		present[f.Transport] = true
	}
	var out []SlowdownRow
	emit := func(name string, keep func(*FlowFCT) bool) {
		for _, b := range append(buckets, all) {
			row := SlowdownRow{Transport: name, FCTBucket: b}
			var s []float64
			for i := range flows {
				f := &flows[i]
				if !keep(f) || f.SizeBytes < b.LoByte || b.HiByte >= 0 && f.SizeBytes >= b.HiByte {
					continue
				}
				row.Flows++
				if f.Complete && f.IdealFctPs > 0 {
					row.Complete++
					s = append(s, float64(f.FctPs)/float64(f.IdealFctPs))
				}
			}
			if len(s) > 0 {
				slices.Sort(s)
				q := func(p float64) *float64 { v := stat.Quantile(p, stat.Empirical, s, nil); return &v }
				row.P50, row.P95, row.P99 = q(0.5), q(0.95), q(0.99)
				m := s[len(s)-1]
				row.Max = &m
			}
			out = append(out, row)
		}
	}
	if len(present) > 1 {
		for t := records.Transport(0); t < records.NumTransports; t++ {
			if present[t] {
				emit(t.String(), func(f *FlowFCT) bool { return f.Transport == t })
			}
		}
	}
	emit("all", func(*FlowFCT) bool { return true })
	return out
}
