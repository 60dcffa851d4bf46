package packhist_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/packhist"
)

// countingLog counts the events its queries return.
type countingLog struct {
	*eventlog.Log
	events atomic.Int64
}

func (c *countingLog) Query(ctx context.Context, q eventlog.Query) (eventlog.Page, error) {
	p, err := c.Log.Query(ctx, q)
	c.events.Add(int64(len(p.Events)))
	return p, err
}

// The check at open replays the log once: the next open's check resumes
// from the state the last one reached and reads only the events after
// it (a count stands for the time: at 100,000 keys the whole log is
// half a million events), and still finds a change the log does not
// explain. A log that is not the one the state was read from is replayed
// from its start.
func TestBaselineResumes(t *testing.T) {
	st := memstore.New()
	r := newRig(t, st, 100000)
	for i := range 300 {
		r.write(t, fmt.Sprintf("notes/n%d.md", i), "not a pack source")
	}
	s1 := r.write(t, "memory/a.md", "as logged")
	entries := []backend.Entry{{Key: "memory/a.md", Info: backend.Info{Size: 9, Mode: 0o644}, Value: []byte("as logged")}}
	check := func(head uint64, es []backend.Entry) int64 {
		t.Helper()
		cl := &countingLog{Log: r.l}
		a := packhist.NewArchiver(st, cl, packhist.Options{Window: 100000})
		a.Baseline(head, es)
		if err := a.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		return cl.events.Load()
	}
	if n := check(s1, entries); n < int64(s1) {
		t.Fatalf("the first check read %d events, want the whole log (%d)", n, s1)
	}
	s2 := r.write(t, "notes/more.md", "one more")
	if n := check(s2, entries); n > 5 {
		t.Errorf("the second check read %d events of %d, want the few after the first check's head", n, s2)
	}
	if _, err := r.state(t, s2); err != nil {
		t.Errorf("StateAt(%d), nothing changed outside: %v", s2, err)
	}
	// Edited outside memfs: still a gap, found from the resumed state.
	s3 := r.write(t, "notes/more.md", "and another")
	edited := []backend.Entry{{Key: "memory/a.md", Info: backend.Info{Size: 16, Mode: 0o644}, Value: []byte("edited by hand!!")}}
	check(s3, edited)
	if _, err := r.state(t, s3); !errors.Is(err, packhist.ErrNotArchived) || !strings.Contains(err.Error(), "memory/a.md") {
		t.Errorf("StateAt(%d) after an edit outside memfs: got %v, want an error wrapping ErrNotArchived naming memory/a.md", s3, err)
	}
	// Another log in the same store (its events differ at the recorded
	// seq): replayed from the start.
	other := newRig(t, memstore.New(), 100000)
	for i := range int(s3) + 2 {
		other.write(t, fmt.Sprintf("notes/x%d.md", i), "another log")
	}
	b, err := st.LoadSys(t.Context(), "packhist/baseline")
	if err != nil {
		t.Fatalf("the check's state was not kept: %v", err)
	}
	if err := other.st.SaveSys(t.Context(), "packhist/baseline", b); err != nil {
		t.Fatal(err)
	}
	cl := &countingLog{Log: other.l}
	a := packhist.NewArchiver(other.st, cl, packhist.Options{Window: 100000})
	a.Baseline(s3+2, nil)
	if err := a.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	a.Close(t.Context())
	if n := cl.events.Load(); n < int64(s3+2) {
		t.Errorf("a check over another log read %d events, want its whole log (%d): the state kept was of another log", n, s3+2)
	}
}

// A name that holds a secret (Options.SecretName) is never written into
// the check's state: not when the check replays a log an older memfs
// wrote the name into, nor is it left in a state an older memfs kept.
func TestBaselineKeepsNoSecretName(t *testing.T) {
	st := memstore.New()
	r := newRig(t, st, 100000)
	const secret = "memory/ghp_0123456789abcdefghijABCDEFGHIJ012345.md"
	secretName := func(name string) bool { return strings.Contains(name, "ghp_") }
	r.write(t, secret, "a note")
	r.write(t, "memory/a.md", "as logged")
	var head uint64
	for i := range 10 {
		head = r.write(t, fmt.Sprintf("notes/n%d.md", i), "not a pack source")
	}
	check := func(head uint64, secretName func(string) bool) string {
		t.Helper()
		a := packhist.NewArchiver(st, r.l, packhist.Options{Window: 100000, SecretName: secretName})
		a.Baseline(head, []backend.Entry{{Key: "memory/a.md", Info: backend.Info{Size: 9, Mode: 0o644}, Value: []byte("as logged")}})
		if err := a.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		b, err := st.LoadSys(t.Context(), "packhist/baseline")
		if err != nil {
			t.Fatalf("the check's state was not kept: %v", err)
		}
		return string(b)
	}
	if b := check(head, secretName); strings.Contains(b, "ghp_") {
		t.Errorf("the check's state holds a name that holds a secret: %s", b)
	}
	// As an older memfs kept it (no SecretName), then read by this one.
	st.DeleteSys(t.Context(), "packhist/baseline")
	if b := check(head, nil); !strings.Contains(b, "ghp_") {
		t.Fatalf("without SecretName the state does not hold the name, the test checks nothing: %s", b)
	}
	head = r.write(t, "notes/more.md", "one more")
	if b := check(head, secretName); strings.Contains(b, "ghp_") {
		t.Errorf("the state an older memfs kept still holds a name that holds a secret: %s", b)
	}
}
