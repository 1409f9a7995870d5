package cli

import (
	"errors"
	"fmt"
	"testing"
)

type codedErr int

func (e codedErr) Error() string { return fmt.Sprintf("coded %d", int(e)) }
func (e codedErr) ExitCode() int { return int(e) }

// An error that chooses its exit status gets it, wrapped or not; usage, input and
// interrupts keep theirs.
func TestExitCoder(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{codedErr(3), 3},
		{fmt.Errorf("sweep: %w", codedErr(4)), 4},
		{UsageError{Err: codedErr(3)}, ExitUsage},
		{InputError{Err: codedErr(3)}, ExitUsage},
		{errors.Join(Interrupted{Signal: "SIGINT"}, codedErr(3)), ExitInterrupted},
		{errors.New("plain"), ExitFailure},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("Code(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
