// Command analyze turns replay run directories into the answers users came for
// (docs/analysis.md): report.html (self-contained), report.md, summary.json,
// plots/*.png and *.svg, and tables/*.csv. Several runs of one trace (or a directory
// written by `replay run --hash all`) are compared side by side with bootstrap
// confidence intervals. The work lives in analyze.go and its helpers; this file only
// maps errors to exit codes.
//
// Exit status: 0 success, 1 failure while running, 2 bad usage or input (a missing,
// incomplete, truncated or foreign run directory, runs of different traces, an
// output directory that is not ours to replace or cannot be written), 130 interrupted
// (SIGINT or SIGTERM; the partial output is removed). Errors go to stderr as one line.
package main
