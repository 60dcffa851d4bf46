package main

import (
	"io"
	"time"

	"github.com/memfs/memfs/internal/progress"
)

// progressEvery is how often a progress line is printed where no terminal
// shows a bar (a log, a pipe, CI).
var progressEvery = 5 * time.Second

// isTerminal reports whether w is a terminal (tests replace it).
var isTerminal = progress.IsTerminal

// progressOn is how progress is shown on w.
func progressOn(w io.Writer) progress.Options {
	return progress.Options{Every: progressEvery, Terminal: isTerminal(w)}
}

// bar shows a library's progress (tree.Progress, search.Progress) of
// what on w.
func bar(w io.Writer, what string) *progress.Bar {
	return &progress.Bar{W: w, What: what, Options: progressOn(w)}
}
