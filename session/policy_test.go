package session_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/backend/errorstore"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/journal"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/session"
)

// Conflict policies on a shared store: memstore's Other is the other
// mount, writing the same contents between the session's load and flush.

// policySession is a bootstrapped session over st with policy p, agent
// "me", and its events collected.
func policySession(t *testing.T, st backend.Store, p session.ConflictPolicy, extra func(*session.Options)) (*session.Context, *[]session.Event) {
	t.Helper()
	var mu sync.Mutex
	evs := new([]session.Event)
	opts := session.Options{OnConflict: p, Agent: "me", Events: func(_ context.Context, e []session.Event) error {
		mu.Lock()
		*evs = append(*evs, e...)
		mu.Unlock()
		return nil
	}}
	if extra != nil {
		extra(&opts)
	}
	c, err := session.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c, evs
}

// stored returns every key of st with its value.
func stored(t *testing.T, st backend.Store) map[string]string {
	t.Helper()
	list, err := st.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]string)
	for _, e := range list {
		if e.Info.Mode.IsDir() {
			continue
		}
		got, err := st.Load(t.Context(), e.Key)
		if err != nil {
			t.Fatal(err)
		}
		out[e.Key] = string(got[0].Value)
	}
	return out
}

// conflictCopies returns the keys of st that are conflict copies of key
// by agent "me".
func conflictCopies(all map[string]string, key string) []string {
	dir, name := backend.Split(key)
	ext := filepath.Ext(name)
	prefix := backend.Join(dir, strings.TrimSuffix(name, ext)+".conflict-")
	var out []string
	for k := range all {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func TestNewRefusesAPolicyTheStoreCannotCarry(t *testing.T) {
	plain := errorstore.Wrap(dirStoreLike{memstore.New()}, nil)
	if _, err := session.New(plain, session.Options{OnConflict: session.KeepBoth}); !errors.Is(err, session.ErrPolicyUnsupported) {
		t.Errorf("New(keep-both on a store without batches) = %v, want ErrPolicyUnsupported", err)
	}
	if _, err := session.New(plain, session.Options{}); err != nil {
		t.Errorf("New(default policy) = %v, want nil", err)
	}
	c := session.NewContext(plain, session.Options{OnConflict: session.Merge})
	if err := c.Flush(t.Context()); !errors.Is(err, session.ErrPolicyUnsupported) {
		t.Errorf("Flush of a NewContext with an unsupported policy = %v, want ErrPolicyUnsupported", err)
	}
}

// dirStoreLike hides every capability of the store it embeds.
type dirStoreLike struct{ backend.Store }

func TestParseConflictPolicy(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want session.ConflictPolicy
		ok   bool
	}{
		{"keep-both", session.KeepBoth, true},
		{"merge", session.Merge, true},
		{"last-writer-wins", session.LastWriterWins, true},
		{"keep-beside", session.KeepBeside, true},
		{"lww", 0, false},
		{"", 0, false},
	} {
		got, err := session.ParseConflictPolicy(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseConflictPolicy(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if tt.ok && got.String() != tt.in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tt.in)
		}
	}
}

// TestWriteWriteConflict: the session and another writer both change a key
// the session loaded (or both create it); the flush resolves by policy.
func TestWriteWriteConflict(t *testing.T) {
	const key = "memory/notes.md"
	for _, tt := range []struct {
		name         string
		policy       session.ConflictPolicy
		base         string // "" : the key does not exist at bootstrap
		ours, theirs string
		wantName     string // the value under key after the flush
		wantCopy     string // the value of our conflict copy; "" for none
		outcome      string
	}{
		{"keep-both", session.KeepBoth, "a\n", "a\nours\n", "a\ntheirs\n", "a\ntheirs\n", "a\nours\n", session.OutcomeKeptBoth},
		{"merge appends", session.Merge, "a\n", "a\nours\n", "a\ntheirs\n", "a\ntheirs\nours\n", "", session.OutcomeMerged},
		{"merge sections", session.Merge,
			"# One\n\nfirst\n\n# Two\n\nsecond\n",
			"# One\n\nfirst, by us\n\n# Two\n\nsecond\n",
			"# One\n\nfirst\n\n# Two\n\nsecond, by them\n",
			"# One\n\nfirst, by us\n\n# Two\n\nsecond, by them\n", "", session.OutcomeMerged},
		{"merge overlap keeps both", session.Merge, "a\n", "ours\n", "theirs\n", "theirs\n", "ours\n", session.OutcomeKeptBoth},
		{"merge binary keeps both", session.Merge, "a\x00b", "a\x00ours", "a\x00theirs", "a\x00theirs", "a\x00ours", session.OutcomeKeptBoth},
		{"merge of a file both created", session.Merge, "", "ours\n", "theirs\n", "theirs\nours\n", "", session.OutcomeMerged},
		{"keep-both of a file both created", session.KeepBoth, "", "ours\n", "theirs\n", "theirs\n", "ours\n", session.OutcomeKeptBoth},
		{"last writer wins", session.LastWriterWins, "a\n", "ours\n", "theirs\n", "ours\n", "", session.OutcomeOverwritten},
	} {
		t.Run(tt.name, func(t *testing.T) {
			writeWriteConflict(t, key, tt.policy, tt.base, tt.ours, tt.theirs, tt.wantName, tt.wantCopy, tt.outcome)
		})
	}
}

// writeWriteConflict is one case of TestWriteWriteConflict.
func writeWriteConflict(t *testing.T, key string, policy session.ConflictPolicy, base, ours, theirs, wantName, wantCopy, outcome string) {
	st := memstore.New()
	other := st.Other()
	if base != "" {
		if err := other.Set(key, []byte(base)); err != nil {
			t.Fatal(err)
		}
	}
	c, evs := policySession(t, st, policy, nil)
	var chMu sync.Mutex
	var changes []session.Change
	defer c.Watch(func(ch session.Change) {
		chMu.Lock()
		changes = append(changes, ch)
		chMu.Unlock()
	})()
	if base == "" {
		if err := c.Set(key, nil); err != nil { // a new file
			t.Fatal(err)
		}
	}
	h, err := c.Open(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Truncate(0); err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte(ours), 0); err != nil {
		t.Fatal(err)
	}
	if err := other.Set(key, []byte(theirs)); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatalf("Flush = %v", err)
	}
	all := stored(t, st)
	if got := all[key]; got != wantName {
		t.Errorf("store %s = %q, want %q", key, got, wantName)
	}
	if got, ok := c.Get(key); !ok || string(got) != wantName {
		t.Errorf("session %s = %q, %v; want %q", key, got, ok, wantName)
	}
	if c.Pending().Dirty(key) {
		t.Errorf("%s still dirty after the flush", key)
	}
	copyKey := checkConflictCopy(t, c, st, h, all, key, wantName, wantCopy)
	if outcome == session.OutcomeMerged {
		// The open handle reads the merge.
		buf := make([]byte, len(wantName)+10)
		n, _ := h.ReadAt(buf, 0)
		if got := string(buf[:n]); got != wantName {
			t.Errorf("handle reads %q, want the merge %q", got, wantName)
		}
	}
	var conflicts []session.Event
	for _, e := range *evs {
		if e.Op == session.EventConflict {
			conflicts = append(conflicts, e)
		}
	}
	if len(conflicts) != 1 {
		t.Fatalf("conflict events %+v, want one", conflicts)
	}
	if e := conflicts[0]; e.Key != key || e.Outcome != outcome || e.Policy != policy.String() || e.CopyKey != copyKey {
		t.Errorf("conflict event = %+v; want key %s, outcome %s, policy %s, copy %q", e, key, outcome, policy, copyKey)
	}
	chMu.Lock()
	defer chMu.Unlock()
	if !slices.ContainsFunc(changes, func(ch session.Change) bool {
		return ch.Op == session.OpConflict && ch.Key == key && ch.OldKey == copyKey
	}) {
		t.Errorf("watchers were told %+v; want a conflict of %s (copy %q)", changes, key, copyKey)
	}
}

// checkConflictCopy checks our conflict copy of key (wantCopy; "" for
// none) in the store (all), and that the open handle h follows it, and
// returns its key.
func checkConflictCopy(t *testing.T, c *session.Context, st *memstore.Store, h *session.File, all map[string]string, key, wantName, wantCopy string) (copyKey string) {
	t.Helper()
	copies := conflictCopies(all, key)
	switch {
	case wantCopy == "" && len(copies) != 0:
		t.Errorf("conflict copies %v, want none", copies)
		return ""
	case wantCopy != "" && len(copies) != 1:
		t.Fatalf("conflict copies %v, want one", copies)
	case wantCopy == "":
		return ""
	}
	copyKey = copies[0]
	if !strings.Contains(copyKey, ".conflict-me-") {
		t.Errorf("conflict copy %s not named by the agent", copyKey)
	}
	if got := all[copyKey]; got != wantCopy {
		t.Errorf("conflict copy %s = %q, want %q", copyKey, got, wantCopy)
	}
	// The open handle follows ours to its new key.
	if got := h.Key(); got != copyKey {
		t.Errorf("handle's key = %s, want %s", got, copyKey)
	}
	if _, err := h.Append([]byte("more\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	all = stored(t, st)
	if got := all[copyKey]; got != wantCopy+"more\n" {
		t.Errorf("after a write through the open handle, %s = %q, want %q", copyKey, got, wantCopy+"more\n")
	}
	if got := all[key]; got != wantName {
		t.Errorf("after a write through the open handle, %s = %q, want %q", key, got, wantName)
	}
	return copyKey
}

// TestDeleteVersusTheirSave: a key the session removed and another writer
// saved since comes back, except under last-writer-wins.
func TestDeleteVersusTheirSave(t *testing.T) {
	const key = "memory/gone.md"
	for _, tt := range []struct {
		policy  session.ConflictPolicy
		want    string // "" : deleted
		outcome string
	}{
		{session.KeepBoth, "theirs\n", session.OutcomeRestored},
		{session.Merge, "theirs\n", session.OutcomeRestored},
		{session.LastWriterWins, "", session.OutcomeDeleted},
	} {
		t.Run(tt.policy.String(), func(t *testing.T) {
			st := memstore.New()
			other := st.Other()
			if err := other.Set(key, []byte("base\n")); err != nil {
				t.Fatal(err)
			}
			c, evs := policySession(t, st, tt.policy, nil)
			if err := c.Delete(key); err != nil {
				t.Fatal(err)
			}
			if err := other.Set(key, []byte("theirs\n")); err != nil {
				t.Fatal(err)
			}
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			got, ok := stored(t, st)[key]
			if tt.want == "" && ok {
				t.Errorf("store still has %s = %q, want it deleted", key, got)
			}
			if tt.want != "" {
				if got != tt.want {
					t.Errorf("store %s = %q, %v; want %q", key, got, ok, tt.want)
				}
				if v, ok := c.Get(key); !ok || string(v) != tt.want || c.Pending().Dirty(key) {
					t.Errorf("session %s = %q, %v, dirty %v; want %q clean", key, v, ok, c.Pending().Dirty(key), tt.want)
				}
			}
			if !slices.ContainsFunc(*evs, func(e session.Event) bool {
				return e.Op == session.EventConflict && e.Key == key && e.Outcome == tt.outcome
			}) {
				t.Errorf("no conflict event with outcome %s in %+v", tt.outcome, *evs)
			}
		})
	}
}

// TestExternalChangeOfADirtyKeyWaitsForTheFlush: under a policy the watch
// feed's change of a dirty key makes no conflict copy at once; the flush
// resolves it.
func TestExternalChangeOfADirtyKeyWaitsForTheFlush(t *testing.T) {
	const key = "memory/w.md"
	st := memstore.New()
	other := st.Other()
	other.Set(key, []byte("base\n"))
	c, _ := policySession(t, st, session.KeepBoth, nil)
	if err := c.Set(key, []byte("ours\n")); err != nil {
		t.Fatal(err)
	}
	other.Set(key, []byte("theirs\n"))
	got, _ := st.Load(t.Context(), key)
	if ck, err := c.External().Apply(got[0]); err != nil || ck != "" {
		t.Fatalf("ApplyExternal = %q, %v; want no conflict copy yet", ck, err)
	}
	if v, _ := c.Get(key); string(v) != "ours\n" || !c.Pending().Dirty(key) {
		t.Fatalf("session %s = %q dirty %v, want ours, dirty", key, v, c.Pending().Dirty(key))
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	all := stored(t, st)
	if all[key] != "theirs\n" {
		t.Errorf("store %s = %q, want theirs", key, all[key])
	}
	if cs := conflictCopies(all, key); len(cs) != 1 || all[cs[0]] != "ours\n" {
		t.Errorf("conflict copies %v (%v), want one holding ours", cs, all)
	}
}

// TestRevAttr: user.memfs.rev is the store's revision of a clean file,
// absent while it is dirty, new after a flush, and read-only.
func TestRevAttr(t *testing.T) {
	const key = "memory/r.md"
	for _, p := range []session.ConflictPolicy{session.KeepBeside, session.KeepBoth} {
		t.Run(p.String(), func(t *testing.T) {
			st := memstore.New()
			st.Other().Set(key, []byte("one\n"))
			c, _ := policySession(t, st, p, nil)
			rev := func() (string, bool) {
				t.Helper()
				v, err := c.XAttrs().Get(key, meta.Rev)
				names, lerr := c.XAttrs().List(key)
				if lerr != nil {
					t.Fatal(lerr)
				}
				listed := slices.Contains(names, meta.Rev)
				if err != nil {
					if !errors.Is(err, session.ErrNoXAttr) {
						t.Fatalf("GetXAttr(rev) = %v, want ErrNoXAttr", err)
					}
					if listed {
						t.Errorf("rev listed (%v) but absent", names)
					}
					return "", false
				}
				if !listed {
					t.Errorf("rev %s present but not listed in %v", v, names)
				}
				return string(v), true
			}
			r1, ok := rev()
			if want := strconv.FormatInt(st.Rev(), 10); !ok || r1 != want {
				t.Fatalf("rev of a clean file = %q, %v; want %s", r1, ok, want)
			}
			if err := c.Set(key, []byte("two\n")); err != nil {
				t.Fatal(err)
			}
			if r, ok := rev(); ok {
				t.Errorf("rev of a dirty file = %q, want none", r)
			}
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			r2, ok := rev()
			if want := strconv.FormatInt(st.Rev(), 10); !ok || r2 != want || r2 == r1 {
				t.Errorf("rev after a flush = %q, %v; want %s (was %s)", r2, ok, want, r1)
			}
			if err := c.XAttrs().Set(t.Context(), key, meta.Rev, []byte("7"), 0); !errors.Is(err, meta.ErrReadOnly) {
				t.Errorf("SetXAttr(rev) = %v, want meta.ErrReadOnly (EPERM)", err)
			}
			if err := c.XAttrs().Remove(t.Context(), key, meta.Rev); !errors.Is(err, meta.ErrReadOnly) {
				t.Errorf("RemoveXAttr(rev) = %v, want meta.ErrReadOnly (EPERM)", err)
			}
			if got, _ := st.Load(t.Context(), key); got[0].Info.XAttrs[meta.Rev] != nil {
				t.Errorf("the store got %s: %q", meta.Rev, got[0].Info.XAttrs[meta.Rev])
			}
		})
	}
}

// TestReplayWithAStaleBase: a change journaled before a crash, over a
// version another writer replaced before the restart, is a conflict after
// the replay, resolved by the policy, not an overwrite.
func TestReplayWithAStaleBase(t *testing.T) {
	const key, removed = "memory/j.md", "memory/rm.md"
	for _, tt := range []struct {
		policy      session.ConflictPolicy
		wantName    string
		wantCopy    string
		wantRemoved string // "" : deleted
	}{
		{session.KeepBoth, "theirs\n", "ours\n", "theirs too\n"},
		{session.Merge, "theirs\n", "ours\n", "theirs too\n"}, // no base value after a crash: keep both
		{session.LastWriterWins, "ours\n", "", ""},
	} {
		t.Run(tt.policy.String(), func(t *testing.T) {
			st := memstore.New()
			other := st.Other()
			other.Set(key, []byte("base\n"))
			other.Set(removed, []byte("base\n"))
			path := filepath.Join(t.TempDir(), "journal")
			j, _, err := journal.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			c, _ := policySession(t, st, tt.policy, func(o *session.Options) { o.Journal = j })
			if err := c.Set(key, []byte("ours\n")); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(removed); err != nil {
				t.Fatal(err)
			}
			j.Close() // kill -9: no flush
			other.Set(key, []byte("theirs\n"))
			other.Set(removed, []byte("theirs too\n"))

			j2, recs, err := journal.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer j2.Close()
			c2, _ := policySession(t, st, tt.policy, func(o *session.Options) { o.Journal = j2 })
			if err := c2.Pending().Replay(recs); err != nil {
				t.Fatal(err)
			}
			if err := c2.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			all := stored(t, st)
			if all[key] != tt.wantName {
				t.Errorf("store %s = %q, want %q", key, all[key], tt.wantName)
			}
			cs := conflictCopies(all, key)
			switch {
			case tt.wantCopy == "" && len(cs) > 0:
				t.Errorf("conflict copies %v, want none", cs)
			case tt.wantCopy != "" && (len(cs) != 1 || all[cs[0]] != tt.wantCopy):
				t.Errorf("conflict copies %v (%v), want one holding %q", cs, all, tt.wantCopy)
			}
			if got, ok := all[removed]; got != tt.wantRemoved || ok != (tt.wantRemoved != "") {
				t.Errorf("store %s = %q, %v; want %q", removed, got, ok, tt.wantRemoved)
			}
		})
	}
}

// TestConflictRoundsEnd: another writer rewrites a key before every Apply
// of the session's flush (every round meets a conflict), or in a loop
// beside it; every flush ends, and the last value of each side is in the
// store (under the key, a conflict copy, or merged).
func TestConflictRoundsEnd(t *testing.T) {
	const key = "memory/hot.md"
	for _, p := range []session.ConflictPolicy{session.KeepBoth, session.Merge, session.LastWriterWins} {
		for _, racing := range []bool{false, true} {
			name := p.String() + "/every-apply"
			if racing {
				name = p.String() + "/racing"
			}
			t.Run(name, func(t *testing.T) {
				mem := memstore.New()
				other := mem.Other()
				other.Set(key, []byte("start\n"))
				var mu sync.Mutex
				var theirs string
				n := 0
				write := func() {
					mu.Lock()
					defer mu.Unlock()
					v := fmt.Sprintf("other %d\n", n)
					n++
					if err := other.Set(key, []byte(v)); err != nil {
						t.Error(err)
					}
					theirs = v
				}
				var st backend.Store = mem
				if !racing {
					st = errorstore.Wrap(mem, func(op errorstore.Op, _ []string) error {
						if op == errorstore.OpApply {
							write()
						}
						return nil
					})
				}
				c, evs := policySession(t, st, p, nil)
				var stop atomic.Bool
				var wg sync.WaitGroup
				if racing {
					wg.Go(func() {
						for !stop.Load() {
							write()
						}
					})
				}
				var ours string
				for i := range 3 {
					ours = fmt.Sprintf("ours %d\n", i)
					if err := c.Set(key, []byte(ours)); err != nil {
						t.Fatal(err)
					}
					ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
					err := c.Flush(ctx)
					cancel()
					if err != nil {
						stop.Store(true)
						wg.Wait()
						t.Fatalf("Flush %d = %v", i, err)
					}
					// A racing writer overwrites blindly (memstore's Other
					// checks no version): only the flush's end is checked.
					if all := stored(t, mem); !racing && !holds(all, ours) {
						t.Errorf("after flush %d, %q is nowhere in the store: %v", i, ours, all)
					}
				}
				stop.Store(true)
				wg.Wait()
				if racing {
					// The writer stopped: one more change goes through.
					ours = "ours, last\n"
					if err := c.Set(key, []byte(ours)); err != nil {
						t.Fatal(err)
					}
					if err := c.Flush(t.Context()); err != nil {
						t.Fatal(err)
					}
					if all := stored(t, mem); !holds(all, ours) {
						t.Errorf("the store %v lacks ours %q", all, ours)
					}
					return
				}
				mu.Lock()
				last := theirs
				mu.Unlock()
				all := stored(t, mem)
				if !holds(all, ours) || !holds(all, last) {
					t.Errorf("the store %v lacks ours %q or theirs %q", all, ours, last)
				}
				var outcomes []string
				for _, e := range *evs {
					if e.Op == session.EventConflict {
						outcomes = append(outcomes, e.Outcome)
					}
				}
				if len(outcomes) == 0 {
					t.Fatal("no conflict event, though every Apply met one")
				}
				if p == session.LastWriterWins && !slices.Contains(outcomes, session.OutcomeKeptBeside) {
					t.Errorf("last-writer-wins against a writer before every Apply: outcomes %v, want the keep-beside fallback", outcomes)
				}
			})
		}
	}
}

// holds reports whether some value of all contains v.
func holds(all map[string]string, v string) bool {
	for _, s := range all {
		if strings.Contains(s, v) {
			return true
		}
	}
	return false
}

// TestUnavailableKeepsEverythingDirty: a flush the store cannot take
// because it cannot be reached leaves every change dirty and journaled.
func TestUnavailableKeepsEverythingDirty(t *testing.T) {
	for _, p := range []session.ConflictPolicy{session.KeepBeside, session.KeepBoth} {
		t.Run(p.String(), func(t *testing.T) {
			mem := memstore.New()
			mem.Other().Set("memory/old.md", []byte("old\n"))
			var down atomic.Bool
			st := errorstore.Wrap(mem, func(op errorstore.Op, keys []string) error {
				if down.Load() && op != errorstore.OpList {
					return fmt.Errorf("etcd: %w", backend.ErrUnavailable)
				}
				return nil
			})
			path := filepath.Join(t.TempDir(), "journal")
			j, _, err := journal.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			c, _ := policySession(t, st, p, func(o *session.Options) { o.Journal = j })
			c.Set("memory/a.md", []byte("a\n"))
			c.Delete("memory/old.md")
			down.Store(true)
			err = c.Flush(t.Context())
			if !errors.Is(err, backend.ErrUnavailable) {
				t.Fatalf("Flush = %v, want ErrUnavailable", err)
			}
			if !c.Pending().Dirty("memory/a.md") || !c.Pending().Removed("memory/old.md") {
				t.Errorf("after the failed flush: a.md dirty %v, old.md removed %v; want both", c.Pending().Dirty("memory/a.md"), c.Pending().Removed("memory/old.md"))
			}
			if h, err := c.Open(t.Context(), "memory/a.md"); err != nil {
				t.Fatal(err)
			} else if err := h.Sync(t.Context()); !errors.Is(err, backend.ErrUnavailable) {
				t.Errorf("fsync = %v, want ErrUnavailable (EIO at the mount)", err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			copyPath := path + ".copy"
			if err := os.WriteFile(copyPath, b, 0o600); err != nil {
				t.Fatal(err)
			}
			jc, recs, err := journal.Open(copyPath)
			if err != nil {
				t.Fatal(err)
			}
			jc.Close()
			var keys []string
			for _, r := range recs {
				for _, e := range r.Entries {
					keys = append(keys, e.Key)
				}
				keys = append(keys, r.Removed...)
			}
			if !slices.Contains(keys, "memory/a.md") || !slices.Contains(keys, "memory/old.md") {
				t.Errorf("journal holds %v, want memory/a.md and memory/old.md", keys)
			}
			down.Store(false)
			if err := c.Flush(t.Context()); err != nil {
				t.Fatalf("Flush once the store is back = %v", err)
			}
			all := stored(t, mem)
			if _, ok := all["memory/old.md"]; ok || all["memory/a.md"] != "a\n" {
				t.Errorf("store after recovery = %v", all)
			}
		})
	}
}

// TestTwoMountsLoseNothing: two sessions over one store (two mounts of a
// shared store) change the same few keys each round — a whole value, an
// appended line, a removal — and flush at the same time. Neither saw the
// other's change of the round before making its own, so every value either
// wrote in the round must be in the store afterwards: under its key, in a
// conflict copy, or in a merge.
func TestTwoMountsLoseNothing(t *testing.T) {
	keys := []string{"memory/a.md", "memory/b.md", "memory/c.md"}
	for _, p := range []session.ConflictPolicy{session.KeepBoth, session.Merge} {
		t.Run(p.String(), func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 7))
			mem := memstore.New()
			if err := mem.Other().Set("memory/x.md", []byte("x\n")); err != nil { // memory/ exists
				t.Fatal(err)
			}
			a, _ := policySession(t, mem, p, func(o *session.Options) { o.Agent = "a" })
			b, _ := policySession(t, mem, p, func(o *session.Options) { o.Agent = "b" })
			for round := range 40 {
				var written []string
				for i, c := range []*session.Context{a, b} {
					key := keys[rng.IntN(len(keys))]
					v := fmt.Sprintf("%c%d\n", 'a'+i, round)
					switch rng.IntN(4) {
					case 0, 1:
						if err := c.Set(key, []byte(v)); err != nil {
							t.Fatal(err)
						}
						written = append(written, v)
					case 2:
						h, err := c.Create(key, session.CreateOptions{Mode: 0o644})
						if err != nil {
							t.Fatal(err)
						}
						if _, err := h.Append([]byte(v)); err != nil {
							t.Fatal(err)
						}
						if err := h.Close(); err != nil {
							t.Fatal(err)
						}
						written = append(written, v)
					case 3:
						if err := c.Delete(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
							t.Fatal(err)
						}
					}
				}
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i, c := range []*session.Context{a, b} {
					wg.Go(func() { errs[i] = c.Flush(t.Context()) })
				}
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("round %d: flush: %v", round, err)
				}
				all := stored(t, mem)
				for _, v := range written {
					if !holds(all, v) {
						t.Fatalf("round %d: %q is nowhere in the store: %v", round, v, all)
					}
				}
			}
		})
	}
}

// TestConflictsOfRenamesAndLinks: a file renamed away from a key another
// writer changed meanwhile leaves theirs at the old key; a node with hard
// links keeps its names, and theirs is kept beside.
func TestConflictsOfRenamesAndLinks(t *testing.T) {
	t.Run("rename", func(t *testing.T) {
		mem := memstore.New()
		mem.Other().Set("memory/a.md", []byte("base\n"))
		c, evs := policySession(t, mem, session.KeepBoth, nil)
		if err := c.Rename(t.Context(), "memory/a.md", "memory/b.md", 0); err != nil {
			t.Fatal(err)
		}
		mem.Other().Set("memory/a.md", []byte("theirs\n"))
		if err := c.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		all := stored(t, mem)
		if all["memory/a.md"] != "theirs\n" || all["memory/b.md"] != "base\n" {
			t.Errorf("store = %v; want theirs at a.md, ours renamed to b.md", all)
		}
		if v, ok := c.Get("memory/a.md"); !ok || string(v) != "theirs\n" {
			t.Errorf("session a.md = %q, %v; want theirs", v, ok)
		}
		if !slices.ContainsFunc(*evs, func(e session.Event) bool {
			return e.Op == session.EventConflict && e.Key == "memory/a.md" && e.Outcome == session.OutcomeRestored
		}) {
			t.Errorf("events %+v lack the restored conflict", *evs)
		}
	})
	t.Run("hard link", func(t *testing.T) {
		mem := memstore.New()
		mem.Other().Set("memory/a.md", []byte("base\n"))
		c, _ := policySession(t, mem, session.KeepBoth, nil)
		if err := c.Resolve(t.Context(), "memory/a.md"); err != nil {
			t.Fatal(err)
		}
		if err := c.Link(t.Context(), "memory/a.md", "memory/l.md"); err != nil {
			t.Fatal(err)
		}
		if err := c.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := c.Set("memory/a.md", []byte("ours\n")); err != nil {
			t.Fatal(err)
		}
		mem.Other().Set("memory/a.md", []byte("theirs\n"))
		if err := c.Flush(t.Context()); err != nil {
			t.Fatal(err)
		}
		all := stored(t, mem)
		if all["memory/a.md"] != "ours\n" || all["memory/l.md"] != "ours\n" {
			t.Errorf("store = %v; want ours under both names", all)
		}
		if cs := conflictCopies(all, "memory/a.md"); len(cs) != 1 || all[cs[0]] != "theirs\n" {
			t.Errorf("conflict copies %v of %v, want one holding theirs", cs, all)
		}
	})
}

// TestConflictsInABatchTooLarge: a store that takes only small batches
// (etcd: 64 keys) gets a policy's flush in parts; the conflicts of some
// parts are resolved while the others are saved, and nothing is lost.
func TestConflictsInABatchTooLarge(t *testing.T) {
	mem := memstore.New()
	other := mem.Other()
	for i := range 10 {
		other.Set(fmt.Sprintf("memory/%d.md", i), []byte("base\n"))
	}
	var applies atomic.Int32
	st := errorstore.Wrap(mem, func(op errorstore.Op, keys []string) error {
		if op == errorstore.OpApply {
			applies.Add(1)
			if len(keys) > 3 {
				return fmt.Errorf("test: %d keys: %w", len(keys), backend.ErrBatchTooLarge)
			}
		}
		return nil
	})
	c, evs := policySession(t, st, session.KeepBoth, nil)
	for i := range 9 {
		if err := c.Set(fmt.Sprintf("memory/%d.md", i), []byte(fmt.Sprintf("ours %d\n", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Delete("memory/9.md"); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{2, 7, 9} {
		other.Set(fmt.Sprintf("memory/%d.md", i), []byte(fmt.Sprintf("theirs %d\n", i)))
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatalf("Flush = %v", err)
	}
	all := stored(t, mem)
	for i := range 10 {
		key := fmt.Sprintf("memory/%d.md", i)
		switch i {
		case 2, 7:
			cs := conflictCopies(all, key)
			if all[key] != fmt.Sprintf("theirs %d\n", i) || len(cs) != 1 || all[cs[0]] != fmt.Sprintf("ours %d\n", i) {
				t.Errorf("%s = %q, copies %v; want theirs under the name and ours beside", key, all[key], cs)
			}
		case 9:
			if all[key] != "theirs 9\n" {
				t.Errorf("%s = %q, want theirs back", key, all[key])
			}
		default:
			if all[key] != fmt.Sprintf("ours %d\n", i) {
				t.Errorf("%s = %q, want ours", key, all[key])
			}
		}
		if c.Pending().Dirty(key) {
			t.Errorf("%s still dirty", key)
		}
	}
	n := 0
	for _, e := range *evs {
		if e.Op == session.EventConflict {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d conflict events, want 3: %+v", n, *evs)
	}
	if applies.Load() < 4 {
		t.Errorf("%d applies: the batch was never cut", applies.Load())
	}
}

// TestMergeOfAttributes: under merge, our attribute change and their
// content change both survive; different values of one attribute on the
// two sides keep both files.
func TestMergeOfAttributes(t *testing.T) {
	const key = "memory/t.md"
	for _, tt := range []struct {
		name       string
		theirsTags string // "" : theirs sets none
		wantName   string
		wantTags   string
		wantCopies int
	}{
		{"content and attribute", "", "a\ntheirs\n", "ours", 0},
		{"same attribute, two values", "theirs", "a\ntheirs\n", "theirs", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem := memstore.New()
			mem.Other().Set(key, []byte("a\n"))
			c, _ := policySession(t, mem, session.Merge, nil)
			if err := c.Resolve(t.Context(), key); err != nil {
				t.Fatal(err)
			}
			if err := c.XAttrs().Set(t.Context(), key, meta.Tags, []byte("ours"), 0); err != nil {
				t.Fatal(err)
			}
			theirs := backend.Entry{Key: key, Value: []byte("a\ntheirs\n"), Info: backend.Info{Mode: 0o644}}
			if tt.theirsTags != "" {
				theirs.Info.XAttrs = map[string][]byte{meta.Tags: []byte(tt.theirsTags)}
			}
			if err := mem.Save(t.Context(), theirs); err != nil { // as another mount's flush
				t.Fatal(err)
			}
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			got, err := mem.Load(t.Context(), key)
			if err != nil {
				t.Fatal(err)
			}
			if string(got[0].Value) != tt.wantName || string(got[0].Info.XAttrs[meta.Tags]) != tt.wantTags {
				t.Errorf("store %s = %q, tags %q; want %q, tags %q", key, got[0].Value, got[0].Info.XAttrs[meta.Tags], tt.wantName, tt.wantTags)
			}
			if cs := conflictCopies(stored(t, mem), key); len(cs) != tt.wantCopies {
				t.Errorf("conflict copies %v, want %d", cs, tt.wantCopies)
			}
		})
	}
}

// TestCrashAfterKeepBoth: the process dies after keep-both moved ours to
// its conflict copy and before a flush saved it; the replay puts ours in
// the copy only, not back under the key (which would make a second copy).
func TestCrashAfterKeepBoth(t *testing.T) {
	const key = "memory/k.md"
	mem := memstore.New()
	other := mem.Other()
	other.Set(key, []byte("base\n"))
	var applies atomic.Int32
	st := errorstore.Wrap(mem, func(op errorstore.Op, _ []string) error {
		if op == errorstore.OpApply && applies.Add(1) > 1 {
			return fmt.Errorf("etcd: %w", backend.ErrUnavailable) // down after the conflict
		}
		return nil
	})
	path := filepath.Join(t.TempDir(), "journal")
	j, _, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := policySession(t, st, session.KeepBoth, func(o *session.Options) { o.Journal = j })
	if err := c.Set(key, []byte("ours\n")); err != nil {
		t.Fatal(err)
	}
	other.Set(key, []byte("theirs\n"))
	if err := c.Flush(t.Context()); !errors.Is(err, backend.ErrUnavailable) {
		t.Fatalf("Flush = %v, want ErrUnavailable", err)
	}
	j.Close() // kill -9

	j2, recs, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	c2, _ := policySession(t, mem, session.KeepBoth, func(o *session.Options) { o.Journal = j2 })
	if err := c2.Pending().Replay(recs); err != nil {
		t.Fatal(err)
	}
	if err := c2.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	all := stored(t, mem)
	cs := conflictCopies(all, key)
	if all[key] != "theirs\n" || len(cs) != 1 || all[cs[0]] != "ours\n" {
		t.Errorf("store = %v; want theirs under %s and ours in one conflict copy", all, key)
	}
}

// TestReplayOfWhatTheStoreHoldsIsNoConflict: killed between a flush's save
// and the journal's truncate, the next process replays changes the store
// already holds; the version they were made on is gone, but what replaced
// it is exactly what the replay saves: no other writer, no conflict copy.
// (Found by TestCrashReplayModel, seed 1795882726310281411, on the dir store.)
func TestReplayOfWhatTheStoreHoldsIsNoConflict(t *testing.T) {
	const key = "memory/j.md"
	for _, tt := range []struct {
		name   string
		policy session.ConflictPolicy
		open   func(t *testing.T, dir string) backend.Store
	}{
		{"dir/keep-beside", session.KeepBeside, func(t *testing.T, dir string) backend.Store {
			st, err := dirstore.Open(filepath.Join(dir, "store"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
		{"memstore/keep-beside", session.KeepBeside, func(*testing.T, string) backend.Store { return memstore.New() }},
		{"memstore/keep-both", session.KeepBoth, func(*testing.T, string) backend.Store { return memstore.New() }},
		{"memstore/merge", session.Merge, func(*testing.T, string) backend.Store { return memstore.New() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			st, p := tt.open(t, dir), tt.policy
			path := filepath.Join(dir, "journal")
			j, _, err := journal.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			cj := &crashJournal{Journal: j}
			c, _ := policySession(t, st, p, func(o *session.Options) { o.Journal = cj })
			if err := c.Set(key, []byte("base\n")); err != nil {
				t.Fatal(err)
			}
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := c.Set(key, []byte("ours\n")); err != nil {
				t.Fatal(err)
			}
			cj.skipTruncate = true // kill -9 right after the save
			if err := c.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			j.Close()

			j2, recs, err := journal.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer j2.Close()
			if len(recs) == 0 {
				t.Fatal("the journal kept no record: the test replays nothing")
			}
			c2, evs := policySession(t, st, p, func(o *session.Options) { o.Journal = j2 })
			if err := c2.Pending().Replay(recs); err != nil {
				t.Fatal(err)
			}
			if err := c2.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			all := stored(t, st)
			if all[key] != "ours\n" {
				t.Errorf("store %s = %q, want %q", key, all[key], "ours\n")
			}
			if cs := conflictCopies(all, key); len(cs) > 0 {
				t.Errorf("conflict copies %v with no other writer", cs)
			}
			for _, e := range *evs {
				if e.Op == session.EventConflict {
					t.Errorf("conflict event %+v with no other writer", e)
				}
			}
		})
	}
}

// TestNameVacatedBesideAMovedCopyIsNoConflict: a stored file renamed away
// leaves its copy at its old key until the flush; a new file made there
// and removed (or renamed away) before the flush must not make the session
// forget that copy. It expected the key absent, so the next file made
// there met the session's own copy as another writer's: a conflict copy
// with no other writer. Killed between that flush's save and its journal
// truncate, the replay must not make one either. (TestCrashReplayModel,
// seed 1795882726310281411, on the dir store, shrunk.)
func TestNameVacatedBesideAMovedCopyIsNoConflict(t *testing.T) {
	const key, moved, away = "memory/c.md", "memory/f.md", "memory/g.md"
	stores := []struct {
		name   string
		policy session.ConflictPolicy
		open   func(t *testing.T, dir string) backend.Store
	}{
		{"dir/keep-beside", session.KeepBeside, func(t *testing.T, dir string) backend.Store { return openStore(t, filepath.Join(dir, "store")) }},
		{"memstore/keep-beside", session.KeepBeside, func(*testing.T, string) backend.Store { return memstore.New() }},
		{"memstore/keep-both", session.KeepBoth, func(*testing.T, string) backend.Store { return memstore.New() }},
		{"memstore/merge", session.Merge, func(*testing.T, string) backend.Store { return memstore.New() }},
	}
	vacates := []struct {
		name   string
		vacate func(c *session.Context) error
		want   map[string]string
	}{
		{"removed", func(c *session.Context) error { return c.Delete(key) },
			map[string]string{key: "c\n", moved: "a\n"}},
		{"renamed away", func(c *session.Context) error { return c.Rename(context.Background(), key, away, 0) },
			map[string]string{key: "c\n", moved: "a\n", away: "b\n"}},
	}
	for _, s := range stores {
		for _, v := range vacates {
			for _, killed := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/killed=%v", s.name, v.name, killed), func(t *testing.T) {
					dir := t.TempDir()
					st := s.open(t, dir)
					path := filepath.Join(dir, "journal")
					j, _, err := journal.Open(path)
					if err != nil {
						t.Fatal(err)
					}
					defer j.Close()
					cj := &crashJournal{Journal: j}
					c, evs := policySession(t, st, s.policy, func(o *session.Options) { o.Journal = cj })
					step := func(err error) {
						t.Helper()
						if err != nil {
							t.Fatal(err)
						}
					}
					step(c.Set(key, []byte("a\n")))
					step(c.Flush(t.Context()))
					step(c.Rename(t.Context(), key, moved, 0))
					step(c.Set(key, []byte("b\n")))
					step(v.vacate(c))
					step(c.Set(key, []byte("c\n")))
					cj.skipTruncate = killed // kill -9 right after the save
					step(c.Flush(t.Context()))
					if killed {
						j.Close()
						j2, recs, err := journal.Open(path)
						step(err)
						defer j2.Close()
						c2, evs2 := policySession(t, st, s.policy, func(o *session.Options) { o.Journal = j2 })
						step(c2.Pending().Replay(recs))
						step(c2.Flush(t.Context()))
						*evs = append(*evs, *evs2...)
					}
					all := stored(t, st)
					for k, want := range v.want {
						if all[k] != want {
							t.Errorf("store %s = %q, want %q", k, all[k], want)
						}
					}
					for k := range all {
						if strings.Contains(k, ".conflict-") {
							t.Errorf("conflict copy %s (%q) with no other writer", k, all[k])
						}
					}
					for _, e := range *evs {
						if e.Op == session.EventConflict {
							t.Errorf("conflict event %+v with no other writer", e)
						}
					}
				})
			}
		}
	}
}
