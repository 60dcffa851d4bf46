package repo_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/repo"
)

// clock is a Memory.Now that the test moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newMemory(f repo.Files) (repo.Memory, *clock) {
	c := &clock{t: time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)}
	return repo.Memory{Files: f, By: meta.WriterInfo{Agent: "test"}, Now: c.now}, c
}

func identity(hash, branch string) repo.Identity {
	return repo.Identity{Hash: hash, Path: "/src/proj", Remote: "https://example.com/proj.git", Branch: branch}
}

// Put upserts by id: an existing record keeps its createdAt (the
// caller's is ignored), a convention's updatedAt moves to now; a new
// record is made now, or when its caller says.
func TestPutUpsert(t *testing.T) {
	ctx := t.Context()
	f := newFiles()
	m, clk := newMemory(f)
	t0 := clk.t
	got, err := m.Put(ctx, testHash, repo.Record{Kind: repo.Convention, ID: "errors", Title: "Wrap errors", Body: "one\n"})
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt.Equal(t0) || !got.UpdatedAt.Equal(t0) {
		t.Errorf("new: createdAt %v, updatedAt %v, want both %v", got.CreatedAt, got.UpdatedAt, t0)
	}
	clk.t = t0.Add(90*time.Minute + 500*time.Millisecond)
	got, err = m.Put(ctx, testHash, repo.Record{Kind: repo.Convention, ID: "errors", Title: "Wrap errors with %w", Body: "two\n",
		CreatedAt: t0.Add(-1000 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(90 * time.Minute); !got.CreatedAt.Equal(t0) || !got.UpdatedAt.Equal(want) {
		t.Errorf("update: createdAt %v, updatedAt %v; want %v and %v", got.CreatedAt, got.UpdatedAt, t0, want)
	}
	v, _ := f.get(repo.RecordKey(testHash, repo.Convention, "errors"))
	stored, err := repo.Parse(repo.Convention, []byte(v))
	if err != nil || !reflect.DeepEqual(stored, got) {
		t.Errorf("stored %+v (%v), returned %+v", stored, err, got)
	}

	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	note, err := m.Put(ctx, testHash, repo.Record{Kind: repo.Note, ID: "flaky", Source: "agent", CreatedAt: old})
	if err != nil || !note.CreatedAt.Equal(old) || !note.UpdatedAt.IsZero() {
		t.Errorf("a new note with its time: %+v, %v", note, err)
	}
	clk.t = t0.Add(-time.Hour) // a clock set back
	if got, err := m.Put(ctx, testHash, repo.Record{Kind: repo.Convention, ID: "errors", Title: "t"}); err != nil || !got.UpdatedAt.Equal(t0) {
		t.Errorf("a clock set back: %+v, %v; want updatedAt = createdAt", got, err)
	}
	note, err = m.Put(ctx, testHash, repo.Record{Kind: repo.Note, ID: "flaky", Source: "tool", CreatedAt: t0})
	if err != nil || !note.CreatedAt.Equal(old) || note.Source != "tool" {
		t.Errorf("an existing note: %+v, %v", note, err)
	}
}

// Put checks the record before it writes, and never overwrites a file
// that is no valid record.
func TestPutRefuses(t *testing.T) {
	ctx := t.Context()
	f := newFiles()
	m, _ := newMemory(f)
	if _, err := m.Put(ctx, testHash, repo.Record{Kind: repo.Decision, ID: "etcd", Summary: "etcd"}); !errors.Is(err, repo.ErrRecord) ||
		!strings.Contains(err.Error(), "decisions/etcd.md: front matter: rationale: missing") {
		t.Errorf("no rationale: %v", err)
	}
	if _, err := m.Put(ctx, testHash, repo.Record{Kind: repo.Note, ID: "Bad Id", Source: "agent"}); !errors.Is(err, repo.ErrRecord) {
		t.Errorf("a bad id: %v", err)
	}
	if _, err := m.Put(ctx, "nothash", repo.Record{Kind: repo.Note, ID: "x", Source: "agent"}); err == nil {
		t.Error("a bad hash: no error")
	}
	if f.writes != 0 {
		t.Errorf("%d writes of invalid records", f.writes)
	}
	for name, content := range map[string]string{
		"garbage":    "I wrote this by hand\n",
		"another id": string(file(repo.Note, "", "id: other")),
	} {
		key := repo.RecordKey(testHash, repo.Note, "errors")
		f.put(key, content)
		_, err := m.Put(ctx, testHash, repo.Record{Kind: repo.Note, ID: "errors", Source: "agent"})
		if !errors.Is(err, repo.ErrRecord) || !strings.Contains(err.Error(), "fix or remove it") {
			t.Errorf("%s: %v", name, err)
		}
		if v, _ := f.get(key); v != content {
			t.Errorf("%s: overwritten with %q", name, v)
		}
	}
}

// One bad file never hides the others; records come in kind order, then
// by id; what is no record's file is left alone.
func TestRecords(t *testing.T) {
	f := newFiles()
	m, _ := newMemory(f)
	p := repo.Prefix(testHash)
	f.put(p+"notes/b.md", string(file(repo.Note, "b\n", "id: b")))
	f.put(p+"notes/a.md", string(file(repo.Note, "a\n", "id: a")))
	f.put(p+"notes/bad.md", "no front matter\n")
	f.put(p+"notes/Bad Name.md", string(file(repo.Note, "")))
	f.put(p+"notes/.a.md.swp", "\x00\x01")
	f.put(p+"notes/sub/deep.md", "not a record")
	f.put(p+"decisions/z.md", string(file(repo.Decision, "", "id: z")))
	f.put(p+"conventions/y.md", string(file(repo.Convention, "", "id: y")))
	f.put(p+"summaries.jsonl", "{}\n")
	f.put(repo.Prefix("fedcba9876543210")+"notes/other.md", string(file(repo.Note, "", "id: other")))
	recs, invalid, err := m.Records(t.Context(), testHash)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, string(r.Kind)+"/"+r.ID)
	}
	if want := []string{"convention/y", "decision/z", "note/a", "note/b"}; !slices.Equal(ids, want) {
		t.Errorf("got %v, want %v", ids, want)
	}
	if len(invalid) != 2 || invalid[0].Key != p+"notes/Bad Name.md" || invalid[1].Key != p+"notes/bad.md" {
		t.Fatalf("invalid: %+v", invalid)
	}
	for _, in := range invalid {
		if !errors.Is(in.Err, repo.ErrRecord) || !strings.HasPrefix(in.Err.Error(), in.Key+": ") {
			t.Errorf("%s: %v", in.Key, in.Err)
		}
	}
	if recs[2].Body != "a\n" {
		t.Errorf("body %q", recs[2].Body)
	}
}

func TestAppendSummary(t *testing.T) {
	ctx := t.Context()
	key := repo.SummariesKey(testHash)
	t.Run("read and write", func(t *testing.T) {
		f := newFiles()
		m, _ := newMemory(f)
		if err := m.AppendSummary(ctx, testHash, []byte(`{"n":1}`+"\n")); err != nil {
			t.Fatal(err)
		}
		f.put(key, `{"n":1}`) // a last line without its newline
		if err := m.AppendSummary(ctx, testHash, []byte(`{"n":2}`+"\n")); err != nil {
			t.Fatal(err)
		}
		if v, _ := f.get(key); v != "{\"n\":1}\n{\"n\":2}\n" {
			t.Errorf("got %q", v)
		}
	})
	t.Run("appender", func(t *testing.T) {
		f := &appendFiles{memFiles: newFiles()}
		m, _ := newMemory(f)
		for _, l := range []string{`{"n":1}`, `{"n":2}`} {
			if err := m.AppendSummary(ctx, testHash, []byte(l+"\n")); err != nil {
				t.Fatal(err)
			}
		}
		if v, _ := f.get(key); v != "{\"n\":1}\n{\"n\":2}\n" || f.appends != 2 || f.writes != 0 {
			t.Errorf("got %q, %d appends, %d writes", v, f.appends, f.writes)
		}
	})
	t.Run("not a line", func(t *testing.T) {
		f := newFiles()
		m, _ := newMemory(f)
		for _, l := range []string{"", "\n", `{"n":1}`, "{\"n\":1}\n{\"n\":2}\n", "{\"secret\":\n", "text\n"} {
			err := m.AppendSummary(ctx, testHash, []byte(l))
			if err == nil || strings.Contains(err.Error(), "secret") {
				t.Errorf("%q: %v", l, err)
			}
		}
		if f.writes != 0 {
			t.Errorf("%d writes", f.writes)
		}
	})
}

func TestCache(t *testing.T) {
	ctx := t.Context()
	f := newFiles()
	m, _ := newMemory(f)
	if _, _, err := m.CacheGet(ctx, testHash, "map.md", "git:a"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}
	if err := m.CachePut(ctx, testHash, "map.md", []byte("map A"), "git:a"); err != nil {
		t.Fatal(err)
	}
	key, _ := repo.IndexKey(testHash, "map.md")
	if got := string(f.attrs[key][meta.Derived]); got != "git:a" {
		t.Errorf("%s = %q", meta.Derived, got)
	}
	for _, tt := range []struct {
		from  string
		fresh bool
	}{{"git:a", true}, {"git:b", false}, {"git:a+dirty:0123456789abcdef", false}} {
		v, fresh, err := m.CacheGet(ctx, testHash, "map.md", tt.from)
		if err != nil || string(v) != "map A" || fresh != tt.fresh {
			t.Errorf("from %s: %q, fresh %v, %v; want fresh %v", tt.from, v, fresh, err, tt.fresh)
		}
	}
	for _, bad := range []struct{ name, from string }{{"../x", "git:a"}, {".map", "git:a"}, {"map.md", ""}, {"map.md", "a\nb"}} {
		if err := m.CachePut(ctx, testHash, bad.name, []byte("x"), bad.from); err == nil {
			t.Errorf("CachePut(%q, %q): no error", bad.name, bad.from)
		}
	}
}

// hookFiles calls hook after each WriteFile.
type hookFiles struct {
	*memFiles
	hook func(key string)
}

func (f *hookFiles) WriteFile(ctx context.Context, key string, value []byte, by meta.WriterInfo) error {
	err := f.memFiles.WriteFile(ctx, key, value, by)
	f.hook(key)
	return err
}

// A reader between CachePut's write of the value and of its attribute
// does not take the new value for the old state's.
func TestCacheGetDuringPut(t *testing.T) {
	ctx := t.Context()
	f := &hookFiles{memFiles: newFiles()}
	m, _ := newMemory(f)
	var during []string
	f.hook = func(string) {}
	if err := m.CachePut(ctx, testHash, "map.md", []byte("map A"), "git:a"); err != nil {
		t.Fatal(err)
	}
	f.hook = func(key string) {
		v, fresh, err := m.CacheGet(ctx, testHash, "map.md", "git:a")
		if fresh {
			during = append(during, string(v))
		}
		if err != nil {
			t.Error(err)
		}
	}
	m.Files = f
	if err := m.CachePut(ctx, testHash, "map.md", []byte("map B"), "git:b"); err != nil {
		t.Fatal(err)
	}
	if len(during) > 0 {
		t.Errorf("fresh for git:a while git:b's value was written: %q", during)
	}
}

func TestStale(t *testing.T) {
	ctx := t.Context()
	f := newFiles()
	m, _ := newMemory(f)
	id := identity(testHash, "main")
	if _, err := m.Init(ctx, id, nil, ""); err != nil {
		t.Fatal(err)
	}
	m.CachePut(ctx, testHash, "map.md", []byte("m"), "git:1")
	m.CachePut(ctx, testHash, "symbols.json", []byte("s"), "git:0")
	if stale, err := m.Stale(ctx, testHash); err != nil || len(stale) != 0 {
		t.Errorf("no state: %v, %v", stale, err)
	}
	if stale, err := m.Stale(ctx, "fedcba9876543210"); err != nil || len(stale) != 0 {
		t.Errorf("no repo.json: %v, %v", stale, err)
	}
	for _, tt := range []struct {
		state string
		want  []string
	}{
		{"git:1", []string{"symbols.json"}},
		{"", []string{"symbols.json"}}, // the state kept
		{"git:2", []string{"map.md", "symbols.json"}},
	} {
		if _, err := m.Init(ctx, id, nil, tt.state); err != nil {
			t.Fatal(err)
		}
		if stale, err := m.Stale(ctx, testHash); err != nil || !slices.Equal(stale, tt.want) {
			t.Errorf("state %q: got %v (%v), want %v", tt.state, stale, err, tt.want)
		}
	}
	m.CachePut(ctx, testHash, "map.md", []byte("m"), "git:2")
	if stale, _ := m.Stale(ctx, testHash); !slices.Equal(stale, []string{"symbols.json"}) {
		t.Errorf("after a new map: %v", stale)
	}
}

func TestInit(t *testing.T) {
	ctx := t.Context()
	f := newFiles()
	m, clk := newMemory(f)
	id := identity(testHash, "main")
	first, err := m.Init(ctx, id, nil, "git:1")
	if err != nil {
		t.Fatal(err)
	}
	want := repo.Info{Hash: testHash, Path: id.Path, Remote: id.Remote, Branch: "main", FirstSeen: clk.t, LastSeen: clk.t, State: "git:1"}
	if first != want {
		t.Errorf("got %+v, want %+v", first, want)
	}
	for _, d := range []string{"conventions", "decisions", "notes", "indexes"} {
		if _, ok := f.dirs[repo.Prefix(testHash)+d]; !ok {
			t.Errorf("no directory %s", d)
		}
	}
	clk.t = clk.t.Add(time.Hour)
	again, err := m.Init(ctx, id, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	want.LastSeen = clk.t
	if again != want {
		t.Errorf("again: got %+v, want %+v", again, want)
	}
	if got, err := m.Info(ctx, testHash); err != nil || got != want {
		t.Errorf("Info: %+v, %v", got, err)
	}
	if _, err := m.Info(ctx, "fedcba9876543210"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Info of none: %v", err)
	}
}

// A branch's memory starts from its parent's, on its first Init, with
// the parent's modes (a private memory stays private), its broken records
// left with it; and is its own from then on.
func TestInitFromParent(t *testing.T) {
	ctx := t.Context()
	const main, feature = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"
	f := newFiles()
	m, _ := newMemory(f)
	parent := identity(main, "main")
	if _, err := m.Init(ctx, parent, nil, ""); err != nil {
		t.Fatal(err)
	}
	pm := repo.Prefix(main)
	f.put(pm+"conventions/errors.md", string(file(repo.Convention, "", "id: errors")))
	f.put(pm+"conventions/broken.md", "no front matter\n")
	f.put(pm+"decisions/etcd.md", string(file(repo.Decision, "", "id: etcd")))
	f.modes[pm+"decisions/etcd.md"] = 0o600
	f.dirs[pm+"decisions"] = 0o700
	f.dirs[strings.TrimSuffix(pm, "/")] = 0o750
	f.put(pm+"notes/flaky.md", string(file(repo.Note, "", "id: flaky")))
	f.put(pm+"notes/.flaky.md.swp", "swap")
	f.put(pm+"summaries.jsonl", "{\"n\":1}\n")
	f.put(pm+"indexes/map.md", "main's map")

	info, err := m.Init(ctx, identity(feature, "feature"), &parent, "")
	if err != nil {
		t.Fatal(err)
	}
	if info.Parent != main {
		t.Errorf("parent %q, want %s", info.Parent, main)
	}
	pf := repo.Prefix(feature)
	for _, k := range []string{"conventions/errors.md", "decisions/etcd.md", "notes/flaky.md", "summaries.jsonl"} {
		got, ok := f.get(pf + k)
		if want, _ := f.get(pm + k); !ok || got != want {
			t.Errorf("%s: got %q, want %q", k, got, want)
		}
	}
	if f.modes[pf+"decisions/etcd.md"] != 0o600 || f.dirs[pf+"decisions"] != 0o700 || f.dirs[strings.TrimSuffix(pf, "/")] != 0o750 || f.modes[pf+"notes/flaky.md"] != 0o644 {
		t.Errorf("modes of the copy: etcd.md %v, decisions/ %v, the memory %v, flaky.md %v; want the parent's 0600, 0700, 0750, 0644",
			f.modes[pf+"decisions/etcd.md"], f.dirs[pf+"decisions"], f.dirs[strings.TrimSuffix(pf, "/")], f.modes[pf+"notes/flaky.md"])
	}
	for _, k := range []string{"notes/.flaky.md.swp", "indexes/map.md", "conventions/broken.md"} {
		if _, ok := f.get(pf + k); ok {
			t.Errorf("%s copied", k)
		}
	}
	if got, _ := m.Info(ctx, feature); got.Branch != "feature" || got.Parent != main {
		t.Errorf("repo.json: %+v", got)
	}

	// Then the branch is on its own: neither a new record of the parent
	// nor an empty memory brings a second copy.
	f.put(pm+"notes/later.md", string(file(repo.Note, "", "id: later")))
	for _, k := range []string{"conventions/errors.md", "decisions/etcd.md", "notes/flaky.md", "summaries.jsonl"} {
		f.remove(pf + k)
	}
	writes := f.writes
	info, err = m.Init(ctx, identity(feature, "feature"), &parent, "")
	if err != nil {
		t.Fatal(err)
	}
	if f.writes != writes+1 || info.Parent != main {
		t.Errorf("second Init: %d writes (want repo.json's alone), parent %q", f.writes-writes, info.Parent)
	}
	if keys, _ := f.List(pf); slices.ContainsFunc(keys, func(e backend.Entry) bool { return strings.HasSuffix(e.Key, ".md") }) {
		t.Errorf("second Init copied: %v", keys)
	}
}

// No copy from a parent without memory, nor into a branch that has some.
func TestInitNoCopy(t *testing.T) {
	ctx := t.Context()
	const main, feature, other = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc"
	f := newFiles()
	m, _ := newMemory(f)
	parent := identity(main, "main")
	m.Init(ctx, parent, nil, "")
	if info, err := m.Init(ctx, identity(feature, "feature"), &parent, ""); err != nil || info.Parent != "" {
		t.Errorf("a parent without memory: %+v, %v", info, err)
	}
	f.put(repo.Prefix(main)+"notes/flaky.md", string(file(repo.Note, "", "id: flaky")))
	f.put(repo.Prefix(other)+"notes/own.md", string(file(repo.Note, "", "id: own")))
	if info, err := m.Init(ctx, identity(other, "other"), &parent, ""); err != nil || info.Parent != "" {
		t.Errorf("a branch with memory: %+v, %v", info, err)
	}
	if _, ok := f.get(repo.Prefix(other) + "notes/flaky.md"); ok {
		t.Error("copied into a branch with memory")
	}
}

func TestList(t *testing.T) {
	ctx := t.Context()
	f := newFiles()
	m, _ := newMemory(f)
	for _, h := range []string{"bbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaa"} {
		if _, err := m.Init(ctx, identity(h, "b"), nil, ""); err != nil {
			t.Fatal(err)
		}
	}
	f.put(repo.Prefix("cccccccccccccccc")+"notes/x.md", "no repo.json")
	infos, err := repo.List(ctx, f)
	if err != nil || len(infos) != 2 || infos[0].Hash != "aaaaaaaaaaaaaaaa" || infos[1].Hash != "bbbbbbbbbbbbbbbb" {
		t.Errorf("got %+v, %v", infos, err)
	}
	f.put(repo.InfoKey("dddddddddddddddd"), "{not json")
	infos, err = repo.List(ctx, f)
	if len(infos) != 2 || err == nil || !strings.Contains(err.Error(), repo.InfoKey("dddddddddddddddd")) {
		t.Errorf("a broken repo.json: %+v, %v", infos, err)
	}
}

// See: a first sight is an Init from the parent (asked for then only); a
// later sight in the same state writes nothing, in a new state writes
// the state, and never copies from the parent again.
func TestSee(t *testing.T) {
	ctx := t.Context()
	const main, feature = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"
	f := newFiles()
	m, clock := newMemory(f)
	parent := identity(main, "main")
	if _, err := m.Init(ctx, parent, nil, ""); err != nil {
		t.Fatal(err)
	}
	f.put(repo.Prefix(main)+"notes/flaky.md", string(file(repo.Note, "", "id: flaky")))
	asked := 0
	empty := identity("cccccccccccccccc", "empty") // a candidate without memory: passed over
	parentOf := func() ([]repo.Identity, error) { asked++; return []repo.Identity{empty, parent}, nil }
	info, err := m.See(ctx, identity(feature, "feature"), parentOf, "git:t1")
	if err != nil || info.Parent != main || info.State != "git:t1" || asked != 1 {
		t.Fatalf("first sight: %+v, %v, parent asked %d times", info, err, asked)
	}
	if _, ok := f.get(repo.Prefix(feature) + "notes/flaky.md"); !ok {
		t.Error("the first sight of a branch did not start from its parent's memory")
	}
	clock.t = clock.t.Add(time.Hour)
	if info, err := m.See(ctx, identity(feature, "feature"), parentOf, "git:t1"); err != nil || !info.LastSeen.Before(clock.t) || asked != 1 {
		t.Errorf("a sight in the same state: %+v, %v, parent asked %d times; want nothing written", info, err, asked)
	}
	f.put(repo.Prefix(main)+"notes/later.md", string(file(repo.Note, "", "id: later")))
	if info, err := m.See(ctx, identity(feature, "feature"), parentOf, "git:t2"); err != nil || info.State != "git:t2" || !info.LastSeen.Equal(clock.t) || asked != 1 {
		t.Errorf("a sight in a new state: %+v, %v, parent asked %d times", info, err, asked)
	}
	if _, ok := f.get(repo.Prefix(feature) + "notes/later.md"); ok {
		t.Error("a later sight copied from the parent again")
	}
}

// CachedMap builds the map once per state: the same state gives the
// cached map (even when the tree changed meanwhile), another state a new
// one, which it caches.
func TestCachedMap(t *testing.T) {
	ctx := t.Context()
	top := t.TempDir()
	if err := os.WriteFile(filepath.Join(top, "a.go"), []byte("package a\n\nfunc One() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ := newMemory(newFiles())
	id := identity("aaaaaaaaaaaaaaaa", "main")
	id.Path = top
	o := repo.MapOptions{NoCtags: true}
	first, err := m.CachedMap(ctx, id, "k1", o)
	if err != nil || !strings.Contains(string(first), "One") {
		t.Fatalf("first map: %q, %v", first, err)
	}
	if err := os.WriteFile(filepath.Join(top, "b.go"), []byte("package a\n\nfunc Two() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again, err := m.CachedMap(ctx, id, "k1", o); err != nil || string(again) != string(first) {
		t.Errorf("same state: %q, %v; want the cached map", again, err)
	}
	if next, err := m.CachedMap(ctx, id, "k2", o); err != nil || !strings.Contains(string(next), "Two") {
		t.Errorf("new state: %q, %v; want a new map", next, err)
	}
	if v, fresh, err := m.CacheGet(ctx, id.Hash, repo.MapName, "k2"); err != nil || !fresh || !strings.Contains(string(v), "Two") {
		t.Errorf("the cache after a new state: %q, fresh %v, %v", v, fresh, err)
	}
}

// Two first sights at once: one is first and copies; a summary the other
// appended meanwhile (between this one's repo.json and its copy) is never
// replaced by the copy.
func TestInitFirstSightRace(t *testing.T) {
	ctx := t.Context()
	const main, feature = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"
	f := newFiles()
	m, _ := newMemory(f)
	parent := identity(main, "main")
	if _, err := m.Init(ctx, parent, nil, ""); err != nil {
		t.Fatal(err)
	}
	f.put(repo.Prefix(main)+"summaries.jsonl", "{\"n\":\"parent\"}\n")
	f.put(repo.Prefix(main)+"notes/flaky.md", string(file(repo.Note, "", "id: flaky")))
	hooked := &createHook{memFiles: f, after: func(key string) {
		if key == repo.InfoKey(feature) { // the other process appends now
			f.put(repo.Prefix(feature)+"summaries.jsonl", "{\"n\":\"acknowledged\"}\n")
		}
	}}
	m.Files = hooked
	info, err := m.Init(ctx, identity(feature, "feature"), &parent, "")
	if err != nil || info.Parent != main {
		t.Fatalf("Init: %+v, %v", info, err)
	}
	if got, _ := f.get(repo.Prefix(feature) + "summaries.jsonl"); got != "{\"n\":\"acknowledged\"}\n" {
		t.Errorf("the branch's summaries after the copy: %q; want the acknowledged line kept", got)
	}
	if _, ok := f.get(repo.Prefix(feature) + "notes/flaky.md"); !ok {
		t.Error("the rest of the parent's memory was not copied")
	}
	// An empty repo.json is another Init writing it: no error, no write.
	const other = "cccccccccccccccc"
	f.put(repo.InfoKey(other), "")
	writes := f.writes
	if _, err := m.See(ctx, identity(other, "x"), nil, "git:1"); err != nil || f.writes != writes {
		t.Errorf("See during another's first Init: %v, %d writes", err, f.writes-writes)
	}
}

// createHook is memFiles that calls after once a CreateFile succeeded.
type createHook struct {
	*memFiles
	after func(key string)
}

func (h *createHook) CreateFile(ctx context.Context, key string, value []byte, mode fs.FileMode, by meta.WriterInfo) error {
	err := h.memFiles.CreateFile(ctx, key, value, mode, by)
	if err == nil {
		h.after(key)
	}
	return err
}
