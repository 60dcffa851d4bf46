package search

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/memfs/memfs/backend/dirstore"
	"github.com/memfs/memfs/search/internal/searchtest"
)

// buildIndex indexes n generated notes with varied metadata.
func buildIndex(t testing.TB, n int) (*Index, *gen) {
	t.Helper()
	g := newGen(11)
	ix := New(Options{})
	keys, values := g.notes(n)
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i, k := range keys {
		m := DocMeta{Size: int64(len(values[i])), MTime: t0.Add(time.Duration(i) * time.Minute)}
		if i%3 == 0 {
			m.Tags = []string{"go", fmt.Sprint("t", i%5)}
		}
		if i%4 == 0 {
			m.Source, m.Agent = "agent", "planner"
		}
		if i%2 == 0 {
			m.Importance, m.HasImportance = float64(i%10)/10, true
		}
		if i%5 == 0 {
			m.Session, m.Type = fmt.Sprint("s", i%3), "decision"
		}
		ix.Put(k, values[i], m)
	}
	ix.Put("memory/cjk.md", []byte("東京都で会議 camelCase snake_case"), DocMeta{Size: 33, MTime: t0})
	ix.Put("memory/empty.md", nil, DocMeta{})
	ix.Put("memory/binary.bin", []byte("GIF89a\x00\x01 words"), DocMeta{Size: 15, Tags: []string{"bin"}})
	return ix, g
}

// roundTripQueries covers ranking and every filter, so that Load must keep
// terms, positions, lengths and metadata.
func roundTripQueries(g *gen) []Query {
	var qs []Query
	for _, text := range g.queries(30) {
		qs = append(qs, Query{Text: text, TopK: 25})
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	qs = append(qs,
		Query{Text: "東京 camel case", TopK: 5},
		Query{Text: "the", Tags: []string{"go", "t2"}, TopK: 50},
		Query{Text: "plan", Source: "agent", Agent: "planner", TopK: 50},
		Query{Text: "the", Session: "s1", Type: "decision", TopK: 50},
		Query{Type: "decision", TopK: 1000},
		Query{Text: "deploy", ImportanceMin: 0.5, HasImportanceMin: true, TopK: 50},
		Query{Text: "memory", Since: t0.Add(100 * time.Minute), Until: t0.Add(300 * time.Minute), TopK: 50},
		Query{Tags: []string{"bin"}},
		Query{Prefix: "memory/d03/", TopK: 1000},
	)
	return qs
}

func TestSaveLoadRoundTrip(t *testing.T) {
	ix, g := buildIndex(t, 600)
	sys := searchtest.NewMemSys()
	n, err := ix.Save(t.Context(), sys)
	if err != nil {
		t.Fatal(err)
	}
	if n != Shards {
		t.Errorf("first Save wrote %d shards, want %d", n, Shards)
	}
	if st := ix.Stats(); st.DirtyShards != 0 || st.ShardsSaved != Shards {
		t.Errorf("stats after Save %+v, want 0 dirty, %d saved", st, Shards)
	}
	got, err := Load(t.Context(), sys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := ix.Stats(), got.Stats(); a.Docs != b.Docs || a.Terms != b.Terms || a.Postings != b.Postings || b.DirtyShards != 0 {
		t.Errorf("loaded stats %+v, saved %+v", b, a)
	}
	if !maps.Equal(ix.Stamps(), got.Stamps()) {
		t.Error("stamps differ after Load")
	}
	for _, q := range roundTripQueries(g) {
		a, b := ix.Search(q), got.Search(q)
		if !slices.Equal(a, b) {
			t.Errorf("%+v: saved %v, loaded %v", q, a, b)
		}
		if len(a) == 0 && q.Text != "" {
			t.Logf("query %q has no hits", q.Text)
		}
	}
	// Nothing changed: nothing to save.
	if n, err := got.Save(t.Context(), sys); err != nil || n != 0 {
		t.Errorf("Save after Load wrote %d shards (err %v), want 0", n, err)
	}
}

func TestSaveOnlyDirty(t *testing.T) {
	ix, _ := buildIndex(t, 100)
	sys := searchtest.NewMemSys()
	if _, err := ix.Save(t.Context(), sys); err != nil {
		t.Fatal(err)
	}
	before := sys.Saves.Load()
	ix.Put("memory/new.md", []byte("a fresh note about kiwis"), DocMeta{Size: 24})
	n, err := ix.Save(t.Context(), sys)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || sys.Saves.Load()-before != 1 {
		t.Errorf("Save after one Put wrote %d shards (%d SaveSys calls), want 1", n, sys.Saves.Load()-before)
	}
	if sys.Rec(t, ShardName(ShardOf("memory/new.md"))) == nil {
		t.Error("the new document's shard record is missing")
	}
	// Two keys in different shards, and a delete.
	a, b := "memory/d00/n000000.md", "memory/d01/n000001.md"
	if ShardOf(a) == ShardOf(b) {
		t.Fatalf("test keys share shard %d", ShardOf(a))
	}
	ix.Delete(a)
	ix.Put(b, []byte("replaced"), DocMeta{})
	if st := ix.Stats(); st.DirtyShards != 2 {
		t.Errorf("%d dirty shards, want 2", st.DirtyShards)
	}
	if n, err := ix.Save(t.Context(), sys); err != nil || n != 2 {
		t.Errorf("Save wrote %d shards (err %v), want 2", n, err)
	}
	if n, err := ix.Save(t.Context(), sys); err != nil || n != 0 {
		t.Errorf("second Save wrote %d shards (err %v), want 0", n, err)
	}
	got, err := Load(t.Context(), sys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Has(a) || !got.Has("memory/new.md") {
		t.Errorf("loaded: Has(deleted) %v, Has(new) %v", got.Has(a), got.Has("memory/new.md"))
	}
	if h := got.Search(Query{Text: "replaced"}); len(h) != 1 || h[0].Key != b {
		t.Errorf("loaded: replaced doc: %v", h)
	}
	if st := got.Stats(); st.ShardsSaved != 0 || st.Docs != ix.Len() {
		t.Errorf("loaded stats %+v, want %d docs and 0 saved", st, ix.Len())
	}
}

// TestSaveEmptiedShard: a shard whose last document went is saved empty,
// so Load does not bring the document back.
func TestSaveEmptiedShard(t *testing.T) {
	ix := New(Options{})
	ix.Put("memory/only.md", []byte("lonely"), DocMeta{})
	sys := searchtest.NewMemSys()
	if n, err := ix.Save(t.Context(), sys); err != nil || n != 1 {
		t.Fatalf("Save: %d, %v; want 1 shard", n, err)
	}
	ix.Delete("memory/only.md")
	if n, err := ix.Save(t.Context(), sys); err != nil || n != 1 {
		t.Fatalf("Save: %d, %v; want 1 shard", n, err)
	}
	got, err := Load(t.Context(), sys, Options{})
	if err != nil || got.Len() != 0 {
		t.Errorf("Load: %d docs, %v; want none", got.Len(), err)
	}
}

func TestLoadMissing(t *testing.T) {
	ix, err := Load(t.Context(), searchtest.NewMemSys(), Options{})
	if err != nil || ix.Len() != 0 {
		t.Errorf("Load of nothing: %v docs, %v; want an empty index", ix.Len(), err)
	}
}

func TestLoadCorrupt(t *testing.T) {
	ix, _ := buildIndex(t, 200)
	clean := searchtest.NewMemSys()
	if _, err := ix.Save(t.Context(), clean); err != nil {
		t.Fatal(err)
	}
	name := ShardName(ShardOf("memory/cjk.md"))
	rec := clean.Rec(t, name)
	// reseal recomputes the checksum, so that the decoder's own checks
	// are what catches the damage.
	reseal := func(b []byte) []byte {
		body := b[:len(b)-4]
		return binary.LittleEndian.AppendUint32(body[:len(body):len(body)], crc32.Checksum(body, castagnoli))
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"flipped byte", func() []byte { b := slices.Clone(rec); b[len(b)/2] ^= 0x40; return b }()},
		{"torn", rec[:len(rec)/2]},
		{"empty", []byte{}},
		{"no checksum", rec[:len(rec)-4]},
		{"bad magic", reseal(append([]byte("XXXX"), rec[4:]...))},
		{"other version", reseal(append([]byte{'M', 'F', 'S', 'I', formatVersion + 1}, rec[5:]...))},
		// Version 1 was built without redaction: rebuilt, never trusted.
		{"version 1", reseal(append([]byte("MFSI\x01"), rec[5:]...))},
		// Version 2 kept no session or type: its documents would fail
		// every filter on them.
		{"version 2", reseal(append([]byte("MFSI\x02"), rec[5:]...))},
		// Version 3 terms are unstemmed words: a stemmed query would miss
		// them (TestLoadVersion3).
		{"version 3", reseal(append([]byte("MFSI\x03"), rec[5:]...))},
		{"other shard count", reseal(append([]byte{'M', 'F', 'S', 'I', formatVersion, 0x20}, rec[6:]...))},
		{"trailing bytes", reseal(append(slices.Clone(rec[:len(rec)-4]), 0, 0, 0, 0, 0))},
		{"truncated body", reseal(append(slices.Clone(rec[:len(rec)/2]), 0, 0, 0, 0))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sys := searchtest.NewMemSys()
			for k, v := range clean.Records(t) {
				sys.Put(t, k, v)
			}
			sys.Put(t, name, tt.data)
			_, err := Load(t.Context(), sys, Options{})
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("Load = %v, want ErrCorrupt", err)
			}
		})
	}
	// A record in the wrong place: shard 5's data under shard 6's name.
	t.Run("wrong shard", func(t *testing.T) {
		sys := searchtest.NewMemSys()
		sys.Put(t, ShardName(6), clean.Rec(t, ShardName(5)))
		if _, err := Load(t.Context(), sys, Options{}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Load = %v, want ErrCorrupt", err)
		}
	})
	// Records under the prefix that are not shards are not the index's.
	t.Run("other records ignored", func(t *testing.T) {
		sys := searchtest.NewMemSys()
		for k, v := range clean.Records(t) {
			sys.Put(t, k, v)
		}
		sys.Put(t, "search/shard-7", []byte("junk"))
		sys.Put(t, "search/manifest", []byte("junk"))
		if got, err := Load(t.Context(), sys, Options{}); err != nil || got.Len() != ix.Len() {
			t.Errorf("Load: %v, %d docs; want %d", err, got.Len(), ix.Len())
		}
	})
}

// TestLoadVersion3: an index that memfs saved before stemming (format
// version 3: its terms are the words as written) is reported corrupt, so
// that the caller rebuilds it. Read as if it were current, it would
// silently miss the other forms of its words: that is shown too.
func TestLoadVersion3(t *testing.T) {
	old := searchtest.IndexV3(t)
	sys := searchtest.NewMemSys()
	for name, data := range old {
		sys.Put(t, name, data)
	}
	if _, err := Load(t.Context(), sys, Options{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Load of a version 3 index = %v, want ErrCorrupt", err)
	}
	// The misread that the version number prevents: the same records
	// relabelled as the current version decode, and find nothing by
	// stem.
	for name, data := range old {
		body := slices.Clone(data[:len(data)-4])
		body[len(magic)] = formatVersion
		sys.Put(t, name, binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, castagnoli)))
	}
	misread, err := Load(t.Context(), sys, Options{})
	if err != nil {
		t.Fatalf("the relabelled records: %v", err)
	}
	if got := misread.Search(Query{Text: "payment refund"}); len(got) != 0 {
		t.Errorf("unstemmed terms found by stems: %v (the misread this test shows is gone?)", got)
	}
	// Rebuilt from the values, as the caller does, the index finds them.
	ix := New(Options{})
	for k, v := range searchtest.IndexV3Docs() {
		ix.Put(k, []byte(v), DocMeta{Size: int64(len(v))})
	}
	for q, want := range map[string]string{"payment refund": "memory/billing.md", "restored backup": "memory/backups.md", "deployed plan": "memory/deploy.md"} {
		if got := ix.Search(Query{Text: q}); len(got) != 1 || got[0].Key != want {
			t.Errorf("rebuilt, %q: got %v, want %s", q, got, want)
		}
	}
}

// FuzzDecodeShard: garbage never panics, and whatever decodes is sane.
// The fuzzer writes the record's body and the checksum is added, so that
// the decoder's own checks are what it exercises.
func FuzzDecodeShard(f *testing.F) {
	ix := New(Options{})
	ix.Put("memory/a.md", []byte("alpha beta camelCase 東京都"), DocMeta{Tags: []string{"x"}, HasImportance: true, Importance: 0.5})
	ix.Put("memory/b.md", []byte("beta gamma"), DocMeta{MTime: time.Unix(5, 0)})
	s := ShardOf("memory/a.md")
	if ShardOf("memory/b.md") != s {
		f.Logf("the seed has one document")
	}
	ix.mu.RLock()
	rec := ix.encodeShardLocked(s)
	ix.mu.RUnlock()
	f.Add(rec[:len(rec)-4])
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(slices.Clip(body), crc32.Checksum(body, castagnoli))
		got := New(Options{})
		if err := got.decodeShard(s, data); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		got.Search(Query{Text: "alpha camel case 東京"})
	})
}

// TestDirStore runs Save and Load on a real backend.
func TestDirStore(t *testing.T) {
	s, err := dirstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ix, g := buildIndex(t, 100)
	if _, err := ix.Save(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	got, err := Load(t.Context(), s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range roundTripQueries(g)[:10] {
		if a, b := ix.Search(q), got.Search(q); !slices.Equal(a, b) {
			t.Errorf("%q: saved %v, loaded %v", q.Text, a, b)
		}
	}
	list, err := s.List(t.Context())
	if err != nil || len(list) != 0 {
		t.Errorf("the index's records show up as keys: %v, %v", list, err)
	}
}

// TestStaleness is the contract of Stamps: compare with the store's
// listing, index again what differs.
func TestStaleness(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	ix := New(Options{})
	ix.Put("memory/a.md", []byte("apple"), DocMeta{Size: 5, MTime: t0})
	ix.Put("memory/b.md", []byte("banana"), DocMeta{Size: 6, MTime: t0})
	sys := searchtest.NewMemSys()
	if _, err := ix.Save(t.Context(), sys); err != nil {
		t.Fatal(err)
	}
	got, err := Load(t.Context(), sys, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Stamp{"memory/a.md": {5, t0.UnixNano()}, "memory/b.md": {6, t0.UnixNano()}}
	if !maps.Equal(got.Stamps(), want) {
		t.Errorf("Stamps = %v, want %v", got.Stamps(), want)
	}
	if st := (Stamp{Size: 3}); StampOf(DocMeta{Size: 3}) != st {
		t.Errorf("zero MTime stamps as %v, want %v", StampOf(DocMeta{Size: 3}), st)
	}
}
