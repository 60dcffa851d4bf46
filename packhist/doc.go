// Package packhist keeps what a context pack reads, version by version,
// beside memfs's event log, so that a pack can be rebuilt as of an
// event-log position (memfs context --at SEQ): [StateAt] gives the
// [contextpack.Source] of the pack sources as they stood when the log's
// head was seq, and contextpack.Build over it gives the pack a live build
// would have given then.
//
// The event log records each flushed change (seq, op, key, size, SHA-256
// of the value) but neither the values nor a file's mtime, mode or
// attributes. The [Archiver] keeps them for the pack sources only:
// keys under the always-loaded prefixes (memfs Options.Bootstrap,
// "memory/" by default; "" is every key), every skills/NAME/SKILL.md,
// and memory/summaries.jsonl ([Tracks]).
//
// # Records
//
// Everything lives in the store's system records, so it is the same on
// every backend:
//
//	packhist/v/<sha256 hex>    a value, as the store got it
//	packhist/e/<seq, 20 digits> JSON of a Record: the key, the value's
//	                            SHA-256, mtime, mode, owner and the
//	                            user.memfs.* attributes, as flushed
//	packhist/pruned            {"through":N,"window":W}: records of
//	                            seqs up to N that the last W events no
//	                            longer need were removed
//	packhist/g/<seq, 20 digits> {"seq":N,"keys":[...]}: pack sources the
//	                            store held at an open whose log head was
//	                            N that the log does not explain (a gap)
//	packhist/baseline          the pack sources' state at the seq the
//	                            last check at open replayed the log to
//	                            (baseline.go): the next replays from it
//
// A Record is written for each write, rename (under the new key) and attr
// event of a pack source; a delete needs none (the log says it). The
// values are those the session flushed, which it has redacted already: no
// raw secret the session kept out of the store reaches the archive. Only
// the user.memfs.* attributes are kept (importance, tags, skill ...),
// never other user attributes, whose contents memfs does not check.
//
// [Redact] (memfs's redaction of a version of history) marks the record
// and removes the value unless another record names the same bytes: a
// rebuild that needs it fails with [ErrRedacted].
//
// A value over Options.MaxValue (DefaultMaxValue, 64 KiB) gets its record
// but is not copied: a rebuild reads it from the store's key while the
// store still holds that version (its SHA-256 says so), and otherwise
// fails with ErrNotKept. Without the limit the archive would double a
// store of large files (and move where a backend's value log keeps them).
//
// # Crashes and failures
//
// The archive is written off the flush path, by one goroutine, after the
// log has numbered the events ([Archiver.Add] never blocks and never
// fails a flush). A crash between the log's append and the archive's
// write, or a write the store refuses (logged, never retried for ever),
// loses that event's record: a rebuild that needs it fails with an error
// wrapping [ErrNotArchived] naming the key and seq, never a different
// pack. A change memfs took from another writer (an external write's
// event carries no flushed entry) is archived from the store's key, as
// long as the store still holds the version the event names (by its
// SHA-256); another writer's version that a conflict event records is
// not archived.
// When the store falls behind the flushes by more than [MaxQueued] bytes
// of values, what does not fit in the queue is not archived, the same way.
// A value written before its record, whose record then never came, is
// an orphan the pruning leaves in place (it is small, and harmless).
//
// # The check at open
//
// [Archiver.Baseline] (memfs calls it at each writable Open) compares the
// pack sources the session found with what the log's events say they
// are. A version the log names whose record is missing (a store older
// than the archive, a crash before the archive's write) is back-filled
// from the store, checked against the event's SHA-256. A source changed,
// made or removed while no memfs flushed it (files put in a directory
// store by hand, a store filled before its event log existed) is written
// as a gap: a rebuild as of that open's head or later fails, naming the
// key, until an event changes it. The check replays the whole log on the
// Archiver's goroutine (a few hundred thousand events a second); Close
// drops it rather than waiting.
//
// # Retention
//
// The archive keeps what a rebuild of any of the last Window events
// ([DefaultWindow] by default) needs: every record of a seq after
// head-Window, and for each pack source that existed at head-Window the
// record of its version then; values as long as a kept record names
// them. So it holds at most Window records plus one per live pack
// source, whatever the age of the store. The Archiver prunes after every
// Window/4 archived events; a prune reads the events since the last one's
// cut and the window (the first in a process reads the log from the
// start). A gap record goes once an event changed each key it names
// before the window. A rebuild of an older seq works as long as
// every version it needs is still kept (a file unchanged since is); when
// one is not, it fails with an error wrapping [ErrNotKept] that names the
// key, the seq and the window.
//
// # Verification
//
// [StateAt] replays the log from its first event to seq and checks every
// record against it: a record's key and SHA-256 must be the event's, and a
// value's SHA-256 must be the one its record names; a mismatch is an error
// wrapping [ErrMismatch] naming the key, and the value is never used. A
// log that lost events before seq (a break event: see eventlog's
// "Damage") cannot be replayed faithfully past them, and is an error too.
//
// # Shared stores
//
// On a store many mounts share, each one's Archiver writes the records of
// its own flushes; the others' changes reach this log as their events and
// their records as they write them. A prune keeps every record past the
// head its log has seen, and removes a value only when a record it
// removed names it and no kept record does, so one mount never takes a
// value another's newer record needs; a value saved by another mount
// whose record is not written yet, while this one prunes the last record
// naming the same bytes, is the one race left (that rebuild then fails
// with ErrNotKept, never a different pack).
//
// # Example
//
//	a := packhist.NewArchiver(store, log, packhist.Options{Prefixes: bootstrap})
//	defer a.Close(ctx)
//	a.Add(items) // after each eventlog Append: the stored events and the flushed entries
//	...
//	a.Sync(ctx)
//	st, err := packhist.StateAt(ctx, store, log, seq, bootstrap)
//	if err != nil { ... } // ErrOutOfRange, ErrNotKept, ErrNotArchived, ErrMismatch
//	pack, err := contextpack.Build(ctx, st, contextpack.Options{Prefixes: bootstrap})
//
// # Concurrency
//
// An Archiver is safe for concurrent use; its writes run on its own
// goroutine. A State is for one build at a time (contextpack.Build calls
// it from one goroutine).
package packhist
