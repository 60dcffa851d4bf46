package search

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memfs/memfs/backend"
)

// Shards is the number of shard records the index is split into.
const Shards = 64

// RecordPrefix starts the name of every system record of the index.
const RecordPrefix = "search/"

// formatVersion is the version of the shard encoding; a shard of another
// version is corrupt to this code (the caller rebuilds). Version 1 indexes
// were built from values as the store held them, secrets included (a
// directory store written by other programs): version 2, built through
// Options.Redact, makes every older index rebuilt. Version 3 keeps each
// document's session and type (user.memfs.session, user.memfs.type): an
// older index, without them, would filter them out of every search by
// session or type. Version 4 stems English words (the tokenizer's
// porter.Stem): the terms of an older index are the words as written,
// which a stemmed query would not find ("payment" misses "payments"),
// so it is rebuilt rather than read.
const formatVersion = 4

const magic = "MFSI"

// ErrCorrupt is wrapped by Load's error for a shard record that does not
// decode: torn, garbled, of another format version or shard layout. The
// caller rebuilds the index from the values.
var ErrCorrupt = errors.New("search index corrupt")

// Sys is the part of a store the index is persisted in (its system
// records); every backend.SysStore is one.
type Sys interface {
	SaveSys(ctx context.Context, name string, data []byte) error
	LoadSys(ctx context.Context, name string) ([]byte, error)
	ListSys(ctx context.Context, prefix string) ([]backend.Entry, error)
}

var _ Sys = backend.SysStore(nil)

// ShardOf returns the shard of key: FNV-1a (32 bits) of the key modulo
// Shards. It is part of the format: changing it needs a new formatVersion.
func ShardOf(key string) int {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % Shards)
}

// ShardName returns the name of shard s's system record.
func ShardName(s int) string { return fmt.Sprintf("%sshard-%02d", RecordPrefix, s) }

// castagnoli is a constant table (crc32.MakeTable caches it).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Save writes the shards changed since the last Save or Load, each as one
// system record, and returns how many it wrote. A shard that changes while
// it is being written stays dirty for the next Save. On an error, the
// shards not yet written stay dirty. Saves are serialized; searches and
// changes go on during the writes.
func (ix *Index) Save(ctx context.Context, sys Sys) (int, error) {
	ix.saveMu.Lock()
	defer ix.saveMu.Unlock()
	return saveShards(ctx, sys, shardSet{mu: &ix.mu, version: &ix.version, saved: &ix.saved,
		encodeLocked: ix.encodeShardLocked, name: ShardName, what: "shard",
		savedLocked: func() { ix.nsaved++ }})
}

// shardSet is what saveShards needs of a sharded index: its lock, the
// version of each shard and the version last saved (both guarded by mu),
// how a shard is encoded (under mu, read-locked) and named, what to
// count when one is saved (under mu; may be nil), and which dirty shards
// to leave for a later save (called without mu; nil leaves none).
type shardSet struct {
	mu             *sync.RWMutex
	version, saved *[Shards]uint64
	encodeLocked   func(s int) []byte
	name           func(s int) string
	what           string // in errors: "shard", "vector shard"
	savedLocked    func()
	hold           func(s int) bool
}

// saveShards writes the shards of x changed since their last save, each
// encoded under the read lock and written without it, and returns how
// many it wrote. A shard that changes while it is written stays dirty; on
// an error the shards not written stay dirty. Its caller serializes the
// saves of x.
func saveShards(ctx context.Context, sys Sys, x shardSet) (int, error) {
	x.mu.RLock()
	var dirty []int
	for s := range Shards {
		if x.version[s] != x.saved[s] {
			dirty = append(dirty, s)
		}
	}
	x.mu.RUnlock()
	n := 0
	for _, s := range dirty {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if x.hold != nil && x.hold(s) {
			continue
		}
		x.mu.RLock()
		data, v := x.encodeLocked(s), x.version[s]
		x.mu.RUnlock()
		if err := sys.SaveSys(ctx, x.name(s), data); err != nil {
			return n, fmt.Errorf("search: save %s %d: %w", x.what, s, err)
		}
		x.mu.Lock()
		x.saved[s] = v
		if x.savedLocked != nil {
			x.savedLocked()
		}
		x.mu.Unlock()
		n++
	}
	return n, nil
}

// encodeShardLocked encodes the documents of shard s (format in doc.go).
func (ix *Index) encodeShardLocked(s int) []byte {
	var ids []uint32 // ascending
	for id, d := range ix.docs {
		if d != nil && int(d.shard) == s {
			ids = append(ids, uint32(id))
		}
	}
	// The shard's own dictionary: its terms in term id order, so that a
	// document's term list (ascending term ids) is in dictionary order.
	var tids []uint32
	for _, id := range ids {
		forTerms(ix.docs[id].terms, func(tid uint32) { tids = append(tids, tid) })
	}
	slices.Sort(tids)
	tids = slices.Compact(tids)
	local := func(tid uint32) int { i, _ := slices.BinarySearch(tids, tid); return i }
	// Look every entry up in term order, then document order, so that
	// each list is walked forward once rather than searched per entry:
	// random lookups cost a cache miss or more each. A counting sort by
	// term keeps the ascending document order.
	type ref struct {
		local uint32
		entry []byte
	}
	var refs []ref // by document, then term
	ends := make([]int, len(ids))
	count := make([]int, len(tids)+1)
	for i, id := range ids {
		forTerms(ix.docs[id].terms, func(tid uint32) {
			l := local(tid)
			refs = append(refs, ref{local: uint32(l)})
			count[l+1]++
		})
		ends[i] = len(refs)
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	byTerm := make([]int32, len(refs)) // indexes into refs, by term, then document
	for i := range refs {
		l := refs[i].local
		byTerm[count[l]] = int32(i)
		count[l]++
	}
	docOf := make([]uint32, len(refs)) // the document of each ref
	for i, id := range ids {
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		for j := start; j < ends[i]; j++ {
			docOf[j] = id
		}
	}
	for i := 0; i < len(byTerm); {
		l := refs[byTerm[i]].local
		sk := ix.terms[tids[l]].seeker()
		for ; i < len(byTerm) && refs[byTerm[i]].local == l; i++ {
			refs[byTerm[i]].entry = sk.seek(docOf[byTerm[i]])
		}
	}
	size := 16
	for _, tid := range tids {
		size += len(ix.terms[tid].term) + 1
	}
	buf := make([]byte, 0, size+len(ids)*256)
	buf = append(buf, magic...)
	buf = binary.AppendUvarint(buf, formatVersion)
	buf = binary.AppendUvarint(buf, Shards)
	buf = binary.AppendUvarint(buf, uint64(s))
	buf = binary.AppendUvarint(buf, uint64(len(tids)))
	for _, tid := range tids {
		buf = appendString(buf, ix.terms[tid].term)
	}
	buf = binary.AppendUvarint(buf, uint64(len(ids)))
	order := make([]int, len(ids)) // documents by key
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(ix.docs[ids[a]].key, ix.docs[ids[b]].key) })
	for _, i := range order {
		d := ix.docs[ids[i]]
		buf = appendString(buf, d.key)
		st := StampOf(d.meta)
		buf = binary.AppendVarint(buf, st.Size)
		buf = binary.AppendVarint(buf, st.MTime)
		buf = binary.AppendUvarint(buf, uint64(len(d.meta.Tags)))
		for _, t := range d.meta.Tags {
			buf = appendString(buf, t)
		}
		buf = appendString(buf, d.meta.Source)
		buf = appendString(buf, d.meta.Agent)
		buf = appendString(buf, d.meta.Session)
		buf = appendString(buf, d.meta.Type)
		if d.meta.HasImportance {
			buf = append(buf, 1)
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(d.meta.Importance))
		} else {
			buf = append(buf, 0)
		}
		buf = binary.AppendUvarint(buf, uint64(d.length))
		start := 0
		if i > 0 {
			start = ends[i-1]
		}
		drefs := refs[start:ends[i]] // ascending local
		buf = binary.AppendUvarint(buf, uint64(len(drefs)))
		prev := uint32(0)
		for j, r := range drefs {
			if j == 0 {
				buf = binary.AppendUvarint(buf, uint64(r.local))
			} else {
				buf = binary.AppendUvarint(buf, uint64(r.local-prev))
			}
			prev = r.local
			buf = append(buf, r.entry...)
		}
	}
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Load reads the index from sys's system records into an index configured
// by opts. No records give an empty index; a shard that does not decode
// gives an error wrapping ErrCorrupt; records under RecordPrefix that are
// not shards are ignored. A document whose key Options.Redact finds a
// secret in (the rules may have grown since it was indexed) is dropped,
// and its shard written again at once, so that the name leaves the disk.
func Load(ctx context.Context, sys Sys, opts Options) (*Index, error) {
	list, err := sys.ListSys(ctx, RecordPrefix)
	if err != nil {
		return nil, fmt.Errorf("search: list shards: %w", err)
	}
	ix := New(opts)
	if err := loadShards(ctx, sys, list, parseShardName, ix.decodeShard, "shard"); err != nil {
		return nil, err
	}
	if ix.Stats().DirtyShards > 0 { // documents dropped
		if _, err := ix.Save(ctx, sys); err != nil {
			return nil, fmt.Errorf("search: rewrite the shards of dropped documents: %w", err)
		}
	}
	return ix, nil
}

// loadShards loads the records of list that parse as shards and has
// decode take each, in list order. A record removed since the listing is
// an empty shard. what names the shards in errors.
func loadShards(ctx context.Context, sys Sys, list []backend.Entry, parse func(name string) (int, bool),
	decode func(s int, data []byte) error, what string) error {
	for _, e := range list {
		s, ok := parse(e.Key)
		if !ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := sys.LoadSys(ctx, e.Key)
		if errors.Is(err, backend.ErrKeyNotFound) {
			continue // removed since the listing: an empty shard
		}
		if err != nil {
			return fmt.Errorf("search: load %s %d: %w", what, s, err)
		}
		if err := decode(s, data); err != nil {
			return fmt.Errorf("search: %s %d: %w", what, s, err)
		}
	}
	return nil
}

// parseShardName returns s for ShardName(s).
func parseShardName(name string) (int, bool) { return parseName(name, "shard-", ShardName) }

// parseName returns s for a record name kind-NN that is name(s).
func parseName(name, kind string, nameOf func(int) string) (int, bool) {
	rest, ok := strings.CutPrefix(name, RecordPrefix+kind)
	if !ok || len(rest) != 2 {
		return 0, false
	}
	s, err := strconv.Atoi(rest)
	if err != nil || s < 0 || s >= Shards || nameOf(s) != name {
		return 0, false
	}
	return s, true
}

// decoder reads a shard record; the first failure sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count of items that take at least one byte each.
func (d *decoder) count() int {
	v := d.uvarint()
	if v > uint64(len(d.b)) {
		d.fail("count %d past the end", v)
		return 0
	}
	return int(v)
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b) {
		d.fail("truncated")
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

// entry reads a posting entry (see appendEntry).
func (d *decoder) entry() []byte {
	if d.err != nil {
		return nil
	}
	l, n := binary.Uvarint(d.b)
	if n <= 0 || l > uint64(len(d.b)-n) {
		d.fail("entry past the end")
		return nil
	}
	return d.bytes(n + int(l))
}

func (d *decoder) string() string {
	v := d.uvarint()
	if v > uint64(len(d.b)) {
		d.fail("string past the end")
		return ""
	}
	return string(d.bytes(int(v)))
}

// docRec is one document of a shard record, decoded.
type docRec struct {
	key     string
	m       DocMeta
	length  uint32
	terms   []uint32 // indexes into the record's terms
	entries [][]byte
}

// decodeShard adds the documents of shard s's record to the index.
func (ix *Index) decodeShard(s int, data []byte) error {
	d, err := decodeHeader(s, data)
	if err != nil {
		return err
	}
	terms := d.terms()
	ndocs := d.count()
	docs := make([]docRec, 0, ndocs)
	prevKey := ""
	for range ndocs {
		r := d.doc(s, prevKey, terms)
		if d.err != nil {
			return d.err
		}
		prevKey = r.key
		docs = append(docs, r)
	}
	if d.err != nil {
		return d.err
	}
	if len(d.b) != 0 {
		return fmt.Errorf("%w: %d bytes after the documents", ErrCorrupt, len(d.b))
	}
	if err := checkTerms(terms, docs); err != nil {
		return err
	}
	ix.addDocs(s, terms, docs)
	return nil
}

// decodeHeader checks the checksum and the header of shard s's record and
// returns a decoder at its terms.
func decodeHeader(s int, data []byte) (*decoder, error) {
	if len(data) < len(magic)+4 || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: not a shard record", ErrCorrupt)
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	d := &decoder{b: body[len(magic):]}
	if v := d.uvarint(); d.err == nil && v != formatVersion {
		return nil, fmt.Errorf("%w: format version %d, want %d", ErrCorrupt, v, formatVersion)
	}
	if n, sh := d.uvarint(), d.uvarint(); d.err == nil && (n != Shards || sh != uint64(s)) {
		return nil, fmt.Errorf("%w: shard %d of %d in the record of shard %d of %d", ErrCorrupt, sh, n, s, Shards)
	}
	return d, nil
}

// terms decodes a record's terms.
func (d *decoder) terms() []string {
	terms := make([]string, d.count())
	for i := range terms {
		terms[i] = d.string()
		if d.err == nil && (terms[i] == "" || len(terms[i]) > MaxTermLen) {
			d.fail("bad term %d", i)
		}
	}
	return terms
}

// doc decodes one document of shard s, whose key must follow prevKey,
// with indexes into the record's terms.
func (d *decoder) doc(s int, prevKey string, terms []string) docRec {
	var r docRec
	r.key = d.string()
	if d.err == nil {
		if err := backend.ValidateKey(r.key); err != nil || ShardOf(r.key) != s {
			d.fail("key %q does not belong in the shard", r.key)
		}
		if r.key <= prevKey {
			d.fail("key %q out of order", r.key)
		}
	}
	r.m = d.docMeta()
	r.length = uint32(min(d.uvarint(), math.MaxUint32))
	np := d.count()
	r.terms = make([]uint32, 0, np)
	r.entries = make([][]byte, 0, np)
	idx := uint64(0)
	for i := range np {
		delta := d.uvarint()
		if i > 0 && delta == 0 {
			d.fail("terms of %q out of order", r.key)
		}
		idx += delta
		e := d.entry()
		if d.err != nil {
			break
		}
		if idx >= uint64(len(terms)) {
			d.fail("term index %d of %d", idx, len(terms))
			break
		}
		if !validEntry(e, r.length) {
			d.fail("bad positions of %q in %q", terms[idx], r.key)
			break
		}
		r.terms = append(r.terms, uint32(idx))
		r.entries = append(r.entries, e)
	}
	return r
}

// docMeta decodes a document's DocMeta.
func (d *decoder) docMeta() DocMeta {
	var m DocMeta
	m.Size = d.varint()
	if ns := d.varint(); ns != 0 {
		m.MTime = time.Unix(0, ns)
	}
	if nt := d.count(); nt > 0 {
		m.Tags = make([]string, nt)
		for i := range m.Tags {
			m.Tags[i] = d.string()
		}
	}
	m.Source, m.Agent = d.string(), d.string()
	m.Session, m.Type = d.string(), d.string()
	switch f := d.bytes(1); {
	case d.err != nil:
	case f[0] == 1:
		m.HasImportance = true
		if b := d.bytes(8); d.err == nil {
			m.Importance = math.Float64frombits(binary.LittleEndian.Uint64(b))
		}
	case f[0] != 0:
		d.fail("bad flags %d", f[0])
	}
	return m
}

// checkTerms checks that a record's terms are distinct and each used by
// one of its documents.
func checkTerms(terms []string, docs []docRec) error {
	used := make([]bool, len(terms))
	for _, r := range docs {
		for _, t := range r.terms {
			used[t] = true
		}
	}
	seen := make(map[string]bool, len(terms))
	for i, t := range terms {
		if seen[t] || !used[i] {
			return fmt.Errorf("%w: term %q repeated or unused", ErrCorrupt, t)
		}
		seen[t] = true
	}
	return nil
}

// addDocs inserts the documents of shard s's record (but those with a
// secret name), each of the shard's terms looked up once; no lock: Load
// owns the new index.
func (ix *Index) addDocs(s int, terms []string, docs []docRec) {
	// Only the terms of the documents kept enter the dictionary.
	kept := docs[:0]
	used := make([]bool, len(terms))
	for _, r := range docs {
		if ix.secretName(r.key) {
			continue
		}
		kept = append(kept, r)
		for _, t := range r.terms {
			used[t] = true
		}
	}
	tidOf := make([]uint32, len(terms))
	for i, t := range terms {
		if !used[i] {
			continue
		}
		tid, ok := ix.dict[t]
		if !ok {
			tid = ix.newTermLocked(t)
		}
		tidOf[i] = tid
	}
	n := len(docs)
	for _, r := range kept {
		for i, t := range r.terms {
			r.terms[i] = tidOf[t]
		}
		ix.insertLocked(r.key, r.m, r.length, r.terms, r.entries)
	}
	ix.saved[s] = ix.version[s]
	if len(kept) < n {
		ix.version[s]++ // the record still holds the dropped ones: Load saves it
	}
}

// validEntry reports whether e is exactly one entry of one or more
// ascending positions below length.
func validEntry(e []byte, length uint32) bool {
	l, n := binary.Uvarint(e)
	if n <= 0 || l == 0 || uint64(n)+l != uint64(len(e)) {
		return false
	}
	p := uint64(0)
	for i := 0; n < len(e); i++ {
		v, m := binary.Uvarint(e[n:])
		if m <= 0 || (i > 0 && v == 0) {
			return false
		}
		n += m
		p += v
		if p >= uint64(length) {
			return false
		}
	}
	return n == len(e)
}
