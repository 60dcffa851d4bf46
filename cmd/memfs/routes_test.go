package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// The words of a working note and of a persistent one, looked for on disk.
const scratchMark, keptMark = "quasarzebra", "nebulaotter"

// routeToken is a secret the team left in a file of its read-only route.
const routeToken = "ghp_Zq8mR2xL7bW4nT0vK5yJ1cH6dF3sP9gA2eU7"

// routesRig is a mount of four routes: the default one on store, skills/
// on a read-only directory of a team's skills, scratch/ in memory,
// memory/archive/ an indexed directory of old notes.
type routesRig struct {
	store, team, archive, mnt, state, tmp string
	args                                  []string
	env                                   []string
}

func newRoutesRig(t *testing.T, store string) *routesRig {
	r := &routesRig{store: store, team: t.TempDir(), archive: t.TempDir(), mnt: t.TempDir(), state: t.TempDir(), tmp: t.TempDir()}
	os.MkdirAll(filepath.Join(r.team, "git"), 0o755)
	os.WriteFile(filepath.Join(r.team, "git", "SKILL.md"), []byte("---\nname: git\n---\nthe team's git skill\n"), 0o644)
	os.WriteFile(filepath.Join(r.team, "git", "token.md"), []byte("push with "+routeToken+"\n"), 0o644)
	os.WriteFile(filepath.Join(r.archive, "same.md"), []byte("the okapi grazes at dusk\n"), 0o644)
	r.args = []string{"--route", "skills/=dir:" + r.team + ":ro", "--route", "scratch/=mem:", "--route", "memory/archive/=dir:" + r.archive + "?tier=indexed"}
	r.env = []string{"XDG_STATE_HOME=" + r.state, "TMPDIR=" + r.tmp}
	return r
}

func (r *routesRig) start(t *testing.T) *memfsProc {
	return startMount(t, r.store, r.mnt, r.env, r.args...)
}

func (r *routesRig) path(key string) string { return filepath.Join(r.mnt, filepath.FromSlash(key)) }

// holds reports the files under the directories memfs may write (the
// store's, the state and temp directories) whose bytes or names hold
// marker.
func (r *routesRig) holds(t *testing.T, marker string) []string {
	t.Helper()
	var found []string
	for _, root := range []string{strings.TrimPrefix(strings.TrimPrefix(r.store, "badger:"), "dir:"), r.state, r.tmp} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if strings.Contains(d.Name(), marker) {
				found = append(found, p)
			}
			if d.Type().IsRegular() {
				if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(marker)) {
					found = append(found, p)
				}
			}
			return nil
		})
	}
	return found
}

// TestRoutesThroughTheMount: one mount, three routes (a team's read-only
// skills on a directory store, working memory in memory only, the rest on
// the default store, badger and dir): each key lands in its route's store;
// the read-only route refuses every change with EROFS and says which
// route in the log, and its owner's changes reach the mount and its
// watchers; a rename or link across routes is EXDEV, and mv moves by copy;
// a route's directory is EBUSY; working memory is searched, never reaches
// a disk, and is empty after a remount; kill -9 loses nothing closed on
// the persistent routes.
func TestRoutesThroughTheMount(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"badger", "dir"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			r := newRoutesRig(t, kind+":"+t.TempDir())
			p := r.start(t)

			r.readOnlyRoute(t, p)
			r.indexedRoute(t)
			r.acrossRoutes(t)
			// A remount: working memory is empty; the rest is there.
			p = r.workingMemory(t, p)
			if ents, err := os.ReadDir(r.path("scratch")); err != nil || len(ents) != 0 {
				t.Errorf("scratch/ after a remount: %v, %v", ents, err)
			}
			if readBack(r.path("memory/kept.md")) != "the "+keptMark+" note\n" {
				t.Errorf("memory/kept.md after a remount: %q", readBack(r.path("memory/kept.md")))
			}
			if !strings.Contains(readBack(r.path("skills/git/extra.md")), "more") {
				t.Errorf("skills/git/extra.md after a remount: %q", readBack(r.path("skills/git/extra.md")))
			}

			// kill -9: what was closed on a persistent route survives.
			os.WriteFile(r.path("memory/closed.md"), []byte("closed before the kill\n"), 0o644)
			os.WriteFile(r.path("scratch/gone.md"), []byte("working "+scratchMark+"\n"), 0o644)
			p.kill9(t)
			if got := r.holds(t, scratchMark); len(got) > 0 {
				t.Errorf("working memory reached the disk before a kill -9: %v", got)
			}
			r.start(t)
			if got := readBack(r.path("memory/closed.md")); got != "closed before the kill\n" {
				t.Errorf("memory/closed.md after kill -9: %q", got)
			}
			if _, err := os.Stat(r.path("scratch/gone.md")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("scratch/gone.md after kill -9: %v, want gone (working memory is journaled nowhere)", err)
			}
		})
	}
}

// readOnlyRoute: the team's directory reads as it is; every change to it
// is EROFS, named in the log, and reaches nothing; its owner's changes
// reach the mount and its watchers.
func (r *routesRig) readOnlyRoute(t *testing.T, p *memfsProc) {
	// Reads of the read-only route: the team's directory as it is.
	if b, err := os.ReadFile(r.path("skills/git/SKILL.md")); err != nil || !strings.Contains(string(b), "the team's git skill") {
		t.Fatalf("skills/git/SKILL.md = %q, %v", b, err)
	}
	// Every change to it: EROFS, nothing reaches the team's directory.
	for what, err := range map[string]error{
		"create":   os.WriteFile(r.path("skills/new.md"), []byte("x"), 0o644),
		"mkdir":    os.Mkdir(r.path("skills/dir"), 0o755),
		"remove":   os.Remove(r.path("skills/git/SKILL.md")),
		"chmod":    os.Chmod(r.path("skills/git/SKILL.md"), 0o600),
		"truncate": os.Truncate(r.path("skills/git/SKILL.md"), 0),
		"setxattr": syscall.Setxattr(r.path("skills/git/SKILL.md"), "user.memfs.tags", []byte("x"), 0),
		"symlink":  os.Symlink("x", r.path("skills/link")),
	} {
		if !errors.Is(err, syscall.EROFS) {
			t.Errorf("%s in the read-only route: %v, want EROFS", what, err)
		}
	}
	f, err := os.OpenFile(r.path("skills/git/SKILL.md"), os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = f.Write([]byte("appended"))
		f.Close()
	}
	if !errors.Is(err, syscall.EROFS) {
		t.Errorf("an append in the read-only route: %v, want EROFS", err)
	}
	waitFor(t, "the log naming the read-only route", 10*time.Second, func() bool {
		return strings.Contains(p.log.String(), "route skills/ is read-only")
	})
	if ents, _ := os.ReadDir(r.team); len(ents) != 1 {
		t.Errorf("the team's directory changed: %v", ents)
	}
	// A secret in the read-only route shows redacted; the owner's file
	// is left as it is, and their next version of it shows.
	if got := readBack(r.path("skills/git/token.md")); strings.Contains(got, routeToken) || !strings.Contains(got, "push with") {
		t.Errorf("skills/git/token.md in the mount: %q, want it redacted", got)
	}
	if b, _ := os.ReadFile(filepath.Join(r.team, "git", "token.md")); !strings.Contains(string(b), routeToken) {
		t.Errorf("the team's file was rewritten: %q", b)
	}
	os.WriteFile(filepath.Join(r.team, "git", "token.md"), []byte("push with the deploy key\n"), 0o644)
	waitFor(t, "the owner's fix of a file that held a secret", 10*time.Second, func() bool {
		return readBack(r.path("skills/git/token.md")) == "push with the deploy key\n"
	})
	// A new file of theirs with a secret in it shows, redacted.
	os.WriteFile(filepath.Join(r.team, "git", "new-token.md"), []byte("use "+routeToken+"\n"), 0o644)
	waitFor(t, "the owner's new file that holds a secret, redacted", 10*time.Second, func() bool {
		got := readBack(r.path("skills/git/new-token.md"))
		return strings.HasPrefix(got, "use ") && !strings.Contains(got, routeToken)
	})
	if b, _ := os.ReadFile(filepath.Join(r.team, "git", "new-token.md")); !strings.Contains(string(b), routeToken) {
		t.Errorf("the team's new file was rewritten: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(r.team, "git", "SKILL.md")); !strings.HasSuffix(string(b), "skill\n") {
		t.Errorf("the team's skill changed: %q", b)
	}

	// A pack names the route each of its items came from.
	var m struct{ Included []struct{ Key, Route string } }
	b, err := os.ReadFile(r.path(".memfs/context.manifest.json"))
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil || len(m.Included) == 0 || m.Included[0].Key != "skills/git/SKILL.md" || m.Included[0].Route != "skills/" {
		t.Errorf("the pack's manifest does not name the skill's route: %v\n%s", err, b)
	}

	// The owner's changes: in the mount, and told to its watchers.
	ev := watchDir(t, r.path("skills/git"))
	os.WriteFile(filepath.Join(r.team, "git", "SKILL.md"), []byte("---\nname: git\n---\nrevised by the team\n"), 0o644)
	waitFor(t, "the owner's change in the mount", 10*time.Second, func() bool {
		return strings.Contains(readBack(r.path("skills/git/SKILL.md")), "revised by the team")
	})
	waitFor(t, "the owner's change told to a watcher", 10*time.Second, func() bool { return ev.has("SKILL.md", fsnotify.Write) })
	os.WriteFile(filepath.Join(r.team, "git", "extra.md"), []byte("more\n"), 0o644)
	waitFor(t, "the owner's new file in the mount", 10*time.Second, func() bool { return readBack(r.path("skills/git/extra.md")) == "more\n" })
	waitFor(t, "the owner's new file told to a watcher", 10*time.Second, func() bool { return ev.has("extra.md", fsnotify.Create) })

}

// indexedRoute: an indexed route is searched and read, never written; of
// two hits of one score the indexed source's comes last, and --tier and
// --route keep one.
func (r *routesRig) indexedRoute(t *testing.T) {
	if err := os.WriteFile(r.path("memory/archive/new.md"), []byte("x"), 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("a create in the indexed route: %v, want EROFS", err)
	}
	os.WriteFile(r.path("memory/same.md"), []byte("the okapi grazes at dusk\n"), 0o644) // sorts after memory/archive/same.md
	fsyncPath(t, r.path("memory/same.md"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "memory/same.md memory/archive/same.md"},
		{[]string{"--tier", "indexed"}, "memory/archive/same.md"},
		{[]string{"--route", "memory/archive"}, "memory/archive/same.md"},
		{[]string{"--route", "default"}, "memory/same.md"},
	} {
		got := searchKeys(t, append(append([]string{"--mount", r.mnt, "--mode", "keyword"}, c.args...), "okapi")...)
		if strings.Join(got, " ") != c.want {
			t.Errorf("search %v okapi: %v, want %s", c.args, got, c.want)
		}
	}
	if b, err := os.ReadFile(r.path(".memfs/status")); err != nil || !strings.Contains(string(b), `route: "memory/archive/" indexed`) {
		t.Errorf(".memfs/status does not list the indexed route: %v\n%s", err, b)
	}
	os.Remove(r.path("memory/same.md"))
}

// acrossRoutes: rename(2) and link(2) between routes are EXDEV, mv moves
// by copy; a route's directory is EBUSY.
func (r *routesRig) acrossRoutes(t *testing.T) {
	// Across routes: EXDEV for rename(2) and link(2); mv copies.
	os.WriteFile(r.path("memory/a.md"), []byte("a note\n"), 0o644)
	if err := os.Rename(r.path("memory/a.md"), r.path("scratch/a.md")); !errors.Is(err, syscall.EXDEV) {
		t.Errorf("rename across routes: %v, want EXDEV", err)
	}
	if err := os.Link(r.path("memory/a.md"), r.path("scratch/l.md")); !errors.Is(err, syscall.EXDEV) {
		t.Errorf("link across routes: %v, want EXDEV", err)
	}
	if out, err := exec.Command("mv", r.path("memory/a.md"), r.path("scratch/a.md")).CombinedOutput(); err != nil {
		t.Errorf("mv across routes: %v\n%s", err, out)
	}
	if readBack(r.path("scratch/a.md")) != "a note\n" || readBack(r.path("memory/a.md")) != "<open "+r.path("memory/a.md")+": no such file or directory>" {
		t.Errorf("after mv: scratch/a.md %q, memory/a.md %q", readBack(r.path("scratch/a.md")), readBack(r.path("memory/a.md")))
	}
	os.Mkdir(r.path("notes"), 0o755)
	if err := os.Rename(r.path("notes"), r.path("scratch/notes")); !errors.Is(err, syscall.EXDEV) {
		t.Errorf("rename of a directory across routes: %v, want EXDEV", err)
	}
	if err := os.Rename(r.path("memory"), r.path("memory2")); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("rename of a directory that holds a route's: %v, want EBUSY", err)
	}
	// A route's directory is a mount point.
	if err := syscall.Rmdir(r.path("scratch")); !errors.Is(err, syscall.EBUSY) && !errors.Is(err, syscall.ENOTEMPTY) {
		t.Errorf("rmdir of a route's directory: %v, want EBUSY", err)
	}
	if err := os.Rename(r.path("skills"), r.path("skills2")); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("rename of a route's directory: %v, want EBUSY", err)
	}

}

// workingMemory: a working note is searched like the others, and neither
// its bytes nor its name reach a disk; it returns the next mount.
func (r *routesRig) workingMemory(t *testing.T, p *memfsProc) *memfsProc {
	// Working memory: searched like the rest, on no disk.
	os.WriteFile(r.path("scratch/plan.md"), []byte("the "+scratchMark+" plan\n"), 0o644)
	os.WriteFile(r.path("memory/kept.md"), []byte("the "+keptMark+" note\n"), 0o644)
	fsyncPath(t, r.path("memory/kept.md"))
	fsyncPath(t, r.path("scratch/plan.md"))
	if got := searchKeys(t, "--mount", r.mnt, "--mode", "keyword", scratchMark); len(got) != 1 || got[0] != "scratch/plan.md" {
		t.Errorf("search for a working note: %v", got)
	}
	// Events name their route.
	if out := mustRun(t, "", "log", "--mount", r.mnt, "--json"); !strings.Contains(out, `"key":"memory/kept.md"`) ||
		!strings.Contains(out, `"route":"default"`) {
		t.Errorf("the event log does not name memory/kept.md's route:\n%s", out)
	}
	if err := p.terminate(t); err != nil {
		t.Fatalf("unmount: %v\n%s", err, p.log)
	}
	mustRun(t, "", "log", "--verify", "--store", r.store) // one chain, every route's events in it
	if got := r.holds(t, keptMark); len(got) == 0 {
		t.Errorf("the control failed: a persistent note's text is in no file of the store")
	}
	if got := r.holds(t, scratchMark); len(got) > 0 {
		t.Errorf("working memory reached the disk: %v", got)
	}
	if got := r.holds(t, "plan.md"); len(got) > 0 {
		t.Errorf("a working note's name reached the disk: %v", got)
	}

	return r.start(t)
}

// TestExpiryThroughTheMount: a note with a 2 s time to live is gone
// within 3 s of its last write, an inotify watcher is told, and the event
// log says it expired; a write renews it; a route's default time to live
// removes its files that set none; a malformed time to live is refused.
func TestExpiryThroughTheMount(t *testing.T) {
	t.Parallel()
	mnt := t.TempDir()
	startMount(t, "dir:"+t.TempDir(), mnt, nil, "--route", "scratch/=mem:?ttl=2s")
	at := func(k string) string { return filepath.Join(mnt, filepath.FromSlash(k)) }

	if err := syscall.Setxattr(at("memory"), "user.memfs.ttl", []byte("soon"), 0); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a malformed ttl: %v, want EINVAL", err)
	}
	os.WriteFile(at("memory/n.md"), []byte("short-lived\n"), 0o644)
	os.WriteFile(at("memory/renewed.md"), []byte("one\n"), 0o644)
	for _, k := range []string{"memory/n.md", "memory/renewed.md"} {
		if err := syscall.Setxattr(at(k), "user.memfs.ttl", []byte("2s"), 0); err != nil {
			t.Fatal(err)
		}
		fsyncPath(t, at(k))
	}
	written := time.Now()
	ev := watchDir(t, at("memory"))
	os.WriteFile(at("scratch/s.md"), []byte("working\n"), 0o644)
	time.Sleep(time.Second) // the renewal must come after some of the time to live has passed
	os.WriteFile(at("memory/renewed.md"), []byte("two\n"), 0o644)
	renewed := time.Now()
	waitFor(t, "memory/n.md expired", 5*time.Second, func() bool {
		_, err := os.Stat(at("memory/n.md"))
		return errors.Is(err, fs.ErrNotExist)
	})
	if d := time.Since(written); d > 3*time.Second {
		t.Errorf("memory/n.md went %v after its write, want within 3s", d)
	}
	waitFor(t, "a watcher told of the expiry", 5*time.Second, func() bool { return ev.has("n.md", fsnotify.Remove) })
	waitFor(t, "scratch/s.md expired by its route's ttl", 5*time.Second, func() bool {
		_, err := os.Stat(at("scratch/s.md"))
		return errors.Is(err, fs.ErrNotExist)
	})
	if _, err := os.Stat(at("memory/renewed.md")); err != nil && time.Since(renewed) < 2*time.Second {
		t.Errorf("memory/renewed.md went before its renewed time to live: %v", err)
	}
	waitFor(t, "the event log's expire event", 10*time.Second, func() bool {
		out := mustRun(t, "", "log", "--mount", mnt, "--json")
		return strings.Contains(out, `"op":"delete","key":"memory/n.md"`) && strings.Contains(out, `"reason":"expire"`)
	})
	// A file whose modification time is old, moved into the route (mv
	// copies it, keeping that time), lives its time to live from the move.
	os.WriteFile(at("memory/old.md"), []byte("old\n"), 0o644)
	old := time.Now().Add(-24 * time.Hour)
	os.Chtimes(at("memory/old.md"), old, old)
	if out, err := exec.Command("mv", at("memory/old.md"), at("scratch/old.md")).CombinedOutput(); err != nil {
		t.Fatalf("mv: %v\n%s", err, out)
	}
	if _, err := os.Stat(at("scratch/old.md")); err != nil {
		t.Errorf("a file moved into a route with a time to live went at once: %v", err)
	}
	waitFor(t, "memory/renewed.md expired in its turn", 5*time.Second, func() bool {
		_, err := os.Stat(at("memory/renewed.md"))
		return errors.Is(err, fs.ErrNotExist)
	})
}

// TestQuotaThroughTheMount: a prefix's bytes, files and largest file are
// bounded: a write that would pass one fails with EDQUOT (EFBIG for the
// file size) exactly at the boundary, the log names the largest files;
// the usage .memfs/status.json shows is exact after writes, removals and
// renames (a rename between quotas is EXDEV, and mv copies); df shows
// the quota of everything.
func TestQuotaThroughTheMount(t *testing.T) {
	t.Parallel()
	mnt := t.TempDir()
	p := startMount(t, "dir:"+t.TempDir(), mnt, nil, "--quota", "memory/=10KiB,3files,6KiB", "--quota", "/=1MiB")
	at := func(k string) string { return filepath.Join(mnt, filepath.FromSlash(k)) }
	write := func(k string, n int) error { return os.WriteFile(at(k), bytes.Repeat([]byte("q"), n), 0o644) }

	if err := write("memory/a.md", 5000); err != nil {
		t.Fatal(err)
	}
	if err := write("memory/b.md", 10240-5000); err != nil {
		t.Fatalf("a write to exactly the quota: %v", err)
	}
	f, err := os.OpenFile(at("memory/b.md"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, syscall.EDQUOT) {
		t.Errorf("one byte past the quota: %v, want EDQUOT", err)
	}
	f.Close()
	waitFor(t, "the log naming the largest files", 10*time.Second, func() bool {
		return strings.Contains(p.log.String(), "largest: memory/b.md (5.1 KiB), memory/a.md (4.9 KiB)")
	})
	if err := write("memory/c.md", 0); err != nil {
		t.Fatalf("the third file: %v", err)
	}
	if err := write("memory/d.md", 0); !errors.Is(err, syscall.EDQUOT) {
		t.Errorf("a fourth file: %v, want EDQUOT", err)
	}
	if err := os.Truncate(at("memory/c.md"), 6*1024+1); !errors.Is(err, syscall.EFBIG) {
		t.Errorf("a file past the largest allowed: %v, want EFBIG", err)
	}
	if err := write("notes.md", 4000); err != nil {
		t.Errorf("outside the prefix: %v", err)
	}

	// An O_TMPFILE file's first name counts.
	fd, err := unix.Open(at("memory"), unix.O_TMPFILE|unix.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	unix.Write(fd, bytes.Repeat([]byte("t"), 3000))
	if err := unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), unix.AT_FDCWD, at("memory/tmp.md"), unix.AT_SYMLINK_FOLLOW); !errors.Is(err, syscall.EDQUOT) {
		t.Errorf("a name for an O_TMPFILE file past the quota: %v, want EDQUOT", err)
	}
	unix.Close(fd)
	// Moving a directory onto a quota's directory: EXDEV, mv copies.
	if err := os.Rename(at("memory"), at("memory.old")); !errors.Is(err, syscall.EXDEV) {
		t.Errorf("a rename of a quota's directory: %v, want EXDEV", err)
	}

	// Removals and renames: the usage stays exact.
	os.Remove(at("memory/b.md"))
	os.Mkdir(at("memory/x"), 0o755)
	if err := os.Rename(at("memory/a.md"), at("memory/x/a.md")); err != nil {
		t.Errorf("a rename under one quota: %v", err)
	}
	if err := os.Rename(at("memory/c.md"), at("c.md")); !errors.Is(err, syscall.EXDEV) {
		t.Errorf("a rename out of a quota's prefix: %v, want EXDEV", err)
	}
	if out, err := exec.Command("mv", at("memory/c.md"), at("c.md")).CombinedOutput(); err != nil {
		t.Errorf("mv out of a quota's prefix: %v\n%s", err, out)
	}
	if err := os.Rename(at("memory/x"), at("memory/y")); err != nil {
		t.Errorf("a directory's rename under one quota: %v", err)
	}
	if err := write("memory/e.md", 4000); err != nil {
		t.Errorf("a write the removals made room for: %v", err)
	}
	// An exchange leaves both names; a hard link is two names of one size.
	if err := unix.Renameat2(unix.AT_FDCWD, at("memory/e.md"), unix.AT_FDCWD, at("memory/y/a.md"), unix.RENAME_EXCHANGE); err != nil {
		t.Errorf("an exchange: %v", err)
	}
	write("notes2.md", 10)
	if err := os.Link(at("notes2.md"), at("notes3.md")); err != nil {
		t.Fatal(err)
	}
	f, err = os.OpenFile(at("notes2.md"), os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		f.Write(bytes.Repeat([]byte("h"), 5000))
		f.Close()
	}
	quotaUsageIsAWalk(t, mnt)
	var fsst syscall.Statfs_t
	if err := syscall.Statfs(mnt, &fsst); err != nil || fsst.Blocks*uint64(fsst.Bsize) > 1<<20+4096 || fsst.Blocks*uint64(fsst.Bsize) < 1<<20-4096 {
		t.Errorf("df: %d blocks of %d (%v), want the 1 MiB quota", fsst.Blocks, fsst.Bsize, err)
	}
}

// quotaUsageIsAWalk fails t unless each quota's usage in the mount's
// .memfs/status.json is what a walk of its prefix in the mount counts.
func quotaUsageIsAWalk(t *testing.T, mnt string) {
	t.Helper()
	at := func(k string) string { return filepath.Join(mnt, filepath.FromSlash(k)) }
	var st struct {
		Quotas []struct {
			Prefix       string `json:"prefix"`
			Bytes, Files int64
		} `json:"quotas"`
	}
	b, err := os.ReadFile(at(".memfs/status.json"))
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil || len(st.Quotas) != 2 {
		t.Fatalf("status.json: %v %s", err, b)
	}
	count := func(dir string) (n, files int64) {
		filepath.WalkDir(at(dir), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				fi, _ := d.Info()
				n, files = n+fi.Size(), files+1
			}
			return nil
		})
		return n, files
	}
	for _, q := range st.Quotas {
		n, files := count(q.Prefix)
		if q.Bytes != n || q.Files != files {
			t.Errorf("quota %q: status says %d bytes in %d files, the mount holds %d in %d", q.Prefix, q.Bytes, q.Files, n, files)
		}
	}
}

// TestRoutesFromTheConfigFile: memfs.toml ($MEMFS_CONFIG here) gives a
// mount its routes and quotas, those of its mountpoint's table too, with
// no flag; .memfs/status lists them.
func TestRoutesFromTheConfigFile(t *testing.T) {
	t.Parallel()
	mnt, team := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(team, "a.md"), []byte("team\n"), 0o644)
	cfg := filepath.Join(t.TempDir(), "memfs.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[quotas]\n\"memory/\" = \"1KiB\"\n\n[mount.%q.routes]\n\"skills/\" = \"dir:%s:ro\"\n", mnt, team)), 0o644)
	startMount(t, "dir:"+t.TempDir(), mnt, []string{"MEMFS_CONFIG=" + cfg})
	if got := readBack(filepath.Join(mnt, "skills", "a.md")); got != "team\n" {
		t.Errorf("skills/a.md = %q", got)
	}
	if err := os.WriteFile(filepath.Join(mnt, "skills", "b.md"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("a write in the config's read-only route: %v", err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "memory", "big.md"), make([]byte, 2048), 0o644); !errors.Is(err, syscall.EDQUOT) {
		t.Errorf("past the config's quota: %v", err)
	}
	st := readBack(filepath.Join(mnt, ".memfs", "status"))
	if !strings.Contains(st, `route: "skills/" persistent read-only dir:`+team) || !strings.Contains(st, `quota: "memory/"`) {
		t.Errorf(".memfs/status:\n%s", st)
	}
}

// TestRouteInsideTheMountpointRefused: a route's store the mountpoint
// overlaps would have the kernel serve memfs from itself: the mount is
// refused, naming both.
func TestRouteInsideTheMountpointRefused(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	mnt := filepath.Join(top, "mnt")
	os.Mkdir(mnt, 0o755)
	cmd := exec.Command(os.Args[0], "mount", "--store", "dir:"+t.TempDir(), "--route", "skills/=dir:"+top+":ro", mnt)
	cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "a route's store: mountpoint "+mnt+" and store "+top+" overlap") {
		t.Errorf("mount over a route's store: %v\n%s", err, out)
	}
	if isMounted(mnt) {
		syscall.Unmount(mnt, syscall.MNT_DETACH)
		t.Error("it mounted")
	}
}

// TestSharedRouteMerges: a mount whose default store is local and one of
// whose routes is shared (etcd) runs under the conflict policy it is
// given: both mounts' edits of one note, made before either flush
// reached the other, are merged, with no conflict copy.
func TestSharedRouteMerges(t *testing.T) {
	t.Parallel()
	shared, env := sharedEtcdStore(t), sharedEnv(t)
	root := t.TempDir()
	a := startMount(t, "badger:"+t.TempDir(), filepath.Join(root, "a"), env, "--agent", "alice", "--route", "team/="+shared, "--on-conflict", "merge")
	b := startMount(t, shared, filepath.Join(root, "b"), env, "--agent", "bob", "--on-conflict", "merge")
	inA, inB := filepath.Join(a.mnt, "team", "plan.md"), filepath.Join(b.mnt, "plan.md")
	base := "# Plan\n\n## Goals\n\nship it\n\n## Risks\n\nnone known\n\n## Notes\n\nnothing yet\n"
	if err := writeSync(inA, []byte(base)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B reads the note", 10*time.Second, func() bool { return readBack(inB) == base })
	fromA := strings.Replace(base, "ship it\n", "ship it by Friday\n", 1)
	fromB := strings.Replace(base, "nothing yet\n", "bob was here\n", 1)
	os.WriteFile(inA, []byte(fromA), 0o644)
	os.WriteFile(inB, []byte(fromB), 0o644)
	fsyncPath(t, inA)
	fsyncPath(t, inB)
	want := strings.Replace(fromA, "nothing yet\n", "bob was here\n", 1)
	for _, p := range []string{inA, inB} {
		waitFor(t, p+" shows the merged note", 10*time.Second, func() bool { return readBack(p) == want })
	}
	for _, dir := range []string{filepath.Join(a.mnt, "team"), b.mnt} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "plan.conflict-") {
				t.Errorf("a clean merge left a conflict copy: %s in %s", e.Name(), dir)
			}
		}
	}
}
