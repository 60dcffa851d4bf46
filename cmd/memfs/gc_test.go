package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/history"
)

// memfs gc: on a local store it applies history's retention (--keep) and
// marks what no version names (a missing store is an error, not a store
// made; a bad --keep is refused); the first gc of an etcd store leaves its
// mark and says when the next removes what no key names.
func TestGCCommand(t *testing.T) {
	for kind, store := range backends(t) {
		s := store()
		mustRun(t, "a\n", "put", "--store", s, "memory/a.md")
		if out := mustRun(t, "", "gc", "--store", s); !strings.Contains(out, "history: 1 versions") || !strings.Contains(out, "marked, nothing removed yet") {
			t.Errorf("memfs gc of a %s store: %q, want history's line", kind, out)
		}
	}
	dir := t.TempDir()
	seedVersions(t, dir, 3, time.Now().Add(-100*24*time.Hour))
	if _, _, err := run(t, "", "gc", "--store", "dir:"+dir, "--keep", "1h:0"); err == nil || !strings.Contains(err.Error(), "LAST") {
		t.Errorf("memfs gc --keep 1h:0: %v, want an error about LAST", err)
	}
	if out := mustRun(t, "", "gc", "--store", "dir:"+dir, "--keep", "1h:1"); !strings.Contains(out, "history: 3 versions, 2 removed by retention") {
		t.Errorf("memfs gc --keep 1h:1 of 3 versions of one old day: %q, want 2 removed", out)
	}
	if _, _, err := run(t, "", "gc", "--store", "dir:"+t.TempDir()+"/none"); err == nil || !strings.Contains(err.Error(), "no store") {
		t.Errorf("memfs gc of a missing store: %v, want an error saying there is no store", err)
	}
	s := sharedEtcdStore(t)
	env := sharedEnv(t)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	mustRun(t, "a\n", "put", "--store", s, "memory/a.md")
	if out := mustRun(t, "", "gc", "--store", s); !strings.Contains(out, "marked: nothing removed yet; a memfs gc 10m0s or more from now") {
		t.Errorf("the first memfs gc of an etcd store: %q, want it to say it left a mark", out)
	}
	if out := mustRun(t, "", "gc", "--store", s); !strings.Contains(out, "marked: nothing removed yet") {
		t.Errorf("a memfs gc within the grace: %q, want it to say nothing was removed", out)
	}
}

// seedVersions writes n versions of memory/a.md into the dir store at dir,
// a minute apart from t0.
func seedVersions(t *testing.T, dir string, n int, t0 time.Time) {
	t.Helper()
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := history.New(st)
	ctx := context.Background()
	for i := range n {
		v := fmt.Appendf(nil, "version %d", i)
		a, _, err := h.Put(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := h.PlanVersions([]history.Version{history.NewVersion(uint64(i+1), history.OpWrite,
			&backend.Entry{Key: "memory/a.md", Value: v, Info: backend.Info{Mode: 0o644, CTime: t0.Add(time.Duration(i) * time.Minute)}}, a)})
		if err == nil {
			err = h.Write(ctx, recs)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// memfs log --verify also reads every version's bytes back: a damaged
// object fails it, with a damage line naming the version, and is left as
// found (the command opens the store read-only).
func TestLogVerifyHistory(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, "a\n", "put", "--store", "dir:"+dir, "memory/a.md")
	seedVersions(t, dir, 2, time.Now())
	if out := mustRun(t, "", "log", "--verify", "--store", "dir:"+dir); !strings.Contains(out, "history: 2 versions, 2 values: every value matches") {
		t.Errorf("log --verify of an intact history: %q", out)
	}
	obj := filepath.Join(dir, ".memfs-sys", "history", "o", history.AddrOf([]byte("version 1")).String())
	if err := os.WriteFile(obj, []byte("version X"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := run(t, "", "log", "--verify", "--store", "dir:"+dir)
	if err == nil || !strings.Contains(stderr, "damage:") || !strings.Contains(stderr, "memory/a.md@2") {
		t.Errorf("log --verify of a damaged object: %v, stderr %q; want a failure naming version 2 of memory/a.md", err, stderr)
	}
	if b, _ := os.ReadFile(obj); string(b) != "version X" {
		t.Errorf("the damaged object is now %q; want it as found", b)
	}
}
