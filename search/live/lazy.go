package live

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/search"
)

// ErrClosed is returned by a Lazy asked for its Service after Close.
var ErrClosed = errors.New("search index: the store is closed")

// Lazy holds the Service of a session, opened at its first use: a mount
// that never searches pays neither its memory nor its loading. Its Saved
// is the session's Options.Saved hook, so a Lazy is made before the
// session it serves (its open function may refer to that session).
//
// The Service is opened once: concurrent callers wait for one open, a
// failed open is tried again at the next use, and none is made after Close.
type Lazy struct {
	open func(context.Context) (*Service, error) // immutable
	log  *slog.Logger                            // immutable

	s atomic.Pointer[Service] // once opened; read without mu, stored under heldMu

	mu     sync.Mutex // serializes opening, and Close; held across the open's I/O
	closed bool       // guarded by mu: no Service opens after Close

	// closing is done once Close begins: it cancels an open under way
	// (which its callers' cancellation does not).
	closing     context.Context
	stopOpening context.CancelFunc

	// The flushes that land while an open is under way, for the Service
	// it opens: its repair may have read the store before them.
	heldMu  sync.Mutex // guards opening and held; never held across I/O
	opening bool
	held    []heldSave
}

// heldSave is one Saved call kept for the Service being opened.
type heldSave struct {
	saved   []backend.Entry
	deleted []string
}

// NewLazy returns a Lazy that opens its Service with open (typically
// OpenService on the session and store). log receives the failures Answer
// reports; nil discards.
func NewLazy(log *slog.Logger, open func(ctx context.Context) (*Service, error)) *Lazy {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	closing, stop := context.WithCancel(context.Background())
	return &Lazy{open: open, log: log, closing: closing, stopOpening: stop}
}

// Get returns the Service, opening it if it is not open yet; ErrClosed
// after Close.
func (l *Lazy) Get(ctx context.Context) (*Service, error) {
	if s := l.s.Load(); s != nil {
		return s, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.s.Load(); s != nil {
		return s, nil
	}
	if l.closed {
		return nil, ErrClosed
	}
	l.heldMu.Lock()
	l.opening = true
	l.heldMu.Unlock()
	// Every caller waiting on mu waits for this open: the one that starts
	// it does not cancel it (a FUSE request is canceled by any signal to
	// the reading thread); Close does. The store's own request timeouts
	// bound it.
	octx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(l.closing, cancel)
	s, err := l.open(octx)
	stop()
	cancel()
	l.heldMu.Lock()
	defer l.heldMu.Unlock()
	held := l.held
	l.opening, l.held = false, nil
	if err != nil {
		return nil, err // the next open repairs from the store
	}
	// Queued in order, before any later flush can reach s (Saved only
	// queues: no I/O under heldMu). Indexing a value again is harmless.
	for _, h := range held {
		s.Saved(ctx, h.saved, h.deleted)
	}
	l.s.Store(s)
	return s, nil
}

// VectorStatus returns the VectorStatus of the Service if it has opened
// (false if not: it does not open it).
func (l *Lazy) VectorStatus() (VectorStatus, bool) {
	s := l.s.Load()
	if s == nil {
		return VectorStatus{}, false
	}
	return s.VectorStatus(), true
}

// Opened reports whether the Service is open.
func (l *Lazy) Opened() bool { return l.s.Load() != nil }

// Saved is Service.Saved once the Service is open, and nothing before an
// open starts (the open brings the index up to date with the store). A
// flush that lands during an open is kept and given to the Service it
// opens. It never waits for an open.
func (l *Lazy) Saved(ctx context.Context, saved []backend.Entry, deleted []string) {
	if s := l.s.Load(); s != nil {
		s.Saved(ctx, saved, deleted)
		return
	}
	l.heldMu.Lock()
	s := l.s.Load()
	if s == nil && l.opening {
		l.held = append(l.held, heldSave{saved: saved, deleted: deleted})
	}
	l.heldMu.Unlock()
	if s != nil {
		s.Saved(ctx, saved, deleted)
	}
}

// Answer is Service.Answer, opening the Service first (a failure to open
// it is logged: LogOpenError).
func (l *Lazy) Answer(ctx context.Context, r search.Request) ([]byte, error) {
	s, err := l.Get(ctx)
	if err != nil {
		l.LogOpenError(err)
		return nil, err
	}
	return s.Answer(ctx, r)
}

// File answers .memfs/search/NAME (fsnode's Options.Search): the request
// search.ParseName reads in name.
func (l *Lazy) File(ctx context.Context, name string) ([]byte, error) {
	r, err := search.ParseName(name)
	if err != nil {
		return nil, err
	}
	return l.Answer(ctx, r)
}

// LogOpenError logs err, a failed open of the Service (Get), saying what
// happens next: a store that is unavailable (an outage) leaves the index
// to open by itself at the next use once the store answers; anything
// else may need memfs reindex.
func (l *Lazy) LogOpenError(err error) {
	if errors.Is(err, backend.ErrUnavailable) {
		l.log.Warn("search index not open: the store is unavailable; it opens at the next search once the store answers (nothing to rebuild)", "err", err)
		return
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		l.log.Info("search index not open: the open was canceled; it opens at the next search", "err", err)
		return
	}
	l.log.Error("search index unavailable; memfs reindex rebuilds it", "err", err)
}

// Close cancels an open under way and waits for it to return, makes every
// later Get fail with ErrClosed, and closes the Service if it was opened
// (Service.Close).
func (l *Lazy) Close(ctx context.Context) error {
	l.stopOpening()
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	if s := l.s.Load(); s != nil {
		return s.Close(ctx)
	}
	return nil
}
