package config

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is wrapped by every configuration error: a file that does not decode, an
// unknown attribute, a bad --set, or a rule of docs/model.md#configuration-rules broken.
var ErrInvalid = errors.New("invalid configuration")

// Violation is one broken rule.
type Violation struct {
	// Source is where the attribute was set: a file name, "--set", or "" for a
	// default.
	Source string
	// Line is the line in Source (0 when unknown or not a file).
	Line int
	// Attr is the attribute's path, e.g. "Switch.Pools[1].TrafficClasses".
	Attr string
	// Rule says what is wrong and what the rule is.
	Rule string

	// related are other attributes the rule involves; Load locates the violation at
	// the first of Attr and related that the file or a --set sets.
	related []string
}

// String prints "file:line: Attr: rule" (as much of the location as is known).
func (v Violation) String() string {
	var b strings.Builder
	switch {
	case v.Source != "" && v.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", v.Source, v.Line)
	case v.Source != "":
		fmt.Fprintf(&b, "%s: ", v.Source)
	}
	if v.Attr != "" {
		b.WriteString(v.Attr)
		b.WriteString(": ")
	}
	b.WriteString(v.Rule)
	return b.String()
}

// Error lists every violation found; it wraps ErrInvalid (and, for a file that
// cannot be read, the fs error).
type Error struct {
	Violations []Violation

	cause error
}

// Error prints the violations on one line, separated by "; ".
func (e *Error) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns ErrInvalid and the underlying cause, if any.
func (e *Error) Unwrap() []error {
	if e.cause != nil {
		return []error{ErrInvalid, e.cause}
	}
	return []error{ErrInvalid}
}

func (e *Error) add(attr, format string, args ...any) {
	e.Violations = append(e.Violations, Violation{Attr: attr, Rule: fmt.Sprintf(format, args...)})
}

func (e *Error) errOrNil() error {
	if e == nil || len(e.Violations) == 0 {
		return nil
	}
	return e
}

// inProfile renames the Switch attributes of e's violations to profile name's
// (Switch.BufferSize -> Switches.NAME.BufferSize) and says so in the rule.
func (e *Error) inProfile(name string) *Error {
	for i := range e.Violations {
		v := &e.Violations[i]
		v.Attr = renameProfile(v.Attr, name)
		for j := range v.related {
			v.related[j] = renameProfile(v.related[j], name)
		}
		v.Rule += fmt.Sprintf(" (in switch profile %q)", name)
	}
	return e
}

func renameProfile(attr, name string) string {
	if rest, ok := strings.CutPrefix(attr, "Switch."); ok {
		return "Switches." + name + "." + rest
	}
	return attr
}

// InProfile is inProfile for callers outside the package (the fabric's per-switch
// buffer layout); it returns err unchanged when it is not an *Error.
func InProfile(err error, name string) error {
	if e, ok := err.(*Error); ok && name != "" {
		return e.inProfile(name)
	}
	return err
}
