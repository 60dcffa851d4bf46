package badgerstore

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/table"
	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/backend"
)

// DamagedDir is the directory in a store where a writable Open keeps, byte
// for byte, the files that badger would cut at their first damaged entry
// (keepDamaged). Nothing in memfs deletes it; while it is there, no
// value-log GC runs (see gc).
const DamagedDir = "damaged"

// valueCopy returns a copy of item's value. Badger checks the checksum of
// a value it reads from the value log (VerifyValueChecksum), but an Item
// hands out nothing, and no error, when the check or the read fails
// (Item.yieldItemValue, v4.9.6, only logs it): a value-log pointer
// (ValueSize above 0; no value under 64 KiB is kept there) that yields
// no bytes is damage, reported wrapping backend.ErrCorrupt. Values in the
// LSM tree are in tables whose blocks Open checked.
func valueCopy(item *badger.Item) ([]byte, error) {
	v, err := item.ValueCopy(nil)
	if err != nil {
		return nil, err
	}
	if len(v) == 0 && item.ValueSize() > 0 {
		return nil, fmt.Errorf("the value log's copy of the value fails its checksum or is cut short: %w", backend.ErrCorrupt)
	}
	return v, nil
}

// A writable badger.Open cuts the newest value log, and each memtable log
// (*.mem) a crash left, at the end of its last intact entry, and cannot be
// told not to: after a crash that end is where the preallocated zeros
// begin, but damage (flipped bytes, a file cut short by a copy) makes it
// cut every intact entry after the damage too. keepDamaged runs before it
// and reads those files the way badger will (logEnd): a file that would
// lose bytes that are not zeros is copied, as it is, to
// DamagedDir/TIME/NAME in the store, and a line is logged naming the copy.
// The newest value log is, in addition, kept whole in place: an empty
// value log numbered after it makes it an older one, which badger opens
// without reading it through, so every intact value in it still reads and
// only the damaged ones fail their checksum (valueCopy). A memtable log is
// replayed up to the damage: the entries after it are in the copy only.
//
// On a store that was closed cleanly this costs one read of the newest
// value log (the values the last session saved in it; badger reads it
// again right after) and nothing more (BENCHMARKS.md).
func keepDamaged(dir string, now time.Time, log *slog.Logger) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var logs []string
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".mem") {
			logs = append(logs, n)
		}
	}
	newest, newestFid := newestValueLog(ents)
	if newest != "" {
		logs = append(logs, newest)
	}
	var kept string // DamagedDir/TIME, made for the first file kept
	// keep copies the file n of dir (a hard link with link: badger only
	// ever removes a table, never changes one) to kept, durably.
	keep := func(n string, link bool) (string, error) {
		if kept == "" {
			kept = filepath.Join(dir, DamagedDir, now.UTC().Format("20060102T150405.000000000Z"))
			if err := os.MkdirAll(filepath.Dir(kept), 0o700); err != nil {
				return "", err
			}
			if err := os.Mkdir(kept, 0o700); err != nil {
				return "", err
			}
		}
		src, dst := filepath.Join(dir, n), filepath.Join(kept, n)
		var err error
		if link {
			err = os.Link(src, dst)
		} else {
			err = errors.Join(copySparse(dst, src), syncPath(dst))
		}
		if err != nil {
			os.Remove(dst) // a partial copy is no copy; the file itself is untouched
			return "", fmt.Errorf("copy %s aside: %w", src, err)
		}
		return dst, errors.Join(syncPath(kept), syncPath(filepath.Dir(kept)))
	}
	for _, n := range logs {
		path := filepath.Join(dir, n)
		end, size, cut, err := wouldCut(path)
		if err != nil {
			return err
		}
		if !cut {
			continue
		}
		dst, err := keep(n, false)
		if err != nil {
			return err
		}
		if n == newest {
			if err := startValueLog(dir, newestFid+1); err != nil {
				return fmt.Errorf("keep %s whole: %w", path, err)
			}
			log.Error("badgerstore: the newest value log is damaged; it is kept as it is, and a copy of it is kept aside; the values in it after the damage still read, the damaged ones fail",
				"file", path, "intact_up_to", end, "size", size, "copy", dst)
			continue
		}
		log.Error("badgerstore: a memtable log is damaged; badger replays it up to the damage and cuts the rest; a copy of it as it was is kept aside",
			"file", path, "intact_up_to", end, "size", size, "copy", dst)
	}
	return keepUnlisted(dir, ents, keep, log)
}

// keepUnlisted keeps what badger's writable open removes by the MANIFEST:
// it cuts a MANIFEST whose last change is incomplete (a file cut short),
// and then deletes every table the MANIFEST does not name
// (revertToManifest, v4.9.6), with the keys only they held. Such a
// MANIFEST is copied aside, and such tables linked aside, each with a log
// line. A MANIFEST badger cannot read is left to badger's open, which
// fails on it and changes nothing. This reads the MANIFEST, as badger's
// open does: a few kilobytes.
func keepUnlisted(dir string, ents []os.DirEntry, keep func(string, bool) (string, error), log *slog.Logger) error {
	path := filepath.Join(dir, "MANIFEST")
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // none yet (a new store), or one badger's open reports
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	m, end, err := badger.ReplayManifestFile(f, 0, badger.DefaultOptions(dir))
	if err != nil {
		return nil
	}
	if end < fi.Size() {
		dst, err := keep("MANIFEST", false)
		if err != nil {
			return err
		}
		log.Error("badgerstore: the MANIFEST ends in an incomplete change, which badger cuts; a copy of it as it was is kept aside",
			"file", path, "intact_up_to", end, "size", fi.Size(), "copy", dst)
	}
	for _, e := range ents {
		id, ok := table.ParseFileID(e.Name())
		if !ok {
			continue
		}
		if _, listed := m.Tables[id]; listed {
			continue
		}
		dst, err := keep(e.Name(), true)
		if err != nil {
			return err
		}
		log.Error("badgerstore: a table the MANIFEST does not name, which badger deletes, is kept aside",
			"file", filepath.Join(dir, e.Name()), "copy", dst)
	}
	return nil
}

// newestValueLog returns the name and number of the newest value log
// among ents, "" if there is none.
func newestValueLog(ents []os.DirEntry) (name string, fid uint64) {
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".vlog") {
			continue
		}
		if f, err := strconv.ParseUint(strings.TrimSuffix(n, ".vlog"), 10, 32); err == nil && (name == "" || f > fid) {
			name, fid = n, f
		}
	}
	return name, fid
}

// wouldCut reports whether badger's writable open would cut bytes other
// than zeros from the log file at path, and where its intact part ends.
func wouldCut(path string) (end, size int64, cut bool, err error) {
	end, size, err = logEnd(path)
	if err == nil {
		cut, err = nonZero(path, end, size)
	}
	if err != nil {
		return 0, 0, false, fmt.Errorf("read %s: %w", path, err)
	}
	return end, size, cut, nil
}

// Badger's log files (value.go and memtable.go, v4.9.6): a header of
// vlogHeaderSize bytes (a key ID, 0 without encryption, and an IV), then
// entries: meta and user-meta bytes, the key's length, the value's length
// and the expiry as uvarints, the key (with its 8-byte version), the
// value, and the CRC-32C of all of these. Entries of a transaction carry
// bitTxn and are followed by one with bitFinTxn whose value is the
// transaction's version in decimal.
const (
	vlogHeaderSize = 20
	bitTxn         = 1 << 6
	bitFinTxn      = 1 << 7
	maxKeyLen      = 1 << 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// logEnd returns where badger's writable open cuts the log file at path
// (logFile.iterate): the end of its last intact entry that is not inside
// an unfinished transaction. It also returns the file's size.
func logEnd(path string) (end, size int64, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size = fi.Size()
	if size <= vlogHeaderSize {
		return size, size, nil
	}
	r := &crcReader{r: bufio.NewReaderSize(io.NewSectionReader(f, vlogHeaderSize, size-vlogHeaderSize), 1<<20), h: crc32.New(castagnoli)}
	off, end := int64(vlogHeaderSize), int64(vlogHeaderSize)
	var txn uint64 // version of the transaction under way; 0 for none
	for {
		n, meta, key, fin, ok := r.entry()
		if !ok || len(key) == 0 {
			return end, size, nil
		}
		off += n
		switch {
		case meta&bitTxn != 0:
			v := version(key)
			if txn == 0 {
				txn = v
			}
			if v != txn {
				return end, size, nil
			}
		case meta&bitFinTxn != 0:
			if v, err := strconv.ParseUint(string(fin), 10, 64); err != nil || v != txn {
				return end, size, nil
			}
			txn, end = 0, off
		default:
			if txn != 0 {
				return end, size, nil
			}
			end = off
		}
	}
}

// version is the version badger appends to a key: MaxUint64 minus its
// last 8 bytes, big-endian (y.ParseTs).
func version(key []byte) uint64 {
	if len(key) <= 8 {
		return 0
	}
	return ^binary.BigEndian.Uint64(key[len(key)-8:])
}

// crcReader reads the entries of a log file, each checked against its
// CRC-32C.
type crcReader struct {
	r   *bufio.Reader
	h   hash.Hash32 // of the entry being read
	n   int64       // bytes of the entry's header read so far
	key []byte
}

func (c *crcReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.h.Write([]byte{b})
		c.n++
	}
	return b, err
}

// entry reads the next entry and returns its length, its meta byte, its
// key and, for the end of a transaction, its value; ok is false when it
// is cut short or fails its checksum. The key is valid until the next
// call.
func (c *crcReader) entry() (n int64, meta byte, key, fin []byte, ok bool) {
	c.h.Reset()
	c.n = 0
	meta, err := c.ReadByte()
	if err != nil {
		return 0, 0, nil, nil, false
	}
	if _, err := c.ReadByte(); err != nil { // user meta
		return 0, 0, nil, nil, false
	}
	var lens [3]uint64 // key, value, expiry
	for i := range lens {
		if lens[i], err = binary.ReadUvarint(c); err != nil {
			return 0, 0, nil, nil, false
		}
	}
	klen, vlen := lens[0], lens[1]
	if klen > maxKeyLen || vlen > 1<<32-1 {
		return 0, 0, nil, nil, false
	}
	if uint64(cap(c.key)) < klen {
		c.key = make([]byte, klen)
	}
	c.key = c.key[:klen]
	if _, err := io.ReadFull(c.r, c.key); err != nil {
		return 0, 0, nil, nil, false
	}
	c.h.Write(c.key)
	if meta&bitFinTxn != 0 {
		if vlen > 20 { // a uint64 in decimal
			return 0, 0, nil, nil, false
		}
		fin = make([]byte, vlen)
		if _, err := io.ReadFull(c.r, fin); err != nil {
			return 0, 0, nil, nil, false
		}
		c.h.Write(fin)
	} else if _, err := io.CopyN(c.h, c.r, int64(vlen)); err != nil {
		return 0, 0, nil, nil, false
	}
	var sum [crc32.Size]byte
	if _, err := io.ReadFull(c.r, sum[:]); err != nil || binary.BigEndian.Uint32(sum[:]) != c.h.Sum32() {
		return 0, 0, nil, nil, false
	}
	return c.n + int64(klen+vlen) + crc32.Size, meta, c.key, fin, true
}

// nonZero reports whether the file at path holds a byte other than zero
// from offset from to size, reading only its data, not its holes (badger
// preallocates its logs as holes).
func nonZero(path string, from, size int64) (bool, error) {
	if from >= size {
		return false, nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 1<<16)
	for off := from; off < size; {
		data, err := unix.Seek(int(f.Fd()), off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			return false, nil // only a hole is left
		}
		if err != nil {
			return false, err
		}
		hole, err := unix.Seek(int(f.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			return false, err
		}
		for data < hole {
			n, err := f.ReadAt(buf[:min(int64(len(buf)), hole-data)], data)
			for _, b := range buf[:n] {
				if b != 0 {
					return true, nil
				}
			}
			if err != nil {
				return false, err
			}
			data += int64(n)
		}
		off = hole
	}
	return false, nil
}

// startValueLog makes an empty value log numbered fid in dir, as badger
// makes one (logFile.bootstrap: key ID 0, no encryption, and a random
// IV), so that badger's open takes it for the newest and appends after it.
func startValueLog(dir string, fid uint64) error {
	path := filepath.Join(dir, fmt.Sprintf("%06d.vlog", fid))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	hdr := make([]byte, vlogHeaderSize)
	rand.Read(hdr[8:])
	_, err = f.Write(hdr)
	if err == nil {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(path)
		return err
	}
	return syncPath(dir)
}

// syncPath fsyncs the file or directory at path.
func syncPath(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}
