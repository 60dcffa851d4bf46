package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"

	"github.com/memfs/memfs/search"
)

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "ranked search of the memory: keyword (BM25, exact phrases first), semantic (vectors) or hybrid (both; the default with an embedder), with metadata filters",
		ArgsUsage: "QUERY",
		Flags: append([]cli.Flag{
			storeFlag(),
			embedderFlag(),
			mountFlag("search, unflushed writes included, through"),
			&cli.StringFlag{Name: "mode", Usage: "keyword (BM25), semantic (vectors) or hybrid (both fused; the default with an embedder, keyword without one)"},
			&cli.IntFlag{Name: "top-k", Value: 10, Usage: "how many results (at least 1)"},
			&cli.Float64Flag{Name: "min-score", Usage: "drop results scoring below this (at least 0)"},
			&cli.StringFlag{Name: "prefix", Usage: "only keys starting with this prefix (a route's: only that route)"},
			&cli.StringFlag{Name: "tier", Usage: "only working memory (a mount's mem: routes), only persistent memory, or only indexed sources (?tier=indexed routes)"},
			&cli.StringFlag{Name: "route", Usage: "only a mount's route of this prefix (skills/), or its default route (default)"},
			&cli.StringSliceFlag{Name: "tag", Usage: "only entries with this tag (repeat: all of them)"},
			&cli.StringFlag{Name: "source", Usage: "only entries with this user.memfs.source"},
			&cli.StringFlag{Name: "agent", Usage: "only entries with this user.memfs.agent"},
			&cli.StringFlag{Name: "importance-min", Usage: "only entries with user.memfs.importance at least this (0.0-1.0)"},
			&cli.StringFlag{Name: "since", Usage: "only entries updated at or after T (RFC 3339, YYYY-MM-DD, or a duration ago)"},
			&cli.StringFlag{Name: "until", Usage: "only entries updated before T"},
			&cli.BoolFlag{Name: "json", Usage: "one JSON object per result: key, score, snippet"},
		}, append(repoScopeFlags("search the global memory and the repository's that --dir (default: the working directory) is in, not another repository's"), memoryFlags()...)...),
		Action: func(c *cli.Context) error {
			text := strings.Join(c.Args().Slice(), " ")
			if strings.TrimSpace(text) == "" {
				return errors.New("search: give a QUERY")
			}
			if _, _, err := parseMemoryFlags(c); err != nil {
				return fmt.Errorf("search: %w", err)
			}
			// The flags become the words of a query name, the form the
			// mount's .memfs/search/ takes, so both paths parse alike.
			words := []string{text, "top:" + strconv.Itoa(c.Int("top-k"))}
			if w, err := repoWord(c, ""); err != nil {
				return fmt.Errorf("search: %w", err)
			} else if w != "" {
				words = append(words, w)
			}
			if c.IsSet("min-score") {
				words = append(words, "min:"+strconv.FormatFloat(c.Float64("min-score"), 'g', -1, 64))
			}
			for _, f := range []string{"mode", "prefix", "source", "agent", "session", "type", "tier", "route", "since", "until", "importance-min"} {
				if v := c.String(f); v != "" {
					words = append(words, strings.TrimSuffix(f, "-min")+":"+v) // importance-min: the word importance:
				}
			}
			for _, t := range c.StringSlice("tag") {
				words = append(words, "tag:"+t)
			}
			if c.Bool("json") {
				words = append(words, "format:json")
			}
			name := search.Name(words...)
			r, err := search.ParseName(name)
			if err != nil {
				return err
			}
			t, err := locate(c)
			if err != nil {
				return err
			}
			if t.mnt != "" {
				return t.Client.WriteAnswer(c.App.Writer, c.App.ErrWriter, name, c.IsSet("embedder"))
			}
			return withSession(c, memfs.ReadStore, func(ctx context.Context, o *opened) error {
				// A store no mount serves may have notes without vectors
				// yet: they are made before the answer (bounded).
				return o.WriteAnswer(memfs.AsProcess(ctx), c.App.Writer, c.App.ErrWriter, r, 2*time.Minute)
			})
		},
	}
}

func reindexCommand() *cli.Command {
	return &cli.Command{
		Name:  "reindex",
		Usage: "rebuild the search index of a store from its values",
		Flags: []cli.Flag{storeFlag(), embedderFlag()},
		Action: func(c *cli.Context) error {
			t, err := locate(c)
			if err != nil {
				return err
			}
			if err := t.NeedsStore("reindex", "the mount keeps its index up to date as it writes; to rebuild it anyway: memfs unmount "+
				t.mnt+", then memfs reindex"); err != nil {
				return err
			}
			return withSession(c, memfs.RebuildIndex, func(ctx context.Context, o *opened) error {
				n, err := o.Reindex(ctx, bar(c.App.ErrWriter, "index"))
				if err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "search index rebuilt: %d entries indexed\n", n)
				return nil
			})
		},
	}
}
