package dirstore

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/memfs/memfs/backend"
)

var _ backend.Watcher = (*Store)(nil)

// watchBuffer is how many changes wait for a slow reader before the
// watch stops taking the kernel's events (which then queue in inotify,
// and overflow into a Change{Lost: true}).
const watchBuffer = 256

// Watch reports the changes made to the store's directory (by other
// programs, and by this Store's own Save and Delete) until ctx is done or
// the store is closed, then closes the channel. See the package doc,
// "Watch".
func (s *Store) Watch(ctx context.Context) (<-chan backend.Change, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watch{s: s, fw: fw, out: make(chan backend.Change, watchBuffer), kept: make(chan string), done: make(chan struct{})}
	// The root's own watch must hold; a subdirectory that vanished
	// while it was walked needs none.
	if err := fw.Add(s.dir); err != nil {
		fw.Close()
		return nil, err
	}
	// Every directory below the root is watched before Watch returns: a
	// file written into one right after (which a caller's listing made
	// after Watch may not see yet) is reported. Added by the goroutine,
	// such a write was lost when it came before the directory's watch.
	// Nothing is reported here, so nothing waits for a reader.
	w.addTree(ctx, s.dir, false)
	s.watches.Add(1)
	s.feedsMu.Lock()
	s.feeds[w] = struct{}{}
	s.feedsMu.Unlock()
	go func() {
		defer s.watches.Done()
		defer func() {
			s.feedsMu.Lock()
			delete(s.feeds, w)
			s.feedsMu.Unlock()
			close(w.done)
		}()
		defer close(w.out)
		defer fw.Close()
		w.run(ctx)
	}()
	return w.out, nil
}

// watch is one running Watch: its fsnotify watcher and its channel, used
// by its goroutine alone.
type watch struct {
	s    *Store
	fw   *fsnotify.Watcher
	out  chan backend.Change
	kept chan string   // keys a DeleteIf kept (reportKept), to report
	done chan struct{} // closed when run has returned
}

func (w *watch) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.s.closed:
			return
		case key := <-w.kept:
			if !w.send(ctx, backend.Change{Key: key}) {
				return
			}
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			// An overflow (or any other watch error) means events were
			// lost: the reader compares everything.
			if !w.send(ctx, backend.Change{Lost: true}) {
				return
			}
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			key, ok := w.key(ev.Name)
			if !ok {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					// A new directory (made, or moved in with what it
					// holds): watch it, and report it (an entry of its
					// own: its mode, owner and attributes) and what it
					// holds.
					if w.hidden(ev.Name) {
						continue
					}
					if !w.send(ctx, backend.Change{Key: key}) || !w.addTree(ctx, ev.Name, true) {
						return
					}
					continue
				}
			}
			if !w.send(ctx, backend.Change{Key: key}) {
				return
			}
		}
	}
}

// send reports c; false when the watch is over.
func (w *watch) send(ctx context.Context, c backend.Change) bool {
	select {
	case w.out <- c:
		return true
	case <-ctx.Done():
		return false
	case <-w.s.closed:
		return false
	}
}

// key returns the key of path, or false for the root, a path outside it,
// a reserved name (memfs's lock, journal, records, temp nodes) or a name
// that is no valid key.
func (w *watch) key(path string) (string, bool) {
	rel, err := filepath.Rel(w.s.dir, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", false
	}
	k := filepath.ToSlash(rel)
	if backend.ValidateKey(k) != nil || backend.IsReserved(k) {
		return "", false
	}
	return k, true
}

// hidden reports whether the directory at path is one Watch does not
// enter (see the package doc).
func (w *watch) hidden(path string) bool {
	return path != w.s.dir && strings.HasPrefix(filepath.Base(path), ".")
}

// addTree watches dir and every directory below it but hidden ones; with
// report, it also reports every node found below dir, directories
// included (a directory that appeared with content, made with mkdir -p or
// moved in: what it holds raised no event here, and an empty directory
// in it is implied by no key).
// It returns false when the watch is over.
func (w *watch) addTree(ctx context.Context, dir string, report bool) bool {
	over := false
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // vanished or unreadable: nothing to watch
		}
		if d.IsDir() {
			if w.hidden(p) {
				return filepath.SkipDir
			}
			// A directory replaced meanwhile is missed here; its parent's
			// watch reports the replacement.
			w.fw.Add(p)
			if !report || p == dir {
				return nil // dir itself: reported by the caller
			}
			if k, ok := w.key(p); ok && !w.send(ctx, backend.Change{Key: k}) {
				over = true
				return filepath.SkipAll
			}
			return nil
		}
		if !report || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		if k, ok := w.key(p); ok && !w.send(ctx, backend.Change{Key: k}) {
			over = true
			return filepath.SkipAll
		}
		return nil
	})
	return !over
}

// reportKept reports key on every running Watch: a delete that DeleteIf
// refused (another writer's version stays) changes nothing, so no event
// of the kernel's tells a reader that took the key for gone to look
// again. It never waits for a reader: each report is sent by a goroutine
// of its own, which Close waits for (a Watch in feeds is running, so the
// WaitGroup is not at zero when it is added to).
func (s *Store) reportKept(key string) {
	s.feedsMu.Lock()
	defer s.feedsMu.Unlock()
	for w := range s.feeds {
		s.watches.Add(1)
		go func() {
			defer s.watches.Done()
			select {
			case w.kept <- key:
			case <-w.done:
			}
		}()
	}
}
