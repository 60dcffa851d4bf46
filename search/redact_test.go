package search

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/memfs/memfs/internal/syncbuf"
	"github.com/memfs/memfs/search/internal/searchtest"
)

// testRedact replaces each fake secret by a marker and reports rule "test".
func testRedact(_ string, v []byte) ([]byte, []string) {
	if !searchtest.SecretRE.Match(v) {
		return v, nil
	}
	var rules []string
	out := searchtest.SecretRE.ReplaceAllFunc(v, func([]byte) []byte {
		rules = append(rules, "test")
		return []byte("[REDACTED:test]")
	})
	return out, rules
}

func redactingOptions() (Options, *syncbuf.Buffer) {
	log := &syncbuf.Buffer{}
	return Options{Redact: testRedact, Logger: slog.New(slog.NewTextHandler(log, nil))}, log
}

func checkNoSecret(t *testing.T, ix *Index, sys *searchtest.MemSys, key string, value []byte) {
	t.Helper()
	if hits := ix.Search(Query{Text: searchtest.Secret}); len(hits) != 0 {
		t.Errorf("search for the secret: got %v, want no hit", hits)
	}
	if hits := ix.Search(Query{Text: "wombat"}); len(hits) == 0 || hits[0].Key != key {
		t.Errorf("search for wombat: got %v, want %s first", hits, key)
	}
	snip := ix.Snippet(key, value, Query{Text: "wombat"}, 0)
	if strings.Contains(snip, searchtest.Secret[:12]) || !strings.Contains(snip, "[REDACTED:test]") {
		t.Errorf("snippet: got %q, want the marker and no secret", snip)
	}
	if _, err := ix.Save(t.Context(), sys); err != nil {
		t.Fatal(err)
	}
	if name := searchtest.SecretIn(t, sys); name != "" {
		t.Errorf("record %s holds the secret", name)
	}
}

// Every way a value enters the index redacts it: a live Put, a Put after
// Load (the repair of stale stamps at open), and a rebuild (New, a Put per
// stored value); the metadata strings are redacted on each path too.
func TestRedactOnEveryPath(t *testing.T) {
	const key = "memory/deploy.md"
	value := []byte("The wombat cluster deploys with " + searchtest.Secret + " as its token.\n")
	meta := DocMeta{Tags: []string{"ops", searchtest.Secret}, Source: "src " + searchtest.Secret, Agent: searchtest.Secret, Size: int64(len(value))}
	tests := []struct {
		name string
		fill func(t *testing.T, sys *searchtest.MemSys, opts Options) *Index
	}{
		{"live put", func(t *testing.T, sys *searchtest.MemSys, opts Options) *Index {
			ix := New(opts)
			ix.Put(key, value, meta)
			return ix
		}},
		{"put after load (repair)", func(t *testing.T, sys *searchtest.MemSys, opts Options) *Index {
			old := New(opts)
			old.Put(key, []byte("an older, clean version"), DocMeta{})
			old.Put("memory/other.md", []byte("another note"), DocMeta{})
			if _, err := old.Save(t.Context(), sys); err != nil {
				t.Fatal(err)
			}
			ix, err := Load(t.Context(), sys, opts)
			if err != nil {
				t.Fatal(err)
			}
			ix.Put(key, value, meta)
			return ix
		}},
		{"rebuild", func(t *testing.T, sys *searchtest.MemSys, opts Options) *Index {
			ix := New(opts)
			for _, k := range []string{"a/1.md", key, "z/2.md"} {
				v := []byte("note " + k)
				m := DocMeta{}
				if k == key {
					v, m = value, meta
				}
				ix.Put(k, v, m)
			}
			return ix
		}},
		{"secret across the indexing cut", func(t *testing.T, sys *searchtest.MemSys, opts Options) *Index {
			// 16 bytes of the secret before MaxIndexBytes: redacting only
			// what is indexed would keep "tok_zq8wm3xr5tn7".
			long := bytes.Repeat([]byte("wombat "), MaxIndexBytes/7+1)[:MaxIndexBytes-16]
			long = append(long, searchtest.Secret+" and more\n"...)
			ix := New(opts)
			ix.Put(key, long, meta)
			return ix
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := searchtest.NewMemSys()
			opts, _ := redactingOptions()
			ix := tt.fill(t, sys, opts)
			checkNoSecret(t, ix, sys, key, value)
			got, err := Load(t.Context(), sys, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, tag := range got.docs[got.byKey[key]].meta.Tags {
				if strings.Contains(tag, searchtest.Secret) {
					t.Errorf("loaded tags: got %q, want the secret redacted", got.docs[got.byKey[key]].meta.Tags)
				}
			}
		})
	}
}

// Without Redact (memfs always passes one) the index keeps what it is
// given: the control that shows the checks above can fail.
func TestNoRedactKeepsValues(t *testing.T) {
	ix := New(Options{})
	ix.Put("memory/deploy.md", []byte("wombat "+searchtest.Secret), DocMeta{})
	if hits := ix.Search(Query{Text: searchtest.Secret}); len(hits) != 1 {
		t.Fatalf("search for the secret without Redact: got %v, want one hit", hits)
	}
	sys := searchtest.NewMemSys()
	if _, err := ix.Save(t.Context(), sys); err != nil {
		t.Fatal(err)
	}
	if searchtest.SecretIn(t, sys) == "" {
		t.Fatal("no record holds the secret: the leak check sees nothing")
	}
}

// A key whose name holds a secret is not indexed; the log names the rule,
// never the key; a snippet of it is empty.
func TestSecretNameNotIndexed(t *testing.T) {
	key := "notes/" + searchtest.Secret + ".md"
	opts, log := redactingOptions()
	ix := New(opts)
	ix.Put(key, []byte("a wombat note"), DocMeta{})
	if ix.Has(key) || ix.Len() != 0 {
		t.Errorf("after Put: Has = %v, Len = %d, want false, 0", ix.Has(key), ix.Len())
	}
	if hits := ix.Search(Query{Text: "wombat"}); len(hits) != 0 {
		t.Errorf("search for wombat: got %v, want no hit", hits)
	}
	if got := ix.Snippet(key, []byte("a wombat note"), Query{Text: "wombat"}, 0); got != "" {
		t.Errorf("snippet: got %q, want none", got)
	}
	if s := log.String(); !strings.Contains(s, "rule=test") || strings.Contains(s, searchtest.Secret[:12]) {
		t.Errorf("log: got %q, want the rule and not the name", s)
	}
	sys := searchtest.NewMemSys()
	if _, err := ix.Save(t.Context(), sys); err != nil {
		t.Fatal(err)
	}
	if name := searchtest.SecretIn(t, sys); name != "" {
		t.Errorf("record %s holds the name", name)
	}
}

// Load drops a document whose name holds a secret (an index written before
// the rule existed) and writes its shard again at once, without it and
// without its terms.
func TestLoadDropsSecretNames(t *testing.T) {
	sys := searchtest.NewMemSys()
	old := New(Options{})
	secretKey := "notes/" + searchtest.Secret + ".md"
	old.Put(secretKey, []byte("aardvark only here"), DocMeta{})
	old.Put("notes/clean.md", []byte("a wombat note"), DocMeta{})
	if _, err := old.Save(t.Context(), sys); err != nil {
		t.Fatal(err)
	}
	opts, _ := redactingOptions()
	ix, err := Load(t.Context(), sys, opts)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Has(secretKey) || !ix.Has("notes/clean.md") {
		t.Errorf("after Load: Has(secret name) = %v, Has(clean) = %v, want false, true", ix.Has(secretKey), ix.Has("notes/clean.md"))
	}
	if hits := ix.Search(Query{Text: "aardvark"}); len(hits) != 0 {
		t.Errorf("search for a word of the dropped document: got %v, want none", hits)
	}
	if got, want := ix.Stats().Terms, New(Options{}).withPut("notes/clean.md", "a wombat note").Stats().Terms; got != want {
		t.Errorf("terms after Load: got %d, want %d (the dropped document's are gone)", got, want)
	}
	if d := ix.Stats().DirtyShards; d != 0 {
		t.Errorf("dirty shards after Load: got %d, want 0 (Load saved them)", d)
	}
	if name := searchtest.SecretIn(t, sys); name != "" {
		t.Errorf("record %s still holds the name after Load", name)
	}
}

func (ix *Index) withPut(key, value string) *Index {
	ix.Put(key, []byte(value), DocMeta{})
	return ix
}
