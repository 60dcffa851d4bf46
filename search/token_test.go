package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// render shows tokens as "term@pos" words.
func render(toks []Token) string {
	var s []string
	for _, t := range toks {
		s = append(s, fmt.Sprintf("%s@%d", t.Term, t.Pos))
	}
	return strings.Join(s, " ")
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"english", "The quick, brown fox!", "the@0 quick@1 brown@2 fox@3"},
		// ASCII words are stemmed (Porter); a compound, a word with a
		// digit or a non-ASCII letter is not, but its ASCII parts are.
		{"stemmed", "Payments were charged twice", "payment@0 were@1 charg@2 twice@3"},
		{"stemmed alike", "connection connections connected connecting", "connect@0 connect@1 connect@2 connect@3"},
		{"compound kept whole", "retry_policies", "retry_policies@0 retri@0 polici@1"},
		{"non-ASCII not stemmed", "naïvely cafés", "naïvely@0 cafés@1"},
		{"camelCase", "camelCase", "camelcas@0 camel@0 case@1"}, // stemmed: "camelcase" -> "camelcas"
		{"PascalCase", "ParseQuery", "parsequeri@0 pars@0 queri@1"},
		{"acronym", "HTTPServer", "httpserver@0 http@0 server@1"},
		{"acronym last", "parseJSON now", "parsejson@0 pars@0 json@1 now@2"},
		{"plural acronym", "URLs and IDs", "url@0 and@1 id@2"},
		{"digit then capital", "utf8Decode", "utf8decode@0 utf8@0 decod@1"},
		{"snake_case", "snake_case", "snake_case@0 snake@0 case@1"},
		{"kebab-case", "kebab-case", "kebab-case@0 kebab@0 case@1"},
		{"snake with camel", "my_HTTPServer", "my_httpserver@0 my@0 httpserver@1 http@1 server@2"},
		{"double connector separates", "a--b __init__", "a@0 b@1 init@2"},
		{"path", "cmd/memfs/main.go", "cmd@0 memf@1 main@2 go@3"},
		{"digits", "v2 released 2024-11-03", "v2@0 releas@1 2024-11-03@2 2024@2 11@3 03@4"},
		{"accents and marks", "Naïve CAFÉ", "naïve@0 café@1"},
		{"combining mark", "cafe\u0301 ok", "cafe\u0301@0 ok@1"},
		{"cyrillic", "Привет Мир", "привет@0 мир@1"},
		{"cjk sentence", "東京都に住む", "東京@0 京都@1 都に@2 に住@3 住む@4"},
		{"cjk single", "猫 と 犬", "猫@0 と@1 犬@2"},
		{"mixed cjk latin", "Goの並行処理はgoroutine", "go@0 の並@1 並行@2 行処@3 処理@4 理は@5 goroutin@6"},
		{"katakana long vowel", "サーバー", "サー@0 ーバ@1 バー@2"},
		{"hangul", "한국어 검색", "한국@0 국어@1 검색@2"},
		{"empty", "  ,.;  ", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(Tokenize(tt.in)); got != tt.want {
				t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestTokenizeLongTerm(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	toks := Tokenize(long)
	if len(toks) != 1 {
		t.Fatalf("got %d tokens, want 1", len(toks))
	}
	if got := toks[0].Term; len(got) > MaxTermLen || !utf8.ValidString(got) || len(got) != 64 {
		t.Errorf("term of %d bytes (valid %v), want 64 valid bytes", len(got), utf8.ValidString(got))
	}
}

func TestTokenizeInvalidUTF8(t *testing.T) {
	inputs := []string{
		"abc\xffdef", "\xe6\x9d", "東\xe4京", "\xc3", "a\x00b", "\xed\xa0\x80", "camel\xffCase", "é\xcc",
	}
	for _, in := range inputs {
		toks := Tokenize(in) // must not panic
		for _, tok := range toks {
			if !utf8.ValidString(tok.Term) {
				t.Errorf("Tokenize(%q): term %q is not valid UTF-8", in, tok.Term)
			}
		}
	}
	if got, want := render(Tokenize("abc\xffdef")), "abc@0 def@1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzTokenize(f *testing.F) {
	f.Add("camelCase snake_case 東京都 \xff")
	f.Fuzz(func(t *testing.T, s string) {
		prev := 0
		for _, tok := range Tokenize(s) {
			if tok.Term == "" || len(tok.Term) > MaxTermLen || !utf8.ValidString(tok.Term) {
				t.Fatalf("bad term %q", tok.Term)
			}
			if tok.Pos < prev || tok.Pos > prev+1 {
				t.Fatalf("position %d after %d", tok.Pos, prev)
			}
			prev = tok.Pos
		}
	})
}

// TestCJKWordInSentence is the point of bigrams: a two-character word in a
// sentence without spaces is found, and a longer one as a phrase.
func TestCJKWordInSentence(t *testing.T) {
	ix := New(Options{})
	ix.Put("memory/a.md", []byte("今日は東京都で会議がありました。"), DocMeta{})
	ix.Put("memory/b.md", []byte("明日は大阪で休みです。"), DocMeta{})
	for _, q := range []string{"会議", "東京", "東京都", "会議があり"} {
		hits := ix.Search(Query{Text: q})
		if len(hits) != 1 || hits[0].Key != "memory/a.md" {
			t.Errorf("Search(%q) = %v, want memory/a.md only", q, hits)
		}
	}
	if hits := ix.Search(Query{Text: "大阪"}); len(hits) != 1 || hits[0].Key != "memory/b.md" {
		t.Errorf("Search(大阪) = %v, want memory/b.md", hits)
	}
	// Mixed: a Latin word next to CJK.
	ix.Put("memory/c.md", []byte("Goの並行処理"), DocMeta{})
	if hits := ix.Search(Query{Text: "処理"}); !slices.ContainsFunc(hits, func(h Hit) bool { return h.Key == "memory/c.md" }) {
		t.Errorf("Search(処理) = %v, want memory/c.md", hits)
	}
}
