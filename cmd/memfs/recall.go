package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"

	"github.com/memfs/memfs/contextpack"
)

func contextCommand() *cli.Command {
	return &cli.Command{
		Name:      "context",
		ArgsUsage: "[DIR]",
		Usage:     "print the context pack (skills index, latest step summaries, notes ranked by relevance, importance and recency, within a budget) or, with --manifest, its manifest",
		Flags: append([]cli.Flag{
			storeFlag(),
			embedderFlag(),
			mountFlag("build it (.memfs/context/) in"),
			&cli.IntFlag{Name: "max-chars", Value: contextpack.DefaultMaxChars, Usage: "budget in characters, the hash line included (at least 1)"},
			&cli.StringFlag{Name: "query", Usage: "rank the notes by relevance to this query"},
			&cli.Uint64Flag{Name: "at", Usage: "rebuild the pack as it stood when the event log's head was SEQ (memfs log shows the seqs), byte for byte"},
			&cli.BoolFlag{Name: "manifest", Usage: "print the pack's manifest (JSON: hash, sections, every item with its score, what was left out) instead of the pack"},
			&cli.IntFlag{Name: "summaries", Value: 5, Usage: "how many of the latest step summaries (0: none)"},
			&cli.StringSliceFlag{Name: "bootstrap", Value: cli.NewStringSlice("memory/"), Usage: "the always-loaded prefixes"},
		}, append(repoScopeFlags("the pack of the repository DIR (or --dir) is in: the global memory, then its conventions and decisions (always), its notes and step summaries"), memoryFlags()...)...),
		Action: func(c *cli.Context) error {
			words := []string{"max:" + strconv.Itoa(c.Int("max-chars")), "summaries:" + strconv.Itoa(c.Int("summaries"))}
			sess, typ, err := parseMemoryFlags(c)
			if err != nil {
				return fmt.Errorf("context: %w", err)
			}
			for _, w := range [][2]string{{"type", typ}, {"session", sess}} {
				if w[1] != "" {
					words = append(words, w[0]+":"+w[1])
				}
			}
			if w, err := repoWord(c, c.Args().First()); err != nil {
				return fmt.Errorf("context: %w", err)
			} else if w != "" {
				words = append(words, w)
			}
			if q := c.String("query"); q != "" {
				words = append(words, q)
			}
			if c.IsSet("at") {
				words = append(words, "at:"+strconv.FormatUint(c.Uint64("at"), 10))
			}
			name := contextpack.Name(words...)
			if c.Bool("manifest") {
				name += contextpack.ManifestSuffix
			}
			t, err := locate(c)
			if err != nil {
				return err
			}
			if t.mnt != "" {
				return t.Client.WriteContext(c.App.Writer, name)
			}
			if _, _, _, err := contextpack.ParseName(name); err != nil {
				return err // before the store is opened
			}
			return withSession(c, memfs.ReadStore, func(ctx context.Context, o *opened) error {
				return o.WriteContext(ctx, c.App.Writer, name)
			}, c.StringSlice("bootstrap")...)
		},
	}
}

func summaryCommand() *cli.Command {
	return &cli.Command{
		Name:  "summary",
		Usage: "step summaries (" + contextpack.SummariesKey + ")",
		Subcommands: []*cli.Command{{
			Name:      "add",
			Usage:     "append one step summary",
			ArgsUsage: "TEXT",
			Flags: []cli.Flag{
				storeFlag(),
				mountFlag("append through"),
				&cli.StringFlag{Name: "run", Required: true, Usage: "run id"},
				&cli.StringFlag{Name: "step", Required: true, Usage: "step id"},
			},
			Action: func(c *cli.Context) error {
				sum, err := contextpack.NewSummary(c.String("run"), c.String("step"), c.Args().Slice())
				if err != nil {
					return fmt.Errorf("summary add: %w", err)
				}
				t, err := locate(c)
				if err != nil {
					return err
				}
				if t.mnt != "" {
					if err := t.Client.AddSummary(sum); err != nil {
						return fmt.Errorf("summary add: %w", err)
					}
					return nil
				}
				return withSession(c, memfs.WriteStore, func(ctx context.Context, o *opened) error { return o.AddSummary(ctx, sum) })
			},
		}},
	}
}
