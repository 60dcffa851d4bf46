package embed

import (
	"context"
	"encoding/binary"
	"math"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Static is the embedder of a static word table: a text's vector is the
// weighted mean of its words' vectors, L2-normalized. It needs no network
// and no accelerator, and is deterministic. Open it with OpenStatic.
type Static struct {
	path string
	id   string
	tf   *tableFile // immutable after OpenStatic

	once sync.Once    // builds idx on first use
	idx  *staticIndex // the word lookup; nil until once has run
}

var (
	_ Embedder = (*Static)(nil)
	_ Floorer  = (*Static)(nil)
)

// staticIndex is what Embed reads: the word → row map and the rows.
type staticIndex struct {
	dim     int
	rows    map[string]int32
	scales  []float32
	weights []float32
	vectors []byte    // int8 components, row-major
	common  []float32 // unit vector of the common component; nil = none
}

// OpenStatic reads the table file at path and checks it (a damaged file
// gives an error wrapping ErrCorrupt that names path). The word index is
// built on the first Embed.
func OpenStatic(path string) (*Static, error) {
	tf, err := readTableFile(path)
	if err != nil {
		return nil, err
	}
	return &Static{path: path, id: tableID(tf.name, tf.sha256), tf: tf}, nil
}

// ID is "static:<name>#<first 12 hex digits of the file's SHA-256>".
func (s *Static) ID() string { return s.id }

// Floor is StaticFloor.
func (s *Static) Floor() float64 { return StaticFloor }

// Dim is the table's dimension.
func (s *Static) Dim() int { return s.tf.dim }

// Name is the model name the table records, e.g. "glove-wink-100d@1.1.0".
func (s *Static) Name() string { return s.tf.name }

// Words is how many words the table holds.
func (s *Static) Words() int { return s.tf.count }

// Path is the table file.
func (s *Static) Path() string { return s.path }

// SHA256 is the hex SHA-256 of the table file.
func (s *Static) SHA256() string { return s.tf.sha256 }

// Size is the table file's size in bytes.
func (s *Static) Size() int { return len(s.tf.data) }

// index builds the word index once.
func (s *Static) index() *staticIndex {
	s.once.Do(func() {
		tf := s.tf
		le := binary.LittleEndian
		x := &staticIndex{
			dim:     tf.dim,
			rows:    make(map[string]int32, tf.count),
			scales:  make([]float32, tf.count),
			weights: make([]float32, tf.count),
			vectors: tf.data[tf.vectors : tf.vectors+tf.count*tf.dim],
		}
		words := string(tf.data[tf.words:tf.scales]) // one allocation; keys are substrings
		off := 0
		for i := 0; i < tf.count; i++ {
			l := int(words[off])
			w := words[off+1 : off+1+l]
			if _, dup := x.rows[w]; !dup {
				x.rows[w] = int32(i)
			}
			off += 1 + l
			x.scales[i] = math.Float32frombits(le.Uint32(tf.data[tf.scales+4*i:]))
			x.weights[i] = math.Float32frombits(le.Uint32(tf.data[tf.weights+4*i:]))
		}
		if c := tf.commonVector(); c != nil {
			x.common = c
		}
		s.idx = x
	})
	return s.idx
}

// Embed returns the unit vector of each text: the weighted mean of the
// vectors of its known words, less its projection on the table's common
// component (when the table has one), L2-normalized; the zero vector when
// it has no known word.
func (s *Static) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	x := s.index()
	out := make([][]float32, len(texts))
	acc := make([]float32, x.dim)
	var scratch []byte
	for i, text := range texts {
		if i%32 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		clear(acc)
		known := 0
		Tokenize(text, func(tok []byte) {
			var r int32
			r, scratch = x.lookup(tok, scratch)
			if r < 0 {
				return
			}
			known++
			c := x.weights[r] * x.scales[r]
			row := x.vectors[int(r)*x.dim : int(r+1)*x.dim]
			for j, q := range row {
				acc[j] += c * float32(int8(q))
			}
		})
		v := make([]float32, x.dim)
		if known > 0 && x.common != nil {
			var p float32
			for j, a := range acc {
				p += a * x.common[j]
			}
			for j := range acc {
				acc[j] -= p * x.common[j]
			}
		}
		if known > 0 {
			var ss float64
			for _, a := range acc {
				ss += float64(a) * float64(a)
			}
			if ss > 0 {
				inv := float32(1 / math.Sqrt(ss))
				for j, a := range acc {
					v[j] = a * inv
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

// lookup finds the row of tok, else of a simple stem of it (plural "s",
// "es", "ies"; "ing"; "ed"), else -1. scratch is a reusable buffer.
func (x *staticIndex) lookup(tok, scratch []byte) (int32, []byte) {
	if r, ok := x.rows[string(tok)]; ok {
		return r, scratch
	}
	n := len(tok)
	try := func(stem []byte, add string) (int32, bool) {
		if len(stem) < 2 {
			return -1, false
		}
		scratch = append(append(scratch[:0], stem...), add...)
		r, ok := x.rows[string(scratch)]
		return r, ok
	}
	has := func(suf string) bool { return n > len(suf) && string(tok[n-len(suf):]) == suf }
	switch {
	case has("ies"):
		if r, ok := try(tok[:n-3], "y"); ok {
			return r, scratch
		}
	case has("ing"):
		stem := tok[:n-3]
		if r, ok := try(stem, ""); ok {
			return r, scratch
		}
		if r, ok := try(stem, "e"); ok {
			return r, scratch
		}
		if l := len(stem); l >= 2 && stem[l-1] == stem[l-2] {
			if r, ok := try(stem[:l-1], ""); ok {
				return r, scratch
			}
		}
	case has("ed"):
		stem := tok[:n-2]
		if r, ok := try(stem, ""); ok {
			return r, scratch
		}
		if r, ok := try(tok[:n-1], ""); ok { // stored -> store
			return r, scratch
		}
		if l := len(stem); l >= 2 && stem[l-1] == stem[l-2] {
			if r, ok := try(stem[:l-1], ""); ok {
				return r, scratch
			}
		}
	case has("es"):
		if r, ok := try(tok[:n-2], ""); ok {
			return r, scratch
		}
		if r, ok := try(tok[:n-1], ""); ok {
			return r, scratch
		}
	case has("s") && !has("ss"):
		if r, ok := try(tok[:n-1], ""); ok {
			return r, scratch
		}
	}
	return -1, scratch
}

// Tokenize calls fn with each word of text, lower-cased: the runs of
// letters and digits, with camelCase and ACRONYMWords split into parts
// ("parseHTTPRequest" gives parse, http, request). Punctuation, "_", "-"
// and path separators split words. Words longer than 255 bytes are left
// out. The slice passed to fn is reused after fn returns.
func Tokenize(text string, fn func(word []byte)) {
	var buf []byte
	emit := func() {
		if len(buf) > 0 && len(buf) <= 255 {
			fn(buf)
		}
		buf = buf[:0]
	}
	var prev rune // the previous rune of the current word; 0 at its start
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			emit()
			prev = 0
			continue
		}
		if unicode.IsUpper(r) && prev != 0 {
			split := unicode.IsLower(prev) || unicode.IsDigit(prev)
			if !split && unicode.IsUpper(prev) && i < len(text) {
				next, _ := utf8.DecodeRuneInString(text[i:])
				split = unicode.IsLower(next) // HTTPRequest: split before R
			}
			if split {
				emit()
			}
		}
		if r < utf8.RuneSelf {
			if 'A' <= r && r <= 'Z' {
				buf = append(buf, byte(r+'a'-'A'))
			} else {
				buf = append(buf, byte(r))
			}
		} else {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		}
		prev = r
	}
	emit()
}
