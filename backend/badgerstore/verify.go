package badgerstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/fb"
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/badger/v4/y"
	"github.com/klauspost/compress/snappy"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"
)

// verifyTables checks the checksum of every block of every table the
// MANIFEST in dir names, before badger opens the store: a damaged table
// fails Open with nothing changed. Checking at each read
// (options.OnBlockRead) is no help: a failed check inside a lookup or an
// iteration reads as a missing key (random bytes in a table listed 0
// keys).
//
// Each table is read through a mapping of its own, unmapped once checked,
// and its blocks bypass the block cache. Badger's own check
// (DB.VerifyChecksum) read them through badger's mappings, which then kept
// every page of every table resident for the life of the process (at
// 100,000 keys, 290 of a mount's 420 MiB of VmRSS), and it filled the
// block cache with blocks no read had asked for. The cost left is a read
// and a decompression of the tables at each open (BENCHMARKS.md).
func verifyTables(dir string, skip bool) error {
	if skip {
		return nil
	}
	f, err := os.Open(filepath.Join(dir, "MANIFEST"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a new store
	}
	if err != nil {
		return err
	}
	m, _, err := badger.ReplayManifestFile(f, 0, badger.DefaultOptions(dir))
	f.Close()
	if err != nil {
		return nil // badger's open refuses it, and says why
	}
	ids := make([]uint64, 0, len(m.Tables))
	for id := range m.Tables {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var (
		mu    sync.Mutex
		first error
		next  = make(chan uint64)
		wg    sync.WaitGroup
	)
	for range min(runtime.GOMAXPROCS(0), 4) {
		wg.Go(func() {
			var buf []byte // a worker's blocks, one at a time
			for id := range next {
				if err := verifyTable(table.NewFilename(id, dir), m.Tables[id], &buf); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, id := range ids {
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			break
		}
		next <- id
	}
	close(next)
	wg.Wait()
	return first
}

// verifyTable checks one table as badger reads it (table.OpenTable and
// Table.block, v4.9.6): its index against the checksum in its footer, then
// each block, decompressed into *buf, against the checksum the block
// carries. Badger's Table.VerifyChecksum decompressed every block into a
// new buffer and held them all until the table was done: at 100,000 keys
// it allocated 650 MB per Open, a whole decompressed table per worker was
// live at a time, and the garbage cost a fifth of the mount's CPU
// (BENCHMARKS.md). A damaged table can make a read run past a slice's end
// (a length field gone wrong): that panic, in a check that only reads, is
// the report of a damaged table.
func verifyTable(path string, tm badger.TableManifest, buf *[]byte) (err error) {
	name := filepath.Base(path)
	if tm.KeyID != 0 {
		return fmt.Errorf("%s is encrypted, which memfs never does", name)
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // badger's open refuses a missing table, and says so
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		return fmt.Errorf("%s is empty", name)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer unix.Munmap(data)
	_ = unix.Madvise(data, unix.MADV_SEQUENTIAL)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: a block cannot be read (%v)", name, r)
		}
	}()
	index, err := tableIndex(data)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if index.OffsetsLength() == 0 {
		return fmt.Errorf("%s: its index names no block", name)
	}
	var bo fb.BlockOffset
	for i := range index.OffsetsLength() {
		if !index.Offsets(&bo, i) {
			return fmt.Errorf("%s: block %d is not in the index", name, i)
		}
		off, n := int(bo.Offset()), int(bo.Len())
		if n == 0 || off+n > len(data) {
			return fmt.Errorf("%s: block %d (offset %d, %d bytes) is not within the file", name, i, off, n)
		}
		if err := verifyBlock(data[off:off+n], tm.Compression, buf); err != nil {
			return fmt.Errorf("%s: block %d at offset %d: %w", name, i, off, err)
		}
	}
	return nil
}

// tableIndex reads a table's footer as table.OpenTable does, from the end
// of the file: the length of the index's checksum, the checksum, the
// length of the index, the index. It returns the index once its checksum
// matches.
func tableIndex(data []byte) (*fb.TableIndex, error) {
	pos := len(data) - 4
	if pos < 0 {
		return nil, errors.New("shorter than its footer")
	}
	n := int(y.BytesToU32(data[pos:]))
	if pos -= n; pos < 4 {
		return nil, errors.New("the index's checksum runs past the start of the file")
	}
	var sum pb.Checksum
	if err := proto.Unmarshal(data[pos:pos+n], &sum); err != nil {
		return nil, fmt.Errorf("the index's checksum: %w", err)
	}
	pos -= 4
	n = int(y.BytesToU32(data[pos:]))
	if pos -= n; pos < 0 {
		return nil, errors.New("the index runs past the start of the file")
	}
	index := data[pos : pos+n]
	if err := checkSum(index, &sum); err != nil {
		return nil, fmt.Errorf("the index: %w", err)
	}
	return fb.GetRootAsTableIndex(index, 0), nil
}

// verifyBlock checks one block, stored compressed with c. Decompressed, a
// block ends in its checksum and then the checksum's length; the checksum
// covers everything before it.
func verifyBlock(stored []byte, c options.CompressionType, buf *[]byte) error {
	blk, err := decompress(stored, c, buf)
	if err != nil {
		return err
	}
	pos := len(blk) - 4
	if pos < 0 {
		return errors.New("shorter than its checksum's length")
	}
	n := int(y.BytesToU32(blk[pos:]))
	if pos -= n; pos < 0 {
		return errors.New("its checksum runs past the start of the block")
	}
	var sum pb.Checksum
	if err := proto.Unmarshal(blk[pos:pos+n], &sum); err != nil {
		return fmt.Errorf("its checksum: %w", err)
	}
	return checkSum(blk[:pos], &sum)
}

// decompress returns the block stored as b, decompressed into *buf (which
// it grows as needed), or b itself when it is stored uncompressed.
func decompress(b []byte, c options.CompressionType, buf *[]byte) ([]byte, error) {
	switch c {
	case options.None:
		return b, nil
	case options.Snappy:
		n, err := snappy.DecodedLen(b)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		if cap(*buf) < n {
			*buf = make([]byte, n)
		}
		out, err := snappy.Decode((*buf)[:n], b)
		if err != nil {
			return nil, fmt.Errorf("snappy: %w", err)
		}
		return out, nil
	case options.ZSTD:
		out, err := y.ZSTDDecompress((*buf)[:0], b)
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		*buf = out[:0]
		return out, nil
	}
	return nil, fmt.Errorf("compressed by method %d, which badger does not write", c)
}

// checkSum is y.VerifyChecksum for the algorithms badger writes; it
// panics on another.
func checkSum(data []byte, sum *pb.Checksum) error {
	switch sum.GetAlgo() {
	case pb.Checksum_CRC32C, pb.Checksum_XXHash64:
		return y.VerifyChecksum(data, sum)
	}
	return fmt.Errorf("a checksum by algorithm %d, which badger does not write", sum.GetAlgo())
}
