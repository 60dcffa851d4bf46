package backend

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
)

// A name whose hash field is its own hash, or two that name each other
// (2^32 tries offline with the 8-digit hash; here a hash every name
// has), return without following themselves: a copy is not its own
// original, and a cycle ends at maxConflictDepth with no original, where
// the recursion it was overflowed the mount's stack.
func TestConflictOriginSelfAndCycle(t *testing.T) {
	same := func(string) string { return "0123abcd" }
	self := "x.conflict~0123abcd-20261206T123000.000000000Z.md"
	if orig, _, _, ok := newConflictIndex([]string{self}, same).Origin(self); !ok || orig != "" {
		t.Errorf("Origin of a name that has its own hash = %q, %v; want \"\", true", orig, ok)
	}
	other := "x.conflict~0123abcd-20261206T123000.000000001Z.md"
	if orig, _, _, ok := newConflictIndex([]string{self, other}, same).Origin(self); !ok || orig != "" {
		t.Errorf("Origin of two names that have each other's hash = %q, %v; want \"\", true", orig, ok)
	}
}

// FS.Conflicts reads the origin of every key among all keys: an index
// hashes each key's name once, not once per copy and step that might
// name it (a 2,000-name chain, each naming the next by its hash, was
// tens of millions of SHA-256s; the hash count stands for the time).
func TestConflictIndexHashesEachNameOnce(t *testing.T) {
	const n = 2000
	names := []string{"d/x.md"}
	for i := range n {
		sum := sha256.Sum256([]byte(names[i][len("d/"):]))
		names = append(names, fmt.Sprintf("d/x.conflict~%s-20261206T123000.%09dZ.md", hex.EncodeToString(sum[:4]), i))
	}
	hashes := 0
	x := newConflictIndex(names, func(name string) string { hashes++; return conflictHash(name) })
	for i, k := range names {
		want := "d/x.md"
		if i == 0 || i > maxConflictDepth {
			want = ""
		}
		if orig, _, _, _ := x.Origin(k); orig != want {
			t.Fatalf("Origin of a copy %d deep = %q, want %q", i, orig, want)
		}
	}
	if hashes > len(names) {
		t.Errorf("the origins of %d keys took %d hashes, want at most one a key", len(names), hashes)
	}
}
