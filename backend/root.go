package backend

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strconv"
	"time"
)

// RootRecord is the system record (SysStore) that holds the attributes of
// the namespace's root directory: its mode, owner, times and user.*
// extended attributes. The root is no key (a key is never empty), so no
// Save can carry it; every store keeps it the same way, as this record.
//
// A dir store keeps it in .memfs-sys too, and leaves the store
// directory's own mode, owner and times alone: memfs's own files (the
// lock, the journal, the system records) live in that directory, so its
// mode bounds memfs's own access to them (a chmod 500 of the mount's root
// would stop a memfs that is not root from writing its journal), and its
// mtime moves with every one of them, which would make a lie of the
// root's.
//
// The record is one JSON object (EncodeRoot; DecodeRoot reads it):
//
//	{"mode":"0700","uid":1000,"gid":1000,"mtime":"2026-12-06T04:00:00.123456789Z",
//	 "atime":"…","ctime":"…","xattrs":{"user.note":"dGhlIHJvb3Q="}}
//
// mode holds the permission and special bits (setuid, setgid, sticky) in
// octal, as chmod(1) writes them; times are RFC 3339 with nanoseconds;
// xattr values are base64.
const RootRecord = "root"

type rootJSON struct {
	Mode   string            `json:"mode"`
	UID    uint32            `json:"uid"`
	GID    uint32            `json:"gid"`
	MTime  time.Time         `json:"mtime"`
	ATime  time.Time         `json:"atime"`
	CTime  time.Time         `json:"ctime"`
	XAttrs map[string][]byte `json:"xattrs,omitempty"`
}

// EncodeRoot returns the RootRecord of a root directory with info's
// attributes (its size, rdev and link are not kept: a directory has
// none).
func EncodeRoot(info Info) []byte {
	b, err := json.Marshal(rootJSON{
		Mode: fmt.Sprintf("%04o", UnixMode(PermBits(info.Mode))&0o7777),
		UID:  info.UID, GID: info.GID,
		MTime: info.MTime.UTC(), ATime: info.ATime.UTC(), CTime: info.CTime.UTC(),
		XAttrs: info.XAttrs,
	})
	if err != nil {
		panic(err) // a struct of strings, numbers, times and byte slices always marshals
	}
	return append(b, '\n')
}

// DecodeRoot reads a RootRecord: the Info of a directory (fs.ModeDir and
// its permission bits). A record that is not one, or whose mode or
// attributes are invalid, is an error that wraps ErrCorrupt.
func DecodeRoot(b []byte) (Info, error) {
	var r rootJSON
	if err := json.Unmarshal(b, &r); err != nil {
		return Info{}, fmt.Errorf("%w: root record: %w", ErrCorrupt, err)
	}
	m, err := strconv.ParseUint(r.Mode, 8, 32)
	if err != nil || m&^0o7777 != 0 {
		return Info{}, fmt.Errorf("%w: root record: mode %q", ErrCorrupt, r.Mode)
	}
	if len(r.XAttrs) == 0 {
		r.XAttrs = nil
	} else if err := ValidateXAttrs(r.XAttrs); err != nil {
		return Info{}, fmt.Errorf("%w: root record: %w", ErrCorrupt, err)
	}
	return Info{Mode: fs.ModeDir | PermBits(FileMode(uint32(m))), UID: r.UID, GID: r.GID,
		MTime: r.MTime, ATime: r.ATime, CTime: r.CTime, XAttrs: r.XAttrs}, nil
}
