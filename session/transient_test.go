package session

import (
	"path"
	"strings"
	"testing"
)

// matchEachSegment is the definition IsTransient implements: a segment of
// key matches a pattern by path.Match.
func matchEachSegment(key string, patterns []string) bool {
	for _, seg := range strings.Split(key, "/") {
		for _, p := range patterns {
			if ok, _ := path.Match(p, seg); ok {
				return true
			}
		}
	}
	return false
}

// TestTransientMatchesPathMatch checks the compiled matcher (literal
// prefixes first) against path.Match on every segment, for the default
// list and for valid patterns (ValidateTransient) whose literal part ends at each special character.
func TestTransientMatchesPathMatch(t *testing.T) {
	lists := [][]string{
		DefaultTransient,
		{"*.tmp", "~*", "a?c", "[ab]x", `\*lit`, "exact", "pre*fix"},
		{"*"},
		{},
	}
	// Keys as a session sees them: no empty segment (ValidateKey).
	segs := []string{".", "..x", ".a.swp", ".a.swpx", ".a.swpxy", ".swp", "4913", "49130", "x4913",
		".#lock", ".#", "#x", "notes.md", "a.tmp", ".tmp", "~backup", "abc", "ac", "ax", "bx", "cx",
		"*lit", `\*lit`, "lit", "exact", "exactly", "prefix", "pre-and-fix", "pre", "fix", "é.swp", ".é.swp"}
	for _, patterns := range lists {
		set := compileTransient(patterns)
		for _, a := range segs {
			for _, b := range segs {
				for _, key := range []string{a, a + "/" + b, "memory/" + a + "/x/" + b} {
					if got, want := set.match(key), matchEachSegment(key, patterns); got != want {
						t.Errorf("patterns %q, key %q: match %v, path.Match on each segment %v", patterns, key, got, want)
					}
					if got, want := IsTransient(key, patterns), matchEachSegment(key, patterns); got != want {
						t.Errorf("IsTransient(%q, %q) = %v, want %v", key, patterns, got, want)
					}
				}
			}
		}
	}
}
