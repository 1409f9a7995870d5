package replay

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/ingest/filter"
	"github.com/tracefabric/tracefabric/internal/ipaddr"
	"github.com/tracefabric/tracefabric/internal/units"
	"github.com/tracefabric/tracefabric/records"
)

// Idle gaps (--max-idle, docs/model.md#injection): a capture may hold long stretches
// with no packet at all (a capture left running overnight, a merge of captures taken
// on different days). With MaxIdle set, every gap between two consecutive replayed
// packets of the merged capture (and between the replay's time zero and the first
// one) longer than MaxIdle is shortened to MaxIdle; packets keep their spacing
// otherwise. A packet's injection time is then (t - t0 - removed) / speedup, where
// removed is the time taken out of the gaps before it.

// IdleStats is what --max-idle took out of a capture's timeline (run.json
// trace.idle_gaps).
type IdleStats struct {
	MaxIdle   time.Duration // the --max-idle limit; 0: gaps are kept
	Gaps      int64         // gaps longer than MaxIdle, each shortened to MaxIdle
	RemovedNs int64         // capture time removed from them in all, ns
}

func (s IdleStats) json() map[string]any {
	return map[string]any{"max_idle_s": s.MaxIdle.Seconds(), "shortened": s.Gaps, "removed_s": float64(s.RemovedNs) / 1e9}
}

// idleClock maps capture timestamps to offsets from the replay's time zero with the
// idle gaps shortened; it is called with the replayed packets in trace order and
// allocates nothing.
type idleClock struct {
	t0, max int64 // max <= 0: gaps are kept
	prev    int64 // the latest timestamp so far
	removed int64
	gaps    int64
}

func newIdleClock(t0 int64, maxIdle time.Duration) idleClock {
	return idleClock{t0: t0, max: int64(maxIdle), prev: t0}
}

// offset returns ts - t0 less the idle time removed up to ts. A timestamp earlier
// than one before it (reordering off: timestamps going backwards across interfaces)
// is taken as the latest so far: replay time never goes backwards.
func (c *idleClock) offset(ts int64) int64 {
	if ts <= c.prev {
		return c.prev - c.t0 - c.removed
	}
	if gap := ts - c.prev; c.max > 0 && gap > c.max {
		c.removed += gap - c.max
		c.gaps++
	}
	c.prev = ts
	return ts - c.t0 - c.removed
}

// interrupted reports whether err is the end of the run's context (an interrupt).
func interrupted(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// runOptions is run.json's record of the options (defaults filled in, paths made
// absolute; LB and Hash, from the configuration, left to the caller).
func (o *Options) runOptions() records.RunOptions {
	in := records.RunOptions{Hosts: o.Hosts, RackPrefix: o.RackPrefix, RackPrefix6: o.RackPrefix6, Family: o.Family.String(),
		Speedup: o.Speedup, Oversize: o.Oversize,
		ReorderWindowNs: int64(o.ReorderWindow), WindowStartNs: o.Window.Start, WindowAbsolute: o.Window.Absolute,
		WindowNs: o.Window.Duration, MaxIdleNs: int64(o.MaxIdle), MaxDrainPs: int64(o.MaxDrain),
		ReplicateJitterNs: int64(o.ReplicateJitter), TargetLoad: o.TargetLoad}
	if len(o.Replicate) > 1 || len(o.Replicate) == 1 && o.Replicate[0] > 1 {
		in.Replicate = o.Replicate
	}
	for _, t := range o.Traces {
		in.Traces = append(in.Traces, absPath(t))
	}
	if o.Filter != nil {
		in.Filter = o.Filter.String()
	}
	if in.Oversize == "" {
		in.Oversize = OversizeSplit
	}
	if in.MaxDrainPs == 0 {
		in.MaxDrainPs = int64(DefaultMaxDrain)
	}
	switch in.Hosts {
	case "":
		in.Hosts = MapSubnet
	case MapSubnet, MapHash, MapSpread:
	default:
		in.Hosts = absPath(in.Hosts)
	}
	if in.Hosts == MapSubnet {
		if in.RackPrefix == 0 {
			in.RackPrefix = DefaultRackPrefix
		}
		if in.RackPrefix6 == 0 {
			in.RackPrefix6 = DefaultRackPrefix6
		}
	}
	return in
}

// OptionsFromRun returns the Options that prepare the replay run.json's options
// describe (Config, Version, Command and the callbacks left for the caller). The
// error (an input error) is a recorded filter that no longer parses.
func OptionsFromRun(in *records.RunOptions) (Options, error) {
	fam, _ := ipaddr.ParseFamily(in.Family) // "" (runs before IPv6) and "all": both families
	o := Options{Traces: in.Traces, Hosts: in.Hosts, RackPrefix: in.RackPrefix, RackPrefix6: in.RackPrefix6, Family: fam, Speedup: in.Speedup,
		Oversize: in.Oversize, ReorderWindow: time.Duration(in.ReorderWindowNs),
		Window:  ingest.Window{Start: in.WindowStartNs, Absolute: in.WindowAbsolute, Duration: in.WindowNs},
		MaxIdle: time.Duration(in.MaxIdleNs), MaxDrain: units.Time(in.MaxDrainPs),
		Replicate: in.Replicate, ReplicateJitter: time.Duration(in.ReplicateJitterNs), TargetLoad: in.TargetLoad}
	if in.Filter != "" {
		f, err := filter.Parse(in.Filter)
		if err != nil {
			return o, inputErrf("run.json options.filter %q: %w", in.Filter, err)
		}
		o.Filter = f
	}
	return o, nil
}

func absPath(p string) string {
	if p == ingest.StdinPath {
		return p
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
