package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/eventlog"
)

func sh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("bash", "-euc", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
}

func events(t *testing.T, args ...string) []eventlog.Event {
	t.Helper()
	out := mustRun(t, "", append([]string{"log", "--json", "--limit", "1000"}, args...)...)
	var evs []eventlog.Event
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var e eventlog.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("log --json line %q: %v", line, err)
		}
		evs = append(evs, e)
	}
	return evs
}

func summary(evs []eventlog.Event) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.Op + " " + e.Key)
		if e.OldKey != "" {
			b.WriteString(" from " + e.OldKey)
		}
		b.WriteString(" by " + e.Writer.Comm + "\n")
	}
	return b.String()
}

// Every kind of change made through a mount by real programs reaches the
// event log, in order, with the program as the writer; the log reads the
// same through the live mount and from the store; --verify passes, and
// catches an edited and a removed event in the stored chunks.
func TestEventLog(t *testing.T) {
	t.Parallel()
	for name, newStore := range backends(t) {
		t.Run(name, func(t *testing.T) {
			store := newStore()
			mnt := t.TempDir()
			p := startMount(t, store, mnt, nil, "--agent", "scribe")
			// Each line ends with a flush (sync FILE is fsync), so that
			// every change is its own flush and the order is exact.
			sh(t, mnt, `test -d memory # every mount makes it
				printf 'first\n' > memory/a.md; sync memory/a.md
				cp memory/a.md memory/b.md; sync memory/b.md
				mv memory/b.md memory/c.md; sync memory/c.md
				setfattr -n user.memfs.tags -v x memory/c.md; sync memory/c.md
				chmod 600 memory/a.md; sync memory/a.md
				rm memory/a.md; sync memory/c.md
				printf 'second\n' >> memory/c.md; sync memory/c.md`)
			want := "write memory/a.md by bash\n" +
				"write memory/b.md by cp\n" +
				"rename memory/c.md from memory/b.md by mv\n" +
				"attr memory/c.md by setfattr\n" +
				"attr memory/a.md by chmod\n" +
				"delete memory/a.md by rm\n" +
				"write memory/c.md by bash\n"
			live := events(t, "--mount", mnt)
			if got := summary(live); got != want {
				t.Errorf("events through the mount:\n%s\nwant:\n%s", got, want)
			}
			for i, e := range live {
				if e.Seq != uint64(i+1) || e.Writer.Agent != "scribe" || e.Session == "" || e.Session != live[0].Session {
					t.Errorf("event %d: seq %d, agent %q, session %q", i, e.Seq, e.Writer.Agent, e.Session)
				}
			}
			if got := summary(events(t, "--mount", mnt, "--op", "rename")); got != "rename memory/c.md from memory/b.md by mv\n" {
				t.Errorf("--op rename: %q", got)
			}
			if got := summary(events(t, "--mount", mnt, "--limit", "2")); got != "delete memory/a.md by rm\nwrite memory/c.md by bash\n" {
				t.Errorf("--limit 2 (the last page): %q", got)
			}
			if got := summary(events(t, "--mount", mnt, "--key", "memory/a", "--before", "6")); got != "write memory/a.md by bash\nattr memory/a.md by chmod\n" {
				t.Errorf("--key memory/a --before 6: %q", got)
			}
			b, err := os.ReadFile(filepath.Join(mnt, ".memfs", "events.jsonl"))
			if err != nil || strings.Count(string(b), "\n") != 7 {
				t.Errorf(".memfs/events.jsonl: %d lines, %v", strings.Count(string(b), "\n"), err)
			}
			p.stop(t)

			if got := summary(events(t, "--store", store)); got != want {
				t.Errorf("events from the store:\n%s\nwant:\n%s", got, want)
			}
			if out := mustRun(t, "", "log", "--verify", "--store", store); !strings.Contains(out, "7 events") {
				t.Errorf("log --verify: %q", out)
			}
		})
	}
}

// --verify on a dir store whose chunk was edited by hand, then had a line
// removed: both are reported, with the event where the chain breaks.
func TestEventLogVerifyCatchesTampering(t *testing.T) {
	store := t.TempDir()
	spec := "dir:" + store
	for i := range 5 {
		mustRun(t, strings.Repeat("x", i+1), "put", "--store", spec, "memory/n"+string(rune('a'+i))+".md")
	}
	chunks, _ := filepath.Glob(filepath.Join(store, ".memfs-sys", "events", "*"))
	if len(chunks) != 1 {
		t.Fatalf("chunks: %v", chunks)
	}
	orig, err := os.ReadFile(chunks[0])
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(chunks[0], []byte(strings.Replace(string(orig), "memory/nb.md", "memory/XX.md", 1)), 0o600)
	_, _, err = run(t, "", "log", "--verify", "--store", spec)
	if err == nil || !strings.Contains(err.Error(), "broken at event 2") {
		t.Errorf("verify after an edit: %v; want a failure at event 2", err)
	}
	lines := strings.SplitAfter(string(orig), "\n")
	os.WriteFile(chunks[0], []byte(strings.Join(append(lines[:2:2], lines[3:]...), "")), 0o600)
	_, _, err = run(t, "", "log", "--verify", "--store", spec)
	if err == nil || !strings.Contains(err.Error(), "broken at event 3") {
		t.Errorf("verify after removing event 3: %v; want a failure at event 3", err)
	}
	os.WriteFile(chunks[0], orig, 0o600)
	if out := mustRun(t, "", "log", "--verify", "--store", spec); !strings.Contains(out, "5 events") {
		t.Errorf("verify of the restored log: %q", out)
	}
}
