package cli

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestCodeAndReport(t *testing.T) {
	base := errors.New("boom\nsecond line")
	cases := []struct {
		err  error
		code int
		out  string
	}{
		{nil, ExitOK, ""},
		{base, ExitFailure, "tool: boom second line\n"},
		{fmt.Errorf("ctx: %w", UsageError{base}), ExitUsage, "tool: ctx: boom second line (see 'tool --help')\n"},
		{fmt.Errorf("ctx: %w", InputError{base}), ExitUsage, "tool: ctx: boom second line\n"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if got := Report(&b, "tool", c.err); got != c.code || b.String() != c.out {
			t.Errorf("Report(%v) = %d, %q; want %d, %q", c.err, got, b.String(), c.code, c.out)
		}
	}
}

func TestInterruptedCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		line string
	}{
		{Interrupted{Signal: "SIGINT", Outputs: true}, "tool: interrupted (SIGINT); partial outputs removed\n"},
		{fmt.Errorf("wrapped: %w", Interrupted{Signal: "SIGTERM"}), "tool: wrapped: interrupted (SIGTERM)\n"},
	} {
		var b bytes.Buffer
		if code := Report(&b, "tool", c.err); code != ExitInterrupted || b.String() != c.line {
			t.Errorf("Report(%v) = %d, %q; want 130, %q", c.err, code, b.String(), c.line)
		}
	}
}
