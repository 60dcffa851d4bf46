package search

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/meta"
)

// Lock order: Index.saveMu before Index.mu.

// DocMeta is what the index keeps of a document besides its terms: the
// metadata filters look at, and the stamp (Size, MTime) that says which
// version of the value was indexed.
type DocMeta struct {
	Tags          []string
	Source, Agent string
	Session, Type string // user.memfs.session, user.memfs.type
	Importance    float64
	HasImportance bool
	MTime         time.Time // the value's modification time (for time filters)
	Size          int64
}

// MetaOf returns the DocMeta of a store entry: its size, modification time
// and user.memfs.* attributes (invalid ones count as unset).
func MetaOf(info backend.Info) DocMeta {
	a := meta.Parse(info.XAttrs)
	return DocMeta{Tags: a.Tags, Source: a.Source, Agent: a.Agent, Session: a.Session, Type: a.Type, Importance: a.Importance,
		HasImportance: a.HasImp, MTime: info.MTime, Size: info.Size}
}

// Stamp identifies the version of a value a document was built from.
type Stamp struct {
	Size  int64
	MTime int64 // unix nanoseconds; 0 for a zero time
}

func StampOf(m DocMeta) Stamp {
	s := Stamp{Size: m.Size}
	if !m.MTime.IsZero() {
		s.MTime = m.MTime.UnixNano()
	}
	return s
}

// MaxIndexBytes is how much of a value is indexed: the terms of a longer
// value's first MaxIndexBytes bytes. It bounds the memory one huge value
// can take.
const MaxIndexBytes = 1 << 20

// Index is an in-memory full-text index of documents, each a key with a
// value and DocMeta. It is safe for concurrent use: searches run in
// parallel, changes one at a time. It retains no slice the caller passes.
type Index struct {
	opts Options      // immutable after New or Load
	log  *slog.Logger // opts.Logger, or a discarding one

	saveMu sync.Mutex // serializes Save, so that shards are written in version order

	mu       sync.RWMutex
	byKey    map[string]uint32 // guarded by mu: key -> doc id
	docs     []*doc            // guarded by mu: by doc id; nil for a free id
	freeDocs []uint32          // guarded by mu: free doc ids, reused first
	dict     map[string]uint32 // guarded by mu: term -> term id
	terms    []posting         // guarded by mu: by term id; term "" for a free id
	freeTerm []uint32          // guarded by mu: free term ids
	totalLen int64             // guarded by mu: sum of the documents' lengths
	nposts   int               // guarded by mu: number of (term, doc) postings
	version  [Shards]uint64    // guarded by mu: bumped by every change to a shard
	saved    [Shards]uint64    // guarded by mu: the version of each shard last saved or loaded
	nsaved   int               // guarded by mu: shard records written by Save
}

// doc is one indexed document.
type doc struct {
	key    string
	meta   DocMeta
	shard  uint8
	length uint32 // number of positions
	terms  []byte // the document's term ids, ascending, as uvarint deltas
}

// New returns an empty index configured by opts.
func New(opts Options) *Index {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Index{opts: opts, log: log, byKey: make(map[string]uint32), dict: make(map[string]uint32)}
}

// analyzed is a value turned into postings, before it enters the index.
type analyzed struct {
	terms   []string // ascending
	entries [][]byte // entries[i] is the posting entry of terms[i]
	length  uint32
}

// analyze tokenizes a value into one posting entry per distinct term.
func analyze(value []byte) analyzed {
	if len(value) > MaxIndexBytes {
		value = value[:MaxIndexBytes]
	}
	if IsBinary(value) {
		return analyzed{}
	}
	pos := make(map[string][]uint32)
	length := 0
	scan(string(value), func(t span) {
		p := pos[t.term]
		if n := len(p); n > 0 && p[n-1] == uint32(t.pos) {
			return
		}
		pos[t.term] = append(p, uint32(t.pos))
		length = t.pos + 1
	})
	a := analyzed{terms: make([]string, 0, len(pos)), entries: make([][]byte, 0, len(pos)), length: uint32(length)}
	for t := range pos {
		a.terms = append(a.terms, t)
	}
	slices.Sort(a.terms)
	// One buffer for all entries: fewer allocations, and it is copied
	// into the postings anyway.
	var buf []byte
	ends := make([]int, 0, len(a.terms))
	for _, t := range a.terms {
		buf = appendEntry(buf, pos[t])
		ends = append(ends, len(buf))
	}
	start := 0
	for _, e := range ends {
		a.entries = append(a.entries, buf[start:e:e])
		start = e
	}
	return a
}

// An entry is the uvarint length in bytes of the rest, then one uvarint
// delta per position (the first: the position). Every uvarint ends in
// exactly one byte below 0x80, so the term frequency is the number of such
// bytes, and an entry is skipped without decoding it.

// appendEntry appends the posting entry of ascending positions.
func appendEntry(b []byte, positions []uint32) []byte {
	var tmp [64]byte
	d := tmp[:0]
	prev := uint32(0)
	for _, p := range positions {
		d = binary.AppendUvarint(d, uint64(p-prev))
		prev = p
	}
	b = binary.AppendUvarint(b, uint64(len(d)))
	return append(b, d...)
}

// entryTF returns the term frequency of the entry at the start of e.
func entryTF(e []byte) int {
	l, n := binary.Uvarint(e)
	tf := 0
	for _, c := range e[n : n+int(l)] {
		if c < 0x80 {
			tf++
		}
	}
	return tf
}

// entryLen returns the length in bytes of the entry at the start of e.
func entryLen(e []byte) int {
	if e[0] < 0x80 {
		return 1 + int(e[0])
	}
	l, n := binary.Uvarint(e)
	return n + int(l)
}

// appendPositions decodes the positions of the entry at the start of e
// onto dst.
func appendPositions(dst []uint32, e []byte) []uint32 {
	l, n := binary.Uvarint(e)
	end := n + int(l)
	p := uint32(0)
	for n < end {
		d, m := binary.Uvarint(e[n:])
		n += m
		p += uint32(d)
		dst = append(dst, p)
	}
	return dst
}

// Put adds the document key with value, or replaces it. With
// Options.Redact, the value and m's strings are redacted first, and a key
// whose name holds a secret is not indexed (and leaves the index if it
// was in it).
func (ix *Index) Put(key string, value []byte, m DocMeta) {
	if ix.secretName(key) {
		ix.Delete(key)
		return
	}
	a := analyze(ix.RedactValue(key, value))
	m = ix.redactMeta(key, m) // clones m.Tags
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.putLocked(strings.Clone(key), m, a)
}

// putLocked enters an analyzed document; key and m.Tags must be the
// index's own.
func (ix *Index) putLocked(key string, m DocMeta, a analyzed) {
	if id, ok := ix.byKey[key]; ok {
		ix.removeLocked(id) // first: its terms may go, and their ids be reused
	}
	tids := make([]uint32, len(a.terms))
	for i, t := range a.terms {
		tid, ok := ix.dict[t]
		if !ok {
			tid = ix.newTermLocked(t)
		}
		tids[i] = tid
	}
	ix.insertLocked(key, m, a.length, tids, a.entries)
}

// insertLocked enters a document that is not in the index: entries[i] is
// its entry in the list of term tids[i]. It sorts tids and entries.
func (ix *Index) insertLocked(key string, m DocMeta, length uint32, tids []uint32, entries [][]byte) {
	var id uint32
	if n := len(ix.freeDocs); n > 0 {
		id = ix.freeDocs[n-1]
		ix.freeDocs = ix.freeDocs[:n-1]
	} else {
		id = uint32(len(ix.docs))
		ix.docs = append(ix.docs, nil)
	}
	for i, tid := range tids {
		ix.terms[tid].add(id, entries[i])
	}
	slices.Sort(tids)
	var buf [1024]byte
	enc := buf[:0]
	prev := uint32(0)
	for _, t := range tids {
		enc = binary.AppendUvarint(enc, uint64(t-prev))
		prev = t
	}
	d := &doc{key: key, meta: m, shard: uint8(ShardOf(key)), length: length, terms: bytes.Clone(enc)}
	ix.docs[id] = d
	ix.byKey[key] = id
	ix.totalLen += int64(length)
	ix.nposts += len(tids)
	ix.version[d.shard]++
}

func (ix *Index) newTermLocked(t string) uint32 {
	p := posting{term: strings.Clone(t)}
	var tid uint32
	if n := len(ix.freeTerm); n > 0 {
		tid = ix.freeTerm[n-1]
		ix.freeTerm = ix.freeTerm[:n-1]
		ix.terms[tid] = p
	} else {
		tid = uint32(len(ix.terms))
		ix.terms = append(ix.terms, p)
	}
	ix.dict[p.term] = tid
	return tid
}

// forTerms calls fn with each term id of an encoded term list.
func forTerms(enc []byte, fn func(tid uint32)) {
	tid := uint32(0)
	for len(enc) > 0 {
		d, n := binary.Uvarint(enc)
		enc = enc[n:]
		tid += uint32(d)
		fn(tid)
	}
}

func (ix *Index) removeLocked(id uint32) {
	d := ix.docs[id]
	forTerms(d.terms, func(tid uint32) {
		p := &ix.terms[tid]
		p.remove(id)
		ix.nposts--
		if p.n == 0 {
			delete(ix.dict, p.term)
			*p = posting{}
			ix.freeTerm = append(ix.freeTerm, tid)
		}
	})
	ix.totalLen -= int64(d.length)
	delete(ix.byKey, d.key)
	ix.docs[id] = nil
	ix.freeDocs = append(ix.freeDocs, id)
	ix.version[d.shard]++
}

// Delete removes the document key; a key not in the index is ignored.
func (ix *Index) Delete(key string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if id, ok := ix.byKey[key]; ok {
		ix.removeLocked(id)
	}
}

// Has reports whether key is in the index.
func (ix *Index) Has(key string) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	_, ok := ix.byKey[key]
	return ok
}

// Len returns the number of documents.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.byKey)
}

// Stamps returns the stamp of every document: what the index was built
// from. A caller compares it with the store's listing to find the keys to
// index again (see the package documentation).
func (ix *Index) Stamps() map[string]Stamp {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	m := make(map[string]Stamp, len(ix.byKey))
	for _, d := range ix.docs {
		if d != nil {
			m[d.key] = StampOf(d.meta)
		}
	}
	return m
}

// Stats describes an index, for tests and diagnostics.
type Stats struct {
	Docs        int // documents
	Terms       int // distinct terms
	Postings    int // (term, document) pairs
	DirtyShards int // shards changed since the last Save or Load
	ShardsSaved int // shard records written by Save on this Index
}

// Stats returns the index's counts.
func (ix *Index) Stats() Stats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	s := Stats{Docs: len(ix.byKey), Terms: len(ix.dict), Postings: ix.nposts, ShardsSaved: ix.nsaved}
	for i := range Shards {
		if ix.version[i] != ix.saved[i] {
			s.DirtyShards++
		}
	}
	return s
}
