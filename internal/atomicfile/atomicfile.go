package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := io.Copy(w, bytes.NewReader(data))
		return err
	})
}

// Write calls write with a temporary file beside path and, if it returns nil, syncs
// the file and renames it to path. On any error the temporary file is removed and
// path is untouched. Errors name path.
func Write(path string, write func(io.Writer) error) (err error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%v); refusing to replace it", path, fi.Mode().Type())
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("writing %s: %w", path, err)
		}
	}()
	if err = f.Chmod(0o644); err != nil { // CreateTemp makes 0600; outputs are for sharing
		return err
	}
	if err = write(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Dir is an output directory that appears atomically: everything is written under
// Path into a temporary sibling directory named PREFIX + NAME + ".partial-<pid>-<random>"
// (PREFIX is "." for a hidden one), which Commit renames to the final name.
type Dir struct {
	final, tmp string
	done       bool
}

// PartialInfix is the part of a temporary directory's name that marks it partial:
// NAME.partial-<pid>-<random>.
const PartialInfix = ".partial-"

// ErrNotWritable is wrapped by the error of CreateDir when the output directory's
// parent cannot be created or written.
var ErrNotWritable = errors.New("not writable")

// CreateDir creates the temporary directory of final (and final's parent if needed),
// after removing the stale partial directories that killed processes left for final
// (RemoveStale). hidden makes the temporary name start with a dot. replaceable, when
// not nil, is called with final before anything is created and again by Commit: it
// returns an error when final exists and must not be replaced.
func CreateDir(final string, hidden bool, replaceable func(string) error) (*Dir, error) {
	final = filepath.Clean(final)
	parent := filepath.Dir(final)
	if replaceable != nil {
		if err := replaceable(final); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, notWritable{fmt.Errorf("output directory %s: cannot create %s (%w)", final, parent, errnoOf(err))}
	}
	RemoveStale(final)
	prefix := ""
	if hidden {
		prefix = "."
	}
	tmp, err := os.MkdirTemp(parent, prefix+filepath.Base(final)+PartialInfix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, notWritable{fmt.Errorf("output directory %s: cannot write in %s (%w)", final, parent, errnoOf(err))}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("output directory %s: %w", final, err)
	}
	return &Dir{final: final, tmp: tmp}, nil
}

// Path is where to write name (relative to the output directory) before Commit.
func (d *Dir) Path(name ...string) string {
	return filepath.Join(append([]string{d.tmp}, name...)...)
}

// Temp is the temporary directory being written.
func (d *Dir) Temp() string { return d.tmp }

// Final is the name the directory appears as after Commit.
func (d *Dir) Final() string { return d.final }

// ErrDone is returned by Commit after Commit or Abort.
var ErrDone = errors.New("output directory already committed or aborted")

// Commit renames the temporary directory to the final one. An existing final
// directory (checked again by replaceable) is moved aside first and removed once the
// new one is in place; if the rename fails the old one is put back.
func (d *Dir) Commit(replaceable func(string) error) error {
	if d.done {
		return fmt.Errorf("output directory %s: %w", d.final, ErrDone)
	}
	if replaceable != nil {
		if err := replaceable(d.final); err != nil {
			return err
		}
	}
	old := ""
	if _, err := os.Lstat(d.final); err == nil {
		old = d.tmp + ".replaced"
		if err := os.Rename(d.final, old); err != nil {
			return fmt.Errorf("output directory %s: %w", d.final, err)
		}
	}
	if err := os.Rename(d.tmp, d.final); err != nil {
		if old != "" {
			os.Rename(old, d.final)
		}
		return fmt.Errorf("output directory %s: %w", d.final, err)
	}
	d.done = true
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// Abort ends without committing and removes the temporary directory.
func (d *Dir) Abort() error {
	if d.done {
		return nil
	}
	d.done = true
	return os.RemoveAll(d.tmp)
}

// notWritable is an ErrNotWritable that prints only its own message.
type notWritable struct{ err error }

func (e notWritable) Error() string        { return e.err.Error() }
func (e notWritable) Unwrap() error        { return e.err }
func (e notWritable) Is(target error) bool { return target == ErrNotWritable }

// errnoOf strips the operation and path from a file system error ("mkdir /x/y: no
// such file or directory" -> "no such file or directory"), keeping what it wraps.
func errnoOf(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
