// Package etcdstore is a backend.Store on an etcd v3 cluster: a store that
// several mounts, on several machines, share. It has every capability:
// backend.SysStore, backend.Walker, backend.Versioned, backend.Batcher,
// backend.Watcher, backend.SysSwapper, backend.Presence and
// backend.Collector.
//
//	cfg, err := etcdstore.ParseURL("etcd://10.0.0.1:2379,10.0.0.2:2379/team")
//	if err == nil {
//		err = etcdstore.ConfigFromEnv(&cfg) // ETCDCTL_CACERT, ETCDCTL_USER, ...
//	}
//	st, err := etcdstore.Open(ctx, cfg)
//
// # Layout
//
// Everything lives under /memfs/<namespace>/, and a key never leaves it:
// every key is checked with backend.CheckStoreKey, and the etcd key is the
// prefix followed by the key's bytes.
//
//	m/<key>     the record: Info as JSON (mode, owner, device, the three
//	            times, hard-link group, xattrs, size) and, for a value over
//	            64 KiB, the SHA-256 names of its chunks
//	v/<key>     the value, up to 64 KiB (absent when empty or chunked)
//	c/<sha256>  a chunk of at most 512 KiB, shared by every value that holds it
//	s/<name>    a system record: the data up to 1 MiB, else a list of chunks
//	p/<id>      a registration (backend.Peer as JSON), on the store's 10 s lease
//	g/mark      where Collect last looked
//	g/lead/...  the election of the namespace's collector (Lead)
//	g/w/<id>    a save in progress that writes chunks (on the store's lease)
//
// Info.Rev is the ModRevision of m/<key>. A value's chunks are written
// before the transaction that writes the record naming them, so a value
// appears whole or not at all. Chunks are left when a key is deleted or
// replaced (another record may hold them); Collect removes those that
// no record names, after a grace period (Config.ChunkGrace), none that a
// save in progress wrote (its g/w/ intent, which the save's transaction
// checks: a save whose lease ended fails instead), and none while a
// record is damaged. The mounts of a namespace elect one of
// them (Lead) to collect.
//
// # Limits
//
// etcd takes at most 128 operations and 1.5 MiB in one request. Each
// saved or deleted key takes two operations (m/ and v/). Save splits a
// large batch into several transactions (each entry stays atomic); Apply
// never splits: a batch of more than 64 keys (saves, deletes and conflict
// copies together) or 1 MiB of records and inline values is refused with
// backend.ErrBatchTooLarge before anything is written. A server started
// with a larger --max-txn-ops does not raise these limits.
//
// # Conflicts
//
// SaveIf and Apply with Expect read the records they expect, decide, and
// commit in one transaction that compares each record's ModRevision with
// the one read; when another writer changed one in between, they read and
// decide again. A version found that does not match the expected one
// (backend.Version.Matches: revisions when both have one) is copied to
// backend.ConflictKey in the same transaction, or, with
// Batch.FailOnConflict, nothing is written and a *backend.ConflictError
// names every such key.
//
// # Sharing
//
// A namespace is meant to be open in many processes at once: Open takes
// no lock, and backend.ErrStoreInUse never comes from it (the
// conformance suite's InUse subtest is skipped, saying so). Writers of
// one key meet through the conditional writes above; Presence tells who
// they are.
//
// # Errors
//
// Every request is bounded by Config.RequestTimeout (5 s by default). A
// request that times out or finds no reachable server fails with an
// error wrapping backend.ErrUnavailable; nothing was written by the
// request that failed (a Save split in several transactions may have
// written the ones before it). The caller's own cancellation is
// reported as it is. A record that does not decode is left out of List
// and Walk and reported by Damaged; Load of it, of a chunk that is missing
// or does not match its SHA-256, or of a value of the wrong length fails
// with an error wrapping backend.ErrCorrupt that names the key; the other
// keys stay readable. Open fails within DialTimeout plus RequestTimeout,
// wrapping backend.ErrUnavailable, when no server answers. After Close
// every method fails with an error wrapping fs.ErrClosed.
//
// Nothing in this package logs: it never writes a value, a key's content or
// a credential anywhere but to etcd. The etcd client's own logger is
// silenced.
//
// # Watch
//
// Watch follows m/ from the revision of the last List or Walk, so that a
// reader that listed and then watches misses nothing. The client resumes a
// watch broken by a lost connection from the last revision it delivered.
// When etcd has compacted the revisions a watch would resume from, the
// watch sends Change{Lost: true} and continues from the oldest revision
// left.
//
// # Concurrency
//
// A Store is safe for concurrent use. One mutex guards its own small state
// (closed, the last listing's revision, the damaged keys, the presence);
// no request runs under it. The presence has a mutex of its own, taken
// after the store's, never with a request running. Each Watch runs a
// goroutine, and the first Register or save of a chunked value one more
// (the store's lease's keep-alive);
// Close ends them and waits for them; so does each Lead that elected the
// process (its election's lease).
package etcdstore
