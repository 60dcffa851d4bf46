package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/history"
)

// The history commands: through the mount that serves the store (its
// read-only .memfs/history/, .memfs/snapshots/; a revert writes the key
// through it), else on the engine (memfs.FS's history API).

func histFlags() []cli.Flag {
	return []cli.Flag{storeFlag(), &cli.StringFlag{Name: "mount", Usage: "through the live mount at DIR (the default when a mount serves the store)"}}
}

// onHistory runs mnt through the mount serving the store, else eng on the engine.
func onHistory(c *cli.Context, a access, mnt func(r *os.Root, t target) error, eng func(ctx context.Context, f *memfs.FS) error) error {
	t, err := locate(c)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Command.Name, err)
	}
	if t.mnt != "" {
		r, err := t.client.Root()
		if err != nil {
			return err
		}
		defer r.Close()
		return mnt(r, t)
	}
	return withSession(c, a, func(ctx context.Context, o *opened) error { return eng(ctx, o.FS) })
}

func historyCommand() *cli.Command {
	return &cli.Command{
		Name: "history", Usage: "list the versions of KEY, oldest first: SEQ TIME OP SIZE WRITER [OLDKEY]", ArgsUsage: "KEY",
		Flags: histFlags(),
		Action: func(c *cli.Context) error {
			key := c.Args().First()
			return onHistory(c, readStore, func(r *os.Root, _ target) error {
				b, err := r.ReadFile(path.Join(".memfs/history", key, "log"))
				if err == nil {
					_, err = c.App.Writer.Write(b)
				}
				return err
			}, func(ctx context.Context, f *memfs.FS) error {
				vs, err := f.Versions(ctx, key)
				for i := range vs {
					fmt.Fprint(c.App.Writer, vs[i].LogLine())
				}
				return err
			})
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
				return onHistory(c, writeStore, func(r *os.Root, _ target) error { return r.Remove(path.Join(".memfs/snapshots", name)) },
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
	return onHistory(c, writeStore, func(r *os.Root, _ target) error {
		return r.Mkdir(path.Join(".memfs/snapshots", name), 0o755)
	}, func(ctx context.Context, f *memfs.FS) error {
		s, err := f.CreateSnapshot(ctx, name, fmt.Sprintf("%s/%d", cmp.Or(c.String("agent"), "memfs"), os.Getpid()))
		if err == nil {
			fmt.Fprintf(c.App.Writer, "%s %d\n", s.Name, s.Seq)
		}
		return err
	})
}

// listSnapshots prints "NAME SEQ TIME BY" per snapshot: those under
// the run prefix "RUN/", or the one "RUN/latest" resolves to, or all.
func listSnapshots(c *cli.Context, which string) error {
	print := func(ss []history.Snapshot, all bool) {
		for _, s := range ss {
			if all || strings.HasPrefix(s.Name, which) {
				fmt.Fprintf(c.App.Writer, "%s %d %s %s\n", s.Name, s.Seq, s.Time.UTC().Format("2006-01-02T15:04:05Z"), s.By)
			}
		}
	}
	return onHistory(c, readStore, func(r *os.Root, _ target) error {
		if run, ok := strings.CutSuffix(which, "/"+history.Latest); ok {
			step, err := r.Readlink(path.Join(".memfs/snapshots", which))
			if err == nil {
				fmt.Fprintf(c.App.Writer, "%s/%s\n", run, step)
			}
			return err
		}
		return listMountSnapshots(c, r, strings.TrimSuffix(which, "/"))
	}, func(ctx context.Context, f *memfs.FS) error {
		if strings.HasSuffix(which, "/"+history.Latest) {
			s, err := f.ResolveSnapshot(ctx, which)
			if err == nil {
				print([]history.Snapshot{s}, true)
			}
			return err
		}
		ss, err := f.Snapshots(ctx)
		print(ss, which == "")
		return err
	})
}

// listMountSnapshots prints the snapshot names in the mount's
// .memfs/snapshots/ (a run's directory for run).
func listMountSnapshots(c *cli.Context, r *os.Root, run string) error {
	ents, err := fsReadDir(r, path.Join(".memfs/snapshots", run))
	for _, e := range ents {
		name := path.Join(run, e.Name())
		switch {
		case e.Name() == history.Latest && run != "":
		case run == "" && e.IsDir() && isRunDir(r, name):
			if err := listMountSnapshots(c, r, name); err != nil {
				return err
			}
		default:
			fmt.Fprintln(c.App.Writer, name)
		}
	}
	return err
}

// isRunDir reports whether the snapshot directory name is a run (it has a
// latest link), not a snapshot.
func isRunDir(r *os.Root, name string) bool {
	_, err := r.Lstat(path.Join(".memfs/snapshots", name, history.Latest))
	return err == nil
}

func fsReadDir(r *os.Root, dir string) ([]os.DirEntry, error) {
	d, err := r.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadDir(-1)
}

func revertCommand() *cli.Command {
	return &cli.Command{
		Name: "revert", Usage: "write KEY's content as of --to (a seq or a snapshot; default: its version before the last) as a new version",
		ArgsUsage: "KEY", Flags: append(histFlags(), &cli.StringFlag{Name: "to", Usage: "SEQ or SNAPSHOT"}),
		Action: func(c *cli.Context) error {
			key := c.Args().First()
			return onHistory(c, writeStore, func(r *os.Root, t target) error {
				seq, err := mountTarget(r, key, c.String("to"))
				if err != nil {
					return err
				}
				b, err := r.ReadFile(path.Join(".memfs/history", key, fmt.Sprintf("%08d", seq)))
				if err != nil {
					return err
				}
				st, err := r.Stat(path.Join(".memfs/history", key, fmt.Sprintf("%08d", seq)))
				if err != nil {
					return err
				}
				return t.client.Put(key, b, st.Mode().Perm())
			}, func(ctx context.Context, f *memfs.FS) error {
				v, err := f.Revert(ctx, key, c.String("to"))
				if err == nil {
					fmt.Fprintf(c.App.Writer, "%s: the content of %d, as a new version\n", key, v.Seq)
				}
				return err
			})
		},
	}
}

// mountTarget is the seq of KEY's version to go back to through a mount:
// --to's seq, or at a snapshot the version its namespace holds (the
// newest at or before it), or the one before the last.
func mountTarget(r *os.Root, key, to string) (uint64, error) {
	if seq, err := strconv.ParseUint(to, 10, 64); err == nil {
		return seq, nil
	}
	if to != "" {
		return 0, errors.New("revert: --to SNAPSHOT through a mount: use memfs restore --to SNAPSHOT " + key)
	}
	ents, err := fsReadDir(r, path.Join(".memfs/history", key))
	var seqs []uint64
	for _, e := range ents {
		if s, err := strconv.ParseUint(e.Name(), 10, 64); err == nil {
			seqs = append(seqs, s)
		}
	}
	if len(seqs) < 2 {
		return 0, errors.Join(err, fmt.Errorf("revert: %s has no version before its last", key))
	}
	return seqs[len(seqs)-2], nil
}

func restoreCommand() *cli.Command {
	return &cli.Command{
		Name: "restore", Usage: "write the files under PREFIX as of --to SNAPSHOT (or seq) as new versions (nothing is deleted)",
		ArgsUsage: "[PREFIX]", Flags: append(histFlags(), &cli.StringFlag{Name: "to", Required: true, Usage: "SNAPSHOT or SEQ"}),
		Action: func(c *cli.Context) error {
			if err := notMounted(c, "cp -a .memfs/snapshots/"+c.String("to")+"/"+c.Args().First()+" through the mount"); err != nil {
				return err
			}
			return withSession(c, writeStore, func(ctx context.Context, o *opened) error {
				keys, err := o.Restore(ctx, c.String("to"), c.Args().First())
				for _, k := range keys {
					fmt.Fprintln(c.App.Writer, k)
				}
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
			return withSession(c, readStore, func(ctx context.Context, o *opened) error {
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
	return needsStore(c.Command.Name, t, instead)
}
