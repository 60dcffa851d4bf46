package fsnode

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/session"
)

// An open of a node whose name now holds another node (a keep-both
// resolution put the other writer's version under it, or the name was
// reused) before the kernel's entry notification arrived answers ESTALE,
// which makes the kernel look the name up again and open what it holds
// (namei: a path open that meets ESTALE is retried with LOOKUP_REVAL),
// never ENOENT for a name that exists (issue 26).
func TestOpenOfAReplacedNameIsStale(t *testing.T) {
	r := newRawTree(t, Options{})
	const key = "memory/n.md"
	if err := r.c.Set(key, []byte("ours\n")); err != nil {
		t.Fatal(err)
	}
	old, st := r.lookup(0, "memory", "n.md")
	if !st.Ok() {
		t.Fatalf("lookup: %v", st)
	}
	if err := r.c.Delete(key); err != nil {
		t.Fatal(err)
	}
	if err := r.c.Set(key, []byte("theirs\n")); err != nil {
		t.Fatal(err)
	}
	var oo fuse.OpenOut
	in := fuse.OpenIn{InHeader: header(old.NodeId, 0), Flags: uint32(os.O_RDONLY)}
	if st := r.fs.Open(nil, &in, &oo); st != fuse.Status(syscall.ESTALE) {
		if st.Ok() {
			r.fs.Release(nil, &fuse.ReleaseIn{InHeader: header(old.NodeId, 0), Fh: oo.Fh})
		}
		t.Fatalf("open of the replaced node = %v, want ESTALE", st)
	}
	if got, st := r.lookupRead(key); got != "theirs\n" {
		t.Errorf("a new lookup reads %q, %v; want theirs", got, st)
	}
}

// lookupRead looks key up afresh and reads it as root.
func (r *rawTree) lookupRead(key string) (string, fuse.Status) {
	out, st := r.lookup(0, splitKey(key)...)
	if !st.Ok() {
		return "", st
	}
	return r.read(out.NodeId, 0)
}

// Through the kernel: the entry notification of the replacement never
// arrives (the notification queue is stopped), so the kernel's cached
// name still points to the replaced node; the open must still find the
// name and read what it holds.
func TestOpenAfterReplacementWithoutNotification(t *testing.T) {
	if os.Getenv("MEMFS_SKIP_MOUNT_TESTS") != "" {
		t.Skip("MEMFS_SKIP_MOUNT_TESTS is set")
	}
	st, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := session.NewContext(st, session.Options{DirMode: 0o755, DirUID: uint32(os.Getuid()), DirGID: uint32(os.Getgid())})
	root := NewRoot(c, Options{EntryTimeout: time.Hour, AttrTimeout: time.Hour})
	dir := t.TempDir()
	srv, err := Mount(dir, root, MountOptions{})
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
		root.Close()
	})
	const key = "memory/n.md"
	if err := c.Set(key, []byte("ours\n")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "memory", "n.md")
	if _, err := os.Stat(p); err != nil { // the kernel caches the name
		t.Fatal(err)
	}
	root.queue.close()
	if err := c.Delete(key); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(key, []byte("theirs\n")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "theirs\n" {
		t.Fatalf("read %s = %q, %v; want theirs", p, got, err)
	}
}
