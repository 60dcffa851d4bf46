package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs/search/live"
)

func searchKeys(t *testing.T, args ...string) []string {
	t.Helper()
	out := mustRun(t, "", append([]string{"search", "--json"}, args...)...)
	var keys []string
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var r live.Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("search --json line %q: %v", line, err)
		}
		keys = append(keys, r.Key)
	}
	return keys
}

// Search through a live mount sees unflushed writes and filters by
// metadata; after the unmount the store's index answers the same; a value
// changed in the store behind the index (as a crash between a flush and
// the index update leaves it) is re-indexed at the next mount; reindex
// rebuilds from scratch.
func TestSearch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := "dir:" + dir
	mustRun(t, "", "import", "--store", store, "../../testdata/sample")
	mnt := t.TempDir()
	p := startMount(t, store, mnt, nil)
	note := filepath.Join(mnt, "memory", "quokka.md")
	if err := os.WriteFile(note, []byte("The quokka lives on Rottnest Island.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	setx(t, note, "user.memfs.tags", "animals", "user.memfs.importance", "0.9")
	if got := searchKeys(t, "--mount", mnt, "quokka"); strings.Join(got, " ") != "memory/quokka.md" {
		t.Errorf("unflushed write: search quokka = %v", got)
	}
	if got := searchKeys(t, "--mount", mnt, "--tag", "animals", "--importance-min", "0.5", "island"); strings.Join(got, " ") != "memory/quokka.md" {
		t.Errorf("search with filters = %v", got)
	}
	if got := searchKeys(t, "--mount", mnt, "--tag", "plants", "island"); len(got) != 0 {
		t.Errorf("search --tag plants = %v, want nothing", got)
	}
	if got := searchKeys(t, "--mount", mnt, "--prefix", "skills/", "errors"); len(got) == 0 || !strings.HasPrefix(got[0], "skills/") {
		t.Errorf("search --prefix skills/ errors = %v", got)
	}
	// Code identifiers and CJK text are found by their parts.
	os.WriteFile(filepath.Join(mnt, "memory", "code.md"), []byte("Call newHTTPServer from cmd/memfs/main.go; see max_file_size.\n"), 0o644)
	os.WriteFile(filepath.Join(mnt, "memory", "ja.md"), []byte("東京で会議があります。\n"), 0o644)
	for q, want := range map[string]string{"http server": "memory/code.md", "main.go": "memory/code.md", "file size": "memory/code.md",
		"newhttpserver": "memory/code.md", "会議": "memory/ja.md", "東京": "memory/ja.md"} {
		if got := searchKeys(t, "--mount", mnt, q); len(got) == 0 || got[0] != want {
			t.Errorf("search %q = %v, want %s first", q, got, want)
		}
	}
	b, err := os.ReadFile(filepath.Join(mnt, ".memfs", "search", "quokka tag:animals"))
	if err != nil || !strings.Contains(string(b), "memory/quokka.md  score ") || !strings.Contains(string(b), "Rottnest Island") {
		t.Errorf(".memfs/search/quokka tag:animals = %q, %v", b, err)
	}
	// Removed before any flush: gone from the results at once.
	os.Remove(note)
	if got := searchKeys(t, "--mount", mnt, "--mode", "keyword", "quokka"); len(got) != 0 {
		t.Errorf("after rm: search quokka = %v", got)
	}
	os.WriteFile(note, []byte("A wombat, not a quokka.\n"), 0o644)
	p.stop(t)

	if got := searchKeys(t, "--store", store, "--mode", "keyword", "wombat"); strings.Join(got, " ") != "memory/quokka.md" {
		t.Errorf("after unmount: search --store wombat = %v", got)
	}
	// The store changes behind the index: the next mount re-indexes it.
	os.WriteFile(filepath.Join(dir, "memory", "quokka.md"), []byte("Now about a numbat.\n"), 0o644)
	p = startMount(t, store, mnt, nil)
	if got := searchKeys(t, "--mount", mnt, "numbat"); strings.Join(got, " ") != "memory/quokka.md" {
		t.Errorf("after a change behind the index: search numbat = %v", got)
	}
	if got := searchKeys(t, "--mount", mnt, "--mode", "keyword", "wombat"); len(got) != 0 {
		t.Errorf("the old value is still found: %v", got)
	}
	p.stop(t)
	if out := mustRun(t, "", "reindex", "--store", store); !strings.Contains(out, "11 entries indexed") {
		t.Errorf("reindex: %q", out)
	}
	if got := searchKeys(t, "--store", store, "numbat"); strings.Join(got, " ") != "memory/quokka.md" {
		t.Errorf("after reindex: search numbat = %v", got)
	}
	if _, _, err := run(t, "", "search", "--store", store, "x", "--importance-min", "3"); err == nil {
		t.Error("search --importance-min 3 succeeded")
	}
}

// A query of any length goes through a mount: a long paragraph (past what
// a file name may hold: 255 bytes on older kernels' FUSE, 4 KiB on 6.x,
// percent-encoded) finds the note, in search and in a context pack, and
// no error echoes the encoded query. It failed with "file name too long"
// and the whole encoded query.
func TestLongQueryThroughTheMount(t *testing.T) {
	noStoreEnv(t)
	store := "dir:" + t.TempDir()
	mnt := t.TempDir()
	startMount(t, store, mnt, nil, "--embedder", "none")
	if err := os.WriteFile(filepath.Join(mnt, "memory", "kumquat.md"), []byte("the kumquat orchard needs water on tuesdays\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("what should I remember about the orchard and its watering schedule, ", 80) + "kumquat"
	if len(long) < 5000 {
		t.Fatalf("the query is %d bytes, want a paragraph", len(long))
	}
	out, errOut, err := run(t, "", "search", "--mount", mnt, "--json", long)
	if err != nil || !strings.Contains(out, "memory/kumquat.md") {
		t.Errorf("search --mount with a %d-byte query: %v\nstdout: %.300s\nstderr: %.300s", len(long), err, out, errOut)
	}
	if err != nil && strings.Contains(err.Error(), "watering%20schedule") {
		t.Errorf("the error echoes the encoded query (%d bytes)", len(err.Error()))
	}
	out, errOut, err = run(t, "", "context", "--mount", mnt, "--query", long)
	if err != nil || !strings.Contains(out, "kumquat orchard") {
		t.Errorf("context --mount with a %d-byte query: %v\nstdout: %.300s\nstderr: %.300s", len(long), err, out, errOut)
	}
	if err != nil && strings.Contains(err.Error(), "watering%20schedule") {
		t.Errorf("the error echoes the encoded query (%d bytes)", len(err.Error()))
	}
	// Routed without --mount (the store is mounted), the same.
	if keys := searchKeys(t, "--store", store, long); !slices.Contains(keys, "memory/kumquat.md") {
		t.Errorf("search --store (routed through the mount) with a long query = %v", keys)
	}
}

// A query the mount cannot answer fails with the reason and what to do,
// not with a bare errno.
func TestSearchThroughTheMountSaysWhyItCannot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mnt := t.TempDir()
	startMount(t, "dir:"+dir, mnt, nil, "--embedder", "none")
	_, _, err := run(t, "", "search", "--mount", mnt, "--mode", "semantic", "anything")
	if err == nil || !strings.Contains(err.Error(), "memfs models install") || !strings.Contains(err.Error(), "ENOTSUP") {
		t.Errorf("search --mode semantic through a mount without a model: %v; want the reason and what to do", err)
	}
}
