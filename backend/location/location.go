// Package location turns a store spec into a store: "badger:PATH",
// "dir:PATH", "etcd://HOST:PORT[,HOST:PORT...]/NAMESPACE". Each store
// package owns its part (backend/badgerstore, backend/dirstore and
// backend/etcdstore each export NewFactory): how its spec reads, how it
// opens (writable or read-only), where a process keeps its crash journal,
// and which file names the process that holds it. A program registers
// the factories it wants in a Registry and parses specs with it; this
// package imports no store, so a program links only the stores it
// registers (a dir store alone links neither etcd nor gRPC).
//
//	var stores location.Registry
//	stores.Register(dirstore.NewFactory())
//	loc, err := stores.Parse("dir:/srv/memory")
//	if err != nil {
//		return err // names the spec and the forms the registry takes
//	}
//	st, err := loc.Open(ctx, location.Options{})
//
// A Location is a value: two parses of one spec are equal (==), and its
// String is the spec in canonical form (an absolute path; an etcd URL's
// endpoints without their http:// and https:// prefixes), which parses
// back to it.
package location

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/memfs/memfs/backend"
)

// A Factory is one kind of store: its scheme and what a spec of it
// means. Its methods take the canonical path its Parse returned.
type Factory interface {
	// Scheme is the text before the spec's first colon: "badger",
	// "dir", "etcd".
	Scheme() string
	// Usage is the spec's form, for error messages: "dir:PATH".
	Usage() string
	// Parse reads rest, the spec after "SCHEME:", and returns it in
	// canonical form: the path the other methods take. An empty rest
	// ("SCHEME:") is a store with no path, or an error.
	Parse(rest string) (string, error)
	// Local reports whether the store is a directory on this machine,
	// its path, which holds all of it (its journal and lock included)
	// and which one process holds at a time. A store that is not local
	// is shared by many processes, each with a journal of its own.
	Local() bool
	// Open opens the store at path. Its errors say what to check,
	// except one that wraps backend.ErrStoreInUse (a local store that
	// another process holds), which the caller explains.
	Open(ctx context.Context, path string, o Options) (backend.SysStore, error)
	// JournalPath is where a process keeps its crash journal of the
	// store at path: a local store's is in the store; a shared store's
	// is under stateDir, one per mountpoint mnt, and one for the
	// processes that use the store without a mount (mnt "").
	JournalPath(path, stateDir, mnt string) string
	// LockPath is the file that names the process holding the store at
	// path (the holder's PID); "" when the store has none.
	LockPath(path string) string
}

// Options says how to open a store.
type Options struct {
	// ReadOnly opens the store for a program that only reads: nothing
	// in a local store's directory changes (no lock PID, no marker, no
	// damaged file cut or moved aside), and every write fails with
	// backend.ErrReadOnly. A store with no such mode (etcd) opens as it
	// always does: its user writes nothing to it.
	ReadOnly bool
	// Logger receives the store's own log lines; nil discards them.
	Logger *slog.Logger
}

// Location is a parsed store spec. The zero Location names no store: it
// is not local, its String is "", and it does not open.
type Location struct {
	f    Factory
	path string // canonical, as f.Parse returned it
}

// Scheme is the kind of store: "badger", "dir", "etcd".
func (l Location) Scheme() string {
	if l.f == nil {
		return ""
	}
	return l.f.Scheme()
}

// Path is the spec after "SCHEME:", in canonical form: a local store's
// absolute directory.
func (l Location) Path() string { return l.path }

// String is the canonical spec, SCHEME:PATH.
func (l Location) String() string {
	if l.f == nil {
		return ""
	}
	return l.Scheme() + ":" + l.path
}

// Local reports whether the store is the directory Path on this machine
// (see Factory.Local).
func (l Location) Local() bool { return l.f != nil && l.f.Local() }

// Dir is the directory of a Local store, "" for another: the directory
// a mountpoint may not overlap (memfs.PrepareMountpoint).
func (l Location) Dir() string {
	if !l.Local() {
		return ""
	}
	return l.path
}

// Open opens the store (see Factory.Open).
func (l Location) Open(ctx context.Context, o Options) (backend.SysStore, error) {
	if l.f == nil {
		return nil, errors.New("location: the zero Location names no store")
	}
	return l.f.Open(ctx, l.path, o)
}

// JournalPath is where a process keeps its crash journal of the store
// (see Factory.JournalPath).
func (l Location) JournalPath(stateDir, mnt string) string {
	return l.f.JournalPath(l.path, stateDir, mnt)
}

// LockPath is the file that names the process holding the store; "" when
// it has none.
func (l Location) LockPath() string { return l.f.LockPath(l.path) }

// Registry is the set of factories a program knows. The zero Registry
// knows none.
type Registry struct {
	factories []Factory // in the order of Register
}

// Register adds f. A second factory of one scheme is a programming
// error: Register panics.
func (r *Registry) Register(f Factory) {
	if r.lookup(f.Scheme()) != nil {
		panic("location: scheme " + f.Scheme() + " registered twice")
	}
	r.factories = append(r.factories, f)
}

func (r *Registry) lookup(scheme string) Factory {
	for _, f := range r.factories {
		if f.Scheme() == scheme {
			return f
		}
	}
	return nil
}

// Usage lists the forms of spec the registry takes, in the order they
// were registered: "badger:PATH, dir:PATH or etcd://...".
func (r *Registry) Usage() string {
	forms := make([]string, len(r.factories))
	for i, f := range r.factories {
		forms[i] = f.Usage()
	}
	if len(forms) < 2 {
		return strings.Join(forms, "")
	}
	return strings.Join(forms[:len(forms)-1], ", ") + " or " + forms[len(forms)-1]
}

// Parse reads spec, SCHEME:REST, with the factory of SCHEME. Its errors
// begin with the spec, quoted (without the user information a URL may
// carry: "etcd://REDACTED@host/ns"), and say what the registry takes.
func (r *Registry) Parse(spec string) (Location, error) {
	scheme, rest, ok := strings.Cut(spec, ":")
	f := r.lookup(scheme)
	if !ok || f == nil {
		return Location{}, fmt.Errorf("%q: want %s", shown(spec), r.Usage())
	}
	if rest == "" {
		// "SCHEME:" alone: a store with no path (mem:), else the forms.
		if path, err := f.Parse(rest); err == nil {
			return Location{f: f, path: path}, nil
		}
		return Location{}, fmt.Errorf("%q: want %s", shown(spec), r.Usage())
	}
	path, err := f.Parse(rest)
	if err != nil {
		return Location{}, fmt.Errorf("%q: %w\n  want %s", shown(spec), err, f.Usage())
	}
	return Location{f: f, path: path}, nil
}

// shown is spec as an error shows it: when it is SCHEME://..., without
// what stands before its last @ (user information: a password, which may
// hold a / and so end the authority early).
func shown(spec string) string {
	scheme, rest, _ := strings.Cut(spec, ":")
	if !strings.HasPrefix(rest, "//") {
		return spec
	}
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return spec
	}
	return scheme + "://REDACTED" + rest[at:]
}

// LocalPath is the Parse of a store that is a directory: rest made
// absolute (relative to the working directory) and clean.
func LocalPath(rest string) (string, error) {
	if rest == "" {
		return "", errors.New("no path")
	}
	return filepath.Abs(rest)
}

// Explain adds hint, what to check, to err, the error of opening a store;
// but not to an error that wraps backend.ErrStoreInUse, which says what is
// wrong (another process holds the store) and which the caller explains.
func Explain(err error, hint string) error {
	if err == nil || errors.Is(err, backend.ErrStoreInUse) {
		return err
	}
	return fmt.Errorf("%w\n  %s", err, hint)
}

// MustExist refuses a local store whose directory does not exist: a
// program that only reads creates no store (a typo would otherwise make
// an empty one and report it empty). A store that is not local, reachable
// or not, is for Open to say.
func (l Location) MustExist() error {
	if !l.Local() {
		return nil
	}
	if _, err := os.Stat(l.path); err != nil {
		return fmt.Errorf("no store at %s (%w); a command that only reads creates none", l.path, err)
	}
	return nil
}
