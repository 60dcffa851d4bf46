package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/session"
)

// storeSpec is a parsed --store value: KIND:PATH.
type storeSpec struct {
	kind string // "badger" or "dir"
	path string // absolute
}

func (s storeSpec) String() string { return s.kind + ":" + s.path }

// journalPath is where a store's crash journal lives: with the store, under
// a hidden name, so that it moves with it and is never listed as a key.
func (s storeSpec) journalPath() string {
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

// stateDir is where recovery directories go.
func stateDir() string {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = "."
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "memfs")
}

// mustExist refuses a store path that does not exist: a command that only
// reads never creates a store (a typo would otherwise make an empty one
// and report it empty).
func (s storeSpec) mustExist() error {
	if _, err := os.Stat(s.path); err != nil {
		return fmt.Errorf("no store at %s (%w); a command that only reads creates none", s.path, err)
	}
	return nil
}

func parseStore(v string) (storeSpec, error) {
	if v == "" {
		return storeSpec{kind: "badger", path: defaultStorePath()}, nil
	}
	kind, path, ok := strings.Cut(v, ":")
	if !ok || path == "" || (kind != "badger" && kind != "dir") {
		return storeSpec{}, fmt.Errorf("--store %q: want badger:PATH or dir:PATH", v)
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
		Usage: "the memory store: badger:PATH (embedded database) or dir:PATH (plain directory); " +
			"when a memfs mount serves it, commands go through that mount",
		DefaultText: "badger:" + defaultStorePath(),
		EnvVars:     []string{"MEMFS_STORE"},
	}}
}

func openStore(spec storeSpec, log *slog.Logger) (backend.Store, error) {
	var st backend.Store
	var err error
	switch spec.kind {
	case "dir":
		st, err = dirstore.Open(spec.path)
	default:
		st, err = badgerstore.Open(spec.path, badgerstore.Options{Logger: log})
	}
	if errors.Is(err, backend.ErrStoreInUse) {
		// A mount that serves it is gone through (locate): this holder
		// is a command at work, or a mount this process cannot see.
		return nil, fmt.Errorf("%w\n  another program holds %s: a memfs command still at work (wait for it), "+
			"or a memfs mount not visible here (another mount namespace: unmount it there)", err, spec)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w\n  check that the path is a readable %s store", spec, err, spec.kind)
	}
	return st, nil
}

// opened is a store with its journal and a bootstrapped session.
type opened struct {
	spec    storeSpec
	store   backend.Store
	journal *journal.Journal
	events  *eventlog.Log
	c       *session.Context
	index   atomic.Pointer[searcher] // the search index, once opened
	indexMu sync.Mutex               // serializes opening it, and closing
	closed  bool                     // guarded by indexMu: no index opens after close
	// inherited are the keys a crashed session left in the journal that
	// the store refused at the replay.
	inherited []string
	log       *slog.Logger
	readOnly  bool // nothing is flushed, the journal is left as it is
}

// openSession opens the store and its journal, indexes the store, loads the
// bootstrap prefixes, and replays and flushes what a crashed memfs left in
// the journal.
func openSession(ctx context.Context, spec storeSpec, opts session.Options, log *slog.Logger, prefixes ...string) (*opened, error) {
	st, err := openStore(spec, log)
	if err != nil {
		return nil, err
	}
	j, recs, err := journal.Open(spec.journalPath())
	if err != nil {
		st.Close()
		return nil, err
	}
	for _, d := range j.Damaged() {
		// Never silent: the intact records around it are replayed; the
		// damaged bytes are kept for whoever wants to look at them.
		if d.SavedTo != "" {
			log.Error("the journal had damaged bytes; they were moved aside, the intact records before and after them are replayed",
				"journal", spec.journalPath(), "offset", d.Off, "bytes", d.Len, "saved_to", d.SavedTo)
		} else {
			log.Error("the journal had damaged bytes that could not be saved aside", "journal", spec.journalPath(),
				"offset", d.Off, "bytes", d.Len, "err", d.Err)
		}
	}
	ev, err := eventlog.Open(ctx, st, log)
	if err != nil {
		j.Close()
		st.Close()
		return nil, fmt.Errorf("open the event log of %s: %w", spec, err)
	}
	if !opts.ReadOnly {
		// A read-only session writes no journal record: the journal is
		// left as it is for the next session that may write.
		opts.Journal = j
	}
	opts.Logger = log
	opts.Events = eventSink(ev, newSessionID())
	opts.Derived = map[string]session.AttrFunc{meta.Skill: contextpack.SkillAttr}
	o := &opened{spec: spec, store: st, journal: j, events: ev, log: log, readOnly: opts.ReadOnly}
	opts.Saved = func(ctx context.Context, saved []backend.Entry, deleted []string) {
		if s := o.index.Load(); s != nil {
			s.saved(ctx, saved, deleted)
		}
	}
	c := session.NewContext(st, opts)
	o.c = c
	if err := c.Bootstrap(ctx, prefixes...); err != nil {
		o.close()
		return nil, fmt.Errorf("index store %s: %w", spec, err)
	}
	if sk, ok := st.(interface{ Skipped() []string }); ok {
		for _, p := range sk.Skipped() {
			log.Warn("a name in the store cannot be a key (not UTF-8, a control character, or too long); it is left out and left as it is",
				"path", redactName(p, opts.Redactor)) // quoted by slog when it needs it
		}
	}
	if len(recs) > 0 && opts.ReadOnly {
		log.Warn("read-only: showing what the journal of a memfs that did not shut down cleanly holds, without saving it; the next writable mount or command saves it",
			"records", len(recs), "journal", spec.journalPath())
		if err := c.Replay(recs); err != nil {
			o.close()
			return nil, fmt.Errorf("replay journal %s: %w", spec.journalPath(), err)
		}
		return o, nil
	}
	if len(recs) > 0 {
		log.Warn("replaying the journal of a memfs that did not shut down cleanly", "records", len(recs), "journal", spec.journalPath())
		if err := c.Replay(recs); err != nil {
			o.close()
			return nil, fmt.Errorf("replay journal %s: %w", spec.journalPath(), err)
		}
		if err := c.Flush(ctx); err != nil {
			var fe *session.FlushError
			if !errors.As(err, &fe) {
				o.close()
				return nil, fmt.Errorf("flush replayed journal to %s: %w (the journal is kept)", spec, err)
			}
			// One entry the store refuses never blocks the others, nor
			// this command: it stays in memory and in the journal.
			for _, k := range slices.Sorted(maps.Keys(fe.Failed)) {
				log.Error("the store refuses an entry replayed from the journal; it stays in the journal",
					"key", k, "err", fe.Failed[k])
				o.inherited = append(o.inherited, k)
			}
		}
	}
	if err := j.Reset(); err != nil {
		o.close()
		return nil, err
	}
	if len(o.inherited) > 0 {
		if err := c.JournalDirty(); err != nil {
			o.close()
			return nil, fmt.Errorf("journal %s: %w", spec.journalPath(), err)
		}
	}
	return o, nil
}

func (o *opened) close() error {
	o.indexMu.Lock() // waits for an index being opened
	o.closed = true
	o.indexMu.Unlock()
	if s := o.index.Load(); s != nil {
		s.close(context.Background()) // save what is not saved yet
	}
	return errors.Join(o.journal.Close(), o.store.Close())
}

// finish flushes the session, empties the journal, and closes everything.
// Entries the store refuses go to a recovery directory (and out of the
// journal): an error when this command made them, a warning when a crashed
// session left them in the journal.
func (o *opened) finish(ctx context.Context) error {
	if err := o.c.Flush(ctx); err != nil {
		var fe *session.FlushError
		if !errors.As(err, &fe) {
			o.close()
			return err
		}
		return o.recoverRefused(fe)
	}
	if err := o.journal.Reset(); err != nil {
		o.close()
		return err
	}
	return o.close()
}

// searcher opens the search index (once), bringing it up to date with the
// store; flushes keep it so from then on.
func (o *opened) searcher(ctx context.Context, log *slog.Logger) (*searcher, error) {
	if s := o.index.Load(); s != nil {
		return s, nil
	}
	o.indexMu.Lock()
	defer o.indexMu.Unlock()
	if s := o.index.Load(); s != nil {
		return s, nil
	}
	if o.closed {
		return nil, errors.New("search index: the store is closed")
	}
	s, _, err := openSearcher(ctx, o.c, o.store, log, false, nil)
	if err != nil {
		return nil, err
	}
	o.index.Store(s)
	o.c.Watch(s.external)
	return s, nil
}

// searchAnswer serves .memfs/search/NAME, opening the index on first use:
// a mount that never searches pays neither its memory nor its loading.
func (o *opened) searchAnswer(log *slog.Logger) func(context.Context, string) ([]byte, error) {
	return func(ctx context.Context, name string) ([]byte, error) {
		s, err := o.searcher(ctx, log)
		if err != nil {
			log.Error("search index unavailable; memfs reindex rebuilds it", "err", err)
			return nil, err
		}
		return s.answer(ctx, name)
	}
}

// searchFunc is the session's search for context packs: it opens the
// index on first use.
func (o *opened) searchFunc(log *slog.Logger) func(context.Context, string, int) ([]contextpack.Hit, error) {
	return func(ctx context.Context, q string, k int) ([]contextpack.Hit, error) {
		s, err := o.searcher(ctx, log)
		if err != nil {
			return nil, err
		}
		return s.contextSearch(ctx, q, k)
	}
}

// recoverRefused writes the entries the store refused to a recovery
// directory, empties the journal and closes the store.
func (o *opened) recoverRefused(fe *session.FlushError) error {
	var refused []backend.Entry
	for _, e := range o.c.DirtyEntries() {
		if fe.Refused(e.Key) {
			refused = append(refused, e)
		}
	}
	dir, err := writeRecovery(refused)
	if err != nil {
		o.close() // the journal keeps them
		return fmt.Errorf("%w; the recovery directory could not be written (%v): the journal %s keeps them", fe, err, o.spec.journalPath())
	}
	if err := o.journal.Reset(); err != nil {
		o.close()
		return err
	}
	if err := o.close(); err != nil {
		return err
	}
	for k := range fe.Failed {
		if !slices.Contains(o.inherited, k) {
			return fmt.Errorf("%w\n  the refused values were written to %s", fe, dir)
		}
	}
	o.log.Warn("entries a crashed memfs left in the journal are refused by the store; they were moved to a recovery directory",
		"keys", len(fe.Failed), "recovery", dir, "err", fe)
	return nil
}

// quoteName quotes a name found in a store for printing: invalid bytes
// and control characters escaped, a secret in it redacted (redactName).
// Printed output goes through showName; a log line takes redactName, which
// the log handler quotes.
func quoteName(name string, red *redact.Redactor) string {
	return strconv.Quote(redactName(name, red))
}
