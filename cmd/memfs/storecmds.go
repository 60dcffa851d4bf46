package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/cliargs"
	"github.com/memfs/memfs/internal/listing"
	"github.com/memfs/memfs/internal/paths"
	"github.com/memfs/memfs/internal/usererr"
	"github.com/memfs/memfs/mountclient"
	"github.com/memfs/memfs/tree"
)

// withSession opens the store named by --store for a command that works
// without a mount (memfs.CommandOptions), runs fn, and (with
// memfs.WriteStore) flushes before closing (CommandOptions.Finish). The values under prefixes are
// loaded at the open (a context pack's always-loaded memory).
func withSession(c *cli.Context, a memfs.Access, fn func(ctx context.Context, o *opened) error, prefixes ...string) error {
	write := a != memfs.ReadStore
	spec, err := parseStore(c.String("store"))
	if err != nil {
		return err
	}
	if a != memfs.WriteStore {
		if err := spec.MustExist(); err != nil {
			return err
		}
	}
	log := logger(c, false)
	ctx := c.Context
	co := memfs.CommandOptions{Access: a, Shared: !spec.Local(), Bootstrap: prefixes}
	if write {
		if co.Redactor, err = newRedactor(c, log); err != nil {
			return err
		}
		if err := checkAgent(c); err != nil {
			return err
		}
		co.Agent, co.NoRedact = c.String("agent"), co.Redactor == nil
	}
	if co.Embedder, err = openEmbedder(c, log); err != nil {
		return err
	}
	o, err := openSession(ctx, spec, !write, co.Options(), log)
	if err != nil {
		return err
	}
	return co.Finish(ctx, o.FS, fn(ctx, o))
}

func lsCommand() *cli.Command {
	return &cli.Command{
		Name:      "ls",
		Usage:     "list the keys of a store or a live mount (under PREFIX), filtered by their metadata",
		ArgsUsage: "[PREFIX]",
		Flags: append([]cli.Flag{
			storeFlag(),
			mountFlag("list through"),
			&cli.BoolFlag{Name: "long", Aliases: []string{"l"}, Usage: "show directories too, and the node type and mode (as ls -l), owner, size (major, minor of a device), modification time, symlink target, tags, importance, type and session"},
		}, append(filterFlags(), memoryFlags()...)...),
		Action: func(c *cli.Context) error {
			f, err := parseFilter(c)
			if err != nil {
				return err
			}
			if f.Session, f.Type, err = parseMemoryFlags(c); err != nil {
				return err
			}
			t, err := locate(c)
			if err != nil {
				return fmt.Errorf("ls: %w", err)
			}
			if f.Prefix, err = cliargs.Prefix(cliargs.InMount([]string{c.Args().First()}, t.mnt)[0], f.Prefix); err != nil {
				return fmt.Errorf("ls: %w", err)
			}
			ls := func(entries []backend.Entry, err error) error {
				if err != nil {
					return fmt.Errorf("ls: %w", err)
				}
				return listing.Ls(c.App.Writer, entries, f, c.Bool("long"))
			}
			if t.mnt != "" {
				return ls(t.Client.Nodes(""))
			}
			return withSession(c, memfs.ReadStore, func(ctx context.Context, o *opened) error { return ls(memfs.List(ctx, o.c, f.Prefix)) })
		},
	}
}

func catCommand() *cli.Command {
	return &cli.Command{
		Name:      "cat",
		Usage:     "print the values of KEYs (through the mount when the store is mounted)",
		ArgsUsage: "KEY...",
		Flags:     []cli.Flag{storeFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return errors.New("cat: name at least one KEY (memfs ls lists them)")
			}
			t, err := locate(c)
			if err != nil {
				return fmt.Errorf("cat: %w", err)
			}
			keys := cliargs.InMount(c.Args().Slice(), t.mnt)
			if err := usererr.CheckKeys("cat", keys, false); err != nil {
				return err
			}
			if t.mnt != "" {
				return memfs.Cat(c.App.Writer, keys, func(k string) ([]byte, error) {
					v, err := t.Client.Cat(k)
					if nv := (*mountclient.NoValueError)(nil); errors.As(err, &nv) {
						return nil, fmt.Errorf("cat: %s: a %s has no value to print", k, backend.TypeName(nv.Mode))
					}
					return v, err
				})
			}
			return withSession(c, memfs.ReadStore, func(ctx context.Context, o *opened) error {
				return memfs.Cat(c.App.Writer, keys, func(k string) ([]byte, error) {
					if err := o.c.Resolve(ctx, k); err != nil {
						return nil, err
					}
					v, _ := o.c.Get(k)
					return v, nil
				})
			})
		},
	}
}

func putCommand() *cli.Command {
	return &cli.Command{
		Name:      "put",
		Usage:     "store KEY with the content of FILE (or standard input); through the mount when the store is mounted",
		ArgsUsage: "KEY [FILE]",
		Flags: append([]cli.Flag{
			storeFlag(),
			&cli.StringFlag{Name: "mode", Value: "0644", Usage: "file mode (octal)"},
		}, writeFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() < 1 || c.NArg() > 2 {
				return errors.New("put: usage: memfs put KEY [FILE]  (standard input when FILE is missing)")
			}
			t, err := locate(c)
			if err != nil {
				return fmt.Errorf("put: %w", err)
			}
			key := cliargs.InMount(c.Args().Slice()[:1], t.mnt)[0]
			if err := usererr.CheckKey("put", key); err != nil {
				return err
			}
			if err := memfs.CheckTransient("put", key); err != nil {
				return err
			}
			mode, err := cliargs.ParseMode(c.String("mode"))
			if err != nil {
				return fmt.Errorf("put: --mode %w", err)
			}
			value, err := cliargs.ReadInput(c.Args().Get(1), cmp.Or[io.Reader](c.App.Reader, os.Stdin))
			if err != nil {
				return err
			}
			if t.mnt != "" {
				mountSettings(c, t)
				if err := t.Client.PutFile(key, value, mode, c.IsSet("mode")); err != nil { // an old file keeps its mode, unless --mode is given
					return fmt.Errorf("put: %w", usererr.Explain(err))
				}
				return nil
			}
			return withSession(c, memfs.WriteStore, func(ctx context.Context, o *opened) error {
				return usererr.Explain(memfs.PutFile(o.c, key, value, mode, c.IsSet("mode")))
			})
		},
	}
}

func rmCommand() *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Usage:     "remove KEYs (with -r, every key under a prefix); through the mount when the store is mounted",
		ArgsUsage: "KEY...",
		Flags: []cli.Flag{
			storeFlag(),
			agentFlag(),
			&cli.BoolFlag{Name: "recursive", Aliases: []string{"r"}, Usage: "remove every key under each KEY/ too"},
			&cli.BoolFlag{Name: "force", Aliases: []string{"f"}, Usage: "ignore keys that do not exist"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return errors.New("rm: name at least one KEY")
			}
			t, err := locate(c)
			if err != nil {
				return fmt.Errorf("rm: %w", err)
			}
			keys := cliargs.InMount(c.Args().Slice(), t.mnt)
			if err := usererr.CheckKeys("rm", keys, true); err != nil {
				return err
			}
			if err := checkAgent(c); err != nil {
				return err
			}
			if t.mnt != "" {
				mountSettings(c, t)
				return usererr.Rm(t.Client.Remove(keys, c.Bool("recursive"), memfs.RmMissing(c.Bool("force"))))
			}
			return withSession(c, memfs.WriteStore, func(ctx context.Context, o *opened) error {
				return usererr.Rm(memfs.Remove(ctx, o.c, keys, c.Bool("recursive"), memfs.RmMissing(c.Bool("force"))))
			})
		},
	}
}

func importCommand() *cli.Command {
	return &cli.Command{
		Name: "import",
		Usage: "copy every name under DIR into the store (keys are paths relative to DIR): files, directories, " +
			"symlinks (never followed), fifos, sockets, devices and hard links, with mode, owner, times and user.* attributes",
		ArgsUsage: "DIR",
		Flags: append([]cli.Flag{
			storeFlag(),
			&cli.StringFlag{Name: "prefix", Usage: "put the keys under this prefix"},
		}, writeFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errors.New("import: usage: memfs import DIR")
			}
			src := c.Args().First()
			prefix, err := usererr.CheckPrefix("import: --prefix", c.String("prefix"))
			if err != nil {
				return err
			}
			loc, err := locate(c)
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			if err := loc.NeedsStore("import", fmt.Sprintf("copy into the mount instead (cp -a %s/. %s), or unmount it first: memfs unmount %s",
				src, filepath.Join(loc.mnt, prefix), loc.mnt)); err != nil {
				return err
			}
			t := tree.NewTally(c.App.ErrWriter)
			plan, err := memfs.ScanImport(src, prefix, t)
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			return cmp.Or(withSession(c, memfs.WriteStore, func(ctx context.Context, o *opened) error {
				o.Import(ctx, plan, t, bar(c.App.ErrWriter, "import"))
				fmt.Fprintf(c.App.Writer, "imported %s from %s into %s\n", t.Summary(), src, o.spec)
				return nil
			}), t.Err("import")) // the names not carried, once the rest is in the store
		},
	}
}

func exportCommand() *cli.Command {
	return &cli.Command{
		Name: "export",
		Usage: "write every key (under --prefix) under DIR as the node it is (file, directory, symlink, fifo, socket, " +
			"device, hard link), with its mode, times, user.* attributes and, as root, owner",
		ArgsUsage: "DIR",
		Flags: []cli.Flag{
			storeFlag(),
			&cli.StringFlag{Name: "prefix", Usage: "export only keys under this prefix"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errors.New("export: usage: memfs export DIR")
			}
			dst := c.Args().First()
			loc, err := locate(c)
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			if loc.mnt == "" {
				// Checked before DST is made: a typo in --store
				// creates nothing.
				if err := loc.Spec.MustExist(); err != nil {
					return err
				}
			} else if paths.Within(paths.Resolved(dst), paths.Resolved(loc.mnt)) {
				return fmt.Errorf("export: %s is inside the mount %s it would read from; export to a directory outside it", dst, loc.mnt)
			}
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			t := tree.NewTally(c.App.ErrWriter)
			opts := tree.ExportOptions{AsRoot: os.Geteuid() == 0, Progress: bar(c.App.ErrWriter, "export")}
			via := ""
			if loc.mnt != "" {
				via = " (through the mount at " + loc.mnt + ")"
				err = loc.Client.Export(c.Context, dst, c.String("prefix"), t, opts)
			} else {
				err = withSession(c, memfs.ReadStore, func(ctx context.Context, o *opened) error {
					return o.Export(ctx, dst, c.String("prefix"), t, opts)
				})
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "exported %s from %s%s to %s\n", t.Summary(), loc.Spec, via, dst)
			return t.Err("export")
		},
	}
}
