package session

import (
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend/memstore"
)

// A three-way merge of a flush's conflict (the Merge policy) runs
// outside the session's lock: the text merge of two large values took
// up to half a second, every request of the mount waiting (issue 26).
// The merge is held in mergeHook while another key is read and written;
// then it ends, and the value holds both sides' changes.
func TestMergeRunsOutsideTheLock(t *testing.T) {
	ctx := t.Context()
	st := memstore.New()
	c := NewContext(st, Options{OnConflict: Merge})
	if err := c.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	lines := make([]string, 100)
	for i := range lines {
		lines[i] = "line " + strings.Repeat("x", i%7)
	}
	text := func(first, last string) []byte {
		l := append([]string{first}, lines...)
		return []byte(strings.Join(append(l, last), "\n") + "\n")
	}
	if err := c.Set("a.md", text("first", "last")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("a.md", text("ours", "last")); err != nil {
		t.Fatal(err)
	}
	if err := st.Other().Set("a.md", text("first", "theirs")); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	mergeHook = func() {
		close(entered)
		<-release
	}
	t.Cleanup(func() { mergeHook = func() {} })
	flushed := make(chan error, 1)
	go func() { flushed <- c.Flush(ctx) }()
	select {
	case <-entered:
	case err := <-flushed:
		t.Fatalf("the flush ended (%v) without merging", err)
	}
	answered := make(chan error, 1)
	go func() {
		if _, err := c.Stat("a.md"); err != nil {
			answered <- err
			return
		}
		answered <- c.Set("b.md", []byte("meanwhile"))
	}()
	select {
	case err := <-answered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("a stat and a write of other keys waited for the merge: it holds the session's lock")
	}
	close(release)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	v, _ := c.Get("a.md")
	if want := text("ours", "theirs"); string(v) != string(want) {
		t.Errorf("a.md after the merge:\n%s\nwant\n%s", v, want)
	}
}
