package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/badgerstore"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/session"
)

// longName returns a name of exactly 255 bytes (the longest a name may
// be) of r, ending in ".md".
func longName(r string) string {
	s := strings.Repeat(r, 255/len(r))
	for len(s)+len(".md") > 255 {
		s = strings.TrimSuffix(s, r)
	}
	return s + strings.Repeat("x", 255-len(s)-len(".md")) + ".md"
}

// A conflict over a name of the longest length, ASCII or not, keeps both
// versions: the copy's name is shortened to a valid one, not refused, the
// flush ends with nothing dirty, and both versions read back, under each
// policy that keeps a copy, on a memory and a directory store.
func TestConflictCopyOfALongName(t *testing.T) {
	type store struct {
		st  backend.Store
		set func(key, v string) // another writer's save
	}
	stores := map[string]func(t *testing.T) store{
		"memstore": func(t *testing.T) store {
			st := memstore.New()
			other := st.Other()
			return store{st, func(key, v string) {
				if err := other.Set(key, []byte(v)); err != nil {
					t.Fatal(err)
				}
			}}
		},
		"dirstore": func(t *testing.T) store {
			dir := t.TempDir()
			st, err := dirstore.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			return store{st, func(key, v string) {
				p := filepath.Join(dir, filepath.FromSlash(key))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
			}}
		},
	}
	for sname, open := range stores {
		policies := []session.ConflictPolicy{session.KeepBeside, session.KeepBoth}
		if sname == "dirstore" {
			policies = policies[:1] // keep-both needs batches (session.ErrPolicyUnsupported)
		}
		for _, p := range policies {
			for _, r := range []string{"a", "é", "日", "😀"} {
				t.Run(sname+"/"+p.String()+"/"+r, func(t *testing.T) {
					key := "memory/" + longName(r)
					s := open(t)
					s.set(key, "base\n")
					c, _ := policySession(t, s.st, p, nil)
					if err := c.Set(key, []byte("ours\n")); err != nil {
						t.Fatal(err)
					}
					s.set(key, "theirs!\n")
					if err := c.Flush(t.Context()); err != nil {
						t.Fatalf("Flush = %v", err)
					}
					if err := c.Flush(t.Context()); err != nil { // what the first kept beside
						t.Fatalf("second Flush = %v", err)
					}
					if dirty, removed := c.Pending().Unflushed(); len(dirty) != 0 || len(removed) != 0 {
						t.Errorf("unflushed after the flush: %d saves, removes %v", len(dirty), removed)
					}
					all := stored(t, s.st)
					keys := make([]string, 0, len(all))
					for k := range all {
						keys = append(keys, k)
					}
					var copies []string
					for _, k := range keys {
						if orig, _, _, ok := backend.ConflictOrigin(k, keys); ok && orig == key {
							copies = append(copies, k)
						}
					}
					if len(copies) != 1 {
						t.Fatalf("copies of %s in the store: %v (keys %v); want one", key, copies, keys)
					}
					if err := backend.ValidateKey(copies[0]); err != nil {
						t.Error(err)
					}
					got := []string{all[key], all[copies[0]]}
					if !(got[0] == "ours\n" && got[1] == "theirs!\n" || got[0] == "theirs!\n" && got[1] == "ours\n") {
						t.Errorf("%s and its copy hold %q; want ours and theirs", key, got)
					}
					if v, ok := c.Get(copies[0]); !ok || string(v) != all[copies[0]] {
						t.Errorf("session reads the copy as %q, %v; want %q", v, ok, all[copies[0]])
					}
				})
			}
		}
	}
}

// Under keep-both, the copy a session moves its own version to stays
// within the store's key limit (badger's), so that a conflict over a key
// of the longest length the store holds keeps both versions and leaves
// nothing dirty.
func TestKeepBothAtTheKeyLimit(t *testing.T) {
	st, err := badgerstore.Open(t.TempDir(), badgerstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	max := st.KeyLimit().Max
	dir := strings.TrimSuffix(strings.Repeat(strings.Repeat("d", 200)+"/", (max-120)/201), "/")
	key := dir + "/" + strings.Repeat("n", max-len(dir)-1-len(".md")) + ".md"
	theirs := func(v string) {
		if err := st.Save(t.Context(), backend.Entry{Key: key, Info: backend.Info{Mode: 0o644, MTime: time.Now()}, Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	theirs("base\n")
	c, _ := policySession(t, st, session.KeepBoth, nil)
	if err := c.Set(key, []byte("ours\n")); err != nil {
		t.Fatal(err)
	}
	theirs("theirs!\n")
	if err := c.Flush(t.Context()); err != nil {
		t.Fatalf("Flush = %v", err)
	}
	if dirty, removed := c.Pending().Unflushed(); len(dirty) != 0 || len(removed) != 0 {
		t.Errorf("unflushed after the flush: %d saves, removes %v", len(dirty), removed)
	}
	keys := c.Keys()
	var ck string
	for _, k := range keys {
		if orig, agent, _, ok := backend.ConflictOrigin(k, keys); ok && orig == key && agent == "me" {
			ck = k
		}
	}
	if ck == "" {
		t.Fatalf("no copy of ours among %d keys", len(keys))
	}
	got, err := st.Load(t.Context(), key, ck)
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Value) != "theirs!\n" || string(got[1].Value) != "ours\n" {
		t.Errorf("the key holds %q and the copy %q; want theirs and ours", got[0].Value, got[1].Value)
	}
}
