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
	"github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"golang.org/x/sys/unix"
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
func verifyTables(dir string, blockSize int, skip bool) error {
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
			for id := range next {
				tm := m.Tables[id]
				if err := verifyTable(table.NewFilename(id, dir), id, tm, blockSize); err != nil {
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

// verifyTable checks one table. Badger's VerifyChecksum reports a block it
// cannot read by dereferencing the nil block it got (table.go, v4.9.6):
// that panic, in a check that only reads, is the report of a damaged
// table.
func verifyTable(path string, id uint64, tm badger.TableManifest, blockSize int) (err error) {
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
	t, err := table.OpenInMemoryTable(data, id, &table.Options{
		BlockSize:   blockSize,
		Compression: tm.Compression,
		ChkMode:     options.NoVerification, // VerifyChecksum checks every block itself
	})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := t.VerifyChecksum(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
