package devset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxParaphraseOverlap bounds Overlap for every paraphrase question against
// the union of its wanted notes. A question of three content words may
// share one with its note.
const maxParaphraseOverlap = 0.34

// minKeywordOverlap is the least Overlap of a keyword question: it must
// mostly use its note's own words.
const minKeywordOverlap = 0.6

func loadRepoSet(t *testing.T) Set {
	t.Helper()
	s, err := Load(Path())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPath(t *testing.T) {
	p := Path()
	if !filepath.IsAbs(p) {
		t.Fatalf("Path() = %q, want an absolute path", p)
	}
	if _, err := os.Stat(filepath.Join(p, "questions.jsonl")); err != nil {
		t.Errorf("Path() = %q holds no questions.jsonl: %v", p, err)
	}
}

// TestSetParses checks the repository's set: every note and question
// parses, every wanted key names a note (Load refuses otherwise), the
// sizes the README states, and notes of 80 to 400 words.
func TestSetParses(t *testing.T) {
	s := loadRepoSet(t)
	if got := len(s.Notes); got < 80 {
		t.Errorf("got %d notes, want at least 80", got)
	}
	if got := len(OfKind(s.Questions, KindParaphrase)); got < 80 {
		t.Errorf("got %d paraphrase questions, want at least 80", got)
	}
	if got := len(OfKind(s.Questions, KindKeyword)); got < 15 {
		t.Errorf("got %d keyword questions, want at least 15", got)
	}
	for _, n := range s.Notes {
		if !strings.HasPrefix(n.Key, "memory/") {
			t.Errorf("note key %q is not under memory/", n.Key)
		}
		if w := len(strings.Fields(n.Value)); w < 80 || w > 400 {
			t.Errorf("note %s has %d words, want 80 to 400", n.Key, w)
		}
	}
	seen := map[string]bool{}
	for _, q := range s.Questions {
		if seen[q.Q] {
			t.Errorf("question %q appears twice", q.Q)
		}
		seen[q.Q] = true
	}
}

// noteText returns the concatenated values of the notes with the given
// keys.
func noteText(s Set, keys []string) string {
	var b strings.Builder
	for _, n := range s.Notes {
		for _, k := range keys {
			if n.Key == k {
				b.WriteString(n.Value)
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// TestParaphraseOverlap holds every paraphrase question to
// maxParaphraseOverlap against its wanted notes (together) and logs the
// mean; run with -v to see it.
func TestParaphraseOverlap(t *testing.T) {
	s := loadRepoSet(t)
	qs := OfKind(s.Questions, KindParaphrase)
	sum, most := 0.0, 0.0
	for _, q := range qs {
		o := Overlap(q.Q, noteText(s, q.Want))
		sum += o
		most = max(most, o)
		if o > maxParaphraseOverlap {
			t.Errorf("paraphrase %q shares %.2f of its content words %v with %v, want at most %.2f",
				q.Q, o, ContentWords(q.Q), q.Want, maxParaphraseOverlap)
		}
	}
	t.Logf("%d paraphrase questions: mean overlap %.3f, max %.3f", len(qs), sum/float64(len(qs)), most)
}

// TestKeywordOverlap checks that keyword questions do use their note's
// terms, so that they measure what they are for.
func TestKeywordOverlap(t *testing.T) {
	s := loadRepoSet(t)
	qs := OfKind(s.Questions, KindKeyword)
	sum := 0.0
	for _, q := range qs {
		o := Overlap(q.Q, noteText(s, q.Want))
		sum += o
		if o < minKeywordOverlap {
			t.Errorf("keyword question %q shares %.2f of its content words with %v, want at least %.2f",
				q.Q, o, q.Want, minKeywordOverlap)
		}
	}
	t.Logf("%d keyword questions: mean overlap %.3f", len(qs), sum/float64(len(qs)))
}

func TestLoadRejects(t *testing.T) {
	tests := []struct {
		name, line string
	}{
		{"not JSON", `{"q": "x", "want": ["memory/a.md"]`},
		{"unknown field", `{"q": "x", "want": ["memory/a.md"], "kind": "keyword", "note": 1}`},
		{"empty question", `{"q": " ", "want": ["memory/a.md"], "kind": "keyword"}`},
		{"no want", `{"q": "x", "want": [], "kind": "keyword"}`},
		{"unknown kind", `{"q": "x", "want": ["memory/a.md"], "kind": "other"}`},
		{"want names no note", `{"q": "x", "want": ["memory/b.md"], "kind": "paraphrase"}`},
		{"two values", `{"q": "x", "want": ["memory/a.md"], "kind": "keyword"} {}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeSet(t, tt.line)
			if _, err := Load(dir); err == nil {
				t.Errorf("Load of %s succeeded, want an error", tt.line)
			}
		})
	}
}

func TestLoadSmall(t *testing.T) {
	dir := writeSet(t, `{"q": "what", "want": ["memory/a.md"], "kind": "paraphrase"}`+"\n\n"+
		`{"q": "alpha", "want": ["memory/a.md", "memory/sub/b.md"], "kind": "keyword"}`)
	s, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Notes) != 2 || s.Notes[0].Key != "memory/a.md" || s.Notes[1].Key != "memory/sub/b.md" ||
		s.Notes[0].Value != "alpha note\n" {
		t.Errorf("got notes %+v, want memory/a.md and memory/sub/b.md", s.Notes)
	}
	if len(s.Questions) != 2 || s.Questions[1].Kind != KindKeyword || len(s.Questions[1].Want) != 2 {
		t.Errorf("got questions %+v", s.Questions)
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("Load of an empty directory succeeded, want an error")
	}
}

// writeSet makes a set of two notes, memory/a.md and memory/sub/b.md (and
// a non-Markdown file that is no note), with the given questions.jsonl.
func writeSet(t *testing.T, questions string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"notes/memory/a.md":       "alpha note\n",
		"notes/memory/sub/b.md":   "beta note\n",
		"notes/memory/sub/c.json": "{}",
		"questions.jsonl":         questions,
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestContentWords(t *testing.T) {
	got := strings.Join(ContentWords("What happens to the old Invoices? Access logs, access; it's V2"), " ")
	want := "happen old invoice access log v2"
	if got != want {
		t.Errorf("ContentWords = %q, want %q", got, want)
	}
}

func TestOverlap(t *testing.T) {
	tests := []struct {
		q, note string
		want    float64
	}{
		{"what happens to old invoices", "Billing records are kept ten years.", 0},
		{"what happens to old invoices", "An invoice is kept; old ones expire.", 2.0 / 3},
		{"old invoices", "old invoice", 1},
		{"what is it", "anything", 0},
	}
	for _, tt := range tests {
		if got := Overlap(tt.q, tt.note); got != tt.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v", tt.q, tt.note, got, tt.want)
		}
	}
}
