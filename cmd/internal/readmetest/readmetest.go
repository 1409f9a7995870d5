package readmetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Example is one command of a block and the lines it printed.
type Example struct {
	Line   string   // the command line after "$ ", e.g. "go run ./cmd/replay inspect x.pcap"
	Args   []string // its arguments after the program path, unquoted as a shell would
	Output []string
	// Merged: the line ends with "2>&1": what the command prints on standard error is
	// among its printed lines, and a failing command is shown as `go run` reports it
	// ("exit status 2" last).
	Merged bool
	// Literal: a command of another program (duckdb, jq, ...): shown, not run; its
	// output lines are kept as the README has them.
	Literal bool
}

// Run executes one command of prog (its arguments after the program) in the current
// directory and returns what it printed, standard error too (written in order into the
// same place) when merged, and its exit status.
type Run func(t *testing.T, args []string, merged bool) (printed string, code int)

// Block is a fenced block of examples: its content's lines [Start, End) of the file.
type Block struct {
	Start, End int
	Examples   []Example
}

// Blocks returns the blocks of readme whose first line is "$ go run " + prog (for
// example "./cmd/replay").
func Blocks(readme, prog string) []Block {
	lines := strings.Split(readme, "\n")
	var out []Block
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```" || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "$ go run "+prog+" ") {
			continue
		}
		b := Block{Start: i + 1}
		j := i + 1
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			if cmd, ok := strings.CutPrefix(lines[j], "$ "); ok {
				if !strings.HasPrefix(cmd, "go run "+prog+" ") {
					b.Examples = append(b.Examples, Example{Line: cmd, Literal: true})
					continue
				}
				args, merged := commandArgs(cmd)
				b.Examples = append(b.Examples, Example{Line: cmd, Args: args, Merged: merged})
				continue
			}
			e := &b.Examples[len(b.Examples)-1]
			e.Output = append(e.Output, lines[j])
		}
		b.End = j
		out = append(out, b)
		i = j
	}
	return out
}

// commandArgs splits "go run ./cmd/x ARGS... [2>&1]" into the arguments after the
// program, unquoting them as a shell does ('...' and "..."), and says whether
// standard error is merged.
func commandArgs(line string) (args []string, merged bool) {
	fields := shellFields(line)
	if n := len(fields); n > 0 && fields[n-1] == "2>&1" {
		fields, merged = fields[:n-1], true
	}
	return fields[3:], merged
}

// shellFields splits a command line into words as a POSIX shell does for plain words
// and quoted strings (no expansions); a "#" that starts a word starts a comment.
func shellFields(line string) []string {
	var out []string
	var word strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				out = append(out, word.String())
				word.Reset()
				inWord = false
			}
		case r == '#' && !inWord:
			return out
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, word.String())
	}
	return out
}

// CommandWriting finds the command of readme that writes dir: a line of any block
// (after an optional "$ "), "go run " + prog + " run ARGS" or, installed, the
// program's base name + " run ARGS", whose -o or --out is dir. It returns the
// arguments after the program ("2>&1" and comments left out); ok is false when no
// command writes dir, and err says so when two different ones do.
func CommandWriting(readme, prog, dir string) (args []string, ok bool, err error) {
	base := filepath.Base(prog)
	for _, line := range strings.Split(readme, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "$ ")
		f := shellFields(line)
		switch {
		case len(f) >= 4 && f[0] == "go" && f[1] == "run" && f[2] == prog && f[3] == "run":
			f = f[3:]
		case len(f) >= 2 && f[0] == base && f[1] == "run":
			f = f[1:]
		default:
			continue
		}
		if n := len(f); n > 0 && f[n-1] == "2>&1" {
			f = f[:n-1]
		}
		for i := 0; i+1 < len(f); i++ {
			if (f[i] == "-o" || f[i] == "--out") && f[i+1] == dir {
				if ok && strings.Join(args, " ") != strings.Join(f, " ") {
					return nil, false, fmt.Errorf("two commands write %s: %q and %q", dir, args, f)
				}
				args, ok = f, true
			}
		}
	}
	return args, ok, nil
}

// Check runs the examples of prog's blocks in README.md at readme and compares what
// they print with the blocks, each line through mask (which hides what changes from
// run to run, such as wall times). run executes one command; Check runs it in a
// scratch directory holding a link to the repository's testdata/ and an out/
// directory, in block order, so that later commands see what earlier ones wrote. A
// command must succeed unless it merges standard error ("2>&1"), where its exit status
// is printed as `go run` prints it. With update, the blocks are rewritten with the
// output instead.
func Check(t *testing.T, readme, prog string, run Run, mask func(string) string, update bool) {
	t.Helper()
	readme, err := filepath.Abs(readme) // the commands run elsewhere
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Dir(readme)
	scratch := t.TempDir()
	if err := os.Symlink(filepath.Join(repo, "testdata"), filepath.Join(scratch, "testdata")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(scratch)
	lines := strings.Split(string(data), "\n")
	blocks := Blocks(string(data), prog)
	if len(blocks) == 0 {
		t.Fatalf("%s has no example of %s", readme, prog)
	}
	// Run every block's commands in file order (later commands see what earlier ones
	// wrote), then compare or rewrite from the end (rewriting keeps earlier indices).
	printed := make([][]string, len(blocks))
	for k, b := range blocks {
		for _, e := range b.Examples {
			if e.Literal {
				printed[k] = append(append(printed[k], "$ "+e.Line), e.Output...)
				continue
			}
			out, code := run(t, e.Args, e.Merged)
			switch {
			case code != 0 && !e.Merged:
				t.Fatalf("%s: %q exited %d (a README command that fails shows it with 2>&1):\n%s", readme, e.Line, code, out)
			case code != 0:
				out += fmt.Sprintf("exit status %d\n", code) // as go run reports it
			}
			out = strings.TrimSuffix(out, "\n")
			printed[k] = append(printed[k], "$ "+e.Line)
			if out != "" {
				printed[k] = append(printed[k], strings.Split(out, "\n")...)
			}
		}
	}
	for k := len(blocks) - 1; k >= 0; k-- {
		b, got := blocks[k], printed[k]
		want := lines[b.Start:b.End]
		if update {
			lines = append(lines[:b.Start], append(got, lines[b.End:]...)...)
			continue
		}
		if m, w := maskAll(got, mask), maskAll(want, mask); m != w {
			t.Errorf("%s: the example block at line %d differs from what the commands print (go test -run %s -update rewrites it):\n--- README\n%s\n--- printed\n%s",
				readme, b.Start, t.Name(), strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
	}
	if update {
		if err := os.WriteFile(readme, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func maskAll(lines []string, mask func(string) string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = mask(l)
	}
	return strings.Join(out, "\n")
}
