// Package errorstore wraps a backend.Store to inject faults, in the spirit of
// pebble's errorfs: before each operation the wrapper asks a function whether
// the operation should fail, and with which error. Tests use it to prove that
// a failing store loses no data.
//
// # Concurrency
//
// A Store is safe for concurrent use when the store it wraps is, and
// SetInject may be called while operations run: each operation reads the
// inject function once, under a mutex, and calls it after releasing it.
// The inject function is therefore called concurrently from every
// goroutine that uses the Store, and must be safe for concurrent use; it
// may call SetInject. It is given the caller's keys slice (Load, Delete,
// DeleteSys) and must neither keep nor change it.
// The package starts no goroutines. Close goes to the wrapped store
// without a check.
package errorstore

import (
	"context"
	"sync"

	"github.com/memfs/memfs/backend"
)

// Op names the Store method being called.
type Op string

// The operations a Store performs.
const (
	OpList   Op = "list"
	OpLoad   Op = "load"
	OpSave   Op = "save"
	OpDelete Op = "delete"
	// System records; keys holds the record names.
	OpSaveSys   Op = "savesys"
	OpLoadSys   Op = "loadsys"
	OpListSys   Op = "listsys"
	OpDeleteSys Op = "deletesys"
)

// InjectFunc decides whether op on keys fails. keys is nil for List. A nil
// result lets the operation through to the wrapped store.
type InjectFunc func(op Op, keys []string) error

// Store is a backend.Store whose operations fail when its InjectFunc says so.
type Store struct {
	backend.Store

	mu     sync.Mutex // guards inject
	inject InjectFunc
}

var (
	_ backend.Store  = (*Store)(nil)
	_ backend.Walker = (*Store)(nil)
)

// Wrap returns s wrapped with fn (nil lets everything through).
func Wrap(s backend.Store, fn InjectFunc) *Store {
	return &Store{Store: s, inject: fn}
}

// SetInject replaces the inject function; nil lets everything through.
func (s *Store) SetInject(fn InjectFunc) {
	s.mu.Lock()
	s.inject = fn
	s.mu.Unlock()
}

func (s *Store) check(op Op, keys []string) error {
	s.mu.Lock()
	fn := s.inject
	s.mu.Unlock()
	if fn == nil {
		return nil
	}
	return fn(op, keys)
}

// List fails if the inject function says so, else lists the wrapped store.
func (s *Store) List(ctx context.Context) ([]backend.Entry, error) {
	if err := s.check(OpList, nil); err != nil {
		return nil, err
	}
	return s.Store.List(ctx)
}

// Walk fails as List does if the inject function says so, else walks the
// wrapped store (backend.Walk: in batches even when it cannot walk).
func (s *Store) Walk(ctx context.Context, fn func([]backend.Entry) error) error {
	if err := s.check(OpList, nil); err != nil {
		return err
	}
	return backend.Walk(ctx, s.Store, fn)
}

// Load fails if the inject function says so, else loads from the wrapped store.
func (s *Store) Load(ctx context.Context, keys ...string) ([]backend.Entry, error) {
	if err := s.check(OpLoad, keys); err != nil {
		return nil, err
	}
	return s.Store.Load(ctx, keys...)
}

// Save fails if the inject function says so, else saves to the wrapped store.
func (s *Store) Save(ctx context.Context, entries ...backend.Entry) error {
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.Key
	}
	if err := s.check(OpSave, keys); err != nil {
		return err
	}
	return s.Store.Save(ctx, entries...)
}

// Delete fails if the inject function says so, else deletes from the wrapped store.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	if err := s.check(OpDelete, keys); err != nil {
		return err
	}
	return s.Store.Delete(ctx, keys...)
}

// SaveSys fails if the inject function says so, else saves the record.
func (s *Store) SaveSys(ctx context.Context, name string, data []byte) error {
	if err := s.check(OpSaveSys, []string{name}); err != nil {
		return err
	}
	return s.Store.SaveSys(ctx, name, data)
}

// LoadSys fails if the inject function says so, else loads the record.
func (s *Store) LoadSys(ctx context.Context, name string) ([]byte, error) {
	if err := s.check(OpLoadSys, []string{name}); err != nil {
		return nil, err
	}
	return s.Store.LoadSys(ctx, name)
}

// ListSys fails if the inject function says so, else lists the records.
func (s *Store) ListSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	if err := s.check(OpListSys, []string{prefix}); err != nil {
		return nil, err
	}
	return s.Store.ListSys(ctx, prefix)
}

// DeleteSys fails if the inject function says so, else deletes the records.
func (s *Store) DeleteSys(ctx context.Context, names ...string) error {
	if err := s.check(OpDeleteSys, names); err != nil {
		return err
	}
	return s.Store.DeleteSys(ctx, names...)
}
