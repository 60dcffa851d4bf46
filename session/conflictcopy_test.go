package session_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/session"
)

// TestOneConflictCopyPerConflict: another program's write lands while a
// flush is saving the key, and the watcher applies it (a conflict copy in
// the session) before the flush's save meets it (a conflict copy in the
// store). One copy of their version must remain, in the store and in the
// session.
func TestOneConflictCopyPerConflict(t *testing.T) {
	const key = "memory/n.md"
	dir := t.TempDir()
	ds := openStore(t, dir)
	seed(t, ds, map[string]string{key: "base\n"})
	st := errorstore.Wrap(ds, nil)
	c := session.NewContext(st, session.Options{})
	if err := c.Bootstrap(t.Context(), "memory/"); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(key, []byte("ours\n")); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	st.SetInject(func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpSave && slices.Contains(keys, key) {
			once.Do(func() { close(entered); <-release })
		}
		return nil
	})
	done := make(chan error, 1)
	go func() { done <- c.Flush(t.Context()) }()
	<-entered
	if err := os.WriteFile(filepath.Join(dir, key), []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	theirs, err := ds.Load(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.External().Apply(theirs[0]); err != nil { // as the watcher does
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st.SetInject(nil)
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	prefix := strings.TrimSuffix(key, ".md") + ".conflict-"
	var inStore, inSession []string
	for k, v := range stored(t, ds) {
		if strings.HasPrefix(k, prefix) && v == "theirs\n" {
			inStore = append(inStore, k)
		}
	}
	for _, k := range c.Keys() {
		if strings.HasPrefix(k, prefix) {
			inSession = append(inSession, k)
		}
	}
	slices.Sort(inStore)
	slices.Sort(inSession)
	if len(inStore) != 1 || !slices.Equal(inStore, inSession) {
		t.Errorf("copies of their version: store %v, session %v; want one, the same", inStore, inSession)
	}
	if v, _ := storedValue(t, ds, key); v != "ours\n" {
		t.Errorf("store %s = %q, want ours", key, v)
	}
}
