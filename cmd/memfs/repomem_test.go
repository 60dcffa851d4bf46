package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/repo"
)

// git runs git in dir with no configuration of the machine's or the
// user's.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// gitRepo is a working tree of one commit whose origin is remote.
func gitRepo(t *testing.T, remote string) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "remote", "add", "origin", remote)
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n\ntype Server struct{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "one")
	return dir
}

func writeText(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}

const convention = "---\nid: errors\ntitle: Wrap errors with errors.Join\ntags: [go, errors]\ncreatedAt: 2026-12-01T10:00:00Z\nupdatedAt: 2026-12-01T10:00:00Z\n---\nNever pkg/errors.\n"

// repoRig is a mount and a working tree whose memory a test works on.
type repoRig struct {
	t         *testing.T
	mnt, work string
	dir       string // the memory's directory in the mount
	id        repo.Identity
}

// memfs runs a command on the working tree's memory through the mount.
func (r *repoRig) memfs(args ...string) string {
	r.t.Helper()
	return mustRun(r.t, "", append(args, "--mount", r.mnt, "--dir", r.work)...)
}

// exit runs the memfs process (this test binary as memfs) on the working
// tree's memory and returns its exit status: what a shell sees.
func (r *repoRig) exit(args ...string) int {
	r.t.Helper()
	cmd := exec.Command(os.Args[0], append(args, "--mount", r.mnt, "--dir", r.work)...)
	cmd.Env = append(os.Environ(), "MEMFS_TEST_MAIN=1")
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	r.t.Fatal(err)
	return -1
}

// The memory of a repository through the kernel (issue 33): made by memfs
// repo init, written with shell tools (a broken record's close fails,
// the file kept), a two-step workflow whose summaries and notes are in
// the next pack, two repositories that never see each other's memory, a
// branch whose memory starts from its parent's, and the derived-context
// cache across an edit, a commit and a branch switch.
func TestRepoMemoryThroughTheMount(t *testing.T) {
	for name, store := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := &repoRig{t: t, mnt: t.TempDir(), work: gitRepo(t, "https://example.com/team/app.git")}
			startMount(t, store(), r.mnt, nil)
			r.dir = strings.TrimSpace(r.memfs("repo", "init"))
			var err error
			if r.id, err = repo.Identify(t.Context(), r.work); err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(r.mnt, "repos", r.id.Hash); r.dir != want {
				t.Fatalf("memfs repo init printed %q, want %s", r.dir, want)
			}
			if got := strings.TrimSpace(r.memfs("repo", "path")); got != r.dir {
				t.Errorf("memfs repo path: %q, want %q", got, r.dir)
			}
			r.records()
			r.steps()
			r.isolation(gitRepo(t, "https://example.com/team/other.git"))
			r.branch()
			r.cache()
		})
	}
}

// records: shell tools write records; a broken one fails its close and
// is kept as written, and memfs repo check says why.
func (r *repoRig) records() {
	t := r.t
	writeText(t, filepath.Join(r.dir, "conventions", "errors.md"), convention)
	writeText(t, filepath.Join(r.dir, "decisions", "etcd.md"),
		"---\nid: etcd\nsummary: etcd over Consul\nrationale: one namespace for many agents\ncreatedAt: 2026-12-01T10:00:00Z\n---\n")
	bad := filepath.Join(r.dir, "notes", "bad.md")
	broken := "---\nid: bad\nsource: gossip\ncreatedAt: yesterday\n---\nocelot\n"
	if err := os.WriteFile(bad, []byte(broken), 0o644); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("writing a broken note: %v, want EINVAL from its close", err)
	}
	if got, err := os.ReadFile(bad); err != nil || string(got) != broken {
		t.Errorf("the broken note reads %q, %v: want it kept as written", got, err)
	}
	// Every close of it fails, not only the first after the write: a
	// descriptor another process inherited (a fork before its exec
	// closes it) must not take the failure away from the writer's close.
	f, err := os.OpenFile(filepath.Join(r.dir, "notes", "bad2.md"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(broken); err != nil {
		t.Fatal(err)
	}
	dup, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Close(dup); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("closing a copy of the broken note's descriptor: %v, want EINVAL", err)
	}
	if err := f.Close(); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("the writer's close after a copy's: %v, want EINVAL", err)
	}
	os.Remove(filepath.Join(r.dir, "notes", "bad2.md"))
	out, _, err := run(t, "", "repo", "check", "--mount", r.mnt, "--dir", r.work)
	if err == nil || !strings.Contains(out, "notes/bad.md") || !strings.Contains(out, "createdAt") {
		t.Errorf("memfs repo check with a broken note: %v\n%s", err, out)
	}
	// Kept, but no note of the pack: its manifest says why.
	if pack := r.memfs("context", "--repo"); strings.Contains(pack, "ocelot") {
		t.Errorf("the pack holds a broken note:\n%s", pack)
	}
	if m := r.memfs("context", "--repo", "--manifest"); !strings.Contains(m, `"invalid"`) || !strings.Contains(m, "notes/bad.md") {
		t.Errorf("the manifest does not name the broken note as invalid:\n%s", m)
	}
	writeText(t, bad, "---\nid: bad\nsource: agent\ncreatedAt: 2026-12-02T10:00:00Z\n---\nthe flaky test is TestFoo\n")
	// An editor's save: a temporary name, then a rename to the record's
	// own. The close of the temporary file passes (its schema holds).
	tmp := filepath.Join(r.dir, "notes", "tmp5d49o3la.md")
	writeText(t, tmp, "---\nid: saved\nsource: agent\ncreatedAt: 2026-12-02T10:00:00Z\n---\nsaved by rename\n")
	if err := os.Rename(tmp, filepath.Join(r.dir, "notes", "saved.md")); err != nil {
		t.Fatal(err)
	}
	r.memfs("repo", "check")
}

// steps: step 1 and step 2 of a run; each step's summary and note are in
// the pack built after it.
func (r *repoRig) steps() {
	t := r.t
	r.memfs("repo", "summary", "--run", "r1", "--step", "s1", "step one mapped the server")
	pack := r.memfs("context", "--repo")
	for _, want := range []string{"Wrap errors with errors.Join", "etcd over Consul", "step one mapped the server", "the flaky test is TestFoo"} {
		if !strings.Contains(pack, want) {
			t.Errorf("pack after step 1 lacks %q:\n%s", want, pack)
		}
	}
	r.memfs("repo", "add", "note", "--source", "agent", "--id", "cache", "the cache is keyed by tree")
	r.memfs("repo", "summary", "--run", "r1", "--step", "s2", "step two fixed the cache")
	b, err := os.ReadFile(filepath.Join(r.mnt, ".memfs", "context", "repo:"+r.id.Hash))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"step one mapped the server", "step two fixed the cache", "the cache is keyed by tree"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("pack after step 2 lacks %q:\n%s", want, b)
		}
	}
}

// isolation: another repository's memory is never in this one's pack or
// search, nor this one's in its.
func (r *repoRig) isolation(other string) {
	t := r.t
	odir := strings.TrimSpace(mustRun(t, "", "repo", "init", "--mount", r.mnt, "--dir", other))
	writeText(t, filepath.Join(odir, "conventions", "tabs.md"),
		"---\nid: tabs\ntitle: Tabs for the server\ncreatedAt: 2026-12-01T10:00:00Z\nupdatedAt: 2026-12-01T10:00:00Z\n---\n")
	if pack := r.memfs("context", "--repo", "--query", "server"); strings.Contains(pack, "Tabs for the server") {
		t.Errorf("the pack of %s holds the other repository's convention:\n%s", r.id.Hash, pack)
	}
	if found := r.memfs("search", "--repo", "server"); strings.Contains(found, filepath.Base(odir)) {
		t.Errorf("search --repo of %s finds the other repository's memory:\n%s", r.id.Hash, found)
	}
	if opack := mustRun(t, "", "context", "--repo", "--mount", r.mnt, "--dir", other); strings.Contains(opack, "errors.Join") {
		t.Errorf("the other repository's pack holds this one's convention:\n%s", opack)
	}
}

// branch: a new branch starts from its parent's memory, whichever command
// meets it first; what it adds stays on it.
func (r *repoRig) branch() {
	t := r.t
	git(t, r.work, "checkout", "-q", "-b", "feature")
	// Before its first write, the branch reads its parent's memory.
	if pack := r.memfs("context", "--repo"); !strings.Contains(pack, "Wrap errors with errors.Join") {
		t.Errorf("a new branch's pack before its first write lacks its parent's convention:\n%s", pack)
	}
	if found := r.memfs("search", "--repo", "errors.Join"); !strings.Contains(found, r.id.Hash) {
		t.Errorf("a new branch's search before its first write does not find its parent's convention:\n%s", found)
	}
	r.memfs("repo", "add", "convention", "--id", "feature-only", "--title", "Only on feature")
	fdir := strings.TrimSpace(r.memfs("repo", "path"))
	if fdir == r.dir {
		t.Fatalf("branch feature has the memory of main: %s", fdir)
	}
	if got, err := os.ReadFile(filepath.Join(fdir, "conventions", "errors.md")); err != nil || string(got) != convention {
		t.Errorf("branch feature's copy of errors.md: %q, %v", got, err)
	}
	git(t, r.work, "checkout", "-q", "main")
	if pack := r.memfs("context", "--repo"); strings.Contains(pack, "Only on feature") {
		t.Errorf("main's pack holds feature's convention:\n%s", pack)
	}
}

// cache: the map is served while the tree is as it was, stale after an
// edit (exit 3, and .memfs/status counts it once a command saw the
// edit), built again after a commit; another branch has a cache of its
// own, and back on this one the map is fresh again.
func (r *repoRig) cache() {
	t := r.t
	first := r.memfs("repo", "map")
	if !strings.Contains(first, "main.go") || !strings.Contains(first, "Server") {
		t.Errorf("repository map:\n%s", first)
	}
	if again := r.memfs("repo", "map"); again != first {
		t.Errorf("second map differs:\n%s\nfirst:\n%s", again, first)
	}
	staleCount := func() string {
		st, _ := os.ReadFile(filepath.Join(r.mnt, ".memfs", "status"))
		_, n, _ := strings.Cut(string(st), "stale_indexes: ")
		n, _, _ = strings.Cut(n, "\n")
		return n
	}
	if code := r.exit("repo", "cache", "get", repo.MapName); code != 0 {
		t.Errorf("cache get of a fresh map: exit %d", code)
	}
	writeText(t, filepath.Join(r.work, "extra.go"), "package main\n\nfunc Extra() {}\n")
	if code := r.exit("repo", "cache", "get", repo.MapName); code != 3 {
		t.Errorf("cache get after an edit: exit %d, want 3 (stale)", code)
	}
	r.memfs("repo", "summary", "--run", "r1", "--step", "s3", "step three added Extra")
	if n := staleCount(); n != "1" {
		t.Errorf(".memfs/status after an edit says stale_indexes %q, want 1", n)
	}
	git(t, r.work, "add", "-A")
	git(t, r.work, "commit", "-q", "-m", "two")
	if !strings.Contains(r.memfs("repo", "map"), "Extra") {
		t.Errorf("the map after a commit lacks the new symbol")
	}
	if n := staleCount(); n != "" {
		t.Errorf(".memfs/status with the map fresh says stale_indexes %q", n)
	}
	git(t, r.work, "checkout", "-q", "-b", "other")
	if code := r.exit("repo", "cache", "get", repo.MapName); code != 1 {
		t.Errorf("cache get on a new branch: exit %d, want 1 (none)", code)
	}
	git(t, r.work, "checkout", "-q", "main")
	if code := r.exit("repo", "cache", "get", repo.MapName); code != 0 {
		t.Errorf("cache get back on main: exit %d, want 0 (fresh)", code)
	}
}

// memfs put of a repository's record that breaks its schema is refused
// with what is wrong, and writes nothing; a valid one is written.
func TestRepoPutChecksRecords(t *testing.T) {
	store := "dir:" + t.TempDir()
	key := "repos/0123456789abcdef/notes/flaky.md"
	_, _, err := run(t, "---\nid: flaky\nsource: gossip\ncreatedAt: 2026-12-01T10:00:00Z\n---\n", "put", "--store", store, key, "-")
	if err == nil || !strings.Contains(err.Error(), "source") {
		t.Fatalf("memfs put of a broken record: %v, want the schema's refusal", err)
	}
	if _, _, err := run(t, "", "cat", "--store", store, key); err == nil {
		t.Error("the refused record was written")
	}
	mustRun(t, "---\nid: flaky\nsource: agent\ncreatedAt: 2026-12-01T10:00:00Z\n---\n", "put", "--store", store, key, "-")
}

// A repository's memory shows no caller what it could not read directly
// (--allow-other): uid 65534's pack of a repository whose conventions are
// in a 0700 directory lacks them, and its .memfs/status counts no stale
// artifact of them; root's has both.
func TestRepoPackIsPerCaller(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root: it mounts with --allow-other and reads as uid %d", otherUID)
	}
	mnt := sharedDir(t)
	startMount(t, "dir:"+t.TempDir(), mnt, nil, "--allow-other")
	const hash = "0123456789abcdef"
	dir := filepath.Join(mnt, "repos", hash)
	for _, d := range []string{"conventions", "notes", "indexes"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeText(t, filepath.Join(dir, "repo.json"), `{"hash":"`+hash+`","path":"/src/x","state":"git:now"}`+"\n")
	writeText(t, filepath.Join(dir, "notes", "open.md"), "---\nid: open\nsource: agent\ncreatedAt: 2026-12-01T10:00:00Z\n---\nopen note: axolotl\n")
	writeText(t, filepath.Join(dir, "conventions", "shut.md"),
		"---\nid: shut\ntitle: kinkajou rule\ncreatedAt: 2026-12-01T10:00:00Z\nupdatedAt: 2026-12-01T10:00:00Z\n---\n")
	writeText(t, filepath.Join(dir, "indexes", "map.md"), "an old map\n")
	if err := unix.Setxattr(filepath.Join(dir, "indexes", "map.md"), "user.memfs.derived", []byte("git:before"), 0); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"conventions", "indexes"} {
		if err := os.Chmod(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	callers := privateTreeCallers()
	root, other := callers[0], callers[1]
	for _, c := range []struct {
		who         caller
		pack, stale string
	}{{root, "kinkajou rule", "stale_indexes: 1\n"}, {other, "axolotl", ""}} {
		pack, err := c.who.run(t, "/", "cat", filepath.Join(mnt, ".memfs", "context", "repo:"+hash))
		if err != nil || !strings.Contains(pack, c.pack) || !strings.Contains(pack, "axolotl") {
			t.Errorf("%s: the repository's pack (%v) lacks %q:\n%s", c.who.name, err, c.pack, pack)
		}
		if c.who.priv != nil && strings.Contains(pack, "kinkajou") {
			t.Errorf("%s reads a convention of a 0700 directory in the pack:\n%s", c.who.name, pack)
		}
		st, err := c.who.run(t, "/", "cat", filepath.Join(mnt, ".memfs", "status"))
		if err != nil || strings.Contains(st, "stale_indexes") != (c.stale != "") || !strings.Contains(st, c.stale) {
			t.Errorf("%s: .memfs/status (%v), want %q:\n%s", c.who.name, err, c.stale, st)
		}
	}
}

// No secret of a repository's memory reaches the store: a token in a
// convention's title and in a step summary, written by memfs repo on a
// dir store, is redacted in every file of the store, and the convention
// still reads as a record (its front matter stays YAML).
func TestRepoSecretNeverOnDisk(t *testing.T) {
	const token = "ghp_Q7wErT9yUi0pAs1dFg2hJk3lZx4cVb5nM6qW"
	dir := t.TempDir()
	store := "dir:" + dir
	work := gitRepo(t, "https://example.com/team/app.git")
	mustRun(t, "", "repo", "add", "convention", "--store", store, "--dir", work, "--id", "deploy", "--title", token+" is the deploy token")
	mustRun(t, "", "repo", "summary", "--store", store, "--dir", work, "--run", "r1", "--step", "s1", "used "+token)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), token) {
			t.Errorf("%s holds the token", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, _, err := run(t, "", "repo", "check", "--store", store, "--dir", work); err != nil {
		t.Errorf("the redacted convention is no record any more: %v\n%s", err, out)
	}
}
