package analysis

import "math"

// EventImbalance compares the runs' imbalance after one event
// (docs/analysis.md#failures-and-operations): per tier, the byte max/mean over the
// live members of each set of the flows that started (first_ps) from the event's
// reconvergence to the next event (or the end of the run), averaged over the tier's
// sets weighted by their bytes as the tier imbalance is, with its 95% BCa interval
// over flows; Best is the lowest per metric, tested against the runner-up with the
// paired bootstrap as the comparison's metrics are. A flow counts at the members it
// took (its first packet's), which after the reconvergence are those of the sets the
// event left; a member the event left not live (run.json events[].after) is left
// out of its set. Sets are not judged by flows per member (the window holds few
// flows): read the interval.
type EventImbalance struct {
	Event  int    `json:"event"` // index in run.json events
	Kind   string `json:"kind"`
	Target string `json:"target"`
	TimePs int64  `json:"time_ps"`
	// FromPs and ToPs bound the flows' first packets (the first run's; every run's
	// events are at the same times, reconvergences too unless routing differs).
	FromPs   int64                          `json:"from_ps"`
	ToPs     int64                          `json:"to_ps"`
	Flows    map[string]int                 `json:"flows"` // per method: flows in the window
	Metrics  []string                       `json:"metrics"`
	ByMethod map[string]map[string]Estimate `json:"by_method"`
	Best     map[string]Best                `json:"best"`
}

// AfterMetric is the metric name of a tier's byte max/mean after an event.
func AfterMetric(tier Role) string { return "after." + string(tier) + ".max_mean" }

// afterWindow returns the flows' window after event k of r: from its reconvergence
// (its time when it changed no route) to the next event or the end; ok is false
// when the event changed no set.
func afterWindow(r *Run, k int) (from, to int64, ok bool) {
	e := &r.Events[k]
	if e.After == nil {
		return 0, 0, false
	}
	from, to = e.ReconvergedPs, r.Info.SimPs+1
	if from < 0 {
		from = e.TimePs
	}
	if k+1 < len(r.Events) {
		to = r.Events[k+1].TimePs
	}
	return from, to, true
}

// deadCells returns the cells of the members event k left not live.
func deadCells(r *Run, k int) map[int32]bool {
	dead := map[int32]bool{}
	a := r.Events[k].After
	if a == nil {
		return dead
	}
	for _, s := range a.Sets {
		for _, d := range r.Flows.Sets {
			if r.Nodes.Name(d.Node) != s.Node || d.Set != int(s.Set) {
				continue
			}
			for _, m := range s.Members {
				if !m.Live && int(m.Member) < d.Members {
					dead[int32(d.Offset)+m.Member] = true
				}
			}
		}
	}
	return dead
}

// AfterStat returns the bootstrap statistic of EventImbalance: out[t] is tier t's
// byte max/mean, over the live members, of the flows whose first packet is in
// [from, to), each counted w times (NaN when the tier's sets carried none of them).
func (ft *FlowTable) AfterStat(tiers []Role, from, to int64, dead map[int32]bool) func() func(w, out []float64) {
	tierIdx := map[Role]int{}
	for i, t := range tiers {
		tierIdx[t] = i
	}
	var kept []int32
	for i := range ft.Flows {
		if f := &ft.Flows[i]; f.FirstPs >= from && f.FirstPs < to {
			kept = append(kept, int32(i))
		}
	}
	type liveSet struct {
		tier   int
		cells  []int32
		shares []float64 // of the live members, renormalized; nil: equal
	}
	var sets []liveSet
	for _, s := range ft.Sets {
		t, ok := tierIdx[s.role()]
		if !ok {
			continue
		}
		ls := liveSet{tier: t}
		var sum float64
		for m := range s.Members {
			c := int32(s.Offset + m)
			if dead[c] {
				continue
			}
			ls.cells = append(ls.cells, c)
			if s.Shares != nil {
				ls.shares = append(ls.shares, s.Shares[m])
				sum += s.Shares[m]
			}
		}
		for i := range ls.shares {
			ls.shares[i] /= sum
		}
		if len(ls.cells) > 0 {
			sets = append(sets, ls)
		}
	}
	cells := ft.cells()
	return func() func(w, out []float64) {
		bytes := make([]float64, cells)
		loads := make([]float64, 0, 16)
		bb := make([][]Balance, len(tiers))
		return func(w, out []float64) {
			clear(bytes)
			for _, i := range kept {
				f := &ft.Flows[i]
				b := w[i] * frameEstimate(f)
				if f.RackCell >= 0 {
					bytes[f.RackCell] += b
				}
				if f.FabricCell >= 0 {
					bytes[f.FabricCell] += b
				}
			}
			for t := range bb {
				bb[t] = bb[t][:0]
			}
			for _, s := range sets {
				loads = loads[:0]
				for _, c := range s.cells {
					loads = append(loads, bytes[c])
				}
				bb[s.tier] = append(bb[s.tier], ImbalanceWeighted(loads, s.shares))
			}
			for t := range tiers {
				out[t] = math.NaN()
				if ts := SummarizeTier(bb[t], nil); ts.Sets > 0 {
					out[t] = ts.MaxMean
				}
			}
		}
	}
}

// sameEvents reports whether every run has the first run's events (kinds, targets,
// times).
func sameEvents(runs []*Run) bool {
	if len(runs[0].Events) == 0 {
		return false
	}
	for _, r := range runs[1:] {
		if len(r.Events) != len(runs[0].Events) {
			return false
		}
		for k, e := range r.Events {
			e0 := runs[0].Events[k]
			if e.Kind != e0.Kind || e.Target != e0.Target || e.TimePs != e0.TimePs {
				return false
			}
		}
	}
	return true
}

// eventImbalances compares the runs after each event that changed sets (nil when the
// runs have no events or not the same).
func (c *Comparison) eventImbalances(runs []*Run, tiers []Role, opt Options) []EventImbalance {
	if !sameEvents(runs) {
		return nil
	}
	var out []EventImbalance
	for k, e := range runs[0].Events {
		from, to, ok := afterWindow(runs[0], k)
		if !ok {
			continue
		}
		ei := EventImbalance{Event: k, Kind: e.Kind, Target: e.Target, TimePs: e.TimePs, FromPs: from, ToPs: to,
			Flows: map[string]int{}, ByMethod: map[string]map[string]Estimate{}, Best: map[string]Best{}}
		for _, t := range tiers {
			ei.Metrics = append(ei.Metrics, AfterMetric(t))
		}
		reps := map[string]*Replicates{}
		for i, r := range runs {
			name := c.Methods[i]
			f, t, ok := afterWindow(r, k)
			if !ok {
				f, t = from, to
			}
			stat := r.Flows.AfterStat(tiers, f, t, deadCells(r, k))
			n := 0
			for j := range r.Flows.Flows {
				if fl := &r.Flows.Flows[j]; fl.FirstPs >= f && fl.FirstPs < t {
					n++
				}
			}
			ei.Flows[name] = n
			rep := Bootstrap{B: opt.Bootstrap, Seed: opt.Seed}.RunReplicates(len(r.Flows.Flows), len(tiers), stat)
			reps[name] = rep
			m := map[string]Estimate{}
			for j, est := range rep.Estimates() {
				if !est.Defined() {
					est.Reason = "no flow that started after the event crossed the tier"
				}
				m[ei.Metrics[j]] = est
			}
			ei.ByMethod[name] = m
		}
		for j, metric := range ei.Metrics {
			ei.Best[metric] = lowestAfter(c.Methods, ei.ByMethod, reps, metric, j)
		}
		out = append(out, ei)
	}
	return out
}

// lowestAfter is Best for an after-event metric: the lowest defined value, a tie
// when two share it, the paired bootstrap difference with the runner-up, significant
// when its interval excludes 0 and practical when at least PracticalThreshold.
func lowestAfter(methods []string, by map[string]map[string]Estimate, reps map[string]*Replicates, metric string, k int) Best {
	b := Best{Ranked: true, Value: math.NaN(), Difference: Estimate{Value: math.NaN()}}
	var best, runner string
	for _, m := range methods {
		v := by[m][metric]
		if !v.Defined() {
			continue
		}
		switch {
		case best == "" || v.Value < by[best][metric].Value:
			best, runner = m, best
		case runner == "" || v.Value < by[runner][metric].Value:
			runner = m
		}
	}
	if best == "" {
		return b
	}
	b.Value = by[best][metric].Value
	if runner != "" && by[runner][metric].Value == b.Value {
		b.Tie = true
		for _, m := range methods {
			if v := by[m][metric]; v.Defined() && v.Value == b.Value {
				b.Tied = append(b.Tied, m)
			}
		}
		return b
	}
	b.Method = best
	if runner == "" {
		return b
	}
	b.RunnerUp = runner
	b.Difference = reps[best].Difference(reps[runner], k)
	b.Significant = b.Difference.HasCI && b.Difference.Hi < 0
	b.Threshold, _ = PracticalThreshold(metric, by[runner][metric].Value)
	b.Practical = math.Abs(b.Difference.Value) >= b.Threshold
	b.Clear = b.Significant && b.Practical
	return b
}
