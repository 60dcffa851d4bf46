// Package errorstore wraps a backend.Store to inject faults, in the spirit of
// pebble's errorfs: before each operation the wrapper asks a function whether
// the operation should fail, and with which error. Tests use it to prove that
// a failing store loses no data.
//
// # Capabilities
//
// The wrapper has the optional capabilities of the store it wraps, and only
// those, as io/fs wrappers do: Wrap picks the type it returns from what the
// wrapped store implements (backend.SysStore, backend.SysSwapper,
// backend.Batcher, backend.Versioned, backend.ConditionalDeleter,
// backend.Presence, backend.Watcher, backend.Collector,
// backend.AsideMover; and backend.SysScanner with SysStore, its ScanSys
// falling back to ListSys and LoadSys on a store without one), so that a
// caller's type assertion finds on the wrapper what it would find on the
// store, and a conformance run checks exactly what the store claims. The
// types, one per combination, are generated (gen.go, wrap_gen.go). Every capability method asks the inject
// function first, as the core methods do (see Op). Walk is always there: it
// falls back to List for a store that cannot walk (backend.Walk).
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
	"maps"
	"slices"
	"sync"

	"github.com/memfs/memfs/backend"
)

// Op names the Store method being called.
type Op string

// The operations a Store performs.
const (
	OpList Op = "list" // List and Walk
	OpLoad Op = "load"
	// OpSave is Save, and SaveIf (backend.Versioned): a save that states
	// the versions it replaces is still a save.
	OpSave Op = "save"
	// OpDelete is Delete, and DeleteIf (backend.ConditionalDeleter).
	OpDelete Op = "delete"
	// OpApply is Apply (backend.Batcher); keys holds the saved keys, then
	// the deleted ones.
	OpApply Op = "apply"
	// System records (backend.SysStore); keys holds the record names
	// (for OpListSys, also ScanSys's: the prefix).
	OpSaveSys   Op = "savesys"
	OpLoadSys   Op = "loadsys"
	OpListSys   Op = "listsys"
	OpDeleteSys Op = "deletesys"
	// OpSwapSys is SwapSys (backend.SysSwapper); keys holds the guard,
	// the names put (sorted), then the names deleted.
	OpSwapSys Op = "swapsys"
	// Presence (backend.Presence); keys is nil.
	OpRegister Op = "register"
	OpPeers    Op = "peers"
	// OpWatch is Watch (backend.Watcher); keys is nil.
	OpWatch Op = "watch"
	// Collection (backend.Collector); keys is nil.
	OpCollect Op = "collect"
	OpLead    Op = "lead"
	// OpMoveAside is MoveAside (backend.AsideMover); keys holds the key.
	OpMoveAside Op = "moveaside"
)

// InjectFunc decides whether op on keys fails. keys is nil for List. A nil
// result lets the operation through to the wrapped store.
type InjectFunc func(op Op, keys []string) error

// Store is what Wrap returns: a backend.Store (and Walker) whose operations
// fail when its InjectFunc says so. Its dynamic type also implements each
// capability of the wrapped store (see the package documentation).
type Store interface {
	backend.Store
	backend.Walker
	backend.KeyLimiter
	// SetInject replaces the inject function; nil lets everything
	// through.
	SetInject(fn InjectFunc)
}

// wrapper holds the wrapped store and the inject function, and carries the
// core methods. The capability methods live on sysOps, swapOps, batchOps,
// versionOps, presenceOps, condDeleteOps, watchOps, collectOps and
// asideOps, which Wrap embeds beside it as the wrapped store allows.
type wrapper struct {
	backend.Store

	mu     sync.Mutex // guards inject
	inject InjectFunc
}

var (
	_ Store              = (*wrapper)(nil)
	_ backend.SysScanner = struct {
		*wrapper
		sysOps
	}{}
	_ backend.SysSwapper = struct {
		*wrapper
		sysOps
		swapOps
	}{}
	_ backend.Batcher            = batchOps{}
	_ backend.Versioned          = versionOps{}
	_ backend.Presence           = presenceOps{}
	_ backend.ConditionalDeleter = condDeleteOps{}
	_ backend.Watcher            = watchOps{}
	_ backend.Collector          = collectOps{}
	_ backend.AsideMover         = asideOps{}
)

// caps is a set of the optional capabilities Wrap carries over, one bit
// each.
type caps uint16

const (
	capSys caps = 1 << iota
	capSwap
	capBatch
	capVersion
	capPresence
	capCondDelete
	capWatch
	capCollect
	capAside
)

// capsOf returns the capabilities of s.
func capsOf(s backend.Store) caps {
	var c caps
	if _, ok := s.(backend.SysStore); ok {
		c |= capSys
	}
	if _, ok := s.(backend.SysSwapper); ok {
		c |= capSwap
	}
	if _, ok := s.(backend.Batcher); ok {
		c |= capBatch
	}
	if _, ok := s.(backend.Versioned); ok {
		c |= capVersion
	}
	if _, ok := s.(backend.Presence); ok {
		c |= capPresence
	}
	if _, ok := s.(backend.ConditionalDeleter); ok {
		c |= capCondDelete
	}
	if _, ok := s.(backend.Watcher); ok {
		c |= capWatch
	}
	if _, ok := s.(backend.Collector); ok {
		c |= capCollect
	}
	if _, ok := s.(backend.AsideMover); ok {
		c |= capAside
	}
	return c
}

// Wrap returns s wrapped with fn (nil lets everything through). The result
// has the optional capabilities of s, and no other.
func Wrap(s backend.Store, fn InjectFunc) Store {
	// One anonymous type per combination (wrap_gen.go, written by
	// gen.go): a method set is static, so a capability the store lacks
	// must be absent from the type, not a method that fails.
	return build(&wrapper{Store: s, inject: fn}, capsOf(s))
}

//go:generate go run ../../internal/capgen -pkg errorstore -recv wrapper -ret Store -out wrap_gen.go capSys=sysOps capSwap=swapOps capBatch=batchOps capVersion=versionOps capPresence=presenceOps capCondDelete=condDeleteOps capWatch=watchOps capCollect=collectOps capAside=asideOps capSwap<capSys

// build returns w as the type that has exactly the capabilities c
// (builders, generated).
func build(w *wrapper, c caps) Store {
	if b, ok := builders[c]; ok {
		return b(w)
	}
	return w
}

// KeyLimit is the wrapped store's (backend.KeyLimiter): every wrapper
// claims it, since no limit (the zero KeyLimit) is an answer too.
func (w *wrapper) KeyLimit() backend.KeyLimit { return backend.KeyLimitOf(w.Store) }

// SetInject replaces the inject function; nil lets everything through.
func (w *wrapper) SetInject(fn InjectFunc) {
	w.mu.Lock()
	w.inject = fn
	w.mu.Unlock()
}

func (w *wrapper) check(op Op, keys []string) error {
	w.mu.Lock()
	fn := w.inject
	w.mu.Unlock()
	if fn == nil {
		return nil
	}
	return fn(op, keys)
}

// List fails if the inject function says so, else lists the wrapped store.
func (w *wrapper) List(ctx context.Context) ([]backend.Entry, error) {
	if err := w.check(OpList, nil); err != nil {
		return nil, err
	}
	return w.Store.List(ctx)
}

// Walk fails as List does if the inject function says so, else walks the
// wrapped store (backend.Walk: in batches even when it cannot walk).
func (w *wrapper) Walk(ctx context.Context, fn func([]backend.Entry) error) error {
	if err := w.check(OpList, nil); err != nil {
		return err
	}
	return backend.Walk(ctx, w.Store, fn)
}

// Load fails if the inject function says so, else loads from the wrapped store.
func (w *wrapper) Load(ctx context.Context, keys ...string) ([]backend.Entry, error) {
	if err := w.check(OpLoad, keys); err != nil {
		return nil, err
	}
	return w.Store.Load(ctx, keys...)
}

// Save fails if the inject function says so, else saves to the wrapped store.
func (w *wrapper) Save(ctx context.Context, entries ...backend.Entry) error {
	if err := w.check(OpSave, keysOf(entries)); err != nil {
		return err
	}
	return w.Store.Save(ctx, entries...)
}

// Delete fails if the inject function says so, else deletes from the wrapped store.
func (w *wrapper) Delete(ctx context.Context, keys ...string) error {
	if err := w.check(OpDelete, keys); err != nil {
		return err
	}
	return w.Store.Delete(ctx, keys...)
}

func keysOf(entries []backend.Entry) []string {
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.Key
	}
	return keys
}

// sysOps are the backend.SysStore methods of a wrapper whose store has
// them.
type sysOps struct{ w *wrapper }

// SaveSys fails if the inject function says so, else saves the record.
func (o sysOps) SaveSys(ctx context.Context, name string, data []byte) error {
	if err := o.w.check(OpSaveSys, []string{name}); err != nil {
		return err
	}
	return o.w.Store.(backend.SysStore).SaveSys(ctx, name, data)
}

// LoadSys fails if the inject function says so, else loads the record.
func (o sysOps) LoadSys(ctx context.Context, name string) ([]byte, error) {
	if err := o.w.check(OpLoadSys, []string{name}); err != nil {
		return nil, err
	}
	return o.w.Store.(backend.SysStore).LoadSys(ctx, name)
}

// ListSys fails if the inject function says so, else lists the records.
func (o sysOps) ListSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	if err := o.w.check(OpListSys, []string{prefix}); err != nil {
		return nil, err
	}
	return o.w.Store.(backend.SysStore).ListSys(ctx, prefix)
}

// ScanSys fails if the inject function says so (OpListSys), else scans
// the records as backend.ScanSys does on the wrapped store.
func (o sysOps) ScanSys(ctx context.Context, prefix string) ([]backend.Entry, error) {
	if err := o.w.check(OpListSys, []string{prefix}); err != nil {
		return nil, err
	}
	return backend.ScanSys(ctx, o.w.Store.(backend.SysStore), prefix)
}

// DeleteSys fails if the inject function says so, else deletes the records.
func (o sysOps) DeleteSys(ctx context.Context, names ...string) error {
	if err := o.w.check(OpDeleteSys, names); err != nil {
		return err
	}
	return o.w.Store.(backend.SysStore).DeleteSys(ctx, names...)
}

// batchOps is the backend.Batcher method of a wrapper whose store has it.
type batchOps struct{ w *wrapper }

// Apply fails if the inject function says so (OpApply), else applies the
// batch to the wrapped store.
func (o batchOps) Apply(ctx context.Context, b backend.Batch) (map[string]string, error) {
	if err := o.w.check(OpApply, append(keysOf(b.Saves), b.Deletes...)); err != nil {
		return nil, err
	}
	return o.w.Store.(backend.Batcher).Apply(ctx, b)
}

// versionOps is the backend.Versioned method of a wrapper whose store has
// it.
type versionOps struct{ w *wrapper }

// SaveIf fails if the inject function says so (OpSave), else saves to the
// wrapped store.
func (o versionOps) SaveIf(ctx context.Context, entries []backend.Entry, expect []backend.Version) (map[string]string, error) {
	if err := o.w.check(OpSave, keysOf(entries)); err != nil {
		return nil, err
	}
	return o.w.Store.(backend.Versioned).SaveIf(ctx, entries, expect)
}

// swapOps is the backend.SysSwapper method of a wrapper whose store has
// it (beside sysOps).
type swapOps struct{ w *wrapper }

// SwapSys fails if the inject function says so (OpSwapSys), else swaps in
// the wrapped store.
func (o swapOps) SwapSys(ctx context.Context, guard string, old []byte, puts map[string][]byte, dels []string) (bool, error) {
	names := slices.Sorted(maps.Keys(puts))
	if err := o.w.check(OpSwapSys, slices.Concat([]string{guard}, names, dels)); err != nil {
		return false, err
	}
	return o.w.Store.(backend.SysSwapper).SwapSys(ctx, guard, old, puts, dels)
}

// presenceOps are the backend.Presence methods of a wrapper whose store
// has them.
type presenceOps struct{ w *wrapper }

// Register fails if the inject function says so (OpRegister), else
// registers with the wrapped store.
func (o presenceOps) Register(ctx context.Context, p backend.Peer) (func(), error) {
	if err := o.w.check(OpRegister, nil); err != nil {
		return nil, err
	}
	return o.w.Store.(backend.Presence).Register(ctx, p)
}

// Peers fails if the inject function says so (OpPeers), else lists the
// wrapped store's peers.
func (o presenceOps) Peers(ctx context.Context) ([]backend.Peer, error) {
	if err := o.w.check(OpPeers, nil); err != nil {
		return nil, err
	}
	return o.w.Store.(backend.Presence).Peers(ctx)
}

// condDeleteOps is the backend.ConditionalDeleter method of a wrapper
// whose store has it.
type condDeleteOps struct{ w *wrapper }

// DeleteIf fails if the inject function says so (OpDelete), else deletes
// from the wrapped store.
func (o condDeleteOps) DeleteIf(ctx context.Context, keys []string, expect []backend.Version) ([]string, error) {
	if err := o.w.check(OpDelete, keys); err != nil {
		return nil, err
	}
	return o.w.Store.(backend.ConditionalDeleter).DeleteIf(ctx, keys, expect)
}

// watchOps is the backend.Watcher method of a wrapper whose store has it.
type watchOps struct{ w *wrapper }

// Watch fails if the inject function says so (OpWatch), else follows the
// wrapped store's feed.
func (o watchOps) Watch(ctx context.Context) (<-chan backend.Change, error) {
	if err := o.w.check(OpWatch, nil); err != nil {
		return nil, err
	}
	return o.w.Store.(backend.Watcher).Watch(ctx)
}

// collectOps are the backend.Collector methods of a wrapper whose store
// has them.
type collectOps struct{ w *wrapper }

// Collect fails if the inject function says so (OpCollect), else collects
// in the wrapped store.
func (o collectOps) Collect(ctx context.Context) (backend.Collected, error) {
	if err := o.w.check(OpCollect, nil); err != nil {
		return backend.Collected{}, err
	}
	return o.w.Store.(backend.Collector).Collect(ctx)
}

// Lead fails if the inject function says so (OpLead), else campaigns in
// the wrapped store.
func (o collectOps) Lead(ctx context.Context) (context.Context, func(), error) {
	if err := o.w.check(OpLead, nil); err != nil {
		return nil, nil, err
	}
	return o.w.Store.(backend.Collector).Lead(ctx)
}

// asideOps is the backend.AsideMover method of a wrapper whose store has
// it.
type asideOps struct{ w *wrapper }

// MoveAside fails if the inject function says so (OpMoveAside), else
// moves key aside in the wrapped store.
func (o asideOps) MoveAside(ctx context.Context, key string) (string, error) {
	if err := o.w.check(OpMoveAside, []string{key}); err != nil {
		return "", err
	}
	return o.w.Store.(backend.AsideMover).MoveAside(ctx, key)
}
