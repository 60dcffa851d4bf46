package paths

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrSymlink is OpenNoFollow's refusal of a name that is (or passes
// through) a symlink.
var ErrSymlink = errors.New("a symlink, not followed: refused")

// OpenNoFollow opens name, relative to root, following no symlink: each
// directory on the way is opened with openat(O_DIRECTORY|O_NOFOLLOW) and
// the last part with openat(flags|O_NOFOLLOW), from the descriptor of its
// parent. A symlink anywhere is refused with a *fs.PathError wrapping
// ErrSymlink; an absolute name or a ".." part with fs.ErrInvalid.
//
// os.Root.OpenFile does not do this: given O_NOFOLLOW, it still follows a
// link that stays inside the root (only O_CREATE|O_EXCL does not).
func OpenNoFollow(root *os.Root, name string, flags int, perm fs.FileMode) (*os.File, error) {
	clean := filepath.Clean(name)
	parts := strings.Split(clean, "/")
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	d, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	dirfd := int(d.Fd())
	for i, p := range parts {
		last := i == len(parts)-1
		fl := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if last {
			fl = flags | unix.O_NOFOLLOW | unix.O_CLOEXEC
		}
		fd, err := openat(dirfd, p, fl, uint32(perm.Perm()))
		if err != nil {
			at := strings.Join(parts[:i+1], "/")
			if err == unix.ELOOP || !last && err == unix.ENOTDIR && isLink(dirfd, p) {
				err = ErrSymlink // O_DIRECTORY|O_NOFOLLOW gives ENOTDIR for a link
			}
			err = &fs.PathError{Op: "open", Path: at, Err: err}
		}
		if i > 0 {
			unix.Close(dirfd)
		}
		if err != nil {
			return nil, err
		}
		if last {
			return os.NewFile(uintptr(fd), clean), nil
		}
		dirfd = fd
	}
	panic("unreachable")
}

// isLink reports whether name in dirfd is a symlink.
func isLink(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

// openat is unix.Openat, retried when a signal interrupts it (a FUSE
// request the kernel gave up on).
func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// ReadNoFollow reads the regular file name under root (OpenNoFollow):
// anything else in its place is refused.
func ReadNoFollow(root *os.Root, name string) ([]byte, error) {
	f, err := OpenNoFollow(root, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("not a regular file")}
	}
	return io.ReadAll(f)
}

// MkdirAllNoFollow makes the directory name under root and its missing
// parents with perm, as mkdir -p, following no symlink on the way: a
// symlink where a directory should be is ErrSymlink, and nothing is made
// through it (os.Root.MkdirAll follows a link that stays in the root).
func MkdirAllNoFollow(root *os.Root, name string, perm fs.FileMode) error {
	clean := filepath.Clean(name)
	if clean == "." {
		return nil
	}
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return &fs.PathError{Op: "mkdir", Path: name, Err: fs.ErrInvalid}
	}
	d, err := root.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	dirfd := int(d.Fd()) // d's: closed by d.Close; the ones opened below by this loop
	parts := strings.Split(clean, "/")
	for i, p := range parts {
		fd, err := mkdirOpen(dirfd, p, perm)
		if i > 0 {
			unix.Close(dirfd)
		}
		if err != nil {
			return &fs.PathError{Op: "mkdir", Path: strings.Join(parts[:i+1], "/"), Err: err}
		}
		dirfd = fd
	}
	unix.Close(dirfd)
	return nil
}

// mkdirOpen makes the directory name in dirfd with perm unless it is
// there, and opens it without following a symlink.
func mkdirOpen(dirfd int, name string, perm fs.FileMode) (int, error) {
	if err := unix.Mkdirat(dirfd, name, uint32(perm.Perm())); err != nil && err != unix.EEXIST {
		return -1, err
	}
	fd, err := openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP || err == unix.ENOTDIR && isLink(dirfd, name) {
		return -1, ErrSymlink
	}
	return fd, err
}
