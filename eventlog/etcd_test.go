package eventlog

import (
	"context"
	"fmt"
	"testing"

	"github.com/memfs/memfs/backend/etcdstore"
	"github.com/memfs/memfs/internal/etcdtest"
)

// importEvents are n events like those of `memfs import` of n small
// files: about 330 bytes a line, so 10,000 are 3.2 MB, far over one etcd
// transaction (1.5 MiB a request, 128 operations).
func importEvents(n int) []Event {
	evs := make([]Event, n)
	for i := range evs {
		evs[i] = ev(i)
		evs[i].Op = OpWrite
		evs[i].Key = fmt.Sprintf("import/project/dir%03d/notes-file-%05d.md", i/100, i)
	}
	return evs
}

// failSwap is a real etcd store whose SwapSys fails, without writing,
// once after ok swaps that committed.
type failSwap struct {
	*etcdstore.Store
	ok, committed int
}

func (s *failSwap) SwapSys(ctx context.Context, guard string, old []byte, puts map[string][]byte, dels []string) (bool, error) {
	if s.committed == s.ok {
		s.committed++
		return false, errInjected
	}
	ok, err := s.Store.SwapSys(ctx, guard, old, puts, dels)
	if ok && err == nil {
		s.committed++
	}
	return ok, err
}

func openEtcd(t *testing.T) *etcdstore.Store {
	t.Helper()
	srv := etcdtest.Start(t)
	s, err := etcdstore.Open(t.Context(), etcdstore.Config{Endpoints: []string{srv.Endpoint()}, Namespace: "log"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// One Append of 10,000 events on etcd is split into transactions that fit
// etcd's limits: all are stored once, in order, chained, and another
// Log (another mount) sees all of them.
func TestSwapLargeAppendEtcd(t *testing.T) {
	s := openEtcd(t)
	evs := importEvents(10000)
	out := mustAppend(t, openLog(t, s), evs)
	if len(out) != len(evs) || out[len(out)-1].Seq != uint64(len(evs)) {
		t.Fatalf("Append returned %d events, last seq %d; want %d", len(out), out[len(out)-1].Seq, len(evs))
	}
	var want []string
	for _, e := range evs {
		want = append(want, e.Key)
	}
	checkOnce(t, s, want)
}

// A split Append interrupted after some transactions leaves a valid
// prefix of the events on the store; offered again, the rest are
// appended, none twice.
func TestSwapLargeAppendInterruptedEtcd(t *testing.T) {
	s := &failSwap{Store: openEtcd(t), ok: 2}
	evs := importEvents(10000)
	l := openLog(t, s)
	if _, err := l.Append(t.Context(), evs); err == nil {
		t.Fatal("Append: no error from the failed swap")
	}
	_, stored := stored(t, s.Store)
	if len(stored) == 0 || len(stored) >= len(evs) {
		t.Fatalf("after the failure the store holds %d events, want a part of %d", len(stored), len(evs))
	}
	checkChain(t, s.Store, len(stored))
	if r := mustVerifyOK(t, s.Store); len(r.Warnings) > 0 {
		t.Errorf("Verify warnings after the failure: %q", r.Warnings)
	}
	for i, e := range stored {
		if e.Key != evs[i].Key {
			t.Fatalf("stored event %d is %s, want %s (not a prefix)", i+1, e.Key, evs[i].Key)
		}
	}
	out := mustAppend(t, l, evs)
	if len(out) != len(evs) {
		t.Fatalf("retry returned %d events, want %d", len(out), len(evs))
	}
	var want []string
	for _, e := range evs {
		want = append(want, e.Key)
	}
	checkOnce(t, s.Store, want)
}
