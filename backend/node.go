package backend

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"
)

// ModeMask is every bit of Info.Mode a store keeps: the node type, setuid,
// setgid, sticky and the permission bits.
const ModeMask = fs.ModeDir | fs.ModeSymlink | fs.ModeNamedPipe | fs.ModeSocket |
	fs.ModeDevice | fs.ModeCharDevice | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky | fs.ModePerm

// typeMask is the node-type part of ModeMask.
const typeMask = fs.ModeDir | fs.ModeSymlink | fs.ModeNamedPipe | fs.ModeSocket | fs.ModeDevice | fs.ModeCharDevice

// Unix file-type and special bits (the values of <sys/stat.h>, the same on
// every Linux architecture).
const (
	sIFMT   = 0o170000
	sIFSOCK = 0o140000
	sIFLNK  = 0o120000
	sIFREG  = 0o100000
	sIFBLK  = 0o060000
	sIFDIR  = 0o040000
	sIFCHR  = 0o020000
	sIFIFO  = 0o010000
	sISUID  = 0o4000
	sISGID  = 0o2000
	sISVTX  = 0o1000
)

// The node types, one table for both directions of the conversion.
var nodeTypes = []struct {
	mode fs.FileMode
	unix uint32
	name string
}{
	{0, sIFREG, "file"},
	{fs.ModeDir, sIFDIR, "directory"},
	{fs.ModeSymlink, sIFLNK, "symlink"},
	{fs.ModeNamedPipe, sIFIFO, "fifo"},
	{fs.ModeSocket, sIFSOCK, "socket"},
	{fs.ModeDevice, sIFBLK, "block device"},
	{fs.ModeDevice | fs.ModeCharDevice, sIFCHR, "char device"},
}

// UnixMode converts m to a st_mode: file type, special bits, permissions.
// Bits outside ModeMask are dropped.
func UnixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	for _, t := range nodeTypes {
		if m&typeMask == t.mode {
			u |= t.unix
			break
		}
	}
	if m&fs.ModeSetuid != 0 {
		u |= sISUID
	}
	if m&fs.ModeSetgid != 0 {
		u |= sISGID
	}
	if m&fs.ModeSticky != 0 {
		u |= sISVTX
	}
	return u
}

// FileMode converts a st_mode to an fs.FileMode (the inverse of UnixMode).
// An unknown file type gives a regular file.
func FileMode(u uint32) fs.FileMode {
	m := fs.FileMode(u & 0o777)
	for _, t := range nodeTypes {
		if u&sIFMT == t.unix {
			m |= t.mode
			break
		}
	}
	if u&sISUID != 0 {
		m |= fs.ModeSetuid
	}
	if u&sISGID != 0 {
		m |= fs.ModeSetgid
	}
	if u&sISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// PermBits is the part of m that chmod(2) sets: permissions, setuid, setgid
// and sticky.
func PermBits(m fs.FileMode) fs.FileMode {
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// TypeName names the node type of m ("file", "directory", "symlink", ...).
func TypeName(m fs.FileMode) string {
	for _, t := range nodeTypes {
		if m&typeMask == t.mode {
			return t.name
		}
	}
	return "unknown node type"
}

// ErrInvalidEntry is returned for an entry a store cannot keep as given: an
// unknown node type, a value on a node that has none, a hard link to a
// directory. Nothing is written when it is returned.
var ErrInvalidEntry = errors.New("invalid entry")

// ValidateEntry checks e as every Store's Save does: a valid key that is
// not reserved, a mode within ModeMask of a known node type, a value only on
// a regular file (its content) or a symlink (its target, not empty), a
// device number only on a device, a hard-link group never on a directory,
// and attributes that ValidateXAttrs accepts.
func ValidateEntry(e *Entry) error {
	if err := CheckStoreKey(e.Key); err != nil {
		return err
	}
	m := e.Info.Mode
	bad := func(why string) error { return fmt.Errorf("%w: %q: %s", ErrInvalidEntry, e.Key, why) }
	if m&^ModeMask != 0 || TypeName(m) == "unknown node type" {
		return bad(fmt.Sprintf("mode %v is not one a store keeps", m))
	}
	switch typ := m & typeMask; {
	case typ == fs.ModeSymlink && len(e.Value) == 0:
		return bad("symlink without a target")
	case typ != 0 && typ != fs.ModeSymlink && len(e.Value) != 0:
		return bad("a " + TypeName(m) + " has no value")
	case typ&fs.ModeDevice == 0 && e.Info.Rdev != 0:
		return bad("a device number on a " + TypeName(m))
	case typ == fs.ModeDir && e.Info.Link != "":
		return bad("a hard link to a directory")
	}
	if strings.IndexByte(e.Info.Link, 0) >= 0 || len(e.Info.Link) > 255 {
		return bad("hard-link group name")
	}
	return ValidateXAttrs(e.Info.XAttrs)
}

// ValidateEntries validates every entry with ValidateEntry.
func ValidateEntries(entries []Entry) error {
	for i := range entries {
		if err := ValidateEntry(&entries[i]); err != nil {
			return err
		}
	}
	return nil
}

// ErrReserved is returned for a key that names memfs's own files in a
// store: .memfs, .memfs-* and .memfs.* at the root, and .memfs-tmp-* in
// any directory (a store's temporary files). Such a key is never passed to,
// or returned by, a Store.
var ErrReserved = errors.New("name reserved for memfs's own files")

// IsReserved reports whether key is reserved (see ErrReserved).
func IsReserved(key string) bool {
	first, _, _ := strings.Cut(key, "/")
	if first == ".memfs" || strings.HasPrefix(first, ".memfs-") || strings.HasPrefix(first, ".memfs.") {
		return true
	}
	_, name := Split(key)
	return strings.HasPrefix(name, ".memfs-tmp-") || strings.Contains(key, "/.memfs-tmp-")
}

// CheckStoreKey is ValidateKey, and ErrReserved for a reserved key.
func CheckStoreKey(key string) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if IsReserved(key) {
		return fmt.Errorf("%w: %w: %q", ErrInvalidKey, ErrReserved, key)
	}
	return nil
}

// SavedInfo is the Info a store keeps for e, saved at now, as the Store
// contract says: Size is the value's length (a file's content, a
// symlink's target; no other node has a value), a zero MTime or CTime is
// now, and a zero ATime is the MTime.
func SavedInfo(e Entry, now time.Time) Info {
	info := e.Info
	info.Size = int64(len(e.Value))
	if info.MTime.IsZero() {
		info.MTime = now
	}
	if info.ATime.IsZero() {
		info.ATime = info.MTime
	}
	if info.CTime.IsZero() {
		info.CTime = now
	}
	return info
}
