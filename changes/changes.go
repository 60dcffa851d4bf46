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
//
// # Masking
//
// A reader who may not see every key reads the feed masked
// ([Log.ReadMaskedAt]): each line about a key it may not see (Key, or
// OldKey) is replaced by {"hidden":true} padded with spaces to the line's
// length, so that every reader sees the same sizes and offsets.
package changes

import (
	"bytes"
	"encoding/json"
	"sync"
	"time"

	"github.com/memfs/memfs/internal/linemask"
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

// ReadMaskedAt is ReadAt for a reader who sees only the keys that visible
// shows: each line about another key reads as a placeholder of the same
// length (see the package doc, "Masking"). visible is called once per
// call, with the keys of every line read, and without the Log's lock
// held. A read before the window gets the window's first line on, as
// ReadAt does.
func (l *Log) ReadMaskedAt(p []byte, off int64, visible func(keys ...string) []bool) int {
	if len(p) == 0 {
		return 0
	}
	l.mu.Lock()
	rel := max(0, off-l.base)
	if rel >= int64(len(l.buf)) {
		l.mu.Unlock()
		return 0
	}
	// The lines that p cuts are read whole: a line is decided by its
	// keys. The window starts at the start of a line, and every line
	// ends in a newline.
	start := int64(bytes.LastIndexByte(l.buf[:rel], '\n') + 1)
	stop := int64(len(l.buf))
	if k := bytes.IndexByte(l.buf[min(stop, rel+int64(len(p)))-1:], '\n'); k >= 0 {
		stop = min(stop, rel+int64(len(p))) + int64(k)
	}
	buf := bytes.Clone(l.buf[start:stop])
	l.mu.Unlock()
	linemask.Mask(buf, decideLine, visible)
	return copy(p, buf[rel-start:])
}

// decideLine is linemask.Decide for the feed's lines.
func decideLine(line []byte) ([]string, string) {
	var r Record
	if json.Unmarshal(line, &r) != nil || r.Key == "" {
		return nil, linemask.Hidden
	}
	if r.OldKey != "" {
		return []string{r.Key, r.OldKey}, linemask.Hidden
	}
	return []string{r.Key}, linemask.Hidden
}
