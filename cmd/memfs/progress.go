package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressEvery is how often a progress line is printed where no terminal
// shows a bar (a log, a pipe, CI).
var progressEvery = 5 * time.Second

// isTerminal reports whether w is a terminal (tests replace it).
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress reports long work, count by count: a bar on a terminal
// (schollz/progressbar: throttled, with rate and time left), and elsewhere
// a plain line every progressEvery, so that a log shows the work moving
// without drowning in it. Work done in less than progressEvery prints no
// line. Safe for concurrent use.
type progress struct {
	w     io.Writer
	what  string
	total int

	mu    sync.Mutex
	n     int
	start time.Time
	last  time.Time                // the last plain line
	lines int                      // plain lines printed
	bar   *progressbar.ProgressBar // on a terminal
}

func newProgress(w io.Writer, what string, total int) *progress {
	now := time.Now()
	p := &progress{w: w, what: what, total: total, start: now, last: now}
	if isTerminal(w) && total > 0 {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(what),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
	}
	return p
}

// add counts n more done.
func (p *progress) add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += n
	if p.bar != nil {
		p.bar.Add(n) // a failed write to the terminal is no failure of the work
		return
	}
	if now := time.Now(); now.Sub(p.last) >= progressEvery {
		p.last = now
		p.lines++
		fmt.Fprintf(p.w, "%s: %s of %s (%d%%), %s\n", p.what, humanize.Comma(int64(p.n)), humanize.Comma(int64(p.total)),
			percent(p.n, p.total), now.Sub(p.start).Round(time.Second))
	}
}

// done ends the bar; where plain lines were printed, a last one says how
// much was done in how long.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
		return
	}
	if p.lines > 0 {
		fmt.Fprintf(p.w, "%s: %s of %s done in %s\n", p.what, humanize.Comma(int64(p.n)), humanize.Comma(int64(p.total)),
			time.Since(p.start).Round(100*time.Millisecond))
	}
}

func percent(n, total int) int {
	if total <= 0 {
		return 100
	}
	return 100 * n / total
}

// bar shows a library's progress (memfs.Progress, search.Progress) of
// what on w, as a progress.
type bar struct {
	w    io.Writer
	what string
	p    *progress
}

func (b *bar) Start(total int) { b.p = newProgress(b.w, b.what, total) }
func (b *bar) Add(n int)       { b.p.add(n) }
func (b *bar) Done()           { b.p.done() }
