package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestProgressPlainLines checks the lines where no terminal is: none for
// work quicker than progressEvery, else one per period and a last one.
func TestProgressPlainLines(t *testing.T) {
	withProgress(t, time.Hour, false)
	var quick bytes.Buffer
	p := newProgress(&quick, "import", 3)
	p.add(3)
	p.done()
	if quick.Len() != 0 {
		t.Errorf("quick work printed %q; want nothing", quick.String())
	}

	withProgress(t, 0, false)
	var slow bytes.Buffer
	p = newProgress(&slow, "import", 2500)
	p.add(1000)
	p.add(1500)
	p.done()
	lines := strings.Split(strings.TrimSpace(slow.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "import: 1,000 of 2,500 (40%)") ||
		!strings.HasPrefix(lines[1], "import: 2,500 of 2,500 (100%)") || !strings.HasPrefix(lines[2], "import: 2,500 of 2,500 done in") {
		t.Errorf("lines:\n%s\nwant 1,000 of 2,500 (40%%), 2,500 of 2,500 (100%%), then done", slow.String())
	}
	if strings.Contains(slow.String(), "\r") || strings.Contains(slow.String(), "\x1b") {
		t.Errorf("plain lines hold terminal controls: %q", slow.String())
	}
}

// TestProgressBarOnTerminal checks that a terminal gets the library's bar
// (redrawn in place) ending at 100%, and a newline after it.
func TestProgressBarOnTerminal(t *testing.T) {
	withProgress(t, 0, true)
	var out bytes.Buffer
	p := newProgress(&out, "export", 10)
	for range 10 {
		p.add(1)
	}
	p.done()
	s := out.String()
	if !strings.Contains(s, "\r") || !strings.Contains(s, "export") || !strings.Contains(s, "100%") || !strings.HasSuffix(s, "\n") {
		t.Errorf("terminal output %q; want a bar redrawn with \\r, named export, at 100%%, then a newline", s)
	}
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
// bigFlush entries or more says so in the log, with its duration.
func TestLargeFinalFlushIsAnnounced(t *testing.T) {
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	p := startMount(t, store, mnt, nil)
	dir := filepath.Join(mnt, "memory", "many")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range bigFlush {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.terminate(t); err != nil {
		t.Fatalf("memfs exit: %v\n%s", err, p.log)
	}
	log := p.log.String()
	if !strings.Contains(log, "flush: saving the unflushed changes") || !strings.Contains(log, "flush done") {
		t.Errorf("the log of a final flush of %d+ entries does not announce it:\n%s", bigFlush, log)
	}
}

// TestFollowFlush checks how a large flush is followed: on a terminal a
// spinner named after the flush, cleared at the end; elsewhere a log line
// every progressEvery; the log names the start and the end in both.
func TestFollowFlush(t *testing.T) {
	for _, tty := range []bool{true, false} {
		t.Run(fmt.Sprintf("tty=%v", tty), func(t *testing.T) {
			withProgress(t, 20*time.Millisecond, tty)
			var logBuf, term syncBuffer
			log := slog.New(slog.NewTextHandler(&logBuf, nil))
			end := followFlush(log, &term, "final", 12345)
			time.Sleep(300 * time.Millisecond) // several ticks of either kind
			end()
			logs := logBuf.String()
			if !strings.Contains(logs, "flush: saving the unflushed changes") || !strings.Contains(logs, "flush done") ||
				!strings.Contains(logs, "entries=12345") {
				t.Errorf("log:\n%s\nwant the start and the end with entries=12345", logs)
			}
			still := strings.Contains(logs, "flush: still saving")
			if tty {
				if !strings.Contains(term.String(), "flush: 12,345 entries") || still {
					t.Errorf("terminal %q, log lines 'still saving' %v; want a spinner named flush: 12,345 entries, and no such lines", term.String(), still)
				}
			} else if !still || term.String() != "" {
				t.Errorf("log:\n%s\nterminal %q; want 'still saving' lines in the log and nothing drawn", logs, term.String())
			}
		})
	}
}
