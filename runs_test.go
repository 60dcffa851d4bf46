package memfs_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/session"
)

// openRuns is an engine over a fresh directory store, and its directory.
func openRuns(t *testing.T) (*memfs.FS, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := dirstore.Open(dir)
	must(t, err)
	f, err := memfs.Open(t.Context(), st, memfs.Options{JournalPath: filepath.Join(dir, dirstore.JournalName)})
	must(t, err)
	t.Cleanup(func() { f.Close(context.Background()) })
	return f, dir
}

// A caller is told of a run only what it could see directly: a run whose
// events are all on files in a directory it may not enter is not listed
// for it, and its meta.json and events are not answered; a run of files
// it may see is, with only the keys it may see (found by this stop's
// review: uid 65534 read the counts and times of a private run).
func TestRunsShowACallerOnlyWhatItMaySee(t *testing.T) {
	f, _ := openRuns(t)
	c, ctx := f.Session(), t.Context()
	must(t, c.Mkdir("memory", 0o755, 0, 0))
	must(t, c.Mkdir("memory/private", 0o700, 0, 0))
	write := func(key, run string) {
		t.Helper()
		must(t, c.Set(key, []byte("v\n")))
		must(t, c.XAttrs().Set(ctx, key, meta.Run, []byte(run), 0))
	}
	write("memory/private/plan.md", "secret-project")
	write("memory/open.md", "mixed")
	write("memory/private/more.md", "mixed")
	must(t, f.Flush(ctx))

	nobody := session.WithCred(ctx, session.Cred{UID: 65534, GIDs: []uint32{65534}})
	ids, err := f.RunIDs(nobody)
	must(t, err)
	if !slices.Equal(ids, []string{"mixed"}) {
		t.Errorf("runs for uid 65534: %v, want [mixed]", ids)
	}
	if _, err := f.Run(nobody, "secret-project"); !errors.Is(err, memfs.ErrNoRun) {
		t.Errorf("meta of the private run for uid 65534: %v, want ErrNoRun", err)
	}
	if b, err := f.RunFile(nobody, "secret-project", memfs.RunEventsFile); err == nil {
		t.Errorf("events of the private run for uid 65534: %q", b)
	}
	r, err := f.Run(nobody, "mixed")
	must(t, err)
	if !slices.Equal(r.Keys, []string{"memory/open.md"}) || r.Events != 1 {
		t.Errorf("the mixed run for uid 65534: keys %v, %d events; want memory/open.md alone, its one event", r.Keys, r.Events)
	}
	all, err := f.RunIDs(ctx)
	must(t, err)
	if !slices.Equal(all, []string{"mixed", "secret-project"}) {
		t.Errorf("runs for the engine's own caller: %v", all)
	}
	root, err := f.Run(ctx, "mixed")
	must(t, err)
	if len(root.Keys) != 2 || root.Events != 2 {
		t.Errorf("the mixed run as kept: %+v", root.Meta)
	}
}

// A run id that is a secret (a token exported as MEMFS_RUN) names no run:
// it reaches neither the event log nor a record's name (found by this
// stop's review: a GitHub token was stored in plain text in both).
func TestRunIDThatIsASecretIsDropped(t *testing.T) {
	f, dir := openRuns(t)
	c, ctx := f.Session(), t.Context()
	token := "ghp_" + strings.Repeat("aB3dE6gH9k", 4)[:36]
	must(t, c.Set("memory/n.md", []byte("v\n")))
	as := session.WithWriter(ctx, meta.WriterInfo{Comm: "agent", Run: token})
	must(t, c.XAttrs().Set(as, "memory/n.md", meta.Tags, []byte("x"), 0))
	must(t, f.Flush(ctx))
	ids, err := f.RunIDs(ctx)
	must(t, err)
	if len(ids) != 0 {
		t.Errorf("runs: %v, want none", ids)
	}
	must(t, f.Close(ctx))
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if strings.Contains(p, token) || strings.Contains(string(b), token) {
			t.Errorf("the token is in %s", p)
		}
		return err
	})
	must(t, err)
}
