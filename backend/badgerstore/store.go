package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dgraph-io/badger/v4"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

// Options configures a Store. The zero value is what memfs uses: badger's
// log discarded, and the memory settings the package documentation
// explains.
type Options struct {
	// Logger receives badger's log, its warnings and errors at their own
	// levels and its info and debug lines at debug level, and value-log GC
	// failures. Nil discards them.
	Logger *slog.Logger

	// MemTableSize is the size in bytes of one memtable (badger holds up
	// to two); 0 means DefaultMemTableSize. It also sets the largest atomic
	// batch: badger refuses a transaction of more than 15% of a memtable.
	// Below 427 KiB Open fails: a value just under the value-log threshold
	// (64 KiB) must fit in one transaction.
	MemTableSize int64

	// BlockCacheSize is the size in bytes of badger's cache of
	// decompressed table blocks; 0 means DefaultBlockCacheSize.
	BlockCacheSize int64

	// ReadOnly opens the store for reading only, and changes nothing in
	// its directory: badger opens its files read-only and never truncates
	// or repairs a value log or a memtable log; a store that was not
	// closed cleanly, which read-only badger refuses, is opened through a
	// scratch view that badger may repair (scratch.go); memfs.lock is
	// shared with other readers, not written; no marker is written and no
	// value-log GC runs. Every write fails with an error wrapping
	// backend.ErrReadOnly. The directory must exist.
	ReadOnly bool

	// SkipVerify skips the check of every table's checksums at Open, for
	// tests that count the blocks reads touch. A damaged table then reads
	// as missing keys: never set it for a real store.
	SkipVerify bool
}

const (
	// DefaultMemTableSize is the memtable size when Options.MemTableSize
	// is 0.
	DefaultMemTableSize = 16 << 20
	// DefaultBlockCacheSize is the block cache size when
	// Options.BlockCacheSize is 0.
	DefaultBlockCacheSize = 8 << 20
	// MaxValueSize is the largest value Save accepts. Badger keeps a value
	// whole in one value-log file and refuses one larger than the file
	// size; Save refuses it first, since badger's error hex-dumps the
	// value's first kilobyte into its message.
	MaxValueSize = valueLogFileSize

	numMemtables = 2
	// blockSize is the size of a table's blocks before compression. Each
	// block has an entry in its table's index (its first key, about 100
	// bytes), and badger reads every index whole at Open, through mappings
	// that keep it resident: at 100,000 keys badger's 4 KiB blocks gave
	// 15.5 MiB of indexes, 16 KiB 3.6 MiB (RssFile at a mount 52 -> 39
	// MiB) and a 14% smaller store, for a decompression of 16 KiB instead
	// of 4 at a read the block cache misses (BENCHMARKS.md). Tables
	// written with another size read as before.
	blockSize = 16 << 10
	// valueThreshold: notes and skill files (almost all under 64 KiB) stay
	// in the LSM tree, where compaction drops overwritten versions and no
	// value-log GC is needed; larger values go to the value log, where
	// they count against the transaction limit as a pointer only.
	valueThreshold = 64 << 10
	// valueLogFileSize is four times memfs's default --max-file-size, and
	// small enough that GC, which rewrites whole files and never the one
	// being appended to, gets to work on a personal store.
	valueLogFileSize = 256 << 20
	gcInterval       = 10 * time.Minute
	gcDiscardRatio   = 0.5 // rewrite a value-log file once half of it is garbage
	gcMaxRewrites    = 16  // per GC run: bounds the time Close spends on GC
)

// Store is a backend.Store in a badger database. It is safe for concurrent
// use.
type Store struct {
	dir      string       // absolute; immutable after Open, like the fields up to mu
	db       *badger.DB   // closed by Close
	lock     *os.File     // holds the flock on memfs.lock (shared when read-only; nil: no lock file to share)
	readOnly bool         // Options.ReadOnly
	scratch  string       // the scratch view badger has open instead of dir (scratch.go); "" for none
	log      *slog.Logger // never nil
	// tablesAtOpen is the size of the tables when badger opened: what a
	// session added to them decides whether Close compacts (settle.go).
	tablesAtOpen int64
	// reserve is the free space every write leaves on the disk: badger
	// writes its value log and memtables through memory maps, where a
	// full disk is a SIGBUS that kills the process, and a memtable flush
	// or compaction needs room for the tables it writes.
	reserve int64

	stopGC chan struct{} // closed by Close to stop gcLoop
	gcDone chan struct{} // closed when gcLoop has returned
	txns   atomic.Int64  // write transactions committed (every method that writes), for tests

	mu     sync.RWMutex // guards closed; each operation holds it shared, so Close waits for them
	closed bool

	// sysMu orders the writes of system records (SaveSys, DeleteSys,
	// SwapSys): conflict detection is off (see badgerOptions), so a
	// SwapSys's read of its guard and its writes are one step only
	// because no other write of a record comes between them. Taken after
	// mu, and no I/O but the record's own transaction under it.
	sysMu sync.Mutex

	skippedMu sync.Mutex // guards skipped and damaged
	skipped   []string   // the keys the last List or Walk could not report
	damaged   []string   // the keys whose metadata the last List or Walk could not decode

	closeOnce sync.Once
	closeErr  error // what the first Close returned
}

var (
	_ backend.Store    = (*Store)(nil)
	_ backend.SysStore = (*Store)(nil)
	_ backend.Walker   = (*Store)(nil)
)

// Open opens the store kept in dir, creating dir and the database if they
// do not exist. It fails with an error wrapping backend.ErrStoreInUse when
// another Open, in this process or another, holds the store.
func Open(dir string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("badgerstore: %w", err)
	}
	if !opts.ReadOnly {
		// 0700: a memory store is personal, and the modes of the files
		// badger creates inside are not ours to choose.
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return nil, fmt.Errorf("badgerstore: %w", err)
		}
	}
	// Badger opens its files by name and follows links; every entry of
	// the directory is ours or badger's, so none may be a link.
	if err := backend.RefuseSymlinks(abs); err != nil {
		return nil, fmt.Errorf("badgerstore: %w", err)
	}
	if err := checkKind(abs); err != nil {
		return nil, fmt.Errorf("badgerstore: %w", err)
	}
	if err := checkManifest(abs); err != nil {
		return nil, fmt.Errorf("badgerstore: %w", err)
	}
	if _, err := os.Lstat(filepath.Join(abs, "MANIFEST")); opts.ReadOnly && errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("badgerstore: no store in %s (badger's MANIFEST is not there); a read-only open creates none: %w", abs, err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lf, err := lock(abs, opts.ReadOnly)
	if err != nil {
		return nil, fmt.Errorf("badgerstore: %w", err)
	}
	if err := checkBadgerLock(abs); err != nil {
		lf.Close()
		return nil, err
	}
	if !opts.ReadOnly {
		removeEmptyLogs(abs, log)
		if err := keepDamaged(abs, time.Now(), log); err != nil {
			lf.Close()
			return nil, fmt.Errorf("badgerstore: %s: cannot keep aside what badger would cut from a damaged log (%w); badger was not opened, and the damaged files are as they were", abs, err)
		}
	}
	dbDir, scratch := abs, ""
	if opts.ReadOnly && (leftoverLogSize(abs) > 0 || len(emptyLogs(abs)) > 0) {
		// Not closed cleanly: read-only badger would refuse it.
		if scratch, err = makeScratch(abs); err != nil {
			lf.Close()
			return nil, fmt.Errorf("badgerstore: %w", err)
		}
		dbDir = scratch
	}
	existing := names(abs)
	bo := badgerOptions(dbDir, opts, log)
	if err := verifyTables(dbDir, opts.SkipVerify); err != nil {
		removeScratch(scratch)
		lf.Close()
		return nil, fmt.Errorf("badgerstore: %s: a table is damaged (%v); nothing was changed: copy the directory aside before anything else: %w",
			abs, err, backend.ErrCorrupt)
	}
	if scratch != "" {
		// Badger repairs the scratch view as it opens it, and deletes
		// no table or value log of the store (see scratch.go).
		bo = bo.WithReadOnly(false).WithNumCompactors(0).WithCompactL0OnClose(false)
	}
	db, err := badger.Open(bo)
	if err != nil {
		removeScratch(scratch)
		// A store badger cannot open (a damaged table) is left as it
		// was: the files this attempt created (a memtable log) go.
		for n := range names(abs) {
			if !existing[n] {
				os.Remove(filepath.Join(abs, n))
			}
		}
		lf.Close()
		if opts.ReadOnly {
			return nil, fmt.Errorf("badgerstore: open %s read-only (nothing was changed): %w", abs, err)
		}
		return nil, fmt.Errorf("badgerstore: open %s: %w", abs, err)
	}
	if !opts.ReadOnly {
		if err := backend.WriteMarker(abs, backend.BadgerMarker, "badger", formatVersion); err != nil {
			db.Close()
			lf.Close()
			return nil, fmt.Errorf("badgerstore: %w", err)
		}
	}
	s := &Store{
		dir:          abs,
		tablesAtOpen: tableBytes(db.Levels()),
		reserve:      2*bo.MemTableSize + 4<<20,
		db:           db,
		lock:         lf,
		log:          log,
		stopGC:       make(chan struct{}),
		gcDone:       make(chan struct{}),
		readOnly:     opts.ReadOnly,
		scratch:      scratch,
	}
	if opts.ReadOnly {
		close(s.gcDone)
		return s, nil
	}
	go s.gcLoop()
	return s, nil
}

func badgerOptions(dir string, opts Options, log *slog.Logger) badger.Options {
	mt := opts.MemTableSize
	if mt <= 0 {
		mt = DefaultMemTableSize
	}
	mt = max(mt, leftoverLogSize(dir))
	bc := opts.BlockCacheSize
	if bc <= 0 {
		bc = DefaultBlockCacheSize
	}
	var logger badger.Logger // nil: badger logs nothing
	if opts.Logger != nil {
		logger = slogLogger{log.With("component", "badger")}
	}
	return badger.DefaultOptions(dir).
		WithLogger(logger).
		WithSyncWrites(true). // see "Durability" in the package doc

		WithMemTableSize(mt).
		WithNumMemtables(numMemtables).
		WithBlockSize(blockSize).
		WithBlockCacheSize(bc).
		WithValueThreshold(valueThreshold).
		WithValueLogFileSize(valueLogFileSize).
		WithNumCompactors(2).
		// A value read from the value log is checked against its
		// checksum: flipped bytes read as damage (valueCopy), never as
		// other bytes. BENCHMARKS.md has the cost.
		WithVerifyValueChecksum(true).
		// Save and Delete never read inside their transactions, so no
		// transaction can conflict; tracking keys for it would be waste.
		WithDetectConflicts(false).
		// Read-only, badger opens its files O_RDONLY, takes a shared
		// lock on the directory, and skips what repairs a store: the
		// truncation of the newest value log to its last intact entry,
		// of a memtable log (ErrTruncateNeeded instead), a new value
		// log, the discard stats.
		WithReadOnly(opts.ReadOnly)
}

// emptyLogs returns the memtable logs (*.mem) in dir that are empty: badger
// creates a log, then sizes it, and a crash between the two leaves it
// empty. Badger's open refuses such a log ("Create a new file"), at every
// open after the crash.
func emptyLogs(dir string) []string {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	return slices.DeleteFunc(logs, func(name string) bool {
		fi, err := os.Lstat(name)
		return err != nil || !fi.Mode().IsRegular() || fi.Size() != 0
	})
}

// removeEmptyLogs removes the empty memtable logs in dir: they hold
// nothing.
func removeEmptyLogs(dir string, log *slog.Logger) {
	for _, name := range emptyLogs(dir) {
		if err := os.Remove(name); err != nil {
			log.Warn("badgerstore: an empty memtable log a crash left cannot be removed; badger will refuse to open", "file", name, "err", err)
			continue
		}
		log.Info("badgerstore: removed an empty memtable log a crash left", "file", name)
	}
}

// leftoverLogSize returns the memtable size that holds the largest
// memtable write-ahead log (*.mem) in dir, 0 if there is none. Badger
// removes them once their memtable is in a table, so one that is left
// means badger did not close: it replays each into a memtable at Open, and
// if the log holds more than the memtable's arena takes (the crashed
// process used a larger MemTableSize: an older memfs, other Options),
// badger ends the process with "Arena too small". Badger preallocates a
// log at twice the memtable size it writes it with, and the tail it has
// not written is zeros: such a log was written into a memtable of half its
// size, and one of that size holds it again. A log that an earlier Open
// replayed, and cut to its data, before crashing again is as long as its
// data, and a memtable as large as the file holds it (unless it is mostly
// deletions, whose records take more room in a memtable than in the log).
// The larger memtable lasts until the store is next opened.
//
// Sized by the file alone, the memtable doubled at each crash (the next
// log is preallocated at twice it), until after seven crashes at the
// default size a 4 GiB log overflowed badger's 32-bit log size and Open
// failed ("cannot create memtable ... already exists").
func leftoverLogSize(dir string) int64 {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	var size int64
	for _, name := range logs {
		end, fsize, err := logEnd(name)
		if err != nil {
			if fi, err := os.Stat(name); err == nil {
				size = max(size, fi.Size())
			}
			continue
		}
		need := fsize // cut to its data by an earlier Open
		if end < fsize {
			need = max(fsize/2, end) // preallocated, its tail never written
		}
		size = max(size, need)
	}
	return size
}

// Dir returns the absolute path of the store's directory.
func (s *Store) Dir() string { return s.dir }

// Close runs value-log GC, closes the database and releases the lock. It
// waits for operations in flight. A second Close returns what the first
// did. A writable Close also leaves the next Open little to do (settle.go):
// after a session that added more than settleAfter bytes to the tables (an
// import), it compacts the tree if a compaction is due, and it starts an
// empty value log after a newest one of more than rotateAfter bytes.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stopGC)
		<-s.gcDone
		// GC and compaction before taking the lock: badger runs them
		// beside reads and writes, and operations still arriving need
		// not wait for them.
		if !s.readOnly {
			s.settle()
			s.gc()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.closed = true
		var err error
		if cerr := s.db.Close(); cerr != nil {
			err = fmt.Errorf("badgerstore: close %s: %w", s.dir, cerr)
		} else if !s.readOnly {
			// memfs.lock is still held: no other Open reads the
			// directory meanwhile.
			if rerr := rotateValueLog(s.dir); rerr != nil {
				s.log.Warn("badgerstore: cannot start an empty value log; the next open reads the newest through", "dir", s.dir, "err", rerr)
			}
		}
		removeScratch(s.scratch)
		if s.lock != nil {
			err = errors.Join(err, s.lock.Close())
		}
		s.closeErr = err
	})
	return s.closeErr
}

func (s *Store) gcLoop() {
	defer close(s.gcDone)
	t := time.NewTicker(gcInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stopGC:
			return
		case <-t.C:
			s.gc()
		}
	}
}

// gc reclaims value-log files that are at least half garbage (values
// overwritten or deleted since). Badger never rewrites the file it is
// appending to, so a store smaller than one value-log file has nothing
// to reclaim. RunValueLogGC rewrites one file per call; loop until it
// finds nothing, at most gcMaxRewrites times.
//
// A store with a DamagedDir runs none: GC rewrites a value log by reading
// it up to its first damaged entry, then deletes it, with every intact
// value after the damage.
func (s *Store) gc() {
	if _, err := os.Lstat(filepath.Join(s.dir, DamagedDir)); err == nil {
		return
	}
	for range gcMaxRewrites {
		err := s.db.RunValueLogGC(gcDiscardRatio)
		if errors.Is(err, badger.ErrNoRewrite) || errors.Is(err, badger.ErrRejected) {
			return
		}
		if err != nil {
			s.log.Warn("badgerstore: value-log GC", "dir", s.dir, "err", err)
			return
		}
	}
}

// use takes the shared lock for one operation, failing if the store is
// closed. The caller must call s.mu.RUnlock when it returns nil.
func (s *Store) use(op string) error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return fmt.Errorf("badgerstore: %s: %w", op, fs.ErrClosed)
	}
	return nil
}

// checkKey applies backend.CheckStoreKey: a valid key, not reserved.
func checkKey(key string) error { return backend.CheckStoreKey(key) }

func checkKeys(keys []string) error {
	for _, k := range keys {
		if err := checkKey(k); err != nil {
			return err
		}
	}
	return nil
}

// List returns every key with its Info, sorted. It iterates the metadata
// records only; no value is read.
func (s *Store) List(ctx context.Context) ([]backend.Entry, error) {
	out := []backend.Entry{}
	err := s.list(ctx, func(e backend.Entry) error {
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Badger iterates in byte order of its keys, and "m/"+a < "m/"+b
	// exactly when a < b: out is sorted.
	return out, nil
}

// Walk reports what List does, in key order, a batch at a time
// (backend.Walker), from one snapshot.
func (s *Store) Walk(ctx context.Context, fn func([]backend.Entry) error) error {
	return backend.WalkEach(func(add func(backend.Entry) error) error { return s.list(ctx, add) }, fn)
}

// list iterates the metadata records of one snapshot for List and Walk,
// passing each entry to add; an error from add stops it and is returned as
// it is.
func (s *Store) list(ctx context.Context, add func(backend.Entry) error) error {
	if err := s.use("list"); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	var addErr error
	var skipped, damaged []string
	defer func() {
		s.skippedMu.Lock()
		s.skipped, s.damaged = skipped, damaged
		s.skippedMu.Unlock()
	}()
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(listOptions())
		defer it.Close()
		n := 0
		for it.Rewind(); it.Valid(); it.Next() {
			if n++; n%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			item := it.Item()
			key := string(item.Key()[len(metaPrefix):])
			if backend.ValidateKey(key) != nil {
				// A key an older memfs accepted (a control
				// character): reported, kept, never a reason to fail.
				skipped = append(skipped, key)
				continue
			}
			var info backend.Info
			err := item.Value(func(b []byte) error {
				var err error
				info, err = decodeMeta(key, b)
				return err
			})
			if errors.Is(err, backend.ErrCorrupt) {
				// One damaged record is that key's (Damaged; its
				// Load fails), never the listing's.
				damaged = append(damaged, key)
				continue
			}
			if err != nil {
				return err
			}
			if addErr = add(backend.Entry{Key: key, Info: info}); addErr != nil {
				return addErr
			}
		}
		return nil
	})
	if addErr != nil {
		return addErr
	}
	if err != nil {
		return fmt.Errorf("badgerstore: list: %w", err)
	}
	return nil
}

// Damaged returns the keys whose metadata record the last List or Walk
// could not decode, sorted: they are left out of the listing, kept as
// they are, and their Load fails with backend.ErrCorrupt.
func (s *Store) Damaged() []string {
	s.skippedMu.Lock()
	defer s.skippedMu.Unlock()
	return slices.Sorted(slices.Values(s.damaged))
}

// Skipped returns the keys the last List or Walk found but could not
// report: records an older memfs wrote under a key that ValidateKey now
// refuses (one with a control character). They stay in the store, as
// they are. Their bytes are as found, so a caller that prints them should
// quote them.
func (s *Store) Skipped() []string {
	s.skippedMu.Lock()
	defer s.skippedMu.Unlock()
	return slices.Clone(s.skipped)
}

// listOptions confine List's iterator to the metadata records. Without
// prefetching, a record's bytes are read only by Item.Value, which List
// calls on metadata alone.
func listOptions() badger.IteratorOptions {
	return badger.IteratorOptions{Prefix: []byte(metaPrefix)}
}

// Load returns the entries for keys, in order, from one consistent
// snapshot. The values are copies the caller owns.
func (s *Store) Load(ctx context.Context, keys ...string) ([]backend.Entry, error) {
	if err := checkKeys(keys); err != nil {
		return nil, err
	}
	if err := s.use("load"); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := make([]backend.Entry, 0, len(keys))
	err := s.db.View(func(txn *badger.Txn) error {
		for _, k := range keys {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("badgerstore: load: %w", err)
			}
			e, err := load(txn, k)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func load(txn *badger.Txn, key string) (backend.Entry, error) {
	item, err := txn.Get(metaKey(key))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return backend.Entry{}, backend.NotFound("load", key)
	}
	if err != nil {
		return backend.Entry{}, &fs.PathError{Op: "load", Path: key, Err: err}
	}
	var info backend.Info
	err = item.Value(func(b []byte) error {
		var err error
		info, err = decodeMeta(key, b)
		return err
	})
	if err != nil {
		return backend.Entry{}, &fs.PathError{Op: "load", Path: key, Err: err}
	}
	item, err = txn.Get(valueKey(key))
	if err != nil {
		// Save and Delete write both records in one transaction, so a
		// missing value means a damaged store, not a missing key.
		return backend.Entry{}, &fs.PathError{Op: "load", Path: key, Err: fmt.Errorf("value record: %w", err)}
	}
	// ValueCopy, not Value: the bytes Value shows belong to badger (a
	// memtable, a table block or the mmapped value log) and are reused.
	v, err := valueCopy(item)
	if err != nil {
		// The value log failed to give this value: its damage, not
		// the store's (a closed store fails before this).
		return backend.Entry{}, &fs.PathError{Op: "load", Path: key, Err: fmt.Errorf("value: %w: %w", err, backend.ErrCorrupt)}
	}
	if v == nil {
		v = []byte{}
	}
	if int64(len(v)) != info.Size {
		// A truncated or damaged value log can hand back fewer bytes
		// (none at all) without an error: never an empty read.
		return backend.Entry{}, &fs.PathError{Op: "load", Path: key,
			Err: fmt.Errorf("value of %d bytes where the metadata says %d: %w", len(v), info.Size, backend.ErrCorrupt)}
	}
	return backend.Entry{Key: key, Info: info, Value: v}, nil
}

// Save writes entries: one transaction per batch as far as badger's
// transaction limit allows, and never a hard-link group split between two;
// durable when it returns nil. See the package documentation.
func (s *Store) Save(ctx context.Context, entries ...backend.Entry) error {
	if err := s.writable("save"); err != nil {
		return err
	}
	if err := s.KeyLimit().ValidateEntries(entries); err != nil {
		return fmt.Errorf("badgerstore: save: %w", err)
	}
	if err := checkValueSizes("save", entries); err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	if err := s.use("save"); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	if err := s.roomFor("save", entries); err != nil {
		return err
	}
	if err := s.write(ctx, saveOps(entries, time.Now())); err != nil {
		return fmt.Errorf("badgerstore: save: %w", err)
	}
	return nil
}

// checkValueSizes refuses an entry whose value is over MaxValueSize.
func checkValueSizes(op string, entries []backend.Entry) error {
	for _, e := range entries {
		if len(e.Value) > MaxValueSize {
			return &fs.PathError{Op: op, Path: e.Key, Err: fmt.Errorf("value of %d bytes is over the limit of %d", len(e.Value), MaxValueSize)}
		}
	}
	return nil
}

// roomFor is room for a write of entries.
func (s *Store) roomFor(op string, entries []backend.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	var need int64
	for _, e := range entries {
		need += int64(len(e.Key)+len(e.Value)+len(e.Info.Link)) + 128
	}
	return s.room(op, entries[0].Key, need)
}

// saveOps are the ops that save entries at now.
func saveOps(entries []backend.Entry, now time.Time) []op {
	ops := make([]op, len(entries))
	for i, e := range entries {
		info := backend.SavedInfo(e, now)
		// No copy of the value: badger holds it only until Commit
		// returns, and by then it is in the value log or a memtable.
		ops[i] = op{key: e.Key, link: info.Link, meta: encodeMeta(info), value: e.Value}
	}
	return ops
}

// Delete removes keys, ignoring those that are not in the store, in one
// transaction as far as badger's limit allows; durable when it returns nil.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	if err := s.writable("delete"); err != nil {
		return err
	}
	if err := checkKeys(keys); err != nil {
		return err
	}
	if err := s.use("delete"); err != nil {
		return err
	}
	defer s.mu.RUnlock()
	ops := make([]op, len(keys))
	for i, k := range keys {
		ops[i] = op{key: k, remove: true}
	}
	if err := s.write(ctx, ops); err != nil {
		return fmt.Errorf("badgerstore: delete: %w", err)
	}
	return nil
}

// formatVersion is the layout this package writes and reads (m/ and v/
// prefixes; metadata versions 1 to 4, see meta.go).
const formatVersion = 1

// checkKind refuses a directory that holds a dir store, or files that
// neither badger nor memfs wrote: badger would create its database among
// them.
func checkKind(dir string) error {
	if err := backend.CheckKind(dir, "badger", formatVersion); err != nil {
		return err
	}
	if kind, _, _ := backend.DetectKind(dir); kind == "badger" {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		switch n := e.Name(); {
		case n == lockName, n == JournalName, n == backend.BadgerMarker, n == DamagedDir, isBadgerFile(n):
			continue
		}
		return fmt.Errorf("%s is not a badger store: it holds %s, which badger did not write (for a plain directory use --store dir:%s): %w",
			dir, e.Name(), dir, backend.ErrWrongKind)
	}
	return nil
}

// isBadgerFile reports a name badger gives its files (a database whose
// creation stopped before its MANIFEST was written still has them).
func isBadgerFile(n string) bool {
	switch n {
	case badgerLockName, "DISCARD", "MANIFEST", "KEYREGISTRY":
		return true
	}
	for _, ext := range []string{".vlog", ".sst", ".mem"} {
		if strings.HasSuffix(n, ext) {
			return true
		}
	}
	return false
}

// checkManifest refuses a store whose tables or value logs are there but
// whose MANIFEST is not: badger would start a new database and delete the
// tables it does not know (all of them).
func checkManifest(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, "MANIFEST")); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".sst") || strings.HasSuffix(n, ".vlog") {
			return fmt.Errorf("%s holds badger's data (%s) but no MANIFEST: the store is damaged; nothing was changed (restore the MANIFEST, or copy the directory aside before anything else): %w",
				dir, n, backend.ErrCorrupt)
		}
	}
	return nil
}

// names returns the names in dir.
func names(dir string) map[string]bool {
	ents, _ := os.ReadDir(dir)
	m := make(map[string]bool, len(ents))
	for _, e := range ents {
		m[e.Name()] = true
	}
	return m
}

// room returns ENOSPC (in a *fs.PathError for key) unless the disk has room
// for a write of need bytes, twice over (value log and memtable log, or a
// later table), plus the reserve. It is checked before badger writes,
// because badger writes through memory maps: on a full disk the write
// faults (SIGBUS) and the runtime kills the process with every dirty value
// in it. Another program can still fill the disk between the check and
// the write; the reserve is what covers that.
func (s *Store) room(op, key string, need int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(s.dir, &st); err != nil {
		return nil // cannot tell: let the write try
	}
	free := int64(st.Bavail) * st.Bsize
	if free >= 2*need+s.reserve {
		return nil
	}
	return &fs.PathError{Op: op, Path: key, Err: fmt.Errorf("%w: %d bytes free on the store's disk, a write of %d bytes needs %d (twice itself and a reserve of %d for badger's memory-mapped logs and tables)",
		syscall.ENOSPC, free, need, 2*need+s.reserve, s.reserve)}
}
