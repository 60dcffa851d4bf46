package fsnode_test

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestMountRefusesControlNames: a name with a control character (newline,
// ESC, BEL, DEL, C1) cannot be made in the mount by any call that makes a
// name: EINVAL, the errno of an invalid name (not EIO), and nothing reaches
// the store.
func TestMountRefusesControlNames(t *testing.T) {
	st := newDirStore(t, t.TempDir())
	m := mount(t, st, mountConfig{})
	p := func(name string) string { return filepath.Join(m.dir, name) }
	if err := os.WriteFile(p("ok"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"new\nline", "esc\x1b[31m", "bel\a", "del\x7f", "c1\u009b", "tab\t"} {
		wantErrno(t, "create "+strconv.Quote(name), os.WriteFile(p(name), []byte("x"), 0o644), syscall.EINVAL)
		wantErrno(t, "mkdir "+strconv.Quote(name), os.Mkdir(p(name), 0o755), syscall.EINVAL)
		wantErrno(t, "symlink "+strconv.Quote(name), os.Symlink("ok", p(name)), syscall.EINVAL)
		wantErrno(t, "link "+strconv.Quote(name), os.Link(p("ok"), p(name)), syscall.EINVAL)
		wantErrno(t, "rename to "+strconv.Quote(name), os.Rename(p("ok"), p(name)), syscall.EINVAL)
		wantErrno(t, "mkfifo "+strconv.Quote(name), syscall.Mkfifo(p(name), 0o644), syscall.EINVAL)
		_, err := os.Lstat(p(name))
		wantErrno(t, "lstat "+strconv.Quote(name), err, syscall.EINVAL)
	}
	names, err := os.ReadDir(m.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range names {
		if d.Name() != "ok" && d.Name() != ".memfs" {
			t.Errorf("the mount lists %q after refused creates", d.Name())
		}
	}
	if err := m.c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	l, err := st.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 1 || l[0].Key != "ok" {
		t.Errorf("the store holds %v after refused creates, want only ok", l)
	}
}
