package session

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/memfs/memfs/backend"
)

var (
	// ErrNotDir is returned when a path component that must be a directory
	// is a file.
	ErrNotDir = errors.New("not a directory")
	// ErrIsDir is returned when an operation on a file names a directory.
	ErrIsDir = errors.New("is a directory")
	// ErrNotEmpty is returned when a directory to remove or replace has entries.
	ErrNotEmpty = errors.New("directory not empty")
	// ErrTooLarge is returned when a value would exceed Options.MaxFileSize.
	ErrTooLarge = errors.New("value too large")
	// ErrInvalidOp is returned for a request that can never succeed, such as
	// renaming a directory into itself.
	ErrInvalidOp = errors.New("invalid operation")
	// ErrReadOnly is returned by every change on a read-only Context.
	ErrReadOnly = errors.New("read-only session")
	// ErrCrossDevice is the error of a rename between two prefixes that
	// different quotas bound (EXDEV through a mount: mv copies, and
	// each file is checked).
	ErrCrossDevice = errors.New("rename between quotas")
)

func pathErr(op, key string, err error) error {
	return &fs.PathError{Op: op, Path: key, Err: err}
}

func notExist(op, key string) error {
	return pathErr(op, key, backend.ErrKeyNotFound)
}

func exist(op, key string) error {
	return pathErr(op, key, fs.ErrExist)
}

func wrapf(format string, args ...any) error {
	return fmt.Errorf("session: "+format, args...)
}

// Errors of extended attributes, with the errno a mount gives them.
var (
	// ErrNoXAttr: the attribute is not set (ENODATA).
	ErrNoXAttr = errors.New("no such attribute")
	// ErrXAttrExists: XATTR_CREATE of an attribute that is set (EEXIST).
	ErrXAttrExists = errors.New("attribute exists")
	// ErrXAttrSpace: the entry's attributes would exceed
	// backend.MaxXAttrSize (ENOSPC, as ext4 says when its block is full).
	ErrXAttrSpace = errors.New("no room for the attribute")
	// ErrXAttrNotSupported: an attribute that memfs does not keep, such
	// as one outside user.* or one on a directory (ENOTSUP).
	ErrXAttrNotSupported = errors.New("attribute not supported")
	// ErrXAttrName: a name longer than backend.MaxXAttrNameLen (ERANGE).
	ErrXAttrName = errors.New("attribute name too long")
)
