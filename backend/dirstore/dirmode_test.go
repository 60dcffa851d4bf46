package dirstore_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/memfs/memfs/backend"
)

// A directory a save makes appears in the store with its own mode, owner
// and attributes, never with a mode of the save's own on the way (issue
// 26): a follower of the store that stats it then (memfs's external-change
// watcher on another mount, or this one's) takes that mode for another
// writer's chmod, and the rule for a directory with unflushed changes (the
// most restrictive mode of both) keeps it. The follower here stats each
// directory as soon as the store reports it; the save then still writes
// a large file into every one, so a directory made 0700 and chmodded
// after its content is seen with 0700.
func TestSaveMakesDirectoriesWithTheirMode(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	ch, err := s.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	const n, want = 12, fs.FileMode(0o751)
	var (
		mu   sync.Mutex
		seen []string
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for c := range ch {
			if c.Key == "done" {
				return
			}
			if strings.Contains(c.Key, "/") {
				continue
			}
			fi, err := os.Lstat(filepath.Join(dir, c.Key))
			if err == nil && fi.IsDir() && fi.Mode().Perm() != want {
				mu.Lock()
				seen = append(seen, fmt.Sprintf("%s %v", c.Key, fi.Mode().Perm()))
				mu.Unlock()
			}
		}
	}()
	big := strings.Repeat("x", 1<<20)
	var es []backend.Entry
	for i := range n {
		d := node(fmt.Sprintf("d%02d", i), fs.ModeDir|want, "")
		es = append(es, d, entry(d.Key+"/big", big))
	}
	save(t, s, es...)
	save(t, s, entry("done", "x"))
	wg.Wait()
	for i := range n {
		fi, err := os.Lstat(filepath.Join(dir, fmt.Sprintf("d%02d", i)))
		if err != nil || fi.Mode().Perm() != want {
			t.Fatalf("d%02d after the save: %v %v, want %v", i, fi.Mode(), err, want)
		}
	}
	if len(seen) > 0 {
		t.Errorf("a follower of the store saw directories with a mode not theirs: %v", seen)
	}
}
