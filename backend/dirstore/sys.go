package dirstore

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

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

// ListSys walks the records' directory from the prefix's directory.
func (s *Store) ListSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	var out []backend.Entry
	err := s.walkSys(ctx, prefix, func(p, name string, d fs.DirEntry) error {
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
	sortEntries(out)
	return out, nil
}

var _ backend.SysScanner = (*Store)(nil)

// ScanSys reads the records under prefix as ListSys walks them
// (backend.SysScanner): one walk of the prefix's directory, each record
// opened from its directory's descriptor (os.Root would resolve every
// segment of its path from the root again: 60 % of the time of a scan).
// Only the directory being read is open: a scan of many directories
// holds one descriptor.
func (s *Store) ScanSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	out := []backend.Entry{}
	var d scanDir
	defer d.close()
	err := s.walkSys(ctx, prefix, func(p, name string, _ fs.DirEntry) error {
		b, err := s.readSys(&d, p)
		if absentErr(err) {
			return nil // removed since the walk read its directory
		}
		if err != nil {
			return &fs.PathError{Op: "scan", Path: name, Err: unwrapPath(err)}
		}
		out = append(out, backend.Entry{Key: name, Info: backend.Info{Size: int64(len(b))}, Value: b})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dirstore: scan system records: %w", err)
	}
	sortEntries(out)
	return out, nil
}

// scanDir is the directory a scan reads records from, open.
type scanDir struct {
	name string
	f    *os.File // nil: none open
}

func (d *scanDir) close() {
	if d.f != nil {
		d.f.Close()
		d.f = nil
	}
}

// readSys reads the file at p (in the root) without following a link,
// from its directory's descriptor, which d keeps open until the next
// file is in another directory.
func (s *Store) readSys(d *scanDir, p string) ([]byte, error) {
	dir, base := path.Split(p)
	if d.f == nil || d.name != dir {
		d.close()
		f, err := s.root.OpenFile(strings.TrimSuffix(dir, "/"), os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return nil, err
		}
		d.name, d.f = dir, f
	}
	fd, err := openat(int(d.f.Fd()), base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	return io.ReadAll(f)
}

// sortEntries sorts by name: a walk gives "a/b" before "a.x".
func sortEntries(es []backend.Entry) {
	slices.SortFunc(es, func(a, b backend.Entry) int { return strings.Compare(a.Key, b.Key) })
}

// walkSys calls fn for each regular file of the records'
// directory whose record name starts with prefix, with its path in the
// root. The walk starts at the directory the prefix names (the part up to
// its last /), so a listing of one key's versions reads that directory,
// not every record of the store. A symlink on the way fails it.
func (s *Store) walkSys(ctx context.Context, prefix string, fn func(p, name string, d fs.DirEntry) error) error {
	top := sysDir
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		if backend.ValidateKey(prefix[:i]) != nil {
			return nil // no record's name starts so
		}
		top = sysDir + "/" + prefix[:i]
	}
	if err := s.noLink(top); err != nil {
		return err
	}
	return fs.WalkDir(s.root.FS(), top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if absentErr(err) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != top {
			return nil // temp files
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s %w", filepath.Join(s.dir, p), backend.ErrSymlink)
		}
		name := strings.TrimPrefix(p, sysDir+"/")
		if d.IsDir() && p != top && !strings.HasPrefix(name+"/", prefix) && !strings.HasPrefix(prefix, name+"/") {
			return fs.SkipDir // no record under it has the prefix
		}
		if !d.Type().IsRegular() || !strings.HasPrefix(name, prefix) {
			return nil
		}
		return fn(p, name, d)
	})
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

var _ backend.SysBatchSaver = (*Store)(nil)

// SaveSysBatch saves the records as one Save of many files does
// (backend.SysBatchSaver): every temp file written and fsynced
// concurrently, then renamed into place, then one fsync per directory
// touched. SaveSys each cost two fsyncs per record, one after another.
// Every name is checked, and refused on a symbolic link on its way or at
// it, before anything is written. A crash before it returns keeps any
// subset of the records, each whole.
func (s *Store) SaveSysBatch(ctx context.Context, recs map[string][]byte) error {
	if err := s.writable("save system records"); err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	info := backend.Info{Mode: 0o600, UID: uint32(os.Geteuid()), GID: uint32(os.Getegid())}
	entries := make([]backend.Entry, 0, len(recs))
	dirs := map[string]bool{}
	for name, data := range recs {
		p, err := sysPath("save", name)
		if err != nil {
			return err
		}
		// Each directory's path once, then the record's name itself.
		if dir := path.Dir(p); !dirs[dir] {
			if err := s.noLink(dir); err != nil {
				return err
			}
			dirs[dir] = true
		}
		if fi, err := s.root.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("dirstore: %s %w", filepath.Join(s.dir, p), backend.ErrSymlink)
		}
		entries = append(entries, backend.Entry{Key: p, Info: info, Value: data})
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.saveBatch(ctx, entries)
}
