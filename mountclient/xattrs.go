package mountclient

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/internal/paths"
	"github.com/memfs/memfs/meta"
)

// settable reports whether name is a user.memfs.* attribute a caller may
// set (not one memfs maintains): what a revert restores.
func settable(name string) bool {
	return strings.HasPrefix(name, meta.Prefix) && !meta.ReadOnly(name)
}

// settableXAttrs returns the settable user.memfs.* attributes of the open
// file f.
func settableXAttrs(f *os.File) (map[string][]byte, error) {
	sc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	var ferr error
	err = sc.Control(func(fd uintptr) {
		names, err := listXAttrs(int(fd))
		if err != nil {
			ferr = err
			return
		}
		for _, n := range names {
			if !settable(n) {
				continue
			}
			v, err := getXAttr(int(fd), n)
			if err != nil {
				ferr = err
				return
			}
			out[n] = v
		}
	})
	return out, errors.Join(err, ferr)
}

// SetAttr sets the extended attribute name of key to value through the
// mount, as setfattr does, or removes it when value is nil (an absent one
// is no error); the file is opened without following a link, and fsynced:
// the change is in the store when SetAttr returns.
func (c *Client) SetAttr(key, name string, value []byte) error {
	return c.onFile(key, func(f *os.File) error {
		var err error
		if value == nil {
			if err = unix.Fremovexattr(int(f.Fd()), name); errors.Is(err, unix.ENODATA) {
				err = nil
			}
		} else {
			err = unix.Fsetxattr(int(f.Fd()), name, value, 0)
		}
		if err != nil {
			return &os.PathError{Op: "setxattr " + name, Path: key, Err: err}
		}
		return f.Sync()
	})
}

// onFile runs fn on key opened read-only through the live mount, without
// following a link.
func (c *Client) onFile(key string, fn func(f *os.File) error) error {
	r, err := c.Root()
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := paths.OpenNoFollow(r, key, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return fn(f)
}

// putXAttrs makes key's settable user.memfs.* attributes those of want,
// through the mount (the file opened without following a link).
func (c *Client) putXAttrs(key string, want map[string][]byte) error {
	return c.onFile(key, func(f *os.File) error { return putXAttrs(f, key, want) })
}

// putXAttrs makes the settable user.memfs.* attributes of f (key's) those
// of want.
func putXAttrs(f *os.File, key string, want map[string][]byte) error {
	now, err := settableXAttrs(f)
	if err != nil {
		return err
	}
	if maps.EqualFunc(now, want, bytes.Equal) {
		return nil
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = sc.Control(func(fd uintptr) {
		for n := range now {
			if _, keep := want[n]; !keep {
				if err := unix.Fremovexattr(int(fd), n); err != nil {
					ferr = errors.Join(ferr, &os.PathError{Op: "removexattr " + n, Path: key, Err: err})
				}
			}
		}
		for n, v := range want {
			if old, ok := now[n]; ok && bytes.Equal(old, v) {
				continue
			}
			if err := unix.Fsetxattr(int(fd), n, v, 0); err != nil {
				ferr = errors.Join(ferr, &os.PathError{Op: "setxattr " + n, Path: key, Err: err})
			}
		}
	})
	if err := errors.Join(err, ferr); err != nil {
		return err
	}
	return f.Sync() // the attributes are in the store when Revert returns, as the value is
}

// listXAttrs lists the attribute names of fd.
func listXAttrs(fd int) ([]string, error) {
	n, err := unix.Flistxattr(fd, nil)
	for err == nil {
		buf := make([]byte, n)
		var m int
		if m, err = unix.Flistxattr(fd, buf); err == nil {
			var names []string
			for _, s := range strings.Split(string(buf[:m]), "\x00") {
				if s != "" {
					names = append(names, s)
				}
			}
			return names, nil
		}
		if err == unix.ERANGE {
			n, err = unix.Flistxattr(fd, nil) // grew meanwhile
		}
	}
	return nil, err
}

// getXAttr returns the value of attribute name of fd.
func getXAttr(fd int, name string) ([]byte, error) {
	n, err := unix.Fgetxattr(fd, name, nil)
	for err == nil {
		buf := make([]byte, n)
		var m int
		if m, err = unix.Fgetxattr(fd, name, buf); err == nil {
			return buf[:m], nil
		}
		if err == unix.ERANGE {
			n, err = unix.Fgetxattr(fd, name, nil)
		}
	}
	return nil, err
}
