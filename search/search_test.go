package search

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/search/internal/searchtest"
)

func keys(hits []Hit) []string {
	var k []string
	for _, h := range hits {
		k = append(k, h.Key)
	}
	return k
}

func TestPhraseBeatsScattered(t *testing.T) {
	ix := New(Options{})
	// The same words, the same counts, the same length: only the order
	// differs.
	ix.Put("memory/phrase.md", []byte("notes: the deploy plan for friday was approved by ops"), DocMeta{})
	ix.Put("memory/scattered.md", []byte("notes: the plan for friday was approved by deploy ops"), DocMeta{})
	ix.Put("memory/reversed.md", []byte("notes: the plan deploy for friday was approved by ops"), DocMeta{})
	for i := range 20 {
		ix.Put(fmt.Sprintf("memory/other%d.md", i), []byte("unrelated text about lunch and the weather"), DocMeta{})
	}
	hits := ix.Search(Query{Text: "deploy plan"})
	if got, want := keys(hits), []string{"memory/phrase.md", "memory/reversed.md", "memory/scattered.md"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// A clear bonus: well above the scattered document's score.
	if hits[0].Score < 1.5*hits[2].Score {
		t.Errorf("phrase scores %.3f, scattered %.3f: want a clear bonus", hits[0].Score, hits[2].Score)
	}
	// The phrase of an identifier matches the identifier.
	ix.Put("memory/code.md", []byte("call parseQuery here"), DocMeta{})
	ix.Put("memory/words.md", []byte("query here and parse there"), DocMeta{})
	if got := keys(ix.Search(Query{Text: "parse query"})); len(got) < 2 || got[0] != "memory/code.md" {
		t.Errorf("parse query: got %v, want memory/code.md first", got)
	}
}

// TestStemming: a query finds the other forms of its words (Porter
// stems, documents and queries alike), and a phrase matches in any of
// its words' forms, the words as written included.
func TestStemming(t *testing.T) {
	ix := New(Options{})
	ix.Put("memory/exact.md", []byte("notes: the deploy plans for friday"), DocMeta{})
	ix.Put("memory/inflected.md", []byte("notes: the deployed plan for friday"), DocMeta{})
	ix.Put("memory/scattered.md", []byte("notes: plans for deploying friday"), DocMeta{})
	ix.Put("memory/billing.md", []byte("Both payments were charged twice; refunded."), DocMeta{})
	for i := range 20 {
		ix.Put(fmt.Sprintf("memory/other%d.md", i), []byte("unrelated text about lunch and the weather"), DocMeta{})
	}
	for _, q := range []string{"payment", "payments", "paymentS", "charge", "charging", "refunds"} {
		if got := keys(ix.Search(Query{Text: q})); !slices.Equal(got, []string{"memory/billing.md"}) {
			t.Errorf("%q: got %v, want memory/billing.md", q, got)
		}
	}
	hits := ix.Search(Query{Text: "deploy plans"})
	if got, want := keys(hits), []string{"memory/exact.md", "memory/inflected.md", "memory/scattered.md"}; !slices.Equal(got, want) {
		t.Fatalf("deploy plans: got %v, want %v", got, want)
	}
	// The words as written and their other forms are the same phrase
	// (same stems, same length: a tie, by key); both well above the
	// scattered words.
	if hits[0].Score != hits[1].Score || hits[1].Score < 1.5*hits[2].Score {
		t.Errorf("deploy plans: scores %.3f %.3f %.3f, want a tie, then a clear gap", hits[0].Score, hits[1].Score, hits[2].Score)
	}
}

func TestRareBeatsCommon(t *testing.T) {
	ix := New(Options{})
	for i := range 50 {
		ix.Put(fmt.Sprintf("memory/common%02d.md", i), []byte("golang notes and more golang notes"), DocMeta{})
	}
	ix.Put("memory/rare.md", []byte("a note on zanzibar and nothing else here"), DocMeta{})
	ix.Put("memory/commonone.md", []byte("a note on golang and nothing else here"), DocMeta{})
	hits := ix.Search(Query{Text: "golang zanzibar", TopK: 100})
	if len(hits) != 52 {
		t.Fatalf("got %d hits, want 52", len(hits))
	}
	if hits[0].Key != "memory/rare.md" {
		t.Errorf("got %v first, want memory/rare.md", hits[0])
	}
	// The same length and tf: only the IDF differs.
	var rare, common float64
	for _, h := range hits {
		switch h.Key {
		case "memory/rare.md":
			rare = h.Score
		case "memory/commonone.md":
			common = h.Score
		}
	}
	if rare <= 2*common {
		t.Errorf("rare scores %.3f, common %.3f: want the rare term far ahead", rare, common)
	}
}

func TestTiesByKey(t *testing.T) {
	ix := New(Options{})
	for _, k := range []string{"c", "a", "b"} {
		ix.Put("memory/"+k, []byte("same words"), DocMeta{})
	}
	hits := ix.Search(Query{Text: "same"})
	if got, want := keys(hits), []string{"memory/a", "memory/b", "memory/c"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if hits[0].Score != hits[2].Score || hits[0].Score <= 0 {
		t.Errorf("scores %v: want equal and positive", hits)
	}
}

func TestFilters(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	ix := New(Options{})
	docs := []struct {
		key  string
		meta DocMeta
	}{
		{"memory/projects/a.md", DocMeta{Tags: []string{"go", "infra"}, Source: "agent", Agent: "planner", Importance: 0.9, HasImportance: true, MTime: t0}},
		{"memory/projects/b.md", DocMeta{Tags: []string{"go"}, Source: "user", Importance: 0.3, HasImportance: true, MTime: t0.Add(24 * time.Hour)}},
		{"memory/global.md", DocMeta{Tags: []string{"infra"}, Source: "agent", Agent: "explorer", MTime: t0.Add(48 * time.Hour)}},
		{"skills/x/SKILL.md", DocMeta{Source: "system", Importance: 0.5, HasImportance: true, MTime: t0.Add(72 * time.Hour)}},
	}
	for _, d := range docs {
		ix.Put(d.key, []byte("shared word "+d.key), d.meta)
	}
	tests := []struct {
		name string
		q    Query
		want []string // sorted
	}{
		{"none", Query{}, []string{"memory/global.md", "memory/projects/a.md", "memory/projects/b.md", "skills/x/SKILL.md"}},
		{"prefix", Query{Prefix: "memory/projects/"}, []string{"memory/projects/a.md", "memory/projects/b.md"}},
		{"one tag", Query{Tags: []string{"go"}}, []string{"memory/projects/a.md", "memory/projects/b.md"}},
		{"all tags", Query{Tags: []string{"go", "infra"}}, []string{"memory/projects/a.md"}},
		{"missing tag", Query{Tags: []string{"rust"}}, nil},
		{"source", Query{Source: "agent"}, []string{"memory/global.md", "memory/projects/a.md"}},
		{"agent", Query{Agent: "planner"}, []string{"memory/projects/a.md"}},
		{"importance", Query{ImportanceMin: 0.5, HasImportanceMin: true}, []string{"memory/projects/a.md", "skills/x/SKILL.md"}},
		{"importance 0 needs one", Query{HasImportanceMin: true}, []string{"memory/projects/a.md", "memory/projects/b.md", "skills/x/SKILL.md"}},
		{"since", Query{Since: t0.Add(48 * time.Hour)}, []string{"memory/global.md", "skills/x/SKILL.md"}},
		{"until exclusive", Query{Until: t0.Add(24 * time.Hour)}, []string{"memory/projects/a.md"}},
		{"since and until", Query{Since: t0.Add(time.Hour), Until: t0.Add(49 * time.Hour)}, []string{"memory/global.md", "memory/projects/b.md"}},
		{"combined", Query{Prefix: "memory/", Source: "agent", Tags: []string{"infra"}, Since: t0.Add(time.Hour)}, []string{"memory/global.md"}},
	}
	for _, tt := range tests {
		for _, text := range []string{"shared word", ""} {
			t.Run(tt.name+"/text="+text, func(t *testing.T) {
				q := tt.q
				q.Text = text
				got := keys(ix.Search(q))
				slices.Sort(got)
				if !slices.Equal(got, tt.want) {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			})
		}
	}
}

func TestTopKAndMinScore(t *testing.T) {
	ix := New(Options{})
	for i := range 30 {
		// Document i holds "needle" i+1 times: scores rise with i.
		ix.Put(fmt.Sprintf("memory/%02d.md", i), []byte(strings.Repeat("needle ", i+1)+strings.Repeat("hay ", 40-i)), DocMeta{})
	}
	if got := ix.Search(Query{Text: "needle"}); len(got) != 10 || got[0].Key != "memory/29.md" {
		t.Errorf("default TopK: got %d hits, first %v; want 10, memory/29.md", len(got), got)
	}
	got := ix.Search(Query{Text: "needle", TopK: 3})
	if want := []string{"memory/29.md", "memory/28.md", "memory/27.md"}; !slices.Equal(keys(got), want) {
		t.Errorf("TopK 3: got %v, want %v", keys(got), want)
	}
	all := ix.Search(Query{Text: "needle", TopK: 100})
	if len(all) != 30 {
		t.Fatalf("got %d hits, want 30", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].Score > all[i-1].Score {
			t.Fatalf("hits not best first: %v", all)
		}
	}
	min := all[14].Score
	filtered := ix.Search(Query{Text: "needle", TopK: 100, MinScore: min})
	if len(filtered) != 15 {
		t.Errorf("MinScore %.4f: got %d hits, want 15", min, len(filtered))
	}
	for _, h := range filtered {
		if h.Score < min {
			t.Errorf("hit %v below MinScore %.4f", h, min)
		}
	}
	if got := ix.Search(Query{Text: "needle", MinScore: 1e9}); len(got) != 0 {
		t.Errorf("huge MinScore: got %v", got)
	}
}

func TestNoMatch(t *testing.T) {
	ix := New(Options{})
	if got := ix.Search(Query{Text: "anything"}); got != nil {
		t.Errorf("empty index: got %v", got)
	}
	ix.Put("memory/a.md", []byte("alpha beta"), DocMeta{})
	for _, text := range []string{"gamma", "!!! ???"} {
		if got := ix.Search(Query{Text: text}); len(got) != 0 {
			t.Errorf("Search(%q) = %v, want none", text, got)
		}
	}
}

func TestPutReplaces(t *testing.T) {
	ix := New(Options{})
	ix.Put("memory/a.md", []byte("old words: pineapple"), DocMeta{Tags: []string{"x"}})
	ix.Put("memory/b.md", []byte("shared pineapple"), DocMeta{})
	ix.Put("memory/a.md", []byte("new words: mango"), DocMeta{Tags: []string{"y"}})
	if got := keys(ix.Search(Query{Text: "pineapple"})); !slices.Equal(got, []string{"memory/b.md"}) {
		t.Errorf("old term: got %v, want memory/b.md only", got)
	}
	if got := keys(ix.Search(Query{Text: "old"})); len(got) != 0 {
		t.Errorf("old-only term: got %v, want none", got)
	}
	if got := keys(ix.Search(Query{Text: "mango"})); !slices.Equal(got, []string{"memory/a.md"}) {
		t.Errorf("new term: got %v", got)
	}
	if got := keys(ix.Search(Query{Tags: []string{"x"}})); len(got) != 0 {
		t.Errorf("old tag: got %v", got)
	}
	st := ix.Stats()
	// a: new, words, mango; b: shared, pineapple.
	if st.Docs != 2 || st.Terms != 5 || st.Postings != 5 {
		t.Errorf("stats %+v, want 2 docs, 5 terms, 5 postings", st)
	}
	if ix.Len() != 2 {
		t.Errorf("Len = %d, want 2", ix.Len())
	}
}

func TestDelete(t *testing.T) {
	ix := New(Options{})
	ix.Put("memory/a.md", []byte("apple banana"), DocMeta{})
	ix.Put("memory/b.md", []byte("banana cherry"), DocMeta{})
	ix.Delete("memory/a.md")
	ix.Delete("memory/missing.md")
	if ix.Has("memory/a.md") || !ix.Has("memory/b.md") || ix.Len() != 1 {
		t.Errorf("Has(a) %v, Has(b) %v, Len %d; want false, true, 1", ix.Has("memory/a.md"), ix.Has("memory/b.md"), ix.Len())
	}
	if got := ix.Search(Query{Text: "apple banana"}); !slices.Equal(keys(got), []string{"memory/b.md"}) {
		t.Errorf("got %v, want memory/b.md", got)
	}
	if st := ix.Stats(); st.Terms != 2 {
		t.Errorf("terms %d, want 2 (apple is gone)", st.Terms)
	}
	if _, ok := ix.Stamps()["memory/a.md"]; ok {
		t.Error("Stamps still has the deleted key")
	}
}

// TestChurn replaces and deletes many documents, reusing ids and
// compacting postings, and checks the index against a rebuilt one.
func TestChurn(t *testing.T) {
	g := newGen(7)
	ix := New(Options{})
	live := make(map[string][]byte)
	for i := range 1500 {
		key := fmt.Sprintf("memory/n%03d.md", g.rng.IntN(200))
		if i%5 == 4 {
			ix.Delete(key)
			delete(live, key)
			continue
		}
		v := g.note(200 + g.rng.IntN(600))
		ix.Put(key, v, DocMeta{Size: int64(len(v))})
		live[key] = v
	}
	// Every document's terms hold it, and nothing else is there.
	n := 0
	for id, d := range ix.docs {
		if d == nil {
			continue
		}
		forTerms(d.terms, func(tid uint32) {
			n++
			if ix.terms[tid].find(uint32(id)) == nil {
				t.Fatalf("term %q does not hold %s", ix.terms[tid].term, d.key)
			}
		})
	}
	total := 0
	for _, p := range ix.terms {
		total += p.df()
	}
	if n != total {
		t.Fatalf("documents list %d postings, the terms hold %d", n, total)
	}
	fresh := New(Options{})
	for k, v := range live {
		fresh.Put(k, v, DocMeta{Size: int64(len(v))})
	}
	if a, b := ix.Stats(), fresh.Stats(); a.Docs != b.Docs || a.Terms != b.Terms || a.Postings != b.Postings {
		t.Fatalf("after churn %+v, rebuilt %+v", a, b)
	}
	for _, q := range g.queries(40) {
		got, want := ix.Search(Query{Text: q, TopK: 20}), fresh.Search(Query{Text: q, TopK: 20})
		if !sameHits(got, want) {
			t.Errorf("%q: after churn %v, rebuilt %v", q, got, want)
		}
	}
}

// sameHits compares hits, scores within rounding (the sum order of BM25
// terms may differ).
func sameHits(a, b []Hit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Score-b[i].Score > 1e-9 || b[i].Score-a[i].Score > 1e-9 {
			return false
		}
	}
	return true
}

func TestConcurrent(t *testing.T) {
	g := newGen(3)
	ix := New(Options{})
	notes := make([][]byte, 200)
	for i := range notes {
		notes[i] = g.note(400)
	}
	queries := g.queries(20)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 300 {
				k := fmt.Sprintf("memory/%d.md", (i*7+w)%100)
				if i%10 == 9 {
					ix.Delete(k)
				} else {
					ix.Put(k, notes[(i+w)%len(notes)], DocMeta{Tags: []string{"t"}})
				}
			}
		})
		wg.Go(func() {
			for i := range 300 {
				hits := ix.Search(Query{Text: queries[i%len(queries)], Tags: []string{"t"}})
				for j := 1; j < len(hits); j++ {
					if better(hits[j], hits[j-1]) {
						t.Errorf("hits out of order: %v", hits)
					}
				}
				ix.Has("memory/1.md")
				ix.Stats()
			}
		})
	}
	wg.Go(func() {
		s := searchtest.NewMemSys()
		for range 20 {
			if _, err := ix.Save(t.Context(), s); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
}
