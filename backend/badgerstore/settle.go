package badgerstore

import (
	"os"
	"path/filepath"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// What Close leaves for the next Open. Badger does at Open what the last
// session left undone: it compacts every level that is over its size (in
// the background, while a mount serves), and it reads the newest value
// log through to its end. Right after `memfs import` of 100,000 keys both
// fell on the first mount: 580-940 MiB of VmRSS in compaction's table
// builders and the pages of the tables they wrote, and 36 MiB of the
// value log the import had filled (BENCHMARKS.md). The writer that left
// the work is the one to pay for it, at its Close.
const (
	// settleAfter is how much a session must have added to the tables
	// (an import, a large copy) for its Close to settle the tree. A
	// mount's own writes are a memtable at most, which Close flushes into
	// level 0 and a later compaction merges cheaply.
	settleAfter = 32 << 20
	// settleMax bounds the tables Close compacts: Flatten rewrites all of
	// them (here 27-48 MiB/s), and an unmount must not outlast a service
	// manager's stop timeout. A larger tree is compacted by the next
	// Open, in the background, as before.
	settleMax = 512 << 20
	// rotateAfter is how much of the newest value log the next Open may
	// read through; Close starts an empty one after a fuller log.
	rotateAfter = 1 << 20
)

// settle compacts the tree into its last level (badger's Flatten) when
// this session added more than settleAfter bytes to the tables and the
// next Open would start with a compaction due. Flatten rewrites every
// table once, in this process, one compaction at a time (at 100,000 keys,
// 240 MiB of tables: 5-9 s beside the import's 100 s); the next Open
// inherits none. It runs while operations may still arrive (badger runs
// compaction beside reads and writes), and a failure leaves the
// compactions to the next Open.
func (s *Store) settle() {
	levels := s.db.Levels()
	total := tableBytes(levels)
	added := total - s.tablesAtOpen
	if added < settleAfter || total > settleMax || !compactionDue(levels, s.db.Opts().NumLevelZeroTables, numMemtables) {
		return
	}
	start := time.Now()
	if err := s.db.Flatten(1); err != nil {
		s.log.Warn("badgerstore: compaction at close failed; the next open compacts", "dir", s.dir, "err", err)
		return
	}
	s.log.Debug("badgerstore: compacted at close", "dir", s.dir, "added_bytes", added, "took", time.Since(start))
}

// compactionDue reports whether badger would compact at the next Open,
// given its levels: a level other than the last at or over its target
// (badger's score), or level 0 with l0Tables tables (NumLevelZeroTables)
// once the memtables still in memory, up to memtables of them, are
// flushed into it.
func compactionDue(levels []badger.LevelInfo, l0Tables, memtables int) bool {
	for i, l := range levels {
		switch {
		case i == len(levels)-1:
			// The last level has no target to exceed.
		case l.Level == 0:
			if l.NumTables+memtables >= l0Tables {
				return true
			}
		case l.Score >= 1:
			return true
		}
	}
	return false
}

// tableBytes is the size of the tables in levels.
func tableBytes(levels []badger.LevelInfo) int64 {
	var n int64
	for _, l := range levels {
		n += l.Size
	}
	return n
}

// rotateValueLog starts an empty value log after the newest, once badger
// has closed, when the newest holds more than rotateAfter bytes: badger's
// next writable Open reads the newest value log through (to cut it at
// its last intact entry) through a mapping that keeps every page it read
// resident, and Open's own check for damage (keepDamaged) reads it too.
// The log that was newest becomes an older one, whose values read as
// before, each checked against its checksum; its damage, should it have
// any, is reported by the read of the damaged value. Badger starts an
// empty value log at every writable Open anyway, and removes one that is
// still empty and no longer the newest.
func rotateValueLog(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	newest, fid := newestValueLog(ents)
	if newest == "" {
		return nil
	}
	fi, err := os.Lstat(filepath.Join(dir, newest))
	if err != nil || fi.Size() <= vlogHeaderSize+rotateAfter {
		return err
	}
	return startValueLog(dir, fid+1)
}
