package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A token written into a directory store while no memfs ran: memfs
// context prints it redacted and leaves the store as it is (a read
// command); a mount rewrites the file redacted, with an event, and its log
// names the key and the rule, never the token.
func TestRawSecretInADirStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := "dir:" + dir
	p := filepath.Join(dir, "memory", "deploy.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	raw := "# deploy\nthe token is " + fakeSecrets[0] + "\n"
	if err := os.WriteFile(p, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, "", "context", "--store", store)
	if err != nil || strings.Contains(out+errOut, fakeSecrets[0]) || !strings.Contains(out, "[REDACTED:github-token]") {
		t.Errorf("memfs context: %v; want the marker, never the token:\n%s\n%s", err, out, errOut)
	}
	if b, _ := os.ReadFile(p); string(b) != raw {
		t.Errorf("memfs context changed the store's file: %q", b)
	}

	mnt := t.TempDir()
	proc := startMount(t, store, mnt, nil)
	b, err := os.ReadFile(p)
	if err != nil || strings.Contains(string(b), fakeSecrets[0]) || !strings.Contains(string(b), "[REDACTED:github-token]") {
		t.Errorf("the store's file once mounted: %q, %v; want it redacted", b, err)
	}
	if got, err := os.ReadFile(filepath.Join(mnt, "memory", "deploy.md")); err != nil || string(got) != string(b) {
		t.Errorf("the mount shows %q, %v; want the store's redacted file %q", got, err, b)
	}
	events, err := os.ReadFile(filepath.Join(mnt, ".memfs", "events.jsonl"))
	if err != nil || !strings.Contains(string(events), `"agent":"memfs:redact-on-ingest"`) {
		t.Errorf("no event of the rewrite: %v\n%s", err, events)
	}
	proc.stop(t)
	if log := proc.log.String(); strings.Contains(log, fakeSecrets[0]) || !strings.Contains(log, "memory/deploy.md") {
		t.Errorf("the mount's log holds the token, or does not name the file:\n%s", log)
	}
}

// memfs reindex rewrites, redacted, a store file another program left a
// token in; on a store that does not exist it makes none.
func TestReindexRewritesRawSecrets(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "agents", "deploy.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("the token is "+fakeSecrets[0]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, "", "reindex", "--store", "dir:"+dir)
	if err != nil || strings.Contains(out+errOut, fakeSecrets[0]) {
		t.Fatalf("memfs reindex: %v\n%s\n%s", err, out, errOut)
	}
	if b, err := os.ReadFile(p); err != nil || strings.Contains(string(b), fakeSecrets[0]) || !strings.Contains(string(b), "[REDACTED:github-token]") {
		t.Errorf("the store's file after reindex: %q, %v; want it redacted", b, err)
	}
	missing := filepath.Join(t.TempDir(), "none")
	if _, _, err := run(t, "", "reindex", "--store", "dir:"+missing); err == nil {
		t.Error("reindex of a store that does not exist succeeded")
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("reindex made a store")
	}
}

// A file outside memory/ is loaded at its first open: the mount shows it
// redacted, whole, even where the marker is longer than the secret (an
// AWS key id: 20 bytes, its marker 28), and the next flush rewrites the
// store's file.
func TestRawSecretLoadedAtFirstOpen(t *testing.T) {
	t.Parallel()
	dir, mnt := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "agents", "aws.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("key "+fakeSecrets[2]+" and the rest of the line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startMount(t, "dir:"+dir, mnt, nil)
	want := "key [REDACTED:aws-access-key-id] and the rest of the line\n"
	if got, err := os.ReadFile(filepath.Join(mnt, "agents", "aws.md")); err != nil || string(got) != want {
		t.Errorf("the mount shows %q, %v; want %q", got, err, want)
	}
	f, err := os.Open(filepath.Join(mnt, "agents", "aws.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got, err := os.ReadFile(p); err != nil || string(got) != want {
		t.Errorf("the store's file after a flush: %q, %v; want %q", got, err, want)
	}
}

// A file whose name holds a token, made in a directory store by another
// program while it is mounted, then renamed and removed there, and the
// mounts after: no record memfs writes (event log, pack archive and its
// gaps, search index, journal) holds the token, nor any log line.
func TestSecretNameInADirStoreReachesNoRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := "dir:" + dir
	store := func(k string) string { return filepath.Join(dir, filepath.FromSlash(k)) }
	name := "memory/" + fakeSecrets[0] + ".md"
	var logs strings.Builder
	mount := func(during func(mnt string)) {
		t.Helper()
		mnt := t.TempDir()
		p := startMount(t, spec, mnt, nil)
		during(mnt)
		// A pack as of a seq waits for the archive's check at mount
		// (which an unmount would drop unfinished); its answer does
		// not matter.
		os.ReadFile(filepath.Join(mnt, ".memfs", "context", "at:1"))
		if err := p.terminate(t); err != nil {
			t.Fatalf("memfs exit: %v\n%s", err, p.log)
		}
		logs.WriteString(p.log.String())
	}
	if err := os.MkdirAll(store("memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	mount(func(mnt string) {
		if err := os.WriteFile(store(name), []byte("# a note\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// A file made after it: once the mount shows that one, the
		// watcher has been through the first.
		if err := os.WriteFile(store("memory/after.md"), []byte("# after\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "memory/after.md in the mount", 10*time.Second, func() bool {
			_, err := os.Stat(filepath.Join(mnt, "memory", "after.md"))
			return err == nil
		})
	})
	// Each mount writes a note, so that the log's head moves on (a gap
	// record is named by the head).
	n := 0
	write := func(mnt string) {
		t.Helper()
		n++
		f, err := os.Create(filepath.Join(mnt, "memory", fmt.Sprintf("n%d.md", n)))
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("# a later note\n")
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	mount(write) // a mount that finds it there
	if err := os.Rename(store(name), store("memory/renamed.md")); err != nil {
		t.Fatal(err)
	}
	mount(write)
	if err := os.Remove(store("memory/renamed.md")); err != nil {
		t.Fatal(err)
	}
	mount(write)
	mustRun(t, "", "search", "--store", spec, "note")
	var leaks []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(p, fakeSecrets[0]) {
			leaks = append(leaks, p)
		} else if d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), fakeSecrets[0]) {
				leaks = append(leaks, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(leaks) > 0 {
		t.Errorf("the token is in: %v", leaks)
	}
	if strings.Contains(logs.String(), fakeSecrets[0]) {
		t.Errorf("a mount's log holds the token:\n%s", logs.String())
	}
}
