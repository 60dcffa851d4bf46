// Package search is memfs's ranked full-text index over memory values: an
// in-memory [Index] of documents (a key, its value's terms and a [DocMeta]),
// searched with BM25 plus a phrase bonus, filtered by key prefix and
// user.memfs.* metadata, and persisted in the store's system records in
// [Shards] shards, of which a Save writes only the changed ones.
//
// This package is the index's format: the tokenizer, the [Index], its
// shards, the vectors ([Vectors]) and the ranking ([RankDocs], [Fuse]).
// It knows no session: the live index of a session (the persisted index
// kept up to date with the store, searched with an overlay of unflushed
// changes, filtered by what the caller may read) is package search/live.
//
// # Tokenization
//
// [Tokenize] turns text into lower-cased, stemmed terms with ordinal
// positions; a query is tokenized exactly as a document is.
//
//   - A word is a run of letters, digits and combining marks: "v2", "2024"
//     and "naïve" are one term each. Everything else separates words,
//     invalid UTF-8 included. There is no stop list.
//   - An identifier gives its parts and its whole: camelCase, PascalCase
//     and HTTPServer are split where a capital follows a lower-case letter
//     or a digit, and before the last capital of a run followed by a
//     lower-case letter ("camelCase" -> camelcase, camel, case;
//     "HTTPServer" -> httpserver, http, server; "utf8Decode" -> utf8decode,
//     utf8, decode), except before a final plural s ("URLs" -> urls).
//     Segments joined by single '_' or '-' also give the joined whole
//     ("snake_case" -> snake_case, snake, case; "kebab-case" -> kebab-case,
//     kebab, case). '/' and '.' separate words: "cmd/memfs/main.go" -> cmd,
//     memfs, main, go.
//   - A whole has the position of its first part, so the phrase "camel
//     case" matches "camelCase" and the query "camelCase" matches both.
//   - Han, Hiragana, Katakana and Hangul are written without spaces: a run
//     of them gives its overlapping character bigrams ("東京都" -> 東京,
//     京都), one position each, or the one character of a run of one. A
//     two-character word inside a sentence is therefore one of its terms,
//     and a longer one a phrase of bigrams.
//   - Then a term of ASCII letters only is stemmed by M. F. Porter's
//     1980 algorithm (package search/internal/porter; the examples above
//     are before this step): "payments" -> payment, "charged" -> charg,
//     "policies" -> polici, "camelcase" -> camelcas, so a query finds the
//     other forms of its words. Other terms (a compound, "v2", "naïve",
//     CJK) are kept as they are, but the ASCII parts of an identifier
//     are stemmed ("retry_policies" -> retry_policies, retri, polici).
//     Phrases and the proximity bonus compare stems too: the words as
//     written still match themselves, and "deploy plans" also matches
//     "deployed plan" as a phrase. Snippets show the value's own words
//     (the stems only find them).
//   - A term is at most [MaxTermLen] bytes (cut at a rune boundary,
//     before stemming). Only the first [MaxIndexBytes] of a value are
//     indexed, and a binary value ([IsBinary]: a NUL byte in its first
//     8000 bytes, or bytes that are not UTF-8 in its first KiB) gets no
//     terms and no snippet (it keeps its stamp and metadata).
//
// # Ranking
//
// [Index.Search] scores a document by BM25 with k1 = 1.2 and b = 0.75 over
// the query's distinct terms, the IDF being ln(1 + (N - n + 0.5)/(n + 0.5))
// for n of N documents holding the term (so a rare term outweighs a common
// one), and the document length its number of positions. A document that
// holds every query position (a position is satisfied by any of its terms:
// an identifier's whole or its first part) gets a bonus in units of the
// sum of those positions' IDFs: 1.0 when they occur consecutively in query
// order (the exact phrase), otherwise 0.25 × (g-1)/(w-1) for g positions
// found in a smallest window of w (proximity). Phrase matching looks at the
// first 64 query positions. Hits are ordered by score, then key; a query
// with no text lists the documents the filters pass, by key, scoring 0.
// Search walks the query terms' postings in document order (no dense score
// array), so a query costs time linear in those postings and memory in
// TopK; the proximity bonus is computed only for a document it could bring
// into the top K. There is no stop list, so a query with a word in every
// document walks every document.
//
// # Memory
//
// A term's postings are one byte stream, in ascending document id: each
// entry is the uvarint id delta, the uvarint length of the rest, and one
// uvarint delta per position (the term frequency is the number of bytes
// below 0x80, as each uvarint ends in one). A list of more than 32 entries
// also has a block index (first id, offset and count of each run of up to
// 32 entries), so that an entry is found without decoding from the start.
// Most terms occur in one document (identifiers, names), so a term's fixed
// cost matters: postings are held by value (56 bytes) in one slice. A
// document keeps its term ids as uvarint deltas, which is how Delete and
// Put find the entries to remove. Document and term ids are reused.
// Removing a document splices the lists of its terms (a memmove of a term
// in every document), so Put of an existing key costs more as the index
// grows. The heap per note with the generated notes of the benchmarks
// (1.3 KiB of English-like text, one word in twelve a code identifier: 13
// new distinct terms per note) is in BENCHMARKS.md, Recall: search and
// context packs (BenchmarkHeap).
//
// # Persistence
//
// The index is split into [Shards] (64) shards by FNV-1a of the key
// ([ShardOf]); shard s is the system record search/shard-NN ([ShardName]).
// [Index.Save] writes each shard changed since the last Save or [Load]
// (every change bumps its shard's version; a shard is written as of a
// version, and stays dirty if it changed meanwhile), so saving after a
// flush that changed one value writes one record, about a 64th of the index
// (the times of that save, of saving all 64 and of Load: see
// BENCHMARKS.md, Recall: search and context packs). An empty shard is
// saved as a record with no documents. A shard record (format version 4) is:
//
//	"MFSI"
//	uvarint 4 (format version), uvarint 64 (shards), uvarint shard number
//	uvarint T, T strings: the shard's terms, distinct      (string = uvarint length, bytes)
//	uvarint D, D documents, by key ascending:
//	    string key
//	    varint size, varint mtime (unix ns; 0 for none)    (the stamp)
//	    uvarint count, strings: tags; string source; string agent
//	    string session; string type
//	    byte 1 and 8 bytes float64 LE importance, or byte 0
//	    uvarint length (positions)
//	    uvarint P, P postings: uvarint term index delta (the first: the index),
//	        uvarint L, L bytes: one uvarint position delta per occurrence
//	CRC-32C (Castagnoli) of all the above, 4 bytes little endian
//
// [Load] reads every shard record; a missing index is an empty one. A record
// that fails its checksum, is of another version or shard count, or does
// not decode to sorted, in-range, well-formed data gives an error wrapping
// [ErrCorrupt]: the caller deletes nothing and rebuilds the index from the
// values (New, Put for each, Save writes all 64 shards).
//
// # Redaction
//
// The index is persisted, so what it holds reaches the disk: it never
// holds a raw secret, whatever path a value comes in by. [Options].Redact
// (memfs passes its redactor) is applied by the index itself, not by its
// callers: to each value before Put tokenizes it (the live updates, and the
// repair at open and the full rebuild, which Put what the store holds: a
// directory store may hold secrets that other programs wrote), to the
// strings of its DocMeta, and to each value [Index.Snippet] cuts from. A
// key whose name holds a secret is not indexed (a log line names the rule,
// never the key), and [Load] drops such a document from an older index and
// writes its shard again. Indexes of format version 1 were built without
// redaction, those of version 2 without sessions and types, and those of
// version 3 without stemming: Load reports them corrupt, and the caller
// rebuilds them.
//
// # Staleness
//
// The index does not know when a value changes; its caller does. The
// stamp of a document is its DocMeta's Size and MTime (unix nanoseconds),
// kept in the shard records, and [Index.Stamps] returns them. At mount, the
// caller compares the stamps with the store's listing: a key the index
// lacks, or with another size or mtime, is indexed again (Put), and a key
// the store no longer has is removed (Delete); then Save. A crash between
// a value's flush and the index's Save is repaired that way, as is a store
// edited without memfs. SaveSys replaces a record atomically, so a crash
// during Save leaves each shard old or new, and the old ones are caught by
// their stamps.
//
// # Query syntax
//
// A name under .memfs/search/ in the mount is a query; [ParseName]
// (which returns a [Request]: the [Query] and whether the word format:json
// asked for JSON lines) percent-decodes the whole name first (url.PathUnescape: "%2F" is '/',
// and a '%' not followed by two hex digits is an error), then splits it at
// white space outside double quotes. Each word is a filter or text:
//
//	prefix:memory%2Fprojects     key prefix (a file name has no '/')
//	tag:go                       has the tag; repeat for all of several
//	source:agent, agent:planner  equal to user.memfs.source, user.memfs.agent
//	session:s1, type:decision    equal to user.memfs.session, user.memfs.type
//	repo:0123456789abcdef        none of another repository's memory (repos/OTHER/);
//	                             repo:ID,PARENT... reads the first PARENT's while ID has none
//	importance:0.5               user.memfs.importance at least 0.5 (also importance>=0.5)
//	since:2026-11-01, until:...  modified at or after, before: RFC 3339, a date (UTC), or a duration ago (24h, 7d)
//	top:5                        at most 5 hits (default 10)
//	min:0.5                      no hit scoring below 0.5
//	mode:semantic                keyword, semantic or hybrid ranking (see Vectors and hybrid ranking)
//	"exact phrase"               text; the quotes are dropped
//
// A filter's value may be quoted (tag:"two words"). A filter with no value,
// a bad value, or given twice (but tag) is an error wrapping [ErrQuery]; a
// word with any other key ("note:this") is text. Text words are joined
// with single spaces into Query.Text. Example:
//
//	"deploy plan" tag:infra since:7d top:3
//
// # Vectors and hybrid ranking
//
// With an [embed.Embedder] (nil searches by keyword only, exactly as
// without vectors), the live service also keeps one vector per document
// ([Vectors]): the embedding of its key's words (split at '/', '.', '_'
// and '-') and the first [EmbedBytes] (4 KiB) of its value,
// redacted as the BM25 index redacts it (a vector of a raw secret would
// leak it; a binary value embeds its key's words only). A vector is held
// int8-quantized with a float32 scale per vector (its largest coordinate
// is ±127), about 100 + 110 bytes of heap per note at dimension 100, and
// searched exactly: the dot product of int8 vectors over every document,
// split across GOMAXPROCS goroutines from 20,000 vectors, into a top-k
// heap; a filter is asked only of a vector that would enter the heap.
//
// The vectors are persisted beside the BM25 shards, in the same [Shards]
// shards ([ShardOf]), a set per embedder: shard s of embedder ID's
// vectors is the system record search/vec-SET-NN ([VecShardName]), SET
// the first 12 hex digits of the SHA-256 of ID, so that switching models,
// or two mounts of a store with different models, never overwrites
// another model's set ([LoadVectors] reads only its own; the one set of
// earlier versions, search/vec-NN, is taken by the embedder that made
// it). A save writes only the shards changed since the last (and not
// those its caller holds back). A vector shard record (format version 1)
// is:
//
//	"MFSV"
//	uvarint 1 (format version), uvarint 64 (shards), uvarint shard number
//	string embedder ID, uvarint dim
//	uvarint D, D vectors, by key ascending:
//	    string key; varint size, varint mtime (the stamp of the value embedded)
//	    4 bytes float32 LE scale, dim bytes: int8 coordinates
//	CRC-32C (Castagnoli) of all the above, 4 bytes little endian
//
// A query's mode (Query.Mode, the word mode:keyword|semantic|hybrid) is
// hybrid by default with an embedder, keyword without one; semantic or
// hybrid without an embedder is an error wrapping [ErrQuery]. Keyword is
// BM25 as above. Semantic ranks by the cosine of the query's vector with
// the documents' (a cosine of Floor or less is no hit). Hybrid takes the
// best N of each ranking (N = max(100, 4·TopK), [Fusion].Candidates),
// and scores their union by Alpha·s_vec + (1-Alpha)·s_bm25, s_bm25 being
// the BM25 score over the highest among the candidates and s_vec the
// cosine calibrated as (cos - Floor)/(max cos - Floor) among them
// ([DefaultFusion]: Alpha 0.6, Floor 0.2, chosen on the dev set of
// testdata/recall: see TestDevSetTuneFusion; [FusionOf] takes the
// embedder's own floor, embed.FloorOf: a remote model's is 0 unless its
// spec says floor=). A candidate with no vector
// (not embedded yet), and every candidate when the query's vector is
// zero or like none of them (none of its words known to the model), take
// s_bm25 for s_vec: they rank by BM25 alone. In every mode the filters, TopK,
// MinScore (on the mode's score: BM25, cosine, or the fused score in 0..1),
// the permission rule, the overlay and its shadowing apply unchanged, and
// a hit with no query word in it gets the start of its value as snippet.
// A query with no text lists by key in every mode. [RankDocs] ranks an
// in-memory corpus the same way with no store (a dev set to tune Alpha,
// the notes of a context pack); it is deterministic for a deterministic
// embedder.
//
// Measured (2 cores, AMD EPYC, shared with other work, so the tails are
// noisy; a synthetic embedder of random unit vectors, dimension 100; the
// generated notes of the benchmarks): BenchmarkHybridSearch p50/p99
// 2.1/9.3 ms at 10,000 notes and 16/45 ms at 100,000, most of it the BM25
// top 100 (BenchmarkSearch, top 10: 0.46/3.9 and 6.5/19 ms in the same
// run; BenchmarkSemanticSearch, the vectors alone: 0.95/1.4 and 5.5/9.6
// ms); BenchmarkVecHeap 207 to 219 heap bytes and 129 record bytes per
// note; BenchmarkVecFlush 72 ms for the vectors of a flush of 10,000
// notes (embedding, quantizing and saving all 64 shards).
//
// # Concurrency
//
// An Index is safe for concurrent use: Search, Has, Len, Stamps and Stats
// share a read lock; Put and Delete tokenize outside the lock and take it
// to apply. Save encodes each shard under the read lock and writes it
// without a lock; Saves are serialized.
//
// # Example
//
//	opts := search.Options{Redact: redactFunc, Logger: log}
//	ix, err := search.Load(ctx, store, opts)
//	if errors.Is(err, search.ErrCorrupt) {
//		ix = search.New(opts) // and Put every value
//	}
//	ix.Put("memory/global.md", value, search.MetaOf(info))
//	_, err = ix.Save(ctx, store)
//	r, err := search.ParseName(search.Name(`"deploy plan"`, "tag:infra", "top:3"))
//	for _, h := range ix.Search(r.Query) {
//		fmt.Println(h.Key, h.Score, ix.Snippet(h.Key, valueOf(h.Key), r.Query, 120))
//	}
package search
