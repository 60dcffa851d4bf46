package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/memfs/memfs/session"
)

// These tests attack the promise that a secret another program writes
// into a directory store never stays on disk: not in the store file (it
// is rewritten redacted at once), not in the search index shards (whichever
// path indexed it: the live watch, the repair at mount, reindex, the search
// command), not in the event log.

// ingestTokens are fake secrets of two rules: a GitHub token ("ghp_" and 36
// alphanumerics) and an AWS access key id ("AKIA" and 16 of A-Z2-7).
var ingestTokens = []string{
	"ghp_Q7wErT9yUi0pAs1dFg2hJk3lZx4cVb5nM6qW",
	"AKIAZK4QW7TR2MXV6PLN",
}

// ingestNote is a note holding both tokens and a word to search it by.
func ingestNote(word string) string {
	return "Deploy notes for the " + word + " cluster.\n" +
		"github token " + ingestTokens[0] + " for the CI\n" +
		"aws key id " + ingestTokens[1] + " until rotation\n"
}

// ingestLeaks returns every place under root (file contents, names,
// extended attribute names and values) that holds a 12-byte piece of one
// of ingestTokens, in any case: the index keeps its terms lower-cased.
func ingestLeaks(t *testing.T, root string) []string {
	t.Helper()
	const window = 12
	pieces := map[string]bool{}
	for _, tok := range ingestTokens {
		for i := 0; i+window <= len(tok); i++ {
			pieces[strings.ToLower(tok[i:i+window])] = true
		}
	}
	holds := func(b []byte) bool {
		b = bytes.ToLower(b)
		for i := 0; i+window <= len(b); i++ {
			if pieces[string(b[i:i+window])] {
				return true
			}
		}
		return false
	}
	var leaks []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if holds([]byte(d.Name())) {
			leaks = append(leaks, "the name of "+path)
		}
		buf := make([]byte, 64<<10)
		if n, err := unix.Llistxattr(path, buf); err == nil && n > 0 {
			for name := range strings.SplitSeq(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
				v := make([]byte, 64<<10)
				m, err := unix.Lgetxattr(path, name, v)
				if holds([]byte(name)) || (err == nil && holds(v[:m])) {
					leaks = append(leaks, "xattr "+name+" of "+path)
				}
			}
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if holds(b) {
			leaks = append(leaks, path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("scan %s: %v", root, err)
	}
	return leaks
}

// checkRedacted fails unless text holds no piece of a token and a marker
// of each rule.
func checkRedacted(t *testing.T, what, text string) {
	t.Helper()
	for _, tok := range ingestTokens {
		if strings.Contains(text, tok[:12]) {
			t.Errorf("%s holds the token %.12s...: %q", what, tok, text)
		}
	}
	for _, marker := range []string{"[REDACTED:github-token]", "[REDACTED:aws-access-key-id]"} {
		if !strings.Contains(text, marker) {
			t.Errorf("%s lacks %s: %q", what, marker, text)
		}
	}
}

// TestIngestRedactsExternalWrites: another process writes a note with two
// secrets into the directory store of a live mount. The store file is
// rewritten with markers at once, the mount shows the markers, a search
// finds the note with a clean snippet, the event log records memfs's
// rewrite (and still verifies), and after the unmount no file, name or
// attribute under the store directory (index shards and event chunks
// included) holds a piece of either secret.
func TestIngestRedactsExternalWrites(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	if err := os.MkdirAll(filepath.Join(store, "memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	mnt := t.TempDir()
	p := startMount(t, "dir:"+store, mnt, nil)
	// Open the index first, so that the note reaches it through the live
	// path (the watch), not the repair at open.
	if _, err := os.ReadFile(filepath.Join(mnt, ".memfs", "search", "anything")); err != nil {
		t.Fatalf("search before the write: %v", err)
	}

	note := ingestNote("wombat")
	cmd := exec.Command("sh", "-c", `printf '%s' "$1" > "$2"`, "sh", note, filepath.Join(store, "memory", "x.md"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the other writer: %v\n%s", err, out)
	}
	// Beyond session.AnnounceTTL: a change the helper did not take
	// shows once its announcement expires.
	waitFor(t, "the note on the mount", 3*session.AnnounceTTL, func() bool {
		return strings.Contains(readBack(filepath.Join(mnt, "memory", "x.md")), "wombat")
	})
	checkRedacted(t, "the mount's memory/x.md", readBack(filepath.Join(mnt, "memory", "x.md")))
	checkRedacted(t, "the store's memory/x.md", readBack(filepath.Join(store, "memory", "x.md")))

	res := readBack(filepath.Join(mnt, ".memfs", "search", "wombat"))
	if !strings.Contains(res, "memory/x.md") {
		t.Errorf("search for wombat: got %q, want a hit on memory/x.md", res)
	}
	for _, tok := range ingestTokens {
		if strings.Contains(res, tok[:12]) {
			t.Errorf("search for wombat: the snippet holds the token %.12s...: %q", tok, res)
		}
	}
	// A search for a token finds nothing: the index has no such term
	// (by meaning the redacted query is like the redaction marker in the
	// note: a hit that shows no token).
	if res := readBack(filepath.Join(mnt, ".memfs", "search", "mode:keyword "+ingestTokens[1])); strings.Contains(res, "memory/x.md") {
		t.Errorf("search for the AWS key id: got %q, want no hit", res)
	}
	if res := readBack(filepath.Join(mnt, ".memfs", "search", ingestTokens[1])); strings.Contains(res, ingestTokens[1]) {
		t.Errorf("hybrid search for the AWS key id shows it: %q", res)
	}

	if err := p.terminate(t); err != nil {
		t.Fatalf("memfs exit: %v\n%s", err, p.log)
	}
	if strings.Contains(p.log.String(), ingestTokens[0][:12]) || strings.Contains(p.log.String(), ingestTokens[1][:12]) {
		t.Errorf("memfs's log holds a token:\n%s", p.log)
	}
	for _, rule := range []string{"github-token", "aws-access-key-id"} {
		if !strings.Contains(p.log.String(), rule) {
			t.Errorf("memfs's log names no finding of %s:\n%s", rule, p.log)
		}
	}
	if leaks := ingestLeaks(t, store); len(leaks) > 0 {
		t.Errorf("after the unmount, %d places under the store hold a token: %v", len(leaks), leaks)
	}
	if _, err := os.Stat(filepath.Join(store, ".memfs-sys", "search")); err != nil {
		t.Errorf("the index shards were not written (%v): the scan proves nothing about them", err)
	}

	stored, err := os.ReadFile(filepath.Join(store, "memory", "x.md"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(stored)
	var rewrite bool
	for _, ev := range events(t, "--store", "dir:"+store) {
		if ev.Op == "write" && ev.Key == "memory/x.md" && ev.SHA256 == hex.EncodeToString(sum[:]) &&
			ev.Writer.Agent == session.IngestAgent {
			rewrite = true
		}
	}
	if !rewrite {
		t.Errorf("the event log has no write of memory/x.md by %s with the stored value's hash", session.IngestAgent)
	}
	mustRun(t, "", "log", "--store", "dir:"+store, "--verify")
}

// TestIndexRedactsOfflineWrites: notes with secrets written into a
// directory store while no memfs runs reach the index through memfs
// reindex, through the repair at mount, and through the repair the search
// command makes: after each, no index shard (nor any other system record)
// holds a piece of either secret.
func TestIndexRedactsOfflineWrites(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	spec := "dir:" + store
	write := func(key, word string) {
		t.Helper()
		p := filepath.Join(store, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(ingestNote(word)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sys := filepath.Join(store, ".memfs-sys")
	tests := []struct {
		name, key, word string
		index           func(t *testing.T, word string)
	}{
		{"reindex", "memory/offline.md", "numbat", func(t *testing.T, word string) {
			mustRun(t, "", "reindex", "--store", spec)
		}},
		{"repair at mount", "memory/later.md", "quokka", func(t *testing.T, word string) {
			mnt := t.TempDir()
			p := startMount(t, spec, mnt, nil, "--index-at-mount")
			waitFor(t, "the note in the index", 10*time.Second, func() bool {
				return strings.Contains(readBack(filepath.Join(mnt, ".memfs", "search", word)), "memory/later.md")
			})
			if err := p.terminate(t); err != nil {
				t.Fatalf("memfs exit: %v\n%s", err, p.log)
			}
		}},
		{"search command", "notes/third.md", "bilby", func(t *testing.T, word string) {
			if keys := searchKeys(t, "--store", spec, word); len(keys) != 1 || keys[0] != "notes/third.md" {
				t.Fatalf("memfs search %s: got %v, want [notes/third.md]", word, keys)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			write(tt.key, tt.word)
			tt.index(t, tt.word)
			if keys := searchKeys(t, "--store", spec, tt.word); len(keys) != 1 || keys[0] != tt.key {
				t.Errorf("memfs search %s: got %v, want [%s]", tt.word, keys, tt.key)
			}
			// The index holds no token: keyword search finds none. (By
			// meaning, a query redacted to "[REDACTED:github-token]" is
			// like a note that holds that marker: a hit, but no token.)
			if keys := searchKeys(t, "--store", spec, "--mode", "keyword", ingestTokens[0]); len(keys) != 0 {
				t.Errorf("memfs search for the GitHub token: got %v, want no hit", keys)
			}
			if out := mustRun(t, "", "search", "--store", spec, ingestTokens[0]); strings.Contains(out, ingestTokens[0]) {
				t.Errorf("memfs search (hybrid) shows the GitHub token: %q", out)
			}
			if leaks := ingestLeaks(t, sys); len(leaks) > 0 {
				t.Errorf("%d system records hold a token: %v", len(leaks), leaks)
			}
		})
	}
}
