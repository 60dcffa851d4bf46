package fsnode

import (
	"context"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Answers are virtual files whose content memfs computes from their name:
// .memfs/context.md, .memfs/context/QUERY and .memfs/search/QUERY. Their
// content is made when looked up or opened and kept for a second, or until
// memory changes, so that the size stat reports and the bytes a read
// returns agree.

// Answer computes the content of an answer file from its name ("" for
// .memfs/context.md).
type Answer func(ctx context.Context, name string) ([]byte, error)

const answerTTL = time.Second

type answerCache struct {
	mu   sync.Mutex
	data map[string]cachedAnswer
}

type cachedAnswer struct {
	at   time.Time
	data []byte
}

func (c *answerCache) get(ctx context.Context, fn Answer, key, name string) ([]byte, error) {
	c.mu.Lock()
	if a, ok := c.data[key]; ok && time.Since(a.at) < answerTTL {
		c.mu.Unlock()
		return a.data, nil
	}
	c.mu.Unlock()
	b, err := fn(ctx, name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.data == nil {
		c.data = make(map[string]cachedAnswer)
	}
	for k, a := range c.data { // keep the cache small
		if time.Since(a.at) >= answerTTL {
			delete(c.data, k)
		}
	}
	c.data[key] = cachedAnswer{at: time.Now(), data: b}
	c.mu.Unlock()
	return b, nil
}

// answerFile returns the virtual file for name under dir ("context" or
// "search"; "" for context.md itself).
func (r *Root) answerFile(ctx context.Context, fn Answer, dir, name string, ino uint64) (*virtualNode, syscall.Errno) {
	key := dir + "/" + name
	if _, err := r.answers.get(ctx, fn, key, name); err != nil {
		r.log.Info("answer file refused", "dir", dir, "name", name, "err", err)
		return nil, syscall.ENOENT
	}
	size := func() int64 {
		b, err := r.answers.get(context.Background(), fn, key, name)
		if err != nil {
			return 0
		}
		return int64(len(b))
	}
	return &virtualNode{root: r, ino: ino, size: size, open: func() gofs.FileHandle {
		b, err := r.answers.get(context.Background(), fn, key, name)
		if err != nil {
			r.log.Warn("answer file", "dir", dir, "name", name, "err", err)
		}
		return &staticHandle{data: b}
	}}, 0
}

// answerDir is .memfs/search/ or .memfs/context/: every name is a query;
// the directory lists nothing.
type answerDir struct {
	gofs.Inode
	root *Root
	name string
	ino  uint64
	fn   Answer
}

var (
	_ gofs.NodeLookuper  = (*answerDir)(nil)
	_ gofs.NodeReaddirer = (*answerDir)(nil)
	_ gofs.NodeGetattrer = (*answerDir)(nil)
)

func (d *answerDir) fill(out *fuse.Attr) {
	out.Ino = d.ino
	out.Mode = syscall.S_IFDIR | 0o555
	out.Nlink = 2
	st, _ := d.root.c.Stat("")
	out.Owner = fuse.Owner{Uid: st.UID, Gid: st.GID}
}

func (d *answerDir) Getattr(ctx context.Context, f gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.fill(&out.Attr)
	return 0
}

func (d *answerDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	return gofs.NewListDirStream(nil), 0
}

func (d *answerDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	// A distinct inode per lookup: the answer to a name changes as
	// memory changes, and the kernel must not keep an old one.
	d.root.answerIno.Add(1)
	v, errno := d.root.answerFile(ctx, d.fn, d.name, name, answerInoBase+d.root.answerIno.Load())
	if errno != 0 {
		return nil, errno
	}
	v.fill(&out.Attr)
	out.SetEntryTimeout(0)
	out.SetAttrTimeout(0)
	return d.NewInode(ctx, v, gofs.StableAttr{Mode: syscall.S_IFREG, Ino: v.ino}), 0
}

// clear drops every cached answer: memory changed.
func (c *answerCache) clear() {
	c.mu.Lock()
	clear(c.data)
	c.mu.Unlock()
}
