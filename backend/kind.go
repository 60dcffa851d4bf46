package backend

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrWrongKind is returned when a directory holds a store of another kind
// than the one asked for, or something that is no store at all: opening it
// would take another store's files for keys, or write a database into it.
var ErrWrongKind = errors.New("not a store of this kind")

// A store marks its directory with a small file that names its kind and
// format version, written when the store is created. Every store reads
// them all, so that each can refuse the others' directories.
const (
	DirMarker    = ".memfs-store" // in a dir store's root
	BadgerMarker = "memfs.store"  // in a badger store's directory
)

// badgerFiles are files only badger writes: a directory that holds one is
// a badger database, marked or not (stores made before the markers).
var badgerFiles = []string{"MANIFEST", "KEYREGISTRY"}

// DetectKind reads what dir holds: "dir" or "badger" for a marked store
// (with its format version), "badger" for an unmarked badger database,
// "" for anything else (a plain directory, an empty or missing one). It
// never follows a symlink.
func DetectKind(dir string) (kind string, version int, err error) {
	for _, m := range []struct{ name, kind string }{{DirMarker, "dir"}, {BadgerMarker, "badger"}} {
		b, err := readNoFollow(filepath.Join(dir, m.name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", 0, err
		}
		k, v, ok := parseMarker(b)
		if !ok || k != m.kind {
			return "", 0, fmt.Errorf("%s: not a memfs store marker (%q): %w", filepath.Join(dir, m.name), b, ErrWrongKind)
		}
		return k, v, nil
	}
	for _, n := range badgerFiles {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			return "badger", 0, nil
		}
	}
	return "", 0, nil
}

// CheckKind returns an error wrapping ErrWrongKind unless dir holds a store
// of kind (with a format version it reads, at most maxVersion) or no store
// at all.
func CheckKind(dir, kind string, maxVersion int) error {
	got, v, err := DetectKind(dir)
	if err != nil {
		return err
	}
	switch {
	case got == "":
		return nil
	case got != kind:
		return fmt.Errorf("%s holds a %s store, not a %s store (use --store %s:%s): %w", dir, got, kind, got, dir, ErrWrongKind)
	case v > maxVersion:
		return fmt.Errorf("%s holds a %s store of format %d; this memfs reads up to %d: %w", dir, kind, v, maxVersion, ErrWrongKind)
	}
	return nil
}

// WriteMarker marks dir as a store of kind at format version, unless it is
// marked already.
func WriteMarker(dir, name, kind string, version int) error {
	if err := WriteOnce(filepath.Join(dir, name), filepath.Join(dir, name)+".tmp", fmt.Sprintf("memfs %s store %d\n", kind, version)); err != nil {
		return fmt.Errorf("mark store: %w", err)
	}
	return nil
}

// WriteOnce writes text to the file at p unless something is there:
// through tmp, fsynced, then renamed into place, never following a
// symlink. A crash leaves at most tmp behind.
func WriteOnce(p, tmp, text string) error {
	if _, err := os.Lstat(p); err == nil {
		return nil
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

func parseMarker(b []byte) (kind string, version int, ok bool) {
	f := strings.Fields(string(b))
	if len(f) != 4 || f[0] != "memfs" || f[2] != "store" {
		return "", 0, false
	}
	v, err := strconv.Atoi(f[3])
	if err != nil || v < 1 {
		return "", 0, false
	}
	return f[1], v, true
}

func readNoFollow(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s %w", p, ErrSymlink)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 256)
	n, err := f.Read(b)
	if err != nil && n == 0 {
		return nil, err
	}
	return b[:n], nil
}
