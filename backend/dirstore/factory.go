package dirstore

import (
	"context"
	"path/filepath"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/location"
)

// NewFactory is the dir store's location.Factory: "dir:PATH", the store
// in the directory PATH (OpenReadOnly for a reader), its journal
// (JournalName) and lock (LockPath) in its .memfs-sys.
func NewFactory() location.Factory { return factory{} }

type factory struct{}

func (factory) Scheme() string { return "dir" }

func (factory) Usage() string { return "dir:PATH" }

func (factory) Parse(rest string) (string, error) { return location.LocalPath(rest) }

func (factory) Local() bool { return true }

func (factory) Open(_ context.Context, path string, o location.Options) (backend.SysStore, error) {
	open := Open
	if o.ReadOnly {
		open = OpenReadOnly
	}
	st, err := open(path)
	if err != nil {
		return nil, location.Explain(err, "check that the path is a readable dir store")
	}
	return st, nil
}

func (factory) JournalPath(path, _, _ string) string { return filepath.Join(path, JournalName) }

func (factory) LockPath(path string) string { return LockPath(path) }
