// Package analysis turns a replay run's records into statistics
// (docs/analysis.md): drops, PFC pause intervals and storm episodes, ECN marking,
// one-way delay, ECMP hash imbalance and polarization, and the comparison of several
// runs of one trace with bootstrap confidence intervals. Nothing here draws: package
// plots and the analyze command build on these results.
//
// # Units and identities
//
// Times are picoseconds of simulated time: units.Time for the binned series that
// figures draw, int64 elsewhere (fields and JSON keys end in Ps / _ps; summary.json
// writes every time as a number of ps). Sizes are bytes, fractions are in [0, 1].
// Nodes are NodeIDs into the run's node table (Run.Nodes, the records' node
// dictionary) while analysis computes; they are named only in what it writes. Tiers
// and drop reasons are records.Tier and records.DropReason.
//
// # Methods
//
// Storms (docs/analysis.md#pfc-pauses-and-storms; StormRule, Episodes). A storm
// episode is a connected set of pause intervals that overlap in time and are linked
// either hop by hop (the paused sender's node is itself pausing its own upstream) or
// as siblings (paused by the same node, on any of its ports); its depth is the longest
// hop-by-hop chain, a chain following the pause upstream in time (StormChainRule). An
// episode is a storm if its depth is at least 2 or it lasts the storm duration.
//
// Imbalance (docs/analysis.md#ecmp-imbalance; Imbalance, SummarizeTier, ImbalanceOf).
// Per equal-cost set, on the member frame bytes and flows loadbalance.arrow measured:
// max/mean, CoV (population std / mean), Jain's index, idle members and Pearson's
// chi-square test of the flow counts against uniform (p-value from gonum's
// distuv.ChiSquared). Per tier, the traffic-weighted means over the judged sets
// (JudgedSet: at least MinFlowsPerMember flows per member) and a pooled chi-square.
//
// Polarization (docs/analysis.md#polarization; Polarization, ExpectedMI). The
// adjusted mutual information of the rack and fabric member choices of the flows that
// crossed both, AMI = (I - E[I]) / (min(H(X), H(Y)) - E[I]) with E[I] under the
// hypergeometric model of Vinh, Epps and Bailey (2010): 0 in expectation for
// independent choices, 1 when one determines the other; pooled and within each source
// rack. The plain NMI, I / min(H), is kept for reference (NMINormalization). Judged
// from MinPolarizationFlows flows on.
//
// Stages (docs/analysis.md#polarization-between-stages; StageTable,
// StagePolarization). The same measures between every two consecutive ECMP stages of
// the flows' paths (a stage: a switch's position on the path), from stages.arrow in a
// fabric deeper than the Clos, else the rack and fabric choices as stages 1 and 2;
// within each switch of the earlier stage instead of each source rack.
//
// Roles (docs/analysis.md#roles; Role). Per-tier tables group switches by the roles
// of a topology file (run.json topology.switches), else by the records tier, which
// is the Clos's role: drops by tier, the imbalance per tier, the ECN queues' tier.
//
// Undefined is null: a measure over nothing (a tier no traffic crossed, an entropy of
// 0, too few flows) is NaN in Go and null in JSON, with Judged false and a Reason.
//
// Intervals (docs/analysis.md#comparisons; Bootstrap). A Poisson bootstrap over
// flows (seeded PCG, deterministic for a seed whatever the parallelism): BCa
// intervals, the acceleration from a grouped jackknife, coverage-tested; for AMI the
// normal interval with the bootstrap standard error (IntervalOf: its bootstrap
// distribution is biased and degenerate at independence). Replicates in which a
// measure is undefined are left out; an interval always contains its estimate.
//
// Comparisons (Compare). Runs of one trace are resampled with the same weights (paired);
// the measured member loads are shared among the flows (FlowTable.Apportion), so a
// run's numbers are the same alone or compared. Best names the best method per ranked
// metric: none on a tie; p-values and the plain NMI are not ranked; Clear when the
// interval of the paired difference with the runner-up excludes 0 (Significant) and
// the difference is at least the metric's PracticalThreshold (Practical).
//
// Delay (docs/analysis.md#delay): percentiles and CDF from delay.arrow's log-bucket
// histograms (DelayQuantile, NewDelayCDF); the flow mean-delay p99 is another number,
// the 99th percentile over flows of each flow's mean delay.
//
// Flow completion (docs/analysis.md#flow-completion): the slowdown fct_ps /
// ideal_fct_ps of the completed flows, per transport and size bucket ([0, MTU),
// [MTU, BDP), [BDP, 5 BDP), >= 5 BDP, as m3), empirical quantiles (FCTSlowdown,
// FlowTable.FCT); comparisons bootstrap its p50 and p99. Runs are comparable when
// their flows' identities agree (FlowFingerprint), named by what differs in their
// run.json (the hash method or transport alone by its value, else key=value of every
// option and configuration attribute that differs: lb=flowlet, Switch.BufferSize=16MiB).
//
// Closed loop (docs/analysis.md#closed-loop): transport.arrow's events by kind, per
// flow and over time (TransportEvents, in any row order), CNPs and rate cuts per
// DCQCN flow, ECE-marked ACKs per TCP flow, run.json's control and replaced packets
// (ClosedLoop.Summary); nil for open-loop runs.
//
// # Two layers
//
// Pure functions on plain slices and structs, usable without any file: Imbalance,
// SummarizeTier, ImbalanceOf; NMI, NMIFromCounts, ExpectedMI; PauseBuilder,
// PauseIntervals, PauseStats, Episodes, Storms, VictimCounter, Victims; DropCounter,
// TopFlows; ECNByQueue, ECNSeries; DelayQuantile, NewDelayCDF; FCTSlowdown,
// TransportEvents; Bootstrap, BCaCI, NormalCI, FlowTable.FlowStat.
//
// Time series (drops, pause timeline, ECN and buffer occupancy over time) are binned
// over the span where their events happen, first to last padded by 5%, in at most
// TimeBins bins of a 1-2-5 width, not over the whole run: each carries StartPs and
// BinPs (see FineBins for how a streamed series gets there in bounded memory). Buffer
// occupancy, whose pools can be busy in bursts far apart, gets one window per burst
// (BufferSeries.TimesPs, Windows).
//
// The reading layer: Load (LoadWith for progress) streams a run directory's run.json
// and record files through package records into a Run, refusing incomplete runs,
// other schema versions, missing or truncated files and row counts that differ from
// run.json. Analyze turns a Run into a Summary (the body of summary.json, with a
// Headline in words, and Tables for tables/*.csv); Compare turns runs of one trace
// into a Comparison. FindRuns expands a `replay run --hash all` output directory.
//
//	run, err := analysis.Load("out/demo")
//	...
//	sum, err := analysis.Analyze(run, analysis.DefaultOptions())
//	...
//	fmt.Println(strings.Join(sum.Headline, "\n"))
//	err = analysis.WriteTables("report/tables", sum.Tables())
package analysis
