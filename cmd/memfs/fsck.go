package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/fsck"
)

func fsckCommand() *cli.Command {
	return &cli.Command{
		Name:  "fsck",
		Usage: "check a store for damage: every value, the records the store cannot decode, the event log's chain",
		Description: "Reads the whole store and prints one line per damaged key, record or break of\n" +
			"the event log (never a value), then exits 1 if it found any. It writes nothing.\n" +
			"--repair moves each damaged key's records aside, as they are, to a place of the\n" +
			"store no listing shows (a dir store's .memfs-damaged/, keys under x/ on badger and etcd),\n" +
			"and has the event log record the damage it finds at its end (copies under\n" +
			"events.damaged/, a break event each); it says where each went. Nothing is deleted.\n" +
			"Damage the event log recorded earlier is listed, and is not a failure.\n" +
			"A store a live mount serves is checked after it is unmounted (the mount's\n" +
			".memfs/status lists the damaged keys it found).",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.BoolFlag{Name: "repair", Usage: "move damaged records aside (never deleted) and say where they went"},
		},
		Action: func(c *cli.Context) error {
			t, err := locate(c)
			if err != nil {
				return err
			}
			if t.mnt != "" {
				return fmt.Errorf("a memfs mount serves this store at %s: its .memfs/status lists the damaged keys it found; unmount it to check the whole store", t.mnt)
			}
			if err := t.Spec.MustExist(); err != nil {
				return err
			}
			// Without --repair it only reads: the store is opened
			// read-only, so that not even badger cuts a damaged value log.
			st, err := openStoreAs(t.Spec, !c.Bool("repair"), logger(c, false))
			if err != nil {
				return err
			}
			defer st.Close()
			return fsck.Run(c.Context, st, c.App.Writer, t.Spec.String(), fsck.Options{Repair: c.Bool("repair")})
		},
	}
}
