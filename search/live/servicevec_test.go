package live

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/embed"
	"github.com/memfs/memfs/internal/await"
	"github.com/memfs/memfs/search"
	"github.com/memfs/memfs/search/internal/searchtest"
	"github.com/memfs/memfs/session"
)

// waitVectors waits until s has n vectors and nothing pending.
func waitVectors(t *testing.T, s *Service, n int) {
	t.Helper()
	if !await.Cond(10*time.Second, 20*time.Millisecond, func() bool {
		st := s.VectorStatus()
		return st.Vectors == n && st.Pending == 0
	}) {
		t.Fatalf("vectors: got %+v, want %d and none pending", s.VectorStatus(), n)
	}
}

// vecEnv opens a service with an embedder over st, with docs flushed.
func vecEnv(t *testing.T, st *searchtest.MemSys, emb embed.Embedder, docs map[string]string) (*svcEnv, *Service) {
	t.Helper()
	e := newSvcEnv(t, st, ServiceOptions{Embedder: emb, SaveDelay: time.Millisecond})
	keys := make([]string, 0, len(docs))
	for k := range docs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e.put(t, k, docs[k], 0o644, 1000)
	}
	e.flush(t)
	s := e.svc(t)
	return e, s
}

var vecDocs = map[string]string{
	"memory/billing.md":  "The invoice for the March hosting is due on Friday.",
	"memory/garage.md":   "Took the automobile to the garage; they will repair the brakes.",
	"memory/clinic.md":   "Appointment with the physician next Tuesday at nine.",
	"memory/pets.md":     "The canine needs a walk twice a day.",
	"memory/shopping.md": "Purchase milk, bread and coffee on the way home.",
	"memory/mood.md":     "Felt glad after the long weekend.",
}

// TestServiceVectorsPersistAndRepair: vectors follow flushes, are saved
// as search/vec-SET-NN, load back at the next open without embedding again,
// and a flipped byte in one vector shard makes them embedded again
// without touching the BM25 shards.
func TestServiceVectorsPersistAndRepair(t *testing.T) {
	st := searchtest.NewMemSys()
	emb := &fakeEmbedder{}
	e, s := vecEnv(t, st, emb, vecDocs)
	waitVectors(t, s, len(vecDocs))
	e.put(t, "memory/gone.md", "soon deleted", 0o644, 1000)
	e.flush(t)
	waitVectors(t, s, len(vecDocs)+1)
	if err := e.c.Delete("memory/gone.md"); err != nil {
		t.Fatal(err)
	}
	e.flush(t)
	s.apply()
	if _, ok := s.vec.Cosine("memory/gone.md", search.NewQueryVec(fakeVector("soon"))); ok {
		t.Error("a deleted key kept its vector")
	}
	if err := e.lazy.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	name := search.VecShardName(emb.ID(), search.ShardOf("memory/billing.md"))
	rec := st.Rec(t, name)
	if !bytes.Contains(rec, []byte(emb.ID())) || !bytes.Contains(rec, []byte("memory/billing.md")) {
		t.Fatalf("record %s lacks the embedder's ID or the key", name)
	}
	// Reopen: nothing to embed.
	calls := emb.calls.Load()
	s2, err := OpenService(t.Context(), e.c, st, ServiceOptions{Redactor: testRedactor(t), Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	if got := s2.VectorStatus(); got.Vectors != len(vecDocs) || got.Pending != 0 {
		t.Errorf("reopened: got %+v, want %d vectors, none pending", got, len(vecDocs))
	}
	if err := s2.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := emb.calls.Load(); n != calls {
		t.Errorf("reopen embedded %d times, want none", n-calls)
	}
	// Corrupt one vector shard.
	bm := st.Rec(t, search.ShardName(search.ShardOf("memory/billing.md")))
	bad := bytes.Clone(rec)
	bad[len(bad)/2] ^= 1
	st.Put(t, name, bad)
	before := len(emb.embedded())
	s3, err := OpenService(t.Context(), e.c, st, ServiceOptions{Redactor: testRedactor(t), Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close(t.Context())
	waitVectors(t, s3, len(vecDocs))
	if got := len(emb.embedded()) - before; got != len(vecDocs) {
		t.Errorf("after a corrupt shard: %d values embedded again, want all %d", got, len(vecDocs))
	}
	if got := st.Rec(t, search.ShardName(search.ShardOf("memory/billing.md"))); !bytes.Equal(got, bm) {
		t.Error("a corrupt vector shard changed a BM25 shard")
	}
	if base := s3.base.Len(); base != len(vecDocs) {
		t.Errorf("BM25 index after a corrupt vector shard: %d documents, want %d", base, len(vecDocs))
	}
}

// TestServiceVectorRedaction: the vector of a value with a secret is the
// vector of its redacted form; the embedder never sees the secret, in the
// background or at search time (unflushed values and the query).
func TestServiceVectorRedaction(t *testing.T) {
	emb := &fakeEmbedder{}
	key := "memory/keys.md"
	value := "deploy token " + searchtest.Secret + " for the invoice service"
	e, s := vecEnv(t, searchtest.NewMemSys(), emb, map[string]string{key: value})
	waitVectors(t, s, 1)
	red, _ := testRedactor(t).Redact(key, []byte(value))
	if bytes.Contains(red, []byte(searchtest.Secret)) {
		t.Fatal("the test redactor does not redact the secret")
	}
	redVec, rawVec := fakeVector(search.EmbedText(key, red)), fakeVector(search.EmbedText(key, []byte(value)))
	if slices.Equal(redVec, rawVec) {
		t.Fatal("the secret does not change the fake vector: the check proves nothing")
	}
	// The stored vector is the redacted form's when it scores as that one,
	// stored alone, does: the same quantized coordinates give the same
	// cosines, bit for bit, with any query.
	want := search.NewVectors(emb.ID())
	if err := want.Put(key, search.Stamp{}, redVec); err != nil {
		t.Fatal(err)
	}
	for _, probe := range [][]float32{redVec, rawVec} {
		qv := search.NewQueryVec(probe)
		got, ok := s.vec.Cosine(key, qv)
		w, _ := want.Cosine(key, qv)
		if !ok || got != w {
			t.Errorf("stored vector: cosine %v (%v), want the redacted form's %v", got, ok, w)
		}
	}
	e.put(t, "memory/unflushed.md", "another "+searchtest.Secret+" bill", 0o644, 1000)
	if _, err := s.Search(session.WithCred(t.Context(), credOwner), search.Query{Text: "invoice " + searchtest.Secret, Mode: search.ModeSemantic}); err != nil {
		t.Fatal(err)
	}
	texts := emb.embedded()
	if len(texts) < 3 {
		t.Fatalf("embedded %d texts, want the value, the unflushed one and the query", len(texts))
	}
	for _, tx := range texts {
		if strings.Contains(tx, searchtest.Secret) {
			t.Errorf("the embedder saw the secret in %q", tx)
		}
	}
}

// semantic searches text in mode for cr and returns the result keys in
// order.
func semantic(t *testing.T, s *Service, cr session.Cred, text string, mode search.Mode, topK int) []Result {
	t.Helper()
	res, err := s.Search(session.WithCred(t.Context(), cr), search.Query{Text: text, Mode: mode, TopK: topK})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func keysOf(res []Result) []string {
	var ks []string
	for _, r := range res {
		ks = append(ks, r.Key)
	}
	return ks
}

// TestServiceSemanticReadable: in semantic and hybrid mode an unreadable
// document never appears, flushed or not, and the caller still gets TopK.
func TestServiceSemanticReadable(t *testing.T) {
	emb := &fakeEmbedder{}
	e := newSvcEnv(t, nil, ServiceOptions{Embedder: emb, SaveDelay: time.Millisecond})
	for _, k := range []string{"p1", "p2", "p3", "p4"} {
		e.put(t, "private/"+k+".md", "the invoice", 0o600, 1000)
	}
	e.put(t, "public/x.md", "an invoice to pay, and other things", 0o644, 1000)
	e.put(t, "public/y.md", "an invoice to pay, and many other things", 0o644, 1000)
	e.flush(t)
	s := e.svc(t)
	waitVectors(t, s, 6)
	e.put(t, "private/p5.md", "the bill", 0o600, 1000)
	e.put(t, "public/z.md", "a bill to pay, with more things", 0o644, 1000)
	for _, mode := range []search.Mode{search.ModeSemantic, search.ModeHybrid} {
		got := keysOf(semantic(t, s, credOther, "bill", mode, 3))
		slices.Sort(got)
		if want := []string{"public/x.md", "public/y.md", "public/z.md"}; !slices.Equal(got, want) {
			t.Errorf("%v, another user: got %v, want %v", mode, got, want)
		}
		if got := keysOf(semantic(t, s, credOwner, "bill", mode, 3)); len(got) != 3 || !strings.HasPrefix(got[0], "private/") {
			t.Errorf("%v, the owner: got %v, want 3 hits, a private one first", mode, got)
		}
	}
}

// TestServiceSemanticOverlay: an unflushed value is found by meaning with
// its first line as snippet; an unflushed rewrite shadows the old vector;
// filters apply.
func TestServiceSemanticOverlay(t *testing.T) {
	emb := &fakeEmbedder{}
	e, s := vecEnv(t, searchtest.NewMemSys(), emb, vecDocs)
	waitVectors(t, s, len(vecDocs))
	e.put(t, "memory/new.md", "Pay the bill\nfrom the electricity company", 0o644, 1000)
	if err := e.c.Set("memory/garage.md", []byte("wombats dig burrows")); err != nil {
		t.Fatal(err)
	}
	res := semantic(t, s, credOwner, "invoice", search.ModeSemantic, 10)
	if got := keysOf(res); !slices.Contains(got, "memory/new.md") || !slices.Contains(got, "memory/billing.md") {
		t.Fatalf("semantic invoice: got %v, want memory/new.md and memory/billing.md", got)
	}
	for _, r := range res {
		if r.Key == "memory/new.md" && r.Snippet != "Pay the bill from the electricity company" {
			t.Errorf("snippet: got %q, want the value's start", r.Snippet)
		}
	}
	if got := keysOf(semantic(t, s, credOwner, "car repair", search.ModeSemantic, 10)); slices.Contains(got, "memory/garage.md") {
		t.Errorf("semantic car repair: got %v; the unflushed rewrite shadows memory/garage.md", got)
	}
	res, err := s.Search(session.WithCred(t.Context(), credOwner), search.Query{Text: "invoice", Mode: search.ModeSemantic, Prefix: "memory/n"})
	if err != nil || !slices.Equal(keysOf(res), []string{"memory/new.md"}) {
		t.Errorf("with a prefix: got %v, %v; want memory/new.md", keysOf(res), err)
	}
	// Keyword mode finds neither: no common word.
	if got := keysOf(semantic(t, s, credOwner, "invoice", search.ModeKeyword, 10)); !slices.Equal(got, []string{"memory/billing.md"}) {
		t.Errorf("keyword invoice: got %v, want memory/billing.md", got)
	}
}

// TestQueryMode: mode: parses, and a mode needing an embedder without one
// is an error wrapping ErrQuery.
func TestQueryMode(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want search.Mode
		err  bool
	}{
		{"plain words", search.ModeDefault, false},
		{"mode:keyword x", search.ModeKeyword, false},
		{"mode:semantic x", search.ModeSemantic, false},
		{"x mode:hybrid", search.ModeHybrid, false},
		{"mode:fuzzy x", 0, true},
		{"mode: x", 0, true},
		{"mode:keyword mode:hybrid x", 0, true},
	} {
		r, err := search.ParseName(tt.in)
		q := r.Query
		if (err != nil) != tt.err || err != nil && !errors.Is(err, search.ErrQuery) {
			t.Errorf("%q: got error %v, want error %v (wrapping ErrQuery)", tt.in, err, tt.err)
			continue
		}
		if err == nil && (q.Mode != tt.want || q.Text != strings.Join(slices.DeleteFunc(strings.Fields(tt.in), func(w string) bool { return strings.HasPrefix(w, "mode:") }), " ")) {
			t.Errorf("%q: got mode %v text %q, want %v", tt.in, q.Mode, q.Text, tt.want)
		}
	}
	e := newSvcEnv(t, nil, ServiceOptions{})
	e.put(t, "memory/a.md", "invoice", 0o644, 1000)
	s := e.svc(t)
	ctx := session.WithCred(t.Context(), credOwner)
	for _, name := range []string{"invoice mode:semantic", "invoice mode:hybrid"} {
		if _, err := s.Answer(ctx, request(t, name)); !errors.Is(err, search.ErrQuery) || !strings.Contains(err.Error(), "no embedder") {
			t.Errorf("%q without an embedder: got %v, want ErrQuery saying there is no embedder", name, err)
		}
	}
	for _, name := range []string{"invoice mode:keyword", "invoice"} {
		if out, err := s.Answer(ctx, request(t, name)); err != nil || !bytes.Contains(out, []byte("memory/a.md")) {
			t.Errorf("%q without an embedder: got %q, %v; want the hit", name, out, err)
		}
	}
	if _, err := search.RankDocs(t.Context(), nil, nil, search.Query{Text: "x", Mode: search.ModeSemantic}, search.DefaultFusion()); !errors.Is(err, search.ErrQuery) {
		t.Errorf("RankDocs semantic without an embedder: got %v, want ErrQuery", err)
	}
}

// paraphrase is a small corpus whose queries share meaning, not words,
// with their answers (under the fake embedder's synonyms).
var paraphraseDocs = []search.Doc{
	{Key: "notes/billing.md", Value: []byte("The invoice for hosting arrives monthly; pay it from the company card.")},
	{Key: "notes/garage.md", Value: []byte("The automobile makes a noise; the garage will repair it next week.")},
	{Key: "notes/clinic.md", Value: []byte("The physician said to rest and drink water.")},
	{Key: "notes/pets.md", Value: []byte("The canine eats twice a day, no chocolate.")},
	{Key: "notes/groceries.md", Value: []byte("Purchase rice and beans; the store closes at eight.")},
	{Key: "notes/weekend.md", Value: []byte("Glad about the hike; the weather was perfect for it.")},
	{Key: "notes/card.md", Value: []byte("The company card expires in June; order a new card.")},
	{Key: "notes/week.md", Value: []byte("Next week: standup moves to Tuesday, the noise in the office continues.")},
}

var paraphraseQueries = []struct{ q, want string }{
	{"pay the bill", "notes/billing.md"},
	{"car noise fix", "notes/garage.md"},
	{"what did the doctor say", "notes/clinic.md"},
	{"feeding the dog", "notes/pets.md"},
	{"buy rice", "notes/groceries.md"},
	{"happy hike", "notes/weekend.md"},
	{"storm forecast", "notes/weekend.md"},
}

// TestHybridBeatsKeyword: on the paraphrase corpus, hybrid ranking puts
// the answer first more often than keyword ranking, and semantic too;
// RankDocs is deterministic.
func TestHybridBeatsKeyword(t *testing.T) {
	emb := &fakeEmbedder{}
	score := func(mode search.Mode) (top1 int) {
		for _, pq := range paraphraseQueries {
			hits, err := search.RankDocs(t.Context(), emb, paraphraseDocs, search.Query{Text: pq.q, Mode: mode, TopK: 3}, search.DefaultFusion())
			if err != nil {
				t.Fatal(err)
			}
			again, _ := search.RankDocs(t.Context(), emb, paraphraseDocs, search.Query{Text: pq.q, Mode: mode, TopK: 3}, search.DefaultFusion())
			if !slices.Equal(hits, again) {
				t.Errorf("%v %q: not deterministic: %v, then %v", mode, pq.q, hits, again)
			}
			if len(hits) > 0 && hits[0].Key == pq.want {
				top1++
			}
		}
		return top1
	}
	kw, hy, se := score(search.ModeKeyword), score(search.ModeHybrid), score(search.ModeSemantic)
	t.Logf("answers ranked first of %d: keyword %d, hybrid %d, semantic %d", len(paraphraseQueries), kw, hy, se)
	if hy <= kw || hy < len(paraphraseQueries)-1 {
		t.Errorf("hybrid ranked %d answers first, keyword %d: want hybrid better, at least %d", hy, kw, len(paraphraseQueries)-1)
	}
	// Filters, TopK and MinScore apply in every mode.
	for _, mode := range []search.Mode{search.ModeKeyword, search.ModeSemantic, search.ModeHybrid} {
		hits, err := search.RankDocs(t.Context(), emb, paraphraseDocs, search.Query{Text: "company card bill", Mode: mode, Prefix: "notes/c", TopK: 1}, search.DefaultFusion())
		if err != nil || len(hits) != 1 || !strings.HasPrefix(hits[0].Key, "notes/c") {
			t.Errorf("%v with a prefix and top 1: got %v, %v", mode, hits, err)
		}
		hits, _ = search.RankDocs(t.Context(), emb, paraphraseDocs, search.Query{Text: "company card bill", Mode: mode, MinScore: 1e9}, search.DefaultFusion())
		if len(hits) != 0 {
			t.Errorf("%v with min 1e9: got %v, want none", mode, hits)
		}
	}
}

// TestServiceHybridDefault: with an embedder the default mode is hybrid:
// a paraphrase finds the note, and the note matching the words ranks first.
func TestServiceHybridDefault(t *testing.T) {
	e, s := vecEnv(t, searchtest.NewMemSys(), &fakeEmbedder{}, vecDocs)
	_ = e
	waitVectors(t, s, len(vecDocs))
	if got := keysOf(semantic(t, s, credOwner, "the doctor", search.ModeDefault, 1)); !slices.Equal(got, []string{"memory/clinic.md"}) {
		t.Errorf("hybrid doctor: got %v, want memory/clinic.md", got)
	}
	if got := keysOf(semantic(t, s, credOwner, "doctor", search.ModeKeyword, 1)); len(got) != 0 {
		t.Errorf("keyword doctor: got %v, want none", got)
	}
}

// TestServiceSlowEmbedder: a flush and a search never wait for a slow
// embedder beyond EmbedWait; a document not embedded yet ranks by
// keyword; Close ends the embedding.
func TestServiceSlowEmbedder(t *testing.T) {
	emb := &fakeEmbedder{delay: time.Hour}
	e := newSvcEnv(t, nil, ServiceOptions{Embedder: emb, EmbedWait: 50 * time.Millisecond, SaveDelay: time.Millisecond})
	s := e.svc(t)
	e.put(t, "memory/a.md", "the invoice for March", 0o644, 1000)
	start := time.Now()
	e.flush(t)
	if d := time.Since(start); d > time.Second {
		t.Errorf("flush took %v with a slow embedder", d)
	}
	e.put(t, "memory/b.md", "the invoice for April", 0o644, 1000)
	start = time.Now()
	res := semantic(t, s, credOwner, "invoice", search.ModeDefault, 10)
	if d := time.Since(start); d > time.Second {
		t.Errorf("search took %v with EmbedWait 50ms", d)
	}
	if got := keysOf(res); !slices.Equal(got, []string{"memory/a.md", "memory/b.md"}) {
		t.Errorf("search with a slow embedder: got %v, want both by keyword", got)
	}
	if st := s.VectorStatus(); st.Vectors != 0 || st.Pending != 1 || st.Embedder != emb.ID() {
		t.Errorf("status: got %+v, want no vector, 1 pending", st)
	}
	start = time.Now()
	if err := e.lazy.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v with embeds in flight", d)
	}
}

// TestServiceVectorsRebuild: Rebuild deletes the vector records with the
// rest, and every value is embedded again.
func TestServiceVectorsRebuild(t *testing.T) {
	st := searchtest.NewMemSys()
	emb := &fakeEmbedder{}
	e, s := vecEnv(t, st, emb, vecDocs)
	waitVectors(t, s, len(vecDocs))
	if err := e.lazy.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := len(emb.embedded())
	s2, err := OpenService(t.Context(), e.c, st, ServiceOptions{Redactor: testRedactor(t), Embedder: emb, Rebuild: true, SaveDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	waitVectors(t, s2, len(vecDocs))
	if err := s2.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := len(emb.embedded()) - before; got != len(vecDocs) {
		t.Errorf("rebuild embedded %d values, want %d", got, len(vecDocs))
	}
	if rec := st.Rec(t, search.VecShardName(emb.ID(), search.ShardOf("memory/clinic.md"))); !bytes.Contains(rec, []byte("memory/clinic.md")) {
		t.Error("after the rebuild the vector shard lacks its key")
	}
}

// TestServiceOldFormatRebuilt: an index that memfs saved before stemming
// (search format version 3) is rebuilt at open, never read as it is (a
// stemmed query would miss its unstemmed terms), and that rebuild keeps
// the vector set: nothing is embedded again.
func TestServiceOldFormatRebuilt(t *testing.T) {
	st := searchtest.NewMemSys()
	emb := &fakeEmbedder{}
	docs := searchtest.IndexV3Docs()
	// The values with the stamps the old index has for them: only its
	// format can make it rebuilt.
	if err := st.Save(t.Context(), searchtest.IndexV3Entries()...); err != nil {
		t.Fatal(err)
	}
	e := newSvcEnv(t, st, ServiceOptions{Embedder: emb, SaveDelay: time.Millisecond})
	waitVectors(t, e.svc(t), len(docs))
	if err := e.lazy.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The BM25 shards as the previous version left them.
	var bm25 []string
	for s := range search.Shards {
		bm25 = append(bm25, search.ShardName(s))
	}
	if err := st.DeleteSys(t.Context(), bm25...); err != nil {
		t.Fatal(err)
	}
	for name, data := range searchtest.IndexV3(t) {
		st.Put(t, name, data)
	}
	vecs := make(map[string][]byte)
	for name, data := range st.Records(t) {
		if strings.HasPrefix(name, search.RecordPrefix+"vec-") {
			vecs[name] = data
		}
	}
	if len(vecs) == 0 {
		t.Fatal("no vector records")
	}
	before := len(emb.embedded())
	s2, err := OpenService(t.Context(), e.c, st, ServiceOptions{Redactor: testRedactor(t), Embedder: emb, SaveDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Repaired() != len(docs) {
		t.Errorf("Repaired() = %d, want every value: %d", s2.Repaired(), len(docs))
	}
	waitVectors(t, s2, len(docs))
	for q, want := range map[string]string{"payment refund": "memory/billing.md", "restored backup": "memory/backups.md", "deployed plan": "memory/deploy.md"} {
		if got := keysOf(semantic(t, s2, credOwner, q, search.ModeKeyword, 0)); !slices.Equal(got, []string{want}) {
			t.Errorf("%q: got %v, want %s", q, got, want)
		}
	}
	if err := s2.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := len(emb.embedded()) - before; got != 0 {
		t.Errorf("rebuilding an old-format index embedded %d values again, want none", got)
	}
	for name, data := range vecs {
		if got := st.Rec(t, name); !bytes.Equal(got, data) {
			t.Errorf("vector record %s changed", name)
		}
	}
	if _, err := search.Load(t.Context(), st, search.Options{}); err != nil {
		t.Errorf("the rebuilt index: %v", err)
	}
}

// request is the request name asks for (search.ParseName).
func request(t *testing.T, name string) search.Request {
	t.Helper()
	r, err := search.ParseName(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestServiceEmbedderSwitch: each embedder keeps vectors of its own. A
// store opened with another embedder embeds every value with it and
// leaves the first one's records as they were; opened with the first
// again, it embeds only the value changed meanwhile. Two services of one
// store with different models at once (two mounts of a shared store)
// each keep theirs too.
func TestServiceEmbedderSwitch(t *testing.T) {
	st := searchtest.NewMemSys()
	old := &fakeEmbedder{id: "fake:old@1"}
	e, s := vecEnv(t, st, old, vecDocs)
	waitVectors(t, s, len(vecDocs))
	if err := e.lazy.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	vecRecs := func(id string) map[string][]byte { // the vector records holding id
		m := map[string][]byte{}
		for name, rec := range st.Records(t) {
			if strings.HasPrefix(name, search.RecordPrefix+"vec-") && bytes.Contains(rec, []byte(id)) {
				m[name] = rec
			}
		}
		return m
	}
	open := func(emb *fakeEmbedder) *Service {
		t.Helper()
		s, err := OpenService(t.Context(), e.c, st, ServiceOptions{Redactor: testRedactor(t), Embedder: emb, SaveDelay: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		waitVectors(t, s, len(vecDocs))
		return s
	}
	closeSvc := func(s *Service) {
		t.Helper()
		if err := s.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	oldRecs := vecRecs(old.ID())
	if len(oldRecs) == 0 {
		t.Fatal("no vector record holds the first embedder's ID")
	}

	neu := &fakeEmbedder{id: "fake:new@2"}
	closeSvc(open(neu))
	if got := len(neu.embedded()); got != len(vecDocs) {
		t.Errorf("the new embedder embedded %d texts, want %d", got, len(vecDocs))
	}
	for name, rec := range oldRecs {
		if got := st.Rec(t, name); !bytes.Equal(got, rec) {
			t.Errorf("record %s of the first embedder changed under the second", name)
		}
	}
	if len(vecRecs(neu.ID())) == 0 {
		t.Error("no vector record holds the second embedder's ID")
	}

	// A value changed while neither follows the session.
	e.put(t, "memory/pets.md", "The canine needs a walk three times a day.", 0o644, 1000)
	e.flush(t)
	before := len(old.embedded())
	closeSvc(open(old))
	if got := old.embedded()[before:]; len(got) != 1 || !strings.Contains(got[0], "three times") {
		t.Errorf("back to the first embedder: embedded %q, want only the changed value", got)
	}

	// Both at once, then each again: nothing to embed.
	a, b := open(old), open(neu)
	closeSvc(a)
	closeSvc(b)
	nOld, nNew := len(old.embedded()), len(neu.embedded())
	closeSvc(open(old))
	closeSvc(open(neu))
	if dOld, dNew := len(old.embedded())-nOld, len(neu.embedded())-nNew; dOld != 0 || dNew != 0 {
		t.Errorf("reopened after both were open at once: embedded %d and %d texts again, want none", dOld, dNew)
	}
}

// remoteModel is an OpenAI-compatible embeddings server on loopback: a
// text with "owl" is [1 0], with "faint" at a cosine of 0.1 with it, any
// other at 0.
func remoteModel(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type datum struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []datum `json:"data"`
		}
		for i, text := range req.Input {
			v := []float32{0, 1}
			switch {
			case strings.Contains(text, "owl"):
				v = []float32{1, 0}
			case strings.Contains(text, "faint"):
				v = []float32{0.1, float32(math.Sqrt(1 - 0.01))}
			}
			out.Data = append(out.Data, datum{i, v})
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return "openai:" + srv.URL + "/v1?model=test"
}

// TestServiceRemoteFloor: a remote model's floor is its own (floor= in
// its spec, embed.RemoteFloor without one), not the static table's 0.2: a
// note at a cosine of 0.1 is a semantic hit under a floor of 0, and not
// under floor=0.15.
func TestServiceRemoteFloor(t *testing.T) {
	spec := remoteModel(t)
	for _, tt := range []struct {
		params string
		want   []string
	}{
		{"", []string{"memory/faint.md"}},
		{"&floor=0.15", nil},
	} {
		t.Run("floor"+tt.params, func(t *testing.T) {
			emb, err := embed.Open(spec+tt.params, embed.Options{})
			if err != nil {
				t.Fatal(err)
			}
			e := newSvcEnv(t, nil, ServiceOptions{Embedder: emb, SaveDelay: time.Millisecond, EmbedWait: time.Minute})
			e.put(t, "memory/faint.md", "a faint likeness", 0o644, 1000)
			e.put(t, "memory/none.md", "nothing alike", 0o644, 1000)
			e.flush(t)
			s := e.svc(t)
			waitVectors(t, s, 2)
			if got := keysOf(semantic(t, s, credOwner, "owl", search.ModeSemantic, 10)); !slices.Equal(got, tt.want) {
				t.Errorf("semantic owl: got %v, want %v", got, tt.want)
			}
		})
	}
}

// vecWriteSys counts the writes of each vector record.
type vecWriteSys struct {
	*searchtest.MemSys
	mu     sync.Mutex
	writes map[string]int // guarded by mu
}

func (w *vecWriteSys) SaveSys(ctx context.Context, name string, data []byte) error {
	if strings.HasPrefix(name, search.RecordPrefix+"vec-") {
		w.mu.Lock()
		w.writes[name]++
		w.mu.Unlock()
	}
	return w.MemSys.SaveSys(ctx, name, data)
}

// TestServiceBulkEmbeddingWritesEachShardOnce: embedding many documents
// through a slow model, a batch at a time with a save after each, writes
// each vector shard about once, not every shard a batch touched at every
// save (a batch of 64 keys touches about 40 of the 64 shards).
func TestServiceBulkEmbeddingWritesEachShardOnce(t *testing.T) {
	const docs = 20 * search.EmbedBatch // about 20 a shard
	w := &vecWriteSys{MemSys: searchtest.NewMemSys(), writes: map[string]int{}}
	c := session.NewContext(w, session.Options{})
	if err := c.Bootstrap(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i := range docs {
		err := c.Put(backend.Entry{Key: fmt.Sprintf("memory/note%04d.md", i), Value: []byte(fmt.Sprintf("note %d of the invoice archive", i)),
			Info: backend.Info{Mode: 0o644, UID: 1000, MTime: time.Now()}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	emb := &fakeEmbedder{delay: 20 * time.Millisecond}
	s, err := OpenService(t.Context(), c, w, ServiceOptions{Redactor: testRedactor(t), Embedder: emb, SaveDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	waitVectors(t, s, docs)
	if !await.Cond(10*time.Second, 5*time.Millisecond, func() bool { return s.vec.DirtyShards() == 0 }) {
		t.Fatalf("%d vector shards still unsaved", s.vec.DirtyShards())
	}
	w.mu.Lock()
	total, most := 0, 0
	for _, n := range w.writes {
		total += n
		most = max(most, n)
	}
	w.mu.Unlock()
	batches := emb.calls.Load()
	t.Logf("%d documents in %d batches: %d vector record writes (%.1f a batch), at most %d of one record", docs, batches, total, float64(total)/float64(batches), most)
	if total > search.Shards+search.Shards/4 || most > 2 {
		t.Errorf("%d vector record writes, at most %d of one: want about one a shard (%d)", total, most, search.Shards)
	}
}
