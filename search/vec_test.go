package search

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/memfs/memfs/search/internal/searchtest"
)

// randomUnit returns a random unit vector of dim.
func randomUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	searchtest.Normalize(v)
	return v
}

// TestVecRoundTrip: saved vectors load back to the same quantized vectors,
// stamps and search results; a Save after one change writes one shard.
func TestVecRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vx := NewVectors("test@1")
	for i := range 500 {
		if err := vx.Put(keyN(i), Stamp{Size: int64(i), MTime: int64(i) * 7}, randomUnit(r, 32)); err != nil {
			t.Fatal(err)
		}
	}
	vx.Delete(keyN(3))
	st := searchtest.NewMemSys()
	if n, err := vx.Save(t.Context(), st, nil); err != nil || n != Shards {
		t.Fatalf("save: got %d, %v; want %d shards", n, err, Shards)
	}
	got, err := LoadVectors(t.Context(), st, "test@1")
	if err != nil {
		t.Fatal(err)
	}
	if !mapsEqual(got.Stamps(), vx.Stamps()) || got.Len() != 499 {
		t.Errorf("stamps differ after the round trip (%d vectors)", got.Len())
	}
	for range 20 {
		qv := NewQueryVec(randomUnit(r, 32))
		if a, b := vx.Nearest(qv, 10, nil, 0), got.Nearest(qv, 10, nil, 0); !slices.Equal(a, b) || len(a) == 0 {
			t.Fatalf("search after the round trip: got %v, want %v", b, a)
		}
	}
	if err := got.Put(keyN(7), Stamp{}, randomUnit(r, 32)); err != nil {
		t.Fatal(err)
	}
	if n, err := got.Save(t.Context(), st, nil); err != nil || n != 1 {
		t.Errorf("save after one change: got %d, %v; want 1 shard", n, err)
	}
	if other, err := LoadVectors(t.Context(), st, "other@1"); err != nil || other.Len() != 0 {
		t.Errorf("load under another embedder: got %v vectors, %v; want an empty set of its own", other.Len(), err)
	}
	if n, err := got.Save(t.Context(), st, func(int) bool { return true }); err != nil || n != 0 {
		t.Errorf("save holding every shard: got %d, %v; want none written", n, err)
	}
	if err := got.Put("x", Stamp{}, randomUnit(r, 16)); !errors.Is(err, errDim) {
		t.Errorf("put of another dimension: got %v, want errDim", err)
	}
}

func keyN(i int) string {
	return "memory/note-" + string(rune('a'+i%26)) + "-" + strings.Repeat("x", i%5) + itoa(i) + ".md"
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
		if i == 0 {
			return string(b)
		}
	}
}

func mapsEqual(a, b map[string]Stamp) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestVecCorruptShard: every flipped byte of a vector shard is refused as
// corrupt.
func TestVecCorruptShard(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vx := NewVectors("test@1")
	for i := range 40 {
		vx.Put(keyN(i), Stamp{Size: 1}, randomUnit(r, 8))
	}
	st := searchtest.NewMemSys()
	if _, err := vx.Save(t.Context(), st, nil); err != nil {
		t.Fatal(err)
	}
	name := VecShardName("test@1", ShardOf(keyN(0)))
	orig := st.Rec(t, name)
	for i := range orig {
		bad := bytes.Clone(orig)
		bad[i] ^= 0x40
		st.Put(t, name, bad)
		if _, err := LoadVectors(t.Context(), st, "test@1"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: got %v, want ErrCorrupt", i, err)
		}
	}
	st.Put(t, name, orig[:len(orig)/2])
	if _, err := LoadVectors(t.Context(), st, "test@1"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: got %v, want ErrCorrupt", err)
	}
}

// TestVecSetsPerEmbedder: each embedder's vectors are a set of records of
// their own: saving one set leaves another's records as they were, and
// each loads its own; the one set of earlier versions (search/vec-NN) is
// taken by the embedder that made it, and by no other.
func TestVecSetsPerEmbedder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	st := searchtest.NewMemSys()
	fill := func(id string, n, dim int) *Vectors {
		vx := NewVectors(id)
		for i := range n {
			if err := vx.Put(keyN(i), Stamp{Size: int64(i)}, randomUnit(r, dim)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := vx.Save(t.Context(), st, nil); err != nil {
			t.Fatal(err)
		}
		return vx
	}
	a := fill("static:a#0123", 100, 8)
	recA := st.Records(t)
	b := fill("openai:http://x/v1#m", 60, 16)
	for name, rec := range recA {
		if got := st.Rec(t, name); !bytes.Equal(got, rec) {
			t.Errorf("saving b's set changed a's record %s", name)
		}
	}
	for _, vx := range []*Vectors{a, b} {
		got, err := LoadVectors(t.Context(), st, vx.id)
		if err != nil || !mapsEqual(got.Stamps(), vx.Stamps()) || got.Dim() != vx.Dim() {
			t.Errorf("%s: loaded %d vectors of dim %d, %v; want its own %d of dim %d", vx.id, got.Len(), got.Dim(), err, vx.Len(), vx.Dim())
		}
	}
	sets := map[string]int{}
	for name := range st.Records(t) {
		set, s, ok := ParseVecShardName(name)
		if ok && (set != vecSet(a.id) && set != vecSet(b.id) || VecShardName(a.id, s) != name && VecShardName(b.id, s) != name) {
			t.Errorf("%s: parsed as set %s shard %d", name, set, s)
		}
		sets[set]++
	}
	if len(sets) != 2 || sets[vecSet(a.id)] != len(recA) {
		t.Errorf("records by set: %v, want two sets, a's %d", sets, len(recA))
	}

	// The set of earlier versions, under its old names.
	old := searchtest.NewMemSys()
	for name, rec := range recA {
		_, s, _ := ParseVecShardName(name)
		old.Put(t, legacyVecShardName(s), rec)
	}
	if got, err := LoadVectors(t.Context(), old, "static:other#4567"); err != nil || got.Len() != 0 {
		t.Errorf("the old set, by another embedder: %d vectors, %v; want none", got.Len(), err)
	}
	got, err := LoadVectors(t.Context(), old, a.id)
	if err != nil || !mapsEqual(got.Stamps(), a.Stamps()) {
		t.Fatalf("the old set, by its embedder: %d vectors, %v; want %d", got.Len(), err, a.Len())
	}
	if n, err := got.Save(t.Context(), old, nil); err != nil || n != Shards {
		t.Errorf("the old set saved under its embedder's names: %d shards, %v; want %d", n, err, Shards)
	}
	if again, err := LoadVectors(t.Context(), old, a.id); err != nil || !mapsEqual(again.Stamps(), a.Stamps()) || again.DirtyShards() != 0 {
		t.Errorf("reloaded: %d vectors, %d dirty shards, %v", again.Len(), again.DirtyShards(), err)
	}
}
