package session

import (
	"errors"
	"maps"
	"slices"

	"github.com/memfs/memfs/backend"
)

// Damage is a stored key whose value cannot be read: it reads EIO, and
// nothing else of the session depends on it.
type Damage struct {
	Key string
	Err error
}

// ErrDamagedRecord is the Err of a Damage that the store found in its
// listing (a record that does not decode, left out of the namespace).
var ErrDamagedRecord = errors.New("the store's record of the key does not decode; the key is left out")

// noteFailedLocked records the keys whose own load failed (see
// backend.LoadEach), and returns the damaged ones found for the first
// time, for logDamaged once the caller has let go of mu (a log sink that
// blocks must not stall the session).
func (c *Context) noteFailedLocked(failed map[string]error) (found []Damage) {
	for _, k := range slices.Sorted(maps.Keys(failed)) {
		err := failed[k]
		if !backend.Damaged(err) {
			continue // gone since it was listed: an ordinary race with another writer
		}
		if _, known := c.mu.damaged[k]; !known {
			found = append(found, Damage{Key: k, Err: err})
		}
		c.mu.damaged[k] = err
	}
	return found
}

// logDamaged logs each damaged key noteFailedLocked found.
func (c *Context) logDamaged(found []Damage) {
	for _, d := range found {
		c.log.Error("a stored value cannot be loaded (damaged, or unreadable where the store keeps it): reads of it fail, everything else works (memfs fsck lists it)", "key", d.Key, "err", d.Err)
	}
}

// Damaged returns the keys found damaged, sorted: values that failed to
// load (and have not loaded since, nor been replaced or removed), and the
// records the store itself reports damaged when it can (a store with a
// Damaged() []string method, such as etcdstore's).
func (s *Stats) Damaged() []Damage {
	c := s.c
	c.mu.RLock()
	out := make(map[string]error, len(c.mu.damaged))
	for k, err := range c.mu.damaged {
		if f, ok := c.mu.tree.files[k]; ok && !f.loaded {
			out[k] = err
		}
	}
	c.mu.RUnlock()
	if st, ok := c.store.(interface{ Damaged() []string }); ok {
		for _, k := range st.Damaged() {
			if _, ok := out[k]; !ok {
				out[k] = ErrDamagedRecord
			}
		}
	}
	ds := make([]Damage, 0, len(out))
	for _, k := range slices.Sorted(maps.Keys(out)) {
		ds = append(ds, Damage{Key: k, Err: out[k]})
	}
	return ds
}

// indexDamagedLocked enters the keys the store's listing left out because
// their records do not decode (a store with a Damaged() []string method)
// as files whose every read fails as their Load does: the key is seen, and
// is that key's EIO, rather than silently gone. Nothing about them can be
// trusted, so they are root's, mode 0600, empty, of the epoch.
func (c *Context) indexDamagedLocked(links map[string]*file) {
	st, ok := c.store.(interface{ Damaged() []string })
	if !ok {
		return
	}
	for _, k := range st.Damaged() {
		if c.indexLocked(backend.Entry{Key: k, Info: backend.Info{Mode: 0o600}}, links) {
			c.mu.damaged[k] = ErrDamagedRecord
		}
	}
}
