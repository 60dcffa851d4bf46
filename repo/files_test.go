package repo_test

import (
	"context"
	"io/fs"
	"maps"
	"path"
	"strings"
	"sync"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/repo"
)

// memFiles is an in-memory repo.Files: files with their extended
// attributes, and directories.
type memFiles struct {
	mu     sync.Mutex // guards the fields below
	values map[string][]byte
	attrs  map[string]map[string][]byte
	dirs   map[string]fs.FileMode // directory -> its permissions
	modes  map[string]fs.FileMode // file -> its permissions (0644 by WriteFile)
	writes int                    // WriteFile calls
}

var _ repo.Files = (*memFiles)(nil)

func newFiles() *memFiles {
	return &memFiles{values: map[string][]byte{}, attrs: map[string]map[string][]byte{}, dirs: map[string]fs.FileMode{}, modes: map[string]fs.FileMode{}}
}

// put sets key's value, making its directories, as a test's setup.
func (f *memFiles) put(key, value string) {
	f.WriteFile(context.Background(), key, []byte(value), meta.WriterInfo{})
}

func (f *memFiles) get(key string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.values[key]
	return string(v), ok
}

func (f *memFiles) remove(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.values, key)
	delete(f.attrs, key)
}

func (f *memFiles) ReadFile(_ context.Context, key string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.values[key]
	if !ok {
		return nil, &fs.PathError{Op: "read", Path: key, Err: fs.ErrNotExist}
	}
	return append([]byte(nil), v...), nil
}

func (f *memFiles) WriteFile(_ context.Context, key string, value []byte, _ meta.WriterInfo) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mkdirAllLocked(path.Dir(key), 0o755)
	f.values[key] = append([]byte(nil), value...)
	if _, ok := f.modes[key]; !ok {
		f.modes[key] = 0o644
	}
	f.writes++
	return nil
}

func (f *memFiles) CreateFile(_ context.Context, key string, value []byte, mode fs.FileMode, _ meta.WriterInfo) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.values[key]; ok {
		return &fs.PathError{Op: "create", Path: key, Err: fs.ErrExist}
	}
	if _, ok := f.dirs[path.Dir(key)]; !ok {
		return &fs.PathError{Op: "create", Path: key, Err: fs.ErrNotExist}
	}
	f.values[key], f.modes[key] = append([]byte(nil), value...), mode.Perm()
	return nil
}

func (f *memFiles) List(prefix string) ([]backend.Entry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []backend.Entry
	for k, v := range f.values {
		if strings.HasPrefix(k, prefix) {
			out = append(out, backend.Entry{Key: k, Info: backend.Info{Size: int64(len(v)), Mode: f.modes[k], XAttrs: maps.Clone(f.attrs[k])}})
		}
	}
	for d, mode := range f.dirs {
		if strings.HasPrefix(d, prefix) {
			out = append(out, backend.Entry{Key: d, Info: backend.Info{Mode: fs.ModeDir | mode}})
		}
	}
	return out, nil
}

func (f *memFiles) SetAttr(_ context.Context, key, name string, value []byte, _ meta.WriterInfo) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.values[key]; !ok {
		return &fs.PathError{Op: "setxattr", Path: key, Err: fs.ErrNotExist}
	}
	if err := meta.Validate(name, value); err != nil {
		return err
	}
	if f.attrs[key] == nil {
		f.attrs[key] = map[string][]byte{}
	}
	f.attrs[key][name] = append([]byte(nil), value...)
	return nil
}

func (f *memFiles) MkdirAll(dir string, mode fs.FileMode) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mkdirAllLocked(dir, mode)
	return nil
}

func (f *memFiles) mkdirAllLocked(dir string, mode fs.FileMode) {
	for ; dir != "." && dir != "" && dir != "/"; dir = path.Dir(dir) {
		if _, ok := f.dirs[dir]; !ok {
			f.dirs[dir] = mode.Perm()
		}
	}
}

// appendFiles is memFiles with an atomic append.
type appendFiles struct {
	*memFiles
	appends int
}

var _ repo.Appender = (*appendFiles)(nil)

func (f *appendFiles) AppendFile(_ context.Context, key string, data []byte, _ meta.WriterInfo) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mkdirAllLocked(path.Dir(key), 0o755)
	f.values[key] = append(f.values[key], data...)
	f.appends++
	return nil
}
