// Package progress shows long work on a terminal or in a log: a Counter
// counts work of a known size (a bar on a terminal, with rate and time
// left; elsewhere a plain line every Options.Every), and Flush follows a
// large flush, which has no steps to count (a spinner, or a log line
// every Options.Every).
//
// # Concurrency
//
// A Counter is safe for concurrent use. Flush runs one goroutine until
// the function it returns is called.
package progress

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
	"golang.org/x/sys/unix"
)

// Options says how progress is shown.
type Options struct {
	Every    time.Duration // how often a plain line is printed where no terminal shows a bar
	Terminal bool          // the writer is a terminal: draw a bar or a spinner
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Counter reports long work, count by count: a bar on a terminal
// (redrawn in place at most every redraw, with rate and time left), and elsewhere
// a plain line every Options.Every, so that a log shows the work moving
// without drowning in it. Work done in less than Every prints no line.
type Counter struct {
	w     io.Writer
	what  string
	total int
	every time.Duration

	mu    sync.Mutex // guards the fields below
	n     int
	start time.Time
	last  time.Time // the last plain line, or drawing of the bar
	lines int       // plain lines printed
	bar   bool      // on a terminal
}

// redraw is how often a terminal's bar or spinner is drawn again.
const redraw = 100 * time.Millisecond

// New starts counting total units of what on w.
func New(w io.Writer, what string, total int, o Options) *Counter {
	now := time.Now()
	p := &Counter{w: w, what: what, total: total, every: o.Every, start: now, last: now}
	p.bar = o.Terminal && total > 0
	return p
}

// Add counts n more done.
func (p *Counter) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += n
	now := time.Now()
	if p.bar {
		if now.Sub(p.last) >= redraw || p.n >= p.total {
			p.last = now
			p.draw(now)
		}
		return
	}
	if now.Sub(p.last) >= p.every {
		p.last = now
		p.lines++
		fmt.Fprintf(p.w, "%s: %s of %s (%d%%), %s\n", p.what, humanize.Comma(int64(p.n)), humanize.Comma(int64(p.total)),
			percent(p.n, p.total), now.Sub(p.start).Round(time.Second))
	}
}

// Done ends the bar; where plain lines were printed, a last one says how
// much was done in how long.
func (p *Counter) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar {
		p.draw(time.Now())
		fmt.Fprintln(p.w)
		return
	}
	if p.lines > 0 {
		fmt.Fprintf(p.w, "%s: %s of %s done in %s\n", p.what, humanize.Comma(int64(p.n)), humanize.Comma(int64(p.total)),
			time.Since(p.start).Round(100*time.Millisecond))
	}
}

// draw draws the bar in place: what, the bar, the count, the rate and the
// time left. A failed write to the terminal is no failure of the work.
func (p *Counter) draw(now time.Time) {
	const width = 30
	done := min(width, width*p.n/max(p.total, 1))
	took := now.Sub(p.start)
	left := "?"
	if p.n > 0 {
		left = (time.Duration(float64(took) * float64(p.total-p.n) / float64(p.n))).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r%s %3d%% [%s%s] %s/%s (%.0f/s, %s left)\x1b[K", p.what, percent(p.n, p.total),
		strings.Repeat("=", done), strings.Repeat(" ", width-done), humanize.Comma(int64(p.n)), humanize.Comma(int64(p.total)),
		float64(p.n)/max(took.Seconds(), 1e-3), left)
}

func percent(n, total int) int {
	if total <= 0 {
		return 100
	}
	return 100 * n / total
}

// BigFlush is how many unflushed entries make a flush worth following.
const BigFlush = 2000

// Flush follows a flush of BigFlush entries or more (see Follow) and
// returns what ends that (call it when the flush is over); a smaller
// flush is not worth a line.
func Flush(log *slog.Logger, w io.Writer, why string, entries int, o Options) func() {
	if entries >= BigFlush {
		return Follow(log, w, why, entries, o)
	}
	return func() {}
}

// Follow logs a flush of n entries before it runs, shows it going on
// while it runs (on a terminal w, a spinner with the time spent; else a
// log line every o.Every), and returns what logs its end, with its
// duration. A flush is one store call (one transaction on badger), with
// no steps to count.
func Follow(log *slog.Logger, w io.Writer, why string, n int, o Options) func() {
	log.Info("flush: saving the unflushed changes", "why", why, "entries", n)
	start := time.Now()
	every := o.Every
	spin := func() {}
	if o.Terminal {
		frames, turn := `|/-\`, 0
		spin = func() {
			fmt.Fprintf(w, "\r%c flush: %s entries (%s)\x1b[K", frames[turn%len(frames)], humanize.Comma(int64(n)), time.Since(start).Round(time.Second))
			turn++
		}
		every = redraw
	}
	stop := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if o.Terminal {
					spin()
				} else {
					log.Info("flush: still saving", "why", why, "entries", n, "for", time.Since(start).Round(time.Second))
				}
			}
		}
	}()
	return func() {
		close(stop)
		<-ended
		if o.Terminal {
			fmt.Fprint(w, "\r\x1b[K") // the spinner goes
		}
		log.Info("flush done", "why", why, "entries", n, "took", time.Since(start).Round(time.Millisecond))
	}
}

// Bar counts work whose size its Start is told (the engine's and the
// search index's Progress): a Counter of What on W, started then.
type Bar struct {
	W       io.Writer
	What    string
	Options Options
	c       *Counter
}

func (b *Bar) Start(total int) { b.c = New(b.W, b.What, total, b.Options) }
func (b *Bar) Add(n int)       { b.c.Add(n) }
func (b *Bar) Done()           { b.c.Done() }
