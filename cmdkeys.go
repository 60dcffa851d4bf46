package memfs

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/session"
)

// The checks of a key a command names (moved from cmd/memfs, whose
// every store command calls them).

// CheckCommandKey refuses, for the store command cmd, a key the store
// never holds: an invalid key, or one of memfs's own names.
func CheckCommandKey(cmd, key string) error {
	if err := backend.ValidateKey(key); err != nil {
		return fmt.Errorf("%s: %w", cmd, Explain(err))
	}
	if backend.IsReserved(key) {
		return fmt.Errorf("%s: %s: a name reserved for memfs's own files (.memfs, .memfs-*, .memfs.* at the root, .memfs-tmp-*); not a key", cmd, key)
	}
	return nil
}

// CheckTransient refuses, for the store command cmd, a transient editor
// file (session.DefaultTransient): a mount keeps it in memory only, so
// that storing one would make a key no mount shows. A store written by a
// mount with other --transient patterns may hold such a key: cat and rm
// call this only for a key the store does not have, to say why.
func CheckTransient(cmd, key string) error {
	if session.IsTransient(key, session.DefaultTransient) {
		return fmt.Errorf("%s: %s: a transient editor file lives only in a mounted session (see --transient); not stored", cmd, key)
	}
	return nil
}

// Explain adds, for a command, what to do to the errors a user can cause.
func Explain(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, backend.ErrInvalidKey):
		return fmt.Errorf("%w\n  keys are relative slash-separated paths without . or .. segments or control characters, e.g. memory/notes.md", err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w\n  memfs ls lists the keys", err)
	}
	return err
}
