package fsnode

import (
	"context"
	"errors"
	"io/fs"
	"syscall"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/quota"
	"github.com/memfs/memfs/route"
	"github.com/memfs/memfs/session"
)

// errnoTable maps memfs's error sentinels to errnos, in order: the first
// match wins, so the more specific sentinels come first.
var errnoTable = []struct {
	err   error
	errno syscall.Errno
}{
	{backend.ErrKeyTooLong, syscall.ENAMETOOLONG},
	{backend.ErrInvalidKey, syscall.EINVAL},
	{fs.ErrNotExist, syscall.ENOENT},
	{fs.ErrExist, syscall.EEXIST},
	{session.ErrNotDir, syscall.ENOTDIR},
	{session.ErrIsDir, syscall.EISDIR},
	{session.ErrNotEmpty, syscall.ENOTEMPTY},
	{session.ErrTooLarge, syscall.EFBIG},
	{session.ErrInvalidOp, syscall.EINVAL},
	{session.ErrNoXAttr, syscall.ENODATA},
	{session.ErrXAttrExists, syscall.EEXIST},
	{session.ErrXAttrSpace, syscall.ENOSPC},
	{session.ErrXAttrNotSupported, syscall.EOPNOTSUPP},
	{session.ErrXAttrName, syscall.ERANGE},
	{session.ErrReadOnly, syscall.EROFS},
	{backend.ErrReadOnly, syscall.EROFS}, // a read-only route
	{route.ErrCrossRoute, syscall.EXDEV},
	{session.ErrCrossDevice, syscall.EXDEV}, // between quotas
	{quota.ErrOver, syscall.EDQUOT},
	{quota.ErrFileSize, syscall.EFBIG},
	{route.ErrMountPoint, syscall.EBUSY},
	{session.ErrSecretName, syscall.EACCES},
	{fs.ErrPermission, syscall.EPERM},
	{context.Canceled, syscall.EINTR},
}

// toErrno is the one place where errors become errnos. Errors that match
// no sentinel are store failures: EIO. (go-fuse's fs.ToErrno returns
// ENOTSUP for wrapped errors, so it is not used.)
func toErrno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	for _, e := range errnoTable {
		if errors.Is(err, e.err) {
			return e.errno
		}
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return syscall.EIO
}

// syncErrno is the errno of a failed fsync: the store's refusal is EIO, as
// fsync(2) reports a failed write-back, whatever the store's own errno
// (a dir store's EPERM or ENOENT would tell the caller about a file that
// is not its own); a full disk or quota stays ENOSPC or EDQUOT, which
// fsync(2) documents and tools explain. The cause is in memfs's log.
func syncErrno(err error) syscall.Errno {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled):
		return syscall.EINTR
	case errors.Is(err, syscall.ENOSPC):
		return syscall.ENOSPC
	case errors.Is(err, syscall.EDQUOT):
		return syscall.EDQUOT
	}
	return syscall.EIO
}
