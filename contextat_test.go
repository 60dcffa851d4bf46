package memfs_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/internal/syncbuf"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/packhist"
	"github.com/memfs/memfs/session"
)

// histStore opens an FS over a fresh store of one kind; reopen (nil for a
// store that does not outlive its FS) opens it again after Close.
type histStore struct {
	name string
	open func(t *testing.T) (f *memfs.FS, reopen func(t *testing.T) *memfs.FS)
}

func histStores() []histStore {
	opts := func(t *testing.T, journal string) memfs.Options {
		return memfs.Options{
			JournalPath: journal,
			Namespace:   true,
			Session:     session.Options{MaxFileSize: 1 << 20, DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())},
			RecoveryDir: filepath.Join(t.TempDir(), "recovery"),
		}
	}
	return []histStore{
		{"memstore", func(t *testing.T) (*memfs.FS, func(*testing.T) *memfs.FS) {
			f, err := memfs.Open(t.Context(), memstore.New(), opts(t, filepath.Join(t.TempDir(), "journal")))
			if err != nil {
				t.Fatal(err)
			}
			return f, nil
		}},
		{"memstore, hybrid ranking", func(t *testing.T) (*memfs.FS, func(*testing.T) *memfs.FS) {
			o := opts(t, filepath.Join(t.TempDir(), "journal"))
			o.Embedder = hashEmbedder{}
			f, err := memfs.Open(t.Context(), memstore.New(), o)
			if err != nil {
				t.Fatal(err)
			}
			return f, nil
		}},
		{"badger", func(t *testing.T) (*memfs.FS, func(*testing.T) *memfs.FS) {
			dir := t.TempDir()
			o := func(t *testing.T) *memfs.FS {
				t.Helper()
				st, err := badgerstore.Open(dir, badgerstore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				f, err := memfs.Open(t.Context(), st, opts(t, filepath.Join(dir, badgerstore.JournalName)))
				if err != nil {
					t.Fatal(err)
				}
				return f
			}
			return o(t), o
		}},
	}
}

// hashEmbedder is a deterministic embedder for tests: each word adds a
// direction of 32 chosen by its FNV hash.
type hashEmbedder struct{}

func (hashEmbedder) ID() string { return "test:hash32" }
func (hashEmbedder) Dim() int   { return 32 }
func (hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 32)
		var n float64
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%32]++
		}
		for _, x := range v {
			n += float64(x * x)
		}
		if n > 0 {
			for j := range v {
				v[j] /= float32(math.Sqrt(n))
			}
		}
		out[i] = v
	}
	return out, nil
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func headSeq(t *testing.T, f *memfs.FS) uint64 {
	t.Helper()
	p, err := f.Events().Query(t.Context(), eventlog.Query{Limit: 1})
	must(t, err)
	if len(p.Events) == 0 {
		t.Fatal("the event log is empty")
	}
	return p.Events[0].Seq
}

func hexSum(v string) string {
	s := sha256.Sum256([]byte(v))
	return hex.EncodeToString(s[:])
}

// packNames are the packs each step records: the default, two budgets
// that cut and leave out, queries that rank the notes, and manifests.
var packNames = []string{"", "max:400", "max:900%20summaries:1", "alpha%20notes", "max:500%20alpha", ".manifest.json", "max:500%20alpha.manifest.json"}

// The pack rebuilt as of a seq is, byte for byte, the live pack at that
// seq, through writes, importance changes, a skill, summaries, a delete,
// a rename and an attribute change, on memstore and badger, and (badger)
// after a reopen.
func TestContextPackAtEqualsLivePack(t *testing.T) {
	for _, hs := range histStores() {
		t.Run(hs.name, func(t *testing.T) {
			f, reopen := hs.open(t)
			c := f.Session()
			ctx := session.WithCred(t.Context(), session.Cred{UID: uint32(os.Getuid()), GIDs: []uint32{uint32(os.Getgid())}})
			type step struct {
				seq   uint64
				packs [][]byte
			}
			var steps []step
			record := func() {
				t.Helper()
				must(t, f.Flush(ctx))
				s := step{seq: headSeq(t, f)}
				for _, n := range packNames {
					p, err := f.ContextFile(ctx, n)
					must(t, err)
					s.packs = append(s.packs, p)
				}
				steps = append(steps, s)
			}
			must(t, c.Mkdir("skills/review", 0o755, uint32(os.Getuid()), uint32(os.Getgid())))
			must(t, c.Set("memory/a.md", []byte("# A\nthe first note\nline two\n")))
			must(t, c.Set("memory/b.md", []byte("# B\nsecond note, soon removed\n")))
			// Notes a query word ranks apart by how often it occurs and
			// how long the note is: the ranker (search's, not the
			// default's mere presence) shows in the scores.
			must(t, c.Set("memory/c.md", []byte("# C\nalpha alpha alpha notes\n")))
			must(t, c.Set("memory/d.md", []byte("# D\nalpha, once, among many other words of a longer line than the others have\n")))
			must(t, c.XAttrs().Set(ctx, "memory/a.md", meta.Importance, []byte("0.9"), 0))
			must(t, c.Set("skills/review/SKILL.md", []byte("---\nname: review\ndescription: reviews a change\n---\nbody\n")))
			must(t, c.Set("memory/summaries.jsonl", []byte(`{"run":"r1","step":"1","time":"2026-01-02T03:04:05Z","text":"did one"}`+"\n")))
			record()

			must(t, c.Set("memory/a.md", []byte("# A\nthe first note, changed\n")))
			must(t, c.Delete("memory/b.md"))
			record()

			must(t, c.Rename(ctx, "memory/a.md", "memory/c.md", 0))
			must(t, c.XAttrs().Set(ctx, "memory/c.md", meta.Importance, []byte("0.2"), 0))
			must(t, c.Set("memory/d.md", []byte(strings.Repeat("a long line of a note\n", 40))))
			record()

			must(t, c.Set("memory/summaries.jsonl", []byte(`{"run":"r1","step":"1","time":"2026-01-02T03:04:05Z","text":"did one"}`+"\n"+
				`{"run":"r1","step":"2","time":"2026-01-02T03:05:05Z","text":"did two"}`+"\n")))
			must(t, c.Set("skills/review/SKILL.md", []byte("---\nname: review\ndescription: reviews a change, now strictly\n---\nbody\n")))
			must(t, c.XAttrs().Set(ctx, "memory/d.md", meta.Importance, []byte("1"), 0))
			record()

			check := func(f *memfs.FS) {
				t.Helper()
				distinct := map[string]bool{}
				for _, s := range steps {
					for i, n := range packNames {
						got, err := packAt(f, ctx, s.seq, n)
						if err != nil {
							t.Fatalf("ContextPackAt(%d, %q): %v", s.seq, n, err)
						}
						if !bytes.Equal(got, s.packs[i]) {
							t.Errorf("ContextPackAt(%d, %q):\n got %q\nwant %q", s.seq, n, got, s.packs[i])
						}
						distinct[string(got)] = true
					}
				}
				if len(distinct) < len(steps) {
					t.Errorf("the steps gave %d distinct packs, want at least %d: the test changes nothing a pack shows", len(distinct), len(steps))
				}
			}
			check(f)
			for _, seq := range []uint64{0, headSeq(t, f) + 1} {
				if _, err := packAt(f, ctx, seq, ""); !errors.Is(err, packhist.ErrOutOfRange) {
					t.Errorf("ContextPackAt(%d): got %v, want an error wrapping ErrOutOfRange", seq, err)
				}
			}
			if _, err := packAt(f, t.Context(), steps[0].seq, ""); err == nil {
				t.Error("ContextPackAt without a caller: got no error")
			}
			if reopen != nil {
				must(t, f.Close(t.Context()))
				f = reopen(t)
				check(f)
			}
			t.Cleanup(func() { f.Close(context.Background()) })
		})
	}
}

// An archived value altered after the fact is an error naming the key,
// never used.
func TestContextPackAtTamperedValue(t *testing.T) {
	f, _ := histStores()[0].open(t)
	t.Cleanup(func() { f.Close(context.Background()) })
	ctx := session.WithCred(t.Context(), session.Cred{UID: uint32(os.Getuid())})
	const v = "# A\nkept as it was\n"
	must(t, f.Session().Set("memory/a.md", []byte(v)))
	must(t, f.Flush(ctx))
	seq := headSeq(t, f)
	if _, err := packAt(f, ctx, seq, ""); err != nil {
		t.Fatalf("before tampering: %v", err)
	}
	must(t, f.Store().SaveSys(ctx, "packhist/v/"+hexSum(v), []byte("# A\nsomething else\n")))
	_, err := packAt(f, ctx, seq, "")
	if !errors.Is(err, packhist.ErrMismatch) || !strings.Contains(err.Error(), "memory/a.md") {
		t.Errorf("after tampering: got %v, want an error wrapping ErrMismatch naming memory/a.md", err)
	}
}

// A file the caller may not read as of seq is not in its pack; root's
// pack has it.
func TestContextPackAtReadable(t *testing.T) {
	f, _ := histStores()[0].open(t)
	t.Cleanup(func() { f.Close(context.Background()) })
	c := f.Session()
	owner := session.WithCred(t.Context(), session.Cred{UID: uint32(os.Getuid()), GIDs: []uint32{uint32(os.Getgid())}})
	other := session.WithCred(t.Context(), session.Cred{UID: uint32(os.Getuid()) + 4242, GIDs: []uint32{4242}})
	must(t, c.Set("memory/private.md", []byte("# private\nnot for others\n")))
	must(t, c.Set("memory/public.md", []byte("# public\nfor all\n")))
	_, err := c.SetAttr(t.Context(), "memory/private.md", session.Attr{Mode: ptr[fs.FileMode](0o600)})
	must(t, err)
	must(t, f.Flush(owner))
	seq := headSeq(t, f)
	want, err := f.ContextFile(other, "")
	must(t, err)
	got, err := packAt(f, other, seq, "")
	must(t, err)
	if !bytes.Equal(got, want) || bytes.Contains(got, []byte("not for others")) {
		t.Errorf("another user's pack as of %d:\n got %q\nwant %q (without memory/private.md)", seq, got, want)
	}
	// Readable again now: the pack as of seq still leaves it out.
	_, err = c.SetAttr(t.Context(), "memory/private.md", session.Attr{Mode: ptr[fs.FileMode](0o644)})
	must(t, err)
	must(t, f.Flush(owner))
	if got, err := packAt(f, other, seq, ""); err != nil || bytes.Contains(got, []byte("not for others")) {
		t.Errorf("as of %d after a chmod: got %q, %v; want no memory/private.md", seq, got, err)
	}
	// Readable then, not now: the pack as of then leaves it out too.
	must(t, c.Set("memory/plan.md", []byte("# plan\nlayoffs in march\n")))
	must(t, f.Flush(owner))
	seq2 := headSeq(t, f)
	if got, err := packAt(f, other, seq2, ""); err != nil || !bytes.Contains(got, []byte("layoffs in march")) {
		t.Fatalf("as of %d, before the chmod: got %q, %v; want memory/plan.md in it (the test shows nothing)", seq2, got, err)
	}
	_, err = c.SetAttr(t.Context(), "memory/plan.md", session.Attr{Mode: ptr[fs.FileMode](0o600)})
	must(t, err)
	must(t, f.Flush(owner))
	if got, err := packAt(f, other, seq2, ""); err != nil || bytes.Contains(got, []byte("layoffs in march")) {
		t.Errorf("as of %d after a chmod 600: got %q, %v; want no memory/plan.md (it may not read it now)", seq2, got, err)
	}
	root := session.WithCred(t.Context(), session.Cred{UID: 0})
	if got, err := packAt(f, root, seq, ""); err != nil || !bytes.Contains(got, []byte("not for others")) {
		t.Errorf("root's pack as of %d: got %q, %v; want memory/private.md in it", seq, got, err)
	}
}

func ptr[T any](v T) *T { return &v }

// No raw secret reaches the archive: its values and records hold the
// redacted form the store got.
func TestContextPackAtArchiveHoldsNoSecret(t *testing.T) {
	for _, hs := range histStores() {
		t.Run(hs.name, func(t *testing.T) {
			f, _ := hs.open(t)
			t.Cleanup(func() { f.Close(context.Background()) })
			ctx := session.WithCred(t.Context(), session.Cred{UID: 0})
			const secret = "AKIAQ3EGXP7ZLRK2MV5N"
			must(t, f.Session().Set("memory/keys.md", []byte("# keys\nthe deploy key is "+secret+"\n")))
			must(t, f.Session().XAttrs().Set(ctx, "memory/keys.md", meta.Tags, []byte("ops"), 0))
			must(t, f.Flush(ctx))
			seq := headSeq(t, f)
			got, err := packAt(f, ctx, seq, "")
			must(t, err)
			if bytes.Contains(got, []byte(secret)) || !bytes.Contains(got, []byte("[REDACTED:")) {
				t.Errorf("pack as of %d: got %q, want the key redacted", seq, got)
			}
			es, err := f.Store().ListSys(ctx, "packhist/")
			must(t, err)
			var values int
			for _, e := range es {
				b, err := f.Store().LoadSys(ctx, e.Key)
				must(t, err)
				if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(hexSum(secret))) {
					t.Errorf("archive record %s holds the raw secret", e.Key)
				}
				if strings.HasPrefix(e.Key, "packhist/v/") && bytes.Contains(b, []byte("[REDACTED:aws-access-key-id]")) {
					values++
				}
			}
			if values == 0 {
				t.Errorf("no archived value holds the redacted note (records: %d)", len(es))
			}
		})
	}
}

// A store whose archive is missing (older than it, or lost) gets the
// versions its log names back-filled at open; a change made to the store
// while no memfs had it open is never rebuilt as if absent: the rebuild
// fails, naming the key, until memfs writes it again.
func TestContextPackAtBaselineAtOpen(t *testing.T) {
	dir := t.TempDir()
	open := func() *memfs.FS {
		t.Helper()
		st, err := badgerstore.Open(dir, badgerstore.Options{})
		must(t, err)
		f, err := memfs.Open(t.Context(), st, memfs.Options{
			JournalPath: filepath.Join(dir, badgerstore.JournalName),
			Namespace:   true,
			Session:     session.Options{DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())},
			RecoveryDir: filepath.Join(t.TempDir(), "recovery"),
		})
		must(t, err)
		return f
	}
	ctx := session.WithCred(t.Context(), session.Cred{UID: uint32(os.Getuid()), GIDs: []uint32{uint32(os.Getgid())}})
	f := open()
	c := f.Session()
	must(t, c.Mkdir("skills/s", 0o755, uint32(os.Getuid()), uint32(os.Getgid())))
	must(t, c.Set("memory/a.md", []byte("# A\nfirst\n")))
	must(t, c.Set("memory/b.md", []byte("# B\nsecond\n")))
	must(t, c.Set("skills/s/SKILL.md", []byte("---\nname: s\ndescription: a skill\n---\n")))
	must(t, f.Flush(ctx))
	seq1 := headSeq(t, f)
	want1, err := f.ContextFile(ctx, "")
	must(t, err)
	if got, err := packAt(f, ctx, seq1, ""); err != nil || !bytes.Equal(got, want1) {
		t.Fatalf("as of %d: got %q, %v; want %q", seq1, got, err, want1)
	}
	// The archive is lost.
	es, err := f.Store().ListSys(ctx, "packhist/")
	must(t, err)
	for _, e := range es {
		must(t, f.Store().DeleteSys(ctx, e.Key))
	}
	if _, err := packAt(f, ctx, seq1, ""); !errors.Is(err, packhist.ErrNotArchived) {
		t.Fatalf("without an archive: got %v, want an error wrapping ErrNotArchived", err)
	}
	must(t, f.Close(t.Context()))
	f = open()
	if got, err := packAt(f, ctx, seq1, ""); err != nil || !bytes.Equal(got, want1) {
		t.Fatalf("back-filled at open: got %q, %v; want %q", got, err, want1)
	}
	must(t, f.Close(t.Context()))

	// A change while no memfs has the store open.
	st, err := badgerstore.Open(dir, badgerstore.Options{})
	must(t, err)
	must(t, st.Save(t.Context(), backend.Entry{Key: "memory/b.md", Value: []byte("# B\nedited behind memfs\n"),
		Info: backend.Info{Mode: 0o644, MTime: time.Unix(1800000000, 0)}}))
	must(t, st.Close())
	f = open()
	t.Cleanup(func() { f.Close(context.Background()) })
	for _, seq := range []uint64{seq1, headSeq(t, f)} {
		_, err := packAt(f, ctx, seq, "")
		if !errors.Is(err, packhist.ErrNotArchived) || !strings.Contains(err.Error(), "memory/b.md") {
			t.Errorf("as of %d after an edit behind memfs: got %v, want an error wrapping ErrNotArchived naming memory/b.md", seq, err)
		}
	}
	must(t, f.Session().Set("memory/b.md", []byte("# B\nwritten again\n")))
	must(t, f.Flush(ctx))
	seq2 := headSeq(t, f)
	want2, err := f.ContextFile(ctx, "")
	must(t, err)
	if got, err := packAt(f, ctx, seq2, ""); err != nil || !bytes.Equal(got, want2) {
		t.Errorf("as of %d, once memfs wrote it again: got %q, %v; want %q", seq2, got, err, want2)
	}
}

// An archive the store refuses never fails a flush: the flush and its
// events succeed, and a rebuild as of that seq fails naming the key.
func TestContextPackAtArchiveRefusedFlushSucceeds(t *testing.T) {
	st := errorstore.Wrap(memstore.New(), func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpSaveSys && len(keys) == 1 && strings.HasPrefix(keys[0], "packhist/") {
			return errors.New("injected: the archive's record is refused")
		}
		return nil
	})
	f, err := memfs.Open(t.Context(), st, memfs.Options{
		JournalPath: filepath.Join(t.TempDir(), "journal"),
		Namespace:   true,
		Session:     session.Options{DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())},
		RecoveryDir: filepath.Join(t.TempDir(), "recovery"),
	})
	must(t, err)
	t.Cleanup(func() { f.Close(context.Background()) })
	ctx := session.WithCred(t.Context(), session.Cred{UID: uint32(os.Getuid())})
	must(t, f.Session().Set("memory/a.md", []byte("# A\nsaved all the same\n")))
	if err := f.Flush(ctx); err != nil {
		t.Fatalf("flush with the archive refused: %v", err)
	}
	seq := headSeq(t, f)
	if p, err := f.Events().Query(ctx, eventlog.Query{Limit: 1}); err != nil || p.Events[0].Key != "memory/a.md" {
		t.Errorf("the event log's last event: got %+v, %v; want the write of memory/a.md", p.Events, err)
	}
	_, err = packAt(f, ctx, seq, "")
	if !errors.Is(err, packhist.ErrNotArchived) || !strings.Contains(err.Error(), "memory/a.md") {
		t.Errorf("as of %d: got %v, want an error wrapping ErrNotArchived naming memory/a.md", seq, err)
	}
}

// The past is as closed as the present: a note that another user could
// read as of seq is left out of that user's pack as of seq once it may
// not read it now, whether by a chmod, a chmod and a rename, a move into
// a private directory or a delete; its owner (and root) still get it.
func TestContextPackAtObeysPresentPermissions(t *testing.T) {
	f, _ := histStores()[0].open(t)
	t.Cleanup(func() { f.Close(context.Background()) })
	c := f.Session()
	const uid, gid = 4243, 4243 // the notes' owner, neither root nor the other user
	owner := session.WithCred(t.Context(), session.Cred{UID: uid, GIDs: []uint32{gid}})
	other := session.WithCred(t.Context(), session.Cred{UID: 65534, GIDs: []uint32{65534}})
	root := session.WithCred(t.Context(), session.Cred{UID: 0})
	notes := map[string]string{
		"memory/kept.md":    "# kept\nstill public: wombat\n",
		"memory/chmod.md":   "# chmod\nshut by a chmod: quokka\n",
		"memory/renamed.md": "# renamed\nshut, then renamed: numbat\n",
		"memory/moved.md":   "# moved\nmoved into a private directory: bilby\n",
		"memory/deleted.md": "# deleted\nremoved: dugong\n",
	}
	for k, v := range notes {
		must(t, c.Set(k, []byte(v)))
		_, err := c.SetAttr(t.Context(), k, session.Attr{UID: ptr[uint32](uid), GID: ptr[uint32](gid)})
		must(t, err)
	}
	must(t, c.Mkdir("memory/private", 0o700, uid, gid))
	must(t, f.Flush(owner))
	seq := headSeq(t, f)
	shut := []string{"quokka", "numbat", "bilby", "dugong"}
	got, err := packAt(f, other, seq, "")
	must(t, err)
	for _, w := range append([]string{"wombat"}, shut...) {
		if !bytes.Contains(got, []byte(w)) {
			t.Fatalf("another user's pack as of %d lacks %q before any change (the test shows nothing):\n%s", seq, w, got)
		}
	}

	_, err = c.SetAttr(t.Context(), "memory/chmod.md", session.Attr{Mode: ptr[fs.FileMode](0o600)})
	must(t, err)
	_, err = c.SetAttr(t.Context(), "memory/renamed.md", session.Attr{Mode: ptr[fs.FileMode](0o600)})
	must(t, err)
	must(t, c.Rename(t.Context(), "memory/renamed.md", "memory/renamed-private.md", 0))
	must(t, c.Rename(t.Context(), "memory/moved.md", "memory/private/moved.md", 0))
	must(t, c.Delete("memory/deleted.md"))
	must(t, f.Flush(owner))

	got, err = packAt(f, other, seq, "")
	must(t, err)
	if !bytes.Contains(got, []byte("wombat")) {
		t.Errorf("another user's pack as of %d lacks memory/kept.md:\n%s", seq, got)
	}
	for _, w := range shut {
		if bytes.Contains(got, []byte(w)) {
			t.Errorf("another user's pack as of %d shows %q, which it may not read now:\n%s", seq, w, got)
		}
	}
	for name, ctx := range map[string]context.Context{"the owner": owner, "root": root} {
		got, err := packAt(f, ctx, seq, "")
		must(t, err)
		for _, w := range append([]string{"wombat"}, shut...) {
			if !bytes.Contains(got, []byte(w)) {
				t.Errorf("%s's pack as of %d lacks %q:\n%s", name, seq, w, got)
			}
		}
	}
}

// packAt is the pack, or the manifest, that a pack's name asks for as it
// stood at seq, through the library's typed API (contextpack.ParseName,
// then FS.ContextPackAt).
func packAt(f *memfs.FS, ctx context.Context, seq uint64, name string) ([]byte, error) {
	o, _, manifest, err := contextpack.ParseName(name)
	if err != nil {
		return nil, err
	}
	p, err := f.ContextPackAt(ctx, seq, o)
	if err != nil {
		return nil, err
	}
	return p.File(manifest), nil
}

// Packs take regular files only: a symlink and a fifo under memory/ enter
// no pack, live or rebuilt, make no rebuild fail, and are no "change
// outside memfs's flushes" at the next open (issue 30, finding 5).
func TestContextPackRegularFilesOnly(t *testing.T) {
	dir := t.TempDir()
	var logs syncbuf.Buffer
	open := func() *memfs.FS {
		t.Helper()
		st, err := badgerstore.Open(dir, badgerstore.Options{})
		must(t, err)
		f, err := memfs.Open(t.Context(), st, memfs.Options{
			JournalPath: filepath.Join(dir, badgerstore.JournalName),
			Namespace:   true,
			Session:     session.Options{DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())},
			RecoveryDir: filepath.Join(t.TempDir(), "recovery"),
			Logger:      slog.New(slog.NewTextHandler(&logs, nil)),
		})
		must(t, err)
		return f
	}
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	ctx := session.WithCred(t.Context(), session.Cred{UID: uid, GIDs: []uint32{gid}})
	f := open()
	c := f.Session()
	must(t, c.Set("memory/a.md", []byte("# A\nthe note\n")))
	must(t, c.Symlink(ctx, "memory/link.md", "a.md", uid, gid))
	must(t, c.MakeNode(ctx, "memory/pipe", fs.ModeNamedPipe|0o644, 0, uid, gid))
	must(t, f.Flush(ctx))
	seq := headSeq(t, f)
	check := func(f *memfs.FS) {
		t.Helper()
		live, err := f.ContextFile(ctx, ".manifest.json")
		must(t, err)
		at, err := packAt(f, ctx, seq, ".manifest.json")
		if err != nil {
			t.Fatalf("ContextPackAt(%d): %v", seq, err)
		}
		for _, m := range [][]byte{live, at} {
			if !bytes.Contains(m, []byte(`"memory/a.md"`)) || bytes.Contains(m, []byte("memory/link.md")) || bytes.Contains(m, []byte("memory/pipe")) {
				t.Errorf("manifest: got %s, want memory/a.md and neither the symlink nor the fifo", m)
			}
		}
	}
	check(f)
	must(t, f.Close(t.Context()))
	f = open()
	t.Cleanup(func() { f.Close(context.Background()) })
	check(f)
	if strings.Contains(logs.String(), "outside memfs's flushes") {
		t.Errorf("reopen logged a change outside memfs's flushes, though there was none:\n%s", logs.String())
	}
}
