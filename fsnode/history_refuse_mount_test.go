package fsnode_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/fsnode"
	"github.com/memfs/memfs/history"
)

// A redacted version's file says why it cannot be read: it exists (stat,
// ls) and open answers EACCES, and log marks it "(redacted)". A
// conflict's version (no bytes) is in the log only: no file under
// history/KEY/, no node of .memfs/at/SEQ/.
func TestMountHistoryRedactedAndConflict(t *testing.T) {
	s := mountHistory(t, fsnode.Options{}, fsnode.MountOptions{})
	if _, err := s.h.Redact(t.Context(), "memory/a.md", s.seqs["a2"]); err != nil {
		t.Fatal(err)
	}
	dir := s.path("history/memory/a.md")
	p := filepath.Join(dir, ver(s.seqs["a2"]))
	if !slices.Contains(names(t, dir), ver(s.seqs["a2"])) {
		t.Errorf("ls %s = %v: the redacted version is not listed", dir, names(t, dir))
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("stat of the redacted version: %v; want it to exist", err)
	}
	if _, err := os.ReadFile(p); !errors.Is(err, syscall.EACCES) {
		t.Errorf("cat of the redacted version: %v; want EACCES", err)
	}
	var line string
	for l := range strings.SplitSeq(readFile(t, filepath.Join(dir, "log")), "\n") {
		if strings.HasPrefix(l, ver(s.seqs["a2"])+" ") {
			line = l
		}
	}
	if !strings.HasSuffix(line, " (redacted)") {
		t.Errorf("log line of the redacted version: %q; want it to end \" (redacted)\"", line)
	}

	c := s.h.record(history.OpConflict, backend.Entry{Key: "memory/c.md"})
	if got := names(t, s.path("history/memory/c.md")); !slices.Equal(got, []string{"log"}) {
		t.Errorf("ls history/memory/c.md = %v, want [log]", got)
	}
	at := s.path("at/" + itoa(c) + "/memory")
	if got := names(t, at); slices.Contains(got, "c.md") {
		t.Errorf("ls %s = %v: the conflict's version is a node", at, got)
	}
	if _, err := os.Stat(filepath.Join(at, "c.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat %s/c.md: %v; want ENOENT", at, err)
	}
}
