package memfs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend/dirstore"
)

// A store mounted, written through the mountpoint with plain file calls,
// unmounted and flushed. (Mounting needs /dev/fuse and the right to mount.)
func Example() {
	dir, _ := os.MkdirTemp("", "memfs-example")
	defer os.RemoveAll(dir)
	store, mnt := filepath.Join(dir, "store"), filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o755)

	st, err := dirstore.Open(store)
	if err != nil {
		panic(err)
	}
	fsys, err := memfs.Open(context.Background(), st, memfs.Options{
		JournalPath: filepath.Join(store, dirstore.JournalName),
		Namespace:   true, // memory/, skills/, agents/
	})
	if err != nil {
		panic(err)
	}
	m, err := fsys.Mount(mnt, memfs.MountOptions{})
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "memory", "hello.md"), []byte("hello\n"), 0o644); err != nil {
		panic(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()     // ask at once: Serve flushes and unmounts
	m.Serve(ctx) // returns once unmounted
	if err := fsys.Close(context.Background()); err != nil {
		panic(err)
	}
	b, _ := os.ReadFile(filepath.Join(store, "memory", "hello.md"))
	fmt.Print(string(b))
	// Output: hello
}
