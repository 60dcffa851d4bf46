// Package eventlog is memfs's append-only, hash-chained log of the changes
// that reach the store: each flush appends one [Event] per value written,
// key deleted, key renamed or attributes changed. The log lives in the
// store's system records ([backend.SysStore.SaveSys] and friends) through the
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
// of the last event, saved after each append. Copies of damaged records are
// kept under events.damaged/ (see Damage).
//
// [Log.RecordNames], [Log.RecordSize] and [Log.ReadRecord] serve the chunks
// and the head as the store holds them, for a reader that opens the log
// through a mount (.memfs/events/ and .memfs/events.head): the names and
// sizes from memory, the head and the tail too.
//
// # Masked views
//
// A reader who may not see every key (a mount's caller other than root)
// reads the stream and the chunks masked ([Log.ReadMaskedAt],
// [Log.ReadRecordMasked]): each line about a key it may not see is the
// placeholder {"seq":N,"hidden":true}, padded with spaces to the line's
// length, so that sizes, offsets and the run of seqs are the same for
// every reader. [DirSys] opens such a view (a mount's .memfs/) as a
// read-only Sys, [Placeholder] recognizes its hidden lines,
// [Log.QueryVisible] pages past them and [VerifyMasked] checks what the
// view lets it check.
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
// (On a shared store an Append is one atomic SwapSys instead: see "Many
// writers". The rest of this section is about the other stores.)
//
// SaveSys replaces a record atomically and durably, and a chunk is only ever
// replaced by itself with lines added at the end (or, once a copy of it is
// kept, cut short of a damaged end: see Damage). Append saves each changed
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
// # Damage
//
// A damaged log is never repaired by deleting what cannot be read. [Open]
// writes nothing: it finds the end of the log, keeps out of the Log what
// it cannot continue from, logs it, and reports it ([Log.Damage]). The
// first [Log.Append] after it records the damage, before its own events,
// in this order:
//
//  1. It saves a copy of each damaged record, whole and as found, to
//     events.damaged/<record name>.<16 hex digits of its SHA-256>, e.g.
//     events.damaged/events/000000002049-20250601T120000.001000000Z.3fa2c1d09b7e5a44
//     or events.damaged/events.head.<hash>. The name is outside events/, so
//     the index never takes it for a chunk; equal bytes get the same name,
//     so a retry saves the same copy again.
//  2. It appends one event of op [OpBreak] per damaged record, then the
//     caller's events. A break event chains to the last intact event (its
//     Prev) and takes the next seq, so the chain stays verifiable and the
//     break is part of the history: Key names the damaged record, Size and
//     SHA256 are those of the record as found (of its copy), and [Break]
//     says what was wrong, which bytes, where the copy is, and which events
//     are in doubt.
//  3. Only then, once the break events and the head are durable, it removes
//     from events/ the chunks it took out of the log.
//
// What counts as damage, and what Open does with it:
//
//   - The end of the last chunk: each line must parse and chain to the line
//     before it (the first line must match the chunk's name and, when the
//     head vouches for no line of the chunk, chain to the chunk before).
//     The log keeps every line up to the last one that does, or that the
//     head record vouches for; what follows (a torn last line without its
//     newline, lines that do not parse or chain) is the damaged end: the
//     chunk is cut there in memory and, after its copy is saved, rewritten
//     cut by the first Append. A torn last line is the one ordinary case —
//     a write that did not complete on a store without atomic replacement —
//     and is logged as a warning; everything else as an error. Both are
//     recorded.
//   - A last chunk with no line that continues the log is taken out whole
//     (copied, then removed), and the chunk before it examined the same way.
//   - The head record, which the next Append replaces, when it does not
//     parse, names an event past the end of the log, or does not match the
//     event it names.
//   - Damaged lines that intact events follow (in the last chunk, which is
//     what Open reads) stay where they are, as evidence for [Verify]; the
//     chunk is sealed (never written again: the next event starts a new
//     chunk; unless its end is cut too, when it is rewritten once, after its
//     copy) and nothing is recorded. So is damage Open does not read:
//     inside earlier chunks, or a missing chunk (logged when the names show
//     a gap). Such damage stays in the chain where Verify finds it every
//     time, and restoring the original bytes (from a backup) truly repairs
//     it; a break event is written only for bytes that leave the log.
//
// The one chunk the log removes without a copy is the leftover of a failed
// Append whose retry wrote fewer events: a last chunk whose lines all chain
// but whose first line skips past the end of the chunk before, which the
// head vouches for. Its events were never acknowledged; the next Append
// removes it. Lines up to the one the head vouches for are never cut.
//
// Damage is recorded once: after the first Append, Open no longer sees it
// (the end was cut, the chunk removed, the head replaced). A crash, or a
// failed removal, after the break events are saved but before a chunk
// taken out of the log is removed gets that chunk recorded again. A cut
// tail is saved with its break events in one SaveSys, except when the
// tail is full and the break starts a new chunk: a crash between those two
// saves leaves the cut and its copy without the break event (Verify still
// reports the copy).
//
// # Many writers
//
// On a shared store (a [backend.SysSwapper]: several mounts on one
// namespace) every process appends to the one log, and Append commits the
// chunks it changes and the head in one SwapSys, guarded by events.head as
// the Log last knew it. Since every Append moves the head, a guard that
// holds means the tail in memory is the stored one. A writer that lost the
// race wrote nothing (its chunk saves were part of the failed swap, so two
// writers never leave different bytes under one chunk name); it reloads
// the end of the log as Open does (the head, the listing, the new tail),
// numbers its events again onto it (new seqs and Prevs; the content
// unchanged, a time raised to the new last event's when earlier) and tries
// again, up to [SwapTries] times with a short jittered wait, then fails
// with [ErrContended]. Break events are planned again from what the store
// holds, so damage two writers found is recorded once, by whichever wins.
//
// An Append too large for one SwapSys (the store refuses it with
// [backend.ErrBatchTooLarge] before writing anything: etcd takes 128
// operations and 1.5 MiB a transaction, and 10,000 events are 3 MB) is
// split: the first half of the events is tried, halving again until the
// store takes it, and the rest follow in swaps of that many, each guarded
// by the head the one before wrote. Every swap appends a whole run of
// seqs, so what the store holds, and what readers and other writers see,
// is always the log with a prefix of the Append's events (another
// writer's events may come between two of its swaps). When a swap fails,
// the events of the swaps that landed count as stored: offered again, the
// events are appended from the first one not stored.
//
// A SwapSys error leaves the outcome unknown: the store may have committed
// the swap, or may still. The Log remembers the attempt; when the caller
// offers the same events again, the next Append finds out (a line hash at
// the attempt's last seq) and returns them as stored rather than storing
// them twice. A Log sees other writers' events after [Log.Refresh] (or an
// Append that raced with them); Verify reads the store, so it checks the
// whole chain whoever wrote it.
//
// # What Verify detects
//
// [Verify] reads every chunk and reports the first break, naming the event
// it puts in doubt: an edited event (its hash no longer matches the next
// event's Prev, or for the last event the head), a removed event or chunk (a
// gap in the seqs), events removed at the end (the head is past the end), a
// renamed chunk, a torn or unparseable line, time going backwards. It also
// lists every break event and every record under events.damaged/
// (Report.Damage): a log that ever lost or set aside bytes is never
// reported intact again, even though its chain links all hold.
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
// Its lock guards only memory (no I/O runs under it), so Size,
// RecordNames and RecordSize answer at once, from a FUSE getattr too.
// On a store that is not shared, one process at a time has the log open
// (the store's lock sees to that); on a shared one, many (see "Many
// writers").
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
