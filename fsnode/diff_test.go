package fsnode_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/etcdtest"
)

// TestDifferential runs random sequences of operations on a memfs mount
// and on a native directory and compares every result (errno, content,
// listings, types, modes, link counts, symlink targets, times set by
// utimensat), then flushes, unmounts, mounts the store again and compares
// the trees once more — on every store (etcd: a real server). The seeds are fixed so that CI
// runs the same sequences every time; MEMFS_DIFF_SEED replays one,
// MEMFS_DIFF_OPS sets the length, MEMFS_DIFF_RUNS runs that many seeds
// from MEMFS_DIFF_SEED on (the acceptance run: 5 x 20,000).
func TestDifferential(t *testing.T) {
	seed, ops, runs := uint64(1), 1500, 2
	if s := os.Getenv("MEMFS_DIFF_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
		runs = 1
	}
	if s := os.Getenv("MEMFS_DIFF_OPS"); s != "" {
		ops, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("MEMFS_DIFF_RUNS"); s != "" {
		runs, _ = strconv.Atoi(s)
	}
	stores := []struct {
		name string
		open func(t *testing.T) backend.Store
	}{
		{"dir", func(t *testing.T) backend.Store { return newDirStore(t, t.TempDir()) }},
		{"badger", func(t *testing.T) backend.Store {
			st, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
		{"etcd", func(t *testing.T) backend.Store {
			srv := etcdtest.Start(t)
			cfg, err := etcdstore.ParseURL(srv.URL("diff"))
			if err != nil {
				t.Fatal(err)
			}
			st, err := etcdstore.Open(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
	}
	for _, sto := range stores {
		for r := range runs {
			seed := seed + uint64(r)
			t.Run(fmt.Sprintf("%s/seed=%d", sto.name, seed), func(t *testing.T) {
				runDifferential(t, sto.open(t), seed, ops)
			})
		}
	}
}

func runDifferential(t *testing.T, st backend.Store, seed uint64, ops int) {
	native := t.TempDir() + "/work"
	if err := os.Mkdir(native, 0o755); err != nil {
		t.Fatal(err)
	}
	d := &differ{rng: rand.New(rand.NewPCG(seed, 7)), seed: seed}
	var times []string
	ok := t.Run("ops", func(t *testing.T) {
		m := mount(t, st, mountConfig{})
		d.t, d.roots = t, [2]string{m.dir + "/work", native}
		if err := os.Mkdir(d.roots[0], 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range ops {
			d.opsRun = i
			d.step()
			if t.Failed() {
				t.Fatalf("differential test failed at op %d; replay with MEMFS_DIFF_SEED=%d MEMFS_DIFF_OPS=%d", i, seed, i+1)
			}
		}
		times = d.compareTrees()
		if t.Failed() {
			t.Fatalf("trees differ after %d ops; replay with MEMFS_DIFF_SEED=%d", ops, seed)
		}
		if d.succeeded < ops/5 {
			t.Fatalf("only %d of %d operations succeeded: the sequence exercises too little", d.succeeded, ops)
		}
		if err := m.c.Flush(t.Context()); err != nil {
			t.Fatalf("flush: %v", err)
		}
	})
	if !ok {
		return
	}
	t.Run("remount", func(t *testing.T) {
		m := mount(t, st, mountConfig{})
		d.t, d.roots[0] = t, m.dir+"/work"
		if after := d.compareTrees(); !slices.Equal(after, times) {
			t.Errorf("times changed across the remount:\nbefore: %v\nafter:  %v", times, after)
		}
		if t.Failed() {
			t.Fatalf("trees differ after a remount; replay with MEMFS_DIFF_SEED=%d MEMFS_DIFF_OPS=%d; last ops: %s",
				seed, ops, strings.Join(d.log[max(0, len(d.log)-8):], "; "))
		}
	})
	t.Logf("seed %d: %d operations (%d succeeded), mount and native directory agree, before and after a remount", seed, ops, d.succeeded)
}

type differ struct {
	t      *testing.T
	rng    *rand.Rand
	roots  [2]string // mount, native
	seed   uint64
	opsRun int
	log    []string
	// succeeded counts operations that succeeded on both sides: a run
	// where almost everything fails would compare little.
	succeeded int
}

var diffNames = []string{"a", "b", "c", "d", "e.md"}

func (d *differ) path() string {
	depth := 1 + d.rng.IntN(2)
	if d.rng.IntN(5) == 0 {
		depth = 3
	}
	parts := make([]string, depth)
	for i := range parts {
		parts[i] = diffNames[d.rng.IntN(len(diffNames))]
	}
	return filepath.Join(parts...)
}

func (d *differ) data() []byte {
	n := d.rng.IntN(3000)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + d.rng.IntN(26))
	}
	return b
}

func errnoOf(err error) string {
	if err == nil {
		return "ok"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// both runs fn on the mount and on the native directory and compares the
// outcomes (an errno or "ok", plus any result string).
func (d *differ) both(desc string, fn func(root string) (string, error)) {
	d.t.Helper()
	var res [2]string
	for i, r := range d.roots {
		out, err := fn(r)
		res[i] = errnoOf(err) + " " + out
	}
	d.log = append(d.log, desc+" -> "+res[1])
	if strings.HasPrefix(res[1], "ok ") {
		d.succeeded++
	}
	if res[0] != res[1] {
		d.t.Errorf("op %d %s:\n  memfs:  %.200s\n  native: %.200s\n  last ops: %s", d.opsRun, desc, res[0], res[1],
			strings.Join(d.log[max(0, len(d.log)-8):], "; "))
	}
}

func (d *differ) step() {
	p, q := d.path(), d.path()
	switch op := d.rng.IntN(20); op {
	case 0, 1:
		data := d.data()
		d.both("writefile "+p, func(r string) (string, error) {
			// O_NONBLOCK everywhere: a fifo with no reader fails
			// (ENXIO) instead of blocking; regular files ignore it.
			f, err := os.OpenFile(filepath.Join(r, p), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NONBLOCK, 0o644)
			if err != nil {
				return "", err
			}
			defer f.Close()
			_, err = f.Write(data)
			return "", err
		})
	case 2:
		data, off := d.data(), int64(d.rng.IntN(5000))
		d.both(fmt.Sprintf("pwrite %s @%d", p, off), func(r string) (string, error) {
			f, err := os.OpenFile(filepath.Join(r, p), os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				return "", err
			}
			defer f.Close()
			_, err = f.WriteAt(data, off)
			return "", err
		})
	case 3:
		data := d.data()
		d.both("append "+p, func(r string) (string, error) {
			f, err := os.OpenFile(filepath.Join(r, p), os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, 0o600)
			if err != nil {
				return "", err
			}
			defer f.Close()
			_, err = f.Write(data)
			return "", err
		})
	case 4:
		size := int64(d.rng.IntN(6000))
		d.both(fmt.Sprintf("truncate %s %d", p, size), func(r string) (string, error) {
			return "", os.Truncate(filepath.Join(r, p), size)
		})
	case 5, 6:
		flags := uint(0)
		if d.rng.IntN(5) == 0 {
			flags = 1 // RENAME_NOREPLACE
		}
		d.both(fmt.Sprintf("rename %s %s %d", p, q, flags), func(r string) (string, error) {
			return "", unixRenameat2(filepath.Join(r, p), filepath.Join(r, q), flags)
		})
	case 7:
		d.both("unlink "+p, func(r string) (string, error) {
			return "", syscall.Unlink(filepath.Join(r, p))
		})
	case 8:
		d.both("mkdir "+p, func(r string) (string, error) {
			return "", syscall.Mkdir(filepath.Join(r, p), 0o755)
		})
	case 9:
		d.both("rmdir "+p, func(r string) (string, error) {
			return "", syscall.Rmdir(filepath.Join(r, p))
		})
	case 10:
		// Special bits too; every mode keeps the owner's rwx, so that
		// the walk can read everything (root ignores the rest anyway).
		mode := uint32(0o700 | d.rng.IntN(0o100) | d.rng.IntN(8)<<9)
		d.both(fmt.Sprintf("chmod %s %o", p, mode), func(r string) (string, error) {
			if err := syscall.Chmod(filepath.Join(r, p), mode); err != nil {
				return "", err
			}
			return statString(filepath.Join(r, p))
		})
	case 14:
		at := time.Unix(int64(d.rng.IntN(2_000_000_000)), int64(d.rng.IntN(1e9)))
		mt := time.Unix(int64(d.rng.IntN(2_000_000_000)), int64(d.rng.IntN(1e9)))
		d.both(fmt.Sprintf("utimensat %s", p), func(r string) (string, error) {
			ts := []unix.Timespec{unix.NsecToTimespec(at.UnixNano()), unix.NsecToTimespec(mt.UnixNano())}
			if err := unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(r, p), ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return "", err
			}
			var st unix.Stat_t
			err := unix.Lstat(filepath.Join(r, p), &st)
			return fmt.Sprintf("atime %d.%09d mtime %d.%09d", st.Atim.Sec, st.Atim.Nsec, st.Mtim.Sec, st.Mtim.Nsec), err
		})
	case 15:
		d.both(fmt.Sprintf("link %s %s", p, q), func(r string) (string, error) {
			if err := syscall.Link(filepath.Join(r, p), filepath.Join(r, q)); err != nil {
				return "", err
			}
			return statString(filepath.Join(r, q))
		})
	case 16:
		target := d.path()
		if d.rng.IntN(3) == 0 {
			target = "../" + target
		}
		d.both(fmt.Sprintf("symlink %s -> %s", p, target), func(r string) (string, error) {
			return "", syscall.Symlink(target, filepath.Join(r, p))
		})
	case 17:
		d.both("readlink "+p, func(r string) (string, error) {
			return os.Readlink(filepath.Join(r, p))
		})
	case 18:
		d.both("mkfifo "+p, func(r string) (string, error) {
			return "", syscall.Mkfifo(filepath.Join(r, p), 0o640)
		})
	case 19:
		mode := uint32(0o700 | d.rng.IntN(8)<<9)
		d.both(fmt.Sprintf("mkdir %s %o", p, mode), func(r string) (string, error) {
			if err := syscall.Mkdir(filepath.Join(r, p), mode); err != nil {
				return "", err
			}
			return statString(filepath.Join(r, p))
		})
	case 11:
		d.both("read "+p, func(r string) (string, error) {
			f, err := os.OpenFile(filepath.Join(r, p), os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if err != nil {
				return "", err
			}
			defer f.Close()
			b, err := io.ReadAll(f)
			return fmt.Sprintf("%x", b), err
		})
	case 12:
		dir := filepath.Dir(p)
		d.both("readdir "+dir, func(r string) (string, error) {
			ents, err := os.ReadDir(filepath.Join(r, dir))
			var names []string
			for _, e := range ents {
				names = append(names, e.Name()+":"+e.Type().String())
			}
			return strings.Join(names, ","), err
		})
	case 13:
		d.both("stat "+p, func(r string) (string, error) {
			return statString(filepath.Join(r, p))
		})
	}
}

// statString describes what memfs keeps of a node: type, mode with the
// special bits, link count, size (files), target (symlinks), owner.
func statString(path string) (string, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return "", err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fmt.Sprintf("dir %o nlink %d", st.Mode, st.Nlink), nil
	case unix.S_IFLNK:
		target, err := os.Readlink(path)
		return fmt.Sprintf("symlink %o -> %s", st.Mode, target), err
	case unix.S_IFREG:
		return fmt.Sprintf("file %o nlink %d size %d", st.Mode, st.Nlink, st.Size), nil
	}
	return fmt.Sprintf("node %o nlink %d rdev %d", st.Mode, st.Nlink, st.Rdev), nil
}

// compareTrees walks both trees and compares names, types, modes, link
// counts, hard-link groups and content. It returns the mount's times
// (atime, mtime of every node but directories), for a comparison with the
// same mount after a remount: the native side's differ by when each call
// ran.
func (d *differ) compareTrees() []string {
	var trees, times [2][]string
	links := [2]map[uint64][]string{{}, {}} // inode -> names, for nodes with several
	for i, r := range d.roots {
		err := filepath.WalkDir(r, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(r, p)
			s, err := statString(p)
			if err != nil {
				return err
			}
			if e.Type().IsRegular() {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				s += fmt.Sprintf(" %x", md5sum(b))
			}
			if !e.IsDir() {
				// Times memfs keeps (utimensat sets them; nothing in
				// the sequence reads a file after, or lists a dir).
				var st unix.Stat_t
				if err := unix.Lstat(p, &st); err != nil {
					return err
				}
				times[i] = append(times[i], fmt.Sprintf("%s atime %d.%09d mtime %d.%09d", rel, st.Atim.Sec, st.Atim.Nsec, st.Mtim.Sec, st.Mtim.Nsec))
				if st.Nlink > 1 {
					links[i][st.Ino] = append(links[i][st.Ino], rel)
				}
			}
			trees[i] = append(trees[i], rel+" "+s)
			return nil
		})
		if err != nil {
			d.t.Fatalf("walk %s: %v", r, err)
		}
	}
	if !slices.Equal(trees[0], trees[1]) {
		d.t.Errorf("trees differ:\nmemfs:  %v\nnative: %v", trees[0], trees[1])
	}
	// The same names share a node on both sides.
	var groups [2][]string
	for i := range links {
		for _, names := range links[i] {
			groups[i] = append(groups[i], strings.Join(names, "="))
		}
		slices.Sort(groups[i])
	}
	if !slices.Equal(groups[0], groups[1]) {
		d.t.Errorf("hard-link groups differ:\nmemfs:  %v\nnative: %v", groups[0], groups[1])
	}
	return times[0]
}

func md5sum(b []byte) []byte {
	// A cheap fingerprint is enough: both sides are compared.
	h := uint64(14695981039346656037)
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return bytes.Clone([]byte(strconv.FormatUint(h, 16)))
}
