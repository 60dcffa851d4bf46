package memfs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/internal/testtree"
	"github.com/memfs/memfs/session"
	"github.com/memfs/memfs/tree"
)

// treeStores opens memfs over each real store kind in dir, as the import
// and export commands do.
var treeStores = []struct {
	name string
	open func(t *testing.T, dir string) *memfs.FS
}{
	{"dir", func(t *testing.T, dir string) *memfs.FS {
		st, err := dirstore.Open(dir)
		must(t, err)
		return openTreeFS(t, st, filepath.Join(dir, dirstore.JournalName))
	}},
	{"badger", func(t *testing.T, dir string) *memfs.FS {
		st, err := badgerstore.Open(dir, badgerstore.Options{})
		must(t, err)
		return openTreeFS(t, st, filepath.Join(dir, badgerstore.JournalName))
	}},
}

func openTreeFS(t *testing.T, st backend.Store, journal string) *memfs.FS {
	t.Helper()
	f, err := memfs.Open(t.Context(), st, memfs.Options{
		JournalPath: journal,
		RecoveryDir: filepath.Join(t.TempDir(), "recovery"),
		Session:     session.Options{DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid()), Transient: []string{}},
	})
	must(t, err)
	return f
}

// countProgress counts what a Progress is told.
type countProgress struct {
	total, added, starts, dones int
}

func (p *countProgress) Start(total int) { p.total = total; p.starts++ }
func (p *countProgress) Add(n int)       { p.added += n }
func (p *countProgress) Done()           { p.dones++ }

// A tree with every node type goes into a store and comes back out the
// same (but the transient editor file, left out with a note): modes and
// special bits, owners (as root), devices (as root), hard links,
// symlinks, user attributes and times; the tallies count each kind and
// the progress sees every name.
func TestImportExportEveryNodeType(t *testing.T) {
	for _, ts := range treeStores {
		t.Run(ts.name, func(t *testing.T) {
			src := t.TempDir()
			testtree.Make(t, src)
			want := testtree.Describe(t, src)
			dir := t.TempDir()

			var report bytes.Buffer
			tally := tree.NewTally(&report)
			plan, err := memfs.ScanImport(src, "", tally)
			must(t, err)
			f := ts.open(t, dir)
			var p countProgress
			f.Import(t.Context(), plan, tally, &p)
			must(t, f.Close(t.Context()))
			wantSum := "3 files, 6 directories, 2 symlinks, 1 fifo, 1 socket, "
			if os.Geteuid() == 0 {
				wantSum += "1 char device, 1 block device, "
			}
			wantSum += "2 hard links"
			if got := tally.Summary(); got != wantSum {
				t.Errorf("import summary %q, want %q", got, wantSum)
			}
			if err := tally.Err("import"); err != nil || !strings.Contains(report.String(), testtree.Swap+": a transient editor file") {
				t.Errorf("import: %v; report %q; want no error and a note on the transient file", err, report.String())
			}
			if p.starts != 1 || p.dones != 1 || p.total == 0 || p.added != p.total {
				t.Errorf("import progress %+v, want one Start, as many done, one Done", p)
			}

			dst := filepath.Join(t.TempDir(), "export")
			must(t, os.Mkdir(dst, 0o755))
			f = ts.open(t, dir)
			t.Cleanup(func() { f.Close(t.Context()) })
			tally = tree.NewTally(&report)
			p = countProgress{}
			must(t, f.Export(t.Context(), dst, "", tally, tree.ExportOptions{AsRoot: os.Geteuid() == 0, Progress: &p}))
			if got := tally.Summary(); got != wantSum || tally.Err("export") != nil {
				t.Errorf("export summary %q, %v; want %q, no error\n%s", got, tally.Err("export"), wantSum, &report)
			}
			if p.starts != 1 || p.dones != 1 || p.added != p.total {
				t.Errorf("export progress %+v, want one Start, as many done, one Done", p)
			}
			got := testtree.Describe(t, dst)
			wantNoSwap := slices.DeleteFunc(slices.Clone(want), func(l string) bool { return strings.HasPrefix(l, testtree.Swap+" ") })
			if strings.Join(got, "\n") != strings.Join(wantNoSwap, "\n") {
				t.Errorf("export differs from the imported tree:\n%s", testtree.LineDiff(got, wantNoSwap))
			}
		})
	}
}

// A dir store's own files are no keys: importing the store's directory
// leaves them out without a word. Elsewhere such a name is a name that is
// lost: reported, and the import fails after importing the rest.
func TestImportReservedNames(t *testing.T) {
	store := t.TempDir()
	ds, err := dirstore.Open(store)
	must(t, err)
	must(t, ds.Save(t.Context(), backend.Entry{Key: "memory/a.md", Value: []byte("note\n"), Info: backend.Info{Mode: 0o644}}))
	must(t, ds.Close())

	f := treeStores[1].open(t, t.TempDir())
	t.Cleanup(func() { f.Close(t.Context()) })
	var report bytes.Buffer
	tally := tree.NewTally(&report)
	plan, err := memfs.ScanImport(store, "", tally)
	must(t, err)
	f.Import(t.Context(), plan, tally, nil)
	if err := tally.Err("import"); err != nil || strings.Contains(report.String(), "reserved") {
		t.Fatalf("import of a dir store: %v\n%s", err, &report)
	}
	if got := tally.Summary(); got != "1 file, 1 directory" {
		t.Errorf("import of a dir store: %q, want 1 file, 1 directory", got)
	}

	src := t.TempDir()
	must(t, os.WriteFile(filepath.Join(src, ".memfs-notes"), []byte("x"), 0o644))
	must(t, os.WriteFile(filepath.Join(src, "kept.md"), []byte("y"), 0o644))
	report.Reset()
	tally = tree.NewTally(&report)
	plan, err = memfs.ScanImport(src, "", tally)
	must(t, err)
	f.Import(t.Context(), plan, tally, nil)
	if err := tally.Err("import"); err == nil || !strings.Contains(err.Error(), "1 name could not be carried") {
		t.Errorf("import of a reserved name = %v, want an error", err)
	}
	if !strings.Contains(report.String(), ".memfs-notes is reserved for memfs's own files; skipped") {
		t.Errorf("import did not report the reserved name:\n%s", &report)
	}
	c := f.Session()
	must(t, c.Resolve(t.Context(), "kept.md"))
	if v, _ := c.Get("kept.md"); string(v) != "y" {
		t.Errorf("kept.md = %q, want %q", v, "y")
	}
}
