package badgerstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/memfs/memfs/backend"
)

func sameInfo(a, b backend.Info) bool {
	return a.Size == b.Size && a.MTime.Equal(b.MTime) && a.ATime.Equal(b.ATime) && a.CTime.Equal(b.CTime) &&
		a.Mode == b.Mode && a.UID == b.UID && a.GID == b.GID && a.Rdev == b.Rdev && a.Link == b.Link &&
		maps.EqualFunc(a.XAttrs, b.XAttrs, bytes.Equal)
}

func TestMetaRoundTrip(t *testing.T) {
	mt := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)
	tests := []struct {
		name string
		info backend.Info
	}{
		{"ordinary", backend.Info{Size: 12, MTime: mt, ATime: mt.Add(time.Hour), CTime: mt.Add(2 * time.Hour), Mode: 0o644, UID: 1000, GID: 1000}},
		{"after 2262", backend.Info{Size: 1, MTime: time.Date(2400, 1, 1, 0, 0, 0, 1, time.UTC), ATime: time.Date(2500, 1, 1, 0, 0, 0, 2, time.UTC), CTime: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), Mode: 0o600}},
		{"before 1970", backend.Info{MTime: time.Date(1960, 1, 1, 0, 0, 0, 999999999, time.UTC), ATime: time.Date(1901, 1, 1, 0, 0, 0, 0, time.UTC), CTime: time.Unix(-1, 1), Mode: 0o755}},
		{"large", backend.Info{Size: 1 << 40, MTime: time.Unix(1, 0), Mode: 0o777, UID: 1<<32 - 1, GID: 1<<32 - 2}},
		{"special bits", backend.Info{Mode: fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky | 0o7777&0o777}},
		{"mode 0000", backend.Info{Mode: 0}},
		{"directory", backend.Info{Mode: fs.ModeDir | fs.ModeSetgid | fs.ModeSticky | 0o775, XAttrs: map[string][]byte{"user.a": []byte("1")}}},
		{"symlink", backend.Info{Size: 11, Mode: fs.ModeSymlink | 0o777}},
		{"fifo", backend.Info{Mode: fs.ModeNamedPipe | 0o600}},
		{"socket", backend.Info{Mode: fs.ModeSocket | 0o755}},
		{"block device", backend.Info{Mode: fs.ModeDevice | 0o660, Rdev: 0x0801}},
		{"char device", backend.Info{Mode: fs.ModeDevice | fs.ModeCharDevice | 0o666, Rdev: 1<<64 - 1}},
		{"hard link", backend.Info{Size: 3, Mode: 0o644, Link: "group-1"}},
		{"longest link", backend.Info{Mode: 0o644, Link: string(bytes.Repeat([]byte("l"), 255)),
			XAttrs: map[string][]byte{"user.empty": {}, "user.x": {0, 255}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := encodeMeta(tt.info)
			if b[0] != metaVersion {
				t.Fatalf("record version %d, want %d", b[0], metaVersion)
			}
			got, err := decodeMeta("k", b)
			if err != nil {
				t.Fatal(err)
			}
			if !sameInfo(got, tt.info) {
				t.Fatalf("got %+v, want %+v", got, tt.info)
			}
		})
	}
}

// The encoders of metadata versions 1 to 3, as memfs wrote them before
// version 4 (meta.go at a641c06 and before), byte for byte.

func oldMetaV1(info backend.Info) []byte {
	b := []byte{1}
	b = binary.BigEndian.AppendUint64(b, uint64(info.Size))
	b = binary.BigEndian.AppendUint64(b, uint64(info.MTime.UnixNano()))
	b = binary.BigEndian.AppendUint32(b, uint32(info.Mode.Perm()))
	b = binary.BigEndian.AppendUint32(b, info.UID)
	return binary.BigEndian.AppendUint32(b, info.GID)
}

func oldMetaV2(info backend.Info) []byte {
	b := []byte{2}
	b = binary.BigEndian.AppendUint64(b, uint64(info.Size))
	b = binary.BigEndian.AppendUint64(b, uint64(info.MTime.Unix()))
	b = binary.BigEndian.AppendUint32(b, uint32(info.MTime.Nanosecond()))
	b = binary.BigEndian.AppendUint32(b, uint32(info.Mode.Perm()))
	b = binary.BigEndian.AppendUint32(b, info.UID)
	return binary.BigEndian.AppendUint32(b, info.GID)
}

func oldMetaV3(info backend.Info) []byte {
	b := oldMetaV2(info)
	b[0] = 3
	names := slices.Sorted(maps.Keys(info.XAttrs))
	b = binary.BigEndian.AppendUint16(b, uint16(len(names)))
	for _, n := range names {
		v := info.XAttrs[n]
		b = append(b, byte(len(n)))
		b = append(b, n...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(v)))
		b = append(b, v...)
	}
	return b
}

// oldRecords are records of every earlier version with the Info a reader
// must see: a regular file with the permission bits, atime and ctime equal
// to the mtime.
func oldRecords() []struct {
	name string
	rec  []byte
	want backend.Info
} {
	mt := time.Date(2025, 6, 7, 8, 9, 10, 111222333, time.UTC)
	far := time.Date(2400, 1, 1, 0, 0, 0, 5, time.UTC)
	x := map[string][]byte{"user.memfs.tags": []byte("a,b"), "user.empty": {}}
	file := func(size int64, mt time.Time, perm fs.FileMode, x map[string][]byte) backend.Info {
		return backend.Info{Size: size, MTime: mt, ATime: mt, CTime: mt, Mode: perm, UID: 1000, GID: 1001, XAttrs: x}
	}
	return []struct {
		name string
		rec  []byte
		want backend.Info
	}{
		// A literal version 1 record, as the version 1 test had it.
		{"v1 literal", []byte{1, 0, 0, 0, 0, 0, 0, 0, 12, 0x18, 0x9a, 0x2e, 0x5f, 0x3d, 0x27, 0x15, 0x15, 0, 0, 1, 0xa4, 0, 0, 3, 0xe8, 0, 0, 3, 0xe9},
			file(12, time.Unix(0, 0x189a2e5f3d271515), 0o644, nil)},
		{"v1", oldMetaV1(file(5, mt, 0o600, nil)), file(5, mt, 0o600, nil)},
		{"v2", oldMetaV2(file(7, mt, 0o755, nil)), file(7, mt, 0o755, nil)},
		{"v2 after 2262", oldMetaV2(file(0, far, 0o644, nil)), file(0, far, 0o644, nil)},
		{"v3 no xattrs", oldMetaV3(file(9, mt, 0o640, nil)), file(9, mt, 0o640, nil)},
		{"v3 xattrs", oldMetaV3(file(9, mt, 0o644, x)), file(9, mt, 0o644, x)},
	}
}

func TestMetaOldVersions(t *testing.T) {
	for _, tt := range oldRecords() {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeMeta("k", tt.rec)
			if err != nil {
				t.Fatal(err)
			}
			if !sameInfo(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestOldStoreOpens writes records of every earlier version into badger as
// an earlier memfs did, and reads them through the store after a reopen.
func TestOldStoreOpens(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	recs := oldRecords()
	err := s.db.Update(func(txn *badger.Txn) error {
		for _, r := range recs {
			if err := txn.Set(metaKey(r.name), r.rec); err != nil {
				return err
			}
			if err := txn.Set(valueKey(r.name), randomBytes(int(r.want.Size), 1)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openT(t, dir, Options{})
	l, err := s.List(t.Context())
	if err != nil || len(l) != len(recs) {
		t.Fatalf("List = %d entries, %v; want %d", len(l), err, len(recs))
	}
	byKey := map[string]backend.Info{}
	for _, e := range l {
		byKey[e.Key] = e.Info
	}
	for _, r := range recs {
		if !sameInfo(byKey[r.name], r.want) {
			t.Errorf("List %s: got %+v, want %+v", r.name, byKey[r.name], r.want)
		}
		got, err := s.Load(t.Context(), r.name)
		if err != nil {
			t.Errorf("Load %s: %v", r.name, err)
			continue
		}
		if !sameInfo(got[0].Info, r.want) || !bytes.Equal(got[0].Value, randomBytes(int(r.want.Size), 1)) {
			t.Errorf("Load %s: got %+v and %d bytes, want %+v", r.name, got[0].Info, len(got[0].Value), r.want)
		}
	}
	// Saved again, an old key is written as version 4.
	e := entry("v2", []byte("new"))
	e.Info.Mode = fs.ModeSetgid | 0o750
	if err := s.Save(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(t.Context(), "v2")
	if err != nil || got[0].Info.Mode != fs.ModeSetgid|0o750 || string(got[0].Value) != "new" {
		t.Fatalf("Load after re-save = %+v, %v", got, err)
	}
}

// TestMetaDamaged: every truncation of a record, bytes added after it,
// an unknown version and an unknown node type are reported as damage
// (backend.ErrCorrupt) naming the key, never read as another Info.
func TestMetaDamaged(t *testing.T) {
	rec := encodeMeta(backend.Info{Size: 3, MTime: time.Unix(5, 6), Mode: 0o644, Link: "g",
		XAttrs: map[string][]byte{"user.a": []byte("xyz")}})
	var bad [][]byte
	for n := range len(rec) {
		bad = append(bad, rec[:n])
	}
	bad = append(bad, append(bytes.Clone(rec), 0))
	unknown := bytes.Clone(rec)
	unknown[0] = metaVersion + 1
	bad = append(bad, unknown)
	badType := bytes.Clone(rec)
	binary.BigEndian.PutUint32(badType[45:], 0o170644) // no such file type
	bad = append(bad, badType)
	for _, r := range oldRecords() {
		if r.rec[0] != 3 { // versions 1 and 2 have one length
			bad = append(bad, r.rec[:len(r.rec)-1], append(bytes.Clone(r.rec), 0))
		}
	}
	for _, b := range bad {
		if _, err := decodeMeta("the/key", b); !errors.Is(err, backend.ErrCorrupt) || !bytes.Contains([]byte(err.Error()), []byte("the/key")) {
			t.Errorf("decodeMeta(%x) = %v, want ErrCorrupt naming the key", b, err)
		}
	}

	// Through the store: Load names the key, List leaves it out and
	// Damaged reports it.
	s := openT(t, t.TempDir(), Options{})
	if err := s.Save(t.Context(), entry("good", []byte("g")), entry("bad", []byte("abc"))); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(metaKey("bad"), rec[:20]) }); err != nil {
		t.Fatal(err)
	}
	_, err := s.Load(t.Context(), "bad")
	var pe *fs.PathError
	if !errors.Is(err, backend.ErrCorrupt) || !errors.As(err, &pe) || pe.Path != "bad" {
		t.Errorf("Load of a damaged record = %v, want a *fs.PathError for %q wrapping ErrCorrupt", err, "bad")
	}
	if _, err := s.Load(t.Context(), "good"); err != nil {
		t.Errorf("Load of the undamaged key = %v", err)
	}
	// One damaged record is that key's, never the listing's: left out,
	// and reported (see TestDamagedMetadataIsLocal).
	if es, err := s.List(t.Context()); err != nil || len(es) != 1 || es[0].Key != "good" {
		t.Errorf("List with a damaged record = %v, %v; want good alone", es, err)
	}
	if d := s.Damaged(); len(d) != 1 || d[0] != "bad" {
		t.Errorf("Damaged() = %v, want bad", d)
	}
}

// TestSaveKeepsEveryField: what the conformance suite accepts from a store
// whose system sets ctimes, badger must not need: every field, the given
// CTime included, comes back exactly; a zero ATime is the MTime and a zero
// CTime the time of the save.
func TestSaveKeepsEveryField(t *testing.T) {
	s := openT(t, t.TempDir(), Options{})
	mt := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	full := backend.Entry{Key: "dev/x", Info: backend.Info{
		MTime: mt, ATime: mt.Add(-time.Hour), CTime: time.Date(2020, 1, 1, 0, 0, 0, 9, time.UTC),
		Mode: fs.ModeDevice | fs.ModeCharDevice | 0o620, UID: 7, GID: 8, Rdev: 0x0408,
		XAttrs: map[string][]byte{"user.a": []byte("b")},
	}}
	link := backend.Entry{Key: "l", Value: []byte("target"), Info: backend.Info{MTime: mt, Mode: fs.ModeSymlink | 0o777, Link: "g"}}
	before := time.Now()
	if err := s.Save(t.Context(), full, link); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	got, err := s.Load(t.Context(), "dev/x", "l")
	if err != nil {
		t.Fatal(err)
	}
	if !sameInfo(got[0].Info, full.Info) || len(got[0].Value) != 0 {
		t.Errorf("Load dev/x = %+v, %q; want %+v, no value", got[0].Info, got[0].Value, full.Info)
	}
	li := got[1].Info
	if li.Size != 6 || !li.ATime.Equal(mt) || li.CTime.Before(before) || li.CTime.After(after) || li.Link != "g" {
		t.Errorf("Load l = %+v; want size 6, atime = mtime, ctime of the save, link g", li)
	}
	l, err := s.List(t.Context())
	if err != nil || len(l) != 2 || !sameInfo(l[0].Info, full.Info) || !sameInfo(l[1].Info, li) {
		t.Errorf("List = %+v, %v; want what Load gave", l, err)
	}
}

// TestOldInvalidKey: a record whose key an older memfs accepted and
// ValidateKey now refuses (a control character) neither fails List nor is
// reported as an entry: it is skipped, named by Skipped, and never deleted
// (a flush of other keys leaves it where it is).
func TestOldInvalidKey(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir, Options{})
	old := []string{"memory/esc\x1b[2Jclear.md", "new\nline.md", "c1\u009b.md"}
	err := s.db.Update(func(txn *badger.Txn) error {
		for _, k := range old {
			if err := txn.Set(metaKey(k), encodeMeta(backend.Info{Size: 3, Mode: 0o644, MTime: time.Unix(1700000000, 0)})); err != nil {
				return err
			}
			if err := txn.Set(valueKey(k), []byte("old")); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(t.Context(), entry("memory/a.md", []byte("a")), entry("z.md", []byte("z"))); err != nil {
		t.Fatal(err)
	}
	l, err := s.List(t.Context())
	if err != nil {
		t.Fatalf("List with old invalid keys = %v, want no error", err)
	}
	keys := func(es []backend.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Key)
		}
		return out
	}
	if got := keys(l); !slices.Equal(got, []string{"memory/a.md", "z.md"}) {
		t.Fatalf("List = %q, want [memory/a.md z.md]", got)
	}
	wantSkipped := slices.Sorted(slices.Values(old))
	if got := slices.Sorted(slices.Values(s.Skipped())); !slices.Equal(got, wantSkipped) {
		t.Fatalf("Skipped = %q, want %q", got, wantSkipped)
	}
	var walked []string
	if err := s.Walk(t.Context(), func(b []backend.Entry) error { walked = append(walked, keys(b)...); return nil }); err != nil {
		t.Fatalf("Walk = %v", err)
	}
	if !slices.Equal(walked, []string{"memory/a.md", "z.md"}) {
		t.Fatalf("Walk = %q, want [memory/a.md z.md]", walked)
	}
	if err := s.Delete(t.Context(), "memory/a.md"); err != nil {
		t.Fatal(err)
	}
	err = s.db.View(func(txn *badger.Txn) error {
		for _, k := range old {
			if _, err := txn.Get(metaKey(k)); err != nil {
				return fmt.Errorf("record of %q: %w", k, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the old records are gone after a delete of another key: %v", err)
	}
}
