package storetest

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

// node makes an entry of the node type and mode in mode, with value (a
// file's content, a symlink's target).
func node(key string, mode fs.FileMode, value string) backend.Entry {
	var v []byte
	if value != "" {
		v = []byte(value)
	}
	e := entry(key, v)
	e.Info.Mode = mode
	return e
}

// byKey indexes a listing by key.
func byKey(es []backend.Entry) map[string]backend.Entry {
	m := make(map[string]backend.Entry, len(es))
	for _, e := range es {
		m[e.Key] = e
	}
	return m
}

// checkNode compares what the store gave for one key with the entry saved:
// the exact node type and mode, the size (the value's length: a symlink's
// target, 0 for a node without a value), the owner, the device number, the
// attributes and, when got came from Load, the value.
func checkNode(t *testing.T, when string, got, want backend.Entry, loaded bool) {
	t.Helper()
	if got.Key != want.Key {
		t.Errorf("%s: got key %q, want %q", when, got.Key, want.Key)
		return
	}
	k := want.Key
	if got.Info.Mode != want.Info.Mode {
		t.Errorf("%s: %s: Mode = %v (%s), want %v (%s)", when, k, got.Info.Mode, backend.TypeName(got.Info.Mode), want.Info.Mode, backend.TypeName(want.Info.Mode))
	}
	if got.Info.Size != int64(len(want.Value)) {
		t.Errorf("%s: %s: Size = %d, want %d", when, k, got.Info.Size, len(want.Value))
	}
	if got.Info.UID != want.Info.UID || got.Info.GID != want.Info.GID {
		t.Errorf("%s: %s: owner = %d:%d, want %d:%d", when, k, got.Info.UID, got.Info.GID, want.Info.UID, want.Info.GID)
	}
	if got.Info.Rdev != want.Info.Rdev {
		t.Errorf("%s: %s: Rdev = %#x, want %#x", when, k, got.Info.Rdev, want.Info.Rdev)
	}
	if !sameXAttrs(got.Info.XAttrs, want.Info.XAttrs) {
		t.Errorf("%s: %s: xattrs = %q, want %q", when, k, got.Info.XAttrs, want.Info.XAttrs)
	}
	if loaded && !bytes.Equal(got.Value, want.Value) {
		t.Errorf("%s: %s: Load value = %q, want %q", when, k, trim(got.Value), trim(want.Value))
	}
}

func trim(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// checkSaved checks every entry of want through List and Load, and that
// List gives no key but these (and, with Options.ImplicitDirs, directories).
func (s suite) checkSaved(t *testing.T, st backend.Store, when string, want ...backend.Entry) {
	t.Helper()
	listed := byKey(listAll(t, st))
	wanted := map[string]bool{}
	for _, w := range want {
		wanted[w.Key] = true
		g, ok := listed[w.Key]
		if !ok {
			t.Errorf("%s: List misses %s (a %s)", when, w.Key, backend.TypeName(w.Info.Mode))
			continue
		}
		checkNode(t, when+": List", g, w, false)
		got, err := st.Load(t.Context(), w.Key)
		if err != nil {
			t.Errorf("%s: Load(%s): %v", when, w.Key, err)
			continue
		}
		checkNode(t, when+": Load", got[0], w, true)
	}
	for k, e := range listed {
		if !wanted[k] && !(s.opts.ImplicitDirs && e.Info.Mode.IsDir()) {
			t.Errorf("%s: List gives %s (a %s), which was not saved", when, k, backend.TypeName(e.Info.Mode))
		}
	}
}

// reopen closes st and opens the store in dir again.
func (s suite) reopen(t *testing.T, st backend.Store, dir string) backend.Store {
	t.Helper()
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return s.openT(t, dir)
}

// testNodeTypes: every node type but devices round-trips with its exact
// type, mode, size and value. A symlink is never followed: its value is
// the target, whether it points inside the store, outside it, or nowhere,
// and List does not descend through a link to a directory.
func (s suite) testNodeTypes(t *testing.T) {
	dir := t.TempDir()
	st := s.openT(t, dir)
	want := []backend.Entry{
		node("file", 0o644, "content\n"),
		node("dir", fs.ModeDir|0o755, ""),
		node("dir/inner", 0o600, "inside"),
		node("sub", fs.ModeDir|0o750, ""),
		node("sub/rel", fs.ModeSymlink|0o777, "../file"),
		node("abs", fs.ModeSymlink|0o777, "/etc/passwd"),
		node("dangling", fs.ModeSymlink|0o777, "no/such/target"),
		node("todir", fs.ModeSymlink|0o777, "dir"),
		node("fifo", fs.ModeNamedPipe|0o640, ""),
		node("sock", fs.ModeSocket|0o755, ""),
	}
	save(t, st, want...)
	s.checkSaved(t, st, "after save", want...)
	st = s.reopen(t, st, dir)
	s.checkSaved(t, st, "after reopen", want...)
	if _, err := st.Load(t.Context(), "todir/inner"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Errorf("Load(todir/inner) through a symlink to a directory = %v, want ErrKeyNotFound", err)
	}
}

// testDevices: character and block devices keep their device numbers.
func (s suite) testDevices(t *testing.T) {
	if s.opts.HostDevices && os.Geteuid() != 0 {
		t.Skip("not root: mknod(2) of a device needs CAP_MKNOD, which this store's Save uses (HostDevices)")
	}
	if s.opts.HostDevices {
		p := filepath.Join(t.TempDir(), "probe")
		if err := unix.Mknod(p, unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))); errors.Is(err, unix.EPERM) {
			t.Skipf("Options.HostDevices: this root process cannot make a device node (%v): a user namespace or a container without CAP_MKNOD", err)
		}
	}
	dir := t.TempDir()
	st := s.openT(t, dir)
	chr := node("null", fs.ModeDevice|fs.ModeCharDevice|0o666, "")
	chr.Info.Rdev = unix.Mkdev(1, 3)
	blk := node("loop0", fs.ModeDevice|0o660, "")
	blk.Info.Rdev = unix.Mkdev(7, 0)
	big := node("big", fs.ModeDevice|fs.ModeCharDevice|0o600, "")
	big.Info.Rdev = unix.Mkdev(4095, 1<<20-1) // the largest major and minor Linux has
	save(t, st, chr, blk, big)
	s.checkSaved(t, st, "after save", chr, blk, big)
	st = s.reopen(t, st, dir)
	s.checkSaved(t, st, "after reopen", chr, blk, big)
}

// testModeBits: setuid, setgid and sticky on files and directories, and
// modes that leave the owner no access, are kept exactly; a file of mode
// 0000 still gives its value.
func (s suite) testModeBits(t *testing.T) {
	dir := t.TempDir()
	st := s.openT(t, dir)
	want := []backend.Entry{
		node("suid", fs.ModeSetuid|0o755, "#!/bin/sh\n"),
		node("sgid", fs.ModeSetgid|0o750, "g"),
		node("sticky", fs.ModeSticky|0o644, "s"),
		node("all", fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky|0o777, "a"),
		node("none", 0, "no access"),
		node("d-sgid", fs.ModeDir|fs.ModeSetgid|0o775, ""),
		node("d-sticky", fs.ModeDir|fs.ModeSticky|0o777, ""),
		node("d-none", fs.ModeDir, ""),
		node("d-private", fs.ModeDir|0o700, ""),
	}
	save(t, st, want...)
	s.checkSaved(t, st, "after save", want...)
	st = s.reopen(t, st, dir)
	s.checkSaved(t, st, "after reopen", want...)
}

// ctimeSlack covers the kernel's coarse clock, which stamps a ctime up to
// a tick before time.Now reads the same moment.
const ctimeSlack = time.Second

// testTimes: atime and mtime round-trip exactly (nanoseconds, far from
// now, before 1970); a zero atime is the mtime. A ctime is the one given,
// or, where the system sets ctimes itself, the time of the save; a zero
// ctime is the time of the save.
func (s suite) testTimes(t *testing.T) {
	dir := t.TempDir()
	st := s.openT(t, dir)
	mt := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)
	at := time.Date(2025, 11, 12, 13, 14, 15, 987654321, time.UTC) // before the mtime
	timed := func(key string, mode fs.FileMode, value string, mtime, atime time.Time) backend.Entry {
		e := node(key, mode, value)
		e.Info.MTime, e.Info.ATime = mtime, atime
		return e
	}
	want := []backend.Entry{
		timed("file", 0o644, "f", mt, at),
		timed("later-atime", 0o644, "l", mt, mt.Add(90*time.Minute+1)),
		timed("dir", fs.ModeDir|0o755, "", mt, at),
		timed("link", fs.ModeSymlink|0o777, "file", mt, at),
		timed("zero-atime", 0o644, "z", mt, time.Time{}),
	}
	far := []backend.Entry{
		timed("y2500", 0o644, "future", time.Date(2500, 6, 7, 8, 9, 10, 123456789, time.UTC), time.Date(2500, 6, 7, 8, 9, 11, 5, time.UTC)),
		timed("y1960", 0o644, "past", time.Date(1960, 1, 2, 3, 4, 5, 600000000, time.UTC), time.Date(1969, 12, 31, 23, 59, 59, 500000000, time.UTC)),
	}
	for _, e := range far {
		if s.opts.HostTimes && !hostKeeps(t, e.Info.MTime, e.Info.ATime) {
			t.Logf("Options.HostTimes: %s left out: this filesystem does not keep mtime %v, atime %v", e.Key, e.Info.MTime, e.Info.ATime)
			continue
		}
		want = append(want, e)
	}
	given := node("given-ctime", 0o644, "c")
	given.Info.CTime = time.Date(2021, 2, 3, 4, 5, 6, 789, time.UTC)
	zero := node("zero-ctime", 0o644, "z")
	before := time.Now()
	save(t, st, append(want, given, zero)...)
	after := time.Now()

	check := func(st backend.Store, when string) {
		t.Helper()
		listed := byKey(listAll(t, st))
		for _, w := range want {
			wa := w.Info.ATime
			if wa.IsZero() {
				wa = w.Info.MTime
			}
			for _, src := range []string{"List", "Load"} {
				g := listed[w.Key]
				if src == "Load" {
					g = loadOne(t, st, w.Key)
				}
				if !g.Info.MTime.Equal(w.Info.MTime) {
					t.Errorf("%s: %s %s: MTime = %v, want %v", when, src, w.Key, g.Info.MTime, w.Info.MTime)
				}
				if !g.Info.ATime.Equal(wa) {
					t.Errorf("%s: %s %s: ATime = %v, want %v", when, src, w.Key, g.Info.ATime, wa)
				}
			}
		}
		saveTime := func(c time.Time) bool {
			return !c.Before(before.Add(-ctimeSlack)) && !c.After(after.Add(ctimeSlack))
		}
		for _, src := range []string{"List", "Load"} {
			g, z := listed["given-ctime"], listed["zero-ctime"]
			if src == "Load" {
				g, z = loadOne(t, st, "given-ctime"), loadOne(t, st, "zero-ctime")
			}
			if c := g.Info.CTime; !c.Equal(given.Info.CTime) && !saveTime(c) {
				t.Errorf("%s: %s given-ctime: CTime = %v, want the one given (%v) or the time of the save (%v to %v)",
					when, src, c, given.Info.CTime, before, after)
			}
			if c := z.Info.CTime; !saveTime(c) {
				t.Errorf("%s: %s zero-ctime: CTime = %v, want the time of the save (%v to %v)", when, src, c, before, after)
			}
		}
	}
	check(st, "after save")
	st = s.reopen(t, st, dir)
	check(st, "after reopen")
}

// hostKeeps reports whether a file on t.TempDir()'s filesystem keeps
// mtime and atime exactly (Options.HostTimes).
func hostKeeps(t *testing.T, mtime, atime time.Time) bool {
	t.Helper()
	p := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, atime, mtime); err != nil {
		return false
	}
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Mtim.Unix()).Equal(mtime) && time.Unix(st.Atim.Unix()).Equal(atime)
}

// testHardLinks: names saved with the same Link are listed with equal
// non-empty Links, one value and one mode; another group gets another
// Link, a lone node none. Deleting one name leaves the others whole.
func (s suite) testHardLinks(t *testing.T) {
	dir := t.TempDir()
	st := s.openT(t, dir)
	linked := func(key, link, value string) backend.Entry {
		e := node(key, 0o640, value)
		e.Info.Link = link
		return e
	}
	g1 := []backend.Entry{linked("h/a", "one", "shared\n"), linked("o/b", "one", "shared\n")}
	g2 := []backend.Entry{linked("h/c", "two", "other"), linked("h/d", "two", "other")}
	lone := node("h/single", 0o640, "alone")
	save(t, st, append(append(slices.Clone(g1), g2...), lone)...)

	check := func(st backend.Store, when string) {
		t.Helper()
		listed := byKey(listAll(t, st))
		for _, g := range [][]backend.Entry{g1, g2} {
			a, b := listed[g[0].Key], listed[g[1].Key]
			if a.Info.Link == "" || a.Info.Link != b.Info.Link {
				t.Errorf("%s: %s and %s, saved as one node, are listed with Links %q and %q: want equal and not empty",
					when, g[0].Key, g[1].Key, a.Info.Link, b.Info.Link)
			}
			for i := range g {
				checkNode(t, when+": List", listed[g[i].Key], g[i], false)
				checkNode(t, when+": Load", loadOne(t, st, g[i].Key), g[i], true)
			}
		}
		if l1, l2 := listed["h/a"].Info.Link, listed["h/c"].Info.Link; l1 != "" && l1 == l2 {
			t.Errorf("%s: two hard-link groups are listed with the same Link %q", when, l1)
		}
		if l := listed["h/single"].Info.Link; l != "" {
			t.Errorf("%s: a node with one name is listed with Link %q, want none", when, l)
		}
	}
	check(st, "after save")
	st = s.reopen(t, st, dir)
	check(st, "after reopen")

	if err := st.Delete(t.Context(), "h/a"); err != nil {
		t.Fatalf("Delete(h/a): %v", err)
	}
	if _, err := st.Load(t.Context(), "h/a"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Errorf("Load(h/a) after Delete = %v, want ErrKeyNotFound", err)
	}
	got := loadOne(t, st, "o/b")
	if string(got.Value) != "shared\n" || got.Info.Size != int64(len("shared\n")) || got.Info.Mode != 0o640 {
		t.Errorf("o/b after deleting h/a: %q, size %d, mode %v; want %q, mode 0640", got.Value, got.Info.Size, got.Info.Mode, "shared\n")
	}
	if _, ok := byKey(listAll(t, st))["o/b"]; !ok {
		t.Error("List misses o/b after deleting the other name of its node")
	}
}

// testDirectoryEntries: a directory is an entry of its own: listed empty,
// with its mode and attributes, before the keys under it; it survives the
// deletion of its last key, and an empty one can be deleted.
func (s suite) testDirectoryEntries(t *testing.T) {
	dir := t.TempDir()
	st := s.openT(t, dir)
	empty := node("empty", fs.ModeDir|0o755, "")
	d := node("d", fs.ModeDir|0o700, "")
	d.Info.XAttrs = map[string][]byte{"user.memfs.note": []byte("kept")}
	x := node("d/x", 0o644, "x")
	save(t, st, empty, d, x)

	keys := func(when string, want ...string) {
		t.Helper()
		if got := keysOf(listAll(t, st)); !slices.Equal(got, want) {
			t.Errorf("%s: List = %q, want %q", when, got, want)
		}
	}
	keys("after save", "d", "d/x", "empty")
	s.checkSaved(t, st, "after save", empty, d, x)
	st = s.reopen(t, st, dir)
	keys("after reopen", "d", "d/x", "empty")
	s.checkSaved(t, st, "after reopen", empty, d, x)

	if err := st.Delete(t.Context(), "d/x"); err != nil {
		t.Fatalf("Delete(d/x): %v", err)
	}
	keys("after deleting d/x", "d", "empty")
	s.checkSaved(t, st, "after deleting d/x", empty, d)

	if err := st.Delete(t.Context(), "d"); err != nil {
		t.Fatalf("Delete(d), an empty directory: %v", err)
	}
	keys("after deleting d", "empty")
	if _, err := st.Load(t.Context(), "d"); !errors.Is(err, backend.ErrKeyNotFound) {
		t.Errorf("Load(d) after Delete = %v, want ErrKeyNotFound", err)
	}
}

// testTypeReplaced: a key saved again as a node of another type holds only
// the latest.
func (s suite) testTypeReplaced(t *testing.T) {
	root := t.TempDir()
	st := s.openT(t, root)
	steps := []struct{ first, then backend.Entry }{
		{node("file-to-link", 0o644, "a file"), node("file-to-link", fs.ModeSymlink|0o777, "target")},
		{node("link-to-file", fs.ModeSymlink|0o777, "target"), node("link-to-file", 0o644, "now a file")},
		{node("fifo-to-file", fs.ModeNamedPipe|0o644, ""), node("fifo-to-file", 0o600, "was a fifo")},
		{node("dir-to-file", fs.ModeDir|0o755, ""), node("dir-to-file", 0o644, "was a dir")},
	}
	var first, then []backend.Entry
	for _, st := range steps {
		first, then = append(first, st.first), append(then, st.then)
	}
	save(t, st, first...)
	s.checkSaved(t, st, "first types", first...)
	save(t, st, then...)
	s.checkSaved(t, st, "replaced", then...)
	st = s.reopen(t, st, root)
	s.checkSaved(t, st, "replaced, after reopen", then...)
	// One at a time, too: a batch of one replaces as well.
	for _, e := range first {
		if err := st.Save(t.Context(), e); err != nil {
			// A directory entry over a file: deleted first (see below).
			if !e.Info.Mode.IsDir() || !errors.Is(err, fs.ErrExist) {
				t.Fatalf("Save(%s): %v", e.Key, err)
			}
			if err := st.Delete(t.Context(), e.Key); err != nil {
				t.Fatal(err)
			}
			save(t, st, e)
		}
	}
	s.checkSaved(t, st, "replaced back one by one", first...)
	// A directory entry may be refused where another node holds its key
	// (a directory store never destroys another program's file): the
	// caller deletes the node first.
	file, dir := node("file-to-dir", 0o644, "a file"), node("file-to-dir", fs.ModeDir|0o700, "")
	save(t, st, file)
	if err := st.Save(t.Context(), dir); err != nil {
		if !errors.Is(err, fs.ErrExist) {
			t.Fatalf("Save of a directory over a file = %v, want success or fs.ErrExist", err)
		}
		s.checkSaved(t, st, "a directory refused over a file", append(slices.Clone(first), file)...)
		if err := st.Delete(t.Context(), file.Key); err != nil {
			t.Fatal(err)
		}
		save(t, st, dir)
	}
	s.checkSaved(t, st, "file replaced by a directory", append(slices.Clone(first), dir)...)
}

// invalidEntries are entries backend.ValidateEntry refuses with
// ErrInvalidEntry, one of each kind.
func invalidEntries() []backend.Entry {
	withRdev := func(e backend.Entry) backend.Entry { e.Info.Rdev = unix.Mkdev(1, 3); return e }
	withLink := func(e backend.Entry, l string) backend.Entry { e.Info.Link = l; return e }
	return []backend.Entry{
		node("bad/symlink-without-target", fs.ModeSymlink|0o777, ""),
		node("bad/fifo-with-value", fs.ModeNamedPipe|0o644, "x"),
		node("bad/socket-with-value", fs.ModeSocket|0o755, "x"),
		node("bad/dir-with-value", fs.ModeDir|0o755, "x"),
		node("bad/device-with-value", fs.ModeDevice|fs.ModeCharDevice|0o600, "x"),
		withRdev(node("bad/file-with-rdev", 0o644, "x")),
		withRdev(node("bad/dir-with-rdev", fs.ModeDir|0o755, "")),
		withRdev(node("bad/symlink-with-rdev", fs.ModeSymlink|0o777, "t")),
		withRdev(node("bad/fifo-with-rdev", fs.ModeNamedPipe|0o644, "")),
		withLink(node("bad/linked-dir", fs.ModeDir|0o755, ""), "g"),
		withLink(node("bad/link-with-nul", 0o644, "x"), "g\x00h"),
		withLink(node("bad/link-too-long", 0o644, "x"), strings.Repeat("l", 256)),
		node("bad/irregular", fs.ModeIrregular|0o644, "x"),
		node("bad/temporary", fs.ModeTemporary|0o644, "x"),
		node("bad/append", fs.ModeAppend|0o644, "x"),
		node("bad/exclusive", fs.ModeExclusive|0o644, "x"),
		node("bad/two-types", fs.ModeDir|fs.ModeSymlink|0o777, ""),
		node("bad/pipe-and-socket", fs.ModeNamedPipe|fs.ModeSocket|0o644, ""),
	}
}

// testInvalidEntries: every kind of entry ValidateEntry refuses fails the
// Save (and SaveIf) with ErrInvalidEntry, alone or among good entries,
// and nothing of the batch is written.
func (s suite) testInvalidEntries(t *testing.T) {
	st := s.fresh(t)
	keep := node("keep", 0o644, "old")
	save(t, st, keep)
	cs, conditional := st.(backend.Versioned)
	for _, bad := range invalidEntries() {
		batches := [][]backend.Entry{
			{bad},
			{node("keep", 0o600, "new"), bad, node("fresh", 0o644, "fresh")},
			{node("fresh", fs.ModeDir|0o755, ""), node("fresh/x", 0o644, "x"), bad},
		}
		for _, b := range batches {
			if err := st.Save(t.Context(), b...); !errors.Is(err, backend.ErrInvalidEntry) {
				t.Errorf("Save(%q) = %v, want ErrInvalidEntry", keysOf(b), err)
			}
			if conditional {
				if _, err := cs.SaveIf(t.Context(), b, make([]backend.Version, len(b))); !errors.Is(err, backend.ErrInvalidEntry) {
					t.Errorf("SaveIf(%q) = %v, want ErrInvalidEntry", keysOf(b), err)
				}
			}
		}
	}
	s.checkSaved(t, st, "after refused saves", keep)
	if got := keysOf(listAll(t, st)); !slices.Equal(got, []string{"keep"}) {
		t.Errorf("after refused saves List = %q, want only keep", got)
	}
}
