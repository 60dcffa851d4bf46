package fsnode

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/session"
)

// rawTree serves a Root through go-fuse's request bridge without a
// kernel: requests go in as the kernel would send them (node ids, caller
// credentials), through the same code that dedups inodes and hands out
// file handles.
type rawTree struct {
	t    *testing.T
	fs   fuse.RawFileSystem
	c    *session.Context
	root *Root
}

func newRawTree(t *testing.T, opts Options) *rawTree {
	t.Helper()
	st, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newRawTreeOn(t, st, opts)
}

func newRawTreeOn(t *testing.T, st backend.Store, opts Options) *rawTree {
	t.Helper()
	c := session.NewContext(st, session.Options{DirMode: 0o755})
	root := NewRoot(c, opts)
	t.Cleanup(root.Close)
	sec := time.Second
	return &rawTree{t: t, fs: gofs.NewNodeFS(root, &gofs.Options{EntryTimeout: &sec, AttrTimeout: &sec}), c: c, root: root}
}

func header(node uint64, uid uint32, gids ...uint32) fuse.InHeader {
	gid := uid
	if len(gids) > 0 {
		gid = gids[0]
	}
	return fuse.InHeader{NodeId: node, Caller: fuse.Caller{Owner: fuse.Owner{Uid: uid, Gid: gid}}}
}

// lookup resolves path (slash-separated, from the root) as uid and
// returns the entry of its last component.
func (r *rawTree) lookup(uid uint32, path ...string) (fuse.EntryOut, fuse.Status) {
	node := uint64(1)
	var out fuse.EntryOut
	for _, name := range path {
		out = fuse.EntryOut{}
		h := header(node, uid)
		if st := r.fs.Lookup(nil, &h, name, &out); !st.Ok() {
			return out, st
		}
		node = out.NodeId
	}
	return out, fuse.OK
}

// read opens node as uid, reads it whole and releases it.
func (r *rawTree) read(node uint64, uid uint32) (string, fuse.Status) {
	return r.readBy(node, uid, 4096)
}

// readBy is read in reads of size bytes.
func (r *rawTree) readBy(node uint64, uid uint32, size int) (string, fuse.Status) {
	var oo fuse.OpenOut
	in := fuse.OpenIn{InHeader: header(node, uid), Flags: uint32(os.O_RDONLY)}
	if st := r.fs.Open(nil, &in, &oo); !st.Ok() {
		return "", st
	}
	defer r.fs.Release(nil, &fuse.ReleaseIn{InHeader: header(node, uid), Fh: oo.Fh})
	var got []byte
	buf := make([]byte, size)
	for {
		rin := fuse.ReadIn{InHeader: header(node, uid), Fh: oo.Fh, Offset: uint64(len(got)), Size: uint32(len(buf))}
		res, st := r.fs.Read(nil, &rin, buf)
		if !st.Ok() {
			return "", st
		}
		b, st := res.Bytes(buf)
		if !st.Ok() {
			return "", st
		}
		if len(b) == 0 {
			return string(got), fuse.OK
		}
		got = append(got, b...)
	}
}

// Two lookups of different queries at the same time must never share an
// inode: the kernel would then read one query's answer under the other's
// name. The inode counter was read back after the increment, so two
// lookups could both read the second value.
func TestAnswerLookupsNeverShareAnInode(t *testing.T) {
	answer := func(ctx context.Context, name string) ([]byte, error) {
		return []byte("answer to " + name), nil
	}
	// The race needs a lookup preempted between taking a number and using
	// it: more goroutines than CPUs, and rounds until a budget is spent
	// (before the fix, a round of 80,000 lookups met it about half the
	// time).
	workers := 4 * max(4, runtime.GOMAXPROCS(0))
	const each = 5000
	deadline := time.Now().Add(3 * time.Second)
	for round := 0; round == 0 || time.Now().Before(deadline); round++ {
		if !answerLookupRound(t, answer, workers, each) {
			t.Fatalf("round %d: lookups shared inodes", round)
		}
	}
}

// answerLookupRound runs workers goroutines, each looking up its own
// query each times, and reports whether every lookup got its own inode.
func answerLookupRound(t *testing.T, answer Answer, workers, each int) bool {
	t.Helper()
	r := newRawTree(t, Options{Search: answer})
	defer r.root.Close()
	dir, st := r.lookup(0, reservedDir, "search")
	if !st.Ok() {
		t.Fatalf("lookup .memfs/search: %v", st)
	}
	type result struct {
		name string
		out  fuse.EntryOut
	}
	results := make([][]result, workers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			<-start
			// One name per worker: its answer is computed once, so
			// lookups are fast and meet often.
			name := fmt.Sprintf("q%d", w)
			for range each {
				var out fuse.EntryOut
				h := header(dir.NodeId, 0)
				if st := r.fs.Lookup(nil, &h, name, &out); !st.Ok() {
					t.Errorf("lookup %s: %v", name, st)
					return
				}
				results[w] = append(results[w], result{name, out})
			}
		})
	}
	close(start)
	wg.Wait()
	byIno := make(map[uint64]result)
	shared := 0
	for _, rs := range results {
		for _, res := range rs {
			other, ok := byIno[res.out.Ino]
			if !ok {
				byIno[res.out.Ino] = res
				continue
			}
			if shared++; shared > 3 {
				continue
			}
			t.Errorf("lookups of %s and %s got the same inode %d, want distinct ones", other.name, res.name, res.out.Ino)
			// What the kernel then reads under each name: the node
			// registered first for that inode number.
			for _, x := range []result{other, res} {
				if got, st := r.read(x.out.NodeId, 0); got != "answer to "+x.name {
					t.Errorf("read .memfs/search/%s = %q, %v; want %q", x.name, got, st, "answer to "+x.name)
				}
			}
		}
	}
	return shared == 0
}

// whoAsks is an Answer that names the caller it was computed for.
func whoAsks(ctx context.Context, name string) ([]byte, error) {
	if cr, ok := session.CredFrom(ctx); ok {
		return fmt.Appendf(nil, "%s for uid %d", name, cr.UID), nil
	}
	if c, ok := fuse.FromContext(ctx); ok {
		return fmt.Appendf(nil, "%s for uid %d (no session.Cred)", name, c.Uid), nil
	}
	return fmt.Appendf(nil, "%s for nobody knows whom", name), nil
}

// Each caller reads the answer computed for it, even right after another
// caller asked the same name (answers used to be cached per name).
func TestAnswersArePerCaller(t *testing.T) {
	r := newRawTree(t, Options{Search: whoAsks, ContextPack: whoAsks})
	tests := []struct {
		name string
		path []string
		want string // with %d for the uid
	}{
		{"search", []string{reservedDir, "search", "q"}, "q for uid %d"},
		{"context pack", []string{reservedDir, "context", "q"}, "q for uid %d"},
		{"context.md", []string{reservedDir, "context.md"}, " for uid %d"},
		{"context.manifest.json", []string{reservedDir, "context.manifest.json"}, ".manifest.json for uid %d"},
		{"named pack's manifest", []string{reservedDir, "context", "q.manifest.json"}, "q.manifest.json for uid %d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, uid := range []uint32{0, 65534, 1000, 0} {
				e, st := r.lookup(uid, tt.path...)
				if !st.Ok() {
					t.Fatalf("lookup as uid %d: %v", uid, st)
				}
				got, st := r.read(e.NodeId, uid)
				if want := fmt.Sprintf(tt.want, uid); !st.Ok() || got != want {
					t.Errorf("read as uid %d = %q, %v; want %q", uid, got, st, want)
				}
			}
		})
	}
}

func TestParseStatusGroups(t *testing.T) {
	status := func(uid, gid, groups string) []byte {
		return []byte("Name:\tcat\nUmask:\t0022\nState:\tR (running)\nTgid:\t42\nPid:\t42\n" +
			"Uid:\t" + uid + "\nGid:\t" + gid + "\nFDSize:\t64\nGroups:\t" + groups + "\nNStgid:\t42\n")
	}
	tests := []struct {
		name     string
		status   []byte
		uid, gid uint32
		want     []uint32
		wantErr  bool
	}{
		{"groups", status("1000\t1000\t1000\t1000", "100\t100\t100\t100", "4 24 100 "), 1000, 100, []uint32{4, 24, 100}, false},
		{"no supplementary groups", status("1000\t1000\t1000\t1000", "100\t100\t100\t100", ""), 1000, 100, nil, false},
		{"the fs ids are the ones that count", status("0\t0\t0\t1000", "0\t0\t0\t100", "7"), 1000, 100, []uint32{7}, false},
		{"another uid: a reused thread id", status("2000\t2000\t2000\t2000", "100\t100\t100\t100", "7"), 1000, 100, nil, true},
		{"another gid", status("1000\t1000\t1000\t1000", "200\t200\t200\t200", "7"), 1000, 100, nil, true},
		{"no Groups line", []byte("Uid:\t1\t1\t1\t1\nGid:\t1\t1\t1\t1\n"), 1, 1, nil, true},
		{"garbage fs uid", []byte("Uid:\t1\t1\t1\tx\nGid:\t1\t1\t1\t1\nGroups:\t1\n"), 1, 1, nil, true},
		{"empty", nil, 1, 1, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatusGroups(tt.status, tt.uid, tt.gid)
			if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
				t.Errorf("parseStatusGroups = %v, %v; want %v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// The groups of the calling thread are read from /proc: this test's own
// thread has the test process's groups.
func TestProcGroupsOfAThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	groups, err := os.Getgroups()
	if err != nil {
		t.Fatal(err)
	}
	var want []uint32
	for _, g := range groups {
		want = append(want, uint32(g))
	}
	slices.Sort(want) // the kernel keeps them sorted
	got, err := procGroups(uint32(syscall.Gettid()), uint32(os.Getuid()), uint32(os.Getgid()))
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("procGroups(this thread) = %v, %v; want %v", got, err, want)
	}
	if _, err := procGroups(uint32(syscall.Gettid()), uint32(os.Getuid())+1, uint32(os.Getgid())); err == nil {
		t.Errorf("procGroups with another uid than the thread's: got no error, want one")
	}
}

// privateTree makes pub/ (0755) with pub/a.md (0644), and priv/ (0700)
// with priv/s.md (0600), all root's.
func privateTree(t *testing.T, c *session.Context) {
	t.Helper()
	for _, d := range []struct {
		key  string
		mode fs.FileMode
	}{{"pub", 0o755}, {"priv", 0o700}} {
		if err := c.Mkdir(d.key, d.mode, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"pub/a.md", "priv/s.md"} {
		if err := c.Set(k, []byte("value of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	mode := fs.FileMode(0o600)
	if _, err := c.SetAttr(context.Background(), "priv/s.md", session.Attr{Mode: &mode}); err != nil {
		t.Fatal(err)
	}
}

// maskedLog is an event log with events about files of privateTree that
// uid 65534 may and may not see, over more than one chunk.
func maskedLog(t *testing.T, st backend.SysStore) (*eventlog.Log, map[uint64]bool) {
	t.Helper()
	l, err := eventlog.Open(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []struct {
		ev      eventlog.Event
		visible bool
	}{
		{eventlog.Event{Op: eventlog.OpWrite, Key: "pub/a.md", Size: 14}, true},
		{eventlog.Event{Op: eventlog.OpWrite, Key: "priv/s.md", Size: 15}, false},
		{eventlog.Event{Op: eventlog.OpRename, Key: "pub/a.md", OldKey: "priv/old.md"}, false},
		{eventlog.Event{Op: eventlog.OpRename, Key: "priv/s.md", OldKey: "pub/was.md"}, false},
		{eventlog.Event{Op: eventlog.OpDelete, Key: "pub/gone.md"}, true},
		{eventlog.Event{Op: eventlog.OpDelete, Key: "priv/gone.md"}, false},
		{eventlog.Event{Op: eventlog.OpDelete, Key: "elsewhere/deep/x.md"}, true}, // the root lists
	}
	visible := make(map[uint64]bool)
	var evs []eventlog.Event
	for i := range eventlog.ChunkEvents + 100 {
		k := kinds[i%len(kinds)]
		evs = append(evs, k.ev)
		visible[uint64(i+1)] = k.visible
	}
	if _, err := l.Append(t.Context(), evs); err != nil {
		t.Fatal(err)
	}
	return l, visible
}

func wholeStream(t *testing.T, l *eventlog.Log) string {
	t.Helper()
	b := make([]byte, l.Size())
	if n, err := l.ReadAt(t.Context(), b, 0); n != len(b) {
		t.Fatalf("read the event log: %d of %d bytes, %v", n, len(b), err)
	}
	return string(b)
}

// checkMasked checks that got is raw with exactly the lines visible says
// are hidden replaced by same-length placeholders keeping their seq.
func checkMasked(t *testing.T, got, raw string, visible map[uint64]bool) {
	t.Helper()
	if len(got) != len(raw) {
		t.Fatalf("masked stream is %d bytes, want the raw %d", len(got), len(raw))
	}
	gl, rl := strings.SplitAfter(got, "\n"), strings.SplitAfter(raw, "\n")
	hidden := 0
	for i, line := range rl {
		if line == "" {
			continue
		}
		var ev eventlog.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("raw line %d: %v", i+1, err)
		}
		if visible[ev.Seq] {
			if gl[i] != line {
				t.Fatalf("event %d (%s %s) should be visible: got %q, want %q", ev.Seq, ev.Op, ev.Key, gl[i], line)
			}
			continue
		}
		hidden++
		want := fmt.Sprintf(`{"seq":%d,"hidden":true}`, ev.Seq)
		want += strings.Repeat(" ", len(line)-1-len(want)) + "\n"
		if gl[i] != want {
			t.Fatalf("event %d (%s %s %s) should be hidden: got %q, want %q", ev.Seq, ev.Op, ev.Key, ev.OldKey, gl[i], want)
		}
	}
	if hidden == 0 || hidden == len(visible) {
		t.Fatalf("%d of %d events hidden: the test needs both kinds", hidden, len(visible))
	}
}

// .memfs/events.jsonl and the chunks in .memfs/events/ show each caller
// the events about files it may see; the others are placeholders of the
// same length, whatever the size of the reads that cut the lines.
func TestEventLogMaskedPerCaller(t *testing.T) {
	st, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	l, visible := maskedLog(t, st)
	r := newRawTreeOn(t, st, Options{Events: l, Records: l})
	privateTree(t, r.c)
	raw := wholeStream(t, l)
	all := make(map[uint64]bool)
	for seq := range visible {
		all[seq] = true
	}

	e, st2 := r.lookup(65534, reservedDir, "events.jsonl")
	if !st2.Ok() {
		t.Fatalf("lookup events.jsonl: %v", st2)
	}
	if e.Attr.Size != uint64(len(raw)) {
		t.Errorf("stat events.jsonl as uid 65534: size %d, want %d (the same for every caller)", e.Attr.Size, len(raw))
	}
	got, st2 := r.read(e.NodeId, 0)
	if !st2.Ok() || got != raw {
		t.Fatalf("root reads events.jsonl: %d bytes, %v; want the raw %d", len(got), st2, len(raw))
	}
	masked, st2 := r.read(e.NodeId, 65534)
	if !st2.Ok() {
		t.Fatal(st2)
	}
	checkMasked(t, masked, raw, visible)
	if strings.Contains(masked, "priv/") {
		t.Errorf("uid 65534 reads a key under priv/ in events.jsonl")
	}
	for _, size := range []int{61, 333, 5000, 70000} {
		if got, st2 := r.readBy(e.NodeId, 65534, size); !st2.Ok() || got != masked {
			t.Errorf("events.jsonl read %d bytes at a time: %d bytes, %v; differs from one read", size, len(got), st2)
		}
	}

	// The chunks, as memfs log --mount reads them.
	chunks, err := st.ListSys(t.Context(), "events/")
	if err != nil || len(chunks) < 2 {
		t.Fatalf("the log has %d chunks (%v), want 2 or more", len(chunks), err)
	}
	var joined strings.Builder
	for _, ch := range chunks {
		_, name := backend.Split(ch.Key)
		e, st2 := r.lookup(65534, reservedDir, "events", name)
		if !st2.Ok() || e.Attr.Size != uint64(ch.Info.Size) {
			t.Fatalf("lookup events/%s as uid 65534: size %d, %v; want %d", name, e.Attr.Size, st2, ch.Info.Size)
		}
		b, st2 := r.read(e.NodeId, 65534)
		if !st2.Ok() {
			t.Fatal(st2)
		}
		joined.WriteString(b)
		if b, _ := r.read(e.NodeId, 0); !strings.Contains(b, "priv/") {
			t.Errorf("root reads chunk %s without the keys under priv/", name)
		}
	}
	if joined.String() != masked {
		t.Errorf("the chunks as uid 65534 reads them do not join into its events.jsonl")
	}
}

// .memfs/changes, the change feed, hides from each caller the changes to
// files it may not see, in lines of the same length.
func TestChangeFeedMaskedPerCaller(t *testing.T) {
	r := newRawTree(t, Options{})
	privateTree(t, r.c)
	if err := r.c.Rename(t.Context(), "pub/a.md", "priv/moved.md", 0); err != nil {
		t.Fatal(err)
	}
	if err := r.c.Delete("priv/s.md"); err != nil {
		t.Fatal(err)
	}
	if err := r.c.Set("pub/b.md", []byte("b")); err != nil {
		t.Fatal(err)
	}
	e, st := r.lookup(65534, reservedDir, "changes")
	if !st.Ok() {
		t.Fatal(st)
	}
	raw, _ := r.read(e.NodeId, 0)
	masked, _ := r.read(e.NodeId, 65534)
	if len(masked) != len(raw) || !strings.Contains(raw, "priv/s.md") {
		t.Fatalf("feed: root reads %d bytes (priv/s.md in it: %v), uid 65534 %d; want equal sizes", len(raw), strings.Contains(raw, "priv/s.md"), len(masked))
	}
	var shown []string
	for line := range strings.SplitSeq(strings.TrimSuffix(masked, "\n"), "\n") {
		var rec struct{ Op, Key, Old_key string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("masked feed line %q: %v", line, err)
		}
		if rec.Key == "" {
			if strings.TrimSpace(line) != `{"hidden":true}` {
				t.Errorf("hidden feed line %q, want {\"hidden\":true} and spaces", line)
			}
			continue
		}
		shown = append(shown, rec.Op+" "+rec.Old_key+" "+rec.Key)
	}
	// pub/a.md is gone (moved into priv/), but pub/ lists: its creation shows.
	want := []string{"mkdir  pub", "mkdir  priv", "create  pub/a.md", "create  pub/b.md"}
	if !slices.Equal(shown, want) {
		t.Errorf("uid 65534 sees the changes\n%s\nwant\n%s", strings.Join(shown, "\n"), strings.Join(want, "\n"))
	}
	for _, size := range []int{1, 10, 77, 4096} {
		if got, st := r.readBy(e.NodeId, 65534, size); !st.Ok() || got != masked {
			t.Errorf("feed read %d bytes at a time: %d bytes, %v; differs from one read", size, len(got), st)
		}
	}
}

// .memfs/status (and status.json) shows a flush error's text, which may
// name a key, to root only.
func TestStatusShowsFlushErrorTextToRootOnly(t *testing.T) {
	ds, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	st := errorstore.Wrap(ds, func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpSave {
			return fmt.Errorf("disk full while saving %s", strings.Join(keys, ", "))
		}
		return nil
	})
	r := newRawTreeOn(t, st, Options{})
	privateTree(t, r.c)
	if err := r.c.Flush(t.Context()); err == nil {
		t.Fatal("flush: got no error, want the injected one")
	}
	tests := []struct {
		name    string
		uid     uint32
		want    string
		notWant string
	}{
		{"status", 0, "priv/s.md", ""},
		{"status", 65534, "last_flush_result: error", "priv/"},
		{"status.json", 0, "priv/s.md", ""},
		{"status.json", 65534, `"last_flush_result":"error`, "priv/"},
	}
	for _, tt := range tests {
		e, st := r.lookup(tt.uid, reservedDir, tt.name)
		if !st.Ok() {
			t.Fatal(st)
		}
		got, _ := r.read(e.NodeId, tt.uid)
		if !strings.Contains(got, tt.want) || tt.notWant != "" && strings.Contains(got, tt.notWant) {
			t.Errorf("%s as uid %d:\n%s\nwant %q in it and not %q", tt.name, tt.uid, got, tt.want, tt.notWant)
		}
	}
}

// .memfs/events/ and .memfs/events.head are served by the event log, not
// the store: with every system-record read of the store failing, their
// listing, sizes and the head and tail still answer (a getattr does no
// store I/O), and a chunk the log must read fails with EIO.
func TestRecordsServedByTheLog(t *testing.T) {
	dir, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dir.Close() })
	st := errorstore.Wrap(dir, nil)
	sys := st.(backend.SysStore) // a directory store keeps system records
	l, _ := maskedLog(t, sys)
	r := newRawTreeOn(t, st, Options{Events: l, Records: l})
	head, err := sys.LoadSys(t.Context(), "events.head")
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := sys.ListSys(t.Context(), "events/")
	if err != nil || len(chunks) != 2 {
		t.Fatalf("the log has %d chunks (%v), want 2", len(chunks), err)
	}
	st.SetInject(func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpListSys || op == errorstore.OpLoadSys {
			return syscall.EIO
		}
		return nil
	})
	e, st2 := r.lookup(0, reservedDir, "events.head")
	if !st2.Ok() || e.Attr.Size != uint64(len(head)) {
		t.Fatalf("lookup events.head: size %d, %v; want %d", e.Attr.Size, st2, len(head))
	}
	if got, st2 := r.read(e.NodeId, 0); !st2.Ok() || got != string(head) {
		t.Errorf("read events.head: %q, %v; want %q", got, st2, head)
	}
	for i, ch := range chunks {
		_, name := backend.Split(ch.Key)
		e, st2 := r.lookup(0, reservedDir, "events", name)
		if !st2.Ok() || e.Attr.Size != uint64(ch.Info.Size) {
			t.Fatalf("lookup events/%s: size %d, %v; want %d", name, e.Attr.Size, st2, ch.Info.Size)
		}
		_, st2 = r.read(e.NodeId, 0)
		if last := i == len(chunks)-1; last && !st2.Ok() {
			t.Errorf("read the tail events/%s: %v, want it from memory", name, st2)
		} else if !last && st2 != fuse.EIO {
			t.Errorf("read events/%s with the store failing: %v, want EIO", name, st2)
		}
	}
}
