package session_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/session"
)

// appliedThenFails is a shared store whose next failApplies Applies write
// the batch and then report a failure: the classic "the request timed out,
// but the server had committed it" of a network store (an etcd client's
// deadline running out while the transaction is applied).
type appliedThenFails struct {
	*memstore.Store
	failApplies atomic.Int32
}

var errTimedOut = fmt.Errorf("etcd: request timed out: %w", backend.ErrUnavailable)

func (s *appliedThenFails) Apply(ctx context.Context, b backend.Batch) (map[string]string, error) {
	copies, err := s.Store.Apply(ctx, b)
	if err == nil && s.failApplies.Add(-1) >= 0 {
		return nil, errTimedOut
	}
	return copies, err
}

// A flush whose store write was applied but reported failed (fsync got
// EIO: nothing acknowledged) leaves the store holding the session's own
// version. The retry meets it as a version it did not expect, and must
// take it for what it is, the session's own write: under merge, the lines
// the failed flush wrote were merged again (twice in the store: "95 lines
// merged twice" in TestSharedConcurrentAppends/merge under load); under
// keep-both, a conflict copy of the session's own file was made.
func TestFlushAppliedButFailed(t *testing.T) {
	const key = "memory/log.jsonl"
	for _, tt := range []struct {
		name   string
		policy session.ConflictPolicy
		// applied: the failed flush's write reached the store; theirs,
		// when set, is what another writer saved after it (built on
		// it when applied, as the other mount's merge is).
		applied bool
		theirs  string
		want    string
		copies  int // conflict copies wanted
	}{
		{"merge, own write", session.Merge, true, "", "a\nl1\nl2\n", 0},
		{"merge, another writer's on top", session.Merge, true, "a\nl1\nm\n", "a\nl1\nm\nl2\n", 0},
		{"merge, not applied, another writer's", session.Merge, false, "a\nm\n", "a\nm\nl1\nl2\n", 0},
		{"merge, not applied", session.Merge, false, "", "a\nl1\nl2\n", 0},
		{"keep-both, own write", session.KeepBoth, true, "", "a\nl1\nl2\n", 0},
		{"last-writer-wins, own write", session.LastWriterWins, true, "", "a\nl1\nl2\n", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem := memstore.New()
			if err := mem.Other().Set(key, []byte("a\n")); err != nil {
				t.Fatal(err)
			}
			st := &appliedThenFails{Store: mem}
			c, evs := policySession(t, st, tt.policy, nil)
			h, err := c.Open(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Append([]byte("l1\n")); err != nil {
				t.Fatal(err)
			}
			if tt.applied {
				st.failApplies.Store(1)
				if err := h.Sync(t.Context()); !errors.Is(err, errTimedOut) {
					t.Fatalf("fsync = %v, want the store's timeout", err)
				}
				if got := stored(t, mem)[key]; got != "a\nl1\n" {
					t.Fatalf("store after the applied write = %q", got)
				}
			}
			if tt.theirs != "" {
				if err := mem.Other().Set(key, []byte(tt.theirs)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := h.Append([]byte("l2\n")); err != nil {
				t.Fatal(err)
			}
			if err := h.Sync(t.Context()); err != nil {
				t.Fatalf("fsync after the store came back = %v", err)
			}
			all := stored(t, mem)
			if got := all[key]; got != tt.want {
				t.Errorf("store %s = %q, want %q", key, got, tt.want)
			}
			if got, _ := c.Get(key); string(got) != tt.want {
				t.Errorf("session %s = %q, want %q", key, got, tt.want)
			}
			if cc := conflictCopies(all, key); len(cc) != tt.copies {
				t.Errorf("conflict copies %v (%v), want %d", cc, all, tt.copies)
			}
			n := 0
			for _, e := range *evs {
				if e.Op == session.EventConflict {
					n++
					if tt.theirs == "" {
						t.Errorf("a conflict with the session's own write: %+v", e)
					}
				}
			}
			if tt.theirs != "" && n == 0 {
				t.Errorf("no conflict event for the other writer's version")
			}
			if strings.Count(all[key], "l1\n") != 1 {
				t.Errorf("l1 is in the store %d times", strings.Count(all[key], "l1\n"))
			}
		})
	}
}

// A file removed after a save that was applied but reported failed: the
// delete meets the session's own version and removes it, rather than
// bringing it back as another writer's ("restored").
func TestDeleteAfterAnAppliedButFailedSave(t *testing.T) {
	const key = "memory/log.jsonl"
	for _, p := range []session.ConflictPolicy{session.Merge, session.KeepBoth} {
		t.Run(p.String(), func(t *testing.T) {
			mem := memstore.New()
			if err := mem.Other().Set(key, []byte("a\n")); err != nil {
				t.Fatal(err)
			}
			st := &appliedThenFails{Store: mem}
			c, evs := policySession(t, st, p, nil)
			h, err := c.Open(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.Append([]byte("l1\n")); err != nil {
				t.Fatal(err)
			}
			st.failApplies.Store(1)
			if err := c.Flush(t.Context()); !errors.Is(err, errTimedOut) {
				t.Fatalf("Flush = %v, want the store's timeout", err)
			}
			if err := c.Delete(key); err != nil {
				t.Fatal(err)
			}
			if err := c.Flush(t.Context()); err != nil {
				t.Fatalf("Flush after the store came back = %v", err)
			}
			if all := stored(t, mem); len(all) != 0 {
				t.Errorf("store after the delete = %v, want nothing", all)
			}
			if _, ok := c.Get(key); ok {
				t.Errorf("%s is back in the session", key)
			}
			for _, e := range *evs {
				if e.Op == session.EventConflict {
					t.Errorf("a conflict with the session's own write: %+v", e)
				}
			}
		})
	}
}
