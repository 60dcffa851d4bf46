// Package eventlog is memfs's append-only, hash-chained log of the changes
// that reach the store: each flush appends one [Event] per value written,
// key deleted, key renamed or attributes changed. The log lives in the
// store's system records ([backend.Store.SaveSys] and friends) through the
// small [Sys] interface, so it is the same on every backend.
//
// # Layout
//
// The log is a sequence of chunks. A chunk is the system record
//
//	events/<first seq, 12 digits>-<first event's time, UTC 20060102T150405.000000000Z>
//
// holding up to [ChunkEvents] events as JSON lines: one event per line, each
// line ending in "\n", the JSON that encoding/json produces for Event (fields
// in declaration order). Every chunk but the last is full. The concatenation
// of the chunks in name order is the log as one JSONL stream, which
// [Log.ReadAt] serves (the mount's read-only .memfs/events.jsonl).
//
// The chunk names are the index. ListSys("events/") gives every chunk's
// first seq, first time and size without reading one, so [Log.Query] finds
// the chunks that can hold a page at the end, at a seq (Before, After) or at
// a time (Since, Until) by binary search over the names, and reads one or two
// of them. The Log keeps the names, sizes and the last chunk (the tail) in
// memory; a query near the end, and a reader following the stream's end,
// often reads nothing at all.
//
// The record events.head holds {"seq":N,"hash":"..."}: the seq and line hash
// of the last event, saved after each append.
//
// # Hash chain
//
// The hash of an event is the SHA-256 of its line without the newline. Each
// event's Prev is the hex hash of the event before it; the first event's
// Prev is "". Seqs run 1, 2, 3 ... without gaps across chunks, and times
// never go backwards: [Log.Append] moves an earlier time up to the previous
// event's.
//
// # Atomicity
//
// SaveSys replaces a record atomically and durably, and a chunk is only ever
// replaced by itself with lines added at the end. Append saves each changed
// chunk (the tail, then any new ones, in seq order) and then the head. A
// crash therefore leaves each chunk old or new, never half written: the log
// is whole, possibly holding events of the interrupted Append and a head
// behind its last event (which [Verify] reports as a warning). If a save
// fails, Append returns the error and the Log in memory is as it was; the
// retry rewrites the tail and writes new chunks at the same seqs. Those get
// names no earlier than the failed attempt's (Append never goes back in
// time, not even to before a failed attempt), and of two chunks with the
// same first seq the later name wins; the Log also removes the leftovers
// after the next successful Append.
//
// [Open] nonetheless treats the end of the log with suspicion, as a store
// with weaker guarantees or a hand edit can leave it torn: a last line
// without its newline, or that does not parse or does not chain to the line
// before it, is cut, with a warning in the log, and the chunk saved back. A
// last chunk that does not continue the log at all (the leftover of a
// failed Append) is dropped. Lines up to the one the head vouches for are
// never cut: a break among them is evidence for Verify, not damage to
// repair.
//
// # What Verify detects
//
// [Verify] reads every chunk and reports the first break, naming the event
// it puts in doubt: an edited event (its hash no longer matches the next
// event's Prev, or for the last event the head), a removed event or chunk (a
// gap in the seqs), events removed at the end (the head is past the end), a
// renamed chunk, a torn or unparseable line, time going backwards.
//
// Open logs a warning when the head does not match the end of the log, but
// the next Append writes a new head over it: run Verify (memfs log --verify)
// before mounting a store whose log is in doubt.
//
// Verify cannot detect a rewrite of the whole chain from some event on, head
// included: that is a valid log. Detecting it needs an anchor kept outside
// the store, such as a copy of an earlier head (its hash must still be the
// hash of the event with its seq). Nor can it tell that the last events
// after the head are genuine, or notice that the whole log was deleted.
//
// # Concurrency
//
// A Log is safe for concurrent use. Appends are serialized; queries and
// reads run beside them on a snapshot and never wait for an Append's I/O.
// One process at a time may have a store's log open (the store's lock sees
// to that).
//
// # Example
//
//	l, err := eventlog.Open(ctx, store, logger)
//	...
//	_, err = l.Append(ctx, []eventlog.Event{{Op: eventlog.OpWrite, Key: "memory/global.md", Size: 42, SHA256: sum, Session: id}})
//	...
//	page, err := l.Query(ctx, eventlog.Query{KeyPrefix: "memory/", Limit: 20})
//	for page.More { // older events
//		page, err = l.Query(ctx, eventlog.Query{KeyPrefix: "memory/", Limit: 20, Before: page.Events[0].Seq})
//		...
//	}
package eventlog
