package mountclient

// One way to name the memory: a command works on the store --store (or
// MEMFS_STORE, or the default) names, and when a running memfs serves that
// store, through its mount; --mount names a mount outright, and a command
// run inside a mount with no store named uses that mount. Precedence:
// --mount, --store, MEMFS_STORE, the mount the working directory is in,
// the default store.

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/memfs/memfs/backend/location"
)

// Target is what a command works on: a live mount, or a store to open.
type Target struct {
	Spec   location.Location
	Client *Client // the live memfs mount serving Spec; nil to open the store
}

// Locate finds what a command works on (see the top of the file). mount
// names a mount outright (--mount); store names a store ("" for none
// named: the mount the working directory is in, or else the default), and
// storeGiven says the command line named it, so that it must agree with
// mount. parse makes a Location of a store's name ("" included) or of
// the store a mount's status names.
func Locate(mount, store string, storeGiven bool, parse func(string) (location.Location, error)) (Target, error) {
	if mount != "" {
		return namedMount(mount, store, storeGiven, parse)
	}
	if store == "" {
		if c, ok := enclosingMount(); ok {
			if t, err := mountTarget(c, parse); err == nil {
				return t, nil
			}
		}
	}
	spec, err := parse(store)
	if err != nil {
		return Target{}, err
	}
	if t, ok := Serving(spec, parse); ok {
		return t, nil
	}
	return Target{Spec: spec}, nil
}

// Serving finds the caller's live memfs mount that serves spec (Find); a
// shared store has none: many mounts serve it, each on its own.
func Serving(spec location.Location, parse func(string) (location.Location, error)) (Target, bool) {
	if !spec.Local() {
		return Target{}, false
	}
	c, ok := Find(spec.String(), spec.LockPath())
	if !ok {
		return Target{}, false
	}
	t, err := mountTarget(c, parse)
	return t, err == nil
}

// mountTarget is the target of the live mount c.
func mountTarget(c *Client, parse func(string) (location.Location, error)) (Target, error) {
	spec, err := parse(c.Store)
	if err != nil {
		return Target{}, fmt.Errorf("%s: %w", c.Dir, err)
	}
	return Target{Spec: spec, Client: c}, nil
}

// namedMount is the target of --mount m: a live memfs mount (Open), which
// must serve the store a --store on the command line names, if any.
func namedMount(m, store string, storeGiven bool, parse func(string) (location.Location, error)) (Target, error) {
	abs, err := filepath.Abs(m)
	if err != nil {
		return Target{}, err
	}
	mc, err := Open(abs, Shared)
	if err != nil {
		return Target{}, fmt.Errorf("--mount %s: %w", m, err)
	}
	t, err := mountTarget(mc, parse)
	if err != nil {
		return Target{}, err
	}
	if storeGiven {
		spec, err := parse(store)
		if err != nil {
			return Target{}, err
		}
		if !SameStore(spec.String(), t.Spec.String()) {
			return Target{}, fmt.Errorf("--store %s and --mount %s name two stores: that mount serves %s; give one of them", spec, m, t.Spec)
		}
	}
	return t, nil
}

// enclosingMount is the caller's live memfs mount the working directory
// is in, if any (Enclosing).
func enclosingMount() (*Client, bool) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, false
	}
	return Enclosing(cwd)
}
