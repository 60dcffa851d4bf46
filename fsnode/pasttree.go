package fsnode

import (
	"context"
	"maps"
	"slices"
	"sync"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/history"
)

// pastTree is the namespace at one seq (history.Store.At), loaded at its
// first use and kept while the kernel keeps its root: it never changes.
type pastTree struct {
	root *Root
	hist History
	seq  uint64
	view string // where it is mounted ("at/12", "snapshots/NAME@12"): its inodes' namespace

	// mu gates the load: the first caller loads (At, I/O under it, so
	// that concurrent lookups wait for one load instead of each making
	// their own), the rest wait; a failed load is tried again by the next.
	mu     sync.Mutex
	loaded bool
	nodes  map[string]*history.Version // by key; a directory history never recorded is absent
	kids   map[string][]string         // directory key ("" the root) -> its names, sorted
	links  map[string]uint32           // hard-link group -> how many names it has
}

func newPastTree(r *Root, hist History, seq uint64, view string) *pastTree {
	return &pastTree{root: r, hist: hist, seq: seq, view: view}
}

func (t *pastTree) load(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.loaded {
		return nil
	}
	vs, err := t.hist.At(ctx, t.seq)
	if err != nil {
		return err
	}
	t.nodes = make(map[string]*history.Version, len(vs))
	t.links = map[string]uint32{}
	kids := map[string]map[string]bool{"": {}}
	for i := range vs {
		v := &vs[i]
		t.nodes[v.Key] = v
		if v.Link != "" {
			t.links[v.Link]++
		}
		for k := v.Key; k != ""; k = parentKey(k) {
			p, name := backend.Split(k)
			if kids[p] == nil {
				kids[p] = map[string]bool{}
			}
			kids[p][name] = true
		}
	}
	t.kids = make(map[string][]string, len(kids))
	for d, names := range kids {
		t.kids[d] = slices.Sorted(maps.Keys(names))
	}
	t.loaded = true
	return nil
}

// isDir reports whether key is a directory of the tree.
func (t *pastTree) isDir(key string) bool {
	if v, ok := t.nodes[key]; ok {
		return v.Mode.IsDir()
	}
	_, ok := t.kids[key]
	return ok
}

// ino is key's inode number: one per hard-link group.
func (t *pastTree) ino(key string) uint64 {
	if v, ok := t.nodes[key]; ok && v.Link != "" {
		return pastIno(t.view, "link", v.Link)
	}
	return pastIno(t.view, key)
}

// fill fills out with key's attributes as they were.
func (t *pastTree) fill(key string, out *fuse.Attr) {
	v, ok := t.nodes[key]
	if !ok {
		t.root.readOnlyDir(t.ino(key), out) // the root, or a directory never recorded
		return
	}
	nlink := uint32(1)
	switch {
	case v.Mode.IsDir():
		nlink = 2
	case v.Link != "":
		nlink = t.links[v.Link]
	}
	fillVersion(v, t.ino(key), nlink, out)
}

// pastNode is one node of a past namespace: a directory, a file, a
// symlink or a special file, as it was.
type pastNode struct {
	gofs.Inode
	noRemoval
	tree *pastTree
	key  string
}

var (
	_ gofs.NodeLookuper    = (*pastNode)(nil)
	_ gofs.NodeReaddirer   = (*pastNode)(nil)
	_ gofs.NodeGetattrer   = (*pastNode)(nil)
	_ gofs.NodeOpener      = (*pastNode)(nil)
	_ gofs.NodeReadlinker  = (*pastNode)(nil)
	_ gofs.NodeGetxattrer  = (*pastNode)(nil)
	_ gofs.NodeListxattrer = (*pastNode)(nil)
)

func (n *pastNode) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if n.key == "" { // the root's attributes are memfs's: no need to load
		n.tree.root.readOnlyDir(n.tree.ino(""), &out.Attr)
		out.SetTimeout(pastTimeout)
		return 0
	}
	if err := n.tree.load(ctx); err != nil {
		return n.tree.root.pastErrno(n.tree.view, err)
	}
	n.tree.fill(n.key, &out.Attr)
	out.SetTimeout(pastTimeout)
	return 0
}

// visible reports whether the caller may see key now; the root of a past
// namespace is open to whoever may reach .memfs.
func (n *pastNode) visible(ctx context.Context, key string) bool {
	return key == "" || n.tree.root.nowVisible(ctx, key)
}

func (n *pastNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	t := n.tree
	if err := t.load(ctx); err != nil {
		return nil, t.root.pastErrno(t.view, err)
	}
	key := backend.Join(n.key, name)
	if _, ok := t.nodes[key]; !ok && !t.isDir(key) {
		return nil, syscall.ENOENT
	}
	if !n.visible(ctx, key) {
		return nil, syscall.EACCES
	}
	t.fill(key, &out.Attr)
	out.SetEntryTimeout(pastTimeout)
	out.SetAttrTimeout(pastTimeout)
	return n.NewInode(ctx, &pastNode{tree: t, key: key}, gofs.StableAttr{Mode: out.Attr.Mode & syscall.S_IFMT, Ino: out.Attr.Ino}), 0
}

func (n *pastNode) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	t := n.tree
	if err := t.load(ctx); err != nil {
		return nil, t.root.pastErrno(t.view, err)
	}
	if !n.visible(ctx, n.key) {
		return nil, syscall.EACCES
	}
	names := t.kids[n.key]
	out := make([]fuse.DirEntry, 0, len(names))
	for _, name := range names {
		key := backend.Join(n.key, name)
		var a fuse.Attr
		t.fill(key, &a)
		out = append(out, fuse.DirEntry{Name: name, Mode: a.Mode & syscall.S_IFMT, Ino: a.Ino})
	}
	return gofs.NewListDirStream(out), 0
}

// version is the node's version, nil for a directory never recorded.
func (n *pastNode) version(ctx context.Context) (*history.Version, syscall.Errno) {
	if err := n.tree.load(ctx); err != nil {
		return nil, n.tree.root.pastErrno(n.tree.view, err)
	}
	return n.tree.nodes[n.key], 0
}

// The kernel has checked the past modes on the way (default_permissions);
// memfs checks the present.
func (n *pastNode) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	v, errno := n.version(ctx)
	if errno != 0 {
		return nil, 0, errno
	}
	if v == nil {
		return nil, 0, syscall.EISDIR
	}
	return n.tree.root.openValue(ctx, n.tree.hist, v, flags, n.visible(ctx, n.key))
}

func (n *pastNode) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	v, errno := n.version(ctx)
	if errno != 0 || v == nil {
		return nil, cmpErrno(errno, syscall.EINVAL)
	}
	if !n.visible(ctx, n.key) {
		return nil, syscall.EACCES
	}
	return n.tree.root.readLink(ctx, n.tree.hist, v)
}

func (n *pastNode) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	v, errno := n.version(ctx)
	if errno != 0 || v == nil {
		return 0, cmpErrno(errno, syscall.ENODATA)
	}
	return pastXAttr(v, attr, dest)
}

func (n *pastNode) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	v, errno := n.version(ctx)
	if errno != 0 || v == nil {
		return 0, errno
	}
	return pastXAttrList(v, dest)
}
