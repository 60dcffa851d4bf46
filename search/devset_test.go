package search_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/memfs/memfs/embed"
	"github.com/memfs/memfs/internal/devset"
	"github.com/memfs/memfs/search"
)

// defaultEmbedder opens the default embedder (the installed static
// table). Without it the test skips, and fails under MEMFS_REQUIRE_MODEL=1
// (scripts/test.sh sets it: CI installs the table).
func defaultEmbedder(t testing.TB) embed.Embedder {
	t.Helper()
	e, err := embed.Open("default", embed.Options{})
	if errors.Is(err, embed.ErrNotInstalled) {
		if os.Getenv("MEMFS_REQUIRE_MODEL") == "1" {
			t.Fatalf("MEMFS_REQUIRE_MODEL=1 and %v", err)
		}
		t.Skipf("no default embedder installed (memfs models install): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// scores is recall@5 and MRR of one mode on one kind of question.
type scores struct{ recall5, mrr float64 }

// evalDevSet ranks every question of the dev set in mode with fusion f
// and scores each kind of question.
func evalDevSet(t testing.TB, e embed.Embedder, set devset.Set, mode search.Mode, f search.Fusion) map[string]scores {
	t.Helper()
	docs := make([]search.Doc, len(set.Notes))
	for i, n := range set.Notes {
		docs[i] = search.Doc{Key: n.Key, Value: []byte(n.Value)}
	}
	out := make(map[string]scores)
	for _, kind := range []string{devset.KindParaphrase, devset.KindKeyword} {
		qs := devset.OfKind(set.Questions, kind)
		ranked := make([][]string, len(qs))
		for i, q := range qs {
			hits, err := search.RankDocs(context.Background(), e, docs, search.Query{Text: q.Q, TopK: 10, Mode: mode}, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				ranked[i] = append(ranked[i], h.Key)
			}
		}
		out[kind] = scores{devset.RecallAt(5, ranked, qs), devset.MRR(ranked, qs)}
	}
	return out
}

// TestDevSetRecall measures keyword, semantic and hybrid search on the
// project's dev set (testdata/recall) with the default embedder and the
// default fusion, as BENCHMARKS.md reports them (go test -v -run
// TestDevSetRecall ./search). It holds the ground each part gained, on
// the paraphrased questions (88):
//
//   - stemming: keyword search must find at least 0.40 of them (0.307
//     without stemming, 0.443 with Porter's; Porter2 gave 0.409);
//   - the vectors: hybrid must find 0.10 more than keyword search (0.137
//     more over stemmed keywords: 19 questions gained, 7 lost; before
//     stemming it was 0.238, and the rule 0.15). A broken embedder or
//     fusion gives about 0.
//
// and on the questions in the notes' own words: keyword search finds
// every one in its top 5, and hybrid loses none of them.
func TestDevSetRecall(t *testing.T) {
	e := defaultEmbedder(t)
	set, err := devset.Load(devset.Path())
	if err != nil {
		t.Fatal(err)
	}
	f := search.DefaultFusion()
	res := make(map[search.Mode]map[string]scores)
	var table strings.Builder
	fmt.Fprintf(&table, "embedder %s, fusion %+v, %d notes\n", e.ID(), f, len(set.Notes))
	for _, m := range []search.Mode{search.ModeKeyword, search.ModeSemantic, search.ModeHybrid} {
		res[m] = evalDevSet(t, e, set, m, f)
		p, k := res[m][devset.KindParaphrase], res[m][devset.KindKeyword]
		fmt.Fprintf(&table, "%-8s paraphrase recall@5 %.3f MRR %.3f | keyword recall@5 %.3f MRR %.3f\n", m, p.recall5, p.mrr, k.recall5, k.mrr)
	}
	t.Log("\n" + table.String())
	kw, hy := res[search.ModeKeyword], res[search.ModeHybrid]
	if kw[devset.KindParaphrase].recall5 < 0.40 {
		t.Errorf("keyword paraphrase recall@5 %.3f, want at least 0.40 (stemming)", kw[devset.KindParaphrase].recall5)
	}
	if hy[devset.KindParaphrase].recall5 < kw[devset.KindParaphrase].recall5+0.10 {
		t.Errorf("hybrid paraphrase recall@5 %.3f: not 0.10 above keyword's %.3f", hy[devset.KindParaphrase].recall5, kw[devset.KindParaphrase].recall5)
	}
	if kw[devset.KindKeyword].recall5 < 1 {
		t.Errorf("keyword search's recall@5 on the questions in the notes' words %.3f, want 1", kw[devset.KindKeyword].recall5)
	}
	if hy[devset.KindKeyword].recall5 < kw[devset.KindKeyword].recall5 {
		t.Errorf("hybrid keyword-question recall@5 %.3f below keyword search's %.3f", hy[devset.KindKeyword].recall5, kw[devset.KindKeyword].recall5)
	}
}

// TestDevSetTuneFusion sweeps the fusion's Alpha and Floor on the dev set
// and logs each setting's scores (MEMFS_TUNE=1: it is how DefaultFusion
// was chosen, not a check).
func TestDevSetTuneFusion(t *testing.T) {
	if os.Getenv("MEMFS_TUNE") != "1" {
		t.Skip("a tuning sweep: run with MEMFS_TUNE=1")
	}
	e := defaultEmbedder(t)
	set, err := devset.Load(devset.Path())
	if err != nil {
		t.Fatal(err)
	}
	alphas := []float64{0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}
	floors := []float64{0, 0.2, 0.4}
	for _, fl := range floors {
		for _, a := range alphas {
			r := evalDevSet(t, e, set, search.ModeHybrid, search.Fusion{Alpha: a, Floor: fl})
			p, k := r[devset.KindParaphrase], r[devset.KindKeyword]
			t.Logf("alpha %.1f floor %.1f: paraphrase recall@5 %.3f MRR %.3f | keyword %.3f %.3f", a, fl, p.recall5, p.mrr, k.recall5, k.mrr)
		}
	}
}
