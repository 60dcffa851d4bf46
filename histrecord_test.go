package memfs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/session"
)

// histStores are the stores the history tests run on: a fresh one each,
// with its journal path.
func histModelStores() []struct {
	name string
	open func(t *testing.T) (backend.Store, string)
} {
	return []struct {
		name string
		open func(t *testing.T) (backend.Store, string)
	}{
		{"memstore", func(t *testing.T) (backend.Store, string) {
			return memstore.New(), filepath.Join(t.TempDir(), "journal")
		}},
		{"badger", func(t *testing.T) (backend.Store, string) {
			dir := t.TempDir()
			st, err := badgerstore.Open(dir, badgerstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return st, filepath.Join(dir, badgerstore.JournalName)
		}},
		{"dir", func(t *testing.T) (backend.Store, string) {
			st, err := dirstore.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return st, filepath.Join(t.TempDir(), "journal")
		}},
	}
}

func histOpts(journal string) memfs.Options {
	return memfs.Options{
		JournalPath: journal,
		Session:     session.Options{MaxFileSize: 1 << 20, DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())},
	}
}

// modelFile is what the model holds of a key.
type modelFile struct {
	data []byte
	mode fs.FileMode
	tags string
}

// histModel is the namespace the operations should leave, and the
// namespace at each flush's head seq.
type histModel struct {
	now   map[string]modelFile
	heads []uint64
	at    []map[string]modelFile
}

var histWords = strings.Fields("alpha beta gamma delta note memory agent skill plan step run tool")

func histText(r *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for range n {
		b.WriteString(histWords[r.IntN(len(histWords))])
		if r.IntN(8) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.Bytes()
}

// TestHistoryModel runs random writes, appends, truncates, renames,
// deletes, chmods and setxattrs with a flush every few, then checks that
// history holds every flush's namespace (Store.At at its head seq) with
// each value byte for byte, and that every version of every key reads
// back to the bytes its address names. Seeds are printed.
func TestHistoryModel(t *testing.T) {
	for _, s := range histModelStores() {
		t.Run(s.name, func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			r := rand.New(rand.NewPCG(seed, 29))
			st, journal := s.open(t)
			f, err := memfs.Open(t.Context(), st, histOpts(journal))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close(context.Background())
			m := &histModel{now: map[string]modelFile{}}
			for range histFlushes() {
				for range 1 + r.IntN(8) {
					histStep(t, r, f.Session(), m)
				}
				histFlush(t, f, m)
			}
			checkHistory(t, history.New(st.(backend.SysStore)), m)
		})
	}
}

// histFlushes bounds the model test: 30 flushes, MEMFS_HISTORY_FLUSHES
// for a longer run.
func histFlushes() int {
	if n, err := strconv.Atoi(os.Getenv("MEMFS_HISTORY_FLUSHES")); err == nil {
		return n
	}
	return 30
}

// histStep makes one random change in c and in m.
func histStep(t *testing.T, r *rand.Rand, c *session.Context, m *histModel) {
	t.Helper()
	ctx := t.Context()
	key := fmt.Sprintf("memory/n%d.md", r.IntN(6))
	cur, ok := m.now[key]
	op := r.IntN(7)
	if !ok {
		op = 0
	}
	var err error
	switch op {
	case 0: // write
		data := histText(r, 1+r.IntN(40))
		if err = c.Set(key, data); err == nil {
			if !ok {
				cur.mode = 0o644
			}
			cur.data = data
		}
	case 1: // append
		var h *session.File
		if h, err = c.Open(ctx, key); err == nil {
			add := histText(r, 1+r.IntN(10))
			if _, err = h.Append(add); err == nil {
				cur.data = append(slices.Clone(cur.data), add...)
			}
			h.Close()
		}
	case 2: // truncate
		n := int64(r.IntN(len(cur.data) + 1))
		if _, err = c.SetAttr(ctx, key, session.Attr{Size: &n}); err == nil {
			cur.data = cur.data[:n:n]
		}
	case 3: // rename
		to := fmt.Sprintf("memory/n%d.md", r.IntN(6))
		if to != key {
			if err = c.Rename(ctx, key, to, 0); err == nil {
				delete(m.now, key)
				key = to
			}
		}
	case 4: // delete
		if err = c.Delete(key); err == nil {
			delete(m.now, key)
			return
		}
	case 5: // chmod
		mode := fs.FileMode(0o600 | r.IntN(2)*0o044)
		if _, err = c.SetAttr(ctx, key, session.Attr{Mode: &mode}); err == nil {
			cur.mode = mode
		}
	case 6: // setxattr
		tags := histWords[r.IntN(len(histWords))]
		if err = c.XAttrs().Set(ctx, key, meta.Tags, []byte(tags), 0); err == nil {
			cur.tags = tags
		}
	}
	if err != nil {
		t.Fatalf("op %d on %s: %v", op, key, err)
	}
	m.now[key] = cur
}

// histFlush flushes f and records the model's namespace at the log's head.
func histFlush(t *testing.T, f *memfs.FS, m *histModel) {
	t.Helper()
	if err := f.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	head := logHead(t, f)
	m.heads = append(m.heads, head)
	snap := map[string]modelFile{}
	for k, v := range m.now {
		snap[k] = modelFile{data: slices.Clone(v.data), mode: v.mode, tags: v.tags}
	}
	m.at = append(m.at, snap)
}

func logHead(t *testing.T, f *memfs.FS) uint64 {
	t.Helper()
	p, err := f.Events().Query(t.Context(), eventsQuery(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) == 0 {
		return 0
	}
	return p.Events[len(p.Events)-1].Seq
}

// checkHistory checks that history holds m's namespace at every head, and
// that every version of every key reads back to its address.
func checkHistory(t *testing.T, h *history.Store, m *histModel) {
	t.Helper()
	ctx := t.Context()
	keys := map[string]bool{}
	for i, head := range m.heads {
		ns, err := h.At(ctx, head)
		if err != nil {
			t.Fatal(err)
		}
		var files []history.Version
		for _, v := range ns {
			if v.Mode.IsRegular() {
				files = append(files, v)
				keys[v.Key] = true
			}
		}
		if len(files) != len(m.at[i]) {
			t.Fatalf("at %d (flush %d): %d files, want %d", head, i, len(files), len(m.at[i]))
		}
		for _, v := range files {
			want, ok := m.at[i][v.Key]
			if !ok {
				t.Fatalf("at %d: %s, which the model does not hold", head, v.Key)
			}
			got, err := h.Get(ctx, v.Addr)
			if err != nil {
				t.Fatalf("at %d: %s: %v", head, v.Key, err)
			}
			if !bytes.Equal(got, want.data) || v.Mode.Perm() != want.mode || string(v.XAttrs[meta.Tags]) != want.tags {
				t.Fatalf("at %d: %s is %q mode %v tags %q, want %q mode %v tags %q", head, v.Key, got, v.Mode, v.XAttrs[meta.Tags],
					want.data, want.mode, want.tags)
			}
		}
	}
	for k := range keys {
		vs, err := h.Versions(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if v.Op == history.OpDelete {
				continue
			}
			got, err := h.Get(ctx, v.Addr)
			if err != nil || history.AddrOf(got) != v.Addr || int64(len(got)) != v.Size {
				t.Fatalf("%s at %d: %d bytes, err %v; want %d bytes at %s", k, v.Seq, len(got), err, v.Size, v.Addr)
			}
		}
	}
}

func eventsQuery(limit int) eventlog.Query { return eventlog.Query{Limit: limit} }

// histKillEnv names the store directory of TestHistoryKill's child.
const histKillEnv = "MEMFS_TEST_HISTORY_KILL"

// TestHistoryKill kills a flush with SIGKILL between the event log's
// append and the version records (the child kills itself at its first
// write of a version record), then opens the store again: every event
// after history's start has its version, whose bytes are the store's.
func TestHistoryKill(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHistoryKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), histKillEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed by SIGKILL: %v\n%s", err, out)
	}
	st, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := memfs.Open(t.Context(), st, histOpts(filepath.Join(dir, badgerstore.JournalName)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	h := history.New(st)
	p, err := f.Events().Query(t.Context(), eventlog.Query{Ops: []string{eventlog.OpWrite}, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Events) < 20 {
		t.Fatalf("%d write events, want the child's 20 at least", len(p.Events))
	}
	for _, ev := range p.Events {
		vs, err := h.Versions(t.Context(), ev.Key)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(vs, func(v history.Version) bool { return v.Seq == ev.Seq })
		if i < 0 {
			t.Fatalf("%s: no version at %d (versions %v)", ev.Key, ev.Seq, vs)
		}
		got, err := h.Get(t.Context(), vs[i].Addr)
		want, _ := f.Session().Get(ev.Key)
		if err != nil || !bytes.Equal(got, want) || vs[i].Mode != 0o644 {
			t.Fatalf("%s at %d: %q mode %v, err %v; want %q mode 0644", ev.Key, ev.Seq, got, vs[i].Mode, err, want)
		}
	}
}

// TestHistoryKillChild is TestHistoryKill's child: it writes 20 notes
// and flushes them into a badger store, and SIGKILLs itself at the first
// write of a version record.
func TestHistoryKillChild(t *testing.T) {
	dir := os.Getenv(histKillEnv)
	if dir == "" {
		t.Skip("the child of TestHistoryKill")
	}
	inner, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := errorstore.Wrap(inner, func(op errorstore.Op, keys []string) error {
		for _, k := range keys {
			if strings.HasPrefix(k, "history/v/") {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
		return nil
	})
	f, err := memfs.Open(t.Context(), st, histOpts(filepath.Join(dir, badgerstore.JournalName)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := f.Session().Set(fmt.Sprintf("memory/n%02d.md", i), []byte(fmt.Sprintf("note %d\n", i))); err != nil {
			t.Fatal(err)
		}
	}
	f.Flush(t.Context())
	t.Fatal("the flush wrote no version record")
}

// Two names swapped in one flush (through a third), and a new file at a
// name a rename left: history's namespace after the flush is the store's.
func TestHistorySwapInOneFlush(t *testing.T) {
	ctx := t.Context()
	st := memstore.New()
	f, err := memfs.Open(ctx, st, histOpts(filepath.Join(t.TempDir(), "journal")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	c := f.Session()
	for _, k := range []string{"memory/a", "memory/b"} {
		if err := c.Set(k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, mv := range [][2]string{{"memory/a", "memory/t"}, {"memory/b", "memory/a"}, {"memory/t", "memory/b"}} {
		if err := c.Rename(ctx, mv[0], mv[1], 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Rename(ctx, "memory/b", "memory/c", 0); err != nil { // b (a's bytes) moves on; a new b
		t.Fatal(err)
	}
	if err := c.Set("memory/b", []byte("new b")); err != nil {
		t.Fatal(err)
	}
	if err := f.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	h := history.New(st)
	ns, err := h.At(ctx, logHead(t, f))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range ns {
		data, err := h.Get(ctx, v.Addr)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v.Key+"="+string(data))
	}
	if want := "memory/a=memory/b memory/b=new b memory/c=memory/a"; strings.Join(got, " ") != want {
		t.Fatalf("at the head: %s, want %s", strings.Join(got, " "), want)
	}
}

// TestHistorySymlink: a symlink's version holds its target, as a
// regular file's holds its bytes (the recorder wrote no value for a
// symlink: its version had a zero address and readlink of it in
// .memfs/history, at and snapshots failed).
func TestHistorySymlink(t *testing.T) {
	ctx := t.Context()
	st := memstore.New()
	f, err := memfs.Open(ctx, st, histOpts(filepath.Join(t.TempDir(), "journal")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	if err := f.Session().Mkdir("memory", 0o755, uint32(os.Getuid()), uint32(os.Getgid())); err != nil {
		t.Fatal(err)
	}
	if err := f.Session().Symlink(ctx, "memory/link", "../skills/x.md", uint32(os.Getuid()), uint32(os.Getgid())); err != nil {
		t.Fatal(err)
	}
	if err := f.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	h := history.New(st)
	vs, err := h.Versions(ctx, "memory/link")
	if err != nil || len(vs) != 1 {
		t.Fatalf("versions of the link: %+v, %v", vs, err)
	}
	if vs[0].Mode.Type() != fs.ModeSymlink {
		t.Fatalf("the link's version has mode %v", vs[0].Mode)
	}
	target, err := h.Get(ctx, vs[0].Addr)
	if err != nil || string(target) != "../skills/x.md" {
		t.Fatalf("the link's version holds %q, %v; want its target", target, err)
	}
}

// TestHistoryObjectsWrittenWhileTheStoreSaves: a flush writes the
// objects of its values while the store saves them (session
// Options.Saving), not after: the store's save of the note waits until
// history has written an object, and the flush's version then names a
// value history holds.
func TestHistoryObjectsWrittenWhileTheStoreSaves(t *testing.T) {
	ctx := t.Context()
	object := make(chan struct{})
	var seen, armed atomic.Bool
	st := errorstore.Wrap(memstore.New(), func(op errorstore.Op, keys []string) error {
		switch op {
		case errorstore.OpSaveSys, errorstore.OpSwapSys:
			if slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, "history/o/") }) && !seen.Swap(true) {
				close(object)
			}
		case errorstore.OpApply, errorstore.OpSave:
			if !slices.Contains(keys, "memory/a.md") || !armed.Load() {
				return nil
			}
			select {
			case <-object:
			case <-time.After(30 * time.Second):
				armed.Store(false) // once: the final flush of Close does not wait again
				return errors.New("no history object written while the store saved memory/a.md")
			}
		}
		return nil
	})
	f, err := memfs.Open(ctx, st, histOpts(filepath.Join(t.TempDir(), "journal")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	value := []byte("written while the store saves\n")
	if err := f.Session().Set("memory/a.md", value); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	if err := f.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	vs, err := f.Versions(ctx, "memory/a.md")
	if err != nil || len(vs) != 1 {
		t.Fatalf("versions %+v, %v", vs, err)
	}
	if got, err := history.New(st.(backend.SysStore)).Get(ctx, vs[0].Addr); err != nil || !bytes.Equal(got, value) {
		t.Fatalf("the version's value: %q, %v", got, err)
	}
}
