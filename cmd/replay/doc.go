// Command replay replays packet captures through a simulated data-center Clos fabric
// (README, "replay run"). Each subcommand lives in its own file (inspect.go, ...) and registers in
// root.go; this file only maps errors to exit codes.
//
// Exit status: 0 success, 1 failure while running, 2 bad usage, configuration or
// input, 130 interrupted (SIGINT or SIGTERM); `replay sweep --status` 3 for a sweep
// that is not complete. Errors go to stderr as one line.
package main
