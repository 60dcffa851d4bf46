package backend

import "testing"

// A name whose hash field is its own hash, or two that name each other
// (2^32 tries offline with the 8-digit hash; here a hash every name
// has), return without following themselves: a copy is not its own
// original, and a cycle ends at maxConflictDepth with no original, where
// the recursion it was overflowed the mount's stack.
func TestConflictOriginSelfAndCycle(t *testing.T) {
	same := func(string) string { return "0123abcd" }
	self := "x.conflict~0123abcd-20261206T123000.000000000Z.md"
	if orig, _, _, ok := conflictOrigin(self, []string{self}, same); !ok || orig != "" {
		t.Errorf("conflictOrigin of a name that has its own hash = %q, %v; want \"\", true", orig, ok)
	}
	other := "x.conflict~0123abcd-20261206T123000.000000001Z.md"
	if orig, _, _, ok := conflictOrigin(self, []string{self, other}, same); !ok || orig != "" {
		t.Errorf("conflictOrigin of two names that have each other's hash = %q, %v; want \"\", true", orig, ok)
	}
}
