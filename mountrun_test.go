package memfs_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/syncbuf"
)

// TestRunMountLeavesNoMountpoint: a mountpoint RunMount made is removed
// when the FS does not open; one it refuses (not empty, inside the store)
// is refused before the FS is opened, and left as it was.
func TestRunMountLeavesNoMountpoint(t *testing.T) {
	store := t.TempDir()
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	opened := errors.New("opened")
	tests := []struct {
		name, mnt string
		made      bool   // the mountpoint was made, and said so
		exists    bool   // after the failure
		want      string // in the error
	}{
		{name: "made, then the open fails", mnt: filepath.Join(t.TempDir(), "new"), made: true, want: "opened"},
		{name: "not empty", mnt: full, exists: true, want: "is not empty"},
		{name: "inside the store", mnt: filepath.Join(store, "mnt"), want: store},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			err := memfs.RunMount(t.Context(), tt.mnt, memfs.RunOptions{StoreDir: store, Logger: slog.New(slog.NewTextHandler(&log, nil)),
				Open: func(context.Context) (*memfs.FS, error) { return nil, opened }})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
			if !tt.made && errors.Is(err, opened) {
				t.Error("the FS was opened for a mountpoint refused")
			}
			if got := strings.Contains(log.String(), "created mountpoint"); got != tt.made {
				t.Errorf("log %q: said it created the mountpoint: %v, want %v", log.String(), got, tt.made)
			}
			if _, err := os.Lstat(tt.mnt); (err == nil) != tt.exists {
				t.Errorf("mountpoint after the failure: %v; want it there: %v", err, tt.exists)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(full, "x")); err != nil {
		t.Errorf("the refused mountpoint's file: %v", err)
	}
}

// TestRunMountServesUntilCancelled: RunMount serves what Open opened until
// its context is cancelled, then flushes (OnFlush hears of the final
// flush), unmounts and closes; the store holds what was written through
// the mount.
func TestRunMountServesUntilCancelled(t *testing.T) {
	needFUSE(t)
	store, mnt := t.TempDir(), filepath.Join(t.TempDir(), "mnt")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu      sync.Mutex
		flushes []string
		log     syncbuf.Buffer
	)
	done := make(chan error, 1)
	go func() {
		done <- memfs.RunMount(ctx, mnt, memfs.RunOptions{StoreDir: store, Name: "dir:" + store, Logger: slog.New(slog.NewTextHandler(&log, nil)),
			Open: func(ctx context.Context) (*memfs.FS, error) {
				st, err := dirstore.Open(store)
				if err != nil {
					return nil, err
				}
				return memfs.Open(ctx, st, memfs.Options{JournalPath: filepath.Join(store, dirstore.JournalName), Logger: slog.New(slog.DiscardHandler)})
			},
			Mount: memfs.MountOptions{OnFlush: func(why string, entries int) func() {
				mu.Lock()
				defer mu.Unlock()
				flushes = append(flushes, why)
				return func() {}
			}},
		})
	}()
	returned := false
	t.Cleanup(func() { // after a failure: the mount ends before its TempDir goes
		if !returned {
			cancel()
			<-done
		}
	})
	await.True(t, "the mount", 10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(mnt, ".memfs"))
		return err == nil
	})
	if err := os.WriteFile(filepath.Join(mnt, "note.md"), []byte("v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		returned = true
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("RunMount did not return 20 s after its context ended")
	}
	if b, err := os.ReadFile(filepath.Join(store, "note.md")); err != nil || string(b) != "v1" {
		t.Errorf("store after RunMount: %q, %v; want v1", b, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(flushes) == 0 || flushes[len(flushes)-1] != "final" {
		t.Errorf("got flushes %q, want the last one final", flushes)
	}
	if !strings.Contains(log.String(), "created mountpoint") {
		t.Errorf("log lacks the mountpoint's creation:\n%s", log.String())
	}
	await.True(t, "the cancellation logged", 5*time.Second, func() bool { return strings.Contains(log.String(), "signal: unmounting") })
}
