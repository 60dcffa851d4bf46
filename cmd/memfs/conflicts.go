package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
)

func conflictsCommand() *cli.Command {
	return &cli.Command{
		Name: "conflicts", Usage: "list the open conflicts (conflict copies): KEY COPY TIME, whose version the copy holds (mine: the writer that met the conflict)", Flags: []cli.Flag{storeFlag()},
		Action: func(c *cli.Context) error {
			return withSession(c, memfs.ReadStore, func(ctx context.Context, o *opened) error {
				cfs, err := o.Conflicts(ctx)
				fmt.Fprint(c.App.Writer, memfs.ConflictLines(cfs))
				return err
			})
		},
		Subcommands: []*cli.Command{{
			Name: "resolve", Usage: "resolve KEY's conflict: keep mine, theirs or their merge at KEY, remove the copy", ArgsUsage: "KEY", Flags: []cli.Flag{storeFlag(), agentFlag(), &cli.StringFlag{Name: "keep", Required: true, Usage: "mine, theirs or merge"}},
			Action: func(c *cli.Context) error {
				return withSession(c, memfs.WriteStore, func(ctx context.Context, o *opened) error {
					cf, err := o.ResolveConflict(ctx, c.Args().First(), memfs.Keep(c.String("keep")))
					fmt.Fprint(c.App.Writer, cf.Resolved(memfs.Keep(c.String("keep")), err))
					return err
				})
			},
		}},
	}
}
