package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tracefabric/tracefabric/ingest"
	"github.com/tracefabric/tracefabric/internal/atomicfile"
	"github.com/tracefabric/tracefabric/records"
	"github.com/tracefabric/tracefabric/replay"
)

// Options configure a sweep's run.
type Options struct {
	// Run is the template of every point's replay options: traces, host mapping,
	// window, drain, ... (Config and Speedup come from each point; Progress is
	// not used).
	Run replay.Options
	// Dir is the sweep directory: sweep.json and the points' run directories.
	Dir string
	// Jobs is how many points run at once (default 1).
	Jobs int
	// Index and Of select the points k with k mod Of == Index (Of 0: all points).
	Index, Of int
	// Cache is the memory the decoded trace may take, all topologies together: the
	// points then replay it from memory (replay.Options.Cache, one copy per topology)
	// instead of each decoding the capture again on a goroutine of its own. 0, or a
	// trace that does not fit: no cache.
	Cache int64
	// Ready, when set, is called once everything is checked and prepared, before
	// the first point runs: with the points about to run and those already done.
	Ready func(todo, done []*Point, cached int64)
	// Event, when set, is told when a point starts, finishes or fails (from the
	// worker goroutines, one call at a time).
	Event func(Event)
}

// Event reports a point of a running sweep.
type Event struct {
	Point *Point
	Done  bool          // false: the point starts
	Run   *records.Run  // when done without error
	Err   error         // when it failed
	Took  time.Duration // when done or failed
}

// Result is what Run did.
type Result struct {
	// Sweep is sweep.json as written at the end (every point's status).
	Sweep *records.Sweep
	// Mine are the points this process was given (Index, Of); Skipped those of them
	// already done before it started, Ran those it completed.
	Mine, Skipped, Ran []*Point
	// Took is the wall time of the points' runs.
	Took time.Duration
	// Cached is the memory the trace cache took (0: the points read the capture).
	Cached int64
}

// Run runs the points of the plan that Index/Of select and are not done yet into
// opt.Dir/p%04d, opt.Jobs at a time, writes opt.Dir/sweep.json at the start (or
// checks that the one there describes this sweep) and again at the end with each
// point's status. Each point's run directory appears only when complete, so an
// interrupted sweep (opt.Run.Context cancelled) leaves its completed points and
// resumes where it stopped; a sweep directory this call created and left without
// a completed point is removed. Points are prepared once per topology and transport
// mode (replay.Prepared.Derive), and a point's records depend only on its settings
// and the trace: byte-identical whichever process runs it.
func Run(pl *Plan, opt Options) (*Result, error) {
	if opt.Jobs < 1 {
		opt.Jobs = 1
	}
	if opt.Of == 0 {
		opt.Index, opt.Of = 0, 1
	}
	if opt.Of < 1 || opt.Index < 0 || opt.Index >= opt.Of {
		return nil, inputErrf("--index %d --of %d: want 0 <= index < of", opt.Index, opt.Of)
	}
	ctx := opt.Run.Context
	if ctx == nil {
		ctx = context.Background()
	}
	var err error
	opt.Run.Traces, err = absPaths(opt.Run.Traces)
	if err != nil {
		return nil, err
	}
	res := &Result{}
	for _, p := range pl.Points {
		if p.ID%opt.Of == opt.Index {
			res.Mine = append(res.Mine, p)
		}
	}
	created, err := sweepDir(opt.Dir)
	if err != nil {
		return nil, err
	}
	// A sweep directory this process created is removed again when no point
	// completed in it, unless other processes may share it (--of > 1).
	created = created && opt.Of == 1
	cleanup := func() {
		if created {
			removeEmptySweep(opt.Dir)
		}
	}
	// What is done already (a resumed sweep, or points another process ran).
	def := pl.definition(opt)
	def.Scan(opt.Dir)
	var todo []*Point
	for _, p := range res.Mine {
		if def.Points[p.ID].Status == records.StatusDone {
			res.Skipped = append(res.Skipped, p)
		} else {
			todo = append(todo, p)
		}
	}
	// Prepare the groups the remaining points need (one trace summary at least, for
	// sweep.json): trace and host-mapping errors stop the sweep before any point runs.
	prepared := map[string]*replay.Prepared{}
	need := todo
	if len(need) == 0 {
		if _, err := os.Stat(filepath.Join(opt.Dir, records.SweepFile)); err != nil {
			need = pl.Points[:1]
		}
	}
	var summary *ingest.Summary
	budget := opt.Cache
	// The points each preparation serves: more than one keeps the trace in memory
	// (replay.Options.KeepsTrace).
	runs := map[string]int{}
	for _, p := range todo {
		runs[groupKey(p)]++
	}
	for _, p := range need {
		key := groupKey(p)
		if prepared[key] != nil {
			continue
		}
		o := opt.Run
		o.Config, o.Speedup, o.Progress, o.Cache, o.Runs = p.Config, p.Speedup, nil, budget, runs[key]
		if budget <= 0 || len(todo) == 0 {
			o.Cache = replay.NoCache
		}
		pr, err := replay.Prepare(o)
		if err != nil {
			cleanup()
			return nil, fmt.Errorf("%s: %w", pl.Label(p), err)
		}
		if pr.Cached() {
			budget -= pr.CacheBytes()
			res.Cached += pr.CacheBytes()
		}
		prepared[key] = pr
		summary = pr.Summary
	}
	if err := pl.writeStart(opt.Dir, def, summary); err != nil {
		cleanup()
		return nil, err
	}
	if opt.Ready != nil {
		opt.Ready(todo, res.Skipped, res.Cached)
	}

	start := time.Now()
	var (
		mu   sync.Mutex
		next int
		errs []error
		// failed holds the reason of each point that failed here, for sweep.json.
		failed = map[int]string{}
		wg     sync.WaitGroup
	)
	event := func(e Event) {
		if opt.Event != nil {
			opt.Event(e)
		}
	}
	for range min(opt.Jobs, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next >= len(todo) || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				p := todo[next]
				next++
				event(Event{Point: p})
				mu.Unlock()
				t0 := time.Now()
				run, err := runPoint(prepared[groupKey(p)], p, opt.Dir)
				took := time.Since(t0)
				mu.Lock()
				if err != nil {
					if ctx.Err() == nil {
						failed[p.ID] = err.Error()
						err = fmt.Errorf("%s: %w", pl.Label(p), err)
						errs = append(errs, err)
					}
				} else {
					res.Ran = append(res.Ran, p)
				}
				event(Event{Point: p, Done: true, Run: run, Err: err, Took: took})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.Took = time.Since(start)
	slices.SortFunc(res.Ran, func(a, b *Point) int { return a.ID - b.ID })

	var werr error
	res.Sweep, werr = pl.writeEnd(opt.Dir, def, failed)
	if created && res.Sweep != nil && res.Sweep.Counts[records.StatusDone] == 0 && ctx.Err() != nil {
		removeEmptySweep(opt.Dir)
	}
	if err := ctx.Err(); err != nil {
		return res, context.Cause(ctx)
	}
	if len(errs) > 0 {
		slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) }) // p0001 before p0003
		if len(errs) > 1 {
			return res, fmt.Errorf("%d points failed (sweep.json and replay sweep --status %s give each reason); the first: %w", len(errs), opt.Dir, errs[0])
		}
		return res, errs[0]
	}
	return res, werr
}

// runPoint replays one point into dir/p%04d.
func runPoint(pr *replay.Prepared, p *Point, dir string) (*records.Run, error) {
	d, err := pr.DeriveLoad(p.Config, p.Speedup, p.Replicate, p.TargetLoad)
	if err != nil {
		return nil, err
	}
	run, err := d.Run(filepath.Join(dir, p.Dir()), "")
	// What the point left (its network, flow state, writers) is garbage now: collect
	// it before the next point, whose heap would otherwise grow over it (a sweep of
	// many points then keeps the memory of one replay per worker).
	debug.FreeOSMemory()
	return run, err
}

// definition is sweep.json without the trace summary, as the plan and the options
// describe it.
func (pl *Plan) definition(opt Options) *records.Sweep {
	o := opt.Run
	o.Speedup = 0
	s := &records.Sweep{SchemaVersion: records.SweepSchemaVersion, Version: opt.Run.Version, Options: o.RunOptions(),
		Base: records.SweepBase{Config: pl.File.Config, Set: append([]string{}, pl.File.Set...)}, Axes: pl.File.Axes}
	if s.Axes == nil {
		s.Axes = []records.SweepAxis{}
	}
	if pl.File.Path != "" {
		s.File, _ = filepath.Abs(pl.File.Path)
	}
	if s.Base.Config != "" {
		s.Base.Config, _ = filepath.Abs(s.Base.Config)
	}
	for _, p := range pl.Points {
		s.Points = append(s.Points, records.SweepPoint{ID: p.ID, Dir: p.Dir(), Values: p.Values, Speedup: p.Speedup,
			Replicate: p.Replicate, TargetLoad: p.TargetLoad,
			ConfigSHA256: p.ConfigSHA256, Status: records.StatusMissing})
	}
	return s
}

// writeStart writes dir/sweep.json when there is none, or checks that the one there
// describes the same sweep (another process of it wrote it, or this is a resumed
// sweep), under the directory's lock.
func (pl *Plan) writeStart(dir string, def *records.Sweep, summary *ingest.Summary) error {
	unlock, err := lock(dir)
	if err != nil {
		return err
	}
	defer unlock()
	old, err := records.ReadSweep(dir)
	if err == nil {
		if why := differs(old, def); why != "" {
			return inputErrf("%s: %s describes another sweep (%s): choose another -o, or remove the directory", dir, records.SweepFile, why)
		}
		def.Trace = old.Trace
		return nil
	}
	if !errors.Is(err, records.ErrNotSweepDir) || fileExists(filepath.Join(dir, records.SweepFile)) {
		return inputErrf("%w", err)
	}
	if summary == nil {
		return fmt.Errorf("sweep: no trace summary for %s", records.SweepFile)
	}
	if def.Trace, err = json.Marshal(summary); err != nil {
		return err
	}
	def.Scan(dir)
	return records.WriteSweep(dir, def)
}

// writeEnd scans every point's run directory and writes sweep.json with their
// statuses, under the lock: whichever process of a distributed sweep finishes last
// sees every other's completed points. The points this process failed (failed: id
// -> reason) are marked failed (records.StatusFailed); those other processes marked
// failed stay so (Scan).
func (pl *Plan) writeEnd(dir string, def *records.Sweep, failed map[int]string) (*records.Sweep, error) {
	unlock, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	s, err := records.ReadSweep(dir)
	if err != nil {
		return nil, err
	}
	if why := differs(s, def); why != "" {
		return nil, inputErrf("%s: %s was replaced by another sweep's (%s) while this one ran", dir, records.SweepFile, why)
	}
	s.Scan(dir)
	for _, id := range slices.Sorted(maps.Keys(failed)) {
		s.Fail(id, failed[id])
	}
	return s, records.WriteSweep(dir, s)
}

// differs says what differs between two sweep.json definitions ("" when they
// describe the same sweep): statuses and the trace summary aside.
func differs(a, b *records.Sweep) string {
	eq := func(x, y any) bool {
		bx, _ := json.Marshal(x)
		by, _ := json.Marshal(y)
		return bytes.Equal(bx, by)
	}
	type point struct {
		Values  []string
		Speedup float64
		SHA     string
	}
	points := func(s *records.Sweep) []point {
		out := make([]point, len(s.Points))
		for i, p := range s.Points {
			out[i] = point{p.Values, p.Speedup, p.ConfigSHA256}
		}
		return out
	}
	switch {
	case !eq(a.Axes, b.Axes):
		return "other axes"
	case len(a.Points) != len(b.Points):
		return fmt.Sprintf("%d points, not %d", len(a.Points), len(b.Points))
	case !eq(a.Base, b.Base) || !eq(points(a), points(b)):
		return "other point configurations"
	case !eq(a.Options, b.Options):
		return "other traces or run options"
	}
	return ""
}

// sweepDir creates dir when absent (created reports it) and refuses a directory
// that holds anything but a sweep's files (sweep.json, its lock and temporary
// files, point run directories and their partial directories, an analysis): other
// processes of a distributed sweep may be writing into it at the same time.
func sweepDir(dir string) (created bool, err error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, inputErrf("-o %s: %w", dir, err)
		}
		return true, nil
	case err != nil:
		return false, inputErrf("-o %s: %w", dir, err)
	case !fi.IsDir():
		return false, inputErrf("-o %s: exists and is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, inputErrf("-o %s: %w", dir, err)
	}
	for _, e := range entries {
		if !sweepEntry(e.Name()) {
			return false, inputErrf("-o %s: not a sweep directory (it holds %q); choose another -o", dir, e.Name())
		}
	}
	return false, nil
}

// pointName matches the run directory names of points.
var pointName = regexp.MustCompile(`^p[0-9]{4,}$`)

// sweepEntry reports whether name belongs in a sweep directory.
func sweepEntry(name string) bool {
	if p, ok := atomicfile.ParsePartial(name); ok {
		name = p.Final
		if p.Hidden {
			return name == records.AnalysisDir
		}
	}
	return name == records.SweepFile || name == lockFile || strings.HasPrefix(name, "."+records.SweepFile+".tmp-") ||
		name == records.AnalysisDir || pointName.MatchString(name)
}

// removeEmptySweep removes a sweep directory that holds no point's run: sweep.json,
// the lock, and the directory when nothing else is left.
func removeEmptySweep(dir string) {
	os.Remove(filepath.Join(dir, records.SweepFile))
	os.Remove(filepath.Join(dir, lockFile))
	os.Remove(dir)
}

// lockFile serializes sweep.json's updates between the processes of a sweep.
const lockFile = ".sweep.lock"

// lock takes dir's lock (flock; on a shared file system it needs the file system's
// lock support, as NFSv4 and CephFS provide).
func lock(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, inputErrf("-o %s: %w", dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: lock: %w", f.Name(), err)
	}
	return func() {
		unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func absPaths(paths []string) ([]string, error) {
	out := make([]string, len(paths))
	for i, p := range paths {
		if p == ingest.StdinPath {
			return nil, inputErrf(`a sweep reads its traces many times, from every process: give files, not "-"`)
		}
		a, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}
