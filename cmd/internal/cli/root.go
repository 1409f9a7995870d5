package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tracefabric/tracefabric/internal/suggest"
)

// Version is the tracefabric version of both commands, recorded in run.json and
// summary.json and printed by --version.
const Version = "0.1.0"

// Build describes the binary: the tool version, the Go toolchain and, for a binary
// built from a checkout (go install ./cmd/... or go build in a clone), the commit.
type Build struct {
	Version  string `json:"version"`
	Go       string `json:"go"`
	Platform string `json:"platform"`         // GOOS/GOARCH
	Module   string `json:"module,omitempty"` // the module's version as Go recorded it ("(devel)" in a checkout)
	Commit   string `json:"commit,omitempty"` // vcs.revision
	Time     string `json:"commit_time,omitempty"`
	Modified bool   `json:"modified,omitempty"` // the checkout had uncommitted changes
}

// ReadBuild reads the binary's build information (runtime/debug.ReadBuildInfo).
func ReadBuild() Build {
	b := Build{Version: Version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module = bi.Main.Version
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one line --version prints: "replay 0.1.0 (commit 1a2b3c4d5e6f,
// modified) go1.26.8 linux/amd64".
func (b Build) String(name string) string {
	s := name + " " + b.Version
	if b.Commit != "" {
		c := b.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " (commit " + c
		if b.Modified {
			s += ", modified"
		}
		s += ")"
	} else if b.Module != "" && b.Module != "(devel)" {
		s += " (module " + b.Module + ")"
	}
	return s + " " + b.Go + " " + b.Platform
}

// NewVersionCmd is the `version [--json]` subcommand: the same as --version, or the
// build information as JSON.
func NewVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print the version, Go version and commit of this binary",
		Args:  NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := ReadBuild()
			if asJSON {
				data, err := json.MarshalIndent(b, "", "  ")
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(append(data, '\n'))
				return err
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), b.String(cmd.Root().Name()))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build information as JSON")
	return cmd
}

// SetupRoot gives a root command what both commands share: output to stdout and
// stderr, cobra's own printing silenced (errors are reported once, by Execute), flag
// errors as usage errors with a "did you mean" for a mistyped flag, --version, and,
// when root has subcommands, the `completion bash|zsh|fish|powershell` subcommand and
// "did you mean" for a mistyped subcommand. Call it after adding the subcommands.
func SetupRoot(root *cobra.Command, stdout, stderr io.Writer) {
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.SetFlagErrorFunc(flagError)
	root.Version = Version
	root.SetVersionTemplate(ReadBuild().String(root.Name()) + "\n")
	root.Flags().BoolP("version", "", false, "print the version, Go version and commit, and exit")
	if !root.HasSubCommands() {
		root.CompletionOptions.DisableDefaultCmd = true
		return
	}
	root.CompletionOptions.HiddenDefaultCmd = false
	root.CompletionOptions.DisableDescriptions = false
	root.SuggestionsMinimumDistance = 2 // cobra's SuggestionsFor uses 0 unless set
	if root.Args == nil {
		root.Args = unknownSubcommand
	}
	if root.RunE == nil && root.Run == nil {
		root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	// Cobra adds the completion command when it executes; add it now so that "did
	// you mean" and the help see it, and make its argument errors usage errors.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Short = "Print a shell completion script: completion bash|zsh|fish|powershell"
			c.SuggestionsMinimumDistance = 2
			c.Args = unknownSubcommand // "completion tcsh" is an error, not the help
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
			for _, sh := range c.Commands() {
				sh.Args = wrapArgs(sh.Args)
			}
		}
	}
}

// unknownSubcommand rejects an argument to a root that only dispatches, suggesting
// the subcommand the user probably meant.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", sug[0])
	} else {
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		msg += " (commands: " + strings.Join(names, ", ") + ")"
	}
	return UsageError{Err: errors.New(msg)}
}

// WantAnnotation is the flag annotation (Want) that says in the user's terms what a
// flag's value must be.
const WantAnnotation = "tracefabric/want"

// Want records what flag name of fs takes ("a number > 0, without a unit"): an
// invalid value is then refused as `--name "value": want <want>`.
func Want(fs *pflag.FlagSet, name, want string) {
	if err := fs.SetAnnotation(name, WantAnnotation, []string{want}); err != nil {
		panic(err) // a flag that does not exist: a programming error
	}
}

// wantOf says what a flag takes: its Want annotation, or what its type parses.
func wantOf(f *pflag.Flag) string {
	if a := f.Annotations[WantAnnotation]; len(a) > 0 {
		return a[0]
	}
	switch f.Value.Type() {
	case "float64", "float32":
		return "a number"
	case "int", "int64", "int32", "int16", "int8":
		return "an integer"
	case "uint", "uint64", "uint32", "uint16", "uint8":
		return "an integer >= 0"
	case "duration":
		return "a duration with a unit, such as 10ms or 1s"
	case "bool":
		return "true or false"
	}
	return ""
}

// flagError makes a flag parsing error a usage error: an invalid value says what the
// flag takes, in the user's terms (`--speedup "2x": want a number > 0`, not strconv's
// text), and an unknown flag gets the flag the user probably meant ("unknown flag:
// --seeed; did you mean --seed?").
func flagError(cmd *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	if errors.As(err, &iv) {
		if want := wantOf(iv.GetFlag()); want != "" {
			return UsageError{Err: fmt.Errorf("--%s %q: want %s", iv.GetFlag().Name, iv.GetValue(), want)}
		}
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		best, bestD := "", 3 // suggest within an edit distance of 2, or a longer name
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			d := suggest.Distance(name, f.Name)
			if strings.HasPrefix(f.Name, name) {
				d = min(d, 2)
			}
			if !f.Hidden && d < bestD {
				best, bestD = f.Name, d
			}
		})
		if best != "" {
			return UsageError{Err: fmt.Errorf("%s; did you mean --%s?", msg, best)}
		}
	}
	return UsageError{Err: err}
}

func wrapArgs(args cobra.PositionalArgs) cobra.PositionalArgs {
	if args == nil {
		return nil
	}
	return func(cmd *cobra.Command, a []string) error {
		if err := args(cmd, a); err != nil {
			return UsageError{Err: err}
		}
		return nil
	}
}

// NoArgs is cobra.NoArgs returning a usage error.
func NoArgs(cmd *cobra.Command, args []string) error { return wrapArgs(cobra.NoArgs)(cmd, args) }

// ExactArgs is cobra.ExactArgs returning a usage error.
func ExactArgs(n int) cobra.PositionalArgs { return wrapArgs(cobra.ExactArgs(n)) }

// MinimumArgs is cobra.MinimumNArgs returning a usage error.
func MinimumArgs(n int) cobra.PositionalArgs { return wrapArgs(cobra.MinimumNArgs(n)) }

// Plural writes a count with its noun: "1 flow", "2 flows", "0 flows".
func Plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// NamedArgs requires exactly the positional arguments named (as the command's usage
// spells them: "SRC", "DST", ...); the usage error names the missing ones, or the
// extra ones, with the command's first example: "missing DST, PROTO, SPORT and
// DPORT: want SRC DST PROTO SPORT DPORT, e.g. replay path 10.0.0.1 ...".
func NamedArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		want := strings.Join(names, " ")
		switch {
		case len(args) < len(names):
			return UsageError{Err: fmt.Errorf("missing %s: want %s%s", andList(names[len(args):]), want, example(cmd))}
		case len(args) > len(names):
			extra := make([]string, len(args)-len(names))
			for i, a := range args[len(names):] {
				extra[i] = fmt.Sprintf("%q", a)
			}
			return UsageError{Err: fmt.Errorf("%s too many (%s): want %s%s", Plural(int64(len(extra)), "argument"), strings.Join(extra, " "), want, example(cmd))}
		}
		return nil
	}
}

// AtLeastOne requires one or more positional arguments, named name ("TRACE") and
// described by what ("the captures to replay") in the usage error.
func AtLeastOne(name, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return UsageError{Err: fmt.Errorf("missing %s: %s%s", name, what, example(cmd))}
		}
		return nil
	}
}

// andList joins words as "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// example is ", e.g. <the command's first example>" ("" without one).
func example(cmd *cobra.Command) string {
	first, _, _ := strings.Cut(strings.TrimSpace(cmd.Example), "\n")
	first, _, _ = strings.Cut(first, "  #") // an example's trailing comment
	if first = strings.TrimSpace(first); first == "" {
		return ""
	}
	return ", e.g. " + first
}

// MaximumArgs is cobra.MaximumNArgs with a usage error.
func MaximumArgs(n int) cobra.PositionalArgs { return wrapArgs(cobra.MaximumNArgs(n)) }
