package fsnode_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// An O_TMPFILE file is in no directory and reaches no store until a link
// through /proc/self/fd names it; then it is saved like any file.
func TestMountTmpfileLinkedIntoPlace(t *testing.T) {
	st := newDirStore(t, t.TempDir())
	m := mount(t, st, mountConfig{})
	dir := filepath.Join(m.dir, "memory")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR, 0o640)
	if err != nil {
		t.Fatalf("O_TMPFILE: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte("written before it had a name\n")); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("the unnamed file is listed: %v", ents)
	}
	if err := unix.Fsync(fd); err != nil {
		t.Fatalf("fsync of the unnamed file: %v", err)
	}
	l, _ := st.List(t.Context())
	for _, e := range l {
		if e.Info.Mode.IsRegular() {
			t.Fatalf("the store holds %s before the file has a name", e.Key)
		}
	}
	name := filepath.Join(dir, "named.md")
	if err := unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW); err != nil {
		t.Fatalf("linkat: %v", err)
	}
	var sst unix.Stat_t
	if err := unix.Stat(name, &sst); err != nil || sst.Nlink != 1 || sst.Mode&0o7777 != 0o640 {
		t.Fatalf("the named file: %+v, %v", sst, err)
	}
	if err := unix.Fsync(fd); err != nil {
		t.Fatal(err)
	}
	got, err := st.Load(t.Context(), "memory/named.md")
	if err != nil || string(got[0].Value) != "written before it had a name\n" {
		t.Fatalf("store after the link and fsync: %v, %v", got, err)
	}
}

// fallocate: KEEP_SIZE allocates nothing visible, PUNCH_HOLE and
// ZERO_RANGE write zeros, ZERO_RANGE without KEEP_SIZE extends the file.
func TestMountFallocateModes(t *testing.T) {
	m := mount(t, newDirStore(t, t.TempDir()), mountConfig{})
	p := filepath.Join(m.dir, "f")
	if err := os.WriteFile(p, bytes.Repeat([]byte{'x'}, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	steps := []struct {
		mode      uint32
		off, size int64
		want      []byte
	}{
		{unix.FALLOC_FL_KEEP_SIZE, 50, 200, bytes.Repeat([]byte{'x'}, 100)},
		{unix.FALLOC_FL_PUNCH_HOLE | unix.FALLOC_FL_KEEP_SIZE, 10, 20, append(append(bytes.Repeat([]byte{'x'}, 10), make([]byte, 20)...), bytes.Repeat([]byte{'x'}, 70)...)},
		{unix.FALLOC_FL_ZERO_RANGE, 90, 20, append(append(append(bytes.Repeat([]byte{'x'}, 10), make([]byte, 20)...), bytes.Repeat([]byte{'x'}, 60)...), make([]byte, 20)...)},
		{0, 0, 150, nil},
	}
	for i, s := range steps {
		if err := unix.Fallocate(fd, s.mode, s.off, s.size); err != nil {
			t.Fatalf("step %d: fallocate(%#x, %d, %d): %v", i, s.mode, s.off, s.size, err)
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want := s.want
		if want == nil {
			want = append(steps[i-1].want, make([]byte, 150-len(steps[i-1].want))...)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("step %d: content %q, want %q", i, got, want)
		}
	}
	if err := unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE, 0, 1); err != syscall.EOPNOTSUPP {
		t.Errorf("PUNCH_HOLE without KEEP_SIZE = %v, want EOPNOTSUPP (as fallocate(2) says)", err)
	}
}
