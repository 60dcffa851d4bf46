package fsnode

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/session"
)

func TestToErrno(t *testing.T) {
	tooLong := backend.ValidateKey(strings.Repeat("x", 300))
	tests := []struct {
		name string
		err  error
		want syscall.Errno
	}{
		{"nil", nil, 0},
		{"not found", backend.NotFound("load", "k"), syscall.ENOENT},
		{"wrapped not found", fmt.Errorf("session: resolve: %w", backend.NotFound("load", "k")), syscall.ENOENT},
		{"invalid", backend.ValidateKey("a/../b"), syscall.EINVAL},
		{"too long", tooLong, syscall.ENAMETOOLONG},
		{"wrapped too long", fmt.Errorf("x: %w", tooLong), syscall.ENAMETOOLONG},
		{"exist", &fs.PathError{Op: "create", Path: "k", Err: fs.ErrExist}, syscall.EEXIST},
		{"not dir", fmt.Errorf("a: %w", session.ErrNotDir), syscall.ENOTDIR},
		{"is dir", session.ErrIsDir, syscall.EISDIR},
		{"not empty", fmt.Errorf("a: %w", session.ErrNotEmpty), syscall.ENOTEMPTY},
		{"too large", &fs.PathError{Op: "write", Path: "k", Err: session.ErrTooLarge}, syscall.EFBIG},
		{"invalid op", session.ErrInvalidOp, syscall.EINVAL},
		{"read-only", fmt.Errorf("x: %w", session.ErrReadOnly), syscall.EROFS},
		{"secret in a name", &fs.PathError{Op: "create", Path: "memory/[REDACTED:github-pat]", Err: session.ErrSecretName}, syscall.EACCES},
		{"canceled", fmt.Errorf("x: %w", context.Canceled), syscall.EINTR},
		{"raw errno", fmt.Errorf("x: %w", syscall.ENOSPC), syscall.ENOSPC},
		{"store failure", fmt.Errorf("session: flush: %w", errors.New("badger: disk broken")), syscall.EIO},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toErrno(tt.err); got != tt.want {
				t.Fatalf("toErrno(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// An fsync that the store refuses is EIO, whatever the store's errno,
// except a full disk or quota.
func TestSyncErrno(t *testing.T) {
	flush := func(err error) error {
		return fmt.Errorf("session: flush: %w", &session.FlushError{Failed: map[string]error{"memory/a.md": err}})
	}
	for _, tt := range []struct {
		name string
		err  error
		want syscall.Errno
	}{
		{"nil", nil, 0},
		{"store EPERM", flush(&fs.PathError{Op: "save", Path: "memory/a.md", Err: syscall.EPERM}), syscall.EIO},
		{"store ENOENT", flush(&fs.PathError{Op: "save", Path: "memory/a.md", Err: syscall.ENOENT}), syscall.EIO},
		{"store EFBIG", flush(syscall.EFBIG), syscall.EIO},
		{"full disk", flush(&fs.PathError{Op: "save", Path: "memory/a.md", Err: syscall.ENOSPC}), syscall.ENOSPC},
		{"quota", flush(syscall.EDQUOT), syscall.EDQUOT},
		{"journal truncate", fmt.Errorf("session: flush: journal truncate: %w", fs.ErrPermission), syscall.EIO},
		{"store unavailable", flush(fmt.Errorf("etcdstore: apply: %w", backend.ErrUnavailable)), syscall.EIO},
		{"interrupted", fmt.Errorf("session: flush: %w", context.Canceled), syscall.EINTR},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := syncErrno(tt.err); got != tt.want {
				t.Errorf("syncErrno(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
