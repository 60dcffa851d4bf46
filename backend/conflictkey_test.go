package backend_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memfs/memfs/backend"
)

// ParseConflictKey reads back what ConflictKey and ConflictKeyBy make, and
// nothing else.
func TestParseConflictKey(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 15, 0, 5, time.UTC)
	for _, tt := range []struct {
		key, orig, agent string
	}{
		{backend.ConflictKey("notes.md", at), "notes.md", ""},
		{backend.ConflictKeyBy("memory/plan.md", "coder", at), "memory/plan.md", "coder"},
		{backend.ConflictKeyBy("a/.bashrc", "x-y_z", at), "a/.bashrc", "x-y_z"},
		{backend.ConflictKeyBy("a.tar.gz", "p", at), "a.tar.gz", "p"},
		{backend.ConflictKeyBy(backend.ConflictKeyBy("m/n.md", "p", at), "", at.Add(1)), "m/n.md", "p"},
	} {
		orig, agent, when, ok := backend.ParseConflictKey(tt.key)
		if !ok || orig != tt.orig || agent != tt.agent || !when.Equal(at) && !when.Equal(at.Add(1)) {
			t.Errorf("ParseConflictKey(%q) = %q, %q, %v, %v; want %q, %q, %v", tt.key, orig, agent, when, ok, tt.orig, tt.agent, at)
		}
	}
	for _, k := range []string{"notes.md", "notes.conflict.md", "notes.conflict-tomorrow.md", "x.conflict-20261127T101500.md"} {
		if _, _, _, ok := backend.ParseConflictKey(k); ok {
			t.Errorf("ParseConflictKey(%q) is ok; want no conflict copy", k)
		}
	}
}

// longNames returns names of every length from 1 to 255 bytes made of r
// (cut to a rune boundary), with and without an extension.
func longNames(r string) []string {
	var out []string
	for n := 1; n <= backend.MaxSegmentLen; n++ {
		s := strings.Repeat(r, n/len(r)+1)
		for len(s) > n || !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		if s == "" {
			continue
		}
		out = append(out, s)
		if n > 3 {
			ext := s[:len(s)-3] + ".md"
			for !utf8.ValidString(ext) {
				ext = ext[:len(ext)-4] + ".md"
			}
			out = append(out, ext)
		}
	}
	return out
}

// A conflict copy of a name of any valid length, ASCII or not, is a valid
// key: a 255-byte name's copy is shortened, not refused.
func TestConflictKeyValidForEveryLength(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 30, 0, 7, time.UTC)
	for _, r := range []string{"a", "é", "日", "😀"} {
		for _, name := range longNames(r) {
			for _, key := range []string{name, "d/" + name} {
				for _, ck := range []string{backend.ConflictKey(key, at), backend.ConflictKeyBy(key, "planner-1", at)} {
					if err := backend.ValidateKey(ck); err != nil {
						t.Fatalf("conflict copy of a %d-byte name %q: %v", len(name), name, err)
					}
					if ck == key {
						t.Fatalf("conflict copy of %q is the key itself", key)
					}
				}
			}
		}
	}
}

// A shortened copy names its original by a hash: ConflictOrigin finds it
// among the keys, also when another long name shares its first bytes, and
// within a store's key limit.
func TestConflictOriginOfShortenedCopy(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 30, 0, 7, time.UTC)
	for _, r := range []string{"a", "é", "日", "😀"} {
		for _, name := range longNames(r) {
			key := "dir/" + name
			_, size := utf8.DecodeLastRuneInString(name)
			twin := "dir/" + name[:len(name)-size] + "y" // the same first bytes
			for _, max := range []int{0, len(key) + 50} {
				ck := backend.ConflictKeyWithin(key, "me", at, max)
				if err := backend.ValidateKey(ck); err != nil {
					t.Fatal(err)
				}
				if name != ".md" && strings.HasSuffix(key, ".md") && !strings.HasSuffix(ck, ".md") {
					t.Fatalf("copy %q of %q lost the extension", ck, key)
				}
				if max > 0 && len(ck) > max {
					t.Fatalf("copy of %q is %d bytes, over the limit of %d", key, len(ck), max)
				}
				if ck == backend.ConflictKeyWithin(twin, "me", at, max) {
					t.Fatalf("%q and %q get the same copy %q", key, twin, ck)
				}
				orig, agent, when, ok := backend.ConflictOrigin(ck, []string{"dir", twin, key, "other/" + name})
				if !ok || orig != key || agent != "me" || !when.Equal(at) {
					t.Fatalf("ConflictOrigin(%q) = %q, %q, %v, %v; want %q", ck, orig, agent, when, ok, key)
				}
				// A copy of the copy's name (the first was taken) reads back too.
				ck2 := backend.ConflictKeyWithin(ck, "", at.Add(1), max)
				if orig, agent, _, ok := backend.ConflictOrigin(ck2, []string{twin, key, ck}); !ok || orig != key || agent != "me" {
					t.Fatalf("ConflictOrigin(%q) = %q, %q, %v; want %q", ck2, orig, agent, ok, key)
				}
			}
		}
	}
	// A shortened copy whose original is gone names none.
	ck := backend.ConflictKey(strings.Repeat("z", 255), at)
	if orig, _, _, ok := backend.ConflictOrigin(ck, []string{strings.Repeat("z", 254)}); !ok || orig != "" {
		t.Fatalf("ConflictOrigin(%q) = %q, %v; want \"\", true", ck, orig, ok)
	}
}

// hash8 is the hash an older memfs put in a shortened copy's name.
func hash8(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:4])
}

// A chain of shortened copies, each naming the next by its hash, costs
// nothing to make (built backwards from the original): ConflictOrigin reads
// back one as deep as memfs makes and names no original for a longer one,
// instead of following it to its end (2,000 names made FS.Conflicts
// cubic).
func TestConflictOriginBoundsTheChain(t *testing.T) {
	const n = 2000
	names := []string{"d/x.md"}
	for i := range n {
		names = append(names, fmt.Sprintf("d/x.conflict~%s-20261206T123000.%09dZ.md", hash8(path.Base(names[i])), i))
	}
	for depth, want := range map[int]string{1: "d/x.md", 8: "d/x.md", 9: "", n: ""} {
		if orig, _, _, ok := backend.ConflictOrigin(names[depth], names); !ok || orig != want {
			t.Errorf("ConflictOrigin of a copy %d deep = %q, %v; want %q", depth, orig, ok, want)
		}
	}
}

// Two keys that both match a shortened copy (a name made to collide with
// its 32-bit hash): no original, rather than either.
func TestConflictOriginAmbiguous(t *testing.T) {
	seen := map[string]string{}
	var a, b string
	for i := 0; a == ""; i++ {
		name := fmt.Sprintf("x%d.md", i)
		h := hash8(name)
		if o, ok := seen[h]; ok {
			a, b = o, name
		}
		seen[h] = name
	}
	ck := "x.conflict~" + hash8(a) + "-20261206T123000.000000000Z.md"
	if orig, _, _, ok := backend.ConflictOrigin(ck, []string{a}); !ok || orig != a {
		t.Fatalf("ConflictOrigin(%q, %q) = %q, %v; want %q", ck, a, orig, ok, a)
	}
	if orig, _, _, ok := backend.ConflictOrigin(ck, []string{a, b}); !ok || orig != "" {
		t.Errorf("ConflictOrigin(%q, %q, %q) = %q, %v; want \"\": both match", ck, a, b, orig, ok)
	}
	// A new copy's name holds 64 bits of the hash, which no one collides
	// with as cheaply.
	long := strings.Repeat("z", 255)
	sum := sha256.Sum256([]byte(long))
	if ck := backend.ConflictKey(long, time.Now()); !strings.Contains(ck, "~"+hex.EncodeToString(sum[:8])+"-") {
		t.Errorf("a new shortened copy %q does not hold the first 16 hex digits of its original's hash", ck)
	}
}
