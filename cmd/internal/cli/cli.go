package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// Exit statuses (README, "Exit status").
const (
	ExitOK          = 0   // success
	ExitFailure     = 1   // a failure while running
	ExitUsage       = 2   // bad usage, configuration or input
	ExitInterrupted = 130 // interrupted by SIGINT (Ctrl-C) or SIGTERM, partial outputs removed
)

// ErrInterrupted is wrapped by the error of a command stopped by a signal.
var ErrInterrupted = errors.New("interrupted")

// Interrupted is the error of a command stopped by Signal; Outputs says that the
// command writes outputs (and so removed its partial ones).
type Interrupted struct {
	Signal  string
	Outputs bool
}

// WritesOutputs is the annotation (cobra.Command.Annotations key) of a command that
// writes output files: interrupted, it says that it removed its partial outputs.
const WritesOutputs = "tracefabric/writes-outputs"

func (e Interrupted) Error() string {
	if e.Outputs {
		return fmt.Sprintf("interrupted (%s); partial outputs removed", e.Signal)
	}
	return fmt.Sprintf("interrupted (%s)", e.Signal)
}
func (e Interrupted) Is(target error) bool { return target == ErrInterrupted }

// UsageError marks a command line that cannot be run: unknown flag or subcommand,
// wrong number of arguments, bad flag value.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// InputError marks input that cannot be used: a missing, unreadable or malformed
// file, an invalid configuration.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// IsUsage reports whether err is (or wraps) a UsageError.
func IsUsage(err error) bool {
	var u UsageError
	return errors.As(err, &u)
}

// ExitCoder is an error that chooses its exit status (replay sweep --status: 3 while
// a sweep is not complete).
type ExitCoder interface {
	error
	ExitCode() int
}

// Code maps an error to the exit status: usage and input errors 2, an interrupt 130,
// an ExitCoder its own, others 1.
func Code(err error) int {
	var in InputError
	var ec ExitCoder
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrInterrupted):
		return ExitInterrupted
	case IsUsage(err), errors.As(err, &in):
		return ExitUsage
	case errors.As(err, &ec):
		return ec.ExitCode()
	}
	return ExitFailure
}

// Report writes err to stderr as one line prefixed with the command's name (with a
// pointer to --help for usage errors) and returns its exit status.
func Report(stderr io.Writer, name string, err error) int {
	if err == nil {
		return ExitOK
	}
	msg := strings.Join(strings.Fields(err.Error()), " ") // one line, whatever the error
	code := Code(err)
	if IsUsage(err) {
		msg += fmt.Sprintf(" (see '%s --help')", name)
	}
	fmt.Fprintf(stderr, "%s: %s\n", name, msg)
	return code
}
