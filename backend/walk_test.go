package backend_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memfs/memfs/backend"
)

// lister is a store that can only List.
type lister []backend.Entry

func (l lister) List(context.Context) ([]backend.Entry, error) { return l, nil }

// TestWalkWithoutWalker checks backend.Walk over a store that only lists:
// the listing in order, in full batches and a last short one, the batches
// capped so that fn's appends cannot reach into the next batch; fn's error
// stops it.
func TestWalkWithoutWalker(t *testing.T) {
	const n = 2*backend.WalkBatch + 7
	l := make(lister, n)
	for i := range l {
		l[i].Key = fmt.Sprintf("k%05d", i)
	}
	var sizes []int
	next := 0
	err := backend.Walk(t.Context(), l, func(batch []backend.Entry) error {
		sizes = append(sizes, len(batch))
		if cap(batch) != len(batch) {
			t.Errorf("batch of %d with capacity %d: an append would overwrite the next batch", len(batch), cap(batch))
		}
		for _, e := range batch {
			if want := fmt.Sprintf("k%05d", next); e.Key != want {
				t.Fatalf("entry %d is %q, want %q", next, e.Key, want)
			}
			next++
		}
		return nil
	})
	if err != nil || next != n || fmt.Sprint(sizes) != fmt.Sprint([]int{backend.WalkBatch, backend.WalkBatch, 7}) {
		t.Errorf("Walk: err %v, %d entries in batches %v; want nil, %d in [%d %d 7]", err, next, sizes, n, backend.WalkBatch, backend.WalkBatch)
	}
	stop := errors.New("stop")
	calls := 0
	if err := backend.Walk(t.Context(), l, func([]backend.Entry) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("Walk with fn failing: %v after %d calls; want fn's error after 1", err, calls)
	}
}

// TestWalkEach checks that WalkEach passes full batches as they fill, the
// rest at the end, nothing more for an empty rest, clears the slice it
// reuses (no reference kept to a value fn was given), and stops at the
// first error of fn or of the reading.
func TestWalkEach(t *testing.T) {
	var got []int
	var last []backend.Entry
	adds := func(n int) func(add func(backend.Entry) error) error {
		return func(add func(backend.Entry) error) error {
			for i := range n {
				if err := add(backend.Entry{Key: fmt.Sprint(i), Value: []byte("v")}); err != nil {
					return err
				}
			}
			return nil
		}
	}
	err := backend.WalkEach(adds(backend.WalkBatch+3), func(batch []backend.Entry) error {
		if len(got) == 1 && last[backend.WalkBatch-1].Value != nil { // the first 3 were reused
			t.Error("the reused slice still references an entry fn was given")
		}
		got = append(got, len(batch))
		last = batch
		return nil
	})
	if err != nil || fmt.Sprint(got) != fmt.Sprint([]int{backend.WalkBatch, 3}) {
		t.Errorf("batches: %v, %v; want [%d 3]", got, err, backend.WalkBatch)
	}
	got = nil
	if err := backend.WalkEach(adds(backend.WalkBatch), func(b []backend.Entry) error { got = append(got, len(b)); return nil }); err != nil ||
		fmt.Sprint(got) != fmt.Sprint([]int{backend.WalkBatch}) {
		t.Errorf("exactly one batch: %v, %v; want [%d] and no empty batch", got, err, backend.WalkBatch)
	}
	stop := errors.New("stop")
	calls := 0
	if err := backend.WalkEach(adds(3*backend.WalkBatch), func([]backend.Entry) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("fn failing: %v after %d calls, want fn's error after 1", err, calls)
	}
	broken := errors.New("broken")
	if err := backend.WalkEach(func(func(backend.Entry) error) error { return broken }, func([]backend.Entry) error { return nil }); err != broken {
		t.Errorf("reading failing: %v, want its error", err)
	}
}
