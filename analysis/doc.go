// Package analysis turns a replay run's records into statistics (SPEC 7): drops, PFC
// pause intervals and storm episodes, ECN marking, one-way delay, ECMP hash imbalance
// and polarization, and the comparison of several runs of one trace with bootstrap
// confidence intervals. Nothing here draws: package plots and the analyze command build
// on these results.
//
// # Units
//
// Times are int64 picoseconds of simulated time (fields and JSON keys end in Ps /
// _ps), sizes are bytes, fractions are in [0, 1]. Imbalance loads are bytes or flow
// counts as each function says.
//
// # Two layers
//
// Pure functions on plain slices and structs, usable without any file:
//
//   - Imbalance, SummarizeTier, ImbalanceOf: one equal-cost set's max/mean, CoV
//     (population std / mean), Jain's index, idle-member fraction and chi-square test
//     against uniform (gonum distuv.ChiSquared), and per-tier traffic-weighted means,
//     worst sets and a pooled chi-square test.
//   - NMI, NMIFromCounts: polarization, I(X;Y) / min(H(X), H(Y)) between the rack's and
//     the fabric's member choices.
//   - PauseBuilder, PauseIntervals, PauseStats: pause intervals per paused
//     (node, port, tc) from PFC events; Episodes, Storms: storm episodes (see Episode
//     for the exact linking, depth and root rules, with an example); VictimCounter,
//     Victims: flows that crossed a paused port during an episode.
//   - DropCounter, TopFlows: drops by reason, node, tier, class and over time, and the
//     flows with most drops; lossless (headroom) drops apart.
//   - ECNByQueue, ECNSeries: CE marks per egress queue and over time.
//   - DelayQuantile, NewDelayCDF: percentiles and CDF from log-bucket histograms.
//   - Bootstrap, FlowTable.FlowStat: Poisson bootstrap over flows, bias-corrected
//     percentile intervals, seeded PCG, deterministic for a seed whatever the
//     parallelism.
//
// Time series (drops, pause timeline, ECN and buffer occupancy over time) are binned
// over the span where their events happen, first to last padded by 5%, in at most
// TimeBins bins of a 1-2-5 width, not over the whole run: each carries StartPs and
// BinPs (see FineBins for how a streamed series gets there in bounded memory). Buffer
// occupancy, whose pools can be busy in bursts far apart, gets one window per burst
// (BufferSeries.TimesPs, Windows).
//
// The reading layer: Load (LoadWith for progress) streams a run directory's run.json
// and record files through package records into a Run, refusing incomplete
// runs, other schema versions, missing or truncated files and row counts that differ
// from run.json. Analyze turns a Run into a Summary (the body of summary.json, with a
// Headline in words, and Tables for tables/*.csv); Compare turns runs of one trace
// into a Comparison with a confidence interval per method and metric and the best
// method per metric. FindRuns expands a `replay run --hash all` output directory.
//
//	run, err := analysis.Load("out/demo")
//	...
//	sum, err := analysis.Analyze(run, analysis.DefaultOptions())
//	...
//	fmt.Println(strings.Join(sum.Headline, "\n"))
//	err = analysis.WriteTables("report/tables", sum.Tables())
package analysis
