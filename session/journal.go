package session

import (
	"errors"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/journal"
)

// This file records changes in the session's journal (Options.Journal)
// and settles it after a flush; outbound.go seals the records.

// Journal records completed changes between flushes so that they survive a
// crash of the process. Append must not wait for a disk barrier; Truncate
// discards every record whose generation is at most through, because a
// successful Flush made them durable in the store.
type Journal interface {
	Append(r journal.Record) error
	Truncate(through uint64) error
}

// settleJournal ends a flush that reached the store: the journal's
// records through the flush's generation go (the store has them), and
// what the store refused is recorded again, so that a crash still finds
// it. It returns the flush's error: a *FlushError when the store refused
// some entries.
func (c *Context) settleJournal(through uint64, failed map[string]error, out flushCommit) error {
	refusedDirs, refused := out.refusedDirs, out.refused
	if c.opts.Journal != nil {
		if err := c.opts.Journal.Truncate(through); err != nil {
			// The store has the values, but the journal still holds
			// older records of them, which a replay would put back over
			// changes flushed but never closed: not a success.
			c.log.Error("journal truncate failed after a flush; the flush is reported failed", "err", err)
			return wrapf("flush: journal truncate: %w", err)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	// The truncate took the refused entries' records with it: record
	// them again, at a new generation, so that a crash still finds them.
	// Directories first: a replay makes them before the files in them.
	if len(refusedDirs) > 0 {
		c.mu.Lock()
		gen := c.mu.pending.nextGenLocked()
		c.mu.Unlock()
		if err := c.journalDir(gen, refusedDirs...); err != nil {
			c.log.Error("journal append of directories the store refused failed", "err", err)
		}
	}
	for _, f := range refused {
		c.mu.Lock()
		key := f.key
		if _, dirty := c.mu.pending.dirty[f]; key != "" && dirty {
			c.markDirtyLocked(f)
		}
		c.mu.Unlock()
		if key != "" {
			if err := c.journalKey(key); err != nil {
				c.log.Error("journal append of an entry the store refused failed", "key", key, "err", err)
			}
		}
	}
	ferr := &FlushError{Failed: failed}
	c.log.Error("flush: the store refused some entries; they stay dirty, the others are saved", "err", ferr)
	return wrapf("flush: %w", ferr)
}

// journalKey records the current value of key as a completed change.
func (c *Context) journalKey(key string) error { return c.journalKeyDropping(key, "") }

// journalKeyDropping is journalKey, with the record making the earlier
// records of dropped no longer matter (journal.Record.Dropped): the change
// they hold is key's now (keep-both moved it to a conflict copy).
func (c *Context) journalKeyDropping(key, dropped string) error {
	if c.opts.Journal == nil || c.unjournaled(key) {
		return nil
	}
	c.mu.Lock()
	f, ok := c.mu.tree.files[key]
	if !ok || !f.loaded {
		c.mu.Unlock()
		return nil
	}
	e := backend.Entry{Key: key, Info: f.infoLocked(), Value: f.shareRLocked()}
	gen := f.gen
	f.jlen, f.jfull = int64(len(f.data)), false
	c.mu.Unlock()
	var err error
	if dropped == "" || c.unjournaled(dropped) {
		err = c.journal(gen, []backend.Entry{e}, nil)
	} else {
		err = c.journalDropping(gen, e, dropped)
	}
	if err != nil {
		c.needFullRecord(f)
		return err
	}
	return nil
}

// needFullRecord makes the next journal record of f hold its whole value:
// a record was lost.
func (c *Context) needFullRecord(f *file) {
	c.mu.Lock()
	f.jfull = true
	c.mu.Unlock()
}

// Rejournal records every dirty entry's whole value in the journal, at
// its current generation: after the journal was reset with entries still
// dirty (the store refused them at the replay of an earlier session), so
// that a crash still finds them.
func (p *Pending) Rejournal() error {
	c := p.c
	c.mu.RLock()
	var keys []string
	for f := range c.mu.pending.dirty {
		if f.key != "" && !c.unjournaled(f.key) {
			keys = append(keys, f.key)
		}
	}
	c.mu.RUnlock()
	var errs []error
	for _, k := range keys {
		errs = append(errs, c.journalKey(k))
	}
	return errors.Join(errs...)
}
