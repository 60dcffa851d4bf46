package session

import (
	"fmt"
	"path"
	"strings"

	"github.com/memfs/memfs/backend"
)

// DefaultTransient is the list of name patterns (path.Match syntax, matched
// against each segment of a key) whose files live in the session only:
// vim's swap files and the "4913" file it writes to test a directory, and
// emacs's ".#name" lock symlinks. Everything else a process creates is
// persisted.
var DefaultTransient = []string{".*.sw?", ".*.sw??", "4913", ".#*"}

// ValidateTransient checks patterns as Options.Transient takes them.
func ValidateTransient(patterns []string) error {
	for _, p := range patterns {
		if p == "" || strings.Contains(p, "/") {
			return fmt.Errorf("transient pattern %q: must be a non-empty name pattern without /", p)
		}
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("transient pattern %q: %w", p, err)
		}
	}
	return nil
}

// IsTransient reports whether a segment of key matches one of patterns.
func IsTransient(key string, patterns []string) bool {
	return compileTransient(patterns).match(key)
}

// Local reports whether key lives in the session only: memfs's reserved
// names (backend.IsReserved) and transient editor files (Options.Transient).
func (c *Context) Local(key string) bool {
	return backend.IsReserved(key) || c.transient.match(key)
}

// transientSet is a list of transient patterns ready to match: each with
// its literal prefix, so that the names of an ordinary tree (no segment
// starts with "." or "4913") are passed over without path.Match, which a
// bootstrap asks for every key.
type transientSet []transientPattern

type transientPattern struct {
	pattern string
	prefix  string // the pattern up to its first special character
	literal bool   // the whole pattern is its prefix: a name to compare
}

func compileTransient(patterns []string) transientSet {
	set := make(transientSet, len(patterns))
	for i, p := range patterns {
		n := strings.IndexAny(p, `*?[\`)
		if n < 0 {
			n = len(p)
		}
		set[i] = transientPattern{pattern: p, prefix: p[:n], literal: n == len(p)}
	}
	return set
}

// match reports whether a segment of key matches one of the patterns.
func (set transientSet) match(key string) bool {
	for key != "" {
		seg := key
		if i := strings.IndexByte(key, '/'); i >= 0 {
			seg, key = key[:i], key[i+1:]
		} else {
			key = ""
		}
		for _, p := range set {
			if !strings.HasPrefix(seg, p.prefix) {
				continue
			}
			if p.literal {
				if seg == p.pattern {
					return true
				}
				continue
			}
			if ok, _ := path.Match(p.pattern, seg); ok {
				return true
			}
		}
	}
	return false
}
