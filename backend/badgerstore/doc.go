// Package badgerstore is the embedded default backend of memfs: a
// backend.Store in a badger v4 database (github.com/dgraph-io/badger/v4),
// with the capabilities backend.SysStore (and backend.SysSwapper),
// backend.Walker, backend.Versioned and backend.Batcher. The store is one
// directory, and nothing runs beside memfs. Only one process writes it,
// so it does not number its writes: Info.Rev is always 0, and versions
// compare by size and modification time.
//
//	s, err := badgerstore.Open(dir, badgerstore.Options{Logger: log})
//	if err != nil {
//		return err // wraps backend.ErrStoreInUse if another memfs holds dir
//	}
//	defer s.Close()
//	entries, err := s.List(ctx) // every key with its Info, no value read
//
// This is the only package that imports badger: its options, transactions,
// errors and garbage collection stay behind the Store methods.
//
// # Layout
//
// A key k is two badger records. "m/"+k holds its Info (meta.go): a
// version byte (4), then big-endian size, mtime, atime and ctime (each Unix
// seconds and nanoseconds, so that dates past 2262 fit), st_mode
// (backend.UnixMode: node type, setuid, setgid, sticky, permissions), uid,
// gid, rdev (8 bytes), the hard-link group (a length byte and the name),
// and the extended attributes (a count, then each name and value with
// their lengths, in name order). "v/"+k holds the value: a file's content
// or a symlink's target, empty for a directory, fifo, socket or device.
// List iterates the "m/" prefix alone, so it reads no value: listing a store
// costs one scan of small records however large the values are
// (TestListReadsNoValues checks this against badger's own block and
// value-log read counters).
//
// Records of versions 1 to 3, written by earlier memfs, are read unchanged:
// they keep permission bits only (every key was a regular file), and their
// atime and ctime read as the mtime. A key saved again is written as
// version 4. A record that does not parse is reported, wrapping
// backend.ErrCorrupt and naming the key, never read as another Info: Load
// of it fails so, and List and Walk leave it out and report it by Damaged
// (one damaged record never fails the listing, and so every mount). A
// value the value log fails to give, or gives short, fails its Load
// with backend.ErrCorrupt. A record under a key that an earlier memfs accepted and ValidateKey now
// refuses (a control character) is left out of List and Walk, named by
// Skipped, and kept as it is.
//
// Values under 64 KiB are kept in the LSM tree beside their key, compressed,
// and an overwritten version disappears with compaction. Larger values go
// to the value log, which GC reclaims (below). A value is at most
// MaxValueSize (256 MiB), the size of a value-log file, since badger keeps
// each value whole in one file.
//
// Save checks its whole batch with backend.ValidateEntries (keys, node
// types, values, device numbers, link groups, attributes) and every value's
// size, and Load and Delete check every key, before anything is read or
// written: a batch with one bad entry writes nothing. Size is taken from
// len(Value); a zero MTime or CTime is stored as the time of the Save, a
// zero ATime as the MTime. Load returns values the caller owns (copied out
// of badger's memory with ValueCopy), and Delete ignores keys that are not
// there.
//
// # Nodes
//
// Every node type is a key like a file: a directory is an entry of its own
// and implies nothing about the keys under it (an empty one is listed;
// deleting a key leaves its directory's entry). A symlink's target is kept
// as its value and never followed. Hard links are names that carry the
// same Info.Link: each name keeps its own copy of the value and metadata,
// so deleting one leaves the others whole, and a save that changes the
// node carries every name (the backend.Store contract). The names of a
// group in one Save are written in one transaction (below).
//
// # Transactions
//
// A Save or Delete batch is one badger transaction, all or nothing, as long
// as it fits badger's limit: 15% of a memtable in bytes (2.4 MiB with the
// default 16 MiB memtable), where a value in the value log counts only as a
// pointer, and about one record per 96 bytes of that (two records a key).
// A larger batch is split: keys are added in order until badger returns
// ErrTxnTooBig, what fits is committed, and the rest goes on in a new
// transaction. Each part is atomic; the batch as a whole is not, and an
// error or a crash in the middle leaves the earlier parts saved. A key's two
// records always share a transaction: when the limit falls between them,
// the transaction is built again without that key, so no reader, and no
// reopened store, sees a value without its metadata. So do the names of a
// hard-link group: the keys from its first name in the batch to its last
// are committed together, and a group too large for one transaction fails
// the Save with badger.ErrTxnTooBig rather than leave its names disagreeing.
//
// Apply (backend.Batcher) is always one transaction: its saves, its
// deletes and the conflict copies of its conditional saves (read in the
// same transaction) commit together. It never splits: a batch over the
// limit above is refused with backend.ErrBatchTooLarge before anything is
// written, and the caller falls back to Save and Delete (a session's flush
// does, and logs why). With the default memtable, a flush is one atomic
// transaction up to about 2.4 MiB of small values with their keys and
// metadata (a value of 64 KiB or more counts as a pointer) and some 13,000
// keys. With Batch.FailOnConflict, the versions the batch expects are
// read in its transaction before anything is added to it, and a mismatch
// fails it with nothing written. Badger's conflict detection is off, so
// the check sees the store as of the transaction's start: a Save, Delete
// or Apply of this process committed between that read and the commit is
// not seen (no other process writes the store).
//
// SwapSys (backend.SysSwapper) reads its guard and writes its records in
// one transaction. Badger's conflict detection is off (no other write
// reads), so the writes of system records (SaveSys, DeleteSys, SwapSys)
// take turns under a mutex of the Store: none comes between a swap's read
// and its commit.
//
// # Durability
//
// Badger runs with SyncWrites on: a commit returns once badger has synced
// its write-ahead log and value log, so Save and Delete return nil only for
// durable data.
//
// SyncWrites off with one db.Sync per batch was measured and rejected. It
// is not cheaper: under strace, single-transaction saves of 2 KiB make two
// msync calls each either way, and their times differed by less than the
// run-to-run noise. And
// it is not durable: db.Sync syncs only the current memtable's log, so a
// commit whose memtable was rotated out before the Sync (by the next part
// of a split batch, a concurrent Save, or value-log GC) stays unsynced until
// badger has flushed that memtable to a table. SyncWrites costs a sync per
// part of a split batch, small next to writing 2.4 MiB parts.
//
// Badger does not sync the directory when it creates a log file; this
// relies on the filesystem making a new file's name durable with the file
// itself, as ext4 and xfs do.
//
// # Exclusive use
//
// Before it opens badger, Open takes a non-blocking flock(2) on memfs.lock
// in the directory and writes its PID there. A second Open, by another
// process or this one (flock belongs to the open file description), fails at
// once with an error wrapping backend.ErrStoreInUse that names the holder:
// "badgerstore: /path is in use by process 1234: store is in use". The
// kernel drops the lock when the holder dies, so a crash never leaves the
// store locked; Close releases it, and the file stays.
//
// Badger's own lock file (LOCK) is probed the same way, so a program that
// opens the database with badger directly also gives ErrStoreInUse naming
// its PID. Badger's own error for that case cannot be recognised: it
// flattens the errno into its message.
//
// # Read-only
//
// With Options.ReadOnly (the commands that only read) Open changes nothing
// in the directory: badger opens its files read-only and takes a shared
// lock on the directory, so it never cuts the newest value log to its last
// intact entry (a damaged one lost every byte after the damage), makes no
// new value log and runs no GC; memfs.lock is shared with other readers
// (lockfile.Share: no PID written) and excludes a writer, and no marker
// is written. Every write fails with backend.ErrReadOnly. Read-only badger
// refuses a store whose memtable log a crash left unfinished; Open then
// reads it through a scratch view under os.TempDir (scratch.go), which it
// removes at Close. Nothing is kept aside read-only: damaged/ is made by a
// writable Open only.
//
// # Damage
//
// Nothing is destroyed to repair a store; damaged data is kept aside and
// reported. Every table's blocks are checked at Open (a damaged table fails
// it, nothing changed). A value read from the value log is checked against
// its checksum (badger's VerifyValueChecksum): flipped bytes fail the Load
// of that key with an error wrapping backend.ErrCorrupt, and every other
// key reads; so does a value whose metadata gives another length.
//
// A writable badger open cuts the newest value log, and each memtable log
// a crash left, at its first damaged entry, and cannot be told not to.
// So a writable Open first reads them as badger will (damaged.go): a file
// that would lose more than the zeros badger preallocates is copied, byte
// for byte, to damaged/TIME/NAME in the store, fsynced, and an error line
// is logged naming the file, where its intact part ends and the copy.
// The newest value log is also kept whole where it is: Open starts an
// empty value log after it, so badger appends there and reads the damaged
// file like any older one, value by value, and the intact values after
// the damage still read. A memtable log is replayed up to its damage; what
// follows is in the copy only. Badger's open also cuts a MANIFEST that
// ends in an incomplete change and then deletes the tables it does not
// name: such a MANIFEST is copied, and such tables hard-linked, under
// damaged/ first (the keys only they held are missing from the store
// until restored from there). Nothing deletes damaged/, and while it is
// there value-log GC does not run (it would read a damaged value log up
// to the damage and delete it). A crash alone keeps nothing: the cut part
// of its logs is zeros. On a store closed cleanly the check reads the
// newest value log once, which badger reads right after (BENCHMARKS.md,
// "Damaged badger data"); a Close after which that log would hold more than
// 1 MiB starts an empty one after it (Memory, below), so the next Open
// reads next to nothing, and the full one is read, value by value, like
// any older log.
//
// # Value-log GC
//
// A value in the value log stays on disk after it is overwritten or deleted
// until GC rewrites the file it is in. A goroutine runs GC every 10
// minutes, and Close runs it before closing badger: each run rewrites the
// files that are at least half garbage, one per call, until badger finds
// none, at most 16 (which bounds the time Close takes). Badger never
// rewrites the newest file, the one it appends to; a session's file
// becomes an older one at its next Open (badger starts a new file at every
// writable Open), or at its Close when it holds over 1 MiB. A store with a
// damaged/ directory runs no GC (see Damage).
//
// # Memory
//
// Badger's defaults suit a database server: up to five 64 MiB memtables
// and a 256 MiB block cache. memfs is a personal daemon whose session
// already keeps the values it serves, so Open uses less:
//
//   - Two memtables of 16 MiB (Options.MemTableSize), one taking writes
//     while the other is flushed. Badger allocates a memtable whole on the
//     Go heap (16 MiB plus 4.8 MiB of headroom for one transaction), so its
//     size is heap in use from Open on, which the garbage collector paces
//     itself by. It is also what sets the 2.4 MiB transaction limit above.
//   - An 8 MiB block cache (Options.BlockCacheSize). Tables are compressed,
//     so a block read outside the cache is decompressed again; the cache
//     mainly keeps List's metadata blocks and recently read small values,
//     which the session caches once loaded anyway.
//   - Two compactors instead of four.
//   - Blocks of 16 KiB instead of 4 before compression. Badger reads the
//     index of every table at Open, through mappings that keep it
//     resident, and the index has an entry (the block's first key) per
//     block: at 100,000 keys 15.5 MiB of indexes with 4 KiB blocks, 3.6
//     MiB with 16 (RssFile at a mount 52 -> 39 MiB), and a store 14%
//     smaller. A read that misses the block cache decompresses 16 KiB
//     instead of 4 (a random Load of one key: 30 -> 39 µs of CPU).
//
// What the open itself costs: the check of every table (Damage) reads
// and decompresses them all, each block into a buffer that its worker
// reuses, so the check allocates next to nothing; badger's own check
// allocated a buffer per block and held a table's blocks until it was
// done (650 MB allocated at each Open of a 100,000-key store, and a fifth
// of a mount's CPU).
//
// What a session leaves for the next Open (settle.go). Badger compacts,
// in the background of the next session, whatever levels the last one
// left over their sizes, and its writable open reads the newest value
// log through by a mapping that keeps it resident: right after an import
// of 100,000 keys, that made the first mount 580-940 MiB of VmRSS against
// 120-140 for the next ones. So a Close after a session that added more
// than 32 MiB to the tables, with a compaction due, compacts the whole
// tree into its last level first (badger's Flatten: 5-9 s at the end of
// that import, which took 100 s); a tree all in level 0 it leaves so
// (Flatten compacts nothing there). And a Close whose newest value log
// holds more than 1 MiB starts an empty one after it.
//
// A memtable's write-ahead log is replayed into one memtable at the next
// Open if badger did not close, and one written with a larger memtable (an
// older memfs, other Options) would not fit: badger ends the process then.
// So Open, finding such logs, sizes the memtables to hold the largest, for
// that session: by the memtable it was written with (half a log badger
// preallocated), not by the file, which would double the memtable, and the
// next log, at every crash until the log outgrew badger's 32-bit size.
//
// Heap after opening a store of 25,000 keys: 42 MiB with these options
// against 121 MiB with badger's defaults (see BENCHMARKS.md, Badger store).
//
// # Concurrency
//
// A Store is safe for concurrent use. List and Load each read one
// consistent snapshot; Apply reads the versions it checks and writes in one
// transaction. Close waits for the operations in flight; after it,
// every method fails with an error wrapping fs.ErrClosed.
package badgerstore
