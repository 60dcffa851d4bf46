package memfs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/etcdtest"
	"github.com/memfs/memfs/tree"
)

// `memfs import` of 10,000 small files onto etcd: one flush whose events
// (3.2 MB) are far over one etcd transaction. Every file is stored, the
// log holds one event each with its chain intact, and nothing goes to
// the recovery directory.
func TestImportManyOntoEtcd(t *testing.T) {
	const n = 10000
	src := t.TempDir()
	for i := range n {
		d := filepath.Join(src, fmt.Sprintf("dir%03d", i/100))
		must(t, os.MkdirAll(d, 0o755))
		must(t, os.WriteFile(filepath.Join(d, fmt.Sprintf("notes-file-%05d.md", i)), fmt.Appendf(nil, "note %d\n", i), 0o644))
	}
	srv := etcdtest.Start(t)
	open := func() *etcdstore.Store {
		st, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "import"})
		must(t, err)
		return st
	}
	var report strings.Builder
	tally := tree.NewTally(&report)
	plan, err := memfs.ScanImport(src, "", tally)
	must(t, err)
	f := openTreeFS(t, open(), filepath.Join(t.TempDir(), "journal"))
	f.Import(t.Context(), plan, tally, nil)
	if err := f.Close(t.Context()); err != nil {
		t.Fatalf("Close (the import's flush): %v", err)
	}
	if err := tally.Err("import"); err != nil {
		t.Fatalf("import: %v\n%s", err, &report)
	}

	st := open()
	defer st.Close()
	es, err := st.List(t.Context())
	must(t, err)
	files := 0
	for _, e := range es {
		if e.Info.Mode.IsRegular() {
			files++
		}
	}
	if files != n {
		t.Errorf("the store holds %d files, want %d", files, n)
	}
	lc, err := memfs.VerifyLog(t.Context(), st, 0)
	must(t, err)
	if lc.Failed != "" || !strings.Contains(lc.Out, fmt.Sprintf("event log ok: %d events", n)) {
		t.Errorf("log --verify: %q, failed %q, notes %q; want %d events, intact", lc.Out, lc.Failed, lc.Notes, n)
	}
}
