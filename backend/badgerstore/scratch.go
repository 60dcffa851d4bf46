package badgerstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A store that a process left without closing it (kill -9 of a mount)
// holds memtable logs (*.mem) with an unfinished tail, preallocated and
// never written. Badger replays them, and cuts that tail, at its next
// writable open; read-only it refuses to open the store at all
// (ErrTruncateNeeded). A read-only Open of such a store opens a scratch
// view of it instead, which badger may repair as it likes: a directory
// under os.TempDir whose files badger may change are copies (the
// MANIFEST, the key registry, the discard stats, the memtable logs, the
// newest value log, which a writable open cuts to its last intact entry,
// and any small value log, which it deletes when empty), and whose tables
// and other value logs are symbolic links to the store's own: badger
// changes neither once written, and the scratch open runs no compaction
// and no value-log GC, the only things that delete them. A damaged newest
// value log is kept whole in the view as keepDamaged keeps it in a store:
// an empty value log after it, so that the intact values after the damage
// read. Nothing in the store's directory changes; Close removes the
// scratch directory.

// scratchLinkMin is the size from which an older value log is linked, not
// copied.
const scratchLinkMin = 1 << 20

// makeScratch builds the scratch view of the store at dir (see above) and
// returns its directory.
func makeScratch(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	newest, newestFid := newestValueLog(ents)
	scratch, err := os.MkdirTemp("", "memfs-badger-readonly-")
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		n := e.Name()
		if !isBadgerFile(n) || n == badgerLockName || strings.HasSuffix(n, ".mem") && e.Type().IsRegular() && isEmpty(e) {
			continue // an empty memtable log holds nothing, and badger refuses it
		}
		src, dst := filepath.Join(dir, n), filepath.Join(scratch, n)
		fi, err := e.Info()
		if err != nil {
			os.RemoveAll(scratch)
			return "", err
		}
		link := strings.HasSuffix(n, ".sst") || strings.HasSuffix(n, ".vlog") && n != newest && fi.Size() >= scratchLinkMin
		if link {
			err = os.Symlink(src, dst)
		} else {
			err = copySparse(dst, src)
		}
		if err != nil {
			os.RemoveAll(scratch)
			return "", fmt.Errorf("a scratch view of %s for a read-only open: %w", dir, err)
		}
	}
	if newest != "" {
		// A damaged newest value log: kept whole in the view too, so
		// that the intact values after the damage read (see
		// keepDamaged).
		_, _, cut, err := wouldCut(filepath.Join(scratch, newest))
		if err == nil && cut {
			err = startValueLog(scratch, newestFid+1)
		}
		if err != nil {
			os.RemoveAll(scratch)
			return "", fmt.Errorf("a scratch view of %s for a read-only open: %w", dir, err)
		}
	}
	return scratch, nil
}

// copySparse copies the file src to a new file dst, its holes as holes:
// badger preallocates its logs far beyond what it has written.
func copySparse(dst, src string) error {
	in, err := os.OpenFile(src, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	size := fi.Size()
	for off := int64(0); off < size; {
		data, err := unix.Seek(int(in.Fd()), off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // only a hole is left
		}
		if err != nil {
			out.Close()
			return err
		}
		hole, err := unix.Seek(int(in.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			out.Close()
			return err
		}
		if _, err := io.Copy(io.NewOffsetWriter(out, data), io.NewSectionReader(in, data, hole-data)); err != nil {
			out.Close()
			return err
		}
		off = hole
	}
	if err := out.Truncate(size); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// removeScratch removes the scratch directory dir; "" is none.
func removeScratch(dir string) {
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// isEmpty reports whether the file e names has no bytes.
func isEmpty(e os.DirEntry) bool {
	fi, err := e.Info()
	return err == nil && fi.Size() == 0
}
