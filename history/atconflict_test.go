package history_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/memfs/memfs/backend/memstore"
	"github.com/memfs/memfs/history"
)

// A conflict's version names no bytes (the other writer's value, which
// history never held): it is no node of the namespace. At a seq the key
// is as its versions before the conflict left it: the value before, or
// absent when it had none (a name another writer created, one deleted
// before). Also from an index written before At knew this, which holds
// the conflict's version: At passes over such an index.
func TestAtConflict(t *testing.T) {
	s := memstore.New()
	h := history.New(s)
	ctx := t.Context()
	ver := func(seq uint64, op, key, v string) history.Version {
		switch op {
		case history.OpDelete:
			return history.Version{Seq: seq, Op: op, Key: key}
		case history.OpConflict: // as histrecord's versionOf records one
			return history.Version{Seq: seq, Op: op, Key: key, Size: int64(len(v))}
		}
		a, _, err := h.Put(ctx, []byte(v))
		if err != nil {
			t.Fatal(err)
		}
		return history.NewVersion(seq, op, entry(key, v, 0o644), a)
	}
	appends := [][]history.Version{
		{ver(1, history.OpWrite, "a", "one"), ver(2, history.OpConflict, "a", "theirs")},
		{ver(3, history.OpWrite, "b", "b"), ver(4, history.OpConflict, "c", "theirs"), ver(5, history.OpWrite, "a", "two")},
		{ver(6, history.OpWrite, "d", "d"), ver(7, history.OpDelete, "d", ""), ver(8, history.OpConflict, "d", "theirs")},
	}
	for _, vs := range appends {
		recs, err := h.PlanVersions(vs)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Write(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	want := map[uint64][]string{
		1: {"a@1"}, 2: {"a@1"}, 3: {"a@1", "b@3"}, 4: {"a@1", "b@3"}, 5: {"a@5", "b@3"},
		6: {"a@5", "b@3", "d@6"}, 7: {"a@5", "b@3"}, 8: {"a@5", "b@3"},
	}
	check := func(how string) {
		t.Helper()
		for seq := uint64(1); seq <= 8; seq++ {
			ns, err := h.At(ctx, seq)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range ns {
				got = append(got, fmt.Sprintf("%s@%d", v.Key, v.Seq))
			}
			if !slices.Equal(got, want[seq]) {
				t.Errorf("%s: At(%d): got %v, want %v", how, seq, got, want[seq])
			}
		}
	}
	check("from the groups")
	// An index as one written before this fix had it at 4: a@1, b@3 and
	// c's conflict.
	var idx []byte
	for _, v := range []history.Version{appends[0][0], appends[1][0], appends[1][1]} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		idx = append(append(idx, b...), '\n')
	}
	a, _, err := h.Put(ctx, idx)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Write(ctx, []history.Record{{Name: "history/i/00000000000000000004", Data: []byte(a.String())}}); err != nil {
		t.Fatal(err)
	}
	check("from an old index at 4")
	if _, err := h.Index(ctx, 8); err != nil {
		t.Fatal(err)
	}
	check("from an index at 8")
}
