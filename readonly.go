package memfs

import (
	"log/slog"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/journal"
)

// A read-only session (Options.Session.ReadOnly: the commands that only
// read, a read-only mount) writes nothing of its own: it opens no journal
// for writing, and shows what the journal of a memfs that did not shut
// down cleanly holds (a read-only replay, in memory) without saving it or
// emptying the journal; damaged bytes in the journal stay where they are.
// The search index it opens is kept in memory (see openIndex), and it
// keeps no pack archive. Give it a store opened read-only too
// (dirstore.OpenReadOnly, badgerstore.Options.ReadOnly), and nothing in the
// store's directory changes.

// openJournal opens the crash journal at path: for writing, moving damage
// aside (journal.Open), or, readOnly, reading it only (journal.Read, and a
// nil Journal). It logs the damage it finds; never silently.
func openJournal(path string, readOnly bool, log *slog.Logger) (*journal.Journal, []journal.Record, error) {
	if readOnly {
		recs, damaged, err := journal.Read(path)
		for _, d := range damaged {
			log.Error("the journal has damaged bytes; read-only, they are left in place, and the intact records before and after them are shown; the next writable mount or command moves them aside",
				"journal", path, "offset", d.Off, "bytes", d.Len)
		}
		return nil, recs, err
	}
	j, recs, err := journal.Open(path)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range j.Damaged() {
		// Never silent: the intact records around it are replayed; the
		// damaged bytes are kept for whoever wants to look at them.
		if d.SavedTo != "" {
			log.Error("the journal had damaged bytes; they were moved aside, the intact records before and after them are replayed",
				"journal", path, "offset", d.Off, "bytes", d.Len, "saved_to", d.SavedTo)
		} else {
			log.Error("the journal had damaged bytes that could not be saved aside", "journal", path,
				"offset", d.Off, "bytes", d.Len, "err", d.Err)
		}
	}
	return j, recs, nil
}

// legacyJournal reads, for a read-only session, the journal a store's
// older layout kept elsewhere (a dir store's at its root): a writable open
// moves it into place before it is replayed, a read-only one moves
// nothing, and must show what it holds all the same.
func legacyJournal(st backend.Store, log *slog.Logger) ([]journal.Record, error) {
	l, ok := st.(interface{ LegacyJournal() string })
	if !ok || l.LegacyJournal() == "" {
		return nil, nil
	}
	_, recs, err := openJournal(l.LegacyJournal(), true, log)
	return recs, err
}
