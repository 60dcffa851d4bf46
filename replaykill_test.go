package memfs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
)

// replayKillEnv names the store directory and the kill point of
// TestReplayKillChild ("DIR:events" or "DIR:saved").
const replayKillEnv = "MEMFS_TEST_REPLAY_KILL"

// A flush deletes memory/a.md, renames memory/b.md to memory/c.md and
// writes memory/d.md, and the process is killed with SIGKILL: at the
// event log's append (events: the store holds the changes, the log and
// history do not), or after the versions were written and before the
// journal's truncate (saved). At the next open, every change has its one
// event and its one version: the delete marker, the rename (c's history
// goes back to b's), the write; none is recorded twice.
func TestReplayAfterKillRecordsEachChangeOnce(t *testing.T) {
	for _, at := range []string{"events", "saved"} {
		t.Run(at, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestReplayKillChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), replayKillEnv+"="+dir+":"+at)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed by SIGKILL: %v\n%s", err, out)
			}
			st, err := badgerstore.Open(dir, badgerstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := memfs.Open(t.Context(), st, histOpts(filepath.Join(dir, badgerstore.JournalName)))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close(context.Background())
			p, err := f.Events().Query(t.Context(), eventlog.Query{KeyPrefix: "memory/", Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range p.Events {
				got = append(got, ev.Op+" "+ev.OldKey+">"+ev.Key)
			}
			want := []string{"write >memory/a.md", "write >memory/b.md", // the first flush
				"delete >memory/a.md", "rename memory/b.md>memory/c.md", "write >memory/d.md"}
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Errorf("events after the remount:\n%s\nwant\n%s", strings.Join(got, ", "), strings.Join(want, ", "))
			}
			h := history.New(st)
			for key, ops := range map[string]string{
				"memory/a.md": "write delete", "memory/c.md": "write rename", "memory/d.md": "write",
			} {
				vs, err := h.Versions(t.Context(), key)
				if err != nil {
					t.Fatal(err)
				}
				var seen []string
				for _, v := range vs {
					seen = append(seen, v.Op)
				}
				if s := strings.Join(seen, " "); s != ops {
					t.Errorf("history of %s: %q, want %q", key, s, ops)
				}
			}
		})
	}
}

// TestReplayKillChild is TestReplayAfterKillRecordsEachChangeOnce's child.
func TestReplayKillChild(t *testing.T) {
	env := os.Getenv(replayKillEnv)
	if env == "" {
		t.Skip("the child of TestReplayAfterKillRecordsEachChangeOnce")
	}
	dir, at, _ := strings.Cut(env, ":")
	inner, err := badgerstore.Open(dir, badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var armed atomic.Bool
	kill := func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	st := errorstore.Wrap(inner, func(op errorstore.Op, keys []string) error {
		for _, k := range keys {
			if at == "events" && armed.Load() && op != errorstore.OpLoadSys && op != errorstore.OpListSys && strings.HasPrefix(k, "events/") {
				kill()
			}
		}
		return nil
	})
	opts := histOpts(filepath.Join(dir, badgerstore.JournalName))
	opts.Session.Saved = func(context.Context, []backend.Entry, []string) {
		if at == "saved" && armed.Load() {
			kill()
		}
	}
	f, err := memfs.Open(t.Context(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := f.Session()
	for _, k := range []string{"a", "b"} {
		if err := c.Set("memory/"+k+".md", []byte(fmt.Sprintf("note %s\n", k))); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("memory/a.md"); err != nil {
		t.Fatal(err)
	}
	if err := c.Rename(t.Context(), "memory/b.md", "memory/c.md", 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("memory/d.md", []byte("note d\n")); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	f.Flush(t.Context())
	t.Fatal("the flush did not reach the kill point " + at)
}
