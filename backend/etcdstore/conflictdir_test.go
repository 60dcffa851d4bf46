package etcdstore_test

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/etcdtest"
)

// A file saved where another writer's directory record now is (keep
// beside, not FailOnConflict): the directory is no version to copy beside
// as a file record (its keys would stay under a name that is a file, and
// the copy is an empty directory of nothing). The save is refused with
// EEXIST, as on a directory store: the directory keeps the name, and a
// session moves its file beside it.
func TestSaveIfOverAnotherWritersDirectory(t *testing.T) {
	srv := etcdtest.Start(t)
	st := open(t, srv, "dirconflict")
	file := entry("d", []byte("one\n"))
	saved := []backend.Entry{file}
	if _, err := st.SaveIf(t.Context(), saved, []backend.Version{{}}); err != nil {
		t.Fatal(err)
	}
	mine := backend.VersionOf(saved[0].Info)
	// Another writer: the file removed, a directory with a file in it.
	if err := st.Delete(t.Context(), "d"); err != nil {
		t.Fatal(err)
	}
	dir := backend.Entry{Key: "d", Info: backend.Info{Mode: fs.ModeDir | 0o755}}
	if err := st.Save(t.Context(), dir, entry("d/in.md", []byte("theirs\n"))); err != nil {
		t.Fatal(err)
	}
	again := entry("d", []byte("two\n"))
	kept, err := st.SaveIf(t.Context(), []backend.Entry{again}, []backend.Version{mine})
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("SaveIf of a file over another writer's directory: kept %v, %v; want EEXIST", kept, err)
	}
	es, err := st.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if strings.HasPrefix(e.Key, "d.conflict-") {
			t.Errorf("%s: a copy of their directory record (%v)", e.Key, e.Info.Mode)
		}
		if e.Key == "d" && !e.Info.Mode.IsDir() {
			t.Errorf("d is %v, want their directory", e.Info.Mode)
		}
	}
}
