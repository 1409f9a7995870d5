// Package plots draws the figures of an analysis as PNG and SVG files.
//
// Every figure is a pure renderer of plain data: a small input type defined here
// (or a gonum plotter interface such as plotter.XYer or plotter.Valuer) goes in, a
// *Figure comes out. Nothing here reads records or computes statistics beyond what a
// figure needs to choose its rows (top N by paused time, the busiest pools, the most
// imbalanced sets); the analyze command converts analysis results into these types.
//
// Figures and their file names (Figure.Name):
//
//	drops_over_time     stacked area of drops per time bin by reason
//	pfc_pause_timeline  heatmap of paused port-classes x time bins (paused fraction)
//	buffer_occupancy    occupied bytes of the busiest pools over time (a panel per
//	                    burst of activity when bursts are far apart)
//	ecmp_member_load    member shares of the most imbalanced equal-cost sets
//	hash_comparison     one panel per metric, a value per hash method with its 95% CI
//	delay_cdf           one-way delay CDF per traffic class, log time axis
//	ecn_marking         CE-marked fraction per queue (and over time when given)
//	fct_slowdown        flow completion slowdown (p50, p99) per flow size bucket, log
//	                    axis from 1, one series per transport or run
//	cnp_over_time       closed loop: CNPs and DCQCN rate cuts per time bin
//
// Units. Inputs follow the project's conventions: times are picoseconds
// (units.Time), sizes bytes, shares and fractions in [0, 1]. Figures convert for the
// reader and say so on the axis: times in ns, us, ms or s chosen from the span shown,
// bytes in B, KB or MB (decimal, 1 KB = 1000 B), fractions and shares in %.
//
// Time axes read "time from start of run" in a unit suiting the window shown (a
// 3 ms window at 2 s reads 2000 to 2003 ms). Time-binned figures merge adjacent bins when there are more than 600 (a bin
// narrower than a pixel shows nothing more) and state the bin width drawn. Long
// sample series are reduced to per-bucket minima and maxima (peaks kept).
// Figures that cap their rows or series (pause timeline, pools, ECMP sets, ECN
// queues) keep the largest and say "top N of M" in Figure.Note.
//
// A figure with nothing to show is not drawn: its constructor returns an error that
// matches ErrNoData (errors.Is) and carries a short reason ("no drops") for the
// report, instead of empty axes.
//
// Text is drawn with the Liberation Sans fonts embedded in gonum/plot. Characters
// those fonts lack would silently vanish from the PNG, so text taken from inputs
// (node names, reasons, labels) is passed through a filter that replaces them
// with '?'. Figures are deterministic: the same input gives byte-identical PNG and
// SVG output. Figure.Save writes NAME.png and NAME.svg atomically; the
// sub-package report renders report.html (figures embedded) and report.md.
package plots
