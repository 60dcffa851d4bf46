package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/mountclient"
)

// runsCommand lists and shows runs (through the mount serving the store:
// .memfs/runs/, else on the store), and rebuilds their projection.
func runsCommand() *cli.Command {
	return &cli.Command{
		Name: "runs", Usage: "list the runs memfs knows of (events written with a run id, summaries, checkpoints)",
		Flags: histFlags(),
		Action: func(c *cli.Context) error {
			return onHistory(c, memfs.ReadStore, func(m *mountclient.Client) error {
				ids, err := m.Runs()
				printLines(c, ids)
				return err
			}, func(ctx context.Context, f *memfs.FS) error {
				ids, err := f.RunIDs(ctx)
				printLines(c, ids)
				return err
			})
		},
		Subcommands: []*cli.Command{{
			Name: "show", Usage: "print RUN's meta.json (or with --events or --summaries, its events or summaries, one JSON per line)", ArgsUsage: "RUN",
			Flags: append(histFlags(), &cli.BoolFlag{Name: "events", Usage: "the run's events"}, &cli.BoolFlag{Name: "summaries", Usage: "the run's step summaries"}),
			Action: func(c *cli.Context) error {
				run := c.Args().First()
				if err := meta.ValidateRun(run); err != nil {
					return fmt.Errorf("runs show: %w", err)
				}
				file := memfs.RunMetaFile
				switch {
				case c.Bool("events"):
					file = memfs.RunEventsFile
				case c.Bool("summaries"):
					file = memfs.RunSummariesFile
				}
				return onHistory(c, memfs.ReadStore, func(m *mountclient.Client) error {
					b, err := m.RunFile(run, file)
					c.App.Writer.Write(b)
					return err
				}, func(ctx context.Context, f *memfs.FS) error {
					b, err := f.RunFile(ctx, run, file)
					c.App.Writer.Write(b)
					return err
				})
			},
		}, {
			Name: "rebuild", Usage: "fold the whole event log anew into the runs' projection, and say what differed (--check: only say)",
			Flags: append(histFlags(), &cli.BoolFlag{Name: "check", Usage: "write nothing; exit 1 when a run's projection differs from the rebuild"}),
			Action: func(c *cli.Context) error {
				report := func(diffs []string, err error) error {
					printLines(c, diffs)
					if err == nil && c.Bool("check") && len(diffs) > 0 {
						return cli.Exit(fmt.Sprintf("runs rebuild --check: %d runs differ from the rebuild", len(diffs)), 1)
					}
					return err
				}
				if c.Bool("check") { // through the mount: the fold of the log this process may read
					return onHistory(c, memfs.ReadStore, func(m *mountclient.Client) error { return report(m.CheckRuns(c.Context)) },
						func(ctx context.Context, f *memfs.FS) error { return report(f.RebuildRuns(ctx, false)) })
				}
				if err := notMounted(c, "the mount keeps the projection up to date: memfs runs rebuild --check compares it with the log"); err != nil {
					return err
				}
				return withSession(c, memfs.WriteStore, func(ctx context.Context, o *opened) error { return report(o.FS.RebuildRuns(ctx, true)) })
			},
		}},
	}
}

func printLines(c *cli.Context, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(c.App.Writer, l)
	}
}
