package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Partial directories: a Dir's temporary name is [.]NAME.partial-<pid>-<random>, and
// Commit moves a replaced directory aside as that name plus ".replaced" while it
// renames. A process that is interrupted (Ctrl-C, SIGTERM) aborts and removes its
// own; one that is killed outright (SIGKILL, power loss) leaves it behind. Such a
// leftover is recognised by its name: it never blocks a later run (a run directory
// holding an analysis partial is still replaceable), and the next Dir created for the
// same final name removes the leftovers whose process is gone.

// Partial describes a partial directory's name.
type Partial struct {
	Final  string // the final name (base name only)
	Hidden bool   // the temporary name starts with a dot
	PID    int    // the process that created it
}

// ParsePartial parses the base name of a partial directory (or of a replaced one
// being moved aside); ok is false for any other name.
func ParsePartial(name string) (p Partial, ok bool) {
	name = strings.TrimSuffix(name, ".replaced")
	i := strings.LastIndex(name, PartialInfix)
	if i <= 0 {
		return Partial{}, false
	}
	final, rest := name[:i], name[i+len(PartialInfix):]
	pid, random, found := strings.Cut(rest, "-")
	n, err := strconv.Atoi(pid)
	if !found || err != nil || n <= 0 || random == "" || strings.ContainsAny(random, "-/") {
		return Partial{}, false
	}
	if _, err := strconv.ParseUint(random, 10, 64); err != nil {
		return Partial{}, false
	}
	p = Partial{Final: final, PID: n}
	if strings.HasPrefix(final, ".") {
		p.Final, p.Hidden = final[1:], true
	}
	if p.Final == "" {
		return Partial{}, false
	}
	return p, true
}

// Stale reports whether the process that created the partial directory is gone: its
// PID is not this process's and no process has it. (A PID reused by another process
// keeps a partial from being removed; it still never blocks a run.)
func (p Partial) Stale() bool {
	if p.PID == os.Getpid() {
		return false
	}
	err := syscall.Kill(p.PID, 0)
	return errors.Is(err, syscall.ESRCH)
}

// RemoveStale removes the stale partial directories of final (in final's parent,
// hidden or not) and returns their paths. Errors are ignored: a leftover that cannot
// be removed stays, harmless.
func RemoveStale(final string) []string {
	final = filepath.Clean(final)
	parent, base := filepath.Dir(final), filepath.Base(final)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		p, ok := ParsePartial(e.Name())
		if !ok || p.Final != base || !e.IsDir() || !p.Stale() {
			continue
		}
		path := filepath.Join(parent, e.Name())
		if os.RemoveAll(path) == nil {
			removed = append(removed, path)
		}
	}
	return removed
}
