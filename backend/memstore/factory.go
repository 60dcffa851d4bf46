package memstore

import (
	"context"
	"errors"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/location"
)

// NewFactory is the memory store's location.Factory: "mem:", a new, empty
// Store at every Open, gone when it is closed. It has no journal and no
// lock: a program registers it only where a store may lose everything at
// exit (memfs: a working route, --route scratch/=mem:).
func NewFactory() location.Factory { return factory{} }

type factory struct{}

func (factory) Scheme() string { return "mem" }

func (factory) Usage() string { return "mem:" }

func (factory) Parse(rest string) (string, error) {
	if rest != "" {
		return "", errors.New("a memory store has no path (mem: alone)")
	}
	return "", nil
}

func (factory) Local() bool { return false }

func (factory) Open(context.Context, string, location.Options) (backend.SysStore, error) {
	return New(), nil
}

func (factory) JournalPath(string, string, string) string { return "" }

func (factory) LockPath(string) string { return "" }
