package embed_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memfs/memfs/embed"
)

// realTable opens the installed default table. Without it the test skips,
// or fails when MEMFS_REQUIRE_MODEL=1 (as scripts/test.sh sets).
func realTable(tb testing.TB) *embed.Static {
	tb.Helper()
	path := filepath.Join(embed.DefaultDir(nil), embed.DefaultTable)
	s, err := embed.OpenStatic(path)
	if errors.Is(err, fs.ErrNotExist) {
		if os.Getenv("MEMFS_REQUIRE_MODEL") == "1" {
			tb.Fatalf("MEMFS_REQUIRE_MODEL=1 but no table at %s: run `memfs models install`", path)
		}
		tb.Skipf("no real table at %s (`memfs models install` installs it; MEMFS_REQUIRE_MODEL=1 makes this a failure)", path)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// Notes and the queries that should find them first, with no word in
// common beyond stems and stop words.
var realNotes = map[string]string{
	"billing":  "Billing records: we keep customer receipts and payment statements for seven years, then archive and delete them.",
	"deploy":   "Deploying services: build the container image, push it to the registry, roll it out to the cluster and watch the health checks.",
	"pets":     "My neighbour's cat had kittens last spring; the puppy next door chases them around the garden.",
	"cooking":  "Recipe: simmer the tomatoes with garlic and onion, add basil, then serve the sauce over fresh pasta.",
	"football": "The team won the match in extra time after the striker scored a late goal; the coach praised the defence.",
}

var realQueries = map[string]string{
	"what happens to old invoices":       "billing",
	"how do we ship a new release":       "deploy",
	"animals at home":                    "pets",
	"what should I cook for dinner":      "cooking",
	"who won the soccer game on sunday?": "football",
}

func TestRealTable(t *testing.T) {
	s := realTable(t)
	if s.Dim() != 100 || s.Words() != embed.DefaultMaxWords || !strings.HasPrefix(s.ID(), "static:"+embed.DefaultTableName+"#") {
		t.Errorf("dim %d, %d words, ID %q; want 100, %d, static:%s#…", s.Dim(), s.Words(), s.ID(), embed.DefaultMaxWords, embed.DefaultTableName)
	}
	word := func(w string) []float32 { return embedOne(t, s, w) }
	// GloVe learned from news: its "bill" is mostly a law, so invoice's
	// neighbours are payment and receipt.
	for _, tt := range []struct{ a, near, far string }{
		{"invoice", "payment", "giraffe"},
		{"invoice", "receipt", "kitten"},
		{"kitten", "puppy", "invoice"},
		{"deploy", "troops", "kitten"},
		{"database", "server", "banana"},
	} {
		a := word(tt.a)
		if cn, cf := cos(a, word(tt.near)), cos(a, word(tt.far)); cn <= cf {
			t.Errorf("cos(%s, %s) = %.3f, not above cos(%s, %s) = %.3f", tt.a, tt.near, cn, tt.a, tt.far, cf)
		}
	}
	names := make([]string, 0, len(realNotes))
	texts := make([]string, 0, len(realNotes))
	for name, text := range realNotes {
		names = append(names, name)
		texts = append(texts, text)
	}
	docs, err := s.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range realQueries {
		v := word(q)
		best, bestCos := "", -2.0
		for i, d := range docs {
			if c := cos(v, d); c > bestCos {
				best, bestCos = names[i], c
			}
		}
		t.Logf("%q -> %s (%.3f)", q, best, bestCos)
		if best != want {
			t.Errorf("query %q: nearest note %s (%.3f), want %s", q, best, bestCos, want)
		}
	}
}
