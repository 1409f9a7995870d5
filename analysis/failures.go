package analysis

import (
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
func failures(meta *records.Run, drops *windowCounter, ivs []PauseInterval) *Failures {
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
