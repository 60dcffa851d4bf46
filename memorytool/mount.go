package memorytool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/paths"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/mountclient"
)

// Mount is the Files of a running mount: every command is made through
// the mount's files as this process's user, so the kernel and the mount
// check it as they check any program's (a file this user may not write
// is refused), and the mount's session stays the one writer. Each change
// is fsynced, so it is in the store when the command answers. The events
// of the changes name this process as their writer (as the mount names
// any program), not the writer the command was given.
func Mount(c *mountclient.Client) Files { return mountFiles{c} }

type mountFiles struct{ c *mountclient.Client }

// root runs fn on the mount's root, checked live (mountclient.Client.Root).
func (m mountFiles) root(fn func(r *os.Root) error) error {
	r, err := m.c.Root()
	if err != nil {
		return err
	}
	defer r.Close()
	return fn(r)
}

func (m mountFiles) ReadFile(_ context.Context, key string) ([]byte, error) {
	return m.c.Cat(key)
}

func (m mountFiles) WriteFile(_ context.Context, key string, value []byte, _ meta.WriterInfo) error {
	return m.root(func(r *os.Root) error {
		if dir := path.Dir(key); dir != "." {
			if err := paths.MkdirAllNoFollow(r, dir, 0o755); err != nil {
				return err
			}
		}
		// Written in place (the file keeps its mode, owner and tags); when
		// the write fails (past the mount's --max-file-size), the old value
		// is written back, as mountclient.Client.Put does.
		// Neither open follows a symlink at the key (paths.OpenNoFollow).
		old, oldErr := paths.ReadNoFollow(r, key)
		f, err := paths.OpenNoFollow(r, key, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return refusedName(r, key, err)
		}
		_, err = f.Write(value)
		if err != nil && oldErr == nil {
			_, werr := f.WriteAt(old, 0)
			err = errors.Join(err, werr, f.Truncate(int64(len(old))))
		}
		if err == nil {
			err = f.Sync() // flushes the mount's session: the change is in the store
		}
		return errors.Join(err, f.Close())
	})
}

// refusedName tells the mount's refusal of a name holding a secret
// (EACCES where this user may create files) from a permission denied.
func refusedName(r *os.Root, key string, err error) error {
	if !errors.Is(err, fs.ErrPermission) {
		return err
	}
	if _, serr := r.Lstat(key); serr == nil {
		return err // the file is there: its mode refused this user
	}
	d, derr := r.Open(path.Dir(key))
	if derr != nil {
		return err
	}
	defer d.Close()
	if unix.Faccessat(int(d.Fd()), ".", unix.W_OK|unix.X_OK, 0) == nil {
		return fmt.Errorf("%s: %w", key, memfs.ErrSecretName)
	}
	return err
}

// SetAttr sets an extended attribute through the mount (setfattr).
func (m mountFiles) SetAttr(_ context.Context, key, name string, value []byte, _ meta.WriterInfo) error {
	return m.c.SetAttr(key, name, value)
}

// AppendFile appends data through the mount (O_APPEND: whole, never
// interleaved with another appender's).
func (m mountFiles) AppendFile(_ context.Context, key string, data []byte, _ meta.WriterInfo) error {
	return m.c.Append(key, data)
}

// MkdirAll makes dir and its missing parents with mode through the mount
// (mkdir -p), following no symlink on the way.
func (m mountFiles) MkdirAll(dir string, mode fs.FileMode) error {
	return m.root(func(r *os.Root) error { return paths.MkdirAllNoFollow(r, dir, mode) })
}

// CreateFile makes key with value and mode through the mount, as
// O_CREAT|O_EXCL (fs.ErrExist when it is there), following no symlink.
func (m mountFiles) CreateFile(_ context.Context, key string, value []byte, mode fs.FileMode, _ meta.WriterInfo) error {
	return m.root(func(r *os.Root) error {
		f, err := paths.OpenNoFollow(r, key, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return err
		}
		_, err = f.Write(value)
		return errors.Join(err, f.Close())
	})
}

func (m mountFiles) Exists(key string) bool {
	return m.root(func(r *os.Root) error { _, err := r.Lstat(key); return err }) == nil
}

func (m mountFiles) IsDir(key string) bool {
	return m.root(func(r *os.Root) error {
		fi, err := r.Lstat(key)
		if err == nil && !fi.IsDir() {
			return fs.ErrInvalid
		}
		return err
	}) == nil
}

// List lists what this user may see under prefix: what it may not read
// is left out.
func (m mountFiles) List(prefix string) ([]backend.Entry, error) {
	return m.c.Entries(prefix, func(string, error) {})
}

// Rename renames with RENAME_NOREPLACE, making newKey's directories, and
// fsyncs the mount's root (which flushes its session).
func (m mountFiles) Rename(_ context.Context, oldKey, newKey string, _ meta.WriterInfo) error {
	return m.root(func(r *os.Root) error {
		if dir := path.Dir(newKey); dir != "." {
			if err := paths.MkdirAllNoFollow(r, dir, 0o755); err != nil {
				return err
			}
		}
		od, err := r.Open(path.Dir(oldKey))
		if err != nil {
			return err
		}
		defer od.Close()
		nd, err := r.Open(path.Dir(newKey))
		if err != nil {
			return err
		}
		defer nd.Close()
		if err := unix.Renameat2(int(od.Fd()), path.Base(oldKey), int(nd.Fd()), path.Base(newKey), unix.RENAME_NOREPLACE); err != nil {
			return &fs.PathError{Op: "rename", Path: oldKey, Err: err}
		}
		d, err := r.Open(".")
		if err != nil {
			return err
		}
		defer d.Close()
		return d.Sync()
	})
}

func (m mountFiles) RemoveAll(_ context.Context, key string, _ meta.WriterInfo) error {
	return m.c.Remove([]string{key}, true, nil)
}
