package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/location"
	"github.com/memfs/memfs/internal/usererr"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/route"
	"github.com/memfs/memfs/session"
)

// storeSpec is a parsed --store value (see stores).
type storeSpec = location.Location

// parseStore parses a --store value; "" is the default badger store.
func parseStore(v string) (storeSpec, error) {
	if v == "" {
		v = "badger:" + memfs.DefaultStorePath()
	}
	spec, err := stores.Parse(v)
	if err != nil {
		return storeSpec{}, fmt.Errorf("--store %w", err)
	}
	return spec, nil
}

func storeFlag() cli.Flag {
	return givenFlag{&cli.StringFlag{
		Name: "store",
		Usage: "the memory store: " + stores.Usage() + " (badger: an embedded database; dir: a plain directory; " +
			"etcd: shared by many mounts, TLS and auth from ETCDCTL_* variables); " +
			"when a memfs mount serves a local store, commands go through that mount",
		DefaultText: "badger:" + memfs.DefaultStorePath(),
		EnvVars:     []string{"MEMFS_STORE"},
	}}
}

// openStoreAs opens the store spec names for a mount or a command. With
// readOnly (a command that only reads), nothing in a local store's
// directory changes, and every write fails (backend.ErrReadOnly). An etcd
// store has no such mode: the session and the search index of a read
// command write nothing to it (see withSession).
func openStoreAs(spec storeSpec, readOnly bool, log *slog.Logger) (backend.SysStore, error) {
	st, err := spec.Open(context.Background(), location.Options{ReadOnly: readOnly, Logger: log})
	if err != nil {
		// A mount that serves it is gone through (locate).
		return nil, usererr.OpenStore(spec.String(), err)
	}
	return st, nil
}

// opened is a store opened by the engine (memfs.Open) for a command or a
// mount, with the spec it was opened from.
type opened struct {
	*memfs.FS
	spec storeSpec
	c    *session.Context // the FS's session
}

// openSession opens the store and hands it to the engine, which opens its
// journal and event log, indexes the store, loads the bootstrap prefixes,
// and replays and flushes what a crashed memfs left in the journal.
// opts names the session's options, the bootstrap prefixes and the
// namespace; the rest comes from spec. With readOnlyStore the store is
// opened read-only (openStoreAs), and the session must be read-only too.
func openSession(ctx context.Context, spec storeSpec, readOnlyStore bool, opts memfs.Options, log *slog.Logger) (*opened, error) {
	if opts.Session.Redactor == nil {
		// The index is persisted with the store, so it never holds a raw
		// secret: the store commands open the store without a redactor
		// (nil, as --no-redact), and theirs is the default rules and
		// config file.
		var err error
		if opts.IndexRedactor, err = redact.NewFromFile(""); err != nil {
			return nil, fmt.Errorf("search index: %w", err)
		}
	}
	st, err := openStoreAs(spec, readOnlyStore, log)
	if err == nil && !opts.Routes.Empty() {
		def := st
		if st, err = route.Open(ctx, opts.Routes, routeStores, def, spec.Dir(), location.Options{ReadOnly: readOnlyStore, Logger: log}); err != nil {
			def.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	if opts.JournalPath == "" {
		opts.JournalPath = spec.JournalPath(memfs.DefaultStateDir(), "")
	}
	// A shared store's journals are the processes' own, locked by each.
	opts.LockJournal = !spec.Local()
	opts.Name = spec.String()
	opts.Logger = log
	f, err := memfs.Open(ctx, st, opts)
	if err != nil {
		return nil, err
	}
	return &opened{FS: f, spec: spec, c: f.Session()}, nil
}
