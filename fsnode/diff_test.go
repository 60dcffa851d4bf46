package fsnode_test

import (
	"bytes"
	"errors"
	"fmt"
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
)

// TestDifferential runs one random sequence of operations on a memfs mount
// and on a native directory, and compares every result: errno, content,
// listings, sizes, types and modes. MEMFS_DIFF_SEED replays a sequence;
// MEMFS_DIFF_OPS sets its length.
func TestDifferential(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("MEMFS_DIFF_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	ops := 3000
	if s := os.Getenv("MEMFS_DIFF_OPS"); s != "" {
		ops, _ = strconv.Atoi(s)
	}
	m := mount(t, newDirStore(t, t.TempDir()), mountConfig{})
	d := &differ{
		t:      t,
		rng:    rand.New(rand.NewPCG(seed, 7)),
		roots:  [2]string{m.dir + "/work", t.TempDir() + "/work"},
		seed:   seed,
		opsRun: 0,
	}
	for _, r := range d.roots {
		if err := os.Mkdir(r, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range ops {
		d.opsRun = i
		d.step()
		if t.Failed() {
			t.Fatalf("differential test failed at op %d; replay with MEMFS_DIFF_SEED=%d MEMFS_DIFF_OPS=%d", i, seed, i+1)
		}
	}
	d.compareTrees()
	if t.Failed() {
		t.Fatalf("trees differ after %d ops; replay with MEMFS_DIFF_SEED=%d", ops, seed)
	}
	if d.succeeded < ops/5 {
		t.Fatalf("only %d of %d operations succeeded: the sequence exercises too little", d.succeeded, ops)
	}
	t.Logf("seed %d: %d operations (%d succeeded), mount and native directory agree", seed, ops, d.succeeded)
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
	switch op := d.rng.IntN(14); op {
	case 0, 1:
		data := d.data()
		d.both("writefile "+p, func(r string) (string, error) {
			return "", os.WriteFile(filepath.Join(r, p), data, 0o644)
		})
	case 2:
		data, off := d.data(), int64(d.rng.IntN(5000))
		d.both(fmt.Sprintf("pwrite %s @%d", p, off), func(r string) (string, error) {
			f, err := os.OpenFile(filepath.Join(r, p), os.O_WRONLY, 0)
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
			f, err := os.OpenFile(filepath.Join(r, p), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
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
		mode := uint32(0o600 + d.rng.IntN(0o200))
		d.both(fmt.Sprintf("chmod %s %o", p, mode), func(r string) (string, error) {
			return "", syscall.Chmod(filepath.Join(r, p), mode)
		})
	case 11:
		d.both("read "+p, func(r string) (string, error) {
			b, err := os.ReadFile(filepath.Join(r, p))
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

func statString(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return fmt.Sprintf("dir %v", fi.Mode()), nil
	}
	return fmt.Sprintf("file %v %d", fi.Mode(), fi.Size()), nil
}

// compareTrees walks both trees and compares names, types, modes and content.
func (d *differ) compareTrees() {
	var trees [2][]string
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
			if !e.IsDir() {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				s += fmt.Sprintf(" %x", md5sum(b))
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
}

func md5sum(b []byte) []byte {
	// A cheap fingerprint is enough: both sides are compared.
	h := uint64(14695981039346656037)
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return bytes.Clone([]byte(strconv.FormatUint(h, 16)))
}
