package main

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/tracefabric/tracefabric/analysis"
	"github.com/tracefabric/tracefabric/cmd/internal/cli"
	"github.com/tracefabric/tracefabric/records"
)

// Exit statuses (README, "Exit status").
const (
	exitOK      = cli.ExitOK
	exitFailure = cli.ExitFailure
	exitUsage   = cli.ExitUsage
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args (without the program name) and returns the
// exit status; it is main without the process, for in-process tests.
func run(args []string, stdout, stderr io.Writer) int {
	return cli.Execute(newRootCmd(stdout, stderr), args, stderr)
}

// usageError and inputError mark the user's mistakes (exit 2); see package cli.
type (
	usageError = cli.UsageError
	inputError = cli.InputError
)

// inputSentinels are the errors of packages records and analysis that mean the input
// is unusable (exit 2), as opposed to a failure while running.
var inputSentinels = []error{
	records.ErrIncomplete, records.ErrSchemaVersion, records.ErrNotRecordFile, records.ErrNotRunFile,
	analysis.ErrRecordsMismatch, analysis.ErrNoRuns, analysis.ErrNotComparable,
	analysis.ErrPFCOrder, errNotAnalysisDir,
	fs.ErrNotExist, fs.ErrPermission, syscall.EISDIR, syscall.ENOTDIR,
}

// classifyInput wraps errors about unusable input as inputError; other errors (I/O
// failures while writing, bugs) pass unchanged.
func classifyInput(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range inputSentinels {
		if errors.Is(err, s) {
			return inputError{Err: err}
		}
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return inputError{Err: err} // a run.json that is not JSON of ours
	}
	return err
}
