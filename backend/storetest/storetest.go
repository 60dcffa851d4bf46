// Package storetest is the conformance suite for backend.Store
// implementations. A backend joins it with one call:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, dir string) (backend.Store, error) {
//			return dirstore.Open(dir)
//		})
//	}
//
// Every subtest gets a fresh directory and a fresh store; the suite closes
// what it opens. The suite checks the contract documented on backend.Store:
// round trips, List metadata, missing and invalid keys, reserved keys,
// concurrency, reopening, exclusive use, and every node type (files,
// directories, symlinks, fifos, sockets, devices) with its mode, times and
// hard links. Each optional capability (backend.SysStore, backend.SysScanner, backend.Walker,
// backend.Versioned, backend.Batcher, backend.Watcher, backend.SysSwapper,
// backend.Presence, and Batch.FailOnConflict of a store both Batcher and
// Versioned) is checked on the stores that claim it, and revisions on the
// stores that set Options.Revisions; each subtest is skipped, saying so,
// on the others.
//
// A store that physically cannot do something the contract asks (a
// directory store cannot set a time its filesystem has no room for) runs
// the suite with RunWith and an Options field that names the limit; each
// field relaxes one check for the stores that set it, never for all.
//
// # Concurrency
//
// Run runs its subtests one after another on the test's goroutine (none
// is parallel), each on its own store, and calls the opener from there.
// One subtest uses a store from 16 goroutines at once: that is the
// contract it checks (every backend.Store is safe for concurrent use).
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
)

// Opener opens (creating if needed) the store kept in dir.
type Opener func(t *testing.T, dir string) (backend.Store, error)

// Options names what a store physically cannot do. The zero value checks
// everything, as Run does.
type Options struct {
	// HostTimes: the store keeps times in the filesystem that holds its
	// directory, whose range is limited (ext4: 1901 to 2446, xfs with
	// bigtime: 1901 to 2486), and the kernel clamps a time outside it
	// without an error. Times tests a time far from now (year 2500,
	// before 1970) only where a probe file in another directory of
	// t.TempDir()'s filesystem keeps it exactly, and logs the time it
	// leaves out. Without it, every time must round-trip.
	HostTimes bool

	// HostDevices: the store makes device nodes with mknod(2), which
	// needs CAP_MKNOD in the initial user namespace, not just uid 0 (a
	// rootless container, a user namespace). Devices is skipped, naming
	// the reason, when a probe mknod in another directory of
	// t.TempDir()'s filesystem fails with EPERM. Without it, a root
	// process's store must keep device nodes.
	HostDevices bool

	// ImplicitDirs: the store lists the directories above its keys as
	// entries of their own whether or not a Save named them, and may
	// keep them after their last key is deleted (the directories of a
	// directory store are real ones). The subtests that save no
	// directory then leave directory entries out of the lists they
	// compare; those that save directories check the ones they saved.
	// Without it, List gives exactly the keys saved and not deleted.
	ImplicitDirs bool

	// Revisions: the store numbers its writes (backend.Info.Rev), and
	// Revisions checks how. Without it, the store must leave Rev 0.
	Revisions bool

	// External changes the store as another writer would; a store that
	// is a backend.Watcher must set it (see ExternalFunc).
	External ExternalFunc
}

type suite struct {
	open Opener
	opts Options
}

// Run runs every conformance test against stores made by open, checking
// everything (the zero Options).
func Run(t *testing.T, open Opener) {
	RunWith(t, open, Options{})
}

// RunWith runs every conformance test against stores made by open, with
// the limits opts names.
func RunWith(t *testing.T, open Opener, opts Options) {
	s := suite{open: open, opts: opts}
	tests := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"EmptyList", s.testEmptyList},
		{"RoundTrip", s.testRoundTrip},
		{"Overwrite", s.testOverwrite},
		{"ListAfterSaveAndDelete", s.testListAfterSaveAndDelete},
		{"ListMetadata", s.testListMetadata},
		{"MissingKeys", s.testMissingKeys},
		{"FileAsDirectory", s.testFileAsDirectory},
		{"InvalidKeys", s.testInvalidKeys},
		{"LongKeys", s.testLongKeys},
		{"Dotfiles", s.testDotfiles},
		{"ReservedKeys", s.testReservedKeys},
		{"NoRetain", s.testNoRetain},
		{"Concurrent", s.testConcurrent},
		{"Reopen", s.testReopen},
		{"InUse", s.testInUse},
		{"BigBatch", s.testBigBatch},
		{"XAttrs", s.testXAttrs},
		{"InvalidXAttrs", s.testInvalidXAttrs},
		{"SysRecords", s.testSysRecords},
		{"SysScan", s.testSysScan},
		{"Versioned", s.testVersioned},
		{"NodeTypes", s.testNodeTypes},
		{"Devices", s.testDevices},
		{"ModeBits", s.testModeBits},
		{"Times", s.testTimes},
		{"HardLinks", s.testHardLinks},
		{"DirectoryEntries", s.testDirectoryEntries},
		{"TypeReplaced", s.testTypeReplaced},
		{"InvalidEntries", s.testInvalidEntries},
		{"Walk", s.testWalk},
		{"Batcher", s.testBatcher},
		{"Watcher", s.testWatcher},
		{"Revisions", s.testRevisions},
		{"FailOnConflict", s.testFailOnConflict},
		{"SysSwapper", s.testSysSwapper},
		{"Presence", s.testPresence},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.fn)
	}
}

func (s suite) openT(t *testing.T, dir string) backend.Store {
	t.Helper()
	st, err := s.open(t, dir)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func (s suite) fresh(t *testing.T) backend.Store {
	t.Helper()
	return s.openT(t, t.TempDir())
}

// entry makes an entry with deterministic metadata.
func entry(key string, value []byte) backend.Entry {
	return backend.Entry{Key: key, Value: value, Info: backend.Info{
		Size:  int64(len(value)),
		MTime: time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC),
		Mode:  0o644,
		UID:   uint32(os.Getuid()),
		GID:   uint32(os.Getgid()),
	}}
}

func save(t *testing.T, st backend.Store, entries ...backend.Entry) {
	t.Helper()
	if err := st.Save(t.Context(), entries...); err != nil {
		t.Fatalf("Save: %v", err)
	}
}

// list is listAll, without the directories a store with
// Options.ImplicitDirs lists of its own accord: for the subtests that save
// no directory.
func (s suite) list(t *testing.T, st backend.Store) []backend.Entry {
	t.Helper()
	all := listAll(t, st)
	if !s.opts.ImplicitDirs {
		return all
	}
	return slices.DeleteFunc(all, func(e backend.Entry) bool { return e.Info.Mode.IsDir() })
}

// listAll is List, checked to be sorted and without values.
func listAll(t *testing.T, st backend.Store) []backend.Entry {
	t.Helper()
	got, err := st.List(t.Context())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, e := range got {
		if e.Value != nil {
			t.Errorf("List returned a value for %q", e.Key)
		}
	}
	if !slices.IsSortedFunc(got, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) }) {
		t.Errorf("List not sorted: %v", keysOf(got))
	}
	return got
}

func keysOf(es []backend.Entry) []string {
	ks := make([]string, len(es))
	for i, e := range es {
		ks[i] = e.Key
	}
	return ks
}

func loadOne(t *testing.T, st backend.Store, key string) backend.Entry {
	t.Helper()
	got, err := st.Load(t.Context(), key)
	if err != nil {
		t.Fatalf("Load(%q): %v", key, err)
	}
	if len(got) != 1 || got[0].Key != key {
		t.Fatalf("Load(%q) = %v, want one entry for the key", key, keysOf(got))
	}
	return got[0]
}

func (s suite) testEmptyList(t *testing.T) {
	st := s.fresh(t)
	if got := s.list(t, st); len(got) != 0 {
		t.Fatalf("List on a new store = %v, want empty", keysOf(got))
	}
}

func binary(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func (s suite) testRoundTrip(t *testing.T) {
	st := s.fresh(t)
	values := map[string][]byte{
		"memory/empty-nil.md":  nil,
		"memory/empty-zero.md": {},
		"memory/global.md":     []byte("# Global\nremember this\n"),
		"bin/all-bytes":        binary(256, 1),
		"bin/nul-and-newline":  []byte("a\x00b\nc\r\n\x00"),
		"big/multi-mib.bin":    binary(5<<20+17, 2),
		"日本語/メモ.md":            []byte("こんにちは"),
		"a b/with space & sym": []byte("x"),
	}
	var batch []backend.Entry
	for k, v := range values {
		batch = append(batch, entry(k, v))
	}
	save(t, st, batch...)
	for k, v := range values {
		got := loadOne(t, st, k)
		if !bytes.Equal(got.Value, v) {
			t.Errorf("Load(%q): got %d bytes, want %d (content differs)", k, len(got.Value), len(v))
		}
		if got.Info.Size != int64(len(v)) {
			t.Errorf("Load(%q): Size = %d, want %d", k, got.Info.Size, len(v))
		}
	}
	// Load of several keys keeps the order asked for.
	keys := []string{"memory/global.md", "bin/all-bytes", "memory/empty-nil.md"}
	got, err := st.Load(t.Context(), keys...)
	if err != nil {
		t.Fatalf("Load(%v): %v", keys, err)
	}
	if !slices.Equal(keysOf(got), keys) {
		t.Fatalf("Load order = %v, want %v", keysOf(got), keys)
	}
}

func (s suite) testOverwrite(t *testing.T) {
	st := s.fresh(t)
	save(t, st, entry("k", []byte("a much longer first value")))
	save(t, st, entry("k", []byte("short")))
	if got := loadOne(t, st, "k"); string(got.Value) != "short" {
		t.Fatalf("after overwrite got %q, want %q", got.Value, "short")
	}
	if l := s.list(t, st); len(l) != 1 || l[0].Info.Size != 5 {
		t.Fatalf("List after overwrite = %+v, want one key of size 5", l)
	}
}

func (s suite) testListAfterSaveAndDelete(t *testing.T) {
	st := s.fresh(t)
	save(t, st,
		entry("memory/a.md", []byte("a")),
		entry("memory/deep/b.md", []byte("bb")),
		entry("skills/x/SKILL.md", []byte("ccc")),
		entry("agents/e.json", []byte("{}")),
	)
	want := []string{"agents/e.json", "memory/a.md", "memory/deep/b.md", "skills/x/SKILL.md"}
	if got := keysOf(s.list(t, st)); !slices.Equal(got, want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
	if err := st.Delete(t.Context(), "memory/deep/b.md", "agents/e.json", "never/was"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	want = []string{"memory/a.md", "skills/x/SKILL.md"}
	if got := keysOf(s.list(t, st)); !slices.Equal(got, want) {
		t.Fatalf("List after Delete = %v, want %v", got, want)
	}
	if err := st.Delete(t.Context()); err != nil {
		t.Fatalf("Delete of nothing: %v", err)
	}
	// A key can come back after it was deleted, also where its old
	// directory was removed.
	save(t, st, entry("memory/deep/b.md", []byte("again")))
	if got := loadOne(t, st, "memory/deep/b.md"); string(got.Value) != "again" {
		t.Fatalf("Load after re-save = %q", got.Value)
	}
}

func (s suite) testListMetadata(t *testing.T) {
	st := s.fresh(t)
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	if uid == 0 {
		uid, gid = 1234, 5678 // root may give files to anyone
	}
	mt := time.Date(2025, 12, 31, 23, 59, 58, 987654321, time.UTC)
	e1 := entry("a/exec.sh", []byte("#!/bin/sh\necho hi\n"))
	e1.Info.Mode, e1.Info.MTime, e1.Info.UID, e1.Info.GID = 0o755, mt, uid, gid
	e2 := entry("a/private.md", []byte("secret-ish"))
	e2.Info.Mode = 0o600
	e3 := entry("b/nomtime", []byte("x"))
	e3.Info.MTime = time.Time{}
	e3.Info.Size = 999 // Size is taken from the value, not trusted
	before := time.Now().Add(-2 * time.Second)
	save(t, st, e1, e2, e3)
	after := time.Now().Add(2 * time.Second)

	got := s.list(t, st)
	if len(got) != 3 {
		t.Fatalf("List = %v, want 3 keys", keysOf(got))
	}
	byKey := map[string]backend.Info{}
	for _, e := range got {
		byKey[e.Key] = e.Info
	}
	check := func(key string, want backend.Info) {
		t.Helper()
		g := byKey[key]
		if g.Size != want.Size {
			t.Errorf("%s: Size = %d, want %d", key, g.Size, want.Size)
		}
		if g.Mode != want.Mode {
			t.Errorf("%s: Mode = %v, want %v", key, g.Mode, want.Mode)
		}
		if !want.MTime.IsZero() && !g.MTime.Equal(want.MTime) {
			t.Errorf("%s: MTime = %v, want %v", key, g.MTime, want.MTime)
		}
		if g.UID != want.UID || g.GID != want.GID {
			t.Errorf("%s: owner = %d:%d, want %d:%d", key, g.UID, g.GID, want.UID, want.GID)
		}
	}
	check("a/exec.sh", e1.Info)
	check("a/private.md", e2.Info)
	e3.Info.Size = 1
	check("b/nomtime", e3.Info)
	if m := byKey["b/nomtime"].MTime; m.Before(before) || m.After(after) {
		t.Errorf("zero MTime stored as %v, want the time of the save", m)
	}
	// Load reports the same Info as List.
	l := loadOne(t, st, "a/exec.sh").Info
	if li := byKey["a/exec.sh"]; l.Size != li.Size || l.Mode != li.Mode || !l.MTime.Equal(li.MTime) || l.UID != li.UID || l.GID != li.GID {
		t.Errorf("Load Info = %+v, List Info = %+v", l, li)
	}
}

func (s suite) testMissingKeys(t *testing.T) {
	st := s.fresh(t)
	save(t, st, entry("here", []byte("1")))
	for _, keys := range [][]string{{"nothere"}, {"here", "gone/deep.md"}} {
		_, err := st.Load(t.Context(), keys...)
		if !errors.Is(err, backend.ErrKeyNotFound) {
			t.Fatalf("Load(%v) = %v, want ErrKeyNotFound", keys, err)
		}
		missing := keys[len(keys)-1]
		if !strings.Contains(err.Error(), missing) {
			t.Errorf("Load(%v) error %q does not name %q", keys, err, missing)
		}
	}
}

func (s suite) testFileAsDirectory(t *testing.T) {
	st := s.fresh(t)
	save(t, st, entry("a", []byte("file")))
	if _, err := st.Load(t.Context(), "a/b"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Fatalf("Load(a/b) with a a file = %v, want ErrKeyNotFound", err)
	}
	if err := st.Delete(t.Context(), "a/b"); err != nil {
		t.Fatalf("Delete(a/b) with a a file = %v, want nil", err)
	}
}

func invalidKeys() []string {
	return []string{
		"", "/abs", "trailing/", "a//b", ".", "..", "./a", "a/./b", "a/../b", "../escape",
		"../../etc/passwd", "nul\x00", "bad\xffutf8", strings.Repeat("n", 256),
		// Control characters: a terminal would act on them when memfs
		// prints the name (ESC sequences), or a line would split in two.
		"new\nline", "esc\x1b]0;title\a", "dir\x01/a", "del\x7f", "c1\u009b31m",
		strings.Repeat("abcdefgh/", 456) + strings.Repeat("n", 256), // deep, and its last segment too long
	}
}

func (s suite) testInvalidKeys(t *testing.T) {
	st := s.fresh(t)
	for _, k := range invalidKeys() {
		if err := st.Save(t.Context(), entry(k, []byte("x"))); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Save(%.30q) = %v, want ErrInvalidKey", k, err)
		}
		// A valid key in the same batch is not written either.
		if err := st.Save(t.Context(), entry("valid", []byte("x")), entry(k, []byte("x"))); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Save(valid, %.30q) = %v, want ErrInvalidKey", k, err)
		}
		if _, err := st.Load(t.Context(), k); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Load(%.30q) = %v, want ErrInvalidKey", k, err)
		}
		if err := st.Delete(t.Context(), k); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Delete(%.30q) = %v, want ErrInvalidKey", k, err)
		}
	}
	if got := s.list(t, st); len(got) != 0 {
		t.Fatalf("after invalid saves List = %v, want empty", keysOf(got))
	}
}

// testDotfiles: names that start with "." are ordinary keys (a .git
// directory, .gitignore, .env).
func (s suite) testDotfiles(t *testing.T) {
	st := s.fresh(t)
	keys := []string{".env", ".git/HEAD", ".git/refs/heads/main", "a/.gitignore", "a/.memfs", "a/..x", "memory/.hidden.md"}
	for _, k := range keys {
		if err := st.Save(t.Context(), entry(k, []byte("v "+k))); err != nil {
			t.Fatalf("Save(%q) = %v", k, err)
		}
	}
	for _, k := range keys {
		got, err := st.Load(t.Context(), k)
		if err != nil || string(got[0].Value) != "v "+k {
			t.Errorf("Load(%q) = %v, %v", k, got, err)
		}
	}
	listed := map[string]bool{}
	for _, e := range s.list(t, st) {
		listed[e.Key] = true
	}
	for _, k := range keys {
		if !listed[k] {
			t.Errorf("List misses %q", k)
		}
	}
	if err := st.Delete(t.Context(), ".env"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load(t.Context(), ".env"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Errorf("Load(.env) after Delete = %v", err)
	}
}

// testReservedKeys: memfs's own names are never persisted or read.
func (s suite) testReservedKeys(t *testing.T) {
	st := s.fresh(t)
	for _, k := range []string{".memfs", ".memfs/status", ".memfs-journal", ".memfs.lock", ".memfs-sys/x", "a/.memfs-tmp-1"} {
		if err := st.Save(t.Context(), entry(k, []byte("x"))); !errors.Is(err, backend.ErrReserved) {
			t.Errorf("Save(%q) = %v, want ErrReserved", k, err)
		}
		if _, err := st.Load(t.Context(), k); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Load(%q) = %v, want ErrInvalidKey", k, err)
		}
		if err := st.Delete(t.Context(), k); !errors.Is(err, backend.ErrInvalidKey) {
			t.Errorf("Delete(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
	if got := s.list(t, st); len(got) != 0 {
		t.Fatalf("List = %v, want no reserved keys", keysOf(got))
	}
}

func (s suite) testNoRetain(t *testing.T) {
	st := s.fresh(t)
	v := []byte("original")
	save(t, st, entry("k", v))
	copy(v, "MUTATED!")
	got := loadOne(t, st, "k")
	if string(got.Value) != "original" {
		t.Fatalf("store retained the caller's slice: got %q", got.Value)
	}
	got.Value[0] = 'X'
	if again := loadOne(t, st, "k"); string(again.Value) != "original" {
		t.Fatalf("Load returned a slice the store still uses: got %q", again.Value)
	}
}

func (s suite) testConcurrent(t *testing.T) {
	st := s.fresh(t)
	const workers, rounds = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*3) // up to three errors a round: never blocks
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				key := fmt.Sprintf("w%02d/k%02d", w, r%5)
				val := fmt.Appendf(nil, "worker %d round %d", w, r)
				if err := st.Save(context.Background(), entry(key, val)); err != nil {
					errs <- err
					return
				}
				got, err := st.Load(context.Background(), key)
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got[0].Value, val) {
					errs <- fmt.Errorf("%s: read %q after writing %q", key, got[0].Value, val)
				}
				if _, err := st.List(context.Background()); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := s.list(t, st); len(got) != workers*5 {
		t.Fatalf("List has %d keys, want %d", len(got), workers*5)
	}
}

func (s suite) testReopen(t *testing.T) {
	dir := t.TempDir()
	st, err := s.open(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			st.Close()
		}
	})
	big := binary(3<<20, 3)
	e := entry("skills/x/SKILL.md", big)
	e.Info.Mode = 0o750
	save(t, st, e, entry("memory/a.md", []byte("a")), entry("memory/b.md", []byte("b")))
	if err := st.Delete(t.Context(), "memory/b.md"); err != nil {
		t.Fatal(err)
	}
	closed = true
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	st2 := s.openT(t, dir)
	if got := keysOf(s.list(t, st2)); !slices.Equal(got, []string{"memory/a.md", "skills/x/SKILL.md"}) {
		t.Fatalf("List after reopen = %v", got)
	}
	got := loadOne(t, st2, "skills/x/SKILL.md")
	if !bytes.Equal(got.Value, big) || got.Info.Mode != 0o750 {
		t.Fatalf("after reopen: %d bytes mode %v, want %d bytes mode 0750", len(got.Value), got.Info.Mode, len(big))
	}
}

func (s suite) testInUse(t *testing.T) {
	dir := t.TempDir()
	first := s.openT(t, dir)
	second, err := s.open(t, dir)
	if err == nil {
		second.Close()
		t.Fatal("second Open of a held store succeeded, want ErrStoreInUse")
	}
	if !errors.Is(err, backend.ErrStoreInUse) {
		t.Fatalf("second Open = %v, want ErrStoreInUse", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("process %d:", os.Getpid())) {
		t.Errorf("in-use error %q does not name the holder's PID %d", err, os.Getpid())
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	third := s.openT(t, dir)
	s.list(t, third)
}

func (s suite) testBigBatch(t *testing.T) {
	st := s.fresh(t)
	const n = 3000
	batch := make([]backend.Entry, n)
	for i := range batch {
		batch[i] = entry(fmt.Sprintf("d%02d/f%04d.md", i%30, i), binary(4096, uint64(i)))
	}
	save(t, st, batch...)
	if got := s.list(t, st); len(got) != n {
		t.Fatalf("List = %d keys, want %d", len(got), n)
	}
	keys := keysOf(batch)
	if err := st.Delete(t.Context(), keys[:n/2]...); err != nil {
		t.Fatal(err)
	}
	if got := s.list(t, st); len(got) != n-n/2 {
		t.Fatalf("List after Delete = %d keys, want %d", len(got), n-n/2)
	}
}

// testVersioned checks SaveIf on stores that offer it: the expected
// version is replaced silently; any other (changed, or created where none
// was expected) is kept under a conflict key, never lost.
func (s suite) testVersioned(t *testing.T) {
	st := s.fresh(t)
	cs, ok := st.(backend.Versioned)
	if !ok {
		t.Skip("the store is not backend.Versioned")
	}
	first := entry("memory/a.md", []byte("first"))
	save(t, st, first)
	ver := backend.VersionOf(s.list(t, st)[0].Info)
	ifSave := func(e backend.Entry, want backend.Version) map[string]string {
		t.Helper()
		c, err := cs.SaveIf(t.Context(), []backend.Entry{e}, []backend.Version{want})
		if err != nil {
			t.Fatalf("SaveIf %s: %v", e.Key, err)
		}
		return c
	}
	second := entry("memory/a.md", []byte("second"))
	second.Info.MTime = second.Info.MTime.Add(time.Second)
	if c := ifSave(second, ver); len(c) != 0 {
		t.Fatalf("SaveIf with the stored version: conflicts %v, want none", c)
	}
	// The stored version is "second" now; expecting "first" is stale.
	third := entry("memory/a.md", []byte("third"))
	c := ifSave(third, ver)
	if len(c) != 1 || c["memory/a.md"] == "" {
		t.Fatalf("SaveIf with a stale version: conflicts %v, want one for memory/a.md", c)
	}
	kept := load(t, st, c["memory/a.md"])
	if string(kept.Value) != "second" {
		t.Errorf("the conflict copy holds %q, want the version found (second)", kept.Value)
	}
	if got := load(t, st, "memory/a.md"); string(got.Value) != "third" {
		t.Errorf("the key holds %q after a conflicting save, want the saved entry", got.Value)
	}
	// A key expected absent that exists is a conflict too.
	save(t, st, entry("memory/b.md", []byte("theirs")))
	c = ifSave(entry("memory/b.md", []byte("ours")), backend.Version{})
	if len(c) != 1 || string(load(t, st, c["memory/b.md"]).Value) != "theirs" {
		t.Errorf("SaveIf expecting no key over an existing one: conflicts %v", c)
	}
	// A key expected present that is gone is simply saved.
	if c := ifSave(entry("memory/new.md", []byte("n")), ver); len(c) != 0 {
		t.Errorf("SaveIf of a missing key: conflicts %v, want none", c)
	}
}

func load(t *testing.T, st backend.Store, key string) backend.Entry {
	t.Helper()
	got, err := st.Load(t.Context(), key)
	if err != nil {
		t.Fatalf("Load %s: %v", key, err)
	}
	return got[0]
}
