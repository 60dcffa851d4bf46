package memfs

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/names"
	"github.com/memfs/memfs/internal/paths"
	"github.com/memfs/memfs/session"
	"github.com/memfs/memfs/tree"
)

// An ImportPlan is what ScanImport found under a directory: the names to
// import, directories before what they hold.
type ImportPlan struct {
	src   string
	nodes []importNode
}

// importNode is one name found under the imported directory.
type importNode struct {
	rel  string // on disk, under the imported directory
	key  string
	info backend.Info
	ino  [2]uint64 // (dev, ino) of a non-directory with more than one name
}

// ScanImport walks src without following symlinks and plans the import
// of what it holds under prefix (keys are paths relative to src). What
// cannot be imported is reported on t: a name that is no valid key, is
// reserved for memfs's own files, or cannot be read; a transient editor
// file is left out with a note. A dir store's own files (src is a dir
// store's root) are left out silently. The error is src's own. The walk
// goes through an os.Root, one segment at a time, so a tree deeper than
// PATH_MAX (keys have no limit) is read whole.
func ScanImport(src, prefix string, t *tree.Tally) (*ImportPlan, error) {
	root, err := os.OpenRoot(src)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	_, err = root.Lstat(backend.DirMarker)
	dirStore := err == nil
	p := &ImportPlan{src: src}
	var walk func(dir string) error
	walk = func(dir string) error {
		f, err := root.Open(cmp.Or(dir, "."))
		if err != nil {
			return err
		}
		ents, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return err
		}
		slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		for _, d := range ents {
			rel := backend.Join(dir, d.Name())
			n, ok := scanNode(root, src, rel, prefix, dirStore, t)
			if !ok || !d.IsDir() {
				if ok {
					p.nodes = append(p.nodes, n)
				}
				continue
			}
			p.nodes = append(p.nodes, n)
			if err := walk(rel); err != nil {
				t.Fail("import: %s: %v; skipped", names.Show(filepath.Join(src, rel)), err)
			}
		}
		return nil
	}
	return p, walk("")
}

// scanNode is the node rel of root (the directory src), false when it is
// left out (and reported on t).
func scanNode(root *os.Root, src, rel, prefix string, dirStore bool, t *tree.Tally) (importNode, bool) {
	path := filepath.Join(src, rel) // for messages
	key := backend.Join(prefix, rel)
	switch {
	case dirStore && backend.IsReserved(rel):
		return importNode{}, false
	case backend.IsReserved(key):
		t.Fail("import: %s: the name %s is reserved for memfs's own files; skipped", names.Show(path), names.Show(key))
		return importNode{}, false
	case session.IsTransient(key, session.DefaultTransient):
		t.Note("import: %s: a transient editor file (see mount --transient); skipped", names.Show(path))
		return importNode{}, false
	}
	if err := backend.ValidateKey(key); err != nil {
		t.Fail("import: %s: %v; skipped", names.Show(path), err)
		return importNode{}, false
	}
	info, st, err := tree.NodeInfoAt(root, rel)
	if err == nil {
		err = backend.ValidateXAttrs(info.XAttrs)
	}
	if err != nil {
		t.Fail("import: %s: %v; skipped", names.Show(path), err)
		return importNode{}, false
	}
	n := importNode{rel: rel, key: key, info: info}
	if !info.Mode.IsDir() && st.Nlink > 1 {
		n.ino = [2]uint64{uint64(st.Dev), uint64(st.Ino)}
	}
	return n, true
}

// Import puts the nodes of plan into the session: names of one inode
// become one node (a hard-link group), and directories get their
// attributes last, children first, so that filling them does not move
// their times. What it carries is counted on t, what it cannot reported
// there; progress (nil: none) sees each name done. The values reach the
// store at the next flush.
func (f *FS) Import(ctx context.Context, plan *ImportPlan, t *tree.Tally, progress tree.Progress) {
	if progress == nil {
		progress = tree.NoProgress{}
	}
	progress.Start(len(plan.nodes))
	defer progress.Done()
	root, err := os.OpenRoot(plan.src)
	if err != nil {
		t.Fail("import: %s: %v", names.Show(plan.src), err)
		return
	}
	defer root.Close()
	nodes := plan.nodes
	linkGroups(nodes)
	linked := map[string]bool{}
	var dirs []backend.Entry
	for _, n := range nodes {
		e := backend.Entry{Key: n.key, Info: n.info}
		if n.info.Mode.IsDir() {
			dirs = append(dirs, e)
			progress.Add(1)
			continue
		}
		if err := n.load(root, &e); err != nil {
			t.Fail("import: %s: %v; skipped", names.Show(filepath.Join(plan.src, n.rel)), err)
			continue
		}
		kind := backend.TypeName(n.info.Mode)
		if l := e.Info.Link; l != "" {
			if linked[l] {
				kind = "hard link"
			}
			linked[l] = true
		}
		if err := f.c.Put(e); err != nil {
			t.Fail("import: %s: %v; skipped", names.Show(filepath.Join(plan.src, n.rel)), err)
			continue
		}
		t.Add(kind)
		progress.Add(1)
	}
	f.importDirs(dirs, t)
}

// linkGroups names the hard-link group of each node that shares its inode
// with another node of the import.
func linkGroups(nodes []importNode) {
	groups := map[[2]uint64][]int{}
	for i, n := range nodes {
		if n.ino != [2]uint64{} {
			groups[n.ino] = append(groups[n.ino], i)
		}
	}
	var b [8]byte
	rand.Read(b[:])
	run := hex.EncodeToString(b[:]) // link groups of this import never meet older ones
	for ino, idx := range groups {
		if len(idx) < 2 {
			continue // its other names are outside the tree
		}
		for _, i := range idx {
			nodes[i].info.Link = fmt.Sprintf("import-%s-%d-%d", run, ino[0], ino[1])
		}
	}
}

// load reads the value of a file or a symlink into e.
func (n *importNode) load(root *os.Root, e *backend.Entry) error {
	switch n.info.Mode.Type() {
	case fs.ModeSymlink:
		target, err := root.Readlink(n.rel)
		if err != nil {
			return err
		}
		e.Value = []byte(target)
	case 0:
		v, err := readRegular(root, n.rel)
		if err != nil {
			return err
		}
		e.Value = v
	}
	return nil
}

// importDirs puts every directory once, parents first (a directory's mode
// may let nothing in; the session does not check), then again children
// first for the times.
func (f *FS) importDirs(dirs []backend.Entry, t *tree.Tally) {
	for pass := range 2 {
		for i := range dirs {
			e := dirs[i]
			if pass == 1 {
				e = dirs[len(dirs)-1-i]
			}
			if err := f.c.Put(e); err != nil {
				if pass == 0 {
					t.Fail("import: %s: %v; skipped", names.Show(e.Key), err)
				}
				continue
			}
			if pass == 0 {
				t.Add("directory")
			}
		}
	}
}

// readRegular reads the regular file rel of root, refusing anything that
// was put in its place after the walk saw it.
func readRegular(root *os.Root, rel string) ([]byte, error) {
	return paths.ReadNoFollow(root, rel)
}
