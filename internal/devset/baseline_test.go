package devset_test

import (
	"testing"

	"github.com/memfs/memfs/internal/devset"
	"github.com/memfs/memfs/search"
)

// TestBM25Baseline ranks the set with today's keyword index (package
// search) and logs recall@5 and MRR per kind: the baseline hybrid search is
// measured against (run with -v). It requires keyword questions to be
// found, since they are there to show what keyword search gets right.
func TestBM25Baseline(t *testing.T) {
	s, err := devset.Load(devset.Path())
	if err != nil {
		t.Fatal(err)
	}
	ix := search.New(search.Options{})
	for _, n := range s.Notes {
		ix.Put(n.Key, []byte(n.Value), search.DocMeta{})
	}
	for _, kind := range []string{devset.KindParaphrase, devset.KindKeyword} {
		qs := devset.OfKind(s.Questions, kind)
		ranked := make([][]string, len(qs))
		for i, q := range qs {
			for _, h := range ix.Search(search.Query{Text: q.Q, TopK: 10}) {
				ranked[i] = append(ranked[i], h.Key)
			}
		}
		r5, mrr := devset.RecallAt(5, ranked, qs), devset.MRR(ranked, qs)
		t.Logf("BM25, %d %s questions: recall@5 %.3f, MRR@10 %.3f", len(qs), kind, r5, mrr)
		if kind == devset.KindKeyword && r5 < 0.9 {
			t.Errorf("BM25 recall@5 of keyword questions = %.3f, want at least 0.9", r5)
		}
	}
}
