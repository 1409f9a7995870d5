// Package sweep replays one trace over a grid of settings: what `replay sweep` runs
// (README, "replay sweep"; docs/sweeps.md is the reference of the sweep file, the
// sweep directory and sweep.json).
//
// A sweep file names axes (hash methods, load balancing, transport, speedup and any
// configuration attribute); Parse checks it, reporting every mistake as
// "file:line: key: rule". Expand numbers the grid's points in the product's order
// (hash, lb, transport, speedup, then the set attributes in file order, the last axis
// varying fastest) and validates every point's configuration before anything runs.
// Run replays the points into DIR/p0000, DIR/p0001, ... with a pool of workers,
// skipping the points whose run directory is complete (a sweep resumes after an
// interruption), and keeps DIR/sweep.json (records.Sweep) up to date.
//
// # Scale-out
//
// Options.Index and Options.Of select the points k with k mod Of == Index, so that
// any scheduler that starts Of processes with their index runs a sweep through one
// shared directory: a point's records depend only on its settings and the trace
// (the simulation is deterministic and each point is a replay of its own), so they
// are byte-identical whichever process runs it. The processes update sweep.json
// under a lock on the directory. Job writes the Kubernetes Indexed Job (batch/v1)
// that runs a sweep this way, with the go.yaml.in/yaml/v3 encoder and field names of
// the Kubernetes API (the tests decode it with the official types, which the replay
// command does not link).
//
// # Memory
//
// Points of one topology and transport mode share one replay.Prepared (trace
// summary, host mapping, Clos; replay.Prepared.Derive gives each its configuration
// and speedup); each running point holds one simulation, so a worker needs the
// memory of one replay (EstimateMemory).
package sweep
