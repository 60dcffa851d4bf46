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
