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
