package fsnode_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/session"
)

// deepHelperEnv makes the test binary the deep-path client (TestMain): a
// process whose working directory is deep in the mount, that makes every
// node type at relative paths of PATH_MAX-1 bytes. The serving process
// must never chdir into its own mount (FUSE-NOTES, Deadlocks).
const deepHelperEnv = "MEMFS_DEEP_PATH_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(deepHelperEnv) != "" {
		os.Exit(deepHelper())
	}
	os.Exit(m.Run())
}

// deepDirs is the number of 255-byte directories of a deep path: with its
// last segment of 255 bytes it is 15*256+255 = 4,095 bytes, PATH_MAX
// without its NUL.
const deepDirs = 15

// deepRel returns the relative path of 4,095 bytes whose last segment is
// name padded with its first letter to 255 bytes.
func deepRel(name string) string {
	segs := make([]string, 0, deepDirs+1)
	for i := range deepDirs {
		segs = append(segs, fmt.Sprintf("%02d", i)+strings.Repeat("d", backend.MaxSegmentLen-2))
	}
	segs = append(segs, name+strings.Repeat(name[:1], backend.MaxSegmentLen-len(name)))
	return strings.Join(segs, "/")
}

// deepHelper runs, in its working directory, each syscall pjdfstest runs
// at a deep relative path, prints every failure as "op: error" and
// returns 1 if there was one. It leaves a file, a directory, a symlink
// and a fifo for the caller to find in the store.
func deepHelper() int {
	p, q := deepRel("file"), deepRel("other")
	failed := 0
	try := func(op string, err error) {
		if err != nil {
			fmt.Printf("%s: %v\n", op, err)
			failed++
		}
	}
	// The directories on the way: each mkdir a long relative path too.
	for i := range deepDirs {
		try("mkdir parent "+strconv.Itoa(i), syscall.Mkdir(p[:(i+1)*256-1], 0o755))
	}
	if len(p) != 4095 || len(q) != 4095 {
		fmt.Printf("paths of %d and %d bytes, want 4095\n", len(p), len(q))
		return 1
	}
	try("mkdir", syscall.Mkdir(p, 0o755))
	try("rmdir", syscall.Rmdir(p))
	fd, err := syscall.Open(p, syscall.O_CREAT|syscall.O_EXCL|syscall.O_WRONLY, 0o644)
	try("open O_CREAT", err)
	if err == nil {
		_, err = syscall.Write(fd, []byte("deep value"))
		try("write", err)
		try("close", syscall.Close(fd))
	}
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		uid, gid = 65534, 65534
	}
	try("chmod", syscall.Chmod(p, 0o600))
	try("chown", syscall.Lchown(p, uid, gid))
	try("truncate", syscall.Truncate(p, 4))
	try("link", syscall.Link(p, q))
	try("unlink link", syscall.Unlink(q))
	try("rename", syscall.Rename(p, q))
	try("rename back", syscall.Rename(q, p))
	try("mkfifo", syscall.Mkfifo(q, 0o644))
	try("unlink fifo", syscall.Unlink(q))
	if os.Getuid() == 0 {
		try("mknod", syscall.Mknod(q, syscall.S_IFCHR|0o644, int(unix.Mkdev(1, 3))))
		try("unlink device", syscall.Unlink(q))
	}
	// What stays: the file, a directory, a symlink, a fifo.
	try("mkdir kept", syscall.Mkdir(deepRel("dir"), 0o750))
	try("symlink", syscall.Symlink("file", q))
	try("mkfifo kept", syscall.Mkfifo(deepRel("pipe"), 0o640))
	var st syscall.Stat_t
	try("lstat", syscall.Lstat(p, &st))
	if st.Size != 4 || st.Mode&0o7777 != 0o600 || int(st.Uid) != uid {
		fmt.Printf("lstat: size %d, mode %o, uid %d; want 4, 600, %d\n", st.Size, st.Mode&0o7777, st.Uid, uid)
		failed++
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// deepStores are the posix tests' stores, and badger and the memory store.
func deepStores(outer *testing.T) []posixStore {
	return append(posixStores(outer),
		posixStore{"badger", 0, func(t *testing.T) backend.Store {
			st, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
		posixStore{"memstore", 0, func(t *testing.T) backend.Store { return memstore.New() }},
	)
}

// TestPosixDeepRelativePath is pjdfstest's deep-path cases (mkdir/03.t,
// open/03.t, ... with a working directory several levels deep in the
// mount): every syscall at a relative path of 4,095 bytes, legal because
// PATH_MAX bounds the path a syscall receives, not the key it makes.
// Every one must succeed, and the nodes must reach the store: a new
// session over it finds them, deeper than 4,096 bytes from the root.
func TestPosixDeepRelativePath(t *testing.T) {
	for _, ps := range deepStores(t) {
		t.Run(ps.name, func(t *testing.T) {
			st := ps.open(t)
			m, log := posixMount(t, ps, st)
			cwd := filepath.Join(m.dir, "posix", "work", "ing", "dir")
			if err := os.MkdirAll(cwd, 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Dir = cwd
			cmd.Env = append(os.Environ(), deepHelperEnv+"=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the client in %s: %v\n%s", cwd, err, out)
			}
			if err := m.c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			checkNoOtherWriter(t, log)

			base := "posix/work/ing/dir/"
			c := session.NewContext(st, session.Options{})
			if err := c.Bootstrap(t.Context(), "memory/"); err != nil {
				t.Fatal(err)
			}
			file := base + deepRel("file")
			if len(file) <= 4096 {
				t.Fatalf("the key is %d bytes: not deeper than the old limit", len(file))
			}
			sf, err := c.Stat(file)
			if err != nil {
				t.Fatalf("the deep file in a new session: %v", err)
			}
			if sf.Mode.Perm() != 0o600 || sf.Size != 4 {
				t.Errorf("the deep file: mode %v, size %d; want 0600 and 4", sf.Mode, sf.Size)
			}
			if err := c.Resolve(t.Context(), file); err != nil {
				t.Fatal(err)
			}
			if v, _ := c.Get(file); string(v) != "deep" {
				t.Errorf("the deep file holds %q; want \"deep\"", v)
			}
			for name, want := range map[string]os.FileMode{"dir": os.ModeDir, "other": os.ModeSymlink, "pipe": os.ModeNamedPipe} {
				s, err := c.Stat(base + deepRel(name))
				if err != nil || s.Mode.Type() != want {
					t.Errorf("deep %s in a new session: %v, %v; want type %v", name, s.Mode, err, want)
				}
			}
		})
	}
}

// The history of a key deeper than PATH_MAX is in the mount like any
// other's: .memfs/history/KEY/SEQ, reached one segment at a time, holds
// each version (issue 36: the history path of a deep key is deeper still).
func TestHistoryOfADeepKey(t *testing.T) {
	st := newDirStore(t, t.TempDir())
	h := newTestHistory(t, st)
	uid := uint32(os.Getuid())
	key := "memory/" + deepRel("file")
	past := h.record(history.OpWrite, file(key, "past\n", 0o644, uid, 0))
	h.record(history.OpWrite, file(key, "present\n", 0o644, uid, 1))
	if err := st.Save(t.Context(), file(key, "present\n", 0o644, uid, 1)); err != nil {
		t.Fatal(err)
	}
	m := mount(t, st, mountConfig{fopts: fsnode.Options{History: h}})
	h.mu.Lock()
	h.c = m.c
	h.mu.Unlock()
	r, err := os.OpenRoot(m.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, err := r.ReadFile(key); err != nil || string(b) != "present\n" {
		t.Fatalf("the deep key: %q, %v", b, err)
	}
	p := ".memfs/history/" + key + "/" + ver(past)
	if b, err := r.ReadFile(p); err != nil || string(b) != "past\n" {
		t.Fatalf("its past version at a path of %d bytes: %q, %v", len(p), b, err)
	}
}
