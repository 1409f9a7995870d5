package main

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/tracefabric/tracefabric/cmd/internal/cli"
	"github.com/tracefabric/tracefabric/ingest"
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

// classifyInput wraps errors about reading input files as inputError: missing,
// unreadable, directories, corrupt captures. Other errors (I/O failures) pass.
func classifyInput(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ingest.ErrCorrupt) || errors.Is(err, fs.ErrNotExist) ||
		errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EISDIR) {
		return inputError{Err: err}
	}
	return err
}
