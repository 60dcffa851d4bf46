package memfs

import (
	"context"
	"encoding/hex"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/eventlog"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/session"
)

// writeEvent is a flush's event for a regular file key holding value.
func writeEvent(key string, value []byte) session.Event {
	a := history.AddrOf(value)
	return session.Event{Op: session.EventWrite, Key: key, Size: int64(len(value)), SHA256: hex.EncodeToString(a[:]),
		Saved: &backend.Entry{Key: key, Value: value, Info: backend.Info{Size: int64(len(value)), Mode: 0o644, MTime: time.Now()}}}
}

// TestCollectBetweenAppendAndVersions plays, step by step, a shared
// store's collection against a flush: the flush finds the object present
// (pending, past its grace) and skips it; it appends; the collection
// reads the guard (the head, after the append), marks (the version not
// yet written) and sweeps the object; the flush writes its version. The
// version must still name an object history holds.
func TestCollectBetweenAppendAndVersions(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	l, err := eventlog.Open(ctx, st, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	r := newRecorder(st, slog.New(slog.DiscardHandler))
	r.shared = true // memstore stands for a store other processes write
	value := []byte("a value an old, collected version held\n")
	a, _, err := r.h.Put(ctx, value)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	opts := func(at time.Time) history.CollectOptions {
		return history.CollectOptions{Guard: eventlog.HeadRecord, Now: func() time.Time { return at }}
	}
	if _, err := r.h.Collect(ctx, opts(t0)); err != nil { // marks the object pending
		t.Fatal(err)
	}
	evs := []session.Event{writeEvent("memory/a.md", value)}
	if err := r.values(ctx, evs); err != nil {
		t.Fatal(err)
	}
	stored, err := l.Append(ctx, []eventlog.Event{{Op: evs[0].Op, Key: evs[0].Key, Size: evs[0].Size, SHA256: evs[0].SHA256}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.h.Collect(ctx, opts(t0.Add(2*history.DefaultGrace)))
	if err != nil || got.Removed != 1 {
		t.Fatalf("the collection between the append and the versions: %+v, %v; want the object removed", got, err)
	}
	r.versions(ctx, evs, stored)
	vs, err := r.h.Versions(ctx, "memory/a.md")
	if err != nil || len(vs) != 1 || vs[0].Addr != a {
		t.Fatalf("versions %+v, %v", vs, err)
	}
	b, err := r.h.Get(ctx, a)
	if err != nil {
		t.Fatalf("the version's value is gone: %v", err)
	}
	if string(b) != string(value) {
		t.Fatalf("the version's value reads %q", b)
	}
}

// TestCollectWaitsForTheFlush: the mount's collection of history,
// started while one of its flushes is between its values and its
// versions, runs after the flush (the dir store has no guard, and a
// collection run whole between Missing and the append escapes one).
func TestCollectWaitsForTheFlush(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	l, err := eventlog.Open(ctx, st, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	r := newRecorder(st, slog.New(slog.DiscardHandler))
	value := []byte("a value an old, collected version held\n")
	a, _, err := r.h.Put(ctx, value)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	opts := func(at time.Time) history.CollectOptions {
		return history.CollectOptions{Guard: eventlog.HeadRecord, Now: func() time.Time { return at }}
	}
	if _, err := r.h.Collect(ctx, opts(t0)); err != nil { // marks the object pending
		t.Fatal(err)
	}
	evs := []session.Event{writeEvent("memory/a.md", value)}
	done := make(chan error, 1)
	_, err = r.record(ctx, evs, func() ([]eventlog.Event, error) {
		go func() {
			_, err := r.collect(ctx, opts(t0.Add(2*history.DefaultGrace)))
			done <- err
		}()
		waitCollect(t, r, done)
		return l.Append(ctx, []eventlog.Event{{Op: evs[0].Op, Key: evs[0].Key, Size: evs[0].Size, SHA256: evs[0].SHA256}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := r.h.Get(ctx, a); err != nil {
		t.Fatalf("the version's value is gone: %v", err)
	}
}

// waitCollect waits until the collection started in the flush has ended
// or waits for the flush (it holds the lock for reading: a writer waiting
// makes TryRLock fail).
func waitCollect(t *testing.T, r *recorder, done chan error) {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			done <- err
			return
		default:
		}
		if !r.gc.TryRLock() {
			return
		}
		r.gc.RUnlock()
		runtime.Gosched()
	}
	t.Fatal("the collection neither ended nor waited for the flush")
}

// TestCollectBetweenSavingAndRecord: a collection that runs after the
// write of a flush's objects (saving: it found the object present,
// pending and past its grace) and before the flush's record removes that
// object; the record must write it again, not trust the early write.
func TestCollectBetweenSavingAndRecord(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	l, err := eventlog.Open(ctx, st, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	r := newRecorder(st, slog.New(slog.DiscardHandler))
	value := []byte("a value an old, collected version held\n")
	a, _, err := r.h.Put(ctx, value)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	opts := func(at time.Time) history.CollectOptions {
		return history.CollectOptions{Guard: eventlog.HeadRecord, Now: func() time.Time { return at }}
	}
	if _, err := r.collect(ctx, opts(t0)); err != nil { // marks the object pending
		t.Fatal(err)
	}
	evs := []session.Event{writeEvent("memory/a.md", value)}
	r.saving(ctx, []backend.Entry{*evs[0].Saved})
	<-r.early.done
	got, err := r.collect(ctx, opts(t0.Add(2*history.DefaultGrace)))
	if err != nil || got.Removed != 1 {
		t.Fatalf("the collection between the early write and the record: %+v, %v; want the object removed", got, err)
	}
	if _, err := r.record(ctx, evs, func() ([]eventlog.Event, error) {
		return l.Append(ctx, []eventlog.Event{{Op: evs[0].Op, Key: evs[0].Key, Size: evs[0].Size, SHA256: evs[0].SHA256}})
	}); err != nil {
		t.Fatal(err)
	}
	if b, err := r.h.Get(ctx, a); err != nil || string(b) != string(value) {
		t.Fatalf("the version's value: %q, %v", b, err)
	}
}
