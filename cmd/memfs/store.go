package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/session"
)

// storeSpec is a parsed --store value: KIND:PATH, or an etcd URL.
type storeSpec struct {
	kind string // "badger", "dir" or "etcd"
	path string // absolute; for etcd, the URL (etcdURL)
}

func (s storeSpec) String() string {
	if s.kind == "etcd" {
		return s.path
	}
	return s.kind + ":" + s.path
}

// local reports whether the store is a path on this machine (not etcd).
func (s storeSpec) local() bool { return s.kind != "etcd" }

// journalPath is where a store's crash journal lives: with the store, under
// a hidden name, so that it moves with it and is never listed as a key.
// A shared (etcd) store has one journal per process under the state
// directory: the commands' one here, a mount's by mountJournal.
func (s storeSpec) journalPath() string {
	if s.kind == "etcd" {
		return etcdJournal(s, "")
	}
	if s.kind == "dir" {
		return filepath.Join(s.path, dirstore.JournalName)
	}
	return filepath.Join(s.path, badgerstore.JournalName)
}

// defaultStorePath is the embedded badger store under the XDG data directory.
func defaultStorePath() string {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "."
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "memfs", "store")
}

// stateDir is memfs's state directory ($XDG_STATE_HOME/memfs): the
// engine's recovery directories and the mount helper's logs.
func stateDir() string { return filepath.Dir(memfs.DefaultRecoveryDir()) }

// mustExist refuses a store path that does not exist: a command that only
// reads never creates a store (a typo would otherwise make an empty one
// and report it empty).
func (s storeSpec) mustExist() error {
	if !s.local() {
		return nil // reachable or not, Open says
	}
	if _, err := os.Stat(s.path); err != nil {
		return fmt.Errorf("no store at %s (%w); a command that only reads creates none", s.path, err)
	}
	return nil
}

func parseStore(v string) (storeSpec, error) {
	if v == "" {
		return storeSpec{kind: "badger", path: defaultStorePath()}, nil
	}
	if strings.HasPrefix(v, "etcd://") {
		return parseEtcd(v)
	}
	kind, path, ok := strings.Cut(v, ":")
	if !ok || path == "" || (kind != "badger" && kind != "dir") {
		return storeSpec{}, fmt.Errorf("--store %q: want badger:PATH, dir:PATH or etcd://HOST:PORT[,HOST:PORT...]/NAMESPACE", v)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return storeSpec{}, fmt.Errorf("--store %q: %w", v, err)
	}
	return storeSpec{kind: kind, path: abs}, nil
}

func storeFlag() cli.Flag {
	return givenFlag{&cli.StringFlag{
		Name: "store",
		Usage: "the memory store: badger:PATH (embedded database), dir:PATH (plain directory) or " +
			"etcd://HOST:PORT[,HOST:PORT...]/NAMESPACE (shared by many mounts; TLS and auth from ETCDCTL_* variables); " +
			"when a memfs mount serves a local store, commands go through that mount",
		DefaultText: "badger:" + defaultStorePath(),
		EnvVars:     []string{"MEMFS_STORE"},
	}}
}

// openStore opens the store spec names for a mount or a command that
// writes.
func openStore(spec storeSpec, log *slog.Logger) (backend.SysStore, error) {
	return openStoreAs(spec, false, log)
}

// openReadOnly opens the store spec names for a command that only reads:
// nothing in a local store's directory changes (dirstore.OpenReadOnly,
// badgerstore.Options.ReadOnly), and every write fails (backend.ErrReadOnly).
// An etcd store has no such mode: the session and the search index of a
// read command write nothing to it (see withSession).
func openReadOnly(spec storeSpec, log *slog.Logger) (backend.SysStore, error) {
	return openStoreAs(spec, true, log)
}

func openStoreAs(spec storeSpec, readOnly bool, log *slog.Logger) (backend.SysStore, error) {
	var st backend.SysStore
	var err error
	switch {
	case spec.kind == "etcd":
		st, err = openEtcd(spec)
	case spec.kind == "dir" && readOnly:
		st, err = dirstore.OpenReadOnly(spec.path)
	case spec.kind == "dir":
		st, err = dirstore.Open(spec.path)
	default:
		st, err = badgerstore.Open(spec.path, badgerstore.Options{Logger: log, ReadOnly: readOnly})
	}
	if errors.Is(err, backend.ErrStoreInUse) {
		// A mount that serves it is gone through (locate): this holder
		// is a command at work, or a mount this process cannot see.
		return nil, fmt.Errorf("%w\n  another program holds %s: a memfs command still at work (wait for it), "+
			"or a memfs mount not visible here (another mount namespace: unmount it there)", err, spec)
	}
	if err != nil && spec.kind == "etcd" {
		return nil, fmt.Errorf("open store %s: %w\n  check that etcd answers there (etcdctl --endpoints ... endpoint health) and the ETCDCTL_* TLS and auth variables", spec, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w\n  check that the path is a readable %s store", spec, err, spec.kind)
	}
	return st, nil
}

// opened is a store opened by the engine (memfs.Open) for a command or a
// mount, with the spec it was opened from.
type opened struct {
	*memfs.FS
	spec storeSpec
	c    *session.Context // the FS's session
	log  *slog.Logger
}

// openSession opens the store and hands it to the engine, which opens its
// journal and event log, indexes the store, loads the bootstrap prefixes,
// and replays and flushes what a crashed memfs left in the journal.
// opts names the session's options, the bootstrap prefixes and the
// namespace; the rest comes from spec. With readOnlyStore the store is
// opened read-only (openReadOnly), and the session must be read-only too.
func openSession(ctx context.Context, spec storeSpec, readOnlyStore bool, opts memfs.Options, log *slog.Logger) (*opened, error) {
	ired, err := indexRedactor(opts.Session.Redactor)
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	st, err := openStoreAs(spec, readOnlyStore, log)
	if err != nil {
		return nil, err
	}
	if opts.JournalPath == "" {
		opts.JournalPath = spec.journalPath()
	}
	// A shared store's journals are the processes' own, locked by each.
	opts.LockJournal = !spec.local()
	opts.Name = spec.String()
	opts.IndexRedactor = ired
	opts.Logger = log
	f, err := memfs.Open(ctx, st, opts)
	if err != nil {
		return nil, err
	}
	return &opened{FS: f, spec: spec, c: f.Session(), log: log}, nil
}

// finish flushes and closes (memfs.FS.Close: what the store refuses goes
// to a recovery directory, which the error names).
func (o *opened) finish(ctx context.Context) error { return o.Close(ctx) }

// close closes the session: a read-only one saves nothing and leaves the
// journal to the next session that writes; a writable one flushes (see
// finish).
func (o *opened) close() error { return o.Close(context.Background()) }
