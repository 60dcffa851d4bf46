// Package journal is memfs's crash journal: an append-only file of
// completed changes (a file closed after writing, a removal, a rename) made
// since the last flush. Appends are plain write(2) calls, never fsync'd, so
// a close does not wait for a disk barrier; they survive kill -9 of the
// process because the kernel already holds them. After a crash the records
// are read back at the next mount, replayed into the session, and flushed.
//
// Each record is framed as
//
//	magic "\xe5JNL" | uint32 length | uint32 CRC-32C of length and payload | payload
//
// The magic makes the journal self-synchronising: a damaged frame (a
// flipped byte, a torn write after a power loss) is skipped up to the next
// magic that starts a frame whose checksum holds, so the intact records
// before and after it are all replayed. Damaged bytes are never dropped
// silently: Open copies them to a file beside the journal
// (NAME.damaged-TIME) and reports them (Damaged), then writes the journal
// again without them. Journals written before the magic (frames of
// uint32 length | uint32 CRC of payload | payload) are still read; Open
// rewrites them in the new framing.
//
// Records carry the session's generation. Truncate(through) drops every
// record at or below a generation that a flush made durable in the store,
// and from then on Append ignores records at or below it, so a record that
// was written late can never bring back a value older than the store's.
//
// # Superseded records are scrubbed
//
// A record that holds a key's whole value, or removes the key, makes every
// earlier record of that key's value useless. Append overwrites those
// earlier values in place (the frame keeps its length and gets a new
// checksum; the freed bytes become zeros), after the new record is written.
// This is how an append that turned out to complete a secret leaves no
// trace: the session redacts the whole value into a new record, and the
// bytes of the earlier appends are gone from the file (from the page cache
// at once, from the disk at the next writeback). A record older than one
// already written for the same key is dropped for the same reason.
//
// What reaches the journal has already been redacted by the session.
//
// # Concurrency
//
// A Journal is safe for concurrent use. One mutex guards the file, its
// offset and its index; a second one, taken first, serializes Truncate and
// Reset. Append holds the first for one write(2) and, when it supersedes
// earlier records, one pwrite(2) each (after a pread(2) of a record that
// holds other keys too); it never fsyncs, and keeps none of the Record's
// slices. Truncate copies the kept records to a new file and fsyncs it
// without the lock, so Appends go on meanwhile; it takes the lock to copy
// the records appended since, rename the new file over the journal and
// fsync the directory. It copies and fsyncs the file under the lock, so
// that an Append waits for it, when a record was scrubbed during its copy,
// when the copy failed, or when no record is kept (the file is truncated
// and fsynced); Reset always works under the lock. The package starts no
// goroutines and calls nothing back. After Close, Append, Truncate and
// Reset fail (as does a Truncate that was copying); Size and Damaged still
// answer.
package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/memfs/memfs/backend"
)

// Record is one completed change: the entries to save and the keys to delete.
type Record struct {
	Gen     uint64
	Entries []backend.Entry
	Removed []string
	// Append says that each entry's Value is bytes appended to the key's
	// value (created with the entry's Info if missing), not the value.
	Append bool
	// Bases maps keys of Entries and Removed to the store's version the
	// change was made on (the zero Version: the key was absent), for a
	// session that states it at its flush (a shared store's conflict
	// policy); nil for none. Records written before it have none.
	Bases map[string]backend.Version
	// Dropped are keys whose earlier records no longer matter, though r
	// changes nothing of them: the change they recorded moved elsewhere
	// (a conflict copy in r's Entries). Replay has nothing to do for them.
	Dropped []string
	// Renamed maps, for a rename, each moved file's new key (in Entries)
	// to its old one (in Removed): a replay that finds the rename already
	// in the store still tells of it (session.Event) as a rename. Nil for
	// other records and for records written before it.
	Renamed map[string]string
}

// Journal is an open journal file. It is safe for concurrent use.
type Journal struct {
	path string

	// rotMu serializes Truncate and Reset. Truncate copies the kept
	// records to a new file and fsyncs it outside mu, so that Append
	// (every close(2) through the mount) does not wait for that fsync; it
	// still waits for the swap's directory fsync, and for the cases the
	// package doc lists. Lock order: rotMu, then mu.
	rotMu sync.Mutex
	// copied, when set (tests), runs after Truncate copied the kept
	// records and before it takes mu again.
	copied func()

	mu      sync.Mutex // guards the fields below and the file offset
	f       *os.File
	size    int64
	through uint64            // records at or below this generation are durable elsewhere
	index   []frame           // every record in the file, in order
	values  map[string][]int  // key -> positions in index of the frames holding a value of it
	whole   map[string]uint64 // key -> highest generation of a frame that determines it wholly
	damaged []Damage          // what Open found damaged and moved aside
	scrubs  uint64            // frames rewritten in place so far (a copy made before one is stale)
}

// Damage is a damaged range of a journal that Open moved aside, or that
// Read found and left in place.
type Damage struct {
	Off, Len int64  // where it was in the journal file
	SavedTo  string // the file that holds its bytes now ("" if it could not be written)
	Err      error  // why it could not be saved, if so
}

// Damaged reports the damaged ranges Open found, copied aside and left out.
func (j *Journal) Damaged() []Damage {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.damaged)
}

type frame struct {
	gen      uint64
	off, len int64 // of the whole frame
	solo     bool  // holds one entry and no removal: a scrub need not read it
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

const maxRecord = 1 << 31

// ErrNotRegular is returned by Open when the journal's path is a symbolic
// link or anything but a regular file. memfs never follows a link inside a
// store: a store that arrived by git, rsync or unzip may carry one that
// points at a file outside it.
var ErrNotRegular = errors.New("journal: not a regular file (memfs never follows a symbolic link in a store)")

// Open opens (creating) the journal at path and returns the records it
// holds, in file order. A torn tail is cut off. The file itself is never
// followed when it is a symbolic link (ErrNotRegular).
func Open(path string) (*Journal, []Record, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	f, err := openNoFollow(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, nil, err
	}
	j := &Journal{path: path, f: f}
	recs, rewrite, err := j.readAll(true)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	for _, d := range j.damaged {
		if d.Err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("journal %s: %d damaged bytes at offset %d could not be copied aside (%w); the journal was left as it is",
				path, d.Len, d.Off, d.Err)
		}
	}
	if rewrite {
		// Damage moved aside, or frames of the old layout: write the
		// intact frames again, so new records follow intact ones.
		if err := j.rewriteLocked(j.index); err != nil {
			j.f.Close()
			return nil, nil, err
		}
	}
	if _, err := j.f.Seek(j.size, io.SeekStart); err != nil {
		j.f.Close()
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	return j, recs, nil
}

// openNoFollow opens path without following a symbolic link in its last
// component, and checks that it is a regular file.
func openNoFollow(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%w: %s", ErrNotRegular, path)
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("journal: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: %s", ErrNotRegular, path)
	}
	return f, nil
}

var magic = []byte("\xe5JNL")

const header = 12 // magic, length, checksum

// readAll reads every intact frame, moves damaged ranges aside (with
// save; else it notes them only), and says whether the file must be
// written again (damage, or old frames).
func (j *Journal) readAll(save bool) (recs []Record, rewrite bool, err error) {
	data, err := io.ReadAll(j.f)
	if err != nil {
		return nil, false, fmt.Errorf("journal: read %s: %w", j.path, err)
	}
	off := 0
	legacy := true // frames of the old layout may only come first
	for off < len(data) {
		r, n, ok := frameAt(data[off:], legacy)
		if ok {
			if !bytes.HasPrefix(data[off:], magic) {
				rewrite = true
			} else {
				legacy = false
			}
			if len(r.Entries) > 0 || len(r.Removed) > 0 { // not wholly scrubbed
				recs = append(recs, r)
			}
			j.addFrameLocked(frame{gen: r.Gen, off: int64(off), len: int64(n)}, r)
			off += n
			continue
		}
		// Damage: up to the next magic that starts an intact frame.
		next := len(data)
		for from := off + 1; from < len(data); {
			i := bytes.Index(data[from:], magic)
			if i < 0 {
				break
			}
			if _, _, ok := frameAt(data[from+i:], false); ok {
				next = from + i
				break
			}
			from += i + 1
		}
		d := Damage{Off: int64(off), Len: int64(next - off)}
		if save {
			d = j.saveDamage(int64(off), data[off:next])
		}
		j.damaged = append(j.damaged, d)
		rewrite = true
		legacy = false
		off = next
	}
	j.size = int64(off)
	return recs, rewrite, nil
}

// frameAt decodes the frame at the start of b: in the current layout, or,
// with legacy, in the layout before the magic. It returns the record and
// the frame's length.
func frameAt(b []byte, legacy bool) (Record, int, bool) {
	var payload []byte
	var n int
	switch {
	case bytes.HasPrefix(b, magic):
		if len(b) < header {
			return Record{}, 0, false
		}
		l := int64(binary.LittleEndian.Uint32(b[4:]))
		if int64(len(b)-header) < l || frameSum(b[4:8], b[header:header+int(l)]) != binary.LittleEndian.Uint32(b[8:]) {
			return Record{}, 0, false
		}
		payload, n = b[header:header+int(l)], header+int(l)
	case legacy:
		if len(b) < 8 {
			return Record{}, 0, false
		}
		l := int64(binary.LittleEndian.Uint32(b))
		if int64(len(b)-8) < l || crc32.Checksum(b[8:8+l], crcTable) != binary.LittleEndian.Uint32(b[4:]) {
			return Record{}, 0, false
		}
		payload, n = b[8:8+l], 8+int(l)
	default:
		return Record{}, 0, false
	}
	r, err := decode(payload)
	if err != nil {
		return Record{}, 0, false
	}
	return r, n, true
}

// frameSum is the checksum of a frame: its length bytes and its payload.
func frameSum(length, payload []byte) uint32 {
	return crc32.Update(crc32.Checksum(length, crcTable), crcTable, payload)
}

// saveDamage copies damaged bytes to a new file beside the journal.
func (j *Journal) saveDamage(off int64, b []byte) Damage {
	d := Damage{Off: off, Len: int64(len(b))}
	name := fmt.Sprintf("%s.damaged-%s-%d", j.path, time.Now().UTC().Format("20060102T150405Z"), off)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err == nil {
		_, err = f.Write(b)
		if serr := f.Sync(); err == nil {
			err = serr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		d.Err = err
		os.Remove(name)
		return d
	}
	d.SavedTo = name
	return d
}

// addFrameLocked appends fr, which holds r, to the index.
func (j *Journal) addFrameLocked(fr frame, r Record) {
	if j.values == nil {
		j.values = make(map[string][]int)
		j.whole = make(map[string]uint64)
	}
	i := len(j.index)
	fr.solo = len(r.Entries) == 1 && len(r.Removed) == 0 && len(r.Dropped) == 0
	j.index = append(j.index, fr)
	for _, e := range r.Entries {
		if v := j.values[e.Key]; len(v) == 0 || v[len(v)-1] != i {
			j.values[e.Key] = append(v, i)
		}
	}
	for _, k := range determined(r) {
		j.whole[k] = max(j.whole[k], r.Gen)
	}
}

// determined returns the keys that r determines wholly: whatever earlier
// records said of their values no longer matters once r is replayed.
func determined(r Record) []string {
	var keys []string
	if !r.Append {
		for _, e := range r.Entries {
			keys = append(keys, e.Key)
		}
	}
	keys = append(keys, r.Removed...)
	return append(keys, r.Dropped...)
}

// Append writes r to the journal without waiting for a disk barrier. A
// record at or below the last Truncate generation is already durable in the
// store and is dropped. Entries of keys that a record of a later generation
// already determines are dropped; earlier records' values of the keys r
// determines are scrubbed (see the package doc).
func (j *Journal) Append(r Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("journal: closed")
	}
	if r.Gen <= j.through && r.Gen != 0 {
		return nil
	}
	r = j.withoutStaleLocked(r)
	if len(r.Entries) == 0 && len(r.Removed) == 0 && len(r.Dropped) == 0 {
		return nil
	}
	parts, n, err := frameParts(r)
	if err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := j.f.Write(p); err != nil {
			// A short write leaves a torn frame: cut it so later records stay readable.
			j.f.Truncate(j.size)
			j.f.Seek(j.size, io.SeekStart)
			return fmt.Errorf("journal: append: %w", err)
		}
	}
	j.addFrameLocked(frame{gen: r.Gen, off: j.size, len: n}, r)
	j.size += n
	if r.Gen != 0 {
		if err := j.scrubLocked(determined(r), r.Gen, len(j.index)-1); err != nil {
			return err
		}
	}
	return nil
}

// frameParts is the frame of r as pieces to write in order (the header,
// then encodeParts), and its length.
func frameParts(r Record) ([][]byte, int64, error) {
	parts := encodeParts(r)
	var n int64
	for _, p := range parts {
		n += int64(len(p))
	}
	if n >= maxRecord {
		return nil, 0, fmt.Errorf("journal: record of %d bytes too large", n)
	}
	h := make([]byte, header)
	copy(h, magic)
	binary.LittleEndian.PutUint32(h[4:], uint32(n))
	sum := crc32.Checksum(h[4:8], crcTable)
	for _, p := range parts {
		sum = crc32.Update(sum, crcTable, p)
	}
	binary.LittleEndian.PutUint32(h[8:], sum)
	return append([][]byte{h}, parts...), header + n, nil
}

func frameOf(r Record) ([]byte, error) {
	payload := encode(r)
	if len(payload) >= maxRecord {
		return nil, fmt.Errorf("journal: record of %d bytes too large", len(payload))
	}
	buf := make([]byte, header, header+len(payload))
	copy(buf, magic)
	binary.LittleEndian.PutUint32(buf[4:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[8:], frameSum(buf[4:8], payload))
	return append(buf, payload...), nil
}

// withoutStaleLocked drops r's entries of keys that a frame of a later
// generation determines wholly (a closer whose record arrives late).
func (j *Journal) withoutStaleLocked(r Record) Record {
	if r.Gen == 0 || !slices.ContainsFunc(r.Entries, func(e backend.Entry) bool { return j.whole[e.Key] > r.Gen }) {
		return r
	}
	keep := make([]backend.Entry, 0, len(r.Entries))
	for _, e := range r.Entries {
		if j.whole[e.Key] <= r.Gen {
			keep = append(keep, e)
		}
	}
	r.Entries = keep
	return r
}

// scrubLocked removes the values of keys from every frame before the one
// at position last whose generation is below gen, rewriting each such
// frame in place at its own length.
func (j *Journal) scrubLocked(keys []string, gen uint64, last int) error {
	var errs []error
	for _, k := range keys {
		pos := j.values[k]
		var left []int
		for _, i := range pos {
			if i >= last || j.index[i].gen >= gen {
				left = append(left, i)
				continue
			}
			if err := j.rewriteFrameLocked(i, k); err != nil {
				errs = append(errs, err)
				left = append(left, i)
			}
		}
		if len(left) == 0 {
			delete(j.values, k)
		} else {
			j.values[k] = left
		}
	}
	return errors.Join(errs...)
}

// rewriteFrameLocked rewrites frame i without the entries of key, padded
// with zeros to its old length.
func (j *Journal) rewriteFrameLocked(i int, key string) error {
	fr := j.index[i]
	buf := make([]byte, fr.len)
	r := Record{Gen: fr.gen}
	if !fr.solo {
		if _, err := j.f.ReadAt(buf, fr.off); err != nil {
			return fmt.Errorf("journal: scrub: %w", err)
		}
		var ok bool
		if r, _, ok = frameAt(buf, false); !ok {
			return fmt.Errorf("journal: scrub: frame at %d unreadable", fr.off)
		}
		r.Entries = slices.DeleteFunc(r.Entries, func(e backend.Entry) bool { return e.Key == key })
		if !slices.Contains(r.Removed, key) {
			delete(r.Bases, key)
		}
	}
	payload := encode(r)
	pad := len(buf) - header - len(payload) - 5
	if pad < 0 {
		return fmt.Errorf("journal: scrub: record grew")
	}
	payload = append(payload, 'P')
	payload = binary.LittleEndian.AppendUint32(payload, uint32(pad))
	payload = append(payload, make([]byte, pad)...)
	clear(buf)
	copy(buf, magic)
	binary.LittleEndian.PutUint32(buf[4:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(buf[8:], frameSum(buf[4:8], payload))
	copy(buf[header:], payload)
	j.scrubs++
	if _, err := j.f.WriteAt(buf, fr.off); err != nil {
		return fmt.Errorf("journal: scrub: %w", err)
	}
	return nil
}

// Truncate drops every record whose generation is at most through, because
// a flush has made those changes durable in the store. The result is made
// durable before Truncate returns, so that a power loss cannot replay old
// records over newer stored values.
//
// The kept records are copied to a new file and synced without holding
// the lock that Append needs; only the records appended meanwhile are
// copied, and the file swapped, under it. If a record was scrubbed in
// place meanwhile (the copy may hold what the scrub removed), the copy is
// made again under the lock.
func (j *Journal) Truncate(through uint64) error {
	j.rotMu.Lock()
	defer j.rotMu.Unlock()
	j.mu.Lock()
	if j.f == nil {
		j.mu.Unlock()
		return errors.New("journal: closed")
	}
	j.through = max(j.through, through)
	var keep []frame
	for _, fr := range j.index {
		if fr.gen > through {
			keep = append(keep, fr)
		}
	}
	if len(keep) == len(j.index) {
		j.mu.Unlock()
		return nil
	}
	if len(keep) == 0 {
		defer j.mu.Unlock()
		return j.resetLocked()
	}
	f, n, scrubs := j.f, len(j.index), j.scrubs
	j.mu.Unlock()

	nf, tmp, frames, err := j.copyFrames(f, keep, true)
	if j.copied != nil {
		j.copied()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err != nil || j.f != f || j.scrubs != scrubs {
		if nf != nil {
			nf.Close()
			os.Remove(tmp)
		}
		if j.f == nil {
			return errors.New("journal: closed")
		}
		var keep []frame
		for _, fr := range j.index {
			if fr.gen > through {
				keep = append(keep, fr)
			}
		}
		return j.rewriteLocked(keep)
	}
	// The records appended while the copy was made follow it, unsynced as
	// they were in the old file.
	more, err := j.appendFrames(nf, f, j.index[n:], frames)
	if err != nil {
		nf.Close()
		os.Remove(tmp)
		return j.rewriteLocked(append(keep, j.index[n:]...))
	}
	return j.swapLocked(nf, tmp, more)
}

// Reset empties the journal: every record is durable elsewhere, and
// generations start over (a new session).
func (j *Journal) Reset() error {
	j.rotMu.Lock()
	defer j.rotMu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("journal: closed")
	}
	j.through = 0
	return j.resetLocked()
}

func (j *Journal) resetLocked() error {
	if err := j.f.Truncate(0); err != nil {
		return fmt.Errorf("journal: truncate: %w", err)
	}
	if _, err := j.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.index, j.size, j.values, j.whole = nil, 0, nil, nil
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal: sync: %w", err)
	}
	return nil
}

// rewriteLocked replaces the file with only the frames in keep.
func (j *Journal) rewriteLocked(keep []frame) error {
	nf, tmp, frames, err := j.copyFrames(j.f, keep, true)
	if err != nil {
		return err
	}
	return j.swapLocked(nf, tmp, frames)
}

// keptFrame is a frame copied to a new file, at its new offset.
type keptFrame struct {
	fr frame
	r  Record
}

// copyFrames writes the frames keep of f to a new temp file beside the
// journal (without the padding of scrubbed frames, and without frames that
// hold nothing any more), and syncs it when sync is set.
func (j *Journal) copyFrames(f *os.File, keep []frame, sync bool) (*os.File, string, []keptFrame, error) {
	tmp := fmt.Sprintf("%s.%d.tmp", j.path, time.Now().UnixNano())
	nf, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, "", nil, fmt.Errorf("journal: rewrite: %w", err)
	}
	frames, err := j.appendFrames(nf, f, keep, nil)
	if err == nil && sync {
		err = nf.Sync()
	}
	if err != nil {
		nf.Close()
		os.Remove(tmp)
		return nil, "", nil, err
	}
	return nf, tmp, frames, nil
}

// appendFrames copies the frames of f in keep to the end of nf, after the
// frames already there, and returns them all.
func (j *Journal) appendFrames(nf, f *os.File, keep []frame, frames []keptFrame) ([]keptFrame, error) {
	var off int64
	if len(frames) > 0 {
		last := frames[len(frames)-1].fr
		off = last.off + last.len
	}
	for _, fr := range keep {
		buf := make([]byte, fr.len)
		if _, err := f.ReadAt(buf, fr.off); err != nil {
			return nil, fmt.Errorf("journal: rewrite: %w", err)
		}
		r, _, ok := frameAt(buf, true)
		if !ok {
			return nil, fmt.Errorf("journal: rewrite: frame at %d unreadable", fr.off)
		}
		if len(r.Entries) == 0 && len(r.Removed) == 0 {
			continue // wholly scrubbed: padding only
		}
		// Encoded again: the padding of a scrubbed frame goes.
		var err error
		if buf, err = frameOf(r); err != nil {
			return nil, fmt.Errorf("journal: rewrite: %w", err)
		}
		if _, err := nf.WriteAt(buf, off); err != nil {
			return nil, fmt.Errorf("journal: rewrite: %w", err)
		}
		frames = append(frames, keptFrame{frame{gen: fr.gen, off: off, len: int64(len(buf))}, r})
		off += int64(len(buf))
	}
	return frames, nil
}

// swapLocked makes nf, written at tmp with frames, the journal: renamed
// over it, the directory synced.
func (j *Journal) swapLocked(nf *os.File, tmp string, frames []keptFrame) error {
	if err := os.Rename(tmp, j.path); err != nil {
		nf.Close()
		os.Remove(tmp)
		return fmt.Errorf("journal: rewrite: %w", err)
	}
	if d, err := os.Open(filepath.Dir(j.path)); err == nil {
		d.Sync()
		d.Close()
	}
	var size int64
	if len(frames) > 0 {
		last := frames[len(frames)-1].fr
		size = last.off + last.len
	}
	if _, err := nf.Seek(size, io.SeekStart); err != nil {
		nf.Close()
		return fmt.Errorf("journal: rewrite: %w", err)
	}
	j.f.Close()
	j.f, j.index, j.size, j.values, j.whole = nf, nil, size, nil, nil
	for _, k := range frames {
		j.addFrameLocked(k.fr, k.r)
	}
	return nil
}

// Size returns the journal's size in bytes.
func (j *Journal) Size() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.size
}

// Close closes the file. The records stay for the next Open.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

func encode(r Record) []byte { return bytes.Join(encodeParts(r), nil) }

// inPlace is the size from which encodeParts refers to a value where it
// is instead of copying it into the record.
const inPlace = 64 << 10

// encodeParts is r encoded, as pieces to write one after the other: the
// values of inPlace bytes or more are pieces of their own, referred to
// where they are, so that recording a large value writes it without
// copying it (a 1 GiB value was copied twice: into the payload, then
// into the frame). The caller must not modify the pieces.
func encodeParts(r Record) [][]byte {
	n := 8 + 4 + 4
	for _, e := range r.Entries {
		n += 4 + len(e.Key) + 8 + 4 + 4 + 4 + 4
		if len(e.Value) < inPlace {
			n += len(e.Value)
		}
	}
	for _, k := range r.Removed {
		n += 4 + len(k)
	}
	var parts [][]byte
	b := make([]byte, 0, n)
	b = binary.LittleEndian.AppendUint64(b, r.Gen)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Entries)))
	for _, e := range r.Entries {
		b = appendBytes(b, []byte(e.Key))
		b = binary.LittleEndian.AppendUint64(b, uint64(e.Info.MTime.UnixNano()))
		b = binary.LittleEndian.AppendUint32(b, uint32(e.Info.Mode.Perm()))
		b = binary.LittleEndian.AppendUint32(b, e.Info.UID)
		b = binary.LittleEndian.AppendUint32(b, e.Info.GID)
		if len(e.Value) < inPlace {
			b = appendBytes(b, e.Value)
			continue
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e.Value)))
		parts = append(parts, b, e.Value)
		b = nil
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Removed)))
	for _, k := range r.Removed {
		b = appendBytes(b, []byte(k))
	}
	// Optional trailers, each led by a tag byte, follow; a record with
	// none keeps the layout of the journals memfs wrote before them.
	// 'X': extended attributes, entry by entry. 'A': Append. 'M': the
	// node's whole metadata, entry by entry (st_mode, atime, ctime, rdev,
	// hard-link group), which the fixed fields (permissions, mtime) do not
	// hold. 'B': the base versions (Record.Bases): u32 count, then per
	// key, sorted, the key and u64 size, mtime and revision. 'D': the
	// dropped keys (Record.Dropped): u32 count, then each key. 'R': the
	// renamed files (Record.Renamed): u32 count, then per new key, sorted,
	// the new key and the old one. 'P':
	// padding (u32 length, zeros), always last, written by a scrub.
	if r.Append {
		b = append(b, 'A')
	}
	if len(r.Entries) > 0 {
		b = append(b, 'M')
		for _, e := range r.Entries {
			b = binary.LittleEndian.AppendUint32(b, backend.UnixMode(e.Info.Mode))
			b = appendTime(b, e.Info.ATime)
			b = appendTime(b, e.Info.CTime)
			b = binary.LittleEndian.AppendUint64(b, e.Info.Rdev)
			b = appendBytes(b, []byte(e.Info.Link))
		}
	}
	if slices.ContainsFunc(r.Entries, func(e backend.Entry) bool { return len(e.Info.XAttrs) > 0 }) {
		b = append(b, 'X')
		for _, e := range r.Entries {
			names := slices.Sorted(maps.Keys(e.Info.XAttrs))
			b = binary.LittleEndian.AppendUint32(b, uint32(len(names)))
			for _, n := range names {
				b = appendBytes(b, []byte(n))
				b = appendBytes(b, e.Info.XAttrs[n])
			}
		}
	}
	if len(r.Dropped) > 0 {
		b = append(b, 'D')
		b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Dropped)))
		for _, k := range r.Dropped {
			b = appendBytes(b, []byte(k))
		}
	}
	if len(r.Renamed) > 0 {
		b = append(b, 'R')
		b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Renamed)))
		for _, k := range slices.Sorted(maps.Keys(r.Renamed)) {
			b = appendBytes(b, []byte(k))
			b = appendBytes(b, []byte(r.Renamed[k]))
		}
	}
	if len(r.Bases) > 0 {
		b = append(b, 'B')
		b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Bases)))
		for _, k := range slices.Sorted(maps.Keys(r.Bases)) {
			v := r.Bases[k]
			b = appendBytes(b, []byte(k))
			b = binary.LittleEndian.AppendUint64(b, uint64(v.Size))
			b = binary.LittleEndian.AppendUint64(b, uint64(v.MTime))
			b = binary.LittleEndian.AppendUint64(b, uint64(v.Rev))
		}
	}
	return append(parts, b)
}

// appendTime appends t as Unix nanoseconds, the zero time as 0.
func appendTime(b []byte, t time.Time) []byte {
	var n int64
	if !t.IsZero() {
		n = t.UnixNano()
	}
	return binary.LittleEndian.AppendUint64(b, uint64(n))
}

func (r *reader) time() time.Time {
	n := int64(r.u64())
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func appendBytes(b, v []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

var errCorrupt = errors.New("journal: corrupt record")

type reader struct {
	b   []byte
	err error
}

func (r *reader) u32() uint32 {
	if len(r.b) < 4 {
		r.err = errCorrupt
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) u64() uint64 {
	if len(r.b) < 8 {
		r.err = errCorrupt
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *reader) bytes() []byte {
	n := int(r.u32())
	if r.err != nil || len(r.b) < n {
		r.err = errCorrupt
		return nil
	}
	v := append([]byte(nil), r.b[:n]...)
	r.b = r.b[n:]
	return v
}

func decode(b []byte) (Record, error) {
	r := &reader{b: b}
	var rec Record
	rec.Gen = r.u64()
	ne := int(r.u32())
	for i := 0; i < ne && r.err == nil; i++ {
		rec.Entries = append(rec.Entries, r.entry())
	}
	nr := int(r.u32())
	for i := 0; i < nr && r.err == nil; i++ {
		rec.Removed = append(rec.Removed, string(r.bytes()))
	}
	for r.err == nil && len(r.b) != 0 {
		tag := r.b[0]
		r.b = r.b[1:]
		r.trailer(tag, &rec)
	}
	return rec, r.err
}

// entry reads an entry's fixed fields: key, mtime, permissions, owner,
// value.
func (r *reader) entry() backend.Entry {
	var e backend.Entry
	e.Key = string(r.bytes())
	e.Info.MTime = time.Unix(0, int64(r.u64()))
	e.Info.Mode = os.FileMode(r.u32()).Perm()
	e.Info.UID = r.u32()
	e.Info.GID = r.u32()
	e.Value = r.bytes()
	e.Info.Size = int64(len(e.Value))
	return e
}

// trailer reads the optional trailer that tag leads (see encode) into rec.
func (r *reader) trailer(tag byte, rec *Record) {
	switch tag {
	case 'A':
		rec.Append = true
	case 'P':
		r.padding()
	case 'M':
		r.meta(rec.Entries)
	case 'D':
		r.dropped(rec)
	case 'B':
		r.bases(rec)
	case 'R':
		r.renamed(rec)
	case 'X':
		r.xattrs(rec.Entries)
	default:
		r.err = errCorrupt
	}
}

// padding skips what a scrub left where a superseded value was.
func (r *reader) padding() {
	n := int(r.u32())
	if r.err == nil && len(r.b) < n {
		r.err = errCorrupt
	}
	if r.err == nil {
		r.b = r.b[n:]
	}
}

// meta reads each entry's whole metadata.
func (r *reader) meta(entries []backend.Entry) {
	for i := 0; i < len(entries) && r.err == nil; i++ {
		e := &entries[i]
		e.Info.Mode = backend.FileMode(r.u32())
		e.Info.ATime = r.time()
		e.Info.CTime = r.time()
		e.Info.Rdev = r.u64()
		e.Info.Link = string(r.bytes())
	}
}

func (r *reader) dropped(rec *Record) {
	n := int(r.u32())
	if r.err == nil && n > len(r.b) {
		r.err = errCorrupt
	}
	for i := 0; i < n && r.err == nil; i++ {
		rec.Dropped = append(rec.Dropped, string(r.bytes()))
	}
}

func (r *reader) renamed(rec *Record) {
	n := int(r.u32())
	if r.err == nil && n > len(r.b) {
		r.err = errCorrupt // each pair takes more than a byte
	}
	for i := 0; i < n && r.err == nil; i++ {
		k, old := string(r.bytes()), string(r.bytes())
		if rec.Renamed == nil {
			rec.Renamed = make(map[string]string, n)
		}
		rec.Renamed[k] = old
	}
}

func (r *reader) bases(rec *Record) {
	n := int(r.u32())
	if r.err == nil && n > len(r.b) {
		r.err = errCorrupt // each base takes more than a byte
	}
	for i := 0; i < n && r.err == nil; i++ {
		k := string(r.bytes())
		v := backend.Version{Size: int64(r.u64()), MTime: int64(r.u64()), Rev: int64(r.u64())}
		if rec.Bases == nil {
			rec.Bases = make(map[string]backend.Version, n)
		}
		rec.Bases[k] = v
	}
}

// xattrs reads each entry's extended attributes.
func (r *reader) xattrs(entries []backend.Entry) {
	for i := 0; i < len(entries) && r.err == nil; i++ {
		n := int(r.u32())
		if n == 0 {
			continue
		}
		x := make(map[string][]byte, n)
		for j := 0; j < n && r.err == nil; j++ {
			name := string(r.bytes())
			x[name] = r.bytes()
		}
		entries[i].Info.XAttrs = x
	}
}
