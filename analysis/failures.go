package analysis

import (
	"math"
	"slices"

	"github.com/tracefabric/tracefabric/records"
)

// EventWindowPs is the window before and after each event over which Failures counts
// the drops and the PFC pauses that began (10 ms of simulated time).
const EventWindowPs = 10_000_000_000

// Failures is what a run's events, PFC watchdog and deadlock detection did
// (docs/analysis.md#failures-and-operations); nil for a run without events, watchdog
// or deadlocks.
type Failures struct {
	// WindowPs is EventWindowPs: DropsBefore counts the drops in [t - WindowPs, t),
	// DropsAfter those in [t, t + WindowPs), and the same for pauses.
	WindowPs int64         `json:"window_ps"`
	Events   []EventImpact `json:"events"`
	// Watchdog is run.json's pfc_watchdog (nil when it was off).
	Watchdog *records.Watchdog `json:"pfc_watchdog"`
	// Deadlocks are run.json's deadlocks (an empty list when none).
	Deadlocks []records.Deadlock `json:"deadlocks"`
}

// EventImpact is one event of run.json's events with the drops and pauses around it.
type EventImpact struct {
	Kind          string `json:"kind"`
	Target        string `json:"target"`
	Cycle         int    `json:"cycle"`
	TimePs        int64  `json:"time_ps"`
	LocalRepairPs int64  `json:"local_repair_ps"`
	ReconvergedPs int64  `json:"reconverged_ps"`
	// FailureDrops are run.json's drops of the failure reasons (link-down, no-route,
	// pfc-watchdog) from this event to the next.
	FailureDrops map[records.DropReason]int64 `json:"failure_drops"`
	// DropsBefore and DropsAfter count every data drop (all reasons) in the window
	// before and after the event; PausesBefore and PausesAfter the PFC pause intervals
	// that began in them.
	DropsBefore  int64 `json:"drops_before"`
	DropsAfter   int64 `json:"drops_after"`
	PausesBefore int64 `json:"pauses_before"`
	PausesAfter  int64 `json:"pauses_after"`
	// SetsChanged, FlowsMoved and BytesRerouted are run.json's.
	SetsChanged   int64 `json:"sets_changed"`
	FlowsMoved    int64 `json:"flows_moved"`
	BytesRerouted int64 `json:"bytes_rerouted"`
	// MostLoaded is the member of the changed sets that carried the most bytes from
	// the event's reconvergence to the next event; MaxMean its bytes over the mean of
	// the live members of its set (0: no set changed, or nothing carried).
	MostLoaded *records.EventMember `json:"most_loaded"`
	MaxMean    float64              `json:"max_mean"`
	// SlowdownBefore and SlowdownAfter are the completion slowdowns of the messages
	// (messages.arrow) that started in the window before and after the event (nil:
	// the run has no messages.arrow).
	SlowdownBefore *WindowSlowdown `json:"slowdown_before"`
	SlowdownAfter  *WindowSlowdown `json:"slowdown_after"`
}

// WindowSlowdown is the completion slowdown (fct_ps / ideal_fct_ps) of the messages
// with data that started (start_ps) in one window: Messages of them, Complete
// completed; P50 and P99 are the empirical quantiles with an unfinished message
// ranked slowest, as the run's slowdown quantiles (docs/analysis.md#flow-completion):
// +Inf when the quantile falls among the unfinished (null in JSON, named in
// Unfinished), NaN (null) without a message.
type WindowSlowdown struct {
	Messages   int64    `json:"messages"`
	Complete   int64    `json:"complete"`
	P50        float64  `json:"slowdown_p50"`
	P99        float64  `json:"slowdown_p99"`
	Unfinished []string `json:"unfinished"`
}

// MarshalJSON writes undefined and unfinished quantiles as null.
func (w WindowSlowdown) MarshalJSON() ([]byte, error) {
	type plain WindowSlowdown
	return marshalNullNaN(plain(w))
}

// slowdownWindows collects the slowdowns of the messages that started in the
// windows before and after each of a sorted list of event times (an unfinished
// message: +Inf).
type slowdownWindows struct {
	times         []int64
	w             int64
	before, after [][]float64
}

func newSlowdownWindows(times []int64, w int64) *slowdownWindows {
	return &slowdownWindows{times: times, w: w, before: make([][]float64, len(times)), after: make([][]float64, len(times))}
}

// add puts a message that started at t with slowdown v in every window holding t.
func (c *slowdownWindows) add(t int64, v float64) {
	if c == nil {
		return
	}
	i, _ := slices.BinarySearch(c.times, t-c.w+1)
	for ; i < len(c.times) && c.times[i] <= t+c.w; i++ {
		if c.times[i] <= t {
			c.after[i] = append(c.after[i], v)
		} else {
			c.before[i] = append(c.before[i], v)
		}
	}
}

// windowSlowdown summarises one window's slowdowns (+Inf: unfinished).
func windowSlowdown(v []float64) *WindowSlowdown {
	slices.Sort(v) // +Inf last
	w := &WindowSlowdown{Messages: int64(len(v)), P50: math.NaN(), P99: math.NaN(), Unfinished: []string{}}
	for _, x := range v {
		if !math.IsInf(x, 1) {
			w.Complete++
		}
	}
	if len(v) == 0 {
		return w
	}
	for _, q := range []struct {
		p    float64
		name string
		to   *float64
	}{{0.5, "slowdown_p50", &w.P50}, {0.99, "slowdown_p99", &w.P99}} {
		// The empirical rule: the ceil(p N)-th smallest of the N.
		*q.to = v[max(int(math.Ceil(q.p*float64(len(v)))), 1)-1]
		if math.IsInf(*q.to, 1) {
			w.Unfinished = append(w.Unfinished, q.name)
		}
	}
	return w
}

// windowCounter counts values (drop or pause start times) in the windows before and
// after each of a sorted list of event times.
type windowCounter struct {
	times         []int64
	w             int64
	before, after []int64
}

func newWindowCounter(times []int64, w int64) *windowCounter {
	return &windowCounter{times: times, w: w, before: make([]int64, len(times)), after: make([]int64, len(times))}
}

// add counts time t in every window that holds it (O(log events + windows holding it)).
func (c *windowCounter) add(t int64) {
	if c == nil {
		return
	}
	// Events at times in (t - w, t] have t in their after window; in (t, t + w] their
	// before window.
	i, _ := slices.BinarySearch(c.times, t-c.w+1)
	for ; i < len(c.times) && c.times[i] <= t+c.w; i++ {
		if c.times[i] <= t {
			c.after[i]++
		} else {
			c.before[i]++
		}
	}
}

// eventTimes returns the times of run.json's events (they are in time order).
func eventTimes(meta *records.Run) []int64 {
	if meta == nil || len(meta.Events) == 0 {
		return nil
	}
	out := make([]int64, len(meta.Events))
	for i, e := range meta.Events {
		out[i] = e.TimePs
	}
	return out
}

// failures builds the Failures of a run from run.json and the window counts.
func failures(meta *records.Run, drops *windowCounter, slow *slowdownWindows, ivs []PauseInterval) *Failures {
	if meta == nil || (len(meta.Events) == 0 && meta.PfcWatchdog == nil && len(meta.Deadlocks) == 0) {
		return nil
	}
	f := &Failures{WindowPs: EventWindowPs, Events: []EventImpact{}, Watchdog: meta.PfcWatchdog, Deadlocks: meta.Deadlocks}
	if f.Deadlocks == nil {
		f.Deadlocks = []records.Deadlock{}
	}
	pauses := newWindowCounter(eventTimes(meta), EventWindowPs)
	for _, iv := range ivs {
		pauses.add(iv.StartPs)
	}
	for i, e := range meta.Events {
		ei := EventImpact{Kind: e.Kind, Target: e.Target, Cycle: e.Cycle, TimePs: e.TimePs, LocalRepairPs: e.LocalRepairPs,
			ReconvergedPs: e.ReconvergedPs, FailureDrops: e.Dropped, SetsChanged: e.SetsChanged, FlowsMoved: e.FlowsMoved,
			BytesRerouted: e.BytesRerouted, PausesBefore: pauses.before[i], PausesAfter: pauses.after[i]}
		if drops != nil && i < len(drops.before) {
			ei.DropsBefore, ei.DropsAfter = drops.before[i], drops.after[i]
		}
		if slow != nil && i < len(slow.before) {
			ei.SlowdownBefore, ei.SlowdownAfter = windowSlowdown(slow.before[i]), windowSlowdown(slow.after[i])
		}
		if a := e.After; a != nil && a.MostLoaded != nil {
			m := *a.MostLoaded
			ei.MostLoaded = &m
			for _, s := range a.Sets {
				if s.Node != m.Node || s.Set != m.Set {
					continue
				}
				var sum, n int64
				for _, x := range s.Members {
					if x.Live {
						sum += x.Bytes
						n++
					}
				}
				if sum > 0 {
					ei.MaxMean = float64(m.Bytes) / (float64(sum) / float64(n))
				}
			}
		}
		f.Events = append(f.Events, ei)
	}
	return f
}
