// Package embed turns text into vectors for memfs's semantic search: an
// Embedder maps texts to unit vectors of a fixed dimension, so that the
// cosine of two vectors (their dot product) says how close the texts are
// in meaning.
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
