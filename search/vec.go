package search

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/ignore"
)

// vecFormatVersion is the version of the vector shard encoding; a shard of
// another version is corrupt to this code (its vectors are made again).
const vecFormatVersion = 1

const vecMagic = "MFSV"

// EmbedBytes is how much of a (redacted) value is embedded: its key's
// words and the value's first EmbedBytes bytes. Embedding models read a
// few hundred words at most, so more costs time and says little.
const EmbedBytes = 4 << 10

// parallelMin is the number of vectors from which a search is split
// across GOMAXPROCS goroutines.
const parallelMin = 20000

// VecShardName returns the name of the system record of shard s of the
// vectors of embedder id: search/vec-SET-NN, SET the first 12 hex digits
// of the SHA-256 of id, so that each embedder's vectors are a set of
// their own (the record holds the whole ID too).
func VecShardName(id string, s int) string { return vecShardName(vecSet(id), s) }

func vecShardName(set string, s int) string {
	return fmt.Sprintf("%svec-%s-%02d", RecordPrefix, set, s)
}

// vecSet names the vector set of embedder id in its records' names.
func vecSet(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:6])
}

// ParseVecShardName returns the set and the shard of a VecShardName.
func ParseVecShardName(name string) (set string, s int, ok bool) {
	rest, ok := strings.CutPrefix(name, RecordPrefix+"vec-")
	set, _, ok2 := strings.Cut(rest, "-")
	if !ok || !ok2 || len(set) != 12 {
		return "", 0, false
	}
	s, ok = parseName(name, "vec-"+set+"-", func(s int) string { return vecShardName(set, s) })
	return set, s, ok
}

// legacyVecShardName is the name vector shard s had before each embedder
// had a set of its own: one set, of whichever embedder opened last.
func legacyVecShardName(s int) string { return fmt.Sprintf("%svec-%02d", RecordPrefix, s) }

// embedText is what is embedded of a document: its key's words, then the
// first EmbedBytes of its redacted value, cut at a rune boundary.
func EmbedText(key string, redacted []byte) string {
	v := redacted[:min(len(redacted), EmbedBytes)]
	for len(v) > 0 && !utf8.Valid(v[max(0, len(v)-utf8.UTFMax):]) {
		v = v[:len(v)-1] // a rune cut by the limit
	}
	words := strings.Map(func(r rune) rune {
		switch r {
		case '/', '.', '_', '-':
			return ' '
		}
		return r
	}, key)
	return words + "\n" + string(v)
}

// IsBinary reports whether a value is taken for binary (ignore.Binary: a
// NUL byte in its first 8000 bytes, or bytes that are not UTF-8 in its
// first KiB): it gets no terms, no snippet and the zero vector, and keeps
// its stamp and metadata, so that filters still find it.
func IsBinary(v []byte) bool { return ignore.Binary(v) }

// vecIndex holds one int8-quantized vector per document, made by one
// embedder, and searches them exactly. It is safe for concurrent use.
type Vectors struct {
	saveMu sync.Mutex // serializes Save

	mu      sync.RWMutex
	id      string           // guarded by mu: the embedder's ID
	dim     int              // guarded by mu: vector length; 0 until the first vector
	byKey   map[string]int32 // guarded by mu: key -> slot
	keys    []string         // guarded by mu: by slot; "" for a free slot
	stamps  []Stamp          // guarded by mu: by slot
	scale   []float32        // guarded by mu: by slot: the vector is q[i]*scale
	q       []int8           // guarded by mu: dim per slot
	free    []int32          // guarded by mu: free slots
	version [Shards]uint64   // guarded by mu: bumped by every change to a shard
	saved   [Shards]uint64   // guarded by mu: the version last saved or loaded
}

func NewVectors(id string) *Vectors {
	return &Vectors{id: id, byKey: make(map[string]int32)}
}

// quantize returns v as int8s and the scale that maps them back.
func quantize(dst []int8, v []float32) float32 {
	m := float32(0)
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	if m == 0 {
		clear(dst)
		return 0
	}
	scale := m / 127
	for i, x := range v {
		dst[i] = int8(math.Round(float64(x / scale)))
	}
	return scale
}

// errDim refuses a vector whose length is not the index's.
var errDim = errors.New("search: vector of another dimension")

// put keeps vec for key at stamp, replacing its vector.
func (vx *Vectors) Put(key string, st Stamp, vec []float32) error {
	vx.mu.Lock()
	defer vx.mu.Unlock()
	if vx.dim == 0 && len(vec) > 0 {
		vx.dim = len(vec)
	}
	if len(vec) != vx.dim {
		return fmt.Errorf("%w: %d, want %d", errDim, len(vec), vx.dim)
	}
	slot, ok := vx.byKey[key]
	if !ok {
		if n := len(vx.free); n > 0 {
			slot = vx.free[n-1]
			vx.free = vx.free[:n-1]
		} else {
			slot = int32(len(vx.keys))
			vx.keys = append(vx.keys, "")
			vx.stamps = append(vx.stamps, Stamp{})
			vx.scale = append(vx.scale, 0)
			vx.q = append(vx.q, make([]int8, vx.dim)...)
		}
		key = strings.Clone(key)
		vx.keys[slot] = key
		vx.byKey[key] = slot
	}
	vx.stamps[slot] = st
	vx.scale[slot] = quantize(vx.q[int(slot)*vx.dim:int(slot+1)*vx.dim], vec)
	vx.version[ShardOf(key)]++
	return nil
}

// delete drops key's vector.
func (vx *Vectors) Delete(key string) {
	vx.mu.Lock()
	defer vx.mu.Unlock()
	slot, ok := vx.byKey[key]
	if !ok {
		return
	}
	delete(vx.byKey, key)
	vx.keys[slot] = ""
	vx.free = append(vx.free, slot)
	vx.version[ShardOf(key)]++
}

// Len returns the number of vectors.
func (vx *Vectors) Len() int {
	vx.mu.RLock()
	defer vx.mu.RUnlock()
	return len(vx.byKey)
}

// Dim returns the vectors' dimension (0 before the first one).
func (vx *Vectors) Dim() int {
	vx.mu.RLock()
	defer vx.mu.RUnlock()
	return vx.dim
}

// stampsOf returns the stamp of every vector.
func (vx *Vectors) Stamps() map[string]Stamp {
	vx.mu.RLock()
	defer vx.mu.RUnlock()
	m := make(map[string]Stamp, len(vx.byKey))
	for k, s := range vx.byKey {
		m[k] = vx.stamps[s]
	}
	return m
}

// QueryVec is a query vector quantized as the documents' are.
type QueryVec struct {
	q     []int8
	scale float32
}

// NewQueryVec quantizes v.
func NewQueryVec(v []float32) QueryVec {
	q := QueryVec{q: make([]int8, len(v))}
	q.scale = quantize(q.q, v)
	return q
}

// dot8 returns the dot product of two int8 vectors of the same length.
func dot8(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// cosine returns the cosine of key's vector with qv; ok is false when key
// has no vector.
func (vx *Vectors) Cosine(key string, qv QueryVec) (float64, bool) {
	vx.mu.RLock()
	defer vx.mu.RUnlock()
	slot, ok := vx.byKey[key]
	if !ok || len(qv.q) != vx.dim {
		return 0, false
	}
	d := vx.dim
	return float64(dot8(vx.q[int(slot)*d:int(slot+1)*d], qv.q)) * float64(vx.scale[slot]*qv.scale), true
}

// search returns the k vectors closest to qv (by cosine, then key) among
// the keys that pass keep (nil keeps all), leaving out a cosine of floor
// or less (no likeness). keep is called only for a
// vector that would enter the top k, so a selective filter costs little.
func (vx *Vectors) Nearest(qv QueryVec, k int, keep func(key string) bool, floor float64) []Hit {
	vx.mu.RLock()
	defer vx.mu.RUnlock()
	if len(qv.q) != vx.dim || vx.dim == 0 || k <= 0 {
		return nil
	}
	n := len(vx.keys)
	parts := 1
	if n >= parallelMin {
		parts = runtime.GOMAXPROCS(0)
	}
	heaps := make([]hitHeap, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := n*p/parts, n*(p+1)/parts
		wg.Go(func() { heaps[p] = vx.scanLocked(qv, lo, hi, k, keep, floor) })
	}
	wg.Wait()
	h := heaps[0]
	for _, o := range heaps[1:] {
		for _, hit := range o {
			h.offer(hit, k)
		}
	}
	return h.sorted()
}

// scanLocked keeps the best k of slots lo to hi.
func (vx *Vectors) scanLocked(qv QueryVec, lo, hi, k int, keep func(string) bool, floor float64) hitHeap {
	h := make(hitHeap, 0, k)
	d := vx.dim
	qs := float64(qv.scale)
	for s := lo; s < hi; s++ {
		key := vx.keys[s]
		if key == "" {
			continue
		}
		score := float64(dot8(vx.q[s*d:(s+1)*d], qv.q)) * float64(vx.scale[s]) * qs
		if score <= floor {
			continue // unrelated (or the zero vector): no semantic hit
		}
		hit := Hit{Key: key, Score: score}
		if len(h) == k && !better(hit, h[0]) {
			continue
		}
		if keep != nil && !keep(key) {
			continue
		}
		h.offer(hit, k)
	}
	return h
}

// markAllDirty makes the next save write every shard (an index of
// another embedder, or a corrupt one, is overwritten whole).
func (vx *Vectors) MarkAllDirty() {
	vx.mu.Lock()
	defer vx.mu.Unlock()
	for s := range Shards {
		vx.version[s]++
	}
}

// dirtyShards returns the number of shards changed since their last save.
func (vx *Vectors) DirtyShards() int {
	vx.mu.RLock()
	defer vx.mu.RUnlock()
	n := 0
	for s := range Shards {
		if vx.version[s] != vx.saved[s] {
			n++
		}
	}
	return n
}

// Save writes the vector shards changed since the last save or load,
// but those hold reports true for (nil holds none; it is called with no
// lock of vx held), and returns how many it wrote; on an error the rest
// stay dirty.
func (vx *Vectors) Save(ctx context.Context, sys Sys, hold func(shard int) bool) (int, error) {
	vx.saveMu.Lock()
	defer vx.saveMu.Unlock()
	return saveShards(ctx, sys, shardSet{mu: &vx.mu, version: &vx.version, saved: &vx.saved,
		encodeLocked: vx.encodeShardLocked, name: func(s int) string { return VecShardName(vx.id, s) },
		what: "vector shard", hold: hold})
}

// encodeShardLocked encodes the vectors of shard s (format in doc.go).
func (vx *Vectors) encodeShardLocked(s int) []byte {
	var slots []int32
	for k, slot := range vx.byKey {
		if ShardOf(k) == s {
			slots = append(slots, slot)
		}
	}
	slices.SortFunc(slots, func(a, b int32) int { return strings.Compare(vx.keys[a], vx.keys[b]) })
	buf := make([]byte, 0, 32+len(vx.id)+len(slots)*(vx.dim+48))
	buf = append(buf, vecMagic...)
	buf = binary.AppendUvarint(buf, vecFormatVersion)
	buf = binary.AppendUvarint(buf, Shards)
	buf = binary.AppendUvarint(buf, uint64(s))
	buf = appendString(buf, vx.id)
	buf = binary.AppendUvarint(buf, uint64(vx.dim))
	buf = binary.AppendUvarint(buf, uint64(len(slots)))
	for _, slot := range slots {
		buf = appendString(buf, vx.keys[slot])
		buf = binary.AppendVarint(buf, vx.stamps[slot].Size)
		buf = binary.AppendVarint(buf, vx.stamps[slot].MTime)
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(vx.scale[slot]))
		for _, x := range vx.q[int(slot)*vx.dim : int(slot+1)*vx.dim] {
			buf = append(buf, byte(x))
		}
	}
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
}

// LoadVectors reads the vector set of embedder id from sys (none: an
// empty index, which the caller fills). The sets of other embedders are
// neither read nor touched: switching back to one finds its vectors as
// it left them. A shard that does not decode gives an error wrapping
// ErrCorrupt: the caller starts from an empty index and embeds every
// value again. Without a set of id's, the one set of earlier versions
// (search/vec-NN) is taken when id made it, marked to be saved under
// id's names (the old records are left, as other sets are, until a
// rebuild).
func LoadVectors(ctx context.Context, sys Sys, id string) (*Vectors, error) {
	list, err := sys.ListSys(ctx, RecordPrefix+"vec-")
	if err != nil {
		return nil, fmt.Errorf("search: list vector shards: %w", err)
	}
	set := vecSet(id)
	ours := func(name string) (int, bool) {
		got, s, ok := ParseVecShardName(name)
		return s, ok && got == set
	}
	vx := NewVectors(id)
	if slices.ContainsFunc(list, func(e backend.Entry) bool { _, ok := ours(e.Key); return ok }) {
		if err := loadShards(ctx, sys, list, ours, vx.decodeShard, "vector shard"); err != nil {
			return nil, err
		}
		return vx, nil
	}
	legacy := func(name string) (int, bool) { return parseName(name, "vec-", legacyVecShardName) }
	switch err := loadShards(ctx, sys, list, legacy, vx.decodeShard, "vector shard"); {
	case errors.Is(err, ErrCorrupt):
		return NewVectors(id), nil // another embedder's, or damaged: of no use to id
	case err != nil:
		return nil, err
	}
	if vx.Len() > 0 {
		vx.MarkAllDirty()
	}
	return vx, nil
}

// decodeShard adds the vectors of shard s's record to vx.
func (vx *Vectors) decodeShard(s int, data []byte) error {
	d, dim, err := vx.decodeHeader(s, data)
	if err != nil {
		return err
	}
	vx.decodeVectors(d, s, dim)
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return d.err
	}
	vx.mu.Lock()
	vx.saved[s] = vx.version[s]
	vx.mu.Unlock()
	return nil
}

// decodeHeader checks the checksum and the header of shard s's record and
// returns a decoder at its vectors and their dimension.
func (vx *Vectors) decodeHeader(s int, data []byte) (*decoder, uint64, error) {
	if len(data) < len(vecMagic)+4 {
		return nil, 0, fmt.Errorf("%w: truncated", ErrCorrupt)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, 0, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	if string(body[:len(vecMagic)]) != vecMagic {
		return nil, 0, fmt.Errorf("%w: bad magic", ErrCorrupt)
	}
	d := &decoder{b: body[len(vecMagic):]}
	if v := d.uvarint(); d.err == nil && v != vecFormatVersion {
		return nil, 0, fmt.Errorf("%w: format version %d, want %d", ErrCorrupt, v, vecFormatVersion)
	}
	if n := d.uvarint(); d.err == nil && n != Shards {
		return nil, 0, fmt.Errorf("%w: %d shards, want %d", ErrCorrupt, n, Shards)
	}
	if n := d.uvarint(); d.err == nil && n != uint64(s) {
		return nil, 0, fmt.Errorf("%w: shard %d in the record of shard %d", ErrCorrupt, n, s)
	}
	id := d.string()
	dim := d.uvarint()
	if d.err != nil {
		return nil, 0, d.err
	}
	if id != vx.id {
		return nil, 0, fmt.Errorf("%w: vectors of %q, not %q", ErrCorrupt, id, vx.id)
	}
	if dim == 0 || dim > 1<<16 || vx.dim != 0 && dim != uint64(vx.dim) {
		return nil, 0, fmt.Errorf("%w: dimension %d", ErrCorrupt, dim)
	}
	return d, dim, nil
}

// decodeVectors puts the vectors d holds (of shard s, dimension dim); a
// record that does not decode is d's error.
func (vx *Vectors) decodeVectors(d *decoder, s int, dim uint64) {
	n := d.count()
	prev := ""
	vec := make([]float32, dim)
	for i := 0; i < n && d.err == nil; i++ {
		key := d.string()
		st := Stamp{Size: d.varint(), MTime: d.varint()}
		raw := d.bytes(4 + int(dim))
		if d.err != nil {
			return
		}
		if i > 0 && key <= prev || key == "" || ShardOf(key) != s {
			d.fail("key out of order or in the wrong shard")
			return
		}
		prev = key
		scale := math.Float32frombits(binary.LittleEndian.Uint32(raw))
		if math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) || scale < 0 {
			d.fail("bad scale")
			return
		}
		for j := range vec {
			vec[j] = float32(int8(raw[4+j])) * scale
		}
		vx.mu.Lock()
		if vx.dim == 0 {
			vx.dim = int(dim)
		}
		vx.mu.Unlock()
		if err := vx.Put(key, st, vec); err != nil {
			d.fail("%v", err)
		}
	}
}
