package embed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// OpenOptional is Open, except for the default table ("" or "default"):
// it is read at its first use, not now (a Lazy: opening it reads and
// checks 17 MB, about 20 ms, and holds 26 MiB, which a mount that never
// searches does not pay), and when it is missing now, or missing or
// damaged when it is read, that is a warning on log and no embedder,
// keyword search only, so that one damaged file never stops a mount. Any
// other spec is Open's: a model named explicitly is opened, and checked,
// now.
func OpenOptional(spec string, o Options, log *slog.Logger) (Embedder, error) {
	if spec != "" && spec != "default" {
		return Open(spec, o)
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	path := filepath.Join(DefaultDir(o.Getenv), DefaultTable)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		log.Warn("semantic search is off: the default embedder is not installed; search is keyword-only (memfs models install puts it in place)")
		return nil, nil
	}
	return &Lazy{name: "default", open: func() Embedder {
		e, err := Open(spec, o)
		switch {
		case errors.Is(err, ErrNotInstalled):
			log.Warn("semantic search is off: the default embedder is not installed; search is keyword-only (memfs models install puts it in place)")
		case errors.Is(err, ErrCorrupt):
			log.Warn("semantic search is off: the default embedder's table is damaged; search is keyword-only (memfs models install puts it back)", "err", err)
		case err != nil:
			log.Warn("semantic search is off: the default embedder did not open; search is keyword-only", "err", err)
		}
		return e
	}}, nil
}

// Lazy is an Embedder that opens the one it stands for at its first use
// (OpenOptional makes one of the default table). Its methods open it
// first; one that did not open (logged by the opener) is none: ID is "",
// Dim 0, Floor StaticFloor, and Embed fails. A caller that asks whether
// there is a model at all (keyword search only) asks Resolve.
type Lazy struct {
	name string          // what it opens, for Label: "default"
	open func() Embedder // nil: none opened (the opener logged why)

	once   sync.Once
	e      Embedder    // set by once
	loaded atomic.Bool // once has run
}

var (
	_ Embedder = (*Lazy)(nil)
	_ Floorer  = (*Lazy)(nil)
)

// Load opens the embedder, once, and returns it; nil when it did not open.
func (l *Lazy) Load() Embedder {
	l.once.Do(func() {
		l.e = l.open()
		l.loaded.Store(true)
	})
	return l.e
}

// Loaded reports whether Load has run (the model is open, or failed to).
func (l *Lazy) Loaded() bool { return l.loaded.Load() }

// ID is the loaded embedder's ID; "" when it did not open.
func (l *Lazy) ID() string {
	if e := l.Load(); e != nil {
		return e.ID()
	}
	return ""
}

// Dim is the loaded embedder's Dim; 0 when it did not open.
func (l *Lazy) Dim() int {
	if e := l.Load(); e != nil {
		return e.Dim()
	}
	return 0
}

// Floor is the loaded embedder's floor (FloorOf).
func (l *Lazy) Floor() float64 { return FloorOf(l.Load()) }

// Embed is the loaded embedder's Embed; an error when it did not open.
func (l *Lazy) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e := l.Load()
	if e == nil {
		return nil, fmt.Errorf("embed: the %s model did not open (the log says why)", l.name)
	}
	return e.Embed(ctx, texts)
}

// Resolve returns the embedder e stands for: for a Lazy, the one it opens
// (now, if it has not yet; nil when it did not: keyword search only);
// else e.
func Resolve(e Embedder) Embedder {
	if l, ok := e.(*Lazy); ok {
		return l.Load()
	}
	return e
}

// Label names e for a status line without opening it: its ID, or, for a
// Lazy not opened yet, what it will open ("default"); "" for nil.
func Label(e Embedder) string {
	switch e := e.(type) {
	case nil:
		return ""
	case *Lazy:
		if !e.Loaded() {
			return e.name
		}
		return Label(e.Load())
	}
	return e.ID()
}
