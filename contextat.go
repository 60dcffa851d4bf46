package memfs

import (
	"context"
	"fmt"
	"path"
	"slices"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/packhist"
	"github.com/memfs/memfs/session"
)

// ContextPackAt rebuilds the context pack of o (as in ContextPack) as it
// stood when the event log's head was seq, for the caller in ctx
// (session.WithCred): contextpack.Build over packhist.StateAt, with the
// options the live pack uses. It equals, byte for byte, the pack
// ContextPack gave when the head was seq and nothing was unflushed, with
// three exceptions stated here rather than hidden. The ignore rules are
// the .memfsignore files as they are now (the archive keeps the pack
// sources, not the rules): a file they exclude now is left out of a past
// pack too. The values are the
// store's, as flushed: a session that wrote a secret keeps the bytes it
// was given in its cache (the store gets them redacted), so its own live
// pack shows them until a remount, and the rebuilt one shows the redacted
// form. Which files the caller may read is judged by each file's mode and
// owner as of seq and by what session.CanRead says now of the name the
// file has now (renames followed: taking access away, by a chmod, a
// rename or a move into a private directory, also takes it from the
// past). A file removed since is shown only to root and to its owner as
// of seq, while the directories above its last name still let the owner
// pass (see readableAt.readable).
//
// o.Prefixes must be nil or Options.Bootstrap: the archive keeps the pack
// sources under those. seq 0 or past the head is an error wrapping
// packhist.ErrOutOfRange. A
// version the archive no longer keeps, never got, or holds altered is an
// error naming the key (packhist.ErrNotKept, ErrNotArchived,
// ErrMismatch): never a different pack.
func (f *FS) ContextPackAt(ctx context.Context, seq uint64, o contextpack.Options) (contextpack.Pack, error) {
	if o.Repo != "" {
		return contextpack.Pack{}, fmt.Errorf("memfs: context as of seq %d: the archive keeps the global pack's sources only, not a repository's (build it from a snapshot's files)", seq)
	}
	cr, o, err := f.packRequest(ctx, o)
	if err != nil {
		return contextpack.Pack{}, err
	}
	if !slices.Equal(o.Prefixes, f.opts.Bootstrap) {
		return contextpack.Pack{}, fmt.Errorf("memfs: context as of seq %d: the archive keeps the pack sources under Options.Bootstrap %q only, not %q", seq, f.opts.Bootstrap, o.Prefixes)
	}
	if f.hist != nil {
		// The archive is written off the flush path: a seq flushed a
		// moment ago may still be queued.
		if err := f.hist.Sync(ctx); err != nil {
			return contextpack.Pack{}, err
		}
	}
	if err := f.events.Refresh(ctx); err != nil {
		return contextpack.Pack{}, fmt.Errorf("memfs: context as of seq %d: %w", seq, err)
	}
	st, err := packhist.StateAt(ctx, f.store, f.events, seq, f.opts.Bootstrap)
	if err != nil {
		return contextpack.Pack{}, err
	}
	return contextpack.Build(ctx, readableAt{st: st, c: f.c, cr: cr}, o)
}

// baseline hands the archive of pack sources what the session found at
// Open, clean, with the log's head (see packhist.Archiver.Baseline), so
// that a change made outside memfs's flushes is never rebuilt as if it
// were not there.
func (f *FS) baseline(ctx context.Context) {
	if f.hist == nil {
		return
	}
	p, err := f.events.Query(ctx, eventlog.Query{Limit: 1})
	if err != nil {
		f.log.Warn("packhist: no check of the pack sources at open: the event log's head is unknown", "err", err)
		return
	}
	var head uint64
	if n := len(p.Events); n > 0 {
		head = p.Events[n-1].Seq
	}
	// Only the pack sources: every key's Entry (its attributes decoded
	// into a map of its own) was 60 MB of garbage at 100,000 keys.
	var es []backend.Entry
	for _, k := range f.c.Keys() {
		if !f.hist.Tracks(k) || f.c.Pending().Dirty(k) {
			continue
		}
		if e, ok := f.c.Entry(k); ok {
			es = append(es, e)
		}
	}
	f.hist.Baseline(head, es)
}

// readableAt is a past state as one caller may read it (see
// ContextPackAt): the files it may not read are not there.
type readableAt struct {
	st *packhist.State
	c  *session.Context
	cr session.Cred
}

var _ contextpack.Source = readableAt{}

func (s readableAt) Entries(prefix string) []backend.Entry {
	es := s.st.Entries(prefix)
	return slices.DeleteFunc(es, func(e backend.Entry) bool { return !s.readable(e) })
}

// Resolve loads the keys the caller may read; Get does not give the others.
func (s readableAt) Resolve(ctx context.Context, keys ...string) error {
	var kept []string
	for _, k := range keys {
		if s.readableKey(k) {
			kept = append(kept, k)
		}
	}
	return s.st.Resolve(ctx, kept...)
}

func (s readableAt) Get(key string) ([]byte, bool) {
	if !s.readableKey(key) {
		return nil, false
	}
	return s.st.Get(key)
}

func (s readableAt) readableKey(key string) bool {
	e, ok := s.st.Entry(key)
	return ok && s.readable(e)
}

// readable is the past as closed as the present: 'r' on the file as of
// the state's seq, and, now, what session.CanRead asks of the name the
// file has now (renames followed: 'r' on it and 'x' on every directory
// above it). A file removed since (deleted, replaced, or gone from the
// store without an event) is not readable by anyone now; the most
// restrictive rule that keeps a user's own past is that it is shown only
// to root and to its owner as of seq, and to the owner only while every
// directory above its last name is still there and lets it pass.
func (s readableAt) readable(e backend.Entry) bool {
	if s.cr.UID == 0 {
		return true
	}
	if !s.cr.MayRead(e.Info.Mode, e.Info.UID, e.Info.GID) {
		return false
	}
	name, gone := s.st.Now(e.Key)
	if !gone {
		if st, err := s.c.Stat(name); err == nil && !st.IsDir {
			return s.c.Access().CanRead(name, s.cr)
		}
	}
	if name == "" || s.cr.UID != e.Info.UID {
		return false
	}
	for d := path.Dir(name); ; d = path.Dir(d) {
		if d == "." {
			d = ""
		}
		st, err := s.c.Stat(d)
		if err != nil || !st.IsDir || !s.cr.MaySearch(st.Mode, st.UID, st.GID) {
			return false
		}
		if d == "" {
			return true
		}
	}
}
