// Package cli holds what the tracefabric commands share: the root command's set-up
// (SetupRoot: streams, --version, completion, "did you mean"), the exit statuses and
// the one-line report of a failed command, and interrupts (Execute: SIGINT and
// SIGTERM cancel the command's context; exit 130). Library packages return wrapped
// errors; the commands mark the ones that are the user's input (UsageError,
// InputError) and main alone turns them into an exit status.
package cli
