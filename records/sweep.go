package records

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/tracefabric/tracefabric/internal/atomicfile"
)

// SweepFile is the name of a sweep directory's description, beside the point run
// directories p0000, p0001, ... that `replay sweep` writes (docs/sweeps.md).
const SweepFile = "sweep.json"

// SweepSchemaVersion is the version of sweep.json's layout.
const SweepSchemaVersion = 1

// ErrNotSweepDir: a directory without a sweep.json of ours.
var ErrNotSweepDir = errors.New("not a tracefabric sweep directory")

// Sweep is sweep.json: one trace replayed over a grid of settings. Axes list the
// settings that vary, in the order that numbers the points (the last axis varies
// fastest); every point is a normal run directory, Dir, under the sweep directory.
type Sweep struct {
	SchemaVersion int    `json:"schema_version"`
	Version       string `json:"version"` // tracefabric version that wrote the file
	// File is the sweep file (absolute path) the grid came from.
	File string `json:"sweep_file"`
	// Options are the run options every point shares (run.json "options": traces,
	// host mapping, window, ...); speedup, lb and hash are left empty here: they may
	// be axes, and each point's run.json has its own.
	Options *RunOptions `json:"options"`
	// Base is the configuration every point starts from.
	Base SweepBase `json:"base"`
	// Axes are the settings that vary, in point-numbering order.
	Axes []SweepAxis `json:"axes"`
	// Points are the grid's points in order; Points[k].ID == k.
	Points []SweepPoint `json:"points"`
	// Trace is the trace summary, as `replay inspect --json` prints it.
	Trace json.RawMessage `json:"trace"`
	// Complete is true once every point's run directory is complete (Status done).
	Complete bool `json:"complete"`
	// Counts counts the points by status, as of the last scan.
	Counts map[PointStatus]int `json:"status"`
}

// SweepBase is the configuration every point of a sweep starts from: a configuration
// file and overrides, before the point's own settings.
type SweepBase struct {
	Config string   `json:"config,omitempty"` // configuration file, absolute path ("" = defaults)
	Set    []string `json:"set"`              // "Attr=Value" overrides, in order
}

// Axis kinds: a categorical axis, or a numeric one whose values SweepAxis.Numeric
// gives in base units (Number: as written).
const (
	KindCategory = "category"
	KindNumber   = "number"
	KindBytes    = "bytes"    // bytes
	KindTime     = "time"     // picoseconds
	KindRate     = "rate"     // bits per second
	KindFraction = "fraction" // a fraction in [0, 1] ("40%" is 0.4)
)

// SweepAxis is one axis of a sweep.
type SweepAxis struct {
	// Name is the axis as the sweep file names it: hash, lb, transport, speedup, or
	// a configuration attribute as written under set (e.g. Switch.BufferSize).
	Name string `json:"name"`
	// Attribute is the configuration attribute the axis sets, as a full path
	// (Switch.EcmpHashMethod, Switch.LoadBalancingMethod, Transport.Mode,
	// Switch.BufferSize); "" for speedup, which is not an attribute.
	Attribute string `json:"attribute"`
	// Values are the axis's values as written (hash: [all] expanded to the six
	// methods).
	Values []string `json:"values"`
	// Kind is KindCategory or a numeric kind.
	Kind string `json:"kind"`
	// Numeric holds each value in the kind's base unit; nil for a category.
	Numeric []float64 `json:"numeric,omitempty"`
}

// IsNumeric reports whether the axis's values are numbers (Numeric is set).
func (a *SweepAxis) IsNumeric() bool {
	return a.Kind != KindCategory && len(a.Numeric) == len(a.Values)
}

// SweepPoint is one point of the grid.
type SweepPoint struct {
	ID  int    `json:"id"`
	Dir string `json:"dir"` // its run directory, relative to the sweep directory: PointDir(ID)
	// Values holds the point's value of each axis (Values[i] is one of Axes[i].Values).
	Values []string `json:"values"`
	// Speedup is the point's --speedup (with TargetLoad, the run finds its own).
	Speedup float64 `json:"speedup"`
	// Replicate and TargetLoad are the point's --replicate and --target-load (percent),
	// absent without those axes.
	Replicate  []int   `json:"replicate,omitempty"`
	TargetLoad float64 `json:"target_load,omitempty"`
	// ConfigSHA256 is the SHA-256 of the point's effective configuration as compact
	// JSON (run.json "config", compacted): a run directory holds this point's run
	// only when they match.
	ConfigSHA256 string `json:"config_sha256"`
	// Status is what the last scan found (PointStatus); Detail says why a point is
	// not done.
	Status PointStatus `json:"status"`
	Detail string      `json:"detail,omitempty"`
}

// PointStatus is the state of a point's run directory.
type PointStatus string

// Point statuses.
const (
	StatusDone       PointStatus = "done"       // a complete run of this point's settings
	StatusIncomplete PointStatus = "incomplete" // a partial directory (running, interrupted or killed) or an incomplete run
	StatusMismatch   PointStatus = "mismatch"   // a complete run of other settings (another sweep's)
	StatusMissing    PointStatus = "missing"    // nothing yet
	// StatusFailed: a process ran the point and its replay failed (Detail is the
	// error); it stays failed until a run of it completes or starts again.
	StatusFailed PointStatus = "failed"
)

// PointStatuses lists the statuses in the order summaries count them.
var PointStatuses = []PointStatus{StatusDone, StatusFailed, StatusIncomplete, StatusMismatch, StatusMissing}

// PointState is a point and its status, as `replay sweep --status --json` and
// `analyze --partial` list them.
type PointState struct {
	ID     int         `json:"id"`
	Dir    string      `json:"dir"`
	Values []string    `json:"values"`
	Status PointStatus `json:"status"`
	Detail string      `json:"detail,omitempty"`
}

// States lists the points with their status (as of the last Scan); only those not
// done when notDone.
func (s *Sweep) States(notDone bool) []PointState {
	out := []PointState{}
	for _, p := range s.Points {
		if !notDone || p.Status != StatusDone {
			out = append(out, PointState{ID: p.ID, Dir: p.Dir, Values: p.Values, Status: p.Status, Detail: p.Detail})
		}
	}
	return out
}

// PointDir is the run directory name of point k: p0000, p0001, ...
func PointDir(k int) string { return fmt.Sprintf("p%04d", k) }

// ConfigSHA256 returns the hex SHA-256 of a configuration's JSON after compacting it:
// the same for the bytes a run gives json.Marshal and the indented copy in run.json.
func ConfigSHA256(configJSON []byte) (string, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, configJSON); err != nil {
		return "", err
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:]), nil
}

// Settings returns "name=value" for each axis of the point, in axis order.
func (s *Sweep) Settings(p *SweepPoint) []string {
	out := make([]string, len(s.Axes))
	for i, a := range s.Axes {
		out[i] = a.Name + "=" + p.Values[i]
	}
	return out
}

// ReadSweep reads dir/sweep.json. A directory without one is ErrNotSweepDir; another
// schema version ErrSchemaVersion.
func ReadSweep(dir string) (*Sweep, error) {
	path := filepath.Join(dir, SweepFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s has no %s", ErrNotSweepDir, dir, SweepFile)
	}
	if err != nil {
		return nil, err
	}
	var s Sweep
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotSweepDir, path, err)
	}
	if s.SchemaVersion != SweepSchemaVersion {
		return nil, fmt.Errorf("%w: %s: schema_version %d, this build reads %d", ErrSchemaVersion, path, s.SchemaVersion, SweepSchemaVersion)
	}
	for k := range s.Points {
		p := &s.Points[k]
		if p.ID != k || p.Dir != PointDir(k) || len(p.Values) != len(s.Axes) {
			return nil, fmt.Errorf("%w: %s: point %d is not numbered in order or has %d values for %d axes", ErrNotSweepDir, path, k, len(p.Values), len(s.Axes))
		}
	}
	return &s, nil
}

// WriteSweep writes s as dir/sweep.json, atomically.
func WriteSweep(dir string, s *Sweep) error {
	s.SchemaVersion = SweepSchemaVersion
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("records: encode %s: %w", SweepFile, err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, SweepFile), append(data, '\n'))
}

// Scan looks at every point's run directory under dir and sets its Status and
// Detail, Counts and Complete. A point that sweep.json records as failed stays
// failed, with its reason, unless its directory now holds its complete run or a
// partial directory of it exists (it runs again).
func (s *Sweep) Scan(dir string) {
	partials := map[string]string{} // point dir -> a partial directory of it
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if p, ok := atomicfile.ParsePartial(e.Name()); ok && e.IsDir() && !p.Hidden {
				partials[p.Final] = e.Name()
			}
		}
	}
	s.Counts = map[PointStatus]int{}
	for _, st := range PointStatuses {
		s.Counts[st] = 0
	}
	for k := range s.Points {
		p := &s.Points[k]
		failed, reason := p.Status == StatusFailed, p.Detail
		p.Status, p.Detail = s.pointStatus(filepath.Join(dir, p.Dir), p)
		switch {
		case p.Status == StatusDone:
		case partials[p.Dir] != "":
			p.Status, p.Detail = StatusIncomplete, partials[p.Dir]+" exists (running, interrupted or killed)"
		case failed:
			p.Status, p.Detail = StatusFailed, reason
		}
		s.Counts[p.Status]++
	}
	s.Complete = s.Counts[StatusDone] == len(s.Points)
}

// Fail marks point k failed with its reason (one line), unless the last Scan found
// it done; Counts follow.
func (s *Sweep) Fail(k int, reason string) {
	p := &s.Points[k]
	if p.Status == StatusDone {
		return
	}
	if s.Counts == nil {
		s.Counts = map[PointStatus]int{}
	}
	if p.Status != "" {
		s.Counts[p.Status]--
	}
	p.Status, p.Detail = StatusFailed, strings.Join(strings.Fields(reason), " ")
	s.Counts[StatusFailed]++
}

// pointStatus is the status of one point's run directory: done when it holds a
// complete run of the point's configuration and speedup with the sweep's inputs.
func (s *Sweep) pointStatus(runDir string, p *SweepPoint) (PointStatus, string) {
	run, err := ReadRun(runDir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return StatusMissing, ""
	case errors.Is(err, ErrIncomplete):
		return StatusIncomplete, "run.json says complete=false"
	case err != nil:
		return StatusIncomplete, strings.Join(strings.Fields(err.Error()), " ")
	}
	sum, err := ConfigSHA256(run.Config)
	if err != nil || sum != p.ConfigSHA256 {
		return StatusMismatch, "holds a run of another configuration"
	}
	if p.TargetLoad == 0 && run.Options.Speedup != p.Speedup || run.Options.TargetLoad != p.TargetLoad ||
		!slices.Equal(run.Options.Replicate, p.Replicate) {
		return StatusMismatch, "holds a run of another speedup, --replicate or --target-load"
	}
	if s.Options != nil {
		in := run.Options
		in.Speedup, in.LB, in.Hash = s.Options.Speedup, s.Options.LB, s.Options.Hash
		in.Replicate, in.TargetLoad = s.Options.Replicate, s.Options.TargetLoad
		if !reflect.DeepEqual(&in, s.Options) {
			return StatusMismatch, "holds a run of other inputs (traces, host mapping, window, ...)"
		}
	}
	return StatusDone, ""
}
