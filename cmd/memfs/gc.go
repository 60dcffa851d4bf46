package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/history"
)

func gcCommand() *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "apply history's retention and remove the data nothing names any more",
		Description: "The collecting mount (on a shared store, the one its mounts elect) does this by itself; memfs gc does it now,\n" +
			"on a store no mount serves or a shared one. Data is removed only when nothing names it at two collections\n" +
			"a grace period apart (the first leaves a mark), never while a record is damaged. --keep: history's retention\n" +
			"(default: every version 30 days, the last 10 per key, one per day for a year, one per month beyond):\n" +
			"rules \"[PREFIX=]ALL[:LAST[:DAILY]]\" separated by ';', e.g. '60d;memory/=90d:20:730d'.",
		Flags: []cli.Flag{storeFlag(), &cli.StringFlag{Name: "keep", Usage: "history's retention rules (see the description)"}},
		Action: func(c *cli.Context) error {
			keep, err := history.ParseRetention(c.String("keep"))
			if err != nil {
				return err
			}
			spec, err := parseStore(c.String("store"))
			if err != nil {
				return err
			}
			if err := spec.MustExist(); err != nil {
				return err
			}
			st, err := openStoreAs(spec, false, logger(c, false))
			if err != nil {
				return err
			}
			defer st.Close()
			got, err := memfs.Collect(c.Context, st, keep)
			fmt.Fprint(c.App.Writer, got)
			return err
		},
	}
}
