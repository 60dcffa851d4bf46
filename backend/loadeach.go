package backend

import (
	"context"
	"errors"
	"io/fs"
	"syscall"
)

// LoadEach loads keys as st.Load does, except that a key whose own load
// fails does not fail the others: a Load fails as a whole for one missing
// or damaged key, so on such a failure LoadEach loads the keys one by one.
// got holds the entries loaded, in the order of keys; failed maps each key
// left out to its error (see KeyLocal). err is a failure of the store as a
// whole (unavailable, closed, ctx done): nothing is returned with it.
func LoadEach(ctx context.Context, st Store, keys ...string) (got []Entry, failed map[string]error, err error) {
	if len(keys) == 0 {
		return nil, nil, nil
	}
	got, err = st.Load(ctx, keys...)
	if err == nil || !KeyLocal(err) {
		return got, nil, err
	}
	got = got[:0:0]
	for _, k := range keys {
		es, err := st.Load(ctx, k)
		switch {
		case err == nil:
			got = append(got, es[0])
		case KeyLocal(err):
			if failed == nil {
				failed = make(map[string]error)
			}
			failed[k] = err
		default:
			return nil, nil, err
		}
	}
	return got, failed, nil
}

// KeyLocal reports whether err, from a Load, concerns the key it names
// rather than the store: the key is gone (ErrKeyNotFound), its data is
// damaged (ErrCorrupt), or the store's system says the key's own file
// cannot be read (EIO, a permission). A store that is unavailable, or a
// context that ended, is never a key's.
func KeyLocal(err error) bool {
	switch {
	case err == nil, errors.Is(err, ErrUnavailable), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	return errors.Is(err, ErrKeyNotFound) || errors.Is(err, ErrCorrupt) || errors.Is(err, syscall.EIO) || errors.Is(err, fs.ErrPermission)
}

// Damaged reports whether err, from a Load, says the key's data cannot be
// read (damaged, or unreadable where it is kept), as opposed to absent.
func Damaged(err error) bool {
	return KeyLocal(err) && !errors.Is(err, ErrKeyNotFound)
}
