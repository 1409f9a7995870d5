package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracefabric/tracefabric/cmd/internal/cli"
)

// A built binary's --version says what `go version -m` finds in it: the tool
// version, the Go version and, when the build recorded one (a build in a clone),
// the commit; `replay version --json` says the same as JSON.
func TestVersionOfBuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds the binary")
	}
	dir := t.TempDir()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("skipping: no go tool: %v", err)
	}
	bin := filepath.Join(dir, "replay")
	// -buildvcs=auto: the commit is recorded when building in a git clone.
	if out, err := exec.Command(goTool, "build", "-buildvcs=auto", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	meta, err := exec.Command(goTool, "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`^\S+: (go\S+)`).FindSubmatch(meta)
	revision := regexp.MustCompile(`(?m)^\s+build\s+vcs\.revision=(\w+)`).FindSubmatch(meta)
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	line := string(out)
	want := "replay " + cli.Version + " "
	if revision != nil {
		want += "(commit " + string(revision[1][:12])
	}
	if !strings.HasPrefix(line, want) || goVersion == nil || !strings.Contains(line, " "+string(goVersion[1])+" ") || strings.Count(line, "\n") != 1 {
		t.Errorf("--version %q; want it to start %q and name %s", line, want, goVersion)
	}
	if revision == nil && strings.Contains(line, "commit") {
		t.Errorf("--version %q names a commit the build did not record", line)
	}
	js, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var b cli.Build
	if err := json.Unmarshal(js, &b); err != nil || b.Version != cli.Version || b.Go != string(goVersion[1]) ||
		(revision != nil && b.Commit != string(revision[1])) {
		t.Errorf("version --json: %s (%v)", js, err)
	}
	t.Logf("%s(vcs.revision recorded: %v)", line, revision != nil)
}
