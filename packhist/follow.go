package packhist

import (
	"strings"

	"github.com/memfs/memfs/eventlog"
)

// fate is what became of a pack source after a State's seq.
type fate struct {
	name string // its name at the log's head, or its last name when gone
	gone bool   // removed since: deleted, or replaced by a rename onto its name
}

// follower tracks pack sources by name through the events after a seq:
// renames move them, deletes (of a key or a directory above it), a
// rename onto their name and a conflict resolved by a delete end them.
type follower struct {
	fates map[string]*fate // the name as of seq -> what became of it
	at    map[string]*fate // a live source's current name -> its fate
}

func newFollower(keys []string) *follower {
	f := &follower{fates: make(map[string]*fate, len(keys)), at: make(map[string]*fate, len(keys))}
	for _, k := range keys {
		ft := &fate{name: k}
		f.fates[k], f.at[k] = ft, ft
	}
	return f
}

func (f *follower) end(name string) {
	if ft, ok := f.at[name]; ok {
		ft.gone = true
		delete(f.at, name)
	}
}

// apply moves the fates past ev.
func (f *follower) apply(ev *eventlog.Event) {
	switch ev.Op {
	case eventlog.OpRename:
		ft, ok := f.at[ev.OldKey]
		f.end(ev.Key) // the rename replaced what had the name
		if ok {
			delete(f.at, ev.OldKey)
			ft.name = ev.Key
			f.at[ev.Key] = ft
		}
	case eventlog.OpDelete:
		f.end(ev.Key)
		for k := range f.at {
			if strings.HasPrefix(k, ev.Key+"/") {
				f.end(k)
			}
		}
	case eventlog.OpConflict:
		c := ev.Conflict
		switch {
		case c == nil:
		case c.Outcome == outcomeDeleted:
			f.end(ev.Key)
		case c.Outcome == outcomeKeptBoth && c.Copy != "":
			// Theirs took the name; ours moved to the copy.
			f.apply(&eventlog.Event{Op: eventlog.OpRename, OldKey: ev.Key, Key: c.Copy})
		}
	}
}
