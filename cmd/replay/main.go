// Command replay replays packet captures through a simulated data-center Clos fabric
// (SPEC 8). Each subcommand lives in its own file (inspect.go, ...) and registers in
// root.go; this file only maps errors to exit codes.
//
// Exit status: 0 success, 1 failure while running, 2 bad usage, configuration or
// input. Errors go to stderr as one line.
package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/tracefabric/tracefabric/ingest"
)

// Exit statuses (SPEC 8).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args (without the program name) and returns the
// exit status; it is main without the process, for in-process tests.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	if args == nil {
		args = []string{} // cobra reads os.Args for nil
	}
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	name := "replay"
	if cmd != nil {
		name = cmd.CommandPath()
	}
	msg := strings.Join(strings.Fields(err.Error()), " ") // one line, whatever the error
	code := exitCode(err)
	if code == exitUsage && isUsage(err) {
		msg += fmt.Sprintf(" (see '%s --help')", name)
	}
	fmt.Fprintf(stderr, "%s: %s\n", name, msg)
	return code
}

// usageError marks a command line that cannot be run: unknown flag or subcommand,
// wrong number of arguments, bad flag value.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// inputError marks input that cannot be used: a capture that does not exist, cannot
// be opened, or is not a well-formed capture.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// exitCode maps an error to the exit status: usage and input errors 2, the rest 1.
func exitCode(err error) int {
	var in inputError
	switch {
	case err == nil:
		return exitOK
	case isUsage(err), errors.As(err, &in):
		return exitUsage
	}
	return exitFailure
}

// classifyInput wraps errors about reading input files as inputError: missing,
// unreadable, directories, corrupt captures. Other errors (I/O failures) pass.
func classifyInput(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ingest.ErrCorrupt) || errors.Is(err, fs.ErrNotExist) ||
		errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EISDIR) {
		return inputError{err}
	}
	return err
}
