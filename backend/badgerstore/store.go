// Package badgerstore is the embedded default backend of memfs: a
// backend.Store in a badger v4 database (github.com/dgraph-io/badger/v4).
// Nothing needs to run beside memfs.
//
// # Layout
//
// Each key k is kept under two badger keys: "m/"+k holds its metadata (a
// 29-byte record: version, size, mtime in Unix nanoseconds, mode, uid, gid)
// and "v/"+k its value. List iterates only the "m/" prefix, so it reads no
// value, and ls -l of a large store costs one scan of small records.
//
// # Transactions
//
// A Save or Delete batch is one badger transaction — all or nothing — as
// long as it fits badger's transaction size limit (15% of the memtable,
// 4.8 MiB of keys and inline values with the options below; values above
// the 64 KiB value threshold count only as pointers). A larger batch is
// split into several transactions at the point where badger returns
// ErrTxnTooBig: each part is atomic, the batch as a whole is not, and an
// entry's metadata and value are always in the same transaction.
//
// # Durability
//
// SyncWrites is off, and each Save or Delete ends with one db.Sync: one
// disk barrier per batch rather than one per transaction, and none for
// commits that memfs has not asked to be durable.
//
// # Exclusive use
//
// Open takes a non-blocking flock on "memfs.lock" in the directory and
// writes the PID into it, so a second memfs (or a second Open in this
// process) fails with backend.ErrStoreInUse naming the holder. Badger's own
// directory lock is translated to the same error.
//
// # Garbage collection and memory
//
// Value-log GC runs every 10 minutes and at Close. The memtables (2 x 32
// MiB) and block cache (32 MiB) are smaller than badger's defaults (5 x 64
// MiB, 256 MiB): memfs keeps its working set in its own session cache, and
// badger's caches would hold the same bytes a second time.
package badgerstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

// Options configures a Store. The zero value is usable: badger's log is
// discarded and the memory options above apply.
type Options struct {
	// Logger receives badger's warnings and errors (its info and debug
	// lines at debug level); nil discards them.
	Logger *slog.Logger
}

// Store is a backend.Store in a badger database.
type Store struct {
	dir  string
	db   *badger.DB
	lock *os.File

	stop      chan struct{}
	gcDone    chan struct{}
	closeOnce sync.Once
	closeErr  error

	txns atomic.Int64 // transactions committed by Save and Delete (tests)
}

var _ backend.Store = (*Store)(nil)

const (
	lockName       = "memfs.lock"
	metaPrefix     = "m/"
	valuePrefix    = "v/"
	metaVersion    = 1
	metaLen        = 1 + 8 + 8 + 4 + 4 + 4
	gcInterval     = 10 * time.Minute
	valueThreshold = 64 << 10
)

// Open opens (creating) the badger store in dir.
func Open(dir string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("badgerstore: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("badgerstore: %w", err)
	}
	lock, err := lockDir(abs)
	if err != nil {
		return nil, err
	}
	bo := badger.DefaultOptions(abs).
		WithLogger(newLogger(opts.Logger)).
		WithSyncWrites(false).
		WithMemTableSize(32 << 20).
		WithNumMemtables(2).
		WithBlockCacheSize(32 << 20).
		WithValueThreshold(valueThreshold).
		WithValueLogFileSize(256 << 20).
		WithNumCompactors(2).
		WithDetectConflicts(false) // memfs serializes its own writes
	db, err := badger.Open(bo)
	if err != nil {
		lock.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) || strings.Contains(err.Error(), "Cannot acquire directory lock") {
			// Badger's lock error carries no sentinel we could test.
			return nil, fmt.Errorf("badgerstore: %s is in use by another process: %w", abs, backend.ErrStoreInUse)
		}
		return nil, fmt.Errorf("badgerstore: open %s: %w", abs, err)
	}
	s := &Store{dir: abs, db: db, lock: lock, stop: make(chan struct{}), gcDone: make(chan struct{})}
	go s.gcLoop()
	return s, nil
}

func lockDir(abs string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(abs, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("badgerstore: lock %s: %w", abs, err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		holder := "another process"
		if b, rerr := os.ReadFile(filepath.Join(abs, lockName)); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
				holder = fmt.Sprintf("process %d", pid)
			}
		}
		f.Close()
		return nil, fmt.Errorf("badgerstore: %s is in use by %s: %w", abs, holder, backend.ErrStoreInUse)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("badgerstore: lock %s: %w", abs, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("badgerstore: lock %s: %w", abs, err)
	}
	return f, nil
}

func (s *Store) gcLoop() {
	defer close(s.gcDone)
	t := time.NewTicker(gcInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.gc(10)
		}
	}
}

// gc rewrites value-log files that are at least half garbage, at most n.
func (s *Store) gc(n int) {
	for range n {
		if err := s.db.RunValueLogGC(0.5); err != nil {
			return // badger.ErrNoRewrite: nothing (more) to reclaim
		}
	}
}

// Close runs value-log GC, closes badger and releases the lock.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.gcDone
		s.gc(10)
		err := s.db.Close()
		s.closeErr = errors.Join(err, s.lock.Close())
	})
	return s.closeErr
}

// Dir returns the absolute directory of the store.
func (s *Store) Dir() string { return s.dir }

func checkKeys(keys []string) error {
	for _, k := range keys {
		if err := backend.ValidateKey(k); err != nil {
			return err
		}
		if backend.IsHidden(k) {
			return fmt.Errorf("%w: %q: hidden keys are never persisted", backend.ErrInvalidKey, k)
		}
	}
	return nil
}

func encodeMeta(info backend.Info) []byte {
	b := make([]byte, 0, metaLen)
	b = append(b, metaVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(info.Size))
	b = binary.BigEndian.AppendUint64(b, uint64(info.MTime.UnixNano()))
	b = binary.BigEndian.AppendUint32(b, uint32(info.Mode.Perm()))
	b = binary.BigEndian.AppendUint32(b, info.UID)
	b = binary.BigEndian.AppendUint32(b, info.GID)
	return b
}

func decodeMeta(key string, b []byte) (backend.Info, error) {
	if len(b) != metaLen || b[0] != metaVersion {
		return backend.Info{}, fmt.Errorf("badgerstore: %s: corrupt metadata (%d bytes)", key, len(b))
	}
	return backend.Info{
		Size:  int64(binary.BigEndian.Uint64(b[1:])),
		MTime: time.Unix(0, int64(binary.BigEndian.Uint64(b[9:]))),
		Mode:  fs.FileMode(binary.BigEndian.Uint32(b[17:])).Perm(),
		UID:   binary.BigEndian.Uint32(b[21:]),
		GID:   binary.BigEndian.Uint32(b[25:]),
	}, nil
}

// List returns every key with its Info, reading only metadata records.
func (s *Store) List(ctx context.Context) ([]backend.Entry, error) {
	var out []backend.Entry
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 256, Prefix: []byte(metaPrefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			item := it.Item()
			key := string(item.Key()[len(metaPrefix):])
			var info backend.Info
			err := item.Value(func(v []byte) error {
				var err error
				info, err = decodeMeta(key, v)
				return err
			})
			if err != nil {
				return err
			}
			out = append(out, backend.Entry{Key: key, Info: info})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("badgerstore: list: %w", err)
	}
	return out, nil // badger iterates in key order: sorted
}

// Load returns the entries for keys, values copied out of badger.
func (s *Store) Load(ctx context.Context, keys ...string) ([]backend.Entry, error) {
	if err := checkKeys(keys); err != nil {
		return nil, err
	}
	out := make([]backend.Entry, 0, len(keys))
	err := s.db.View(func(txn *badger.Txn) error {
		for _, k := range keys {
			if err := ctx.Err(); err != nil {
				return err
			}
			mi, err := txn.Get([]byte(metaPrefix + k))
			if errors.Is(err, badger.ErrKeyNotFound) {
				return backend.NotFound("load", k)
			}
			if err != nil {
				return &fs.PathError{Op: "load", Path: k, Err: err}
			}
			mb, err := mi.ValueCopy(nil)
			if err != nil {
				return &fs.PathError{Op: "load", Path: k, Err: err}
			}
			info, err := decodeMeta(k, mb)
			if err != nil {
				return err
			}
			vi, err := txn.Get([]byte(valuePrefix + k))
			if err != nil {
				return &fs.PathError{Op: "load", Path: k, Err: fmt.Errorf("value missing beside metadata: %w", err)}
			}
			v, err := vi.ValueCopy(nil)
			if err != nil {
				return &fs.PathError{Op: "load", Path: k, Err: err}
			}
			info.Size = int64(len(v))
			out = append(out, backend.Entry{Key: k, Info: info, Value: v})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Save persists entries; see the package doc for transactions.
func (s *Store) Save(ctx context.Context, entries ...backend.Entry) error {
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.Key
	}
	if err := checkKeys(keys); err != nil {
		return err
	}
	now := time.Now()
	ops := make([]op, 0, len(entries))
	for _, e := range entries {
		info := e.Info
		info.Size = int64(len(e.Value))
		if info.MTime.IsZero() {
			info.MTime = now
		}
		// Badger keeps the slices until the commit: give it copies, so
		// that the caller's buffers are free when Save returns.
		ops = append(ops, op{key: e.Key, meta: encodeMeta(info), value: bytes.Clone(e.Value)})
	}
	if err := s.apply(ctx, ops); err != nil {
		return fmt.Errorf("badgerstore: save: %w", err)
	}
	return nil
}

// Delete removes keys; missing keys are ignored.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	if err := checkKeys(keys); err != nil {
		return err
	}
	ops := make([]op, len(keys))
	for i, k := range keys {
		ops[i] = op{key: k, delete: true}
	}
	if err := s.apply(ctx, ops); err != nil {
		return fmt.Errorf("badgerstore: delete: %w", err)
	}
	return nil
}

// op is the change of one key: its metadata and value set, or both deleted.
type op struct {
	key    string
	meta   []byte
	value  []byte
	delete bool
}

func (o op) addTo(txn *badger.Txn) error {
	mk, vk := []byte(metaPrefix+o.key), []byte(valuePrefix+o.key)
	if o.delete {
		if err := txn.Delete(mk); err != nil {
			return err
		}
		return txn.Delete(vk)
	}
	if err := txn.Set(vk, o.value); err != nil {
		return err
	}
	return txn.Set(mk, o.meta)
}

// apply writes ops in as few transactions as badger allows, keeping each
// op whole, then makes them durable with one Sync.
func (s *Store) apply(ctx context.Context, ops []op) error {
	start := 0
	txn := s.db.NewTransaction(true)
	for i := 0; i < len(ops); i++ {
		if err := ctx.Err(); err != nil {
			txn.Discard()
			return err
		}
		err := ops[i].addTo(txn)
		if err == nil {
			continue
		}
		txn.Discard()
		if !errors.Is(err, badger.ErrTxnTooBig) {
			return fmt.Errorf("%s: %w", ops[i].key, err)
		}
		if i == start {
			return fmt.Errorf("%s: larger than one transaction: %w", ops[i].key, err)
		}
		// ops[i] may have half entered the discarded transaction: commit
		// ops[start:i] alone, then start over at i.
		if err := s.commit(ops[start:i]); err != nil {
			return err
		}
		start = i
		txn = s.db.NewTransaction(true)
		i--
	}
	if err := txn.Commit(); err != nil {
		return err
	}
	s.txns.Add(1)
	return s.db.Sync()
}

func (s *Store) commit(ops []op) error {
	txn := s.db.NewTransaction(true)
	defer txn.Discard()
	for _, o := range ops {
		if err := o.addTo(txn); err != nil {
			return fmt.Errorf("%s: %w", o.key, err)
		}
	}
	if err := txn.Commit(); err != nil {
		return err
	}
	s.txns.Add(1)
	return nil
}
