package extwatch_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/extwatch"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/syncbuf"
	"github.com/memfs/memfs/session"
)

// TestMain lets the test binary be the helper process: with
// EXTWATCH_TEST_HELPER set to a directory, it runs RunHelper there (set to
// "last-arg", in its last argument, as SelfHelper's command names it).
func TestMain(m *testing.M) {
	if dir := os.Getenv("EXTWATCH_TEST_HELPER"); dir != "" {
		if dir == "last-arg" {
			dir = os.Args[len(os.Args)-1]
		}
		if err := extwatch.RunHelper(dir, os.Stdin, os.Stdout, slog.New(slog.NewTextHandler(os.Stderr, nil))); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRunHelper runs the helper's side on a plain directory (the kernel's
// part, a FUSE mount, is tested by cmd/memfs): creates with their mode,
// touches that change nothing (and never block on a fifo), removals, and a
// bad request passed over.
func TestRunHelper(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "kept.md"), []byte("kept"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "gone.md"), []byte("x"), 0o644)
	var logged bytes.Buffer
	in := strings.Join([]string{
		`{"op":"create","key":"deep/new/a.md","mode":384}`,
		`not json`,
		`{"op":"touch","key":"kept.md"}`,
		`{"op":"touch","key":"kept.md"}`,
		`{"op":"touch","key":"fifo"}`,
		`{"op":"remove","key":"gone.md"}`,
		`{"op":"frobnicate","key":"kept.md"}`,
	}, "\n") + "\n"
	if err := extwatch.RunHelper(dir, strings.NewReader(in), io.Discard, slog.New(slog.NewTextHandler(&logged, nil))); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "deep/new/a.md")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("create: %v, %v; want a file of mode 0600", fi, err)
	}
	if v, _ := os.ReadFile(filepath.Join(dir, "kept.md")); string(v) != "kept" {
		t.Errorf("touches changed the file: %q", v)
	}
	if _, err := os.Stat(filepath.Join(dir, "gone.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("remove: the file is still there (%v)", err)
	}
	// Three failures logged: the bad request, the fifo (ENXIO: no reader,
	// and never a wait for one) and the unknown op.
	if got := strings.Count(logged.String(), "\n"); got != 3 || !strings.Contains(logged.String(), "bad request") ||
		!strings.Contains(logged.String(), "key=fifo") || !strings.Contains(logged.String(), "frobnicate") {
		t.Errorf("logged %d lines, want the bad request, the fifo and the unknown op:\n%s", got, logged.String())
	}
}

// TestStartHelper runs the serving side with a real helper process (this
// test binary): its changes are carried out, Close waits for them, and once
// the process has exited Exited is closed and every send fails.
func TestStartHelper(t *testing.T) {
	dir := t.TempDir()
	start := func() *extwatch.Helper {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "EXTWATCH_TEST_HELPER="+dir)
		h, err := extwatch.StartHelper(cmd)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	h := start()
	if err := h.Create("memory/a.md", 0o640); err != nil {
		t.Fatal(err)
	}
	// Expire waits for the unlink, and returns its outcome.
	os.WriteFile(filepath.Join(dir, "due.md"), []byte("x"), 0o644)
	if err := h.Expire("due.md"); err != nil {
		t.Fatalf("Expire of a file there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "due.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Expire returned before the unlink: %v", err)
	}
	if err := h.Expire("due.md"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("Expire of a file gone: %v, want the unlink's error", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "memory/a.md")); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("after Close: %v, %v; want the file created", fi, err)
	}
	h.Close() // again: nothing

	h = start()
	defer h.Close()
	p, err := os.FindProcess(h.PID())
	if err != nil {
		t.Fatal(err)
	}
	p.Kill()
	select {
	case <-h.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("Exited not closed after the helper was killed")
	}
	if err := h.Remove("memory/a.md"); !errors.Is(err, extwatch.ErrHelperExited) {
		t.Fatalf("Remove after the helper exited = %v, want ErrHelperExited", err)
	}
	if err := h.Expire("memory/a.md"); !errors.Is(err, extwatch.ErrHelperExited) {
		t.Fatalf("Expire after the helper exited = %v, want ErrHelperExited", err)
	}
}

// fakeApplier records what it is sent and carries nothing out; fail makes
// every call fail.
type fakeApplier struct {
	mu     sync.Mutex // guards ops
	ops    []string
	fail   error
	exited chan struct{}
}

func (a *fakeApplier) record(op string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ops = append(a.ops, op)
	return a.fail
}

func (a *fakeApplier) Mkdir(key string, _ fs.FileMode) error  { return a.record("mkdir " + key) }
func (a *fakeApplier) Create(key string, _ fs.FileMode) error { return a.record("create " + key) }
func (a *fakeApplier) Touch(key string) error                 { return a.record("touch " + key) }
func (a *fakeApplier) Attr(key string) error                  { return a.record("attr " + key) }
func (a *fakeApplier) Remove(key string) error                { return a.record("remove " + key) }

func (a *fakeApplier) calls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.ops...)
}

// exitingApplier is a fakeApplier with an Exited channel, as a Helper has.
type exitingApplier struct{ *fakeApplier }

func (a exitingApplier) Exited() <-chan struct{} { return a.exited }

func startWatched(t *testing.T, opts extwatch.Options) (dir string, c *session.Context) {
	t.Helper()
	dir = t.TempDir()
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	st.Save(t.Context(), backend.Entry{Key: "memory/old.md", Value: []byte("old"), Info: backend.Info{Mode: 0o644}})
	c = session.NewContext(st, session.Options{})
	if err := c.Bootstrap(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	w, err := extwatch.Start(st, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return dir, c
}

// TestHelperFailureFallsBack checks that changes the helper cannot take
// (its sends fail) reach the session directly, that the failure is logged
// once, and that the helper is not asked again.
func TestHelperFailureFallsBack(t *testing.T) {
	app := &fakeApplier{fail: errors.New("broken pipe")}
	var logged syncbuf.Buffer
	dir, c := startWatched(t, extwatch.Options{Applier: app, Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	get := func(k string) string { v, _ := c.Get(k); return string(v) }

	os.WriteFile(filepath.Join(dir, "memory/new.md"), []byte("external"), 0o644)
	waitFor(t, "the new file in the session", func() bool { return get("memory/new.md") == "external" })
	if c.Pending().Dirty("memory/new.md") {
		t.Error("the external value is dirty")
	}
	os.WriteFile(filepath.Join(dir, "memory/second.md"), []byte("second"), 0o644)
	waitFor(t, "a second new file in the session", func() bool { return get("memory/second.md") == "second" })
	os.Remove(filepath.Join(dir, "memory/old.md"))
	waitFor(t, "a removal in the session", func() bool { return !c.Has("memory/old.md") })

	if got := app.calls(); len(got) != 1 {
		t.Errorf("the helper was asked %v; want one create, then nothing", got)
	}
	if n := strings.Count(logged.String(), "the mount helper failed"); n != 1 {
		t.Errorf("the failure logged %d times, want once:\n%s", n, logged.String())
	}
	// Nothing announced is left to capture a user's create.
	if _, ok, _ := c.External().CreateAnnounced(t.Context(), "memory/new.md"); ok {
		t.Error("an announcement was left behind")
	}
}

// TestHelperExitFallsBack checks that changes sent to a helper that then
// exits without carrying them out reach the session as soon as it exits,
// and later ones directly.
func TestHelperExitFallsBack(t *testing.T) {
	app := exitingApplier{&fakeApplier{exited: make(chan struct{})}}
	dir, c := startWatched(t, extwatch.Options{Applier: app})
	get := func(k string) string { v, _ := c.Get(k); return string(v) }

	os.WriteFile(filepath.Join(dir, "memory/new.md"), []byte("external"), 0o644)
	waitFor(t, "the create sent to the helper", func() bool { return len(app.calls()) == 1 })
	if c.Has("memory/new.md") {
		t.Fatal("the change reached the session before the helper's create")
	}
	close(app.exited)
	waitFor(t, "the sent create in the session after the helper exited", func() bool { return get("memory/new.md") == "external" })
	os.Remove(filepath.Join(dir, "memory/old.md"))
	waitFor(t, "a later removal in the session", func() bool { return !c.Has("memory/old.md") })
	if got := app.calls(); len(got) != 1 {
		t.Errorf("the helper was asked %v after it exited", got)
	}
}

// TestHelperTimeoutFallsBack checks that a change the helper took but never
// carried out (its request failed in the mount) reaches the session once
// its announcement expires, and then watchers too: the helper, still
// there, is asked to touch it (an inotify event, no change).
func TestHelperTimeoutFallsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits for session.AnnounceTTL")
	}
	app := &fakeApplier{}
	dir, c := startWatched(t, extwatch.Options{Applier: app})
	os.WriteFile(filepath.Join(dir, "memory/new.md"), []byte("external"), 0o644)
	waitFor(t, "the create sent to the helper", func() bool { return len(app.calls()) == 1 })
	if !await.Cond(session.AnnounceTTL+5*time.Second, 20*time.Millisecond, func() bool { return c.Has("memory/new.md") }) {
		t.Fatalf("the change never reached the session (helper asked %v)", app.calls())
	}
	waitFor(t, "the helper asked to show the change", func() bool { return slices.Contains(app.calls(), "touch memory/new.md") })
}

// TestSelfHelper runs SelfHelper's command, this test binary with its
// arguments and then the mountpoint (a plain directory here), as the
// helper: the change it is sent is carried out there, and its standard
// error is the one given.
func TestSelfHelper(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("EXTWATCH_TEST_HELPER", "last-arg")
	var stderr bytes.Buffer
	cmd := extwatch.SelfHelper([]string{"-test.run=^$"}, &stderr, slog.New(slog.DiscardHandler))(dir)
	if got, want := cmd.Args[1:], []string{"-test.run=^$", dir}; !slices.Equal(got, want) {
		t.Errorf("got arguments %q, want %q", got, want)
	}
	if cmd.Stderr != &stderr {
		t.Errorf("got stderr %v, want the writer given", cmd.Stderr)
	}
	h, err := extwatch.StartHelper(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Create("a.md", 0o600); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "a.md")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("got %v, %v; want a.md made by the helper, mode 0600", fi, err)
	}
}
