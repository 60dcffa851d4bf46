// Package testtree makes, for tests in any package, a directory tree
// with every node type memfs carries (special bits, hard links across
// directories, an empty directory, relative and dangling symlinks, fifos,
// sockets, devices as root, a transient editor file, user attributes,
// times set apart), and describes a tree so that two can be compared.
//
// # Concurrency
//
// It keeps no state; its functions are safe for concurrent use on
// different directories.
package testtree

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// Swap is the transient editor file Make writes (an import leaves it out).
const Swap = "a/.x.swp"

// Make makes the tree under dir. As root it adds a char and a block
// device and owners other than root's.
func Make(t testing.TB, dir string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	p := func(rel string) string { return filepath.Join(dir, rel) }
	for _, d := range []string{"a/empty", "b", "sticky", ".git/objects"} {
		must(os.MkdirAll(p(d), 0o755))
	}
	must(os.WriteFile(p("a/file.md"), []byte("a note\n"), 0o644))
	must(os.WriteFile(p("a/suid"), []byte("#!/bin/sh\n"), 0o755))
	must(os.WriteFile(p(".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	must(os.WriteFile(p(Swap), []byte("swap"), 0o600))
	must(os.Link(p("a/file.md"), p("b/hard.md")))
	must(os.Link(p("a/file.md"), p("third.md")))
	must(os.Symlink("../a/file.md", p("b/rel")))
	must(os.Symlink("/no/such/target", p("dangling")))
	must(unix.Mkfifo(p("a/fifo"), 0o640))
	must(unix.Mknod(p("a/sock"), unix.S_IFSOCK|0o600, 0))
	if os.Geteuid() == 0 {
		must(unix.Mknod(p("a/null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))))
		must(unix.Mknod(p("a/loop"), unix.S_IFBLK|0o660, int(unix.Mkdev(7, 200))))
		must(os.Lchown(p("a/file.md"), 1234, 5678))
		must(os.Lchown(p("b/rel"), 4321, 8765))
		must(os.Lchown(p("b"), 1000, 1000))
	}
	must(unix.Setxattr(p("a/file.md"), "user.test", []byte("kept"), 0))
	must(unix.Setxattr(p("b"), "user.dir", []byte("kept too"), 0))
	must(os.Chmod(p("a/suid"), 0o755|fs.ModeSetuid|fs.ModeSetgid))
	must(os.Chmod(p("sticky"), 0o777|fs.ModeSticky))
	must(os.Chmod(p("b"), 0o750|fs.ModeSetgid))
	must(os.Chmod(p("a/empty"), 0o700))
	// Times last, children before parents. Under relatime a read moves
	// an atime that is not after both mtime and ctime (ctime is now, set
	// by utimes itself): an atime in the future survives the reads of the
	// walks (directories, readlink, file contents).
	base := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	var rels []string
	filepath.WalkDir(dir, func(q string, d fs.DirEntry, err error) error {
		rels = append(rels, q)
		return err
	})
	for i, q := range slices.Backward(rels) {
		m := base.Add(time.Duration(i)*time.Minute + time.Duration(i)*1234567)
		ts := []unix.Timespec{unix.NsecToTimespec(m.Add(3 * time.Hour).UnixNano()), unix.NsecToTimespec(m.UnixNano())}
		must(unix.UtimesNanoAt(unix.AT_FDCWD, q, ts, unix.AT_SYMLINK_NOFOLLOW))
	}
}

// Describe lists what a tree holds, one line a name: type and mode,
// owner, size or device, symlink target, the first name of a hard-linked
// inode, mtime and atime, and user attributes other than memfs's own. It
// lstats each name before reading a directory, so that the walk moves no
// time it reports.
func Describe(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	first := map[uint64]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		m := backend.FileMode(st.Mode)
		line := fmt.Sprintf("%s %s %d:%d", rel, m, st.Uid, st.Gid)
		switch m.Type() {
		case 0:
			line += fmt.Sprintf(" size=%d", st.Size)
		case fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice:
			line += fmt.Sprintf(" dev=%d,%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
		case fs.ModeSymlink:
			target, _ := os.Readlink(p)
			line += " -> " + target
		}
		if !m.IsDir() && st.Nlink > 1 {
			if f, ok := first[st.Ino]; ok {
				line += " link=" + f
			} else {
				first[st.Ino] = rel
				line += fmt.Sprintf(" nlink=%d", st.Nlink)
			}
		}
		line += fmt.Sprintf(" mtime=%d atime=%d", st.Mtim.Nano(), st.Atim.Nano())
		x, err := xattrs(p)
		if err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if !strings.HasPrefix(k, meta.Prefix) {
				line += fmt.Sprintf(" %s=%q", k, x[k])
			}
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// xattrs reads the user.* attributes of p, not following a symlink.
func xattrs(p string) (map[string][]byte, error) {
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(p, buf)
	if errors.Is(err, unix.ENOTSUP) || err == nil && n == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listxattr %s: %w", p, err)
	}
	x := map[string][]byte{}
	for name := range strings.SplitSeq(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if !strings.HasPrefix(name, "user.") {
			continue
		}
		v := make([]byte, 4096)
		m, err := unix.Lgetxattr(p, name, v)
		if err != nil {
			return nil, fmt.Errorf("getxattr %s %s: %w", p, name, err)
		}
		x[name] = v[:m]
	}
	return x, nil
}

// LineDiff shows the lines only one of got and want has.
func LineDiff(got, want []string) string {
	var b strings.Builder
	for _, l := range want {
		if !slices.Contains(got, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}
