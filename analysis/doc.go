// Package analysis turns a replay run's records into statistics: drops, PFC pause
// intervals and storm episodes, ECN marking, one-way delay, ECMP hash imbalance and
// polarization, and comparisons of several runs of one trace with bootstrap confidence
// intervals. Nothing here draws; plots and reports build on these results.
//
// Units: times are int64 picoseconds (fields and keys end in _ps / Ps), sizes are bytes,
// fractions are in [0, 1]. Loads passed to the imbalance functions are bytes or flow
// counts as documented per function.
package analysis
