package live

import (
	"strings"
	"testing"

	"github.com/memfs/memfs/search"
	"github.com/memfs/memfs/search/internal/searchtest"
)

// TestServiceIgnoreRules: VCS metadata, binary values and what a
// .memfsignore excludes are never hits, flushed or not, at open or
// following flushes; a change of a .memfsignore takes effect without a
// reopen, in both directions (issue 30, finding 1).
func TestServiceIgnoreRules(t *testing.T) {
	st := searchtest.NewMemSys()
	e := newSvcEnv(t, st, ServiceOptions{})
	e.put(t, "memory/a.md", "the wombat digs", 0o644, 1000)
	e.put(t, "memory/repo/.git/hooks/pre-commit.sample", "wombat hook", 0o644, 1000)
	e.put(t, "memory/repo/.git/logs/HEAD", "commit: wombat", 0o644, 1000)
	e.put(t, "memory/blob.bin", "x\x9c wombat \xcb\xc9", 0o644, 1000)
	e.put(t, "memory/scratch/s.md", "wombat scratch", 0o644, 1000)
	e.put(t, ".memfsignore", "scratch/\n", 0o644, 1000)
	e.flush(t)
	want := func(s *Service, when, keys string) {
		t.Helper()
		if got := strings.Join(found(t, s, credOwner, "wombat", 0), " "); got != keys {
			t.Errorf("%s: got %q, want %q", when, got, keys)
		}
	}
	s := e.svc(t)
	want(s, "at open", "memory/a.md")
	if n := s.base.Len(); n > 3 { // a.md, blob.bin (no terms), .memfsignore
		t.Errorf("at open: the index holds %d documents, want at most 3", n)
	}

	// Unflushed: the overlay obeys the rules too.
	e.put(t, "memory/repo/.git/COMMIT_EDITMSG", "wombat message", 0o644, 1000)
	e.put(t, "memory/scratch/t.md", "wombat again", 0o644, 1000)
	want(s, "unflushed", "memory/a.md")
	e.flush(t)
	want(s, "flushed", "memory/a.md")

	// The rules change: scratch/ comes back, a.md goes.
	e.put(t, ".memfsignore", "a.md\n", 0o644, 1000)
	want(s, "rule change unflushed", "")
	e.flush(t)
	want(s, "rule change flushed", "memory/scratch/s.md memory/scratch/t.md")
	// And after a reopen, from the persisted index.
	if err := e.lazy.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	e2 := newSvcEnv(t, st, ServiceOptions{})
	want(e2.svc(t), "reopened", "memory/scratch/s.md memory/scratch/t.md")
	if r := e2.svc(t).base.Search(search.Query{Text: "hook"}); len(r) != 0 {
		t.Errorf("the persisted index holds .git content: %v", r)
	}
}

// A directory or a symlink named .memfsignore holds no rules and breaks
// nothing.
func TestServiceIgnoreFileNotAFile(t *testing.T) {
	e := newSvcEnv(t, nil, ServiceOptions{})
	for _, d := range []string{"memory", "memory/d", "memory/d/.memfsignore"} {
		if err := e.c.Mkdir(d, 0o755, 1000, 1000); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.c.Symlink(t.Context(), "memory/.memfsignore", "a.md", 1000, 1000); err != nil {
		t.Fatal(err)
	}
	e.put(t, "memory/a.md", "the wombat digs", 0o644, 1000)
	e.flush(t)
	if got := strings.Join(found(t, e.svc(t), credOwner, "wombat", 0), " "); got != "memory/a.md" {
		t.Errorf("got %q, want memory/a.md", got)
	}
}
