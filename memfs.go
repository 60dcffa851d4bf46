package memfs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/embed"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/internal/lockfile"
	"github.com/memfs/memfs/internal/names"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/packhist"
	"github.com/memfs/memfs/quota"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/route"
	"github.com/memfs/memfs/runs"
	"github.com/memfs/memfs/search/live"
	"github.com/memfs/memfs/session"
	"github.com/memfs/memfs/tree"
)

// Options configure Open.
type Options struct {
	// JournalPath is the crash journal's file: a closed file's value is
	// in it until a flush has saved it. Required. Keep it with the store
	// (dirstore.JournalName, badgerstore.JournalName under its root), so
	// that it moves with it.
	JournalPath string
	// LockJournal takes an exclusive lock (JournalPath + ".lock") for as
	// long as the FS is open, for a store that does not lock itself
	// (a shared store: many processes open it, each with a journal of
	// its own). A second Open of the same journal fails with an error
	// wrapping backend.ErrStoreInUse that names the holder's PID.
	LockJournal bool
	// Session holds the session's options. Open sets its Journal, Events
	// and Logger; Saved is called after the search index's own hook,
	// Pressure after a mount's (which flushes), Released after the
	// engine's (which hands large garbage back); MaxMemory 0 is
	// DefaultMaxMemory (a negative one: no bound);
	// Derived, when nil, is the skills front matter (user.memfs.skill);
	// Redactor, when nil, is the default rules (redact.New with no
	// config) unless NoRedact.
	Session session.Options
	// NoRedact persists values as they are written, secrets included, and
	// shows values as the store holds them: a session without a Redactor
	// gets none. (The search index
	// is redacted all the same, see IndexRedactor.)
	NoRedact bool
	// Bootstrap lists the key prefixes whose values are loaded at Open
	// ("" loads everything); the rest load at first use.
	Bootstrap []string
	// Name describes the store in logs, in .memfs/status and in the mount
	// table (memfs:NAME); "memfs" when empty.
	Name string
	// Namespace makes the directories memfs exists for (memory/, skills/,
	// agents/) when a writable session lacks them.
	Namespace bool
	// RecoveryDir is where Close writes the values the store refuses, so
	// that nothing acknowledged is lost; DefaultRecoveryDir when empty.
	RecoveryDir string
	// IndexRedactor redacts what the search index takes in (the index is
	// persisted with the store, so it never holds a raw secret); the
	// session's Redactor when nil, and the default rules when that is nil
	// too (a session that keeps values as written still gets an index
	// without secrets).
	IndexRedactor *redact.Redactor
	// Embedder makes the vectors of semantic and hybrid search, and ranks
	// the notes of context packs with them (package embed: the installed
	// static table, a remote model); nil is keyword search only. An
	// embed.Lazy (embed.OpenOptional's default table) opens at the first
	// search or pack with a query, not at Open.
	Embedder embed.Embedder
	// EmbedWait bounds how long a search waits for the Embedder (the
	// query's vector and the unflushed values'); what is not ready by then
	// ranks by keyword. 0 means search.DefaultEmbedWait. A search returns
	// as soon as the vectors are ready: tests set it long, so that the
	// first answer is the semantic one on a loaded machine too.
	EmbedWait time.Duration
	// Routes are the routes of a store that several stores serve
	// (route.NewStore): the session checks each change against them, and
	// the keys of a working route reach no disk (journal, event log,
	// history, search index: a search reads them from the session).
	Routes *route.Table
	// Quotas bound what prefixes hold (package quota); none when empty.
	Quotas []quota.Limit
	// Logger receives what the engine reports; slog.Default when nil.
	Logger *slog.Logger
}

// FS is an open store: its session (a lazy-loading cache with dirty
// tracking), the crash journal, the event log, the search index (opened at
// first use) and, while mounted, the FUSE server and external-change
// watching. Close it, mounted or not: Close makes the final flush.
type FS struct {
	opts    Options
	store   backend.SysStore
	journal *journal.Journal
	events  *eventlog.Log
	c       *session.Context
	log     *slog.Logger
	index   *live.Lazy         // the search index, opened at first use
	hist    *packhist.Archiver // what a pack read, per event (ContextPackAt); nil in a read-only session
	rec     *recorder          // the history of every change (histrecord.go)
	runs    *runs.Projector    // the projection of each run (runs.go)
	keeper  *runKeeper         // catches runs up off the flush path; nil in a read-only session
	quota   *quota.Tracker     // Options.Quotas' usage (limits.go); nil for none
	// pressure asks a mount's serve loop for a flush: unflushed values
	// are past the memory budget (session.Options.Pressure).
	pressure chan struct{}
	// closes asks a mount's serve loop for a flush soon: a file written
	// through a mount of a shared store was closed (serve.go, closeFlush).
	closes chan struct{}
	// freed counts the bytes of values the session let go since the
	// last hand-back to the system; freeing is set while one runs.
	freed   atomic.Int64
	freeing atomic.Bool

	rankOnce sync.Once
	rank     contextpack.RankFunc // of context packs: packRank
	rankEmb  embed.Embedder       // the model rank ranks with; nil: by words

	mu        sync.Mutex // guards closed and mount
	closed    bool
	mount     *Mount   // the live mount, if any
	inherited []string // keys a crashed session left in the journal that the store refused
	lock      *os.File // the journal's lock (Options.LockJournal), else nil
}

// closeLock releases a journal lock taken by Open; nil is none.
func closeLock(l *os.File) {
	if l != nil {
		l.Close()
	}
}

// Open opens the store st as a session: it opens the journal and the event
// log, indexes the store (loading the Bootstrap prefixes), and replays and
// flushes what a memfs that did not shut down cleanly left in the journal.
// One entry the store refuses at the replay never blocks the others: it
// stays in memory and in the journal. The store must keep system records
// (backend.SysStore). On error, st is closed.
func Open(ctx context.Context, st backend.Store, opts Options) (*FS, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if opts.Name == "" {
		opts.Name = "memfs"
	}
	f, recs, err := openParts(ctx, st, opts, log)
	if err != nil {
		return nil, err
	}
	so, err := f.sessionOptions()
	if err != nil {
		f.closeParts()
		return nil, err
	}
	if err := f.startSession(ctx, so, recs); err != nil {
		f.release()
		return nil, err
	}
	f.trackQuota()
	return f, nil
}

// openParts opens what a session stands on: the store's system records,
// the journal (locked when Options.LockJournal says so) and the event
// log. On error, what it opened and st are closed.
func openParts(ctx context.Context, st backend.Store, opts Options, log *slog.Logger) (*FS, []journal.Record, error) {
	ss, ok := st.(backend.SysStore)
	if !ok {
		st.Close()
		return nil, nil, errors.New("memfs: the store keeps no system records (backend.SysStore): the event log and the search index need them")
	}
	if opts.JournalPath == "" {
		st.Close()
		return nil, nil, errors.New("memfs: Options.JournalPath is required")
	}
	lock, err := lockJournal(opts)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	j, recs, err := openJournal(opts.JournalPath, opts.Session.ReadOnly, log)
	if err == nil && len(recs) == 0 && opts.Session.ReadOnly {
		recs, err = legacyJournal(st, log)
	}
	if err != nil {
		closeLock(lock)
		st.Close()
		return nil, nil, err
	}
	f := &FS{opts: opts, store: ss, journal: j, log: log, lock: lock, pressure: make(chan struct{}, 1), closes: make(chan struct{}, 1)}
	if f.events, err = eventlog.Open(ctx, ss, log); err != nil {
		f.closeParts()
		return nil, nil, fmt.Errorf("open the event log of %s: %w", opts.Name, err)
	}
	f.rec = newRecorder(ss, log)
	f.runs = runs.New(ss, f.events)
	if !opts.Session.ReadOnly {
		if err := f.rec.reconcile(ctx, f.events, ss); err != nil {
			log.Error("history: cannot record the versions a crash may have left unwritten; tried again at the next open", "err", err)
		}
	}
	return f, recs, nil
}

// lockJournal takes the journal's lock when Options.LockJournal asks for
// it; nil when it does not.
func lockJournal(opts Options) (*os.File, error) {
	if !opts.LockJournal {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(opts.JournalPath), 0o700); err != nil {
		return nil, fmt.Errorf("memfs: the journal's directory: %w", err)
	}
	return lockfile.Lock(opts.JournalPath+".lock", "the journal "+opts.JournalPath)
}

// closeParts closes what openParts opened (the journal, if any, the lock,
// the store), for an Open that fails before its session exists.
func (f *FS) closeParts() {
	if f.journal != nil {
		f.journal.Close()
	}
	closeLock(f.lock)
	f.store.Close()
}

// sessionOptions completes Options.Session for f: the memory budget, the
// journal, the logger, the redactor, the hooks that tie the session to
// f, and the event sink with the pack archive (f.hist, made here with
// f.index).
func (f *FS) sessionOptions() (session.Options, error) {
	so := f.opts.Session
	if so.MaxMemory == 0 {
		so.MaxMemory = DefaultMaxMemory()
	}
	if !so.ReadOnly {
		// A read-only session writes no journal record: the journal is
		// left as it is for the next session that may write.
		so.Journal = f.journal
	}
	so.Logger = f.log
	if so.Redactor == nil && !f.opts.NoRedact {
		// No secret reaches disk unless the caller says so; nor is one
		// that another program left in the store shown (a read-only
		// session redacts what it loads, see session.Stats.Ingested).
		var err error
		if so.Redactor, err = redact.New(redact.Config{}); err != nil {
			return so, err
		}
	}
	if !so.ReadOnly {
		f.hist = packhist.NewArchiver(f.store, f.events, histOptions(f.opts.Bootstrap, so.Redactor, f.log))
	}
	if !so.ReadOnly {
		f.keeper = startRunKeeper(f.runs, f.log)
	}
	so.Events = eventSink(f.events, newSessionID(), f.hist, f.rec, f.keeper.poke, secretName(so.Redactor), f.routeName())
	so.Saving = f.rec.saving
	if so.Derived == nil {
		// A skill's front matter, as an attribute the skills index and
		// getfattr read (user.memfs.skill).
		so.Derived = map[string]session.AttrFunc{meta.Skill: contextpack.SkillAttr}
	}
	f.index = live.NewLazy(f.log, func(ctx context.Context) (*live.Service, error) {
		return f.openIndex(ctx, false, nil)
	})
	f.hookSession(&so)
	if f.quota = f.newQuota(); f.quota != nil {
		so.Quota = f.quota
	}
	if !f.opts.Routes.Empty() {
		so.Routes = f.opts.Routes
		offDisk(&so, f.opts.Routes)
		_, batches := f.store.(backend.Batcher)
		if so.OnConflict != session.KeepBeside && !batches {
			// A route whose store applies no batches (dir): every
			// store still checks the version it replaces and keeps
			// another writer's beside it, so no write is lost.
			f.log.Warn("a route's store applies no batches: conflicts with other writers are kept beside by the stores, not by the conflict policy",
				"policy", so.OnConflict.String())
			so.OnConflict = session.KeepBeside
		}
	}
	return so, nil
}

// offDisk keeps the keys of t's working routes out of what so's hooks
// write to disk: the event log and the pack archive (Events), history's
// values (Saving) and the search index (Saved).
func offDisk(so *session.Options, t *route.Table) {
	if ev := so.Events; ev != nil {
		so.Events = func(ctx context.Context, events []session.Event) error {
			return ev(ctx, slices.DeleteFunc(slices.Clone(events), func(e session.Event) bool { return t.Ephemeral(e.Key) }))
		}
	}
	kept := func(es []backend.Entry) []backend.Entry {
		return slices.DeleteFunc(slices.Clone(es), func(e backend.Entry) bool { return t.Ephemeral(e.Key) })
	}
	if saving := so.Saving; saving != nil {
		so.Saving = func(ctx context.Context, es []backend.Entry) { saving(ctx, kept(es)) }
	}
	if saved := so.Saved; saved != nil {
		so.Saved = func(ctx context.Context, es []backend.Entry, deleted []string) {
			saved(ctx, kept(es), slices.DeleteFunc(slices.Clone(deleted), t.Ephemeral))
		}
	}
}

// histOptions are the pack archive's: it keeps the prefixes the session
// bootstraps, and with a redactor it names no secret.
func histOptions(prefixes []string, r *redact.Redactor, log *slog.Logger) packhist.Options {
	return packhist.Options{Prefixes: prefixes, Logger: log, SecretName: secretName(r)}
}

// secretName reports whether a name (a key, a run id) holds a secret by
// r's rules; nil (no redaction) when r is.
func secretName(r *redact.Redactor) func(name string) bool {
	if r == nil {
		return nil
	}
	return func(name string) bool {
		_, found := r.Redact(name, []byte(name))
		return len(found) > 0
	}
}

// hookSession chains f's own hooks before the caller's in so: memory
// pressure wakes a mount's serve loop, released memory is handed back to
// the system, saved entries reach the search index.
func (f *FS) hookSession(so *session.Options) {
	caller := f.opts.Session
	so.Pressure = func() {
		select {
		case f.pressure <- struct{}{}: // a mount's serve loop flushes
		default:
		}
		if p := caller.Pressure; p != nil {
			p()
		}
	}
	so.Released = func(n int64) {
		f.handBack(n)
		if r := caller.Released; r != nil {
			r(n)
		}
	}
	so.Saved = f.index.Saved
	if saved := caller.Saved; saved != nil {
		so.Saved = func(ctx context.Context, es []backend.Entry, deleted []string) {
			f.index.Saved(ctx, es, deleted)
			saved(ctx, es, deleted)
		}
	}
}

// startSession makes the session and brings it up to date: it indexes the
// store, replays the journal, rewrites redacted what another program left
// with secrets in it, and records the pack archive's baseline.
func (f *FS) startSession(ctx context.Context, so session.Options, recs []journal.Record) error {
	var err error
	// New refuses a conflict policy (Session.OnConflict) the store cannot
	// carry out.
	if f.c, err = session.New(f.store, so); err != nil {
		return fmt.Errorf("open %s: %w", f.opts.Name, err)
	}
	if err := f.c.Bootstrap(ctx, f.opts.Bootstrap...); err != nil {
		return fmt.Errorf("index store %s: %w", f.opts.Name, err)
	}
	if sk, ok := f.store.(interface{ Skipped() []string }); ok {
		for _, p := range sk.Skipped() {
			f.log.Warn("a name in the store cannot be a key (not UTF-8, a control character, or too long); it is left out and left as it is",
				"path", names.Redact(p, so.Redactor)) // quoted by slog when it needs it
		}
	}
	if err := f.replay(ctx, recs); err != nil {
		return err
	}
	if n := f.c.Stats().Ingested(); n > 0 && !so.ReadOnly {
		// Secrets another program left in the store while no memfs
		// watched: the store's copies are rewritten redacted now, not at
		// some later flush (a failure leaves them dirty for the next).
		if err := f.c.Flush(ctx); err != nil {
			f.log.Error("cannot rewrite redacted the store files another program wrote secrets into; memfs holds them redacted and retries at the next flush",
				"files", n, "err", err)
		}
	}
	f.baseline(ctx)
	if !so.ReadOnly {
		f.makeNamespace()
	}
	return nil
}

// replay applies the journal's records and, in a writable session, flushes
// them and empties the journal.
func (f *FS) replay(ctx context.Context, recs []journal.Record) error {
	jp := f.opts.JournalPath
	if f.opts.Session.ReadOnly {
		if len(recs) == 0 {
			return nil
		}
		f.log.Warn("read-only: showing what the journal of a memfs that did not shut down cleanly holds, without saving it; the next writable mount or command saves it",
			"records", len(recs), "journal", jp)
		if err := f.c.Pending().Replay(recs); err != nil {
			return fmt.Errorf("replay journal %s: %w", jp, err)
		}
		return nil
	}
	if len(recs) > 0 {
		f.log.Warn("replaying the journal: what a memfs that did not shut down cleanly left, or values the store refused at the last close",
			"records", len(recs), "journal", jp)
		if err := f.c.Pending().Replay(recs); err != nil {
			return fmt.Errorf("replay journal %s: %w", jp, err)
		}
		if err := f.c.Flush(ctx); err != nil {
			var fe *session.FlushError
			if !errors.As(err, &fe) {
				return fmt.Errorf("flush replayed journal to %s: %w (the journal is kept)", f.opts.Name, err)
			}
			for _, k := range slices.Sorted(maps.Keys(fe.Failed)) {
				f.log.Error("the store refuses an entry replayed from the journal; it stays in the journal",
					"key", k, "err", fe.Failed[k])
				f.inherited = append(f.inherited, k)
			}
		}
	}
	if err := f.journal.Reset(); err != nil {
		return err
	}
	if len(f.inherited) > 0 {
		if err := f.c.Pending().Rejournal(); err != nil {
			return fmt.Errorf("journal %s: %w", jp, err)
		}
	}
	return nil
}

// Session is the open session: what a mount serves, and what a program
// reads and writes without mounting.
func (f *FS) Session() *session.Context { return f.c }

// Store is the store the session reads and writes through. A caller may
// read it; a write behind the session's back is another writer's.
func (f *FS) Store() backend.SysStore { return f.store }

// Events is the store's event log.
func (f *FS) Events() *eventlog.Log { return f.events }

// Search is the search index, opened (and brought up to date with the
// store) at its first use.
func (f *FS) Search(ctx context.Context) (*live.Service, error) {
	return f.index.Get(ctx)
}

// Reindex rebuilds the search index from every value of the store,
// reporting its progress to p when p is not nil, and returns how many
// values it indexed. It refuses once the index is open (Search, a mount's
// search): two indexes would write the same records. A value that holds
// a secret another program wrote (while no memfs watched) is rewritten
// redacted in the store, as at Open (a read-only session only holds it
// redacted, and says so).
func (f *FS) Reindex(ctx context.Context, p live.Progress) (int, error) {
	if f.index.Opened() {
		return 0, errors.New("memfs: the search index is open; reindex before the first search")
	}
	switch n, err := f.ingestStore(ctx); {
	case err != nil:
		f.log.Error("cannot rewrite redacted the store files another program wrote secrets into; the next flush retries", "err", err)
	case n > 0 && f.opts.Session.ReadOnly:
		f.log.Warn("store files hold secrets another program wrote; a mount or a command that writes rewrites them redacted", "files", n)
	case n > 0:
		f.log.Info("rewrote redacted the store files another program wrote secrets into", "files", n)
	}
	s, err := f.openIndex(ctx, true, p)
	if err != nil {
		return 0, err
	}
	// The vectors too: a rebuild that left them to the next open would
	// make that open pay for them, and a search meanwhile rank by words.
	if err := s.WaitEmbedded(ctx); err != nil {
		f.log.Warn("search index rebuilt; some vectors are made at the next open", "err", err)
	}
	if err := s.Close(ctx); err != nil {
		f.log.Warn("search index not saved; it is repaired when next opened", "err", err)
	}
	return s.Repaired(), nil
}

// openIndex opens the search index (live.OpenService), a new one with
// rebuild, reporting the indexing to p when it is not nil. A read-only
// session keeps it in memory, but for a rebuild (Reindex): the command
// reindex changes no value, and saves the index it makes.
func (f *FS) openIndex(ctx context.Context, rebuild bool, p live.Progress) (*live.Service, error) {
	red, err := f.indexRedactor()
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	return live.OpenService(ctx, f.c, f.store, live.ServiceOptions{Redactor: red, Logger: f.log, Rebuild: rebuild, Progress: p,
		Embedder: f.opts.Embedder, EmbedWait: f.opts.EmbedWait, InMemory: f.opts.Session.ReadOnly && !rebuild, Working: f.opts.Routes.Working(), Route: f.opts.Routes.Where})
}

// indexRedactor is what redacts the text the search index and the
// rankers take in: Options.IndexRedactor, else the session's Redactor,
// else the default rules.
func (f *FS) indexRedactor() (*redact.Redactor, error) {
	if red := f.opts.IndexRedactor; red != nil {
		return red, nil
	}
	if red := f.opts.Session.Redactor; red != nil {
		return red, nil
	}
	return redact.New(redact.Config{})
}

// packRank is the ranker of context packs (see packRank), made once.
func (f *FS) packRank() contextpack.RankFunc {
	f.rankOnce.Do(func() {
		red, err := f.indexRedactor()
		if err != nil {
			// Without a redactor no note's text may reach a model that
			// could be remote: rank by words alone.
			f.log.Warn("context packs rank by keywords: no redactor", "err", err)
			f.rank = packRank(nil, nil, f.log)
			return
		}
		f.rank, f.rankEmb = packRank(red, f.opts.Embedder, f.log), f.opts.Embedder
	})
	return f.rank
}

// Flush saves every dirty value and removal to the store, and empties the
// journal of what it saved.
func (f *FS) Flush(ctx context.Context) error {
	return f.c.Flush(ctx)
}

// Close makes the final flush and closes everything. A mount must have
// ended first (Serve returns when it has); Close refuses while one is live.
// A second Close does nothing. It tries the flush three times; then
// what the store still refuses goes to a recovery directory (see
// Options.RecoveryDir), which the error names: nothing acknowledged is
// lost; the journal keeps them too. A refusal of only what a crashed memfs
// left in the journal is a logged warning, not an error (see
// recoverRefused). A read-only session saves nothing and
// leaves the journal to the next writable one.
func (f *FS) Close(ctx context.Context) error {
	f.mu.Lock()
	closed, m := f.closed, f.mount
	f.mu.Unlock()
	if closed {
		return nil
	}
	if m != nil {
		return fmt.Errorf("memfs: %s is still mounted: Close after Serve has returned (Mount.Unmount ends it)", m.dir)
	}
	if f.opts.Session.ReadOnly {
		return f.release()
	}
	var err error
	for attempt := range 3 {
		if err = f.c.Flush(ctx); err == nil {
			break
		}
		f.log.Error("final flush failed", "attempt", attempt+1, "err", err)
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	if err == nil {
		if jerr := f.journal.Reset(); jerr != nil {
			f.log.Warn("journal reset failed; it will be replayed (harmlessly) at the next mount", "err", jerr)
		}
		return f.release()
	}
	var fe *session.FlushError
	if errors.As(err, &fe) {
		return f.recoverRefused(fe)
	}
	// The store fails as a whole: every unsaved value goes aside, and the
	// journal keeps the closed files as well.
	dir, rerr := f.writeRecovery(f.c.Pending().Sealed())
	f.release()
	if rerr != nil {
		return fmt.Errorf("final flush failed (%v) and the recovery directory could not be written (%v); the journal %s still holds every closed file",
			err, rerr, f.opts.JournalPath)
	}
	return fmt.Errorf("final flush failed: %v\n  the unsaved values were written to %s (and stay in the journal %s)", err, dir, f.opts.JournalPath)
}

// recoverRefused writes the entries the store refused to a recovery
// directory and closes. The journal keeps them (the next session that
// writes tries them again: the store may take them then), unless every one
// was already left in the journal by a crashed memfs and refused again:
// those are in the recovery directory now, and the journal lets them go,
// so that they are not replayed and refused at every session.
func (f *FS) recoverRefused(fe *session.FlushError) error {
	var refused []backend.Entry
	for _, e := range f.c.Pending().Sealed() {
		if fe.Refused(e.Key) {
			refused = append(refused, e)
		}
	}
	dir, err := f.writeRecovery(refused)
	if err != nil {
		f.release() // the journal keeps them
		return fmt.Errorf("%w; the recovery directory could not be written (%v): the journal %s keeps them", fe, err, f.opts.JournalPath)
	}
	for k := range fe.Failed {
		if !slices.Contains(f.inherited, k) {
			f.release()
			return fmt.Errorf("%w\n  the refused values were written to %s (and stay in the journal %s)", fe, dir, f.opts.JournalPath)
		}
	}
	if err := f.journal.Reset(); err != nil {
		f.release()
		return err
	}
	if err := f.release(); err != nil {
		return err
	}
	f.log.Warn("entries a crashed memfs left in the journal are refused by the store; they were moved to a recovery directory",
		"keys", len(fe.Failed), "recovery", dir, "err", fe)
	return nil
}

// release closes the index (saving it), the journal and the store, once.
func (f *FS) release() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	f.mu.Unlock()
	if err := f.index.Close(context.Background()); err != nil {
		f.log.Warn("search index not saved; it is repaired when next opened", "err", err)
	}
	f.keeper.close()
	if f.hist != nil {
		// What is queued is written before the store closes.
		if err := f.hist.Close(context.Background()); err != nil {
			f.log.Warn("the archive of pack sources missed some versions; a rebuild as of their seqs says so", "err", err)
		}
	}
	var jerr error
	if f.journal != nil {
		jerr = f.journal.Close()
	}
	err := errors.Join(jerr, f.store.Close())
	closeLock(f.lock)
	return err
}

// DefaultStateDir is memfs's state directory, $XDG_STATE_HOME/memfs (by
// default ~/.local/state/memfs): the recovery directories
// (DefaultRecoveryDir), the mount helper's logs and a shared store's
// journals.
func DefaultStateDir() string {
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

// DefaultRecoveryDir is $XDG_STATE_HOME/memfs/recovery (by default
// ~/.local/state/memfs/recovery).
func DefaultRecoveryDir() string { return filepath.Join(DefaultStateDir(), "recovery") }

// DefaultStorePath is the directory of the default store:
// $XDG_DATA_HOME/memfs/store (by default ~/.local/share/memfs/store).
func DefaultStorePath() string {
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

// writeRecovery writes entries as plain files under a new directory of the
// recovery directory and returns it. The values are already redacted.
func (f *FS) writeRecovery(entries []backend.Entry) (string, error) {
	base := f.opts.RecoveryDir
	if base == "" {
		base = DefaultRecoveryDir()
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	// A directory of its own, even for two closes in one second.
	dir, err := os.MkdirTemp(base, time.Now().UTC().Format("20060102T150405Z")+fmt.Sprintf("-%d-", os.Getpid()))
	if err != nil {
		return "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	var errs []error
	for _, e := range entries {
		if d := filepath.Dir(e.Key); d != "." {
			if err := root.MkdirAll(d, 0o700); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := root.WriteFile(e.Key, e.Value, 0o600); err != nil {
			errs = append(errs, err)
			continue
		}
		// The attributes go with the value, so that memfs import brings
		// both back; a filesystem without them loses only them.
		if err := tree.SetXAttrs(filepath.Join(dir, e.Key), e.Info.XAttrs); err != nil {
			errs = append(errs, err)
		}
	}
	return dir, errors.Join(errs...)
}

// newSessionID names one mount or command run in the event log.
func newSessionID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// eventSink appends a flush's events to the log, tagged with the session,
// with their versions recorded around the append (see recorder), and
// hands them, numbered, with the entries as flushed, to the archive of
// pack sources when there is one (off the flush path: see packhist).
func eventSink(l *eventlog.Log, id string, hist *packhist.Archiver, rec *recorder, appended func(), secret func(string) bool, route func(string) string) func(context.Context, []session.Event) error {
	return func(ctx context.Context, evs []session.Event) error {
		evs, err := rec.unlogged(ctx, evs)
		if err != nil || len(evs) == 0 {
			return err
		}
		evs = renamesFirst(evs)
		stored, err := rec.record(ctx, evs, func() ([]eventlog.Event, error) {
			out := make([]eventlog.Event, len(evs))
			for i, e := range evs {
				out[i] = eventlog.Event{Op: e.Op, Key: e.Key, OldKey: e.OldKey, Size: e.Size, SHA256: e.SHA256,
					Writer: e.Writer, Session: id, Reason: e.Reason}
				if route != nil {
					out[i].Route = route(e.Key)
				}
				if out[i].Writer.Run == "" && e.Saved != nil {
					// The file's run, for a writer that names none.
					if r := string(e.Saved.Info.XAttrs[meta.Run]); meta.ValidateRun(r) == nil {
						out[i].Writer.Run = r
					}
				}
				if secret != nil && out[i].Writer.Run != "" && secret(out[i].Writer.Run) {
					// A run id that is a secret (a token exported as
					// MEMFS_RUN) names no run: it would reach the log,
					// the history and a record's name.
					out[i].Writer.Run = ""
				}
				if e.Op == session.EventConflict {
					out[i].Conflict = &eventlog.Conflict{Policy: e.Policy, Outcome: e.Outcome, Copy: e.CopyKey}
				}
			}
			return l.Append(ctx, out)
		})
		if err != nil {
			return err
		}
		appended()
		if hist == nil {
			return nil
		}
		items := make([]packhist.Item, len(evs))
		for i := range evs {
			items[i] = packhist.Item{Event: stored[i], Saved: evs[i].Saved}
		}
		hist.Add(items)
		return nil
	}
}

// NamespaceDirs returns the directories memfs exists for: notes, skills
// and sub-agent profiles (Options.Namespace).
func NamespaceDirs() []string { return []string{"memory", "skills", "agents"} }

// makeNamespace makes the namespace directories (Options.Namespace) and
// the routes' directories the session lacks (the first mount of a store,
// or after someone removed one): real directories, saved at the next
// flush. A name that another node holds keeps it.
func (f *FS) makeNamespace() {
	var dirs []string
	if f.opts.Namespace {
		dirs = NamespaceDirs()
	}
	for _, r := range f.opts.Routes.Routes() {
		// A route's directory, and the directories above it: where
		// its keys show even while it holds none.
		for i, c := range r.Prefix {
			if c == '/' {
				dirs = append(dirs, r.Prefix[:i])
			}
		}
	}
	for _, d := range dirs {
		err := f.c.Mkdir(d, 0o755, f.opts.Session.DirUID, f.opts.Session.DirGID)
		switch {
		case err == nil:
			f.log.Info("made the namespace directory", "dir", d+"/")
		case errors.Is(err, os.ErrExist):
		default:
			f.log.Warn("cannot make the namespace directory", "dir", d+"/", "err", err)
		}
	}
}
