package memfs_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/internal/syncbuf"
	"github.com/memfs/memfs/session"
)

// Two mounts of one etcd namespace under keep-both: the writer whose save
// loses learns it (its log, its .memfs/changes); Conflicts, on a third
// session of the store (what memfs conflicts opens), lists the open
// conflict with its side; ResolveConflict merges both into the key and
// removes the copy, which every mount then shows.
func TestSharedConflictListedAndResolved(t *testing.T) {
	needFUSE(t)
	srv := etcdtest.Start(t)
	const ns, key = "conflicts", "memory/plan.md"
	open := func(agent string, logs *syncbuf.Buffer) *memfs.FS {
		t.Helper()
		st, err := etcdstore.Open(context.Background(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: ns})
		if err != nil {
			t.Fatal(err)
		}
		o := memfs.Options{
			JournalPath: filepath.Join(t.TempDir(), "journal"),
			Bootstrap:   []string{"memory/"},
			Session:     session.Options{OnConflict: session.KeepBoth, Agent: agent, MaxFileSize: 1 << 20},
		}
		if logs != nil {
			o.Logger = slog.New(slog.NewTextHandler(logs, nil))
		}
		f, err := memfs.Open(context.Background(), st, o)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	var coderLog syncbuf.Buffer
	planner, coder := open("planner", nil), open("coder", &coderLog)
	pm, cm := t.TempDir(), t.TempDir()
	ps, cs := serve(t, planner, pm, memfs.MountOptions{}), serve(t, coder, cm, memfs.MountOptions{})
	write := func(mnt, v string) {
		t.Helper()
		fd, err := os.OpenFile(filepath.Join(mnt, key), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer fd.Close()
		if _, err := fd.WriteString(v); err != nil {
			t.Fatal(err)
		}
		if err := fd.Sync(); err != nil {
			t.Fatalf("fsync on %s: %v", mnt, err)
		}
	}
	sees := func(mnt, k, want string) bool {
		b, err := os.ReadFile(filepath.Join(mnt, k))
		return err == nil && string(b) == want
	}
	os.MkdirAll(filepath.Join(pm, "memory"), 0o755)
	write(pm, "one\ntwo\nthree\n")
	if !await.Cond(10*time.Second, 20*time.Millisecond, func() bool { return sees(cm, key, "one\ntwo\nthree\n") }) {
		t.Fatal("the coder's mount does not show the planner's note")
	}
	// The coder edits (unsaved) while the planner saves an edit of its own.
	fd, err := os.OpenFile(filepath.Join(cm, key), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fd.WriteString("one\ntwo\nthree, by the coder\n"); err != nil {
		t.Fatal(err)
	}
	write(pm, "one, by the planner\ntwo\nthree\n")
	if err := fd.Sync(); err != nil {
		t.Fatalf("the coder's fsync: %v", err)
	}
	fd.Close()
	if !strings.Contains(coderLog.String(), "outcome=kept-both") {
		t.Errorf("the coder's log says nothing of its conflict:\n%s", coderLog.String())
	}
	if b, err := os.ReadFile(filepath.Join(cm, ".memfs/changes")); err != nil || !strings.Contains(string(b), `"op":"conflict"`) {
		t.Errorf("the coder's .memfs/changes = %q, %v; want a conflict entry", b, err)
	}

	third := open("resolver", nil)
	defer third.Close(context.Background())
	cfs, err := third.Conflicts(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfs) != 1 || cfs[0].Key != key || !strings.HasPrefix(cfs[0].Copy, "memory/plan.conflict-coder-") ||
		cfs[0].CopyHolds != "mine" || cfs[0].Agent != "coder" || cfs[0].Outcome != "kept-both" || cfs[0].Seq == 0 {
		t.Fatalf("Conflicts = %+v; want memory/plan.md's copy by the coder (kept-both, the copy holds the coder's: mine)", cfs)
	}
	if _, err := third.ResolveConflict(t.Context(), key, memfs.KeepMerge); err != nil {
		t.Fatal(err)
	}
	const merged = "one, by the planner\ntwo\nthree, by the coder\n"
	for _, mnt := range []string{pm, cm} {
		if !await.Cond(10*time.Second, 20*time.Millisecond, func() bool {
			_, err := os.Stat(filepath.Join(mnt, cfs[0].Copy))
			return sees(mnt, key, merged) && os.IsNotExist(err)
		}) {
			b, _ := os.ReadFile(filepath.Join(mnt, key))
			t.Errorf("%s: %s = %q, want the merge %q, and the copy gone", mnt, key, b, merged)
		}
	}
	if cfs, err := third.Conflicts(t.Context()); err != nil || len(cfs) != 0 {
		t.Errorf("Conflicts after the resolution = %+v, %v; want none", cfs, err)
	}
	ps.stop(t)
	cs.stop(t)
	planner.Close(context.Background())
	coder.Close(context.Background())
}

// On a directory store, a directory the session made where another
// program then put a file keeps the name, and their file, kept beside,
// is an open conflict that Conflicts lists (its original is a
// directory), with the copy holding theirs.
func TestDirConflictOfTypeListed(t *testing.T) {
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := memfs.Open(context.Background(), st, memfs.Options{JournalPath: filepath.Join(t.TempDir(), "journal")})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close(context.Background())
	if err := f.Session().Mkdir("d", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d"), []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfs, err := f.Conflicts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfs) != 1 || cfs[0].Key != "d" || !strings.HasPrefix(cfs[0].Copy, "d.conflict-") || cfs[0].CopyHolds != "theirs" {
		t.Fatalf("conflicts: %+v; want d's copy holding theirs", cfs)
	}
}
