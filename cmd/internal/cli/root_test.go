package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// testRoot is a root with one subcommand and one flag, set up like both commands.
func testRoot(out, errb *bytes.Buffer) *cobra.Command {
	root := &cobra.Command{Use: "tool", Short: "a tool"}
	var seed int64
	run := &cobra.Command{Use: "run [flags] TRACE...", Short: "run it", Args: MinimumArgs(1),
		RunE: func(*cobra.Command, []string) error { return nil }}
	run.Flags().Int64Var(&seed, "seed", 1, "the seed")
	root.AddCommand(run, NewVersionCmd())
	SetupRoot(root, out, errb)
	return root
}

func execute(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Execute(testRoot(&out, &errb), args, &errb)
	return code, out.String(), errb.String()
}

func TestSetupRoot(t *testing.T) {
	for _, c := range []struct {
		name       string
		args       []string
		code       int
		out, errIn string
	}{
		{"did you mean a subcommand", []string{"runn", "x"}, ExitUsage, "", `unknown command "runn" for "tool"; did you mean "run"?`},
		{"unknown subcommand lists them", []string{"zzzzzz"}, ExitUsage, "", "(commands: completion, run, version)"},
		{"did you mean a flag", []string{"run", "--sede", "2", "x"}, ExitUsage, "", "unknown flag: --sede; did you mean --seed?"},
		{"typed flag", []string{"run", "--seed", "two", "x"}, ExitUsage, "", `--seed "two": want an integer`},
		{"args", []string{"run"}, ExitUsage, "", "requires at least 1 arg"},
		{"--version", []string{"--version"}, ExitOK, "tool " + Version + " go", ""},
		{"version", []string{"version"}, ExitOK, "tool " + Version + " go", ""},
		{"completion bash", []string{"completion", "bash"}, ExitOK, "bash completion", ""},
		{"completion zsh", []string{"completion", "zsh"}, ExitOK, "zsh completion", ""},
		{"completion fish", []string{"completion", "fish"}, ExitOK, "fish completion", ""},
		{"completion of an unknown shell", []string{"completion", "zhs"}, ExitUsage, "", `did you mean "zsh"?`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := execute(c.args...)
			if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errs, c.errIn) {
				t.Fatalf("exit %d (want %d), stdout %q (want %q in it), stderr %q (want %q in it)", code, c.code, out, c.out, errs, c.errIn)
			}
			if c.code != ExitOK && (strings.Count(errs, "\n") != 1 || out != "") {
				t.Errorf("an error is one line on stderr and nothing on stdout: stdout %q, stderr %q", out, errs)
			}
		})
	}
}

func TestVersionJSON(t *testing.T) {
	code, out, errs := execute("version", "--json")
	var b Build
	if code != ExitOK || errs != "" || json.Unmarshal([]byte(out), &b) != nil {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if b.Version != Version || !strings.HasPrefix(b.Go, "go") || !strings.Contains(b.Platform, "/") {
		t.Errorf("build %+v", b)
	}
}

// The help lists each subcommand once, and usage lines carry [flags] once.
func TestHelpListsOnce(t *testing.T) {
	code, out, _ := execute("--help")
	if code != ExitOK || strings.Count(out, "run it") != 1 {
		t.Errorf("exit %d, help:\n%s", code, out)
	}
	_, out, _ = execute("run", "--help")
	if strings.Count(out, "[flags]") != 1 {
		t.Errorf("run --help:\n%s", out)
	}
}

func TestBuildString(t *testing.T) {
	b := Build{Version: "1.0", Go: "go1.26.8", Platform: "linux/amd64", Commit: "0123456789abcdef0123", Modified: true}
	if got, want := b.String("replay"), "replay 1.0 (commit 0123456789ab, modified) go1.26.8 linux/amd64"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int64]string{0: "0 flows", 1: "1 flow", 2: "2 flows"} {
		if got := Plural(n, "flow"); got != want {
			t.Errorf("Plural(%d) = %q, want %q", n, got, want)
		}
	}
}

// NamedArgs and AtLeastOne name what is missing or extra, with the first example.
func TestNamedArgs(t *testing.T) {
	cmd := &cobra.Command{Use: "path SRC DST PROTO", Example: "  tool path 10.0.0.1 10.0.0.2 udp   # a flow\n  tool path ..."}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "missing SRC, DST and PROTO: want SRC DST PROTO, e.g. tool path 10.0.0.1 10.0.0.2 udp"},
		{[]string{"a"}, "missing DST and PROTO: want SRC DST PROTO, e.g. tool path 10.0.0.1 10.0.0.2 udp"},
		{[]string{"a", "b"}, "missing PROTO: want SRC DST PROTO, e.g. tool path 10.0.0.1 10.0.0.2 udp"},
		{[]string{"a", "b", "c"}, ""},
		{[]string{"a", "b", "c", "d"}, `1 argument too many ("d"): want SRC DST PROTO, e.g. tool path 10.0.0.1 10.0.0.2 udp`},
	} {
		err := NamedArgs("SRC", "DST", "PROTO")(cmd, c.args)
		if (err == nil) != (c.want == "") || err != nil && (err.Error() != c.want || !IsUsage(err)) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	err := AtLeastOne("TRACE", "the captures to replay")(&cobra.Command{Use: "run"}, nil)
	if err == nil || err.Error() != "missing TRACE: the captures to replay" || !IsUsage(err) {
		t.Errorf("AtLeastOne: %v", err)
	}
}
