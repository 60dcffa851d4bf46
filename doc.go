// Package memfs is the memfs engine: it opens a store of agent memory as a
// live session and serves it as a real directory through FUSE, so that
// people and agents use it with plain tools.
//
// [Open] takes a store (badgerstore, dirstore, or any backend.Store that
// keeps system records) and returns an [FS]: the session (a lazy-loading
// cache whose writes are dirty-tracked in memory), its crash journal
// (replayed at Open when the last memfs did not shut down cleanly), the
// hash-chained event log, and the search index, opened at first use.
// [FS.Mount] or [FS.Serve] serve it at a mountpoint until the context ends
// ([RunMount] does all of memfs mount's part: the mountpoint, the service
// manager, the final flush);
// [FS.Flush] saves what is dirty; [FS.Close] makes the final flush and, when
// the store refuses values, writes them to a recovery directory rather than
// lose them. A program that does not mount uses [FS.Session] directly.
// [ScanImport] and [FS.Import] carry a directory tree into the session,
// [FS.Export] (or [tree.ExportEntries], for a tree read elsewhere) writes one
// out: every node type, hard links, modes, owners, times and user.*
// attributes, counted on a [tree.Tally], with a [tree.Progress] to follow.
//
// The memfs command is a thin layer over this package: flags become
// [Options] and [MountOptions].
//
// # Concurrency
//
// An FS is safe for concurrent use: its session serializes itself (see
// package session), and Flush may run beside requests served through a
// mount. Serve runs in one goroutine; Unmount, Flush and the session's
// methods may be called from others while it runs. Close must be called
// once, after Serve has returned (or without a mount), and nothing may use
// the FS after it. Serve holds no lock while it flushes or unmounts.
package memfs
