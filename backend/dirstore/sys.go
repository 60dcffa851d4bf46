package dirstore

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/memfs/memfs/backend"
)

// sysDir holds the system records, one file per record at its name. The
// reserved name keeps it out of List and of the external-change watcher.
const sysDir = ".memfs-sys"

func sysPath(op, name string) (string, error) {
	if err := backend.ValidateKey(name); err != nil {
		return "", fmt.Errorf("dirstore: %s: %w", op, err)
	}
	return sysDir + "/" + name, nil
}

// noLink returns an error wrapping backend.ErrSymlink when p, or a
// directory on its way, is a symbolic link: os.Root would follow one that
// stays inside the root, and a record must never be read from, or written
// into, a key's file or anything else a link names.
func (s *Store) noLink(p string) error {
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		fi, err := s.root.Lstat(p[:i])
		if err != nil {
			return nil // missing: nothing to follow
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("dirstore: %s %w", filepath.Join(s.dir, p[:i]), backend.ErrSymlink)
		}
	}
	return nil
}

// SaveSys writes the record like a one-entry Save: temp file, fsync,
// rename, fsync of the directory.
func (s *Store) SaveSys(ctx context.Context, name string, data []byte) error {
	if err := s.writable("save a system record"); err != nil {
		return err
	}
	p, err := sysPath("save", name)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.noLink(p); err != nil {
		return err
	}
	return s.saveOne(&backend.Entry{Key: p, Info: backend.Info{Mode: 0o600, UID: uint32(os.Geteuid()), GID: uint32(os.Getegid())}, Value: data})
}

// LoadSys reads the record name.
func (s *Store) LoadSys(ctx context.Context, name string) ([]byte, error) {
	p, err := sysPath("load", name)
	if err != nil {
		return nil, err
	}
	if err := s.noLink(p); err != nil {
		return nil, err
	}
	f, err := s.root.Open(p)
	if err != nil {
		if absentErr(err) {
			return nil, backend.NotFound("load", name)
		}
		return nil, &fs.PathError{Op: "load", Path: name, Err: unwrapPath(err)}
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, &fs.PathError{Op: "load", Path: name, Err: unwrapPath(err)}
	}
	return b, nil
}

// ListSys walks the records' directory.
func (s *Store) ListSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	var out []backend.Entry
	err := fs.WalkDir(s.root.FS(), sysDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if absentErr(err) {
				return nil
			}
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != sysDir {
			return nil // temp files
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s %w", filepath.Join(s.dir, p), backend.ErrSymlink)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		name := strings.TrimPrefix(p, sysDir+"/")
		if !strings.HasPrefix(name, prefix) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if absentErr(err) {
				return nil
			}
			return err
		}
		out = append(out, backend.Entry{Key: name, Info: infoOf(statOf(fi.Sys().(*syscall.Stat_t)))})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dirstore: list system records: %w", err)
	}
	slices.SortFunc(out, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// DeleteSys removes records; missing ones are ignored.
func (s *Store) DeleteSys(ctx context.Context, names ...string) error {
	if err := s.writable("delete a system record"); err != nil {
		return err
	}
	for _, n := range names {
		p, err := sysPath("delete", n)
		if err != nil {
			return err
		}
		if err := s.root.Remove(p); err != nil && !absentErr(err) {
			return &fs.PathError{Op: "delete", Path: n, Err: unwrapPath(err)}
		}
	}
	return nil
}
