package history

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"sync"

	"github.com/PlakarKorp/go-cdc-chunkers"
	_ "github.com/PlakarKorp/go-cdc-chunkers/chunkers/fastcdc" // registers fastcdc-v1.0.0

	"github.com/memfs/memfs/backend"
)

// The chunker, as measured in BENCHMARKS.md ("History: choosing the
// chunker"): FastCDC as github.com/PlakarKorp/go-cdc-chunkers v1.1.0 names
// it, min 2 KiB, normal 8 KiB, max 32 KiB, the default gear table. A
// manifest records all four, so that a later release or another choice
// never reads an old manifest with other boundaries in mind.
const (
	Algorithm  = "fastcdc-v1.0.0"
	MinChunk   = 2 << 10
	NormalSize = 8 << 10
	MaxChunk   = 32 << 10
	// Whole is the size from which a value is chunked: smaller values
	// are one object (the usual note is one record, and an edit of it
	// costs at most its size).
	Whole = 32 << 10
)

// The system records (see the package doc, "Layout").
const (
	root           = "history/"
	objectPrefix   = root + "o/"
	manifestPrefix = root + "m/"
	damagedPrefix  = root + "damaged/"
	manifestMagic  = "memfs-manifest 1"
)

// Addr is the content address of a value: the SHA-256 of its bytes.
type Addr [sha256.Size]byte

// AddrOf returns the address of value.
func AddrOf(value []byte) Addr { return sha256.Sum256(value) }

// ParseAddr parses the hex form String gives.
func ParseAddr(s string) (Addr, error) {
	var a Addr
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(a) {
		return a, fmt.Errorf("history: %q is not a SHA-256 in hex", s)
	}
	copy(a[:], b)
	return a, nil
}

// String is the address in lower-case hex, as the event log writes it.
func (a Addr) String() string { return hex.EncodeToString(a[:]) }

// IsZero reports whether a is the zero Addr (no value).
func (a Addr) IsZero() bool { return a == Addr{} }

func objectName(a Addr) string   { return objectPrefix + a.String() }
func manifestName(a Addr) string { return manifestPrefix + a.String() }

// Record is one system record to write: what PlanValue and PlanVersions return for
// the caller to write in its own step (Write, or a SwapSys of its own).
type Record struct {
	Name string
	Data []byte
}

// Plan is what storing one value takes.
type Plan struct {
	Addr Addr
	// Records are the objects (the value whole, or its chunks) and, for
	// a chunked value, its manifest last: written in order, a crash never
	// leaves a manifest naming a missing chunk. Each is named by its
	// content, so writing one twice writes the same bytes.
	Records []Record
}

// PlanValue splits value into the records that store it. It does no I/O. The
// records alias value (a chunk is a slice of it): the caller must not
// change value until they are written.
func (s *Store) PlanValue(value []byte) Plan {
	a := AddrOf(value)
	if len(value) < Whole {
		return Plan{Addr: a, Records: []Record{{Name: objectName(a), Data: value}}}
	}
	var recs []Record
	m := manifest{size: int64(len(value))}
	s.split(value, func(off, n int) {
		chunk := value[off : off+n]
		c := AddrOf(chunk)
		m.chunks = append(m.chunks, chunkRef{addr: c, size: uint32(len(chunk))})
		recs = append(recs, Record{Name: objectName(c), Data: chunk})
	})
	return Plan{Addr: a, Records: append(recs, Record{Name: manifestName(a), Data: m.encode()})}
}

// split calls fn with the offset and length of each chunk of value, in
// order. (The chunker's slices alias its scan buffer, which the next
// value reuses: the caller takes its chunks from value.)
func (s *Store) split(value []byte, fn func(off, n int)) {
	buf := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(buf)
	// The chunker fills in options it is given as zero: a fresh copy each time.
	opts := chunkers.ChunkerOpts{MinSize: MinChunk, NormalSize: NormalSize, MaxSize: MaxChunk}
	c, err := chunkers.NewChunkerBuffer(Algorithm, bytes.NewReader(value), &opts, *buf)
	if err != nil {
		panic("history: chunker: " + err.Error()) // constant options: cannot fail
	}
	for off := 0; ; {
		chunk, err := c.Next()
		if len(chunk) > 0 {
			fn(off, len(chunk))
			off += len(chunk)
		}
		if err != nil { // io.EOF: a bytes.Reader fails no other way
			return
		}
	}
}

// manifest lists the chunks of a value. Its record is the line
//
//	memfs-manifest 1 fastcdc-v1.0.0 2048 8192 32768 SIZE COUNT\n
//
// then COUNT entries of 36 bytes: the chunk's SHA-256 and its length
// (4 bytes, big-endian). Binary, because a 1 MiB value has about 115
// chunks and a manifest is written per version: in hex and JSON it would
// cost more than the chunks an append adds.
type manifest struct {
	size   int64
	chunks []chunkRef
}

type chunkRef struct {
	addr Addr
	size uint32
}

const chunkRefSize = sha256.Size + 4

func (m *manifest) header() string {
	return fmt.Sprintf("%s %s %d %d %d %d %d\n", manifestMagic, Algorithm, MinChunk, NormalSize, MaxChunk, m.size, len(m.chunks))
}

func (m *manifest) encode() []byte {
	h := m.header()
	b := make([]byte, 0, len(h)+len(m.chunks)*chunkRefSize)
	b = append(b, h...)
	for _, c := range m.chunks {
		b = append(b, c.addr[:]...)
		b = binary.BigEndian.AppendUint32(b, c.size)
	}
	return b
}

func decodeManifest(b []byte) (*manifest, error) {
	line, rest, ok := bytes.Cut(b, []byte{'\n'})
	if !ok {
		return nil, errors.New("no header line")
	}
	f := strings.Fields(string(line))
	if len(f) != 8 || f[0]+" "+f[1] != manifestMagic {
		return nil, fmt.Errorf("header %q is not a manifest's", line)
	}
	// The chunker's name and sizes are those Plan uses: this release
	// reads no other (a value chunked otherwise reads the same way, but
	// would not deduplicate against new ones; refuse rather than guess).
	if f[2] != Algorithm || f[3] != strconv.Itoa(MinChunk) || f[4] != strconv.Itoa(NormalSize) || f[5] != strconv.Itoa(MaxChunk) {
		return nil, fmt.Errorf("chunker %s %s/%s/%s is not this release's", f[2], f[3], f[4], f[5])
	}
	size, err1 := strconv.ParseInt(f[6], 10, 64)
	n, err2 := strconv.Atoi(f[7])
	if err1 != nil || err2 != nil || size < 0 || n < 0 || len(rest) != n*chunkRefSize {
		return nil, fmt.Errorf("header %q does not match %d bytes of entries", line, len(rest))
	}
	m := &manifest{size: size, chunks: make([]chunkRef, n)}
	var sum int64
	for i := range m.chunks {
		e := rest[i*chunkRefSize:]
		copy(m.chunks[i].addr[:], e[:sha256.Size])
		m.chunks[i].size = binary.BigEndian.Uint32(e[sha256.Size:])
		sum += int64(m.chunks[i].size)
	}
	if sum != size {
		return nil, fmt.Errorf("chunks add up to %d bytes, the header says %d", sum, size)
	}
	return m, nil
}

// Missing returns the records of recs the store does not hold yet, in
// order: what Put writes. Identical objects are stored once (a record of
// at most 32 KiB is read to know it is there and intact; see has).
func (s *Store) Missing(ctx context.Context, recs []Record) ([]Record, error) {
	var uniq []Record
	seen := make(map[string]bool, len(recs))
	for _, r := range recs {
		if !seen[r.Name] {
			seen[r.Name] = true
			uniq = append(uniq, r)
		}
	}
	held := make([]bool, len(uniq))
	if err := each(len(uniq), func(i int) (err error) {
		held[i], err = s.has(ctx, uniq[i])
		return err
	}); err != nil {
		return nil, err
	}
	var out []Record
	for i, r := range uniq {
		if !held[i] {
			out = append(out, r)
		}
	}
	return out, nil
}

// has reports whether the store holds the record r, intact. A damaged
// copy (bytes that do not hash to the name) is saved aside under
// history/damaged/ first and reported as missing, so that the caller
// writes the right bytes over it: the record names its content, so those
// bytes are the one true repair, and the damaged ones are kept.
func (s *Store) has(ctx context.Context, r Record) (bool, error) {
	data, err := s.sys.LoadSys(ctx, r.Name)
	switch {
	case errors.Is(err, backend.ErrKeyNotFound):
		return false, nil
	case errors.Is(err, backend.ErrCorrupt):
		var ce *backend.CorruptError
		if errors.As(err, &ce) {
			data = ce.Raw
		}
	case err != nil:
		return false, fmt.Errorf("history: %w", err)
	case bytes.Equal(data, r.Data):
		return true, nil
	}
	sum := AddrOf(data)
	aside := damagedPrefix + strings.TrimPrefix(r.Name, root) + "." + sum.String()[:16]
	if err := s.sys.SaveSys(ctx, aside, data); err != nil {
		return false, fmt.Errorf("history: keep the damaged %s: %w", r.Name, err)
	}
	return false, nil
}

// Write saves recs durably, in order: on a store that swaps system
// records (badger, etcd, memstore) in batches, each one atomic step, else
// one SaveSys each. A crash keeps a prefix of recs.
//
// A batch is first up to bigBatch records and bigBytes bytes; one the
// store refuses (badger takes about 15 % of its memtable in one
// transaction, etcd 128 operations and 1.5 MiB) is written again in
// batches half as large, down to writeBatch and writeBytes, which every
// store takes: every record names its content, so writing one twice
// writes the same bytes. Each batch costs a transaction, on badger an
// fsync: 10,000 notes in batches of 64 took 314 (BENCHMARKS.md).
func (s *Store) Write(ctx context.Context, recs []Record) error {
	return s.newWriter().write(ctx, recs)
}

// writer writes records for Write, and keeps the batch size the store
// last took for its next call.
type writer struct {
	s                 *Store
	sw                backend.SysSwapper    // nil: the store has no SwapSys
	bs                backend.SysBatchSaver // nil: the store has no SaveSysBatch
	maxRecs, maxBytes int
}

func (s *Store) newWriter() *writer {
	sw, _ := s.sys.(backend.SysSwapper)
	bs, _ := s.sys.(backend.SysBatchSaver)
	return &writer{s: s, sw: sw, bs: bs, maxRecs: bigBatch, maxBytes: bigBytes}
}

// batchSave writes recs with SaveSysBatch, which keeps any subset of a
// batch on a crash: a batch ends before a record that may name earlier
// ones (a manifest its chunks, a group its versions), which goes into the
// next, written once the batch is durable. Objects and versions name
// nothing written with them: 10,000 notes' objects are one batch, their
// versions and group two.
func batchSave(ctx context.Context, bs backend.SysBatchSaver, recs []Record) error {
	batch := map[string][]byte{}
	for _, r := range recs {
		leaf := strings.HasPrefix(r.Name, objectPrefix) || strings.HasPrefix(r.Name, versionPrefix)
		if !leaf && len(batch) > 0 {
			if err := bs.SaveSysBatch(ctx, batch); err != nil {
				return fmt.Errorf("history: %w", err)
			}
			batch = map[string][]byte{}
		}
		batch[r.Name] = r.Data
	}
	if err := bs.SaveSysBatch(ctx, batch); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return nil
}

func (w *writer) write(ctx context.Context, recs []Record) error {
	if w.sw == nil && w.bs != nil {
		return batchSave(ctx, w.bs, recs)
	}
	if w.sw == nil {
		// One save at a time is one fsync at a time on a directory
		// store: 2,000 notes' records took longer than their values.
		// Concurrent fsyncs share the file system's journal commits.
		return each(len(recs), func(i int) error {
			if err := w.s.sys.SaveSys(ctx, recs[i].Name, recs[i].Data); err != nil {
				return fmt.Errorf("history: %w", err)
			}
			return nil
		})
	}
	for len(recs) > 0 {
		n, err := swapBatch(ctx, w.sw, recs, w.maxRecs, w.maxBytes)
		if err != nil && w.maxRecs > writeBatch {
			w.maxRecs, w.maxBytes = max(w.maxRecs/2, writeBatch), max(w.maxBytes/2, writeBytes)
			continue
		}
		if err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// WriteMissing is Missing and Write of recs, pipelined: the records of
// one part of recs are checked while those missing from the part before
// are written, so the reads of the check cost no time of their own (a
// flush of 10,000 notes spent 0.4 s checking before it wrote anything:
// BENCHMARKS.md). Records are written in the order of recs, so a
// manifest still follows its chunks; a record recs holds twice, in two
// parts, may be written twice (the same bytes under the same name). It
// returns the bytes written.
func (s *Store) WriteMissing(ctx context.Context, recs []Record) (int64, error) {
	type part struct {
		recs []Record
		err  error
	}
	ctx, cancel := context.WithCancel(ctx)
	parts := make(chan part, 1) // one checked ahead of the write
	go func() {
		defer close(parts)
		seen := make(map[string]bool, len(recs))
		for len(recs) > 0 {
			n := min(len(recs), checkPart)
			var uniq []Record
			for _, r := range recs[:n] {
				if !seen[r.Name] {
					seen[r.Name] = true
					uniq = append(uniq, r)
				}
			}
			recs = recs[n:]
			missing, err := s.Missing(ctx, uniq)
			select {
			case parts <- part{missing, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		cancel()
		for range parts { // the check ends before recs goes back to the caller
		}
	}()
	w := s.newWriter()
	var written int64
	for p := range parts {
		if p.err != nil {
			return written, p.err
		}
		if err := w.write(ctx, p.recs); err != nil {
			return written, err
		}
		for _, r := range p.recs {
			written += int64(len(r.Data))
		}
	}
	return written, ctx.Err()
}

// checkPart is the records WriteMissing checks in one step: about one
// batch of notes that badger takes in a transaction.
const checkPart = 2048

// swapBatch writes the first records of recs, up to maxRecs and maxBytes
// (one at least), in one SwapSys, and returns how many it took.
func swapBatch(ctx context.Context, sw backend.SysSwapper, recs []Record, maxRecs, maxBytes int) (int, error) {
	puts := map[string][]byte{}
	size := 0
	n := 0
	for ; n < len(recs) && len(puts) < maxRecs && (n == 0 || size+len(recs[n].Data) <= maxBytes); n++ {
		puts[recs[n].Name] = recs[n].Data
		size += len(recs[n].Data)
	}
	// The guard is a name no one writes: the swap always holds, and
	// is the one atomic multi-record write a SysStore offers.
	done, err := sw.SwapSys(ctx, writeGuard, nil, puts, nil)
	if err != nil {
		return n, fmt.Errorf("history: %w", err)
	}
	if !done {
		return n, fmt.Errorf("history: the store holds %s, which memfs never writes", writeGuard)
	}
	return n, nil
}

// The Write batches: a big one first, and the least, within etcd's limits
// on one transaction (128 operations, 1.5 MiB: etcdstore.SwapSys refuses
// more), and a record of up to 1 MiB (an index's manifest) alone.
const (
	bigBatch   = 4096
	bigBytes   = 4 << 20
	writeBatch = 64
	writeBytes = 1 << 20
	writeGuard = root + "guard"
)

// Put stores value and returns its address: PlanValue, then
// WriteMissing. It returns how many bytes of records it wrote.
func (s *Store) Put(ctx context.Context, value []byte) (Addr, int64, error) {
	p := s.PlanValue(value)
	n, err := s.WriteMissing(ctx, p.Records)
	return p.Addr, n, err
}

// Get returns the value at a. A record whose bytes do not hash to their
// name is an error naming it that satisfies errors.Is(err,
// backend.ErrCorrupt); a value the store does not hold, one satisfying
// errors.Is(err, backend.ErrKeyNotFound).
func (s *Store) Get(ctx context.Context, a Addr) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := s.Copy(ctx, &buf, a); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Copy writes the value at a to w, a chunk at a time, each checked before
// it is written; it returns the bytes written. On an error, w may hold
// the chunks before the damaged one, never a byte of it.
func (s *Store) Copy(ctx context.Context, w io.Writer, a Addr) (int64, error) {
	data, err := s.object(ctx, a)
	if err == nil {
		n, err := w.Write(data)
		return int64(n), err
	}
	if !errors.Is(err, backend.ErrKeyNotFound) {
		return 0, err
	}
	m, err := s.manifest(ctx, a)
	if err != nil {
		return 0, err
	}
	whole := sha256.New()
	var n int64
	for i, c := range m.chunks {
		data, err := s.object(ctx, c.addr)
		if errors.Is(err, backend.ErrKeyNotFound) {
			// The manifest names it: the store lost it.
			err = &fs.PathError{Op: "get", Path: objectName(c.addr), Err: fmt.Errorf("%w: missing", backend.ErrCorrupt)}
		}
		if err != nil {
			return n, fmt.Errorf("history: value %s, chunk %d of %d: %w", a, i+1, len(m.chunks), err)
		}
		if len(data) != int(c.size) {
			return n, fmt.Errorf("history: value %s, chunk %d of %d: %w", a, i+1, len(m.chunks),
				&fs.PathError{Op: "get", Path: objectName(c.addr), Err: fmt.Errorf("%w: %d bytes, the manifest says %d", backend.ErrCorrupt, len(data), c.size)})
		}
		whole.Write(data)
		k, err := w.Write(data)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	if got := Addr(whole.Sum(nil)); got != a {
		// Every chunk is intact, so the manifest lists the wrong ones.
		return n, &fs.PathError{Op: "get", Path: manifestName(a), Err: fmt.Errorf("%w: its chunks make the value %s", backend.ErrCorrupt, got)}
	}
	return n, nil
}

// object loads the object a and checks its bytes against its name.
func (s *Store) object(ctx context.Context, a Addr) ([]byte, error) {
	name := objectName(a)
	data, err := s.sys.LoadSys(ctx, name)
	if err != nil {
		if errors.Is(err, backend.ErrKeyNotFound) {
			return nil, backend.NotFound("get", name)
		}
		return nil, fmt.Errorf("history: %w", err)
	}
	if got := AddrOf(data); got != a {
		return nil, &fs.PathError{Op: "get", Path: name, Err: fmt.Errorf("%w: its bytes hash to %s", backend.ErrCorrupt, got)}
	}
	return data, nil
}

// manifest loads and decodes the manifest of the value a.
func (s *Store) manifest(ctx context.Context, a Addr) (*manifest, error) {
	name := manifestName(a)
	b, err := s.sys.LoadSys(ctx, name)
	if err != nil {
		if errors.Is(err, backend.ErrKeyNotFound) {
			return nil, backend.NotFound("get", objectName(a))
		}
		return nil, fmt.Errorf("history: %w", err)
	}
	m, err := decodeManifest(b)
	if err != nil {
		return nil, &fs.PathError{Op: "get", Path: name, Err: fmt.Errorf("%w: %v", backend.ErrCorrupt, err)}
	}
	return m, nil
}

// newBufs is the pool of the chunker's scan buffers: NewChunker would
// allocate two of MaxChunk per value.
func newBufs() *sync.Pool {
	return &sync.Pool{New: func() any { b := make([]byte, 2*MaxChunk); return &b }}
}

// each runs fn(0) ... fn(n-1), loadConcurrency at once, and returns their
// errors joined.
func each(n int, fn func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, loadConcurrency)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn(i)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
