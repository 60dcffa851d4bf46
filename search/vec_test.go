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
	if n, err := vx.Save(t.Context(), st); err != nil || n != Shards {
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
	if n, err := got.Save(t.Context(), st); err != nil || n != 1 {
		t.Errorf("save after one change: got %d, %v; want 1 shard", n, err)
	}
	if _, err := LoadVectors(t.Context(), st, "other@1"); !errors.Is(err, ErrOtherModel) {
		t.Errorf("load under another embedder: got %v, want errOtherModel", err)
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
	if _, err := vx.Save(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	name := VecShardName(ShardOf(keyN(0)))
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
