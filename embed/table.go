package embed

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// ErrCorrupt is wrapped by every error for a table file that is not a
// sound table: a wrong magic, an unknown version, a bad length, a
// truncated file or a checksum that does not match.
var ErrCorrupt = errors.New("embed: table is corrupt")

// ErrNotInstalled is wrapped by the error of Open for the default table
// when it is not installed (`memfs models install` installs it).
var ErrNotInstalled = errors.New("embed: model not installed")

// tableMagic starts every table file; tableVersion is the format version
// this package writes and reads.
const (
	tableMagic   = "MFSE"
	tableVersion = 1
	headerSize   = 4 + 2 + 2 + 4 + 4 + 2 // magic, version, reserved, dim, count, name length
	maxTableDim  = 1 << 14
	maxTableRows = 1 << 24
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Table is a static embedding table in memory: a word list with one
// int8-quantized vector per word (row i is Vectors[i*Dim:(i+1)*Dim] times
// Scales[i]), a weight per word (its SIF weight a/(a+p(w))) and the
// common component that Embed removes from every text's mean (SIF's
// second step; nil for none).
type Table struct {
	Name    string    // the model, e.g. "glove-wink-100d@1.1.0"
	Dim     int       // length of each vector
	Words   []string  // lower-case words, most frequent first; none repeated
	Scales  []float32 // per row: the float value of one int8 step
	Weights []float32 // per row: the word's weight in a mean
	Vectors []int8    // len(Words)*Dim quantized components
	Common  []float32 // nil, or a unit vector of length Dim
}

// Quantize returns the int8 row and its scale for a float vector: each
// component is round(v/scale) with scale = max|v|/127.
func Quantize(v []float32) ([]int8, float32) {
	var m float32
	for _, x := range v {
		if a := float32(math.Abs(float64(x))); a > m {
			m = a
		}
	}
	q := make([]int8, len(v))
	if m == 0 {
		return q, 0
	}
	scale := m / 127
	for i, x := range v {
		q[i] = int8(math.Round(float64(x / scale)))
	}
	return q, scale
}

// WriteTable writes t in the table format (see the package doc) to w.
func WriteTable(w io.Writer, t *Table) error {
	n := len(t.Words)
	if t.Dim <= 0 || t.Dim > maxTableDim {
		return fmt.Errorf("embed: write table: dimension %d out of range", t.Dim)
	}
	if n > maxTableRows || len(t.Scales) != n || len(t.Weights) != n || len(t.Vectors) != n*t.Dim {
		return fmt.Errorf("embed: write table: %d words with %d scales, %d weights, %d components (dim %d)",
			n, len(t.Scales), len(t.Weights), len(t.Vectors), t.Dim)
	}
	if t.Common != nil && len(t.Common) != t.Dim {
		return fmt.Errorf("embed: write table: common component of length %d, dim %d", len(t.Common), t.Dim)
	}
	if len(t.Name) > math.MaxUint16 {
		return fmt.Errorf("embed: write table: name of %d bytes too long", len(t.Name))
	}
	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<16)
	le := binary.LittleEndian
	hdr := make([]byte, 0, headerSize+len(t.Name))
	hdr = append(hdr, tableMagic...)
	hdr = le.AppendUint16(hdr, tableVersion)
	hdr = le.AppendUint16(hdr, 0)
	hdr = le.AppendUint32(hdr, uint32(t.Dim))
	hdr = le.AppendUint32(hdr, uint32(n))
	hdr = le.AppendUint16(hdr, uint16(len(t.Name)))
	hdr = append(hdr, t.Name...)
	bw.Write(hdr)
	for _, word := range t.Words {
		if len(word) == 0 || len(word) > 255 {
			return fmt.Errorf("embed: write table: word %.20q: length %d not in 1..255", word, len(word))
		}
		bw.WriteByte(byte(len(word)))
		bw.WriteString(word)
	}
	var b [4]byte
	for _, s := range t.Scales {
		le.PutUint32(b[:], math.Float32bits(s))
		bw.Write(b[:])
	}
	for _, s := range t.Weights {
		le.PutUint32(b[:], math.Float32bits(s))
		bw.Write(b[:])
	}
	for i := 0; i < t.Dim; i++ {
		var c float32
		if t.Common != nil {
			c = t.Common[i]
		}
		le.PutUint32(b[:], math.Float32bits(c))
		bw.Write(b[:])
	}
	for _, q := range t.Vectors {
		bw.WriteByte(byte(q))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("embed: write table: %w", err)
	}
	le.PutUint32(b[:], crc.Sum32())
	if _, err := w.Write(b[:]); err != nil {
		return fmt.Errorf("embed: write table: %w", err)
	}
	return nil
}

// WriteTableFile writes t to path atomically: to a temporary file in the
// same directory, synced, then renamed over path.
func WriteTableFile(path string, t *Table) error {
	return writeFileAtomic(path, func(w io.Writer) error { return WriteTable(w, t) })
}

// writeFileAtomic writes path through a temporary file in its directory
// and a rename, so that a reader sees the old file or the whole new one.
func writeFileAtomic(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("embed: create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("embed: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("embed: write %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("embed: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("embed: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("embed: write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("embed: install %s: %w", path, err)
	}
	return nil
}

// tableFile is a table file read into memory and checked: its header
// parsed, its checksum verified. Words, scales, weights and vectors are
// views into data.
type tableFile struct {
	name    string
	dim     int
	count   int
	sha256  string // hex of the whole file
	data    []byte
	words   int // offset of the word list
	scales  int // offset of the scales
	weights int // offset of the weights
	common  int // offset of the common component
	vectors int // offset of the vectors
}

// readTableFile reads and checks the table at path. A damaged file gives
// an error that wraps ErrCorrupt and names path.
func readTableFile(path string) (*tableFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("embed: load table: %w", err)
	}
	tf, err := parseTableFile(data)
	if err != nil {
		return nil, fmt.Errorf("embed: load table %s: %w", path, err)
	}
	return tf, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// parseTableFile checks data and finds its sections.
func parseTableFile(data []byte) (*tableFile, error) {
	le := binary.LittleEndian
	if len(data) < headerSize+4 {
		return nil, corrupt("%d bytes, shorter than a header", len(data))
	}
	if string(data[:4]) != tableMagic {
		return nil, corrupt("not a table (magic %q)", data[:4])
	}
	body := data[:len(data)-4]
	if got, want := crc32.Checksum(body, castagnoli), le.Uint32(data[len(data)-4:]); got != want {
		return nil, corrupt("checksum %08x, want %08x (damaged or truncated)", got, want)
	}
	if v := le.Uint16(data[4:]); v != tableVersion {
		return nil, corrupt("format version %d, this memfs reads %d", v, tableVersion)
	}
	tf := &tableFile{data: data}
	tf.dim = int(le.Uint32(data[8:]))
	tf.count = int(le.Uint32(data[12:]))
	if tf.dim <= 0 || tf.dim > maxTableDim || tf.count > maxTableRows {
		return nil, corrupt("dimension %d, %d words out of range", tf.dim, tf.count)
	}
	nameLen := int(le.Uint16(data[16:]))
	off := headerSize
	if off+nameLen > len(body) {
		return nil, corrupt("name runs past the end")
	}
	tf.name = string(body[off : off+nameLen])
	off += nameLen
	tf.words = off
	for i := 0; i < tf.count; i++ {
		if off >= len(body) {
			return nil, corrupt("word list runs past the end")
		}
		l := int(body[off])
		if l == 0 {
			return nil, corrupt("empty word %d", i)
		}
		off += 1 + l
	}
	tf.scales = off
	tf.weights = tf.scales + 4*tf.count
	tf.common = tf.weights + 4*tf.count
	tf.vectors = tf.common + 4*tf.dim
	if end := tf.vectors + tf.count*tf.dim; end != len(body) {
		return nil, corrupt("sections end at %d, file body is %d bytes", end, len(body))
	}
	sum := sha256.Sum256(data)
	tf.sha256 = hex.EncodeToString(sum[:])
	return tf, nil
}

// ReadTable reads the table at path into a Table (for tools and tests;
// the embedder itself works on the file's bytes).
func ReadTable(path string) (*Table, error) {
	tf, err := readTableFile(path)
	if err != nil {
		return nil, err
	}
	return tf.table(), nil
}

func (tf *tableFile) table() *Table {
	le := binary.LittleEndian
	t := &Table{Name: tf.name, Dim: tf.dim}
	off := tf.words
	for i := 0; i < tf.count; i++ {
		l := int(tf.data[off])
		t.Words = append(t.Words, string(tf.data[off+1:off+1+l]))
		off += 1 + l
	}
	for i := 0; i < tf.count; i++ {
		t.Scales = append(t.Scales, math.Float32frombits(le.Uint32(tf.data[tf.scales+4*i:])))
		t.Weights = append(t.Weights, math.Float32frombits(le.Uint32(tf.data[tf.weights+4*i:])))
	}
	t.Common = tf.commonVector()
	t.Vectors = make([]int8, tf.count*tf.dim)
	for i := range t.Vectors {
		t.Vectors[i] = int8(tf.data[tf.vectors+i])
	}
	return t
}

// tableID is the embedder ID of a table: its name and a prefix of the
// file's SHA-256.
func tableID(name, sha string) string {
	if name == "" {
		name = "unnamed"
	}
	return "static:" + strings.ReplaceAll(name, "#", "_") + "#" + sha[:12]
}

// commonVector returns the table's common component, nil when it is all
// zero.
func (tf *tableFile) commonVector() []float32 {
	c := make([]float32, tf.dim)
	zero := true
	for i := range c {
		c[i] = math.Float32frombits(binary.LittleEndian.Uint32(tf.data[tf.common+4*i:]))
		zero = zero && c[i] == 0
	}
	if zero {
		return nil
	}
	return c
}
