package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/internal/progress"
)

// withProgress makes progress print a plain line at every step (every 0)
// or draw a bar as if on a terminal (tty), for one test.
func withProgress(t *testing.T, every time.Duration, tty bool) {
	t.Helper()
	oldEvery, oldTTY := progressEvery, isTerminal
	progressEvery = every
	isTerminal = func(io.Writer) bool { return tty }
	t.Cleanup(func() { progressEvery, isTerminal = oldEvery, oldTTY })
}

// TestImportReindexReportProgress checks that import and reindex report
// their progress (as plain lines here: the test's stderr is no terminal).
func TestImportReindexReportProgress(t *testing.T) {
	withProgress(t, 0, false)
	src := t.TempDir()
	for i := range 40 {
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("n%02d.md", i)), []byte("note about gofmt\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store := "dir:" + t.TempDir()
	_, errOut, err := run(t, "", "import", "--store", store, src)
	if err != nil || !strings.Contains(errOut, "import: 40 of 40 (100%)") {
		t.Fatalf("import: %v; stderr %q; want a progress line at 40 of 40", err, errOut)
	}
	_, errOut, err = run(t, "", "reindex", "--store", store)
	if err != nil || !strings.Contains(errOut, "index: 40 of 40 (100%)") {
		t.Fatalf("reindex: %v; stderr %q; want a progress line at 40 of 40", err, errOut)
	}
}

// TestLargeFinalFlushIsAnnounced checks that the flush at unmount of
// progress.BigFlush entries or more says so in the log, with its duration.
func TestLargeFinalFlushIsAnnounced(t *testing.T) {
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	p := startMount(t, store, mnt, nil)
	dir := filepath.Join(mnt, "memory", "many")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range progress.BigFlush {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.terminate(t); err != nil {
		t.Fatalf("memfs exit: %v\n%s", err, p.log)
	}
	log := p.log.String()
	if !strings.Contains(log, "flush: saving the unflushed changes") || !strings.Contains(log, "flush done") {
		t.Errorf("the log of a final flush of %d+ entries does not announce it:\n%s", progress.BigFlush, log)
	}
}
