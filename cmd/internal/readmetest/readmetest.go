package readmetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Example is one command of a block and the lines it printed.
type Example struct {
	Line   string   // the command line after "$ ", e.g. "go run ./cmd/replay inspect x.pcap"
	Args   []string // its arguments after the program path
	Output []string
	// Literal: a command of another program (duckdb, jq, ...): shown, not run; its
	// output lines are kept as the README has them.
	Literal bool
}

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
				fields := strings.Fields(cmd)
				b.Examples = append(b.Examples, Example{Line: cmd, Args: fields[3:]})
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

// Check runs the examples of prog's blocks in README.md at readme and compares what
// they print with the blocks, each line through mask (which hides what changes from
// run to run, such as wall times). run executes one command (its arguments after the
// program) in the current directory and returns its standard output; Check runs it in
// a scratch directory holding a link to the repository's testdata/ and an out/
// directory, in block order, so that later commands see what earlier ones wrote. With
// update, the blocks are rewritten with the output instead.
func Check(t *testing.T, readme, prog string, run func(t *testing.T, args []string) string, mask func(string) string, update bool) {
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
			out := strings.TrimSuffix(run(t, e.Args), "\n")
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
