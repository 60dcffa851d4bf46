package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A reader denied now is denied the past, by every way memfs offers: uid
// 65534 on an --allow-other mount reads nothing of a 0600 file's history
// (its versions, its log, the listing), nor of the snapshots, checkpoints
// and past namespaces that hold it, nor stats any of it; also after the
// file is renamed, after it is removed, and for a file that was 0644 then
// and is 0600 now; not with grep -r over the mount; and not through memfs
// history, diff, snapshot list or checkpoint latest run as that user, with
// --mount or with --store on a store directory it may enter (the store's
// own directory 0755, as a user's umask makes it). Root asks every
// question first, so that whatever the kernel or memfs cached for root
// would be what the next caller gets.
func TestHistoryClosedToOtherUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatalf("this test needs root: it mounts with --allow-other and runs commands as uid %d", otherUID)
	}
	mnt := sharedDir(t)
	bin := sharedBinary(t)
	storeDir := filepath.Join(sharedDir(t), "store")
	store := "dir:" + storeDir
	startMount(t, store, mnt, nil, "--allow-other")
	p := func(rel string) string { return filepath.Join(mnt, rel) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	write := func(key, text string, mode os.FileMode) {
		t.Helper()
		must(os.WriteFile(p(key), []byte(text), mode))
		must(os.Chmod(p(key), mode))
		fsyncPath(t, p(key))
	}
	flush := func() { t.Helper(); fsyncPath(t, p("memory/public.md")) }
	// Every word but "wombat" is one uid 65534 may not learn.
	write("memory/public.md", "public: wombat\n", 0o644)
	write("memory/secret.md", "first: aardvark\n", 0o600)
	write("memory/secret.md", "second: bonobo\n", 0o600)
	write("memory/shut.md", "open then: okapi\n", 0o644)
	must(os.Chmod(p("memory/shut.md"), 0o600))
	write("memory/moved.md", "renamed: pangolin\n", 0o600)
	write("memory/gone.md", "removed: narwhal\n", 0o600)
	must(os.Mkdir(p("memory/private"), 0o700))
	must(os.Chmod(p("memory/private"), 0o700))
	write("memory/private/in.md", "behind a 0700 directory: quokka\n", 0o644)
	flush()
	must(os.Mkdir(p(".memfs/snapshots/s1"), 0o755))
	must(os.Mkdir(p(".memfs/checkpoints/run/1"), 0o755))
	must(os.Rename(p("memory/moved.md"), p("memory/moved-now.md")))
	must(os.Remove(p("memory/gone.md")))
	flush()
	words := []string{"aardvark", "bonobo", "okapi", "pangolin", "narwhal", "quokka"}

	// What root sees, and so what the kernel and memfs have cached.
	var paths []string
	seqs := map[string][]string{}
	for _, key := range []string{"memory/secret.md", "memory/shut.md", "memory/moved.md", "memory/moved-now.md", "memory/gone.md", "memory/private/in.md"} {
		dir := p(".memfs/history/" + key)
		// The versions are written after the flush's event append, and
		// its fsync may return in between (CI once listed none for
		// moved-now.md): wait for them, this test is about who may read.
		waitFor(t, "versions of "+key, 10*time.Second, func() bool {
			ents, _ := os.ReadDir(dir)
			return len(ents) > 1
		})
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatalf("root: ls %s: %v", dir, err)
		}
		paths = append(paths, dir)
		for _, e := range ents {
			paths = append(paths, filepath.Join(dir, e.Name()))
			if e.Name() != "log" {
				seqs[key] = append(seqs[key], strings.TrimLeft(e.Name(), "0"))
			}
		}
		if len(seqs[key]) == 0 {
			t.Fatalf("root: %s lists no version: %v", dir, ents)
		}
	}
	for _, snap := range []string{".memfs/snapshots/s1", ".memfs/checkpoints/run/1", ".memfs/snapshots/run/latest", ".memfs/at/" + seqs["memory/private/in.md"][0]} {
		for _, key := range []string{"memory/secret.md", "memory/shut.md", "memory/moved.md", "memory/gone.md", "memory/private/in.md", "memory/private"} {
			paths = append(paths, p(snap+"/"+key))
		}
	}
	paths = append(paths, p(".memfs/at/"+seqs["memory/shut.md"][0]+"/memory/shut.md"), p(".memfs/at/"+seqs["memory/secret.md"][0]+"/memory/secret.md"))
	shown := 0
	for _, path := range paths {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatalf("root: stat %s: %v", path, err)
		}
		if fi.IsDir() {
			_, err = os.ReadDir(path)
		} else {
			var b []byte
			b, err = os.ReadFile(path)
			for _, w := range words {
				if strings.Contains(string(b), w) {
					shown++
				}
			}
		}
		if err != nil {
			t.Fatalf("root: read %s: %v", path, err)
		}
	}
	if shown < len(words) {
		t.Fatalf("root read %d secret words in the past, want each of %v at least once", shown, words)
	}

	nobody := caller{name: "uid 65534", priv: []string{fmt.Sprintf("--reuid=%d", otherUID), fmt.Sprintf("--regid=%d", otherUID), "--clear-groups"},
		env: []string{"MEMFS_TEST_MAIN=1", "HOME=/"}}
	leaks := func(what, out string) {
		t.Helper()
		for _, w := range words {
			if strings.Contains(out, w) {
				t.Errorf("%s as uid 65534 shows %q:\n%s", what, w, out)
			}
		}
	}
	for _, path := range paths {
		for _, argv := range [][]string{{"cat", path}, {"stat", "-c", "%s %a %U %y", path}, {"ls", "-la", path}, {"getfattr", "-d", "-m", "-", path}} {
			out, err := nobody.run(t, mnt, argv...)
			if err == nil {
				t.Errorf("%s as uid 65534 succeeded: %q; want permission denied", strings.Join(argv, " "), out)
			}
			leaks(strings.Join(argv, " "), out)
		}
	}
	out, _ := nobody.run(t, mnt, "grep", "-r", "-a", ".", p(".memfs"), p("memory"))
	leaks("grep -r over the mount", out)
	if !strings.Contains(out, "wombat") {
		t.Errorf("grep -r as uid 65534 did not even find what it may read (wombat):\n%s", out)
	}
	for _, args := range [][]string{
		{"history", "--mount", mnt, "memory/secret.md"},
		{"history", "--mount", mnt, "memory/moved-now.md"},
		{"history", "--mount", mnt, "memory/gone.md"},
		{"history", "--store", store, "memory/secret.md"},
		{"history", "--store", store, "memory/gone.md"},
		{"diff", "--store", store, "memory/secret.md"},
		{"diff", "--store", store, "memory/shut.md", seqs["memory/shut.md"][0]},
		{"diff", "--mount", mnt, "memory/secret.md"},
		{"snapshot", "list", "--store", store},
		{"snapshot", "list", "--mount", mnt},
		{"checkpoint", "latest", "--store", store, "run"},
		{"cat", "--store", store, "memory/secret.md"},
		{"context", "--store", store, "--at", seqs["memory/secret.md"][0]},
	} {
		out, err := nobody.run(t, mnt, append([]string{bin}, args...)...)
		if err == nil && args[0] != "context" {
			t.Errorf("memfs %s as uid 65534 succeeded: %q; want a refusal", strings.Join(args, " "), out)
		}
		leaks("memfs "+strings.Join(args, " "), out)
	}
	// The store's history records are the mount owner's alone.
	out, _ = nobody.run(t, mnt, "grep", "-r", "-a", ".", storeDir)
	leaks("grep -r over the store directory", out)
}
