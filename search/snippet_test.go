package search

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSnippet(t *testing.T) {
	long := strings.Repeat("filler words go here and there. ", 20)
	tests := []struct {
		name, value, query string
		width              int
		want               string // the whole snippet, or
		contains           []string
		prefix, suffix     bool // whether "…" starts and ends it
	}{
		{name: "short value whole", value: "line one\nline two\n\n  three", query: "two", width: 80,
			want: "line one line two three"},
		{name: "match in the middle", value: long + "the deploy plan is approved. " + long, query: "deploy plan", width: 60,
			contains: []string{"deploy plan is approved"}, prefix: true, suffix: true},
		{name: "match at the start", value: "deploy plan first. " + long, query: "deploy", width: 40,
			contains: []string{"deploy plan first"}, suffix: true},
		{name: "match at the end", value: long + "final words: kiwi", query: "kiwi", width: 40,
			contains: []string{"final words: kiwi"}, prefix: true},
		{name: "no match: the start", value: long, query: "absent", width: 30,
			contains: []string{"filler words"}, suffix: true},
		{name: "best window has every word", value: "alpha " + long + "alpha and beta together " + long, query: "alpha beta", width: 50,
			contains: []string{"alpha and beta together"}, prefix: true, suffix: true},
		// The query's words are found by stem; the snippet shows them
		// as the value writes them.
		{name: "other forms, as written", value: long + "Both payments were charged twice. " + long, query: "payment charge", width: 50,
			contains: []string{"Both payments were charged twice."}, prefix: true, suffix: true},
		{name: "identifier", value: long + "call parseQuery(name) here " + long, query: "parse query", width: 50,
			contains: []string{"parseQuery(name)"}, prefix: true, suffix: true},
		{name: "cjk", value: strings.Repeat("あいうえお", 30) + "東京都で会議" + strings.Repeat("かきくけこ", 30), query: "会議", width: 20,
			contains: []string{"東京都で会議"}, prefix: true, suffix: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := snippet([]byte(tt.value), Query{Text: tt.query}, tt.width)
			if tt.want != "" && got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			for _, c := range tt.contains {
				if !strings.Contains(got, c) {
					t.Errorf("got %q, want it to contain %q", got, c)
				}
			}
			if tt.want == "" {
				if p := strings.HasPrefix(got, "…"); p != tt.prefix {
					t.Errorf("got %q: starts with … %v, want %v", got, p, tt.prefix)
				}
				if s := strings.HasSuffix(got, "…"); s != tt.suffix {
					t.Errorf("got %q: ends with … %v, want %v", got, s, tt.suffix)
				}
			}
			if n := utf8.RuneCountInString(got); n > tt.width+2 {
				t.Errorf("got %d runes, want at most %d", n, tt.width+2)
			}
			if strings.ContainsAny(got, "\n\r\t") || strings.Contains(got, "  ") {
				t.Errorf("got %q: want one line, single spaces", got)
			}
		})
	}
}

func TestSnippetUTF8(t *testing.T) {
	// Multi-byte runes everywhere, the cut could fall in any of them.
	v := strings.Repeat("é東😀", 50) + " target " + strings.Repeat("ü語🎉", 50)
	for w := 1; w < 40; w++ {
		got := snippet([]byte(v), Query{Text: "target"}, w)
		if !utf8.ValidString(got) {
			t.Fatalf("width %d: invalid UTF-8 %q", w, got)
		}
	}
	got := snippet([]byte(v), Query{Text: "target"}, 20)
	if !strings.Contains(got, "target") {
		t.Errorf("got %q, want it to contain target", got)
	}
	// Invalid input: valid output.
	bad := []byte("abc \xff\xfe target \xe6\x9d def")
	if got := snippet(bad, Query{Text: "target"}, 10); !utf8.ValidString(got) || !strings.Contains(got, "target") {
		t.Errorf("got %q, want valid UTF-8 with target", got)
	}
}

func FuzzSnippet(f *testing.F) {
	f.Add([]byte("some text with a target inside\n and 東京 \xff"), "target 東京", 12)
	f.Fuzz(func(t *testing.T, v []byte, q string, w int) {
		w = (w%300+300)%300 + 1
		got := snippet(v, Query{Text: q}, w)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 %q", got)
		}
		if n := utf8.RuneCountInString(got); n > w+2 {
			t.Fatalf("%d runes for width %d", n, w)
		}
	})
}
