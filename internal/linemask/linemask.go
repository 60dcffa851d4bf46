// Package linemask hides, for one reader, the lines of a JSON-lines
// stream that name a key the reader may not see. Each such line becomes a
// placeholder of the same length, padded with spaces, so that every
// reader sees the same sizes and offsets (which the kernel may cache, and
// which tail -f needs).
//
// The package knows no line format: the owner of a format (eventlog for
// the event log, changes for the change feed) says which keys a line
// names and what its placeholder is. The package starts no goroutines and
// keeps no state.
package linemask

import (
	"bytes"
	"slices"
)

// Hidden is the placeholder of a line that says nothing else: a line the
// format's owner cannot decide, or one whose format keeps nothing of it.
const Hidden = `{"hidden":true}`

// Decide returns the keys that line (without its newline) names, and the
// placeholder that replaces it when the reader may not see one of them.
// A line that names no key (it does not parse, say) is hidden.
type Decide func(line []byte) (keys []string, placeholder string)

// Visible reports, for each key, whether the reader may see it.
type Visible func(keys ...string) []bool

// Mask rewrites in place each line of buf that visible does not show
// whole. buf starts at the start of a line; a last line without its
// newline (torn, or cut by the caller) is hidden whole, as Hidden: it
// cannot be decided. visible is called once, with the keys of every line.
func Mask(buf []byte, decide Decide, visible Visible) {
	type line struct {
		b    []byte
		p    string // the placeholder
		keys int    // how many of the keys passed to visible are this line's
	}
	var lines []line
	var keys []string
	for len(buf) > 0 {
		l := line{b: buf, p: Hidden}
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			buf = nil
		} else {
			l.b, buf = buf[:i], buf[i+1:]
			var k []string
			k, l.p = decide(l.b)
			keys = append(keys, k...)
			l.keys = len(k)
		}
		lines = append(lines, l)
	}
	seen := visible(keys...)
	for _, l := range lines {
		shown := l.keys > 0 && !slices.Contains(seen[:l.keys], false)
		seen = seen[l.keys:]
		if !shown {
			hide(l.b, l.p)
		}
	}
}

// hide overwrites line with placeholder, padded with spaces (a line too
// short for it becomes all spaces).
func hide(line []byte, placeholder string) {
	n := 0
	if len(placeholder) <= len(line) {
		n = copy(line, placeholder)
	}
	for i := n; i < len(line); i++ {
		line[i] = ' '
	}
}
