package memstore_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/internal/await"
)

// Revisions count the writes of keys over the contents, through Reopen
// and Other, and only writes that change keys.
func TestRevisions(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	step := func(what string, want int64) {
		t.Helper()
		if got := s.Rev(); got != want {
			t.Fatalf("after %s: Rev = %d, want %d", what, got, want)
		}
	}
	if err := s.Save(ctx, entry("a", "1"), entry("b", "2")); err != nil {
		t.Fatal(err)
	}
	step("a Save of two keys", 1)
	if err := s.Delete(ctx, "never/was"); err != nil {
		t.Fatal(err)
	}
	step("a Delete of nothing", 1)
	if _, err := s.Apply(ctx, backend.Batch{}); err != nil {
		t.Fatal(err)
	}
	step("an empty Apply", 1)
	if err := s.SaveSys(ctx, "r", []byte("x")); err != nil {
		t.Fatal(err)
	}
	step("a SaveSys", 1)
	if err := s.Other().Set("c", []byte("3")); err != nil {
		t.Fatal(err)
	}
	step("Other.Set", 2)
	if err := s.Other().Remove("c"); err != nil {
		t.Fatal(err)
	}
	step("Other.Remove", 3)
	if err := s.Other().Remove("c"); err != nil {
		t.Fatal(err)
	}
	step("Other.Remove of nothing", 3)
	if err := s.Delete(ctx, "a", "b"); err != nil {
		t.Fatal(err)
	}
	step("a Delete of two keys", 4)
	s.Close()
	s2, err := s.Reopen()
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	e := []backend.Entry{entry("d", "4")}
	if err := s2.Save(ctx, e...); err != nil {
		t.Fatal(err)
	}
	if got := s2.Rev(); got != 5 || e[0].Info.Rev != 5 {
		t.Fatalf("a Save after Reopen: Rev %d, entry's Rev %d; want 5 and 5 (one counter over the contents)", got, e[0].Info.Rev)
	}
}

// A conflict found because another writer (Other) changed a key fails a
// FailOnConflict batch, as on a shared store.
func TestFailOnConflictOther(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	defer s.Close()
	if err := s.Save(ctx, entry("a", "ours")); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Load(ctx, "a")
	v := backend.VersionOf(got[0].Info)
	if err := s.Other().Set("a", []byte("thrs")); err != nil { // same size
		t.Fatal(err)
	}
	_, err := s.Apply(ctx, backend.Batch{Saves: []backend.Entry{entry("a", "mine")}, Expect: map[string]backend.Version{"a": v}, FailOnConflict: true})
	if !errors.Is(err, backend.ErrConflict) {
		t.Fatalf("Apply after another writer's change: %v, want ErrConflict", err)
	}
	if got, _ := s.Load(ctx, "a"); string(got[0].Value) != "thrs" {
		t.Errorf("a = %q, want the other writer's value", got[0].Value)
	}
}

// Registrations end with their Store's Close; an Other's with leave or
// its context; a closed Store registers nothing.
func TestPresenceClose(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	if _, err := s.Register(ctx, backend.Peer{Agent: "mine"}); err != nil {
		t.Fatal(err)
	}
	octx, cancel := context.WithCancel(ctx)
	if _, err := s.Other().Register(octx, backend.Peer{Agent: "theirs"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := s.Register(ctx, backend.Peer{}); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Register on a closed Store: %v, want fs.ErrClosed", err)
	}
	s2, err := s.Reopen()
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	peers, err := s2.Peers(ctx)
	if err != nil || len(peers) != 1 || peers[0].Agent != "theirs" {
		t.Fatalf("Peers after Close = %+v, %v; want the Other's registration alone", peers, err)
	}
	cancel()
	if !await.Cond(5*time.Second, time.Millisecond, func() bool { peers, _ = s2.Peers(ctx); return len(peers) == 0 }) {
		t.Fatalf("Peers after the Other's context ended = %+v, want none", peers)
	}
}
