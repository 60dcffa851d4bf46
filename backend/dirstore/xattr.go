package dirstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

// Extended attributes of an entry are the file's own "user." attributes, so
// that getfattr, rsync -X and cp --preserve=xattr see and carry them. They
// are set on the temp file before its rename, which makes them part of the
// atomic replace. Reads go through a file descriptor (Load's open file) or
// through /proc/self/fd/DIRFD/NAME, a single name under a directory opened
// inside the root and never following a final symlink, so that no path
// outside the root can be read.

// errNoXAttrs explains a store on a filesystem without user attributes.
var errNoXAttrs = errors.New("the store's filesystem does not support user extended attributes (mount it with user_xattr, or use the badger store)")

// setXAttrs writes attrs to the open file f.
func setXAttrs(f *os.File, attrs map[string][]byte) error {
	if len(attrs) == 0 {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	cerr := rc.Control(func(fd uintptr) {
		for name, v := range attrs {
			err := ignoringEINTR(func() error { return unix.Fsetxattr(int(fd), name, v, 0) })
			if err != nil {
				if errors.Is(err, unix.ENOTSUP) {
					err = errNoXAttrs
				}
				serr = fmt.Errorf("setxattr %s: %w", name, err)
				return
			}
		}
	})
	if cerr != nil {
		return cerr
	}
	return serr
}

// fileXAttrs reads the user attributes of the open file f.
func fileXAttrs(f *os.File) (map[string][]byte, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var out map[string][]byte
	var rerr error
	cerr := rc.Control(func(fd uintptr) {
		out, rerr = readXAttrs(
			func(buf []byte) (int, error) { return unix.Flistxattr(int(fd), buf) },
			func(name string, buf []byte) (int, error) { return unix.Fgetxattr(int(fd), name, buf) })
	})
	if cerr != nil {
		return nil, cerr
	}
	return out, rerr
}

// pathXAttrs reads the user attributes of name in the directory dirfd,
// without following name if it is a symlink; with name "", of the node
// that the descriptor dirfd (O_PATH is enough) pins. Linux keeps user.*
// attributes only on regular files and directories, so callers ask for no
// others.
func pathXAttrs(dirfd int, name string) (map[string][]byte, error) {
	p := "/proc/self/fd/" + strconv.Itoa(dirfd)
	if name == "" {
		// The magic link leads to the pinned node itself.
		return readXAttrs(
			func(buf []byte) (int, error) { return unix.Listxattr(p, buf) },
			func(n string, buf []byte) (int, error) { return unix.Getxattr(p, n, buf) })
	}
	p += "/" + name
	return readXAttrs(
		func(buf []byte) (int, error) { return unix.Llistxattr(p, buf) },
		func(n string, buf []byte) (int, error) { return unix.Lgetxattr(p, n, buf) })
}

// readXAttrs lists and reads the "user." attributes through list and get,
// which behave as listxattr(2) and getxattr(2). A filesystem without
// attributes has none. Attributes that change while they are read are read
// again.
func readXAttrs(list func([]byte) (int, error), get func(string, []byte) (int, error)) (map[string][]byte, error) {
	// One call with a buffer that fits what memfs writes (names and values
	// of one file are at most backend.MaxXAttrSize bytes); the size probe
	// only when another program wrote more.
	buf := make([]byte, 1024)
	n, err := list(buf)
	for range 8 {
		if !errors.Is(err, unix.ERANGE) {
			break
		}
		if n, err = list(nil); err != nil {
			break
		}
		buf = make([]byte, n)
		n, err = list(buf)
	}
	if errors.Is(err, unix.ENOTSUP) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listxattr: %w", err)
	}
	if n == 0 {
		return nil, nil
	}
	var out map[string][]byte
	var vbuf []byte
	for name := range strings.SplitSeq(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		if !strings.HasPrefix(name, backend.XAttrPrefix) {
			continue
		}
		if vbuf == nil {
			vbuf = make([]byte, backend.MaxXAttrSize)
		}
		v, err := getXAttr(get, name, vbuf)
		if errors.Is(err, unix.ENODATA) {
			continue // removed between the calls
		}
		if err != nil {
			return nil, fmt.Errorf("getxattr %s: %w", name, err)
		}
		if out == nil {
			out = make(map[string][]byte)
		}
		out[name] = v
	}
	return out, nil
}

// getXAttr reads one attribute, first into buf, then at the size the
// system reports; the result is a copy.
func getXAttr(get func(string, []byte) (int, error), name string, buf []byte) ([]byte, error) {
	n, err := get(name, buf)
	if err == nil {
		return bytes.Clone(buf[:n]), nil
	}
	for range 8 {
		if !errors.Is(err, unix.ERANGE) {
			return nil, err
		}
		if n, err = get(name, nil); err != nil {
			return nil, err
		}
		big := make([]byte, n)
		if n, err = get(name, big); err == nil {
			return big[:n], nil
		}
	}
	return nil, syscall.EAGAIN
}

// replaceXAttrs makes attrs the user attributes of the open node fd (a
// directory saved in place): the names not in attrs are removed.
func replaceXAttrs(fd int, attrs map[string][]byte) error {
	old, err := readXAttrs(
		func(buf []byte) (int, error) { return unix.Flistxattr(fd, buf) },
		func(name string, buf []byte) (int, error) { return unix.Fgetxattr(fd, name, buf) })
	if err != nil {
		return err
	}
	for name, v := range attrs {
		if ov, ok := old[name]; ok && bytes.Equal(ov, v) {
			continue
		}
		err := ignoringEINTR(func() error { return unix.Fsetxattr(fd, name, v, 0) })
		if errors.Is(err, unix.ENOTSUP) {
			err = errNoXAttrs
		}
		if err != nil {
			return fmt.Errorf("setxattr %s: %w", name, err)
		}
	}
	for name := range old {
		if _, ok := attrs[name]; ok {
			continue
		}
		if err := ignoringEINTR(func() error { return unix.Fremovexattr(fd, name) }); err != nil && err != unix.ENODATA {
			return fmt.Errorf("removexattr %s: %w", name, err)
		}
	}
	return nil
}
