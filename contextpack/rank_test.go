package contextpack_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/contextpack"
	"github.com/memfs/memfs/meta"
)

// entrySource is a Source over entries, listed in their order (which a
// test may shuffle).
type entrySource []backend.Entry

func (s entrySource) Entries(prefix string) []backend.Entry {
	var out []backend.Entry
	for _, e := range s {
		if strings.HasPrefix(e.Key, prefix) {
			e.Value = nil // as a session lists unloaded values
			out = append(out, e)
		}
	}
	return out
}

func (s entrySource) Resolve(context.Context, ...string) error { return nil }

func (s entrySource) Get(k string) ([]byte, bool) {
	for _, e := range s {
		if e.Key == k {
			return e.Value, true
		}
	}
	return nil, false
}

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func note(key, text string, age time.Duration, importance string) backend.Entry {
	e := backend.Entry{Key: key, Value: []byte(text), Info: backend.Info{Mode: 0o644, MTime: t0.Add(-age), Size: int64(len(text))}}
	if importance != "" {
		e.Info.XAttrs = map[string][]byte{meta.Importance: []byte(importance)}
	}
	return e
}

// corpus is 300 short notes of one length (n000 to n299, importance and
// age from a fixed seed), 3 skills and 40 step summaries.
func corpus(seed uint64) entrySource {
	r := rand.New(rand.NewPCG(seed, 1))
	var src entrySource
	for i := range 300 {
		imp := ""
		if r.IntN(3) > 0 {
			imp = strconv.FormatFloat(float64(r.IntN(101))/100, 'f', 2, 64)
		}
		age := time.Duration(r.IntN(60*24)) * time.Hour
		src = append(src, note(fmt.Sprintf("memory/notes/n%03d.md", i), fmt.Sprintf("fact %03d about the project.\n", i), age, imp))
	}
	for i, name := range []string{"deploy", "review", "triage"} {
		skill := fmt.Sprintf("---\nname: %s\ndescription: how to %s, step by step.\n---\nbody %d\n", name, name, i)
		src = append(src, backend.Entry{Key: "skills/" + name + "/SKILL.md", Value: []byte(skill),
			Info: backend.Info{Mode: 0o644, XAttrs: map[string][]byte{meta.Skill: meta.SkillAttr([]byte(skill))}}})
	}
	src = append(src, backend.Entry{Key: contextpack.SummariesKey, Value: []byte(summaries(40)), Info: backend.Info{Mode: 0o644, MTime: t0}})
	return src
}

// score is the test's own ranking of a note, from the package doc.
func score(e backend.Entry, newest time.Time, relevance float64) float64 {
	imp := 0.5
	if v, ok := e.Info.XAttrs[meta.Importance]; ok {
		imp, _ = strconv.ParseFloat(string(v), 64)
	}
	rec := math.Pow(0.5, newest.Sub(e.Info.MTime).Hours()/(7*24))
	return relevance * max(imp, 0.05) * max(rec, 0.05)
}

// The case: with 300 notes and 3 skills, the pack holds the whole
// skills index and the latest summaries, and its notes are exactly the
// highest-ranked ones (by a ranking computed here), best first.
func TestPack300NotesByValue(t *testing.T) {
	src := corpus(17)
	p, err := contextpack.Build(t.Context(), src, contextpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkManifest(t, p)
	for _, want := range []string{"- deploy: how to deploy, step by step. (skills/deploy/SKILL.md)\n",
		"- review: how to review, step by step. (skills/review/SKILL.md)\n", "- triage: how to triage, step by step. (skills/triage/SKILL.md)\n"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("skills index line %q missing", want)
		}
	}
	for i := 35; i < 40; i++ {
		if want := fmt.Sprintf("run r1 step s%d: did step %d\n", i, i); !strings.Contains(p.Text, want) {
			t.Errorf("latest summary %q missing", want)
		}
	}
	if strings.Contains(p.Text, "step s34:") {
		t.Error("the 6th latest summary is in the pack")
	}

	// The test's own ranking.
	var notes []backend.Entry
	var newest time.Time
	for _, e := range src {
		if strings.HasPrefix(e.Key, "memory/notes/") {
			notes = append(notes, e)
			if e.Info.MTime.After(newest) {
				newest = e.Info.MTime
			}
		}
	}
	slices.SortFunc(notes, func(a, b backend.Entry) int {
		if sa, sb := score(a, newest, 1), score(b, newest, 1); sa != sb {
			if sa > sb {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Key, b.Key)
	})
	var in []contextpack.Item
	for _, it := range p.Manifest.Included {
		if it.Kind == "note" {
			in = append(in, it)
		}
	}
	if len(in) < 20 || len(in) > 290 {
		t.Fatalf("%d notes in the pack: want many, not all", len(in))
	}
	at := 0
	for i, it := range in {
		want := notes[i]
		if it.Key != want.Key {
			t.Fatalf("note %d in the pack is %s, want %s (score %v, manifest %+v)", i, it.Key, want.Key, score(want, newest, 1), *it.Score)
		}
		if s := score(want, newest, 1); math.Abs(it.Score.Score-s) > 1e-12 {
			t.Errorf("%s: manifest score %v, want %v", it.Key, it.Score.Score, s)
		}
		if it.Cut {
			t.Errorf("%s cut: short notes of one length go in whole", it.Key)
		}
		j := strings.Index(p.Text[at:], "### "+it.Key+"\n")
		if j < 0 {
			t.Fatalf("%s missing or out of rank order in the pack", it.Key)
		}
		at += j
	}
	// Each left-out note ranks below every one in.
	last := in[len(in)-1].Score.Score
	for _, it := range p.Manifest.LeftOut {
		if it.Kind == "note" && (it.Score == nil || it.Score.Score > last) {
			t.Errorf("left out %s with score %+v above the last one in (%v)", it.Key, it.Score, last)
		}
		if it.Kind != "note" {
			t.Errorf("left out %s %s %s: the skills and summaries fit their shares", it.Kind, it.Key, it.Name)
		}
	}
	if n := len(in) + len(p.Manifest.LeftOut); n != 300 {
		t.Errorf("%d notes in and left out, want 300", n)
	}
	// Notes filled what the skills and summaries left: not another note
	// would fit.
	if free := p.Manifest.MaxChars - p.Manifest.Chars; free >= utf8.RuneCountInString("### memory/notes/n000.md\n\nfact 000 about the project.\n\n") {
		t.Errorf("%d characters free, room for another note", free)
	}

	// Key order would have put n000, n001... first: the ranking did not.
	if in[0].Key == "memory/notes/n000.md" && in[1].Key == "memory/notes/n001.md" {
		t.Error("notes in key order")
	}
}

// The same inputs, in any order, give a byte-identical pack and manifest.
func TestPackDeterministic(t *testing.T) {
	for _, q := range []string{"", "fact 042 project"} {
		src := corpus(3)
		o := contextpack.Options{Query: q, MaxChars: 5000, Seq: 1234}
		first, err := contextpack.Build(t.Context(), src, o)
		if err != nil {
			t.Fatal(err)
		}
		checkManifest(t, first)
		if !strings.Contains(first.Text, " seq:1234 ") {
			t.Errorf("hash line without seq:1234: %.120s", first.Text)
		}
		r := rand.New(rand.NewPCG(9, 9))
		for range 5 {
			r.Shuffle(len(src), func(i, j int) { src[i], src[j] = src[j], src[i] })
			again, err := contextpack.Build(t.Context(), src, o)
			if err != nil {
				t.Fatal(err)
			}
			if again.Text != first.Text || !bytes.Equal(again.Manifest.JSON(), first.Manifest.JSON()) {
				t.Fatalf("query %q: a shuffled source gives another pack", q)
			}
		}
	}
}

// Importance and recency order notes as documented; a query puts the
// relevant note first; with no relevance, importance × recency decide.
func TestPackRanking(t *testing.T) {
	day := 24 * time.Hour
	for _, tt := range []struct {
		name  string
		src   entrySource
		query string
		want  []string // note keys, best first
	}{
		{"importance", entrySource{note("memory/a.md", "a\n", 0, ""), note("memory/b.md", "b\n", 0, "0.9")}, "", []string{"memory/b.md", "memory/a.md"}},
		{"unset is 0.5", entrySource{note("memory/a.md", "a\n", 0, "0.4"), note("memory/b.md", "b\n", 0, "")}, "", []string{"memory/b.md", "memory/a.md"}},
		{"recency", entrySource{note("memory/a.md", "a\n", 2*day, ""), note("memory/b.md", "b\n", 0, "")}, "", []string{"memory/b.md", "memory/a.md"}},
		// Two half-lives: 1 × 0.25 beats 0.2 × 1; three: 0.125 does not.
		{"old and important", entrySource{note("memory/a.md", "a\n", 14*day, "1"), note("memory/b.md", "b\n", 0, "0.2")}, "", []string{"memory/a.md", "memory/b.md"}},
		{"older and important", entrySource{note("memory/a.md", "a\n", 21*day, "1"), note("memory/b.md", "b\n", 0, "0.2")}, "", []string{"memory/b.md", "memory/a.md"}},
		// Recency is measured from the newest note, not from now: both are
		// years old, one day apart.
		{"recency from the newest note", entrySource{note("memory/a.md", "a\n", 1000*day, "0.5"), note("memory/b.md", "b\n", 1001*day, "0.6")}, "", []string{"memory/b.md", "memory/a.md"}},
		{"ties by key", entrySource{note("memory/b.md", "x\n", 0, ""), note("memory/a.md", "y\n", 0, "")}, "", []string{"memory/a.md", "memory/b.md"}},
		{"query first", entrySource{note("memory/a.md", "about cats\n", 0, "1"), note("memory/b.md", "about the kernel cache\n", 0, "0.1")}, "kernel", []string{"memory/b.md", "memory/a.md"}},
		{"no relevance: importance decides", entrySource{note("memory/a.md", "cats\n", 0, "0.3"), note("memory/b.md", "dogs\n", 0, "0.6"), note("memory/c.md", "kernel\n", 0, "0")}, "kernel",
			[]string{"memory/c.md", "memory/b.md", "memory/a.md"}},
		{"importance 0 keeps relevance", entrySource{note("memory/a.md", "kernel\n", 0, "0"), note("memory/b.md", "kernel cache\n", 0, "0.01")}, "kernel cache", []string{"memory/b.md", "memory/a.md"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := contextpack.Build(t.Context(), tt.src, contextpack.Options{Query: tt.query})
			if err != nil {
				t.Fatal(err)
			}
			checkManifest(t, p)
			var got []string
			for _, it := range p.Manifest.Included {
				got = append(got, it.Key)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("notes %v, want %v (%s)", got, tt.want, p.Manifest.JSON())
			}
		})
	}
}

// Only the best notes go in when room is short, the relevant one first;
// a custom Rank is used and its errors are reported.
func TestPackRankOption(t *testing.T) {
	src := corpus(5)
	byNumber := func(_ context.Context, q string, docs []contextpack.Doc) ([]float64, error) {
		out := make([]float64, len(docs))
		for i, d := range docs {
			if strings.Contains(d.Text, "fact 123 ") {
				out[i] = 7
			}
		}
		return out, nil
	}
	p, err := contextpack.Build(t.Context(), src, contextpack.Options{Query: "anything", Rank: byNumber, MaxChars: 1200})
	if err != nil {
		t.Fatal(err)
	}
	checkManifest(t, p)
	var first *contextpack.Item
	for i, it := range p.Manifest.Included {
		if it.Kind == "note" {
			first = &p.Manifest.Included[i]
			break
		}
	}
	if first == nil || first.Key != "memory/notes/n123.md" || first.Score.Relevance != 1 {
		t.Fatalf("first note %+v, want memory/notes/n123.md with relevance 1", first)
	}
	for _, it := range p.Manifest.LeftOut {
		if it.Kind == "note" && it.Score.Relevance != contextpack.MinRelevance {
			t.Errorf("%s: relevance %v, want the floor %v", it.Key, it.Score.Relevance, contextpack.MinRelevance)
		}
	}
	failing := func(context.Context, string, []contextpack.Doc) ([]float64, error) {
		return nil, fmt.Errorf("ranker down")
	}
	if _, err := contextpack.Build(t.Context(), src, contextpack.Options{Query: "q", Rank: failing}); err == nil || !strings.Contains(err.Error(), "ranker down") {
		t.Errorf("Build with a failing ranker: %v", err)
	}
}

// The reserved shares hold even when the notes would take everything,
// and a large skills index gets what notes leave beyond its share.
func TestPackReservedShares(t *testing.T) {
	src := corpus(1)
	for i := range 60 {
		k := fmt.Sprintf("skills/extra%02d/SKILL.md", i)
		src = append(src, backend.Entry{Key: k, Value: []byte(fmt.Sprintf("---\nname: extra%02d\ndescription: an extra skill with a long description to fill the index.\n---\n", i))})
	}
	p, err := contextpack.Build(t.Context(), src, contextpack.Options{MaxChars: 4000})
	if err != nil {
		t.Fatal(err)
	}
	checkManifest(t, p)
	sec := map[string]contextpack.Section{}
	for _, s := range p.Manifest.Sections {
		sec[s.Name] = s
	}
	if s := sec["skills"]; s.Used > s.Reserved || s.Used < s.Reserved-100 {
		t.Errorf("skills used %d of %d reserved: notes left the skills nothing beyond their share, and the share is full", s.Used, s.Reserved)
	}
	if s := sec["summaries"]; s.Used == 0 || s.Used > s.Reserved {
		t.Errorf("summaries used %d of %d reserved", s.Used, s.Reserved)
	}
	// Few notes: the skills index gets the rest.
	var small entrySource
	for _, e := range src {
		if !strings.HasPrefix(e.Key, "memory/notes/") || e.Key < "memory/notes/n003" {
			small = append(small, e)
		}
	}
	p, err = contextpack.Build(t.Context(), small, contextpack.Options{MaxChars: 12000})
	if err != nil {
		t.Fatal(err)
	}
	checkManifest(t, p)
	if strings.Count(p.Text, "- extra") != 60 || !strings.Contains(p.Text, "### memory/notes/n002.md") {
		t.Errorf("with room to spare, not every skill and note is in:\n%s", p.Text)
	}
}

// Shares that add up to more than the budget still keep the pack within
// it.
func TestPackSharesOverBudget(t *testing.T) {
	src := corpus(2)
	for max := 1; max < 3000; max += 211 {
		p, err := contextpack.Build(t.Context(), src, contextpack.Options{MaxChars: max, SkillsShare: 0.9, SummariesShare: 0.9})
		if err != nil {
			t.Fatal(err)
		}
		if n := utf8.RuneCountInString(p.Text); n > max {
			t.Errorf("budget %d: %d characters", max, n)
		}
		if p.Text != "" {
			checkManifest(t, p)
		}
	}
}
