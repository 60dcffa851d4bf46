package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
)

// The subtests of what a shared store adds: revisions (Options.Revisions),
// Batch.FailOnConflict, backend.SysSwapper and backend.Presence.

// presenceWait bounds how long a lease-based store may take to drop a
// registration that was left or whose context is done.
const presenceWait = 15 * time.Second

// testRevisions checks Info.Rev on a store that numbers its writes: Save
// writes a revision into the caller's entries, Load and List report it,
// every later write of keys (a Delete too) is numbered higher, an atomic
// batch has one revision, and versions that differ only in revision do
// not match.
func (s suite) testRevisions(t *testing.T) {
	st := s.fresh(t)
	ctx := t.Context()
	es := []backend.Entry{entry("a", []byte("a1")), entry("b", []byte("b1"))}
	es[0].Info.Rev = 1 << 50 // a given revision is ignored
	save(t, st, es...)
	if !s.opts.Revisions {
		wrote, loaded := es[0].Info.Rev, loadOne(t, st, "a").Info.Rev
		if loaded != 0 || (wrote != 0 && wrote != 1<<50) {
			t.Fatalf("the store sets Info.Rev (Save wrote %d, Load gave %d): set Options.Revisions so that the suite checks it", wrote, loaded)
		}
		t.Skip("the store does not number its writes (Options.Revisions)")
	}
	revOf := func(key string) int64 {
		t.Helper()
		return loadOne(t, st, key).Info.Rev
	}
	listed := func() map[string]int64 {
		t.Helper()
		m := map[string]int64{}
		for _, e := range s.list(t, st) {
			m[e.Key] = e.Info.Rev
		}
		return m
	}
	r1 := es[0].Info.Rev
	if r1 <= 0 || r1 >= 1<<50 {
		t.Fatalf("Save wrote Rev %d into the entry, want the store's revision (> 0, not the one given)", r1)
	}
	if es[1].Info.Rev <= 0 {
		t.Errorf("Save wrote Rev %d into its second entry, want > 0", es[1].Info.Rev)
	}
	if got := revOf("a"); got != r1 {
		t.Errorf("Load(a).Rev = %d, want %d (what Save wrote back)", got, r1)
	}
	if got := listed()["b"]; got != es[1].Info.Rev {
		t.Errorf("List: b Rev = %d, want %d (what Save wrote back)", got, es[1].Info.Rev)
	}

	// The same entry saved again: size and time equal, revision not.
	v1 := backend.VersionOf(loadOne(t, st, "a").Info)
	again := []backend.Entry{entry("a", []byte("a1"))}
	save(t, st, again...)
	r2 := again[0].Info.Rev
	if r2 <= max(r1, es[1].Info.Rev) {
		t.Fatalf("a later Save wrote Rev %d, want more than %d", r2, max(r1, es[1].Info.Rev))
	}
	if got := listed(); got["a"] != r2 || got["b"] != es[1].Info.Rev {
		t.Errorf("List Revs = %v, want a %d (saved again), b %d (untouched)", got, r2, es[1].Info.Rev)
	}
	v2 := backend.VersionOf(loadOne(t, st, "a").Info)
	if v1.Matches(v2) || v2.Matches(v1) {
		t.Errorf("versions %+v and %+v match, want the revisions to tell two saves of one entry apart", v1, v2)
	}
	if !v2.Matches(v2) {
		t.Errorf("version %+v does not match itself", v2)
	}

	if err := st.Delete(ctx, "b"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	c := []backend.Entry{entry("c", []byte("c1"))}
	save(t, st, c...)
	if c[0].Info.Rev <= r2 {
		t.Errorf("a Save after a Delete wrote Rev %d, want more than %d", c[0].Info.Rev, r2)
	}
	last := c[0].Info.Rev

	if vs, ok := st.(backend.Versioned); ok {
		// A conditional save expecting v1, which differs from the stored
		// version only in its revision, is a conflict.
		e := []backend.Entry{entry("a", []byte("a1"))}
		conflicts, err := vs.SaveIf(ctx, e, []backend.Version{v1})
		if err != nil {
			t.Fatalf("SaveIf: %v", err)
		}
		if len(conflicts) != 1 {
			t.Errorf("SaveIf expecting an older revision of an identical entry: conflicts %v, want one for a", conflicts)
		}
		if e[0].Info.Rev <= last || revOf("a") != e[0].Info.Rev {
			t.Errorf("SaveIf wrote Rev %d (Load: %d), want one revision more than %d", e[0].Info.Rev, revOf("a"), last)
		}
		last = e[0].Info.Rev
	}
	if bt, ok := st.(backend.Batcher); ok {
		b := backend.Batch{Saves: []backend.Entry{entry("d", []byte("d1")), entry("e", []byte("e1"))}, Deletes: []string{"c"}}
		if _, err := bt.Apply(ctx, b); err != nil {
			t.Fatalf("Apply: %v", err)
		}
		rd, re := b.Saves[0].Info.Rev, b.Saves[1].Info.Rev
		if rd <= last || rd != re {
			t.Errorf("Apply wrote Revs %d and %d, want one revision for the batch, more than %d", rd, re, last)
		}
		if got := listed(); got["d"] != rd || got["e"] != rd {
			t.Errorf("List Revs = %v, want d and e at %d", got, rd)
		}
	}
}

// testFailOnConflict checks Batch.FailOnConflict on a store that is
// Batcher and Versioned: a save or delete whose key another writer changed
// fails the whole batch with a *backend.ConflictError naming each such
// key and the version found, and writes nothing; a key expected absent
// that exists conflicts; a key expected present that is gone is saved; a
// delete of a key already gone is not a conflict; versions that match
// apply.
func (s suite) testFailOnConflict(t *testing.T) {
	st := s.fresh(t)
	bt, ok := st.(backend.Batcher)
	_, ver := st.(backend.Versioned)
	if !ok || !ver {
		t.Skip("the store is not backend.Batcher and backend.Versioned")
	}
	ctx := t.Context()
	// Each write of a key has its own size and time, so that versions
	// differ on a store without revisions too.
	n := 0
	write := func(key string) {
		t.Helper()
		n++
		e := entry(key, []byte(key+strings.Repeat("+", n)))
		e.Info.MTime = e.Info.MTime.Add(time.Duration(n) * time.Second)
		save(t, st, e)
	}
	version := func(key string) backend.Version {
		t.Helper()
		return backend.VersionOf(loadOne(t, st, key).Info)
	}
	// state is every key with its value, to show that a refused batch
	// wrote nothing.
	state := func() string {
		t.Helper()
		var b strings.Builder
		for _, e := range s.list(t, st) {
			fmt.Fprintf(&b, "%s=%s ", e.Key, loadOne(t, st, e.Key).Value)
		}
		return b.String()
	}
	conflictOf := func(err error) []backend.Conflict {
		t.Helper()
		var ce *backend.ConflictError
		if !errors.As(err, &ce) || !errors.Is(err, backend.ErrConflict) {
			t.Fatalf("Apply = %v, want a *backend.ConflictError matching ErrConflict", err)
		}
		return ce.Conflicts
	}
	for _, k := range []string{"a", "b", "c", "d", "x", "gone"} {
		write(k)
	}
	va, vc, vd, vx, vgone := version("a"), version("c"), version("d"), version("x"), version("gone")
	write("a") // another writer changes a and c, removes x and gone
	write("c")
	if err := st.Delete(ctx, "x", "gone"); err != nil {
		t.Fatal(err)
	}

	// A stale save and a stale delete, beside an unconditional save, a
	// matching save and an unconditional delete: all refused.
	before := state()
	_, err := bt.Apply(ctx, backend.Batch{
		Saves:          []backend.Entry{entry("a", []byte("ours")), entry("new", []byte("n")), entry("d", []byte("ours"))},
		Deletes:        []string{"c", "b"},
		Expect:         map[string]backend.Version{"a": va, "d": vd},
		ExpectDeleted:  map[string]backend.Version{"c": vc},
		FailOnConflict: true,
	})
	got := conflictOf(err)
	want := []backend.Conflict{{Key: "a", Found: version("a")}, {Key: "c", Found: version("c"), Delete: true}}
	slices.SortFunc(got, func(a, b backend.Conflict) int { return strings.Compare(a.Key, b.Key) })
	if !slices.Equal(got, want) {
		t.Errorf("conflicts %+v, want %+v", got, want)
	}
	if after := state(); after != before {
		t.Errorf("a batch refused for conflicts wrote: store %q, was %q", after, before)
	}

	// A key expected absent that another writer created.
	_, err = bt.Apply(ctx, backend.Batch{
		Saves:          []backend.Entry{entry("b", []byte("ours"))},
		Expect:         map[string]backend.Version{"b": {}},
		FailOnConflict: true,
	})
	if got, want := conflictOf(err), []backend.Conflict{{Key: "b", Found: version("b")}}; !slices.Equal(got, want) {
		t.Errorf("expecting b absent: conflicts %+v, want %+v", got, want)
	}
	if after := state(); after != before {
		t.Errorf("a batch refused for conflicts wrote: store %q, was %q", after, before)
	}

	// A key expected present that another writer removed is saved; a
	// delete of a key already gone is no conflict; matching versions
	// apply.
	va, vc = version("a"), version("c")
	conflicts, err := bt.Apply(ctx, backend.Batch{
		Saves:          []backend.Entry{entry("x", []byte("back")), entry("a", []byte("ours"))},
		Deletes:        []string{"gone", "c"},
		Expect:         map[string]backend.Version{"x": vx, "a": va},
		ExpectDeleted:  map[string]backend.Version{"gone": vgone, "c": vc},
		FailOnConflict: true,
	})
	if err != nil || len(conflicts) != 0 {
		t.Fatalf("Apply with every version matching or gone: %v, conflicts %v; want nil, none", err, conflicts)
	}
	if got, want := state(), "a=ours b=b++ d=d++++ x=back "; got != want {
		t.Errorf("after the batch: store %q, want %q", got, want)
	}
}

// testSysSwapper checks SwapSys on a store that claims backend.SysSwapper:
// it writes only when the guard holds exactly the old value (absent for
// nil, present and empty for an empty one), writes its puts and deletes
// together, writes nothing when refused, and loses no update when many
// writers race on one guard.
func (s suite) testSysSwapper(t *testing.T) {
	st := s.fresh(t)
	sw, ok := st.(backend.SysSwapper)
	if !ok {
		t.Skip("the store is not backend.SysSwapper")
	}
	ctx := t.Context()
	swap := func(guard string, old []byte, puts map[string][]byte, dels ...string) bool {
		t.Helper()
		ok, err := sw.SwapSys(ctx, guard, old, puts, dels)
		if err != nil {
			t.Fatalf("SwapSys(%s, %q): %v", guard, old, err)
		}
		return ok
	}
	// records is every system record with its value.
	records := func() string {
		t.Helper()
		l, err := sw.ListSys(ctx, "")
		if err != nil {
			t.Fatalf("ListSys: %v", err)
		}
		var b strings.Builder
		for _, e := range l {
			d, err := sw.LoadSys(ctx, e.Key)
			if err != nil {
				t.Fatalf("LoadSys(%s): %v", e.Key, err)
			}
			fmt.Fprintf(&b, "%s=%s ", e.Key, d)
		}
		return b.String()
	}
	expect := func(when, want string) {
		t.Helper()
		if got := records(); got != want {
			t.Errorf("%s: records %q, want %q", when, got, want)
		}
	}

	if !swap("head", nil, map[string][]byte{"head": []byte("1"), "log/1": []byte("a")}) {
		t.Fatal("SwapSys on an absent guard expecting nil refused")
	}
	expect("after the first swap", "head=1 log/1=a ")
	refused := []struct {
		name string
		old  []byte
	}{{"nil (absent)", nil}, {"a wrong value", []byte("0")}, {"empty", []byte{}}, {"a longer value", []byte("12")}}
	for _, tt := range refused {
		if swap("head", tt.old, map[string][]byte{"head": []byte("X"), "log/2": []byte("b")}, "log/1") {
			t.Errorf("SwapSys expecting %s over head=1 succeeded", tt.name)
		}
		expect("after a refused swap expecting "+tt.name, "head=1 log/1=a ")
	}
	if !swap("head", []byte("1"), map[string][]byte{"head": []byte("2"), "log/2": []byte("b")}, "log/1") {
		t.Fatal("SwapSys with the right old value refused")
	}
	expect("after the second swap", "head=2 log/2=b ")
	// The guard may be deleted, and then is absent.
	if !swap("head", []byte("2"), nil, "head") {
		t.Fatal("SwapSys deleting its guard refused")
	}
	expect("after deleting the guard", "log/2=b ")
	if !swap("head", nil, map[string][]byte{"head": {}}) {
		t.Fatal("SwapSys on a deleted guard expecting nil refused")
	}
	if swap("head", nil, map[string][]byte{"x": []byte("x")}) {
		t.Error("SwapSys expecting nil over an empty guard succeeded")
	}
	if !swap("head", []byte{}, map[string][]byte{"head": []byte("3")}) {
		t.Error("SwapSys expecting an empty guard refused")
	}
	expect("after the empty guard", "head=3 log/2=b ")
	if _, err := sw.SwapSys(ctx, "head", []byte("3"), map[string][]byte{"ok": nil, "../bad": []byte("x")}, nil); !errors.Is(err, backend.ErrInvalidKey) {
		t.Errorf("SwapSys with an invalid name: %v, want ErrInvalidKey", err)
	}
	expect("after an invalid swap", "head=3 log/2=b ")

	// Writers racing on one guard lose no update.
	if err := sw.SaveSys(ctx, "count", []byte("0")); err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			for range each {
				for {
					cur, err := sw.LoadSys(context.Background(), "count")
					if err != nil {
						errs <- err
						return
					}
					var n int
					fmt.Sscan(string(cur), &n)
					ok, err := sw.SwapSys(context.Background(), "count", cur, map[string][]byte{"count": fmt.Append(nil, n+1)}, nil)
					if err != nil {
						errs <- err
						return
					}
					if ok {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, err := sw.LoadSys(ctx, "count"); err != nil || !bytes.Equal(got, fmt.Append(nil, writers*each)) {
		t.Errorf("after %d racing increments: count = %q, %v; want %d", writers*each, got, err, writers*each)
	}
}

// testPresence checks Register and Peers on a store that claims
// backend.Presence: both registrations are listed, sorted by ID, with
// their fields; leave removes one, a done context the other (within
// presenceWait, for a store whose leases end asynchronously).
func (s suite) testPresence(t *testing.T) {
	st := s.fresh(t)
	pr, ok := st.(backend.Presence)
	if !ok {
		t.Skip("the store is not backend.Presence")
	}
	ctx := t.Context()
	before := time.Now().Add(-time.Minute)
	p1 := backend.Peer{Agent: "planner", Host: "host-1", PID: 101, Mount: "/mnt/a"}
	p2 := backend.Peer{Agent: "coder", Host: "host-2", PID: 202}
	leave1, err := pr.Register(ctx, p1)
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	defer leave1()
	ctx2, cancel2 := context.WithCancel(ctx)
	defer cancel2()
	leave2, err := pr.Register(ctx2, p2)
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	defer leave2()
	peers := func() []backend.Peer {
		t.Helper()
		got, err := pr.Peers(ctx)
		if err != nil {
			t.Fatalf("Peers: %v", err)
		}
		if !slices.IsSortedFunc(got, func(a, b backend.Peer) int { return strings.Compare(a.ID, b.ID) }) {
			t.Errorf("Peers not sorted by ID: %+v", got)
		}
		return got
	}
	same := func(got, want backend.Peer) bool {
		return got.Agent == want.Agent && got.Host == want.Host && got.PID == want.PID && got.Mount == want.Mount
	}
	got := peers()
	if len(got) != 2 {
		t.Fatalf("Peers = %+v, want the two registered", got)
	}
	if got[0].ID == "" || got[0].ID == got[1].ID {
		t.Errorf("Peer IDs %q and %q, want two distinct ones", got[0].ID, got[1].ID)
	}
	var id1, id2 string
	for _, p := range got {
		if p.Since.Before(before) || p.Since.After(time.Now().Add(time.Minute)) {
			t.Errorf("peer %s: Since = %v, want the time it registered", p.ID, p.Since)
		}
		switch {
		case same(p, p1):
			id1 = p.ID
		case same(p, p2):
			id2 = p.ID
		}
	}
	if id1 == "" || id2 == "" {
		t.Fatalf("Peers = %+v, want %+v and %+v with their fields kept", got, p1, p2)
	}

	eventually := func(what, want string) {
		t.Helper()
		deadline := time.Now().Add(presenceWait)
		for {
			got := peers()
			ids := make([]string, len(got))
			for i, p := range got {
				ids[i] = p.ID
			}
			if strings.Join(ids, " ") == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: Peers %q after %v, want %q", what, ids, presenceWait, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	leave1()
	eventually("after leave", id2)
	leave1() // a second leave does nothing
	cancel2()
	eventually("after the context was cancelled", "")
}
