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

	"github.com/memfs/memfs/internal/paths"
)

// Spec is a parsed store name, as Locate needs it (a command's
// location.Location).
type Spec interface {
	String() string   // the store's canonical name, as a mount's status names it
	Scheme() string   // the kind of store: "badger", "dir", "etcd"
	Path() string     // the spec after "SCHEME:": a local store's directory
	Local() bool      // one process serves the store at a time
	LockPath() string // for a local store, the lock its serving process holds
}

// Same reports whether the parsed specs a and b name one store: a local
// store's directory is compared with every symlink resolved.
func Same(a, b Spec) bool {
	if a.Local() && b.Local() {
		return a.Scheme() == b.Scheme() && paths.Resolved(a.Path()) == paths.Resolved(b.Path())
	}
	return a.String() != "" && a.String() == b.String()
}

// Target is what a command works on: a live mount, or a store to open.
type Target[S Spec] struct {
	Spec   S
	Client *Client // the live memfs mount serving Spec; nil to open the store
}

// NeedsStore refuses, for the command cmd that needs the store to itself,
// a store a live mount serves, saying what to do in its place (instead).
func (t Target[S]) NeedsStore(cmd, instead string) error {
	if t.Client == nil {
		return nil
	}
	return fmt.Errorf("%s: %s is mounted at %s (memfs process %d), and %s needs the store to itself\n  %s",
		cmd, t.Spec, t.Client.Dir, t.Client.PID, cmd, instead)
}

// Locate finds what a command works on (see the top of the file). mount
// names a mount outright (--mount); store names a store ("" for none
// named: the mount the working directory is in, or else the default), and
// storeGiven says the command line named it, so that it must agree with
// mount. parse makes a Location of a store's name ("" included) or of
// the store a mount's status names.
func Locate[S Spec](mount, store string, storeGiven bool, parse func(string) (S, error)) (Target[S], error) {
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
		return Target[S]{}, err
	}
	if t, ok := Serving(spec, parse); ok {
		return t, nil
	}
	return Target[S]{Spec: spec}, nil
}

// Serving finds the caller's live memfs mount that serves spec (Find); a
// shared store has none: many mounts serve it, each on its own.
func Serving[S Spec](spec S, parse func(string) (S, error)) (Target[S], bool) {
	if !spec.Local() {
		return Target[S]{}, false
	}
	c, ok := Find(spec, parse)
	if !ok {
		return Target[S]{}, false
	}
	t, err := mountTarget(c, parse)
	return t, err == nil
}

// CheckUnserved refuses a second mount of spec: the caller's live memfs
// mount that serves it (Serving) is named, with what to do instead.
func CheckUnserved[S Spec](spec S, parse func(string) (S, error)) error {
	if t, ok := Serving(spec, parse); ok {
		return fmt.Errorf("%s is already mounted at %s (memfs process %d); use that mount, or memfs unmount %s first",
			spec, t.Client.Dir, t.Client.PID, t.Client.Dir)
	}
	return nil
}

// mountTarget is the target of the live mount c.
func mountTarget[S Spec](c *Client, parse func(string) (S, error)) (Target[S], error) {
	spec, err := parse(c.Store)
	if err != nil {
		return Target[S]{}, fmt.Errorf("%s: %w", c.Dir, err)
	}
	return Target[S]{Spec: spec, Client: c}, nil
}

// namedMount is the target of --mount m: a live memfs mount (Open), which
// must serve the store a --store on the command line names, if any.
func namedMount[S Spec](m, store string, storeGiven bool, parse func(string) (S, error)) (Target[S], error) {
	abs, err := filepath.Abs(m)
	if err != nil {
		return Target[S]{}, err
	}
	mc, err := Open(abs, Shared)
	if err != nil {
		return Target[S]{}, fmt.Errorf("--mount %s: %w", m, err)
	}
	t, err := mountTarget(mc, parse)
	if err != nil {
		return Target[S]{}, err
	}
	if storeGiven {
		spec, err := parse(store)
		if err != nil {
			return Target[S]{}, err
		}
		if !Same(spec, t.Spec) {
			return Target[S]{}, fmt.Errorf("--store %s and --mount %s name two stores: that mount serves %s; give one of them", spec, m, t.Spec)
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
