package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/history"
	"github.com/memfs/memfs/mountclient"
)

// The history commands: through the mount that serves the store (its
// read-only .memfs/history/, .memfs/snapshots/; a revert writes the key
// through it), else on the engine (memfs.FS's history API).

func histFlags() []cli.Flag {
	return []cli.Flag{storeFlag(), &cli.StringFlag{Name: "mount", Usage: "through the live mount at DIR (the default when a mount serves the store)"}}
}

// onHistory runs mnt through the mount serving the store, else eng on the engine.
func onHistory(c *cli.Context, a memfs.Access, mnt func(m *mountclient.Client) error, eng func(ctx context.Context, f *memfs.FS) error) error {
	t, err := locate(c)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Command.Name, err)
	}
	if t.mnt != "" {
		return mnt(t.Client)
	}
	return withSession(c, a, func(ctx context.Context, o *opened) error { return eng(ctx, o.FS) })
}

func historyCommand() *cli.Command {
	return &cli.Command{
		Name: "history", Usage: "list the versions of KEY, oldest first: SEQ TIME OP SIZE WRITER [OLDKEY]", ArgsUsage: "KEY",
		Flags: histFlags(), Subcommands: []*cli.Command{historyRedactCommand()},
		Action: func(c *cli.Context) error {
			key := c.Args().First()
			return onHistory(c, memfs.ReadStore, func(m *mountclient.Client) error {
				b, err := m.History(key)
				c.App.Writer.Write(b)
				return err
			}, func(ctx context.Context, f *memfs.FS) error {
				vs, err := f.Versions(ctx, key)
				history.WriteLog(c.App.Writer, vs)
				return err
			})
		},
	}
}

// historyRedactCommand blanks one version's bytes on a store no mount serves:
// a mount serves past versions as immutable (its cache and the kernel's
// page cache keep them), so it would go on serving the bytes.
func historyRedactCommand() *cli.Command {
	return &cli.Command{
		Name: "redact", ArgsUsage: "KEY SEQ", Flags: []cli.Flag{storeFlag(), agentFlag()},
		Usage: "blank the bytes of KEY's version SEQ (a secret the rules missed); its record stays, marked, and an event says so",
		Action: func(c *cli.Context) error {
			key := c.Args().First()
			seq, err := strconv.ParseUint(c.Args().Get(1), 10, 64)
			if err != nil || c.NArg() != 2 {
				return errors.New("usage: memfs history redact KEY SEQ (SEQ: a version's number, as memfs history KEY lists them)")
			}
			t, err := locate(c)
			if err == nil {
				err = cmp.Or(t.NeedsStore("history redact", "unmount it first: the mount keeps the versions it served "+
					"(its cache, the kernel's page cache) and would go on serving the redacted bytes"), checkAgent(c), t.Spec.MustExist())
			}
			if err != nil {
				return err
			}
			st, err := openStoreAs(t.Spec, false, logger(c, false))
			if err != nil {
				return err
			}
			defer st.Close()
			r, err := memfs.RedactVersion(c.Context, st, key, seq, c.String("agent"), logger(c, false))
			if err == nil {
				fmt.Fprint(c.App.Writer, r.Report())
			}
			return err
		},
	}
}

func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name: "snapshot", Usage: "name the namespace as it is now (after a flush), list or remove names",
		Subcommands: []*cli.Command{
			{Name: "create", ArgsUsage: "NAME", Flags: histFlags(), Action: func(c *cli.Context) error { return saveSnapshot(c, c.Args().First()) }},
			{Name: "list", Flags: histFlags(), Action: func(c *cli.Context) error { return listSnapshots(c, "") }},
			{Name: "rm", ArgsUsage: "NAME", Flags: histFlags(), Action: func(c *cli.Context) error {
				name := c.Args().First()
				return onHistory(c, memfs.WriteStore, func(m *mountclient.Client) error { return m.RemoveSnapshot(name) },
					func(ctx context.Context, f *memfs.FS) error { return f.RemoveSnapshot(ctx, name) })
			}},
		},
	}
}

func checkpointCommand() *cli.Command {
	return &cli.Command{
		Name: "checkpoint", Usage: "the checkpoints of a run: snapshots named RUN/STEP",
		Subcommands: []*cli.Command{
			{Name: "save", ArgsUsage: "RUN STEP", Flags: histFlags(), Action: func(c *cli.Context) error {
				return saveSnapshot(c, c.Args().Get(0)+"/"+c.Args().Get(1))
			}},
			{Name: "latest", ArgsUsage: "RUN", Flags: histFlags(), Action: func(c *cli.Context) error {
				return listSnapshots(c, c.Args().First()+"/"+history.Latest)
			}},
			{Name: "list", ArgsUsage: "RUN", Flags: histFlags(), Action: func(c *cli.Context) error { return listSnapshots(c, c.Args().First()+"/") }},
		},
	}
}

func saveSnapshot(c *cli.Context, name string) error {
	if err := history.ValidSnapshotName(name); err != nil {
		return err
	}
	return onHistory(c, memfs.WriteStore, func(m *mountclient.Client) error { return m.Snapshot(name) }, func(ctx context.Context, f *memfs.FS) error {
		s, err := f.CreateSnapshot(ctx, name, fmt.Sprintf("%s/%d", cmp.Or(c.String("agent"), "memfs"), os.Getpid()))
		if err == nil {
			fmt.Fprintf(c.App.Writer, "%s %d\n", s.Name, s.Seq)
		}
		return err
	})
}

// listSnapshots prints the snapshots which names (memfs.FS.ListSnapshots):
// through a mount their names, else "NAME SEQ TIME BY" each.
func listSnapshots(c *cli.Context, which string) error {
	return onHistory(c, memfs.ReadStore, func(m *mountclient.Client) error {
		names, err := m.ListSnapshots(which)
		printLines(c, names)
		return err
	}, func(ctx context.Context, f *memfs.FS) error {
		ss, err := f.ListSnapshots(ctx, which)
		history.WriteSnapshots(c.App.Writer, ss)
		return err
	})
}

func revertCommand() *cli.Command {
	return &cli.Command{
		Name: "revert", Usage: "write KEY's content as of --to (a seq or a snapshot; default: its version before the last) as a new version",
		ArgsUsage: "KEY", Flags: append(histFlags(), &cli.StringFlag{Name: "to", Usage: "SEQ or SNAPSHOT"}),
		Action: func(c *cli.Context) error {
			key := c.Args().First()
			reverted := func(seq uint64, err error) error {
				if err == nil {
					fmt.Fprintf(c.App.Writer, "%s: the content of %d, as a new version\n", key, seq)
				}
				return err
			}
			return onHistory(c, memfs.WriteStore, func(m *mountclient.Client) error {
				seq, err := strconv.ParseUint(cmp.Or(c.String("to"), "0"), 10, 64)
				if err != nil {
					return errors.New("revert: --to SNAPSHOT through a mount: use memfs restore --to SNAPSHOT " + key)
				}
				return reverted(m.Revert(key, seq))
			}, func(ctx context.Context, f *memfs.FS) error {
				v, err := f.Revert(ctx, key, c.String("to"))
				return reverted(v.Seq, err)
			})
		},
	}
}

func restoreCommand() *cli.Command {
	return &cli.Command{
		Name: "restore", Usage: "write the files under PREFIX as of --to SNAPSHOT (or seq) as new versions (nothing is deleted)",
		ArgsUsage: "[PREFIX]", Flags: append(histFlags(), &cli.StringFlag{Name: "to", Required: true, Usage: "SNAPSHOT or SEQ"}),
		Action: func(c *cli.Context) error {
			if err := notMounted(c, "cp -a .memfs/snapshots/"+c.String("to")+"/"+c.Args().First()+" through the mount"); err != nil {
				return err
			}
			return withSession(c, memfs.WriteStore, func(ctx context.Context, o *opened) error {
				keys, err := o.Restore(ctx, c.String("to"), c.Args().First())
				printLines(c, keys)
				return err
			})
		},
	}
}

func diffCommand() *cli.Command {
	return &cli.Command{
		Name: "diff", Usage: "the unified diff of KEY between versions A and B (seqs or snapshots; default: the version before the last, and now)",
		ArgsUsage: "KEY [A] [B]", Flags: histFlags(),
		Action: func(c *cli.Context) error {
			key := c.Args().First()
			if err := notMounted(c, "diff -u .memfs/history/"+key+"/SEQ "+key+" through the mount"); err != nil {
				return err
			}
			return withSession(c, memfs.ReadStore, func(ctx context.Context, o *opened) error {
				d, err := o.Diff(ctx, c.Args().Get(0), c.Args().Get(1), c.Args().Get(2))
				fmt.Fprint(c.App.Writer, d)
				return err
			})
		},
	}
}

// notMounted refuses a command that opens the engine when a mount serves
// the store, naming what to do through the mount instead.
func notMounted(c *cli.Context, instead string) error {
	t, err := locate(c)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Command.Name, err)
	}
	return t.NeedsStore(c.Command.Name, instead)
}
