// Package changes keeps the change feed that a mount shows as
// .memfs/changes: one JSON object a line (time, op, key, old_key, origin),
// appended as changes happen, so that a program that cannot use inotify
// can follow memory with tail -f.
//
// The feed is an in-memory window of the most recent lines (at most the
// max bytes given to New). Offsets are absolute from the start of the
// session, as in a growing file: a reader that falls further behind than
// the window gets the oldest retained line next.
//
// # Concurrency
//
// A Log is safe for concurrent use. One mutex guards the window; Append
// encodes its line before taking it, and Append, Size and ReadAt hold it
// only to copy bytes in or out, so none of them waits on I/O or on a
// reader. Lines are in the order the Appends took the lock: Appends from
// different goroutines may land out of the order of their Record times.
// The package starts no goroutines.
package changes

import (
	"encoding/json"
	"sync"
	"time"
)

// Record is one line of the feed.
type Record struct {
	Time   time.Time `json:"time"`
	Op     string    `json:"op"`
	Key    string    `json:"key"`
	OldKey string    `json:"old_key,omitempty"`
	Origin string    `json:"origin"`
}

// DefaultMax is the window size when none is given: 4 MiB, some 40,000 lines.
const DefaultMax = 4 << 20

// Log is the feed.
type Log struct {
	max int

	mu   sync.Mutex // guards base and buf
	base int64      // absolute offset of buf[0]
	buf  []byte
}

// New returns an empty feed keeping at most max bytes (0 means DefaultMax).
func New(max int) *Log {
	if max <= 0 {
		max = DefaultMax
	}
	return &Log{max: max}
}

// Append adds r as one line.
func (l *Log) Append(r Record) {
	line, err := json.Marshal(r)
	if err != nil {
		return // a Record always marshals
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, line...)
	if len(l.buf) > l.max {
		// Drop whole lines from the front, keeping at most half the window
		// so that trimming is amortised.
		cut := len(l.buf) - l.max/2
		for cut < len(l.buf) && l.buf[cut-1] != '\n' {
			cut++
		}
		l.base += int64(cut)
		l.buf = append(l.buf[:0:0], l.buf[cut:]...)
	}
}

// Size is the absolute offset of the end of the feed: what a reader sees as
// the file size.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.base + int64(len(l.buf))
}

// ReadAt copies the feed from absolute offset off into p and returns the
// count. An offset before the window reads from the window's start.
func (l *Log) ReadAt(p []byte, off int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	rel := off - l.base
	if rel < 0 {
		rel = 0
	}
	if rel >= int64(len(l.buf)) {
		return 0
	}
	return copy(p, l.buf[rel:])
}
