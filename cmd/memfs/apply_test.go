package main

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/memfs/memfs/extwatch"
)

// TestHelperTouchNeverChangesData checks the helper's touch on its own:
// however many are queued for a key, and whenever they run, they change
// nothing in the file, and a watcher on the mount hears a modification.
// A touch was a truncate to a size sent with it (stale when an older
// version of an external change was loaded meanwhile), taken for
// a no-op only when announced: two touches queued for one key shared one
// announcement, and the second truncated the file for real (a file of 16
// zero bytes after a burst of external writes, in TestExternalBurstIsAbsorbed
// under load).
func TestHelperTouchNeverChangesData(t *testing.T) {
	t.Parallel()
	store, mnt := "dir:"+t.TempDir(), t.TempDir()
	startMount(t, store, mnt, nil)
	p := filepath.Join(mnt, "memory", "note.md")
	if err := os.WriteFile(p, []byte("file 40 round 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsyncPath(t, p)
	events := watchDir(t, filepath.Join(mnt, "memory"))
	for i := range 4 { // touches queued for one key, none announced
		var logged bytes.Buffer
		touch := strings.NewReader(`{"op":"touch","key":"memory/note.md"}` + "\n")
		if err := extwatch.RunHelper(mnt, touch, io.Discard, slog.New(slog.NewTextHandler(&logged, nil))); err != nil || logged.Len() > 0 {
			t.Fatalf("touch %d: %v %s", i, err, logged.String())
		}
		if got := readBack(p); got != "file 40 round 4\n" {
			t.Fatalf("after touch %d the file reads %q", i, got)
		}
	}
	waitFor(t, "a watcher on the mount to hear the touch", 5*time.Second, func() bool { return events.has("note.md", fsnotify.Write) })
}
