// Package session is the in-memory session cache that a memfs mount serves
// from. It has no FUSE import and is a usable library on its own.
//
// # Model
//
// A [Context] sits over one backend.Store. [Context.Bootstrap] lists the store
// once and fills the index with every key and its Info (size, mtime, mode,
// owner); values under the bootstrap prefixes are loaded, the rest stay on
// disk until [Context.Resolve] (or [Context.Open]) asks for them. From then
// on reads are served from memory.
//
// Writes ([Context.Set], [File.WriteAt], [Context.Rename], ...) change the
// cached value and mark the key dirty; [Context.Delete] and renames mark keys
// removed. The store is untouched until [Context.Flush], which sends every
// dirty entry and every removed key in one Apply when the store is a
// backend.Batcher (one atomic step: a rename is never half done), else
// every dirty entry in one Save call and every removed key in one Delete
// call.
//
// Directories are entries of their own (mode, owner, times, extended
// attributes; empty ones too), saved by Flush before the files in them and
// deleted after; a directory no entry names (a store written before
// directories were entries) is implied by the keys under it, and gets an
// entry when it changes.
//
// Every name is persisted, dotfiles too, except the session-only ones
// ([Context.Local]): memfs's reserved names and transient editor files
// ([Options.Transient]).
//
// # Views
//
// The methods of [Context] are the file API. The rest is grouped in views
// over the same Context (views.go): [Context.External] (the external-change
// follower's protocol), [Context.Pending] (what the store has not seen yet,
// its journal and its replay), [Context.Stats], [Context.Access] (permission
// checks for a caller) and [Context.XAttrs].
//
// # Invariants
//
//   - Get never does I/O; an indexed but unloaded key gives nil, false.
//   - Under a memory budget (Options.MaxMemory, budget.go) a clean value
//     no File holds open may be dropped, and loads again at its next
//     open; a value with unflushed changes never is. Open pins a value
//     until Close.
//   - Store I/O never runs while the Context's lock is held: state is copied
//     out under the lock, the I/O runs, and the lock is retaken and the
//     state re-checked.
//   - A change that lands while a Flush runs stays dirty and is flushed by
//     the next one: each dirty file carries the generation of its latest
//     change, and Flush clears only what it saved at that generation.
//   - A failed Flush leaves everything dirty and returns the error.
//   - A [File] (an open handle) follows its file through renames and keeps
//     it readable and writable after it is removed, as POSIX requires of
//     an open descriptor. The Context, not the handle, owns all state.
//   - Values are never modified in place once a reader outside the lock
//     may hold them (a Get result, a Flush snapshot): the next write copies.
//     Only bytes past a shared value's end may be written in place (an
//     append into its spare capacity), which no holder sees: every value
//     handed out is clipped at its length.
//
// # Errors
//
// Missing keys give errors satisfying errors.Is(err, fs.ErrNotExist); invalid
// keys backend.ErrInvalidKey; the rest are the sentinels below (ErrNotDir,
// ErrIsDir, ErrNotEmpty, ErrTooLarge, fs.ErrExist), wrapped with the key.
//
// # Concurrency
//
// A Context and its Files are safe for concurrent use. Two locks: flushMu
// serializes Flush and is taken before mu, which guards the session's
// state. No I/O runs under mu: store loads and saves, journal appends and
// truncates, the event sink (Options.Events), Options.Saved, the derived
// attributes (Options.Derived) and the redactor all run with mu released;
// state is copied out under the lock and re-checked after. (The one
// exception is a warning logged under mu when Bootstrap skips a key it
// cannot index.) A Flush holds
// flushMu across its store and journal I/O, so flushes wait for each
// other, never a reader or a writer. Its phases (flush.go) alternate: it
// plans under mu (what to send, at which generations), seals and persists
// without it, commits under mu (what was saved at its planned generation
// is clean), then publishes its events and settles the journal without it.
//
// What mu guards is grouped by concern (session.go: c.mu.tree,
// c.mu.pending, c.mu.conflict, c.mu.echo, c.mu.announce, ...), each part
// in its own file with its own ...Locked methods; the one lock stays, as
// the invariants span the parts.
//
// Reads take mu shared: lookups (Get, Has, Stat, [Context.Entry]) and the
// full scans (Keys, [Context.Entries], [Stats.Counts], [Pending.Unflushed],
// [Pending.Sealed]), which run beside each other and wait only for
// writers. A scan that hands out values marks them shared (an atomic
// flag) so that the next writer, under the exclusive lock, copies before
// changing one: a value handed out never changes under its reader. For
// one key, Entry costs a map lookup where Entries scans every file.
//
// The shared-value rule covers every value that leaves the lock: those of
// Get, Entry, Entries, Unflushed and Sealed, a flush's save (and
// Options.Saved), and every journal record (Commit, Set, Put, a rename,
// a link). Each is handed out by one function (file.shareRLocked), which
// marks it shared and clips its capacity at its length. A writer copies a
// shared value before changing any byte below its length: a write inside
// it, a write that starts inside it and ends past it (the buffer may have
// the capacity, but growing in place would then overwrite bytes that a
// holder sees), a truncate that shrinks it. A change that only adds bytes
// past its end (an append, a write past a hole, a truncate that extends)
// grows it in place when the capacity allows and keeps it shared: a
// holder's length is never more than the value's (shrinking a shared
// value copies it), so it sees none of the new bytes, and a holder that
// appends copies, its slice being clipped. Appends, the hot path, never
// copy for sharing.
//
// Change callbacks registered with [Context.Watch] run synchronously after
// the lock has been released; they must not block and must not call into
// a kernel that may wait on this Context (queue the work instead). Two
// goroutines' changes may reach the callbacks in the opposite order from
// the one in which they took the lock.
//
// The announcements of the external-change helper protocol (announce.go:
// [External.AnnounceCreate], [External.AnnounceRemove]) are state of the
// Context like any other, under its lock: the mount's request that takes
// one ([External.CreateAnnounced], [External.RemoveAnnounced]) and the
// announcer's fallback ([External.ApplyAnnounced]) each take it whole, so
// an announcement is carried out once, by one of them.
//
// # Shared stores and conflicts
//
// Several mounts may share one store (etcd). A flush states the version
// each save replaces and each delete removes (the version a file was
// loaded from or last saved as, with the store's revision: Info.Rev);
// what another writer changed since is a conflict. Options.OnConflict
// chooses what happens: KeepBeside (the zero value) leaves it to the
// store, which keeps the other version beside the key; KeepBoth, Merge
// and LastWriterWins make the flush fail on a conflict without writing
// anything (Batch.FailOnConflict), resolve each conflicting key in the
// session and flush again, a bounded number of rounds (conflict.go). The
// version a change was made on is journaled with it (journal.Record.Bases),
// so a change replayed after a crash still meets the conflict. A clean
// file shows the store's revision as user.memfs.rev. A store that cannot
// be reached (backend.ErrUnavailable) fails the whole flush: everything
// stays dirty and journaled, and fsync reports EIO at the mount.
//
// # Example
//
//	c := session.NewContext(store, session.Options{})
//	if err := c.Bootstrap(ctx, "memory/"); err != nil { ... }
//	c.Set("memory/today.md", []byte("- learned X\n"))
//	if err := c.Flush(ctx); err != nil { ... }
package session
