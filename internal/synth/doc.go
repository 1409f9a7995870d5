// Package synth writes synthetic replay run directories of a chosen size, for the
// analyze command's benchmarks: a complete run (run.json and every record file, as
// package records writes them) of the default Clos (docs/model.md#clos-builder) with N flows,
// M PFC events arranged as hop-by-hop pause chains (storms of depth 5), drops and
// buffer samples. It models nothing: the numbers are drawn from a seeded PCG only to
// have the shape of a real run, so that analysis does the same work per row.
//
// Units as in the records: times in picoseconds, sizes in bytes.
package synth
