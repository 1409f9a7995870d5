package atomicfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func TestParsePartial(t *testing.T) {
	for _, c := range []struct {
		name string
		want Partial
		ok   bool
	}{
		{"demo.partial-123-456", Partial{Final: "demo", PID: 123}, true},
		{".analysis.partial-77-3866581576", Partial{Final: "analysis", Hidden: true, PID: 77}, true},
		{"demo.partial-123-456.replaced", Partial{Final: "demo", PID: 123}, true},
		{"a.partial-b.partial-9-1", Partial{Final: "a.partial-b", PID: 9}, true},
		{"demo", Partial{}, false},
		{"demo.partial-", Partial{}, false},
		{"demo.partial-x-1", Partial{}, false},
		{"demo.partial-12", Partial{}, false},
		{"demo.partial-12-abc", Partial{}, false},
		{".partial-1-2", Partial{}, false},
		{"..partial-1-2", Partial{}, false},
	} {
		got, ok := ParsePartial(c.name)
		if ok != c.ok || got != c.want {
			t.Errorf("ParsePartial(%q) = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// deadPID returns the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot start a child process: %v", err)
	}
	return cmd.Process.Pid
}

// A partial directory left by a process that is gone is stale: the next CreateDir
// for the same final name removes it; this process's own and other names stay.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	dead := strconv.Itoa(deadPID(t))
	mine := strconv.Itoa(os.Getpid())
	for _, name := range []string{
		"out.partial-" + dead + "-1",            // stale
		".out.partial-" + dead + "-2",           // stale, hidden
		"out.partial-" + dead + "-3.replaced",   // stale, moved aside by Commit
		"out.partial-" + mine + "-4",            // this process's: in use
		"other.partial-" + dead + "-5",          // another final name
		"out.partial-" + strconv.Itoa(1) + "-6", // PID 1 is alive
		"out-not-partial",
	} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if p, _ := ParsePartial("out.partial-" + dead + "-1"); !p.Stale() {
		t.Fatalf("a partial of dead PID %s is not stale", dead)
	}
	d, err := CreateDir(filepath.Join(dir, "out"), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Abort()
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if filepath.Join(dir, e.Name()) != d.Temp() {
			left = append(left, e.Name())
		}
	}
	want := []string{"other.partial-" + dead + "-5", "out-not-partial", "out.partial-" + mine + "-4", "out.partial-1-6"}
	slices.Sort(want)
	slices.Sort(left)
	if len(left) != len(want) {
		t.Fatalf("left %q, want %q", left, want)
	}
	for i := range want {
		if left[i] != want[i] {
			t.Fatalf("left %q, want %q", left, want)
		}
	}
}
