// Package progress reports the progress of long work (routing a large
// fabric, a fail-in-place study, a simulation sweep) on a stream: a
// progress bar (github.com/schollz/progressbar) when the stream is a
// terminal, and plain lines at an interval otherwise, so that log files
// get whole lines and never carriage returns. Work that ends before the
// first report prints nothing.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Options tune a Reporter; zero fields mean the defaults.
type Options struct {
	// Delay is how long work runs before the first report (default 1s).
	Delay time.Duration
	// Interval is the time between plain lines (default 10s); a bar
	// redraws at most every 100ms.
	Interval time.Duration
	// Terminal forces the bar (true) or plain lines (false); nil asks
	// whether the stream is a terminal.
	Terminal *bool
}

// Reporter reports one piece of work in phases ("routing", "verifying",
// "writing tables"), each with a count of units done out of a total (or
// none: then the elapsed time shows). Its methods are safe for
// concurrent use; Update suits routing.Options.Progress.
type Reporter struct {
	w        io.Writer
	what     string
	opt      Options
	terminal bool
	start    time.Time

	mu         sync.Mutex
	phase      string
	phaseStart time.Time
	done       int
	total      int
	bar        *progressbar.ProgressBar
	printed    bool // something was printed: Stop says how it ended
	stopped    bool // Stop ran

	stop     sync.Once
	quit     chan struct{}
	finished chan struct{}
}

// New starts reporting the work named what on w.
func New(w io.Writer, what string, opt Options) *Reporter {
	if opt.Delay <= 0 {
		opt.Delay = time.Second
	}
	if opt.Interval <= 0 {
		opt.Interval = 10 * time.Second
	}
	r := &Reporter{w: w, what: what, opt: opt, start: time.Now(), quit: make(chan struct{}), finished: make(chan struct{})}
	r.phaseStart = r.start
	if opt.Terminal != nil {
		r.terminal = *opt.Terminal
	} else {
		r.terminal = IsTerminal(w)
	}
	go r.run()
	return r
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Phase starts a new phase; its counts start at zero.
func (r *Reporter) Phase(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phase, r.phaseStart, r.done, r.total = name, time.Now(), 0, 0
	r.endBar()
}

// Update sets the units done and the total of the phase.
func (r *Reporter) Update(done, total int) {
	r.mu.Lock()
	r.done, r.total = done, total
	r.mu.Unlock()
}

// endBar leaves a finished bar on its line (r.mu held).
func (r *Reporter) endBar() {
	if r.bar != nil {
		if r.total > 0 {
			_ = r.bar.Set(r.done)
		}
		_ = r.bar.Exit()
		fmt.Fprintln(r.w)
		r.bar = nil
	}
}

// Stop ends the reporting; when anything was printed, a last line says
// how long the work took. Later calls do nothing.
func (r *Reporter) Stop() {
	r.stop.Do(func() { close(r.quit) })
	<-r.finished
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	r.stopped = true
	r.endBar()
	if r.printed {
		fmt.Fprintf(r.w, "%s: done in %s\n", r.what, time.Since(r.start).Round(time.Millisecond))
	}
}

func (r *Reporter) run() {
	defer close(r.finished)
	select {
	case <-r.quit:
		return
	case <-time.After(r.opt.Delay):
	}
	every := r.opt.Interval
	if r.terminal {
		every = 100 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		r.report()
		select {
		case <-r.quit:
			return
		case <-t.C:
		}
	}
}

// report prints a plain line, or starts the phase's bar on a terminal.
func (r *Reporter) report() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.printed = true
	if !r.terminal {
		fmt.Fprintln(r.w, r.line())
		return
	}
	limit := r.total
	if limit <= 0 {
		limit = -1 // unknown: a spinner with the elapsed time
	}
	if r.bar == nil {
		r.bar = progressbar.NewOptions(limit, progressbar.OptionSetWriter(r.w), progressbar.OptionSetDescription(r.label()),
			progressbar.OptionShowCount(), progressbar.OptionSetElapsedTime(true), progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetWidth(30))
	} else if r.bar.GetMax() != limit {
		r.bar.ChangeMax(limit)
	}
	_ = r.bar.Set(r.done)
}

// label is "what phase" or "what".
func (r *Reporter) label() string {
	if r.phase == "" {
		return r.what
	}
	return r.what + ": " + r.phase
}

// line is one plain report: "route: routing 1200/5832 (21%), 3s".
func (r *Reporter) line() string {
	s := r.label()
	if r.total > 0 {
		s += fmt.Sprintf(" %d/%d (%.0f%%)", r.done, r.total, 100*float64(r.done)/float64(r.total))
	}
	return s + fmt.Sprintf(", %s", time.Since(r.phaseStart).Round(time.Second))
}
