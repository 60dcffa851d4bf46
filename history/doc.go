// Package history is the storage layer of memfs's history (issue 29): a
// content-addressed, deduplicated value store and one immutable version
// record per change of a key, both in the store's system records, so that
// history is the same on badger, dir, etcd and memstore and moves with
// the store. It sits below the session and knows nothing of it: the flush
// asks it for records and writes them in its own steps (see "Writing").
//
// # Values
//
// A value's address ([Addr]) is the SHA-256 of its bytes: the event log's
// sha256 of the same (redacted) value. A value under [Whole] (32 KiB) is
// one object; a larger one is split by FastCDC
// (github.com/PlakarKorp/go-cdc-chunkers v1.1.0, algorithm fastcdc-v1.0.0, min 2 KiB, normal
// 8 KiB, max 32 KiB: measured in BENCHMARKS.md, "History: choosing the
// chunker") into chunks, each an object, and a manifest lists them. An
// object is named by its own hash, so an identical value or chunk is one
// record however often it is stored; an append to a large value adds the
// chunks after the last unchanged boundary and a manifest. [Store.Get]
// checks every object against its name, and the whole value against its
// address: a damaged record is an error naming it (errors.Is(err,
// backend.ErrCorrupt)), never wrong bytes.
//
// # Versions
//
// A [Version] is one change that reached the store: the event's seq, the
// op, the key (and the old key of a rename), the value's address, size,
// mode, owner, times, hard-link group, the user.memfs.* attributes, the
// writer and the session. A version is never rewritten; a delete is a
// version too, so the versions before it stay listed. [Store.Versions]
// follows renames: a rename's version is stored under the new name and
// names the old one, whose versions before the rename come first.
//
// The previous version (Version.Prev) is not stored: it is the version
// before in the key's index (or, for a rename, the old key's last), which
// [Store.Versions] fills in. Stored, it would be computed by the writer
// from what it last saw, and two mounts of one shared store that change
// one key at once would each name a predecessor that skips the other's;
// the index, ordered by the event log's seqs, is exact.
//
// # Layout
//
// Every record is under history/, a system record (backend.SysStore):
//
//	history/o/<sha256>        an object: a whole value under 32 KiB, or a chunk
//	history/m/<sha256>        the manifest of a chunked value: the line
//	                          "memfs-manifest 1 fastcdc-v1.0.0 2048 8192 32768 SIZE COUNT",
//	                          then per chunk its SHA-256 and length (36 bytes)
//	history/v/<kh>/<seq>      a version, binary (versionbin.go; JSON in a store
//	                          an older memfs wrote, read as well); kh is 128
//	                          bits of the SHA-256 of the key in hex (32
//	                          digits), seq 20 digits
//	history/s/<seq>           a group: "SEQ OP KH [OLDKH]" per version of one
//	                          append to the event log, named by its first seq
//	history/i/<seq>           an index: the hex address of a value holding
//	                          the namespace as of seq (a Version per line, by key)
//	history/gc/pending        the collection's mark: the objects and manifests
//	                          no version named at its time (see Store.Collect)
//	history/start             the seq history starts after: the event log's head
//	                          when the store first recorded history (Begin)
//	history/n/<name>          a named snapshot (snapshot.go)
//	history/damaged/<name>.<h>  a damaged object or manifest as found, kept when
//	                          a Put writes the right bytes over it
//
// The reasons:
//
//   - Objects by hash, values under 32 KiB whole: dedup for free, a note
//     is one record, and [Store.Get] tries the object first and the
//     manifest only when there is none (a large value's one extra miss).
//     A manifest is binary: in JSON and hex it would cost more per version
//     than the chunks an append adds.
//   - Versions in binary: a note's version is 164 bytes where its JSON
//     (field names, the address in hex) was 403, and the records are
//     most of what history writes for a flush beyond the values
//     (BENCHMARKS.md). The key is in the record, so a record is whole on
//     its own (a hash collision is detected, a record can be checked).
//   - Versions under a hash of the key: every name has one short length
//     (a key may be tens of KiB, longer than a record name may be), and a key
//     never makes a directory of another key's records on a directory
//     store ("a" and "a/b"). Seqs are zero-padded, so a key's versions are
//     one prefix listing in seq order ([Store.Versions]: a listing and a
//     load per version, loads in parallel; the key is checked in each
//     record, so a hash collision is never mixed in).
//   - Groups and indexes: the namespace as of a seq ([Store.At]) is
//     the latest index at or before it ([Store.Index]: the
//     namespace stored as a value, so chunked and deduplicated: one
//     written 5 changes after another in a 2,000-key namespace adds 17 %
//     of it, TestIndexDedup) with the group lines after it folded in
//     (a group is ~50 bytes per version, one record per flush), and one
//     version record loaded per key changed since. No key's other
//     versions are read; a rename takes the old key out. Without a
//     index At folds every group. Indexes are derived: At gives
//     the same without them, so a crash in one loses nothing, and whoever
//     writes them (every few thousand seqs, at a snapshot) needs no lock.
//
// # Writing
//
// [Store.PlanValue] and [Store.PlanVersions] do no I/O: they return the
// records, so that the caller writes them in the step it must. Objects
// and manifests are named by content and may be written any time before
// the version that names them, also twice (a retry, two mounts storing
// one chunk: the same bytes under the same name); [Store.Missing] leaves
// out those the store holds, [Store.WriteMissing] is Missing and
// [Store.Write] with the check of one part overlapping the write of the
// part before (what the flush and [Store.Put] use). Write batches records into SwapSys calls where the store
// has them (64 records, 1 MiB each: etcd's transaction limits), since one
// SaveSys per 8 KiB chunk is one transaction (badger) or two fsyncs (dir)
// each: an 8 MiB value took 6.9 s on badger that way, 0.7 s batched; on
// a backend.SysBatchSaver without SwapSys (the dir store) it uses
// SaveSysBatch (one fsync per file, concurrently, and one per directory),
// a manifest or group in a batch after the records it names. Objects no version names (a flush that failed after
// writing them) cost space until a collection, never correctness. A
// version needs its event's seq, which the event log gives at its
// append: its records belong in the same step as the append (on a
// backend.SysSwapper, the one SwapSys of the events), or right after it.
//
// # Retention, collection, redaction, verification
//
// [Store.Collect] applies [Retention] (every version 30 days, the last 10
// of a key, then one a day for a year, one a month beyond; per prefix by
// [RetentionOptions]; snapshots pin each key's version at their seq) and
// removes objects and manifests nothing references at two marks a grace
// period apart; its doc says why nothing referenced is ever removed.
// [Store.Redact] blanks one version's bytes and keeps its record;
// [Store.Verify] reads every version's value back and reports damage.
//
// # Who records, and when
//
// The engine records (memfs's histrecord.go, in the event sink, where a
// flush's events reach the event log): the values' objects before the
// append, the versions and the group after it. Every change that reaches
// the store through a session is recorded there, whichever door it came
// by: a write, rename, delete or attribute change (mode, owner, times,
// user.memfs.* attributes) of a flush, a conflict's outcome, a journal's
// replay (its flush), and another writer's change that the session
// rewrites (a dir store's follower redacting it). A version is recorded by
// the mount that made the change, once: two mounts of one etcd namespace
// each record their own changes; one that sees the other's (Refresh)
// records nothing. An external writer's change that memfs only takes in
// has no event, and so no version (its seq would be a guess).
//
// A crash between the append and the versions loses none: at open, the
// events after the last group (and after [Store.Start]) whose version is
// missing are recorded from the event log (key, op, size and sha256 are
// in the event; the value in history since before the append), with the
// store's attributes when it still holds that value ([Store.Covered],
// [Store.Recorded]). On a shared store, a mount opening while another is
// between its append and its versions may record that one's versions
// first, from its events; the other's write then replaces them with the
// same seq and key, and its full attributes.
//
// A flush is one step on the store, so its events' order within it is a
// matter of record: the engine puts each rename before what takes its old
// name, and [Store.At] reads a swap of two names in one group as one step.
//
// # Concurrency
//
// A Store is safe for concurrent use; it holds no state but its store.
//
// # Example
//
//	h := history.New(sys)
//	p := h.PlanValue(value)                        // in the flush, before the append
//	_, err := h.WriteMissing(ctx, p.Records)      // Missing, then Write
//	recs, err := h.PlanVersions([]history.Version{history.NewVersion(seq, history.OpWrite, &entry, p.Addr)})
//	err = h.Write(ctx, recs)                       // with the events
//	vs, err := h.Versions(ctx, "memory/notes.md")  // oldest first
//	data, err := h.Get(ctx, vs[0].Addr)
package history

import (
	"sync"

	"github.com/memfs/memfs/backend"
)

// Store is the history kept in one store's system records.
type Store struct {
	sys  backend.SysStore // immutable
	bufs *sync.Pool       // the chunker's scan buffers
}

// New returns the history kept in sys.
func New(sys backend.SysStore) *Store {
	return &Store{sys: sys, bufs: newBufs()}
}
