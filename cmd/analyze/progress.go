package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress is the terminal progress bar of a long analysis: one bar per stage
// (reading a record file, bootstrapping a method), on stderr, only on a terminal.
// The zero value (not a terminal, or --quiet) draws nothing.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	bar   *progressbar.ProgressBar
	stage string
}

func newProgress(w io.Writer, quiet bool) *progress {
	if quiet || !isTerminal(w) {
		return &progress{}
	}
	return &progress{w: w}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// stageFunc returns the progress callback of packages analysis for the work named
// what (a run directory, a method), or nil when no bar is drawn.
func (p *progress) stageFunc(what string) func(stage string, done, total int) {
	if p.w == nil {
		return nil
	}
	return func(stage string, done, total int) {
		key := what + ": " + stage
		p.mu.Lock()
		defer p.mu.Unlock()
		if total <= 1 { // a step without measurable progress: a status line
			if key != p.stage {
				p.finishLocked()
				fmt.Fprintf(p.w, "\r\033[K%s", key)
				p.stage = key
			}
			return
		}
		if p.bar == nil || key != p.stage {
			p.finishLocked()
			p.stage = key
			p.bar = progressbar.NewOptions(total,
				progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription(key),
				progressbar.OptionShowCount(),
				progressbar.OptionThrottle(150*time.Millisecond),
				progressbar.OptionClearOnFinish(),
				progressbar.OptionFullWidth(),
			)
		}
		p.bar.Set(min(done, total))
	}
}

// note prints a line of status (writing outputs) on the terminal only.
func (p *progress) note(format string, a ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finishLocked()
	fmt.Fprintf(p.w, "\r\033[K"+format, a...)
}

func (p *progress) finishLocked() {
	if p.bar != nil {
		p.bar.Finish()
		p.bar = nil
	}
}

// done clears the bar and the status line.
func (p *progress) done() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finishLocked()
	fmt.Fprint(p.w, "\r\033[K")
}
