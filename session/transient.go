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
	for seg := range strings.SplitSeq(key, "/") {
		for _, p := range patterns {
			if ok, _ := path.Match(p, seg); ok {
				return true
			}
		}
	}
	return false
}

// Local reports whether key lives in the session only: memfs's reserved
// names (backend.IsReserved) and transient editor files (Options.Transient).
func (c *Context) Local(key string) bool {
	return backend.IsReserved(key) || IsTransient(key, c.transient)
}
