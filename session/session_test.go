package session_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/session"
)

// wordRedactor redacts each of words as "[REDACTED:word]", and nothing else.
func wordRedactor(t testing.TB, words ...string) *redact.Redactor {
	t.Helper()
	var rules []redact.Rule
	for _, w := range words {
		rules = append(rules, redact.Rule{ID: "word", Pattern: regexp.QuoteMeta(w), Keywords: []string{w}})
	}
	r, err := redact.New(redact.Config{NoBuiltin: true, Env: []string{}, Extra: rules})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// recorder counts the calls that reach the store.
type recorder struct {
	mu    sync.Mutex
	calls map[errorstore.Op][][]string
}

func (r *recorder) inject(op errorstore.Op, keys []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[errorstore.Op][][]string{}
	}
	r.calls[op] = append(r.calls[op], slices.Clone(keys))
	return nil
}

func (r *recorder) get(op errorstore.Op) [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls[op])
}

func (r *recorder) reset() {
	r.mu.Lock()
	r.calls = nil
	r.mu.Unlock()
}

func openStore(t *testing.T, dir string) *dirstore.Store {
	t.Helper()
	s, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func seed(t *testing.T, st backend.Store, kv map[string]string) {
	t.Helper()
	var es []backend.Entry
	for k, v := range kv {
		es = append(es, backend.Entry{Key: k, Value: []byte(v), Info: backend.Info{Mode: 0o644, MTime: time.Unix(1700000000, 0)}})
	}
	if err := st.Save(t.Context(), es...); err != nil {
		t.Fatal(err)
	}
}

var sample = map[string]string{
	"memory/global.md":            "global memory\n",
	"memory/project/kernel.md":    "kernel notes\n",
	"skills/go/SKILL.md":          "---\nname: go\n---\nbody\n",
	"skills/go/resources/ref.txt": "reference",
	"agents/explorer.json":        `{"name":"explorer"}`,
}

// newSession returns a bootstrapped session over a seeded dirstore wrapped
// in a recorder; the recorder is reset after bootstrap.
func newSession(t *testing.T, opts session.Options) (*session.Context, errorstore.Store, *recorder, string) {
	t.Helper()
	dir := t.TempDir()
	base := openStore(t, dir)
	seed(t, base, sample)
	rec := &recorder{}
	st := errorstore.Wrap(base, rec.inject)
	c := session.NewContext(st, opts)
	if err := c.Bootstrap(t.Context(), "memory/"); err != nil {
		t.Fatal(err)
	}
	rec.reset()
	return c, st, rec, dir
}

func storedValue(t *testing.T, st backend.Store, key string) (string, bool) {
	t.Helper()
	got, err := st.Load(t.Context(), key)
	if errors.Is(err, backend.ErrKeyNotFound) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(got[0].Value), true
}

func TestBootstrapIndexesAndLoadsPrefixes(t *testing.T) {
	c, _, rec, _ := newSession(t, session.Options{})
	if got, want := c.Keys(), slices.Sorted(maps.Keys(sample)); !slices.Equal(got, want) {
		t.Fatalf("Keys = %v, want %v", got, want)
	}
	for k, v := range sample {
		st, err := c.Stat(k)
		if err != nil {
			t.Fatalf("Stat(%s): %v", k, err)
		}
		if st.Size != int64(len(v)) || st.Mode != 0o644 || !st.MTime.Equal(time.Unix(1700000000, 0)) {
			t.Errorf("Stat(%s) = size %d mode %v mtime %v", k, st.Size, st.Mode, st.MTime)
		}
		got, ok := c.Get(k)
		wantLoaded := strings.HasPrefix(k, "memory/")
		if ok != wantLoaded || st.Loaded != wantLoaded {
			t.Errorf("Get(%s) ok=%v Loaded=%v, want %v", k, ok, st.Loaded, wantLoaded)
		}
		if ok && string(got) != v {
			t.Errorf("Get(%s) = %q, want %q", k, got, v)
		}
		if !c.Has(k) {
			t.Errorf("Has(%s) = false", k)
		}
	}
	if c.Has("memory") || c.Has("nope") {
		t.Error("Has answers true for a directory or a missing key")
	}
	if st, err := c.Stat("skills/go"); err != nil || !st.IsDir {
		t.Errorf("Stat(skills/go) = %+v, %v, want a directory", st, err)
	}
	if got := rec.get(errorstore.OpLoad); len(got) != 0 {
		t.Errorf("Stat/Get/Has did store I/O: %v", got)
	}
}

func TestResolveLoadsOnceAndSkipsCached(t *testing.T) {
	c, _, rec, _ := newSession(t, session.Options{})
	if err := c.Resolve(t.Context(), "skills/go/SKILL.md", "memory/global.md", "agents/explorer.json"); err != nil {
		t.Fatal(err)
	}
	loads := rec.get(errorstore.OpLoad)
	if len(loads) != 1 || !slices.Equal(loads[0], []string{"skills/go/SKILL.md", "agents/explorer.json"}) {
		t.Fatalf("Load calls = %v, want one call for the two unloaded keys", loads)
	}
	if err := c.Resolve(t.Context(), "skills/go/SKILL.md"); err != nil {
		t.Fatal(err)
	}
	if got := rec.get(errorstore.OpLoad); len(got) != 1 {
		t.Fatalf("Resolve of a cached key reached the store: %v", got)
	}
	if v, ok := c.Get("skills/go/SKILL.md"); !ok || string(v) != sample["skills/go/SKILL.md"] {
		t.Fatalf("Get after Resolve = %q, %v", v, ok)
	}
	err := c.Resolve(t.Context(), "missing/key")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing/key") {
		t.Fatalf("Resolve(missing) = %v, want ErrNotExist naming the key", err)
	}
	if err := c.Resolve(t.Context(), "../x"); !errors.Is(err, backend.ErrInvalidKey) {
		t.Fatalf("Resolve(../x) = %v, want ErrInvalidKey", err)
	}
}

func TestSetDeleteFlushSendOnlyChanges(t *testing.T) {
	c, st, rec, _ := newSession(t, session.Options{})
	if err := c.Set("memory/new.md", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("memory/global.md", []byte("changed")); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("agents/explorer.json"); err != nil {
		t.Fatal(err)
	}
	if c.Has("agents/explorer.json") {
		t.Fatal("Has after Delete = true")
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	saves, dels := rec.get(errorstore.OpSave), rec.get(errorstore.OpDelete)
	// The directories whose entries changed (a name added, one removed)
	// before the files, and again after them: a directory store moved
	// their mtimes while it wrote in them.
	dirs := []string{"agents", "memory"}
	if len(saves) != 3 || !slices.Equal(saves[0], dirs) || !slices.Equal(saves[2], dirs) ||
		!slices.Equal(slices.Sorted(slices.Values(saves[1])), []string{"memory/global.md", "memory/new.md"}) {
		t.Fatalf("Save calls = %v, want the directories, one call with the two dirty keys, the directories", saves)
	}
	if len(dels) != 1 || !slices.Equal(dels[0], []string{"agents/explorer.json"}) {
		t.Fatalf("Delete calls = %v, want one with the removed key", dels)
	}
	if v, _ := storedValue(t, st, "memory/global.md"); v != "changed" {
		t.Fatalf("stored global = %q", v)
	}
	if _, ok := storedValue(t, st, "agents/explorer.json"); ok {
		t.Fatal("deleted key still stored")
	}
	// Nothing is dirty any more: a second Flush sends nothing.
	rec.reset()
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s, d := rec.get(errorstore.OpSave), rec.get(errorstore.OpDelete); len(s)+len(d) != 0 {
		t.Fatalf("clean Flush sent Save %v Delete %v", s, d)
	}
}

func TestSetAfterDeleteUndoesDeletion(t *testing.T) {
	c, st, rec, _ := newSession(t, session.Options{})
	if err := c.Delete("memory/global.md"); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("memory/global.md", []byte("back")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d := rec.get(errorstore.OpDelete); len(d) != 0 {
		t.Fatalf("Delete sent %v after the key was set again", d)
	}
	if v, ok := storedValue(t, st, "memory/global.md"); !ok || v != "back" {
		t.Fatalf("stored = %q, %v", v, ok)
	}
}

// Transient editor files and memfs's reserved names live in the session
// only; every other name, dotfiles included, is persisted.
func TestTransientKeysStayInSession(t *testing.T) {
	c, st, rec, _ := newSession(t, session.Options{})
	for _, k := range []string{"memory/.global.md.swp", ".scratch.swp", "skills/4913", "memory/.#global.md", ".memfs-x", "a/.memfs-tmp-1"} {
		if err := c.Set(k, []byte("h")); err != nil {
			t.Fatalf("Set(%s): %v", k, err)
		}
		if v, ok := c.Get(k); !ok || string(v) != "h" {
			t.Fatalf("Get(%s) = %q %v", k, v, ok)
		}
	}
	if err := c.Delete("memory/.global.md.swp"); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, call := range append(rec.get(errorstore.OpSave), rec.get(errorstore.OpDelete)...) {
		for _, k := range call {
			if c.Local(k) {
				t.Fatalf("a transient key reached the store: %s", k)
			}
		}
	}
	l, _ := st.List(t.Context())
	files := 0
	for _, e := range l {
		if !e.Info.Mode.IsDir() {
			files++
		}
	}
	if files != len(sample) {
		t.Fatalf("store lists %d files, want %d", files, len(sample))
	}
	// A transient file renamed over a persisted name is persisted.
	if err := c.Rename(t.Context(), ".scratch.swp", "memory/from-temp.md", 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, ok := storedValue(t, st, "memory/from-temp.md"); !ok || v != "h" {
		t.Fatalf("renamed temp stored = %q %v", v, ok)
	}
}

func TestDotfilesArePersisted(t *testing.T) {
	c, st, _, _ := newSession(t, session.Options{})
	keys := []string{".gitignore", "memory/.hidden.md", ".git/HEAD", ".claude/settings.json", "a/.memfs"}
	for _, k := range keys {
		if err := c.Set(k, []byte("v "+k)); err != nil {
			t.Fatalf("Set(%s): %v", k, err)
		}
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if v, ok := storedValue(t, st, k); !ok || v != "v "+k {
			t.Errorf("stored %s = %q %v", k, v, ok)
		}
	}
	// With no transient patterns, a swap file is persisted too.
	c2, st2, _, _ := newSession(t, session.Options{Transient: []string{}})
	if err := c2.Set("memory/.x.swp", []byte("s")); err != nil {
		t.Fatal(err)
	}
	if err := c2.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, ok := storedValue(t, st2, "memory/.x.swp"); !ok || v != "s" {
		t.Errorf("with Transient empty, stored .x.swp = %q %v", v, ok)
	}
}

func TestWriteDuringFlushIsNotLost(t *testing.T) {
	c, st, _, _ := newSession(t, session.Options{})
	inSave := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	st.SetInject(func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpSave {
			once.Do(func() {
				close(inSave)
				<-release
			})
		}
		return nil
	})
	if err := c.Set("memory/global.md", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- c.Flush(context.Background()) }()
	<-inSave
	// The store is busy saving v1: these land during the flush.
	if err := c.Set("memory/global.md", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("memory/during.md", []byte("d")); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v, _ := storedValue(t, st, "memory/global.md"); v != "v1" {
		t.Fatalf("first flush stored %q, want v1", v)
	}
	if st, _ := c.Stat("memory/global.md"); !st.Dirty {
		t.Fatal("a write made during the flush was marked clean")
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, _ := storedValue(t, st, "memory/global.md"); v != "v2" {
		t.Fatalf("second flush stored %q, want v2", v)
	}
	if v, _ := storedValue(t, st, "memory/during.md"); v != "d" {
		t.Fatalf("second flush stored during.md = %q", v)
	}
}

func TestFailingStoreKeepsEverythingDirty(t *testing.T) {
	c, st, _, _ := newSession(t, session.Options{})
	boom := errors.New("disk on fire")
	st.SetInject(func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpSave || op == errorstore.OpDelete {
			return boom
		}
		return nil
	})
	c.Set("memory/a.md", []byte("a"))
	c.Delete("agents/explorer.json")
	for range 2 {
		if err := c.Flush(t.Context()); !errors.Is(err, boom) {
			t.Fatalf("Flush = %v, want the store's error", err)
		}
	}
	if fs := c.Stats().LastFlush(); !errors.Is(fs.Err, boom) || fs.Flushes != 2 {
		t.Fatalf("FlushStatus = %+v", fs)
	}
	if _, _, dirty, removed := c.Stats().Counts(); dirty != 1 || removed != 1 {
		t.Fatalf("after failures dirty=%d removed=%d, want 1 and 1", dirty, removed)
	}
	if got := c.Pending().Sealed(); len(got) != 1 || got[0].Key != "memory/a.md" || string(got[0].Value) != "a" {
		t.Fatalf("DirtyEntries = %+v", got)
	}
	st.SetInject(nil)
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, _ := storedValue(t, st, "memory/a.md"); v != "a" {
		t.Fatalf("stored %q after recovery", v)
	}
	if _, ok := storedValue(t, st, "agents/explorer.json"); ok {
		t.Fatal("removal lost after recovery")
	}
	if _, _, dirty, removed := c.Stats().Counts(); dirty != 0 || removed != 0 {
		t.Fatalf("after recovery dirty=%d removed=%d", dirty, removed)
	}
}

func TestFailingLoadKeepsKeyUnloaded(t *testing.T) {
	c, st, _, _ := newSession(t, session.Options{})
	st.SetInject(func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpLoad {
			return errors.New("io error")
		}
		return nil
	})
	if err := c.Resolve(t.Context(), "agents/explorer.json"); err == nil {
		t.Fatal("Resolve over a failing store succeeded")
	}
	if _, ok := c.Get("agents/explorer.json"); ok {
		t.Fatal("failed Resolve left a value")
	}
	st.SetInject(nil)
	if err := c.Resolve(t.Context(), "agents/explorer.json"); err != nil {
		t.Fatal(err)
	}
}

func TestRenameFileAndDirectory(t *testing.T) {
	c, st, _, _ := newSession(t, session.Options{})
	// skills/go/... are not loaded: the rename must load them to save them.
	if err := c.Rename(t.Context(), "skills/go", "skills/golang", 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Rename(t.Context(), "memory/global.md", "memory/project/global.md", 0); err != nil {
		t.Fatal(err)
	}
	if c.Has("skills/go/SKILL.md") || !c.Has("skills/golang/resources/ref.txt") {
		t.Fatalf("keys after rename: %v", c.Keys())
	}
	if _, err := c.Stat("skills/go"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("old directory still there: %v", err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	l, _ := st.List(t.Context())
	var keys []string
	for _, e := range l {
		if !e.Info.Mode.IsDir() {
			keys = append(keys, e.Key)
		}
	}
	want := []string{"agents/explorer.json", "memory/project/global.md", "memory/project/kernel.md",
		"skills/golang/SKILL.md", "skills/golang/resources/ref.txt"}
	if !slices.Equal(keys, want) {
		t.Fatalf("stored keys = %v, want %v", keys, want)
	}
	if v, _ := storedValue(t, st, "skills/golang/resources/ref.txt"); v != "reference" {
		t.Fatalf("moved value = %q", v)
	}
}

func TestRenameRules(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	ctx := t.Context()
	tests := []struct {
		name     string
		old, new string
		flags    session.RenameFlags
		want     error
	}{
		{"missing source", "nope", "x", 0, fs.ErrNotExist},
		{"file over directory", "memory/global.md", "skills", 0, session.ErrIsDir},
		{"directory over file", "skills", "memory/global.md", 0, session.ErrNotDir},
		{"directory over non-empty directory", "skills", "memory", 0, session.ErrNotEmpty},
		{"directory into itself", "skills", "skills/go/x", 0, session.ErrInvalidOp},
		{"noreplace onto existing", "memory/global.md", "agents/explorer.json", session.RenameNoReplace, fs.ErrExist},
		{"exchange with missing", "memory/global.md", "memory/none", session.RenameExchange, fs.ErrNotExist},
		{"exchange directories", "skills", "memory", session.RenameExchange, session.ErrInvalidOp},
		{"into a file", "memory/global.md", "agents/explorer.json/x", 0, session.ErrNotDir},
		{"invalid target", "memory/global.md", "../x", 0, backend.ErrInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := c.Rename(ctx, tt.old, tt.new, tt.flags); !errors.Is(err, tt.want) {
				t.Fatalf("Rename(%s, %s) = %v, want %v", tt.old, tt.new, err, tt.want)
			}
		})
	}
	// Replace, and exchange.
	if err := c.Rename(ctx, "memory/global.md", "agents/explorer.json", 0); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get("agents/explorer.json"); string(v) != sample["memory/global.md"] {
		t.Fatalf("replaced value = %q", v)
	}
	c.Set("a", []byte("A"))
	c.Set("b", []byte("B"))
	if err := c.Rename(ctx, "a", "b", session.RenameExchange); err != nil {
		t.Fatal(err)
	}
	va, _ := c.Get("a")
	vb, _ := c.Get("b")
	if string(va) != "B" || string(vb) != "A" {
		t.Fatalf("after exchange a=%q b=%q", va, vb)
	}
}

func TestOpenFileFollowsRenameAndSurvivesRemoval(t *testing.T) {
	c, st, _, _ := newSession(t, session.Options{})
	h, err := c.Open(t.Context(), "agents/explorer.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Rename(t.Context(), "agents/explorer.json", "agents/scout.json", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("X"), 0); err != nil {
		t.Fatal(err)
	}
	if h.Key() != "agents/scout.json" {
		t.Fatalf("handle key = %q after rename", h.Key())
	}
	if err := c.Delete("agents/scout.json"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := h.ReadAt(buf, 0)
	if err != io.EOF || string(buf[:n]) != `X"name":"explorer"}` {
		t.Fatalf("read after removal = %q, %v", buf[:n], err)
	}
	if s := h.Stat(); s.Nlink != 0 || s.Size != int64(len(sample["agents/explorer.json"])) {
		t.Fatalf("Stat of removed file = %+v", s)
	}
	if _, err := h.WriteAt([]byte("more"), 100); err != nil {
		t.Fatalf("write to removed file: %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"agents/explorer.json", "agents/scout.json"} {
		if _, ok := storedValue(t, st, k); ok {
			t.Fatalf("%s stored after removal", k)
		}
	}
}

func TestFileWritesTruncateAppend(t *testing.T) {
	c := session.NewContext(openStore(t, t.TempDir()), session.Options{MaxFileSize: 1 << 20})
	if err := c.Mkdir("d", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	h, err := c.Create("d/f", session.CreateOptions{Mode: 0o600, Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("d/f", session.CreateOptions{Exclusive: true}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("exclusive create of existing = %v", err)
	}
	h.WriteAt([]byte("hello"), 0)
	h.WriteAt([]byte("world"), 10) // a hole of zeros
	h.Append([]byte("!"))
	want := "hello\x00\x00\x00\x00\x00world!"
	if v, _ := c.Get("d/f"); string(v) != want {
		t.Fatalf("content = %q, want %q", v, want)
	}
	// A Get result never changes under the reader.
	snap, _ := c.Get("d/f")
	h.WriteAt([]byte("J"), 0)
	if string(snap) != want {
		t.Fatalf("Get result changed by a later write: %q", snap)
	}
	if err := h.Truncate(3); err != nil {
		t.Fatal(err)
	}
	if err := h.Truncate(6); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get("d/f"); string(v) != "Jel\x00\x00\x00" {
		t.Fatalf("after truncate/extend = %q", v)
	}
	if _, err := h.WriteAt([]byte("x"), 1<<20); !errors.Is(err, session.ErrTooLarge) {
		t.Fatalf("write past MaxFileSize = %v, want ErrTooLarge", err)
	}
	if err := c.Set("big", make([]byte, 1<<20+1)); !errors.Is(err, session.ErrTooLarge) {
		t.Fatalf("Set past MaxFileSize = %v", err)
	}
	if s, _ := c.Stat("d/f"); s.Mode != 0o600 || s.Size != 6 {
		t.Fatalf("Stat = %+v", s)
	}
	if _, err := c.Create("d/f/g", session.CreateOptions{}); !errors.Is(err, session.ErrNotDir) {
		t.Fatalf("create under a file = %v, want ErrNotDir", err)
	}
	if _, err := c.Create("nodir/g", session.CreateOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("create in a missing dir = %v, want ErrNotExist", err)
	}
	if err := c.Rmdir("d"); !errors.Is(err, session.ErrNotEmpty) {
		t.Fatalf("Rmdir non-empty = %v", err)
	}
	if err := c.Delete("d/f"); err != nil {
		t.Fatal(err)
	}
	if err := c.Rmdir("d"); err != nil {
		t.Fatal(err)
	}
}

func TestSetAttrPersists(t *testing.T) {
	c, st, _, _ := newSession(t, session.Options{})
	mode := fs.FileMode(0o755)
	uid, gid := uint32(42), uint32(43)
	mt := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	size := int64(3)
	// Not loaded yet: SetAttr loads it.
	if _, err := c.SetAttr(t.Context(), "skills/go/resources/ref.txt", session.Attr{Mode: &mode, UID: &uid, GID: &gid, MTime: &mt, Size: &size}); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	l, _ := st.Load(t.Context(), "skills/go/resources/ref.txt")
	got := l[0]
	if string(got.Value) != "ref" || got.Info.Mode != 0o755 || !got.Info.MTime.Equal(mt) {
		t.Fatalf("stored %q mode %v mtime %v", got.Value, got.Info.Mode, got.Info.MTime)
	}
}

func TestWatch(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	var mu sync.Mutex
	var got []string
	stop := c.Watch(func(ch session.Change) {
		mu.Lock()
		got = append(got, fmt.Sprintf("%s %s %s", ch.Op, ch.OldKey, ch.Key))
		mu.Unlock()
	})
	c.Set("memory/w.md", []byte("1"))
	c.Set("memory/w.md", []byte("2"))
	c.Rename(t.Context(), "memory/w.md", "memory/v.md", 0)
	c.Delete("memory/v.md")
	c.Mkdir("dd", 0o755, 0, 0)
	c.Rmdir("dd")
	stop()
	c.Set("memory/after-stop.md", []byte("x"))
	want := []string{"create  memory/w.md", "write  memory/w.md", "rename memory/w.md memory/v.md",
		"remove  memory/v.md", "mkdir  dd", "rmdir  dd"}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		t.Fatalf("changes = %q, want %q", got, want)
	}
}

// The store gets the value redacted; the session keeps the bytes as
// written, so a process reading or writing the file sees no change under
// it (and no OpContent is sent), until a remount.
func TestRedactionKeepsTheCacheAsWritten(t *testing.T) {
	c, st, _, _ := newSession(t, session.Options{Redactor: wordRedactor(t, "hunter2")})
	var content atomic.Int32
	c.Watch(func(ch session.Change) {
		if ch.Op == session.OpContent && ch.Key == "memory/pw.md" {
			content.Add(1)
		}
	})
	c.Set("memory/pw.md", []byte("password is hunter2\n"))
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if v, _ := storedValue(t, st, "memory/pw.md"); v != "password is [REDACTED:word]\n" {
		t.Fatalf("stored %q", v)
	}
	if v, _ := c.Get("memory/pw.md"); string(v) != "password is hunter2\n" {
		t.Fatalf("cache %q, want the bytes as written", v)
	}
	if content.Load() != 0 {
		t.Fatalf("OpContent told %d times, want 0", content.Load())
	}
}

func TestJournalReplayAfterCrash(t *testing.T) {
	dir := t.TempDir()
	jpath := dir + "-journal"
	base := openStore(t, dir)
	seed(t, base, sample)
	j, recs, err := journal.Open(jpath)
	if err != nil || len(recs) != 0 {
		t.Fatalf("Open = %v, %d records", err, len(recs))
	}
	c := session.NewContext(base, session.Options{Journal: j})
	if err := c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	h, _ := c.Create("memory/closed.md", session.CreateOptions{Mode: 0o640})
	h.WriteAt([]byte("closed value"), 0)
	h.Close()
	h2, _ := c.Create("memory/open.md", session.CreateOptions{Mode: 0o644})
	h2.WriteAt([]byte("never closed"), 0) // not closed: not promised
	c.Delete("agents/explorer.json")
	c.Rename(t.Context(), "memory/global.md", "memory/renamed.md", 0)
	// Crash: no flush, the process is gone.
	j.Close()

	j2, recs, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	c2 := session.NewContext(base, session.Options{Journal: j2})
	if err := c2.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c2.Pending().Replay(recs); err != nil {
		t.Fatal(err)
	}
	if err := c2.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := j2.Reset(); err != nil {
		t.Fatal(err)
	}
	if v, _ := storedValue(t, base, "memory/closed.md"); v != "closed value" {
		t.Fatalf("closed file after crash = %q", v)
	}
	if l, _ := base.Load(t.Context(), "memory/closed.md"); l[0].Info.Mode != 0o640 {
		t.Fatalf("mode after replay = %v", l[0].Info.Mode)
	}
	if _, ok := storedValue(t, base, "agents/explorer.json"); ok {
		t.Fatal("removal not replayed")
	}
	if v, _ := storedValue(t, base, "memory/renamed.md"); v != sample["memory/global.md"] {
		t.Fatalf("rename not replayed: %q", v)
	}
	if _, ok := storedValue(t, base, "memory/global.md"); ok {
		t.Fatal("old name of rename still stored")
	}
}

func TestConcurrentUse(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 200 {
				key := fmt.Sprintf("memory/w%d/k%d", w, i%10)
				if err := c.Set(key, fmt.Appendf(nil, "%d", i)); err != nil {
					t.Error(err)
					return
				}
				c.Get(key)
				c.Stat(key)
				if i%50 == 0 {
					if err := c.Flush(context.Background()); err != nil {
						t.Error(err)
					}
				}
				if i%7 == 0 {
					c.Delete(key)
				}
				c.ReadDir("memory")
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			c.Entries("memory/")
			c.Keys()
		}
	})
	wg.Wait()
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, _, dirty, removed := c.Stats().Counts(); dirty != 0 || removed != 0 {
		t.Fatalf("after final flush dirty=%d removed=%d", dirty, removed)
	}
}

func TestGetDoesNotAllocate(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	allocs := testing.AllocsPerRun(1000, func() {
		if _, ok := c.Get("memory/global.md"); !ok {
			t.Fatal("not cached")
		}
	})
	if allocs != 0 {
		t.Fatalf("Get allocates %.1f times per call, want 0", allocs)
	}
}

func TestInvalidKeysRejected(t *testing.T) {
	c, _, _, _ := newSession(t, session.Options{})
	for _, k := range []string{"", "/abs", "a/../b", "x\x00", strings.Repeat("n", 256), "new\nline", "esc\x1b[2J", "del\x7f", "c1\u009b"} {
		if err := c.Set(k, nil); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Set(%.20q) = %v", k, err)
		}
		if err := c.Delete(k); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Delete(%.20q) = %v", k, err)
		}
		if err := c.Mkdir(k, 0o755, 0, 0); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Mkdir(%.20q) = %v", k, err)
		}
	}
}

func TestReadOnly(t *testing.T) {
	c := session.NewContext(openStore(t, t.TempDir()), session.Options{ReadOnly: true})
	if err := c.Set("a", []byte("x")); !errors.Is(err, session.ErrReadOnly) {
		t.Fatalf("Set on read-only = %v", err)
	}
}

func TestJournalAndRecoveryAreRedacted(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	jpath := filepath.Join(t.TempDir(), "journal")
	j, _, err := journal.Open(jpath)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	c := session.NewContext(st, session.Options{Journal: j, Redactor: wordRedactor(t, "hunter2")})
	h, _ := c.Create("memo.md", session.CreateOptions{Mode: 0o644})
	h.WriteAt([]byte("pw hunter2"), 0)
	h.Close()
	c.Set("other.md", []byte("hunter2 again"))
	raw, _ := os.ReadFile(jpath)
	if bytes.Contains(raw, []byte("hunter2")) || !bytes.Contains(raw, []byte("[REDACTED:word]")) {
		t.Fatalf("the journal holds %q", raw)
	}
	for _, e := range c.Pending().Sealed() {
		if bytes.Contains(e.Value, []byte("hunter2")) {
			t.Fatalf("a recovery entry holds the secret: %q", e.Value)
		}
	}
}

func TestRenameDirectoryRefusesKeysTooLong(t *testing.T) {
	st, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := session.NewContext(st, session.Options{})
	limit := st.KeyLimit().Max
	// A file whose key is 10 bytes under badger's limit: "d" renamed to
	// a name 20 bytes longer pushes it past.
	seg := strings.Repeat("s", backend.MaxSegmentLen)
	deep := strings.Repeat(seg+"/", (limit-10-len("d/")-1)/256)
	deep += strings.Repeat("f", limit-10-len("d/")-len(deep))
	if err := c.Set("d/"+deep, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if len("d/"+deep) != limit-10 {
		t.Fatalf("the key is %d bytes, want %d", len("d/"+deep), limit-10)
	}
	long := strings.Repeat("n", 21)
	err = c.Rename(t.Context(), "d", long, 0)
	if !errors.Is(err, backend.ErrKeyTooLong) || !strings.Contains(err.Error(), fmt.Sprint(limit)) {
		t.Fatalf("Rename that pushes a key past badger's %d bytes = %v, want ErrKeyTooLong naming the limit", limit, err)
	}
	if !c.Has("d/" + deep) {
		t.Fatal("a refused rename moved the file")
	}
	// The rename that fits (a name 10 bytes longer) moves it.
	if err := c.Rename(t.Context(), "d", strings.Repeat("n", 11), 0); err != nil {
		t.Fatalf("a rename to the limit: %v", err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatalf("flush after the rename: %v", err)
	}
	if _, err := st.Load(t.Context(), strings.Repeat("n", 11)+"/"+deep); err != nil {
		t.Fatalf("the key of %d bytes in badger: %v", limit, err)
	}
}

// A deep key is a key like any other where no store limit applies: a
// memory store takes one longer than any store's limit (badger's 64,969
// bytes), 274 directories deep.
func TestDeepKeyHasNoLimitOfItsOwn(t *testing.T) {
	c := session.NewContext(memstore.New(), session.Options{})
	key := strings.Repeat(strings.Repeat("x", backend.MaxSegmentLen)+"/", 274) + "leaf.md"
	if err := c.Set(key, []byte("deep")); err != nil {
		t.Fatalf("Set of a key of %d bytes: %v", len(key), err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// Replay follows the journal's order, never mtimes: a closed change whose
// mtime a process set in the past (touch -d, futimens, a chmod of an old
// file) is replayed over the store's value with its later mtime. (The
// store can only hold a later version than the journal's last record of a
// key when a flush saved bytes no one had closed yet and died before it
// truncated the journal: that flush was never acknowledged, and the last
// closed version is what survives.)
func TestReplayFollowsTheJournalNotMtimes(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	past := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	rewritten := backend.Entry{Key: "memory/n.md", Value: []byte("v2, set in the past"), Info: backend.Info{Mode: 0o600, MTime: past}}
	if err := st.Save(t.Context(), backend.Entry{Key: "memory/n.md", Value: []byte("v1"),
		Info: backend.Info{Mode: 0o644, MTime: time.Unix(1700000100, 0)}}); err != nil {
		t.Fatal(err)
	}
	c := session.NewContext(st, session.Options{})
	if err := c.Bootstrap(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	if err := c.Pending().Replay([]journal.Record{{Gen: 1, Entries: []backend.Entry{rewritten}},
		{Gen: 2, Entries: []backend.Entry{{Key: "memory/new.md", Value: []byte("kept"), Info: backend.Info{Mode: 0o644, MTime: time.Unix(1700000000, 0)}}}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(t.Context(), "memory/n.md")
	if err != nil {
		t.Fatal(err)
	}
	if e := got[0]; string(e.Value) != "v2, set in the past" || e.Info.Mode != 0o600 || !e.Info.MTime.Equal(past) {
		t.Fatalf("after the replay the store holds %q mode %o mtime %v, want the journal's change", e.Value, e.Info.Mode, e.Info.MTime)
	}
	if v, _ := storedValue(t, st, "memory/new.md"); v != "kept" {
		t.Fatalf("a record for a key the store lacks was not replayed: %q", v)
	}
}
