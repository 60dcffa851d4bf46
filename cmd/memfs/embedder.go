package main

import (
	"fmt"
	"log/slog"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/embed"
)

// embedderFlag is --embedder: the model of semantic and hybrid search and
// of the ranking of context packs' notes.
func embedderFlag() cli.Flag {
	return &cli.StringFlag{
		Name: "embedder",
		Usage: "the model of semantic search: default (the static table memfs models install puts in place; " +
			"keyword search only, with a warning, when it is not installed or its table is damaged), none (keyword search only), static:PATH, " +
			"openai:URL?model=M[&key_env=VAR&dim=N] (an OpenAI-compatible /v1/embeddings; the key from $VAR, OPENAI_API_KEY by default) " +
			"or ollama:URL?model=M (Ollama's /api/embed)",
		Value:   "default",
		EnvVars: []string{"MEMFS_EMBEDDER"},
	}
}

// openEmbedder opens the embedder --embedder names, for a command that
// has the flag (nil for one that does not search). The default one not
// installed, or damaged, is a warning, and search is keyword-only; any other failure,
// or a model named explicitly and missing, is an error.
func openEmbedder(c *cli.Context, log *slog.Logger) (embed.Embedder, error) {
	if !slices.ContainsFunc(c.Command.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "embedder") }) {
		return nil, nil
	}
	spec := c.String("embedder")
	e, err := embed.OpenOptional(spec, embed.Options{Logger: log}, log)
	if err != nil {
		return nil, fmt.Errorf("--embedder %s: %w", spec, err)
	}
	return e, nil
}
