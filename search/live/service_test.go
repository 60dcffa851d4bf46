package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/search"
	"github.com/memfs/memfs/search/internal/searchtest"
	"github.com/memfs/memfs/session"
)

// testRedactor redacts searchtest.Secret (rule "test") and nothing else.
func testRedactor(t *testing.T) *redact.Redactor {
	t.Helper()
	red, err := redact.New(redact.Config{NoBuiltin: true, Env: []string{},
		Extra: []redact.Rule{{ID: "test", Pattern: searchtest.SecretRE.String(), Keywords: []string{"tok_"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return red
}

// svcEnv is a session over a memory store with a Service following it
// (through a Lazy, as memfs wires it).
type svcEnv struct {
	st   *searchtest.MemSys
	c    *session.Context
	lazy *Lazy
	opts ServiceOptions
}

// newSvcEnv opens a session over st (a new store when nil) whose search
// index opens with opts (Redactor defaults to testRedactor) at first use.
func newSvcEnv(t *testing.T, st *searchtest.MemSys, opts ServiceOptions) *svcEnv {
	t.Helper()
	if st == nil {
		st = searchtest.NewMemSys()
	}
	if opts.Redactor == nil {
		opts.Redactor = testRedactor(t)
	}
	e := &svcEnv{st: st, opts: opts}
	e.lazy = NewLazy(nil, func(ctx context.Context) (*Service, error) {
		return OpenService(ctx, e.c, e.st, e.opts)
	})
	e.c = session.NewContext(st, session.Options{Saved: e.lazy.Saved})
	if err := e.c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.lazy.Close(context.Background()) })
	return e
}

// svc opens (or returns) the Service.
func (e *svcEnv) svc(t *testing.T) *Service {
	t.Helper()
	s, err := e.lazy.Get(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// put writes key (unflushed) as a regular file with mode and owner uid.
func (e *svcEnv) put(t *testing.T, key, value string, mode fs.FileMode, uid uint32) {
	t.Helper()
	err := e.c.Put(backend.Entry{Key: key, Value: []byte(value),
		Info: backend.Info{Mode: mode, UID: uid, MTime: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *svcEnv) flush(t *testing.T) {
	t.Helper()
	if err := e.c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

var (
	credOwner = session.Cred{UID: 1000, GIDs: []uint32{1000}}
	credOther = session.Cred{UID: 2000, GIDs: []uint32{2000}}
)

// found searches text for cr and returns the keys of the results, sorted
// (after checking that the results are ordered by score, then key).
func found(t *testing.T, s *Service, cr session.Cred, text string, topK int) []string {
	t.Helper()
	res, err := s.Search(session.WithCred(t.Context(), cr), search.Query{Text: text, TopK: topK})
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for i, r := range res {
		if i > 0 && (r.Score > res[i-1].Score || r.Score == res[i-1].Score && r.Key < res[i-1].Key) {
			t.Errorf("search %q: %+v before %+v", text, res[i-1], r)
		}
		ks = append(ks, r.Key)
	}
	slices.Sort(ks)
	return ks
}

// TestServiceOverlay: unflushed writes and removals are searched at once;
// a flushed value is found in the base index; the order is score, then key.
func TestServiceOverlay(t *testing.T) {
	e := newSvcEnv(t, nil, ServiceOptions{})
	e.put(t, "memory/a.md", "the wombat digs", 0o644, 1000)
	e.put(t, "memory/b.md", "the wombat digs a burrow", 0o644, 1000)
	e.flush(t)
	s := e.svc(t)
	e.put(t, "memory/c.md", "the wombat digs", 0o644, 1000) // unflushed, scores as a.md
	if got, want := strings.Join(found(t, s, credOwner, "wombat digs", 0), " "), "memory/a.md memory/b.md memory/c.md"; got != want {
		t.Errorf("search: got %s, want %s", got, want)
	}
	if err := e.c.Delete("memory/a.md"); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Set("memory/b.md", []byte("now about a numbat")); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(found(t, s, credOwner, "wombat", 0), " "), "memory/c.md"; got != want {
		t.Errorf("after unflushed delete and rewrite: got %s, want %s", got, want)
	}
	if got, want := strings.Join(found(t, s, credOwner, "numbat", 0), " "), "memory/b.md"; got != want {
		t.Errorf("unflushed rewrite: got %s, want %s", got, want)
	}
	e.flush(t)
	if got, want := strings.Join(found(t, s, credOwner, "wombat", 0), " "), "memory/c.md"; got != want {
		t.Errorf("after the flush: got %s, want %s", got, want)
	}
	if _, err := s.Search(t.Context(), search.Query{Text: "wombat"}); !errors.Is(err, ErrNoCaller) {
		t.Errorf("search without a caller: got %v, want ErrNoCaller", err)
	}
}

// TestServiceReadable: a caller gets only hits it may read, and still
// TopK of them when the best hits are others'.
func TestServiceReadable(t *testing.T) {
	e := newSvcEnv(t, nil, ServiceOptions{})
	// The private notes score best (shorter) in the base: another user's
	// best 3 come after all of them.
	for _, k := range []string{"p1", "p2", "p3", "p4", "p5"} {
		e.put(t, "private/"+k+".md", "quokka", 0o600, 1000)
	}
	e.put(t, "public/x.md", "quokka on an island far away", 0o644, 1000)
	e.put(t, "public/y.md", "quokka on an island far far away", 0o644, 1000)
	e.flush(t)
	s := e.svc(t)
	e.put(t, "private/p6.md", "quokka", 0o600, 1000)
	e.put(t, "public/z.md", "quokka on an island far far far away", 0o644, 1000)
	if got, want := strings.Join(found(t, s, credOther, "quokka", 3), " "), "public/x.md public/y.md public/z.md"; got != want {
		t.Errorf("another user: got %s, want %s", got, want)
	}
	if got := found(t, s, credOwner, "quokka", 3); len(got) != 3 || !strings.HasPrefix(got[0], "private/") {
		t.Errorf("the owner: got %v, want 3 hits, private ones among them", got)
	}
}

// TestServiceNeverPersistsSecrets: neither an unflushed value nor a flushed
// one (stored as written: this session does not redact) reaches the index
// records with its secret; snippets show it redacted.
func TestServiceNeverPersistsSecrets(t *testing.T) {
	e := newSvcEnv(t, nil, ServiceOptions{SaveDelay: time.Millisecond})
	s := e.svc(t)
	e.put(t, "memory/unflushed.md", "wombat key "+searchtest.Secret, 0o644, 1000)
	res, err := s.Search(session.WithCred(t.Context(), credOwner), search.Query{Text: "wombat"})
	if err != nil || len(res) != 1 || strings.Contains(res[0].Snippet, searchtest.Secret) || !strings.Contains(res[0].Snippet, "[REDACTED:test]") {
		t.Errorf("unflushed: got %+v, %v; want one hit with the secret redacted", res, err)
	}
	if name := searchtest.SecretIn(t, e.st); name != "" {
		t.Errorf("an unflushed secret reached record %s", name)
	}
	e.put(t, "memory/flushed.md", "numbat key "+searchtest.Secret, 0o644, 1000)
	e.flush(t)
	if err := e.lazy.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(e.st.Records(t)) == 0 {
		t.Fatal("no index record saved: the check proves nothing")
	}
	if name := searchtest.SecretIn(t, e.st); name != "" {
		t.Errorf("a flushed secret reached record %s", name)
	}
	if _, err := OpenService(t.Context(), e.c, e.st, ServiceOptions{}); err == nil {
		t.Error("OpenService without a redactor succeeded")
	}
}

// shardHolds reports whether the shard record of key holds word.
func shardHolds(t *testing.T, st *searchtest.MemSys, key, word string) bool {
	t.Helper()
	return bytes.Contains(st.Rec(t, search.ShardName(search.ShardOf(key))), []byte(word))
}

// TestServiceSaveDelay: a flush reaches the records SaveDelay later, in
// the worker; Close saves what is not saved yet.
func TestServiceSaveDelay(t *testing.T) {
	for _, tt := range []struct {
		name  string
		delay time.Duration
	}{{"worker", 300 * time.Millisecond}, {"close", time.Hour}} {
		t.Run(tt.name, func(t *testing.T) {
			e := newSvcEnv(t, nil, ServiceOptions{SaveDelay: tt.delay})
			e.svc(t)
			e.put(t, "memory/a.md", "bandicoot", 0o644, 1000)
			e.flush(t)
			if shardHolds(t, e.st, "memory/a.md", "bandicoot") {
				t.Fatal("saved at once, not after the delay")
			}
			if tt.delay == time.Hour {
				if err := e.lazy.Close(t.Context()); err != nil {
					t.Fatal(err)
				}
			} else {
				time.Sleep(tt.delay / 10)
				if shardHolds(t, e.st, "memory/a.md", "bandicoot") {
					t.Fatal("saved before the delay")
				}
			}
			if !await.Cond(5*time.Second, 20*time.Millisecond, func() bool { return shardHolds(t, e.st, "memory/a.md", "bandicoot") }) {
				t.Fatal("not saved")
			}
		})
	}
}

// TestServiceRepairAndRebuild: at open, a value changed, added or removed
// behind the index is indexed again or dropped; a corrupt index is
// rebuilt; Rebuild rebuilds from every value.
func TestServiceRepairAndRebuild(t *testing.T) {
	st := searchtest.NewMemSys()
	e := newSvcEnv(t, st, ServiceOptions{})
	e.put(t, "memory/a.md", "wombat", 0o644, 1000)
	e.put(t, "memory/b.md", "wombat", 0o644, 1000)
	e.put(t, "memory/c.md", "wombat", 0o644, 1000)
	e.flush(t)
	if s := e.svc(t); s.Repaired() != 3 {
		t.Errorf("first open: Repaired() = %d, want 3", s.Repaired())
	}
	if err := e.lazy.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Behind the index: a changed, a removed and a new value.
	later := time.Now().Add(time.Hour)
	if err := st.Save(t.Context(),
		backend.Entry{Key: "memory/a.md", Value: []byte("a numbat"), Info: backend.Info{Mode: 0o644, MTime: later}},
		backend.Entry{Key: "memory/d.md", Value: []byte("numbat"), Info: backend.Info{Mode: 0o644, MTime: later}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(t.Context(), "memory/b.md"); err != nil {
		t.Fatal(err)
	}
	// Each open finds 3 to index or drop: a, d and b in the repair, and
	// every value (a, c, d) in a rebuild.
	for _, tt := range []struct {
		name    string
		damage  func()
		rebuild bool
	}{
		{"repair", func() {}, false},
		{"corrupt", func() { st.Put(t, search.ShardName(search.ShardOf("memory/c.md")), []byte("garbage")) }, false},
		{"rebuild", func() {}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.damage()
			e := newSvcEnv(t, st, ServiceOptions{Rebuild: tt.rebuild})
			s := e.svc(t)
			if s.Repaired() != 3 {
				t.Errorf("Repaired() = %d, want 3", s.Repaired())
			}
			if got, want := strings.Join(found(t, s, credOwner, "numbat", 0), " "), "memory/a.md memory/d.md"; got != want {
				t.Errorf("numbat: got %s, want %s", got, want)
			}
			if got, want := strings.Join(found(t, s, credOwner, "wombat", 0), " "), "memory/c.md"; got != want {
				t.Errorf("wombat: got %s, want %s", got, want)
			}
			if err := e.lazy.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestServiceExternal: a change another program made in the store, applied
// to the session, reaches the index through the watch, until Close.
func TestServiceExternal(t *testing.T) {
	e := newSvcEnv(t, nil, ServiceOptions{})
	s := e.svc(t)
	ext := backend.Entry{Key: "memory/ext.md", Value: []byte("a platypus"), Info: backend.Info{Mode: 0o644, MTime: time.Now()}}
	if err := e.st.Save(t.Context(), ext); err != nil {
		t.Fatal(err)
	}
	got, err := e.st.Load(t.Context(), ext.Key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.External().Apply(got[0]); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(found(t, s, credOwner, "platypus", 0), " "), "memory/ext.md"; got != want {
		t.Errorf("after an external write: got %s, want %s", got, want)
	}
	if _, err := e.c.External().Remove(ext.Key); err != nil {
		t.Fatal(err)
	}
	if got := found(t, s, credOwner, "platypus", 0); len(got) != 0 {
		t.Errorf("after an external remove: got %v, want nothing", got)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.External().Apply(got[0]); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	n := len(s.pending)
	s.mu.Unlock()
	if n != 0 {
		t.Errorf("after Close: %d changes queued, want none (the watch is stopped, Saved does nothing)", n)
	}
}

// TestServiceAnswer: text blocks with names as names.Show prints them, or
// JSON lines with format:json.
func TestServiceAnswer(t *testing.T) {
	e := newSvcEnv(t, nil, ServiceOptions{})
	e.put(t, "memory/echidna.md", "an echidna lays eggs", 0o644, 1000)
	e.put(t, `"odd name.md`, "another echidna", 0o644, 1000)
	ctx := session.WithCred(t.Context(), credOwner)
	text, err := e.lazy.File(ctx, "echidna")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "memory/echidna.md  score ") || !strings.Contains(string(text), "\n  an echidna lays eggs\n\n") ||
		!strings.Contains(string(text), `"\"odd name.md"  score `) {
		t.Errorf("text answer: %q", text)
	}
	js, err := e.lazy.File(ctx, "echidna%20format:json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(js)), "\n")
	var r Result
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &r) != nil || r.Key == "" || r.Snippet == "" {
		t.Errorf("JSON answer: %q", js)
	}
	if _, err := e.lazy.File(ctx, "x%zz"); err == nil {
		t.Error("a name that does not decode was answered")
	}
}

// TestLazy: one open for concurrent callers, tried again after a failure,
// none after Close; Saved before the open is dropped (the open repairs).
func TestLazy(t *testing.T) {
	st := searchtest.NewMemSys()
	c := session.NewContext(st, session.Options{})
	var opens atomic.Int32
	var starting sync.WaitGroup // the concurrent callers, until each calls Get
	fail := errors.New("no")
	failing := true
	l := NewLazy(nil, func(ctx context.Context) (*Service, error) {
		opens.Add(1)
		if failing {
			return nil, fail
		}
		starting.Wait() // the open lasts until every caller has come: the others wait for this one
		return OpenService(ctx, c, st, ServiceOptions{Redactor: testRedactor(t)})
	})
	l.Saved(t.Context(), []backend.Entry{{Key: "a"}}, nil) // nothing open: dropped
	if _, err := l.Get(t.Context()); !errors.Is(err, fail) {
		t.Fatalf("failing open: got %v, want %v", err, fail)
	}
	failing = false
	var wg sync.WaitGroup
	got := make([]*Service, 8)
	starting.Add(len(got))
	for i := range got {
		wg.Go(func() {
			starting.Done()
			s, err := l.Get(t.Context())
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		})
	}
	wg.Wait()
	if n := opens.Load(); n != 2 {
		t.Errorf("opens: got %d, want 2 (the failed one and one for 8 callers)", n)
	}
	for _, s := range got {
		if s != got[0] || s == nil {
			t.Fatalf("callers got different Services: %v", got)
		}
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(t.Context()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	closed := NewLazy(nil, func(context.Context) (*Service, error) {
		t.Error("opened after Close")
		return nil, fail
	})
	closed.Close(t.Context())
	if _, err := closed.File(t.Context(), "x"); !errors.Is(err, ErrClosed) {
		t.Errorf("Answer after Close: got %v, want ErrClosed", err)
	}
}

// A flush that lands while the index is being opened (after its repair
// read the store, before the Service is published) is indexed: Lazy keeps
// it for the Service it is opening. (It was dropped: the key stayed stale
// in search until the next open.)
func TestLazySavedDuringOpen(t *testing.T) {
	st := searchtest.NewMemSys()
	repaired := make(chan struct{})
	proceed := make(chan struct{})
	e := newSvcEnv(t, st, ServiceOptions{})
	e.lazy = NewLazy(nil, func(ctx context.Context) (*Service, error) {
		s, err := OpenService(ctx, e.c, e.st, e.opts)
		close(repaired)
		<-proceed
		return s, err
	})
	// The session's Saved hook is the first Lazy's: point it at this one.
	e.c = session.NewContext(st, session.Options{Saved: e.lazy.Saved})
	if err := e.c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.lazy.Close(context.Background()) })
	e.put(t, "memory/a.md", "before", 0o644, credOwner.UID)
	e.flush(t)
	opened := make(chan *Service)
	go func() {
		s, err := e.lazy.Get(context.Background())
		if err != nil {
			t.Error(err)
		}
		opened <- s
	}()
	<-repaired
	e.put(t, "memory/a.md", "afterwards", 0o644, credOwner.UID)
	e.flush(t)
	close(proceed)
	s := <-opened
	if got := found(t, s, credOwner, "afterwards", 10); !slices.Equal(got, []string{"memory/a.md"}) {
		t.Errorf("search for the value flushed during the open: %v, want memory/a.md", got)
	}
	if got := found(t, s, credOwner, "before", 10); len(got) != 0 {
		t.Errorf("search for the value replaced during the open: %v, want nothing", got)
	}
}

// An open is shared by every caller waiting on it, so the caller that
// starts it does not cancel it: a FUSE request is canceled by any signal
// to the reading thread (the Go runtime's SIGURG too), and an interrupted
// search during an etcd outage logged "context canceled" with advice to
// reindex instead of the outage. A failure that is only a cancellation
// does not advise a reindex either.
func TestLazyOpenOutlivesTheCallersCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var seen error
	l := NewLazy(nil, func(ctx context.Context) (*Service, error) {
		seen = ctx.Err()
		return nil, backend.ErrUnavailable
	})
	if _, err := l.Get(ctx); !errors.Is(err, backend.ErrUnavailable) {
		t.Fatalf("Get: %v", err)
	}
	if seen != nil {
		t.Errorf("the open ran with the caller's cancellation: %v", seen)
	}
	var log strings.Builder
	l = NewLazy(slog.New(slog.NewTextHandler(&log, nil)), nil)
	l.LogOpenError(fmt.Errorf("search: list shards: %w", context.Canceled))
	if strings.Contains(log.String(), "reindex") {
		t.Errorf("a canceled open advises a reindex: %s", log.String())
	}
}

// Close cancels an open under way rather than waiting for it: the open
// no longer takes its caller's cancellation (a signal), so an unmount
// during a long index repair waited for the whole repair.
func TestLazyCloseCancelsAnOpen(t *testing.T) {
	started := make(chan struct{})
	l := NewLazy(nil, func(ctx context.Context) (*Service, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	got := make(chan error, 1)
	go func() {
		_, err := l.Get(t.Context())
		got <- err
	}()
	<-started
	closed := make(chan error, 1)
	go func() { closed <- l.Close(t.Context()) }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waits for the open 10 s later")
	}
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Errorf("the canceled open: %v", err)
	}
}

// A conflict copy ranks below its original, however better its words
// match: it is one side of a conflict nobody has resolved yet.
func TestServiceRanksConflictCopiesBelowTheOriginal(t *testing.T) {
	e := newSvcEnv(t, nil, ServiceOptions{})
	e.put(t, "memory/a.md", "the wombat digs", 0o644, 1000)
	e.put(t, backend.ConflictKeyBy("memory/a.md", "coder", time.Unix(1000, 0)), "the wombat digs, wombat wombat", 0o644, 1000)
	e.put(t, "memory/z.md", "a wombat", 0o644, 1000)
	e.flush(t)
	s := e.svc(t)
	res, err := s.Search(session.WithCred(t.Context(), credOwner), search.Query{Text: "wombat"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, r := range res {
		got = append(got, r.Key)
		if i > 0 && r.Score > res[i-1].Score {
			t.Errorf("%s scores %v, above %s before it (%v)", r.Key, r.Score, res[i-1].Key, res[i-1].Score)
		}
	}
	i := slices.Index(got, "memory/a.md")
	if len(got) != 3 || i < 0 || i+1 >= len(got) || !strings.HasPrefix(got[i+1], "memory/a.conflict-coder-") {
		t.Errorf("search wombat: got %v, want memory/a.md, then its conflict copy right below it", got)
	}
}

// A new branch's search reads its parent's memory while the branch has
// none the caller may read: a repo.json the caller may not read is none,
// so which memory is searched says nothing of what it may not see.
func TestServiceRepoParentPerCaller(t *testing.T) {
	const branch, parent = "bbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaa"
	e := newSvcEnv(t, nil, ServiceOptions{})
	e.put(t, "repos/"+parent+"/repo.json", `{"hash":"`+parent+`"}`, 0o644, 1000)
	e.put(t, "repos/"+parent+"/notes/a.md", "the wombat digs", 0o644, 1000)
	e.put(t, "repos/"+branch+"/repo.json", `{"hash":"`+branch+`"}`, 0o600, 1000)
	e.put(t, "repos/"+branch+"/notes/b.md", "the wombat sleeps", 0o600, 1000)
	e.flush(t)
	s := e.svc(t)
	q := search.Query{Text: "wombat", Repo: branch, RepoParents: []string{parent}}
	for _, c := range []struct {
		cr   session.Cred
		want string
	}{{credOwner, "repos/" + branch + "/notes/b.md"}, {credOther, "repos/" + parent + "/notes/a.md"}} {
		res, err := s.Search(session.WithCred(t.Context(), c.cr), q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res {
			got = append(got, r.Key)
		}
		if !slices.Equal(got, []string{c.want}) {
			t.Errorf("uid %d: %v, want %s", c.cr.UID, got, c.want)
		}
	}
}

// TestServiceWorkingMemory: working memory (a mount's mem: routes) is
// searched from the session, flushed or not, and never enters the
// persisted index; of two hits with one score, working memory's comes
// first (the tie rule), whatever the keys' order; tier: keeps one tier.
func TestServiceWorkingMemory(t *testing.T) {
	st := searchtest.NewMemSys()
	e := newSvcEnv(t, st, ServiceOptions{Working: []string{"zscratch/"}})
	s := e.svc(t)
	e.put(t, "memory/a.md", "the wombat digs", 0o644, 1000)
	e.put(t, "zscratch/a.md", "the wombat digs", 0o644, 1000) // scores as memory/a.md, sorts after it by key
	for _, flushed := range []bool{false, true} {
		if flushed {
			e.put(t, "memory/b.md", "the wombat digs", 0o644, 1000) // a third, unflushed, so that the two tie again
			e.flush(t)
			e.put(t, "memory/b.md", "the wombat digs", 0o644, 1000)
		}
		res, err := s.Search(session.WithCred(t.Context(), credOwner), search.Query{Text: "wombat digs"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) < 2 || res[0].Key != "zscratch/a.md" {
			t.Fatalf("flushed %v: %+v, want zscratch/a.md first", flushed, res)
		}
		for _, tier := range []string{search.TierWorking, search.TierPersistent} {
			res, err := s.Search(session.WithCred(t.Context(), credOwner), search.Query{Text: "wombat", Tier: tier})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if strings.HasPrefix(r.Key, "zscratch/") != (tier == search.TierWorking) {
					t.Errorf("flushed %v: tier:%s gave %s", flushed, tier, r.Key)
				}
			}
			if len(res) == 0 {
				t.Errorf("flushed %v: tier:%s found nothing", flushed, tier)
			}
		}
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if shardHolds(t, st, "zscratch/a.md", "wombat") {
		t.Error("working memory entered the persisted index")
	}
	if !shardHolds(t, st, "memory/a.md", "wombat") {
		t.Error("the control failed: memory/a.md is not in the persisted index")
	}
}

// TestServiceTiersAndRoutes: with a mount's routes, hits of one score
// come working memory first and an indexed source last, whatever the
// keys' order; route: and tier: keep one route, one tier.
func TestServiceTiersAndRoutes(t *testing.T) {
	where := func(key string) (string, string) {
		switch {
		case strings.HasPrefix(key, "zscratch/"):
			return "zscratch/", search.TierWorking
		case strings.HasPrefix(key, "archive/"):
			return "archive/", search.TierIndexed
		}
		return "default", search.TierPersistent
	}
	e := newSvcEnv(t, searchtest.NewMemSys(), ServiceOptions{Working: []string{"zscratch/"}, Route: where})
	s := e.svc(t)
	for _, k := range []string{"archive/a.md", "memory/a.md", "zscratch/a.md"} {
		e.put(t, k, "the wombat digs", 0o644, 1000)
	}
	e.flush(t)
	search1 := func(q search.Query) []string {
		t.Helper()
		res, err := s.Search(session.WithCred(t.Context(), credOwner), q)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		score := map[string]float64{}
		for _, r := range res {
			keys = append(keys, r.Key)
			score[r.Key] = r.Score
		}
		if a, ok := score["archive/a.md"]; ok && score["memory/a.md"] != 0 && a != score["memory/a.md"] {
			t.Fatalf("%+v: want the persistent and the indexed hit of one score", res)
		}
		return keys
	}
	if got, want := search1(search.Query{Text: "wombat digs"}), []string{"zscratch/a.md", "memory/a.md", "archive/a.md"}; !slices.Equal(got, want) {
		t.Errorf("the tie rule: %v, want %v", got, want)
	}
	for _, c := range []struct {
		q    search.Query
		want []string
	}{
		{search.Query{Text: "wombat", Tier: search.TierIndexed}, []string{"archive/a.md"}},
		{search.Query{Text: "wombat", Route: "default"}, []string{"memory/a.md"}},
		{search.Query{Text: "wombat", Route: "archive/", Tier: search.TierPersistent}, nil},
		{search.Query{Text: "wombat", Route: "zscratch/"}, []string{"zscratch/a.md"}},
	} {
		if got := search1(c.q); !slices.Equal(got, c.want) {
			t.Errorf("route %q tier %q: %v, want %v", c.q.Route, c.q.Tier, got, c.want)
		}
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}
