package badgerstore

import (
	"context"
	"path/filepath"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/location"
)

// NewFactory is the badger store's location.Factory: "badger:PATH", the
// store in the directory PATH, its journal (JournalName) and lock
// (LockPath) in it.
func NewFactory() location.Factory { return factory{} }

type factory struct{}

func (factory) Scheme() string { return "badger" }

func (factory) Usage() string { return "badger:PATH" }

func (factory) Parse(rest string) (string, error) { return location.LocalPath(rest) }

func (factory) Local() bool { return true }

func (factory) Open(_ context.Context, path string, o location.Options) (backend.SysStore, error) {
	st, err := Open(path, Options{Logger: o.Logger, ReadOnly: o.ReadOnly})
	if err != nil {
		return nil, location.Explain(err, "check that the path is a readable badger store")
	}
	return st, nil
}

func (factory) JournalPath(path, _, _ string) string { return filepath.Join(path, JournalName) }

func (factory) LockPath(path string) string { return LockPath(path) }
