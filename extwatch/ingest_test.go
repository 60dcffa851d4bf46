package extwatch_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/extwatch"
	"github.com/memfs/memfs/internal/syncbuf"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/session"
)

// Fake secrets of two rules of package redact.
const (
	ghToken = "ghp_Q7wErT9yUi0pAs1dFg2hJk3lZx4cVb5nM6qW"
	awsKey  = "AKIAZK4QW7TR2MXV6PLN"
)

var secretNote = "deploy notes\ntoken " + ghToken + "\nkey " + awsKey + "\n"

// hookedStore is a directory store with hooks on Save and Stat.
type hookedStore struct {
	*dirstore.Store
	save  func(e backend.Entry) error // nil: the store's Save
	stat  func(key string)            // nil: nothing; runs before each Stat
	saves atomic.Int64                // Saves that reached the store
}

func (s *hookedStore) Save(ctx context.Context, entries ...backend.Entry) error {
	for _, e := range entries {
		if s.save != nil {
			if err := s.save(e); err != nil {
				return err
			}
		}
	}
	s.saves.Add(1)
	return s.Store.Save(ctx, entries...)
}

func (s *hookedStore) Stat(ctx context.Context, key string) (backend.Info, error) {
	if s.stat != nil {
		s.stat(key)
	}
	return s.Store.Stat(ctx, key)
}

// eventRecorder keeps the events the session hands to the event log.
type eventRecorder struct {
	mu  sync.Mutex // guards evs
	evs []session.Event
}

func (r *eventRecorder) record(_ context.Context, evs []session.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, evs...)
	return nil
}

func (r *eventRecorder) get() []session.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]session.Event(nil), r.evs...)
}

type ingestRig struct {
	dir  string
	st   *hookedStore
	c    *session.Context
	seen *processed       // what the watcher has processed, with the store's ctime then
	now  func() time.Time // the watcher's clock (Options.Now); nil: the real one
	ev   *eventRecorder
	logs *syncbuf.Buffer // the session's and the watcher's
}

// startIngest opens a directory store with the files given, a session
// with a redactor (or none, when redacting is false) over it, and a
// watcher without an applier; prepare may set hooks and change the
// session before the watch starts.
func startIngest(t *testing.T, redacting bool, files map[string]string, prepare func(r *ingestRig)) *ingestRig {
	t.Helper()
	dir := t.TempDir()
	ds, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	for k, v := range files {
		if err := ds.Save(t.Context(), backend.Entry{Key: k, Value: []byte(v), Info: backend.Info{Mode: 0o644}}); err != nil {
			t.Fatal(err)
		}
	}
	r := &ingestRig{dir: dir, st: &hookedStore{Store: ds}, ev: &eventRecorder{}, logs: &syncbuf.Buffer{}, seen: newProcessed()}
	log := slog.New(slog.NewTextHandler(r.logs, nil))
	opts := session.Options{Events: r.ev.record, Logger: log}
	if redacting {
		if opts.Redactor, err = redact.New(redact.Config{}); err != nil {
			t.Fatal(err)
		}
	}
	r.c = session.NewContext(r.st, opts)
	if err := r.c.Bootstrap(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(r)
	}
	w, err := extwatch.Start(r.st, r.c, extwatch.Options{Logger: log, Now: r.now, OnProcessed: func(key string) {
		r.seen.add(key, ctimeOf(r.path(key)))
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return r
}

func (r *ingestRig) path(key string) string { return filepath.Join(r.dir, filepath.FromSlash(key)) }

func (r *ingestRig) stored(key string) string {
	b, err := os.ReadFile(r.path(key))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

func (r *ingestRig) get(key string) string {
	v, _ := r.c.Get(key)
	return string(v)
}

func hasSecret(s string) bool {
	return strings.Contains(s, ghToken[:12]) || strings.Contains(s, awsKey[:12])
}

func redacted(s string) bool {
	return !hasSecret(s) && strings.Contains(s, "[REDACTED:github-token]") && strings.Contains(s, "[REDACTED:aws-access-key-id]")
}

// rewrites returns the events that record a redaction on ingest of key.
func (r *ingestRig) rewrites(key string) []session.Event {
	var out []session.Event
	for _, e := range r.ev.get() {
		if e.Key == key && e.Op == session.EventWrite && e.Writer.Agent == session.IngestAgent {
			out = append(out, e)
		}
	}
	return out
}

// settle waits for the watcher to have processed key while the store
// held what it holds now (its own rewrite come back, say): the version's
// ctime, read by the OnProcessed hook, is the one the file has now.
func (r *ingestRig) settle(t *testing.T, key string) {
	t.Helper()
	now := ctimeOf(r.path(key))
	if !r.seen.wait(key, now, 5*time.Second) {
		t.Fatalf("the watcher did not process %s as the store holds it now", key)
	}
}

// ctimeOf is the ctime of the node at p, or "" when there is none.
func ctimeOf(p string) string {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil {
		return ""
	}
	return fmt.Sprint(st.Ctim)
}

// A value with secrets that another program writes reaches the session
// redacted; the store file is rewritten redacted at once, once (the watcher
// takes the rewrite for memfs's own write), and the event log records it
// with the hash of what the store holds.
func TestIngestRedacts(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		dirty bool        // the session has an unflushed value of the key
		mode  os.FileMode // of the file the other program writes, kept by the rewrite
	}{
		{"new file", nil, false, 0o640},
		{"changed file", map[string]string{"memory/n.md": "clean before\n"}, false, 0o644},
		{"conflict with an unflushed value", map[string]string{"memory/n.md": "clean before\n"}, true, 0o644},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := startIngest(t, true, tt.files, func(r *ingestRig) {
				if tt.dirty {
					if err := r.c.Set("memory/n.md", []byte("mine\n")); err != nil {
						t.Fatal(err)
					}
				}
			})
			if err := os.MkdirAll(filepath.Dir(r.path("memory/n.md")), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(r.path("memory/n.md"), []byte(secretNote), 0o640); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the redacted store file", func() bool { return redacted(r.stored("memory/n.md")) })
			// What the session took in: the key's value, or the conflict copy.
			var taken string
			waitFor(t, "the value in the session", func() bool {
				for _, k := range r.c.Keys() {
					if v := r.get(k); strings.Contains(v, "deploy notes") {
						taken = v
						return true
					}
				}
				return false
			})
			if !redacted(taken) {
				t.Errorf("the session holds %q, want it redacted", taken)
			}
			if tt.dirty && r.get("memory/n.md") != "mine\n" {
				t.Errorf("the session's own value: got %q, want %q", r.get("memory/n.md"), "mine\n")
			}
			before, err := os.Stat(r.path("memory/n.md"))
			if err != nil {
				t.Fatal(err)
			}
			if got := before.Mode().Perm(); got != tt.mode {
				t.Errorf("the rewritten file's mode: got %v, want %v", got, tt.mode)
			}
			r.settle(t, "memory/n.md")
			if n := r.st.saves.Load(); n != 1 {
				t.Errorf("store saves: got %d, want 1 (the rewrite, and no loop)", n)
			}
			if after, _ := os.Stat(r.path("memory/n.md")); !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("the store file was written again after the rewrite: mtime %v, then %v", before.ModTime(), after.ModTime())
			}
			conflicts := 0
			for _, k := range r.c.Keys() {
				if strings.Contains(k, ".conflict-") {
					conflicts++
				}
			}
			if want := map[bool]int{false: 0, true: 1}[tt.dirty]; conflicts != want {
				t.Errorf("conflict copies: got %d, want %d", conflicts, want)
			}
			sum := sha256.Sum256([]byte(r.stored("memory/n.md")))
			evs := r.rewrites("memory/n.md")
			if len(evs) != 1 || evs[0].SHA256 != hex.EncodeToString(sum[:]) || evs[0].Size != int64(len(r.stored("memory/n.md"))) {
				t.Errorf("rewrite events: got %+v, want one with the stored value's size and hash", evs)
			}
			if !tt.dirty && r.c.Pending().Dirty("memory/n.md") {
				t.Error("the key is dirty: the store holds the redacted value already")
			}
			logs := r.logs.String()
			for _, rule := range []string{"github-token", "aws-access-key-id"} {
				if !strings.Contains(logs, "key=memory/n.md rule="+rule) {
					t.Errorf("log: got %q, want a line with the key and rule %s", logs, rule)
				}
			}
			if hasSecret(logs) {
				t.Errorf("log: got %q, want no secret", logs)
			}
		})
	}
}

// A binary value is redacted too (how is the redactor's business: it
// masks binary in place): the session and the store hold the same bytes,
// without the secret.
func TestIngestBinary(t *testing.T) {
	r := startIngest(t, true, nil, nil)
	blob := append([]byte("\x89PNG\x00\x00"), "token "+ghToken+" in a blob"...)
	if err := os.WriteFile(r.path("blob.bin"), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the blob in the session", func() bool { return r.c.Has("blob.bin") })
	if got := r.get("blob.bin"); hasSecret(got) || !strings.HasPrefix(got, "\x89PNG\x00\x00token ") {
		t.Errorf("the session holds %q, want the blob without the token", got)
	}
	if got, want := r.stored("blob.bin"), r.get("blob.bin"); got != want {
		t.Errorf("the store holds %q, want the session's %q", got, want)
	}
}

// A file whose name holds a secret is not taken in: not in the session,
// no event, not rewritten, and the log names the rule, not the name.
func TestIngestSecretName(t *testing.T) {
	r := startIngest(t, true, nil, nil)
	key := "memory/" + ghToken + ".md"
	if err := os.MkdirAll(r.path("memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.path(key), []byte("a clean note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.path("memory-marker.md"), []byte("after\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the file written after it", func() bool { return r.c.Has("memory-marker.md") })
	r.settle(t, key)
	if r.c.Has(key) {
		t.Error("a name with a secret entered the session")
	}
	if evs := r.ev.get(); len(evs) != 0 {
		t.Errorf("events: got %+v, want none", evs)
	}
	if got := r.stored(key); got != "a clean note\n" {
		t.Errorf("the file: got %q, want it untouched", got)
	}
	if logs := r.logs.String(); !strings.Contains(logs, "rule=github-token") || hasSecret(logs) {
		t.Errorf("log: got %q, want the rule and not the name", logs)
	}
}

// When the rewrite fails, the session still holds only the redacted value,
// unflushed, and the next flush puts it in the store.
func TestIngestRewriteFails(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	r := startIngest(t, true, nil, func(r *ingestRig) {
		r.st.save = func(backend.Entry) error {
			if fail.Load() {
				return errors.New("injected: disk full")
			}
			return nil
		}
	})
	if err := os.WriteFile(r.path("n.md"), []byte(secretNote), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the value in the session", func() bool { return r.c.Has("n.md") })
	if got := r.get("n.md"); !redacted(got) {
		t.Errorf("the session holds %q, want it redacted", got)
	}
	if !r.c.Pending().Dirty("n.md") {
		t.Error("the key is clean, but the store still holds the secret")
	}
	if evs := r.rewrites("n.md"); len(evs) != 0 {
		t.Errorf("rewrite events after a failed rewrite: got %+v, want none", evs)
	}
	fail.Store(false)
	if err := r.c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := r.stored("n.md"); !redacted(got) {
		t.Errorf("the store after the flush holds %q, want it redacted", got)
	}
}

// A version the other program writes between memfs's read and its rewrite
// is not lost under the rename: the rewrite is put off and the newer
// version ingested. The hook writes it at the rewrite's last look (the
// second Stat after the read: the first checks that the file settled).
func TestIngestRewriteYieldsToANewerWrite(t *testing.T) {
	const newer = "a newer, clean version\n"
	var looks atomic.Int64 // Stats of the file while it holds the secret
	r := startIngest(t, true, nil, nil)
	r.st.stat = func(key string) {
		if key != "n.md" {
			return
		}
		b, _ := os.ReadFile(r.path("n.md"))
		if !hasSecret(string(b)) {
			return
		}
		if looks.Add(1) == 3 { // process's first Stat, its settle check, rewrite's look
			os.WriteFile(r.path("n.md"), []byte(newer), 0o644)
		}
	}
	if err := os.WriteFile(r.path("n.md"), []byte(secretNote), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the newer version in the session", func() bool { return r.get("n.md") == newer })
	r.settle(t, "n.md")
	if got := r.stored("n.md"); got != newer {
		t.Errorf("the store: got %q, want the newer version %q", got, newer)
	}
	if n := r.st.saves.Load(); n != 0 {
		t.Errorf("store saves: got %d, want 0 (nothing to redact in the newer version)", n)
	}
}

// Without a redactor (--no-redact) values are taken in as written: no
// rewrite, no event.
func TestIngestWithoutRedactor(t *testing.T) {
	r := startIngest(t, false, nil, nil)
	if err := os.WriteFile(r.path("n.md"), []byte(secretNote), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the value in the session", func() bool { return r.get("n.md") == secretNote })
	r.settle(t, "n.md")
	if n := r.st.saves.Load(); n != 0 {
		t.Errorf("store saves: got %d, want 0", n)
	}
	if evs := r.ev.get(); len(evs) != 0 {
		t.Errorf("events: got %+v, want none", evs)
	}
}

// The mtime of a file rewritten redacted is the Watcher's clock
// (Options.Now): memfs did change it.
func TestIngestRewriteUsesTheClock(t *testing.T) {
	at := time.Date(2031, 2, 3, 4, 5, 6, 7, time.UTC)
	r := startIngest(t, true, nil, func(r *ingestRig) { r.now = func() time.Time { return at } })
	if err := os.WriteFile(r.path("n.md"), []byte(secretNote), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the redacted store file", func() bool { return redacted(r.stored("n.md")) })
	fi, err := os.Stat(r.path("n.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !fi.ModTime().Equal(at) {
		t.Errorf("the rewritten file's mtime: got %v, want the clock's %v", fi.ModTime(), at)
	}
}
