package backend_test

import (
	"testing"
	"time"

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
