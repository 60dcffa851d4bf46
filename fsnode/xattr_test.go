package fsnode_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/meta"
)

// xattrCall is one system call, run the same way on memfs and on a native
// directory; its result is printed as text to compare.
type xattrCall struct {
	desc string
	fn   func(p string) string
}

func res(n int, err error, b []byte) string {
	if err != nil {
		return fmt.Sprintf("err %v", err)
	}
	if b != nil {
		return fmt.Sprintf("%d %q", n, b[:n])
	}
	return fmt.Sprint(n)
}

func set(name, v string, flags int) xattrCall {
	return xattrCall{fmt.Sprintf("setxattr %s=%q flags %d", name, v, flags), func(p string) string {
		return res(0, unix.Setxattr(p, name, []byte(v), flags), nil)
	}}
}

func get(name string, size int) xattrCall {
	return xattrCall{fmt.Sprintf("getxattr %s size %d", name, size), func(p string) string {
		buf := make([]byte, size)
		n, err := unix.Getxattr(p, name, buf)
		if size == 0 {
			return res(n, err, nil)
		}
		return res(n, err, buf)
	}}
}

func list(size int) xattrCall {
	return xattrCall{fmt.Sprintf("listxattr size %d", size), func(p string) string {
		buf := make([]byte, size)
		n, err := unix.Listxattr(p, buf)
		if size == 0 && err == nil {
			// memfs lists its own attributes too: the probe must give
			// the size of the whole list.
			full, _ := unix.Listxattr(p, make([]byte, 4096))
			return fmt.Sprintf("probe = size of the list: %v", n == full)
		}
		if err != nil {
			return res(n, err, nil)
		}
		// The order of names is the filesystem's; compare them sorted.
		names := strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00")
		var user []string
		for _, nm := range names {
			if strings.HasPrefix(nm, "user.") && !strings.HasPrefix(nm, meta.Prefix) {
				user = append(user, nm)
			}
		}
		return fmt.Sprint(user)
	}}
}

func remove(name string) xattrCall {
	return xattrCall{"removexattr " + name, func(p string) string { return res(0, unix.Removexattr(p, name), nil) }}
}

// The same sequence of xattr calls on a memfs file and on a file in a
// native directory gives the same results: the size probe, ERANGE,
// XATTR_CREATE and XATTR_REPLACE, ENODATA, list and remove. (memfs's own
// user.memfs.created and .writer are left out of the listing compared.)
func TestXAttrsMatchNative(t *testing.T) {
	m := mount(t, newDirStore(t, t.TempDir()), mountConfig{})
	native := t.TempDir()
	calls := []xattrCall{
		get("user.a", 64),
		get("user.a", 0),
		list(0),
		set("user.a", "alpha", 0),
		get("user.a", 0),
		get("user.a", 64),
		get("user.a", 2), // ERANGE
		set("user.a", "x", unix.XATTR_CREATE),
		set("user.b", "x", unix.XATTR_REPLACE),
		set("user.a", "again", unix.XATTR_REPLACE),
		set("user.b", "", unix.XATTR_CREATE),
		get("user.b", 8),
		set("user.c", strings.Repeat("v", 1000), 0),
		get("user.c", 2000),
		list(256),
		list(3), // ERANGE
		remove("user.a"),
		remove("user.a"),
		get("user.a", 8),
		list(256),
		set("user."+strings.Repeat("n", 251), "max name", 0),
		get("user."+strings.Repeat("n", 251), 16),
		set("user."+strings.Repeat("n", 252), "name too long", 0),
		get("user."+strings.Repeat("n", 252), 16),
	}
	for _, sub := range []string{"f.md"} {
		mp, np := filepath.Join(m.dir, sub), filepath.Join(native, sub)
		for _, p := range []string{mp, np} {
			if err := os.WriteFile(p, []byte("body"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range calls {
			got, want := c.fn(mp), c.fn(np)
			if got != want {
				t.Errorf("%s: memfs %s, native %s", c.desc, got, want)
			}
		}
	}
	// A directory keeps attributes as a file does.
	d := filepath.Join(m.dir, "memory")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Getxattr(d, "user.x", nil); err != syscall.ENODATA {
		t.Errorf("getxattr of a missing attribute on a directory = %v, want ENODATA", err)
	}
	if err := unix.Setxattr(d, "user.x", []byte("v"), 0); err != nil {
		t.Errorf("setxattr on a directory = %v", err)
	}
	buf := make([]byte, 16)
	if n, err := unix.Getxattr(d, "user.x", buf); err != nil || string(buf[:n]) != "v" {
		t.Errorf("getxattr on a directory = %q, %v", buf[:n], err)
	}
	if err := unix.Removexattr(d, "user.x"); err != nil {
		t.Errorf("removexattr on a directory = %v", err)
	}
}

// memfs's attributes: validated on write (EINVAL), the maintained ones
// read-only (EPERM), other namespaces unsupported, and created/writer set
// by memfs with this process as the writer.
func TestMemfsXAttrs(t *testing.T) {
	m := mount(t, newDirStore(t, t.TempDir()), mountConfig{fopts: fsnode.Options{Agent: "planner"}})
	p := filepath.Join(m.dir, "note.md")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, v string
		want    error
	}{
		{meta.Tags, "a, b ,c", nil},
		{meta.Tags, "a,,b", syscall.EINVAL},
		{meta.Importance, "0.8", nil},
		{meta.Importance, "1.01", syscall.EINVAL},
		{meta.Importance, "high", syscall.EINVAL},
		{meta.Source, "agent", nil},
		{meta.Source, "robot", syscall.EINVAL},
		{meta.Agent, "planner-1", nil},
		{meta.Agent, "bad agent", syscall.EINVAL},
		{meta.Prefix + "unknown", "x", syscall.EINVAL},
		{meta.Created, "2020-01-01T00:00:00Z", syscall.EPERM},
		{meta.Writer, "{}", syscall.EPERM},
		{"trusted.x", "v", syscall.EOPNOTSUPP},
		{"security.x", "v", syscall.EOPNOTSUPP},
	} {
		if err := unix.Setxattr(p, c.name, []byte(c.v), 0); err != c.want && !(err == nil && c.want == nil) {
			t.Errorf("setxattr %s=%q = %v, want %v", c.name, c.v, err, c.want)
		}
	}
	if err := unix.Removexattr(p, meta.Created); err != syscall.EPERM {
		t.Errorf("removexattr created = %v, want EPERM", err)
	}
	buf := make([]byte, 256)
	n, err := unix.Getxattr(p, meta.Writer, buf)
	if err != nil {
		t.Fatal(err)
	}
	w, err := meta.DecodeWriter(buf[:n])
	self, _ := os.ReadFile("/proc/self/comm")
	if err != nil || w.PID != uint32(os.Getpid()) || w.UID != uint32(os.Getuid()) || w.Comm != strings.TrimSpace(string(self)) || w.Agent != "planner" {
		t.Errorf("writer = %+v, %v; want pid %d, comm %q, agent planner", w, err, os.Getpid(), self)
	}
	if _, err := unix.Getxattr(p, meta.Created, buf); err != nil {
		t.Errorf("getxattr created: %v", err)
	}
	if _, err := unix.Getxattr(p, "security.selinux", buf); err != syscall.ENODATA {
		t.Errorf("getxattr security.selinux = %v, want ENODATA", err)
	}
}

// Attributes survive a flush, an unmount and a remount, on both stores.
func TestXAttrsPersist(t *testing.T) {
	for _, kind := range []string{"dir", "badger"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			open := func() backend.Store {
				if kind == "dir" {
					return newDirStore(t, dir)
				}
				st, err := badgerstore.Open(dir, badgerstore.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				return st
			}
			st := open()
			t.Run("write", func(t *testing.T) {
				m := mount(t, st, mountConfig{})
				p := filepath.Join(m.dir, "memory/a.md")
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte("alpha"), 0o644); err != nil {
					t.Fatal(err)
				}
				for name, v := range map[string]string{meta.Tags: "x,y", meta.Importance: "0.5", "user.free": "form"} {
					if err := unix.Setxattr(p, name, []byte(v), 0); err != nil {
						t.Fatal(err)
					}
				}
				if err := m.c.Flush(t.Context()); err != nil {
					t.Fatal(err)
				}
			})
			st.Close()
			m := mount(t, open(), mountConfig{})
			p := filepath.Join(m.dir, "memory/a.md")
			for name, want := range map[string]string{meta.Tags: "x,y", meta.Importance: "0.5", "user.free": "form"} {
				buf := make([]byte, 64)
				n, err := unix.Getxattr(p, name, buf)
				if err != nil || string(buf[:n]) != want {
					t.Errorf("after remount %s = %q, %v; want %q", name, buf[:n], err, want)
				}
			}
			if n, err := unix.Getxattr(p, meta.Writer, make([]byte, 256)); err != nil || n == 0 {
				t.Errorf("after remount writer: %d, %v", n, err)
			}
		})
	}
}
