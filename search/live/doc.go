// Package live is the live search index of a session (package session):
// the persisted index of package search kept up to date with the store (it
// follows each flush and each external change, and saves in a worker),
// searched together with an overlay of the session's unflushed changes and
// filtered by what the caller may read; with an embedder it also keeps a
// vector per document and ranks by meaning as well as by words (hybrid
// search). [Lazy] holds a [Service] that opens at its first use. The
// index's format, its ranking and the query syntax are package search's.
//
// # The service
//
// [OpenService] loads the persisted index and repairs it as search's Staleness
// says (a corrupt one or one of an older format, and any with
// ServiceOptions.Rebuild, is rebuilt),
// then follows the session: [Service.Saved] is the session's
// Options.Saved hook (the values as the store now holds them), and a
// session watch, kept from OpenService to [Service.Close], takes the
// external changes. Both only queue; a worker goroutine applies the queue
// to the index and saves it ServiceOptions.SaveDelay after the first
// change of a burst (a crash in between leaves stale stamps, which the
// next open repairs). [Service.Search] applies the queue, indexes the
// session's unflushed values into an overlay index built for that search
// alone (never saved: an unflushed secret never reaches the disk, and
// every index redacts with ServiceOptions.Redactor, which is required),
// drops base hits that an unflushed change shadows and hits the caller in
// its context (session.CredFrom) may not read, asking the base for more
// until TopK pass, and orders the rest by score, then key. An overlay's
// scores come from its own few documents, so they are comparable with the
// base's only roughly. [Service.Answer] answers a search.Request (text,
// or JSON lines: [FormatResults]), and [Lazy.File] serves .memfs/search/NAME
// (the request search.ParseName reads in NAME). Close
// stops the watch and the worker, then saves.
//
// # Ignore rules
//
// What internal/ignore excludes by name (VCS metadata, the session's
// .memfsignore files) is never in the base, the overlay or a hit; a
// binary value is in the base without terms (search.IsBinary). The rules
// are read at open, and again at the next search or apply after the
// session says an ignore file may have changed (a write, remove or rename
// of one; any rename or rmdir). Hits are filtered by the rules as they
// are at once; the base follows when the change of an ignore file is
// flushed: reconcile walks the store, drops what the rules now exclude
// and indexes what they no longer do.
//
// # Vectors
//
// At open, the vectors are loaded and brought up to date as the BM25
// stamps are: a document of the BM25 index whose vector is missing or has
// another stamp is queued for embedding, and a vector of a key the index
// no longer has is dropped. Each embedder has a set of vector records
// of its own (search.LoadVectors reads the current one's): another
// embedder's set is neither read nor touched, so that switching back to
// it, or a second mount of the store with another model, embeds only
// what changed meanwhile; a shard that does not decode is ErrCorrupt,
// and the embedder's vectors alone are made again (no BM25 shard, and no
// other set, is touched); the other way round, a BM25 index rebuilt
// because it is corrupt or of an older format (search's format version)
// keeps every set, whose stamps still match the values. Rebuild deletes
// every set with the rest of RecordPrefix. An embedder opened at its first use (embed.Lazy: the
// default table) opens in OpenService, not before; one that does not
// open (logged) leaves the Service keyword-only, and the fusion's floor
// is the embedder's own (search.FusionOf) unless ServiceOptions.Fusion
// says otherwise.
//
// Embedding may be slow (a remote model). Saved still only queues; the
// worker, applying the queue to the BM25 index, queues each changed
// document's redacted text for a second goroutine, the embed worker,
// which embeds them in batches of 64, a shard at a time (the repair's
// documents are read from the store when their turn comes), and has the
// worker save the changed vector shards; while more than a batch waits,
// a save holds back a shard with documents still queued, so that a bulk
// embedding writes each shard about once, not most shards at every save
// (measured: 1,280 documents through a model taking 20 ms a batch, 831
// vector record writes before, 65 after); a crash meanwhile loses the
// vectors of the shards held back, which the next open makes again, and
// Close saves every shard. After a failure it retries, waiting 1 s
// doubling to a minute. A batch that fails twice is embedded one document at a
// time: when some succeed, those the model refuses alone are dropped from
// the queue and counted (they rank by BM25), so one text a model cannot
// take never holds up the rest; when none succeeds the model is down and
// nothing is dropped. [Service.VectorStatus] reports the embedder, the
// number of vectors, the documents pending and refused, and the last
// failure. A search never waits for the queue: a document not embedded
// yet ranks by BM25 alone. The query, first and alone, then at most 256
// of the unflushed values the search may return, are embedded at search
// time, their vectors cached by the SHA-256 of their text (4096 at most),
// by at most 4 search-time embeds at once, and a search waits at most
// ServiceOptions.EmbedWait ([DefaultEmbedWait], 1 s) for them: a query
// whose vector is not ready ranks by keyword, an unflushed value whose
// vector is not ready ranks by BM25, and the embedding goes on to fill
// the cache for the next search.
//
// # Concurrency
//
// A Service is safe for concurrent use, Close included (a second Close
// does nothing). It has two mutexes, taken in this order: applyMu
// serializes the moving of queued changes into the base index (so they
// go in in order), and mu guards the queue, the dirty flag and the closed
// flag (and the embedding queue), held only to copy them; the Index's
// own lock comes last (a vector index's lock comes after mu and before
// the Index's: a filtered vector search asks the Index). No
// Service lock is held while it calls the session or the store, so Saved,
// called by a flush with the session's flush serializer held, and the
// watch, called with no session lock held, only take mu for an append:
// a flush never waits for indexing or for a save. The worker is the only
// goroutine a Service starts without an Embedder; with one, the embed
// worker and the search-time embeds (which may outlive their search) are
// the others. Close cancels the embeds and waits for all of them to end. Searches run
// on their callers' goroutines and may run together, and with the worker.
//
// A Lazy is safe for concurrent use. Its mutex serializes opening and
// Close and is held across the open's I/O (loading and repairing the
// index): the first callers wait for one open, later ones read the open
// Service without a lock. Saved never takes it, so a flush never waits
// for an open: a flush that ends during the open is kept (under a second
// mutex, held for no I/O) and queued on the Service before it is
// published, so that the open's repair, which may have read the store
// before that flush, never leaves it out, and no later flush overtakes
// it. After Close no Service opens; a Service opened before stays
// returned by Get.
package live
