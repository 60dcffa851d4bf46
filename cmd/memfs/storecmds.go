package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/listing"
	"github.com/memfs/memfs/internal/paths"
	"github.com/memfs/memfs/redact"
	"github.com/memfs/memfs/session"
)

// access is what a command that works without a mount does to the store.
type access int

const (
	// readStore: the command only reads (ls, cat, log, search, context,
	// export). The store is opened read-only, and nothing in its
	// directory changes: no lock PID, marker or journal is written, no
	// damaged value log or journal bytes are cut or moved aside, and the
	// search index is kept in memory. What a crashed mount left in the
	// journal is shown from memory (a read-only replay) and left there
	// for the next mount or command that writes.
	readStore access = iota
	// rebuildIndex: the command rebuilds the search index (reindex) and
	// rewrites, redacted, the values another program left a secret in:
	// it writes as writeStore does, but makes no store.
	rebuildIndex
	// writeStore: the command writes values (put, rm, import, summary
	// add): the journal is replayed and saved, and the session flushed
	// before it closes.
	writeStore
)

// withSession opens the store named by --store for a command that works
// without a mount, runs fn, and (with writeStore) flushes before closing.
// The values under prefixes are loaded at the open (a context pack's
// always-loaded memory).
func withSession(c *cli.Context, a access, fn func(ctx context.Context, o *opened) error, prefixes ...string) error {
	write := a != readStore
	spec, err := parseStore(c.String("store"))
	if err != nil {
		return err
	}
	if a != writeStore {
		if err := mustExist(spec); err != nil {
			return err
		}
	}
	log := logger(c, false)
	ctx := c.Context
	var red *redact.Redactor
	var agent string
	if write {
		if red, err = newRedactor(c, log); err != nil {
			return err
		}
		if err := checkAgent(c); err != nil {
			return err
		}
		agent = c.String("agent")
	}
	emb, err := openEmbedder(c, log)
	if err != nil {
		return err
	}
	policy := session.KeepBeside
	if !spec.Local() {
		policy = session.KeepBoth // a command's writes keep another mount's too
	}
	o, err := openSession(ctx, spec, a == readStore, memfs.Options{Session: session.Options{
		OnConflict: policy,
		Agent:      agent,
		Self:       selfWriter(agent),
		Redactor:   red,
		DirUID:     uint32(os.Getuid()), DirGID: uint32(os.Getgid()),
		// A command sees every key the store holds, whatever a mount
		// keeps in memory only (--transient).
		Transient: []string{},
		// A command that only reads writes no value: what a crashed
		// mount left in the journal is shown, and left for the next
		// command or mount that writes (see access).
		ReadOnly: !write,
	}, NoRedact: write && red == nil, Bootstrap: prefixes, Embedder: emb}, log)
	if err != nil {
		return err
	}
	if err := fn(ctx, o); err != nil {
		// Keep what was done before the error (a read-only session saves
		// nothing, and its Close has nothing to report).
		if ferr := o.Close(context.WithoutCancel(ctx)); ferr != nil && write {
			return errors.Join(err, ferr)
		}
		return err
	}
	if write {
		return o.Close(ctx)
	}
	return o.Close(context.Background())
}

func lsCommand() *cli.Command {
	return &cli.Command{
		Name:      "ls",
		Usage:     "list the keys of a store or a live mount (under PREFIX), filtered by their metadata",
		ArgsUsage: "[PREFIX]",
		Flags: append([]cli.Flag{
			storeFlag(),
			&cli.StringFlag{Name: "mount", Usage: "list through the live mount at DIR (the default when a mount serves the store, or the working directory is in one)"},
			&cli.BoolFlag{Name: "long", Aliases: []string{"l"}, Usage: "show directories too, and the node type and mode (as ls -l), owner, size (major, minor of a device), modification time, symlink target and tags"},
		}, filterFlags()...),
		Action: func(c *cli.Context) error {
			f, err := parseFilter(c)
			if err != nil {
				return err
			}
			if p := c.Args().First(); p != "" {
				if f.Prefix != "" && f.Prefix != p {
					return fmt.Errorf("ls: PREFIX %q and --prefix %q disagree", p, f.Prefix)
				}
				f.Prefix = p
			}
			print := func(entries []backend.Entry) error {
				return listing.Write(c.App.Writer, entries, func(e backend.Entry) bool {
					return f.Match(e.Key, e.Info.MTime, e.Info.XAttrs)
				}, c.Bool("long"))
			}
			t, err := locate(c)
			if err != nil {
				return fmt.Errorf("ls: %w", err)
			}
			if t.mnt != "" {
				entries, err := t.client.Nodes()
				if err != nil {
					return fmt.Errorf("ls: %w", err)
				}
				return print(entries)
			}
			return withSession(c, readStore, func(ctx context.Context, o *opened) error {
				entries, err := memfs.List(ctx, o.c, f.Prefix)
				if err != nil {
					return fmt.Errorf("ls: %w", err)
				}
				return print(entries)
			})
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
			for _, k := range c.Args().Slice() {
				if err := checkCommandKey("cat", k); err != nil {
					return err
				}
			}
			t, err := locate(c)
			if err != nil {
				return fmt.Errorf("cat: %w", err)
			}
			if t.mnt != "" {
				return catThrough(c, t, c.Args().Slice())
			}
			return withSession(c, readStore, func(ctx context.Context, o *opened) error {
				for _, k := range c.Args().Slice() {
					if !o.c.Has(k) {
						if err := checkTransient("cat", k); err != nil {
							return err
						}
					}
					if err := o.c.Resolve(ctx, k); err != nil {
						return explain(err)
					}
					v, _ := o.c.Get(k)
					if _, err := c.App.Writer.Write(v); err != nil {
						return err
					}
				}
				return nil
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
			key := c.Args().Get(0)
			if err := checkCommandKey("put", key); err != nil {
				return err
			}
			if err := checkTransient("put", key); err != nil {
				return err
			}
			var mode uint32
			if _, err := fmt.Sscanf(c.String("mode"), "%o", &mode); err != nil || mode > 0o777 {
				return fmt.Errorf("put: --mode %q: want an octal mode such as 0644", c.String("mode"))
			}
			var r io.Reader = c.App.Reader
			if r == nil {
				r = os.Stdin
			}
			if f := c.Args().Get(1); f != "" && f != "-" {
				fh, err := os.Open(f)
				if err != nil {
					return err
				}
				defer fh.Close()
				r = fh
			}
			value, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			t, err := locate(c)
			if err != nil {
				return fmt.Errorf("put: %w", err)
			}
			if t.mnt != "" {
				mountSettings(c, t)
				return putThrough(t, key, value, fs.FileMode(mode))
			}
			return withSession(c, writeStore, func(ctx context.Context, o *opened) error {
				return explain(o.c.Put(backend.Entry{Key: key, Value: value, Info: backend.Info{
					Mode: fs.FileMode(mode), MTime: time.Now(), UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}}))
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
			for _, k := range c.Args().Slice() {
				if err := checkCommandKey("rm", strings.TrimSuffix(k, "/")); err != nil {
					return err
				}
			}
			if err := checkAgent(c); err != nil {
				return err
			}
			t, err := locate(c)
			if err != nil {
				return fmt.Errorf("rm: %w", err)
			}
			if t.mnt != "" {
				mountSettings(c, t)
				return rmThrough(t, c.Args().Slice(), c.Bool("recursive"), c.Bool("force"))
			}
			return withSession(c, writeStore, func(ctx context.Context, o *opened) error {
				for _, k := range c.Args().Slice() {
					removed := 0
					if o.c.Has(k) {
						if err := memfs.RemoveName(ctx, o.c, k); err != nil {
							return explain(err)
						}
						removed++
					}
					if c.Bool("recursive") {
						n, err := memfs.RemoveTree(ctx, o.c, strings.TrimSuffix(k, "/"))
						if err != nil {
							return explain(err)
						}
						removed += n
					}
					if removed == 0 && !c.Bool("force") {
						if err := checkTransient("rm", k); err != nil {
							return err
						}
						return fmt.Errorf("rm: %s: no such key (memfs ls lists them; -r removes a prefix)", showName(k))
					}
				}
				return nil
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
			prefix := strings.Trim(c.String("prefix"), "/")
			if prefix != "" {
				if err := checkCommandKey("import: --prefix", prefix); err != nil {
					return err
				}
			}
			loc, err := locate(c)
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			if err := needsStore("import", loc, fmt.Sprintf("copy into the mount instead (cp -a %s/. %s), or unmount it first: memfs unmount %s",
				src, filepath.Join(loc.mnt, prefix), loc.mnt)); err != nil {
				return err
			}
			t := memfs.NewTally(c.App.ErrWriter)
			plan, err := memfs.ScanImport(src, prefix, t)
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			err = withSession(c, writeStore, func(ctx context.Context, o *opened) error {
				o.Import(ctx, plan, t, &bar{w: c.App.ErrWriter, what: "import"})
				fmt.Fprintf(c.App.Writer, "imported %s from %s into %s\n", t.Summary(), src, o.spec)
				return nil
			})
			if err != nil {
				return err
			}
			return t.Err("import")
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
				if err := mustExist(loc.spec); err != nil {
					return err
				}
			} else if paths.Within(paths.Resolved(dst), paths.Resolved(loc.mnt)) {
				return fmt.Errorf("export: %s is inside the mount %s it would read from; export to a directory outside it", dst, loc.mnt)
			}
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			t := memfs.NewTally(c.App.ErrWriter)
			opts := memfs.ExportOptions{AsRoot: os.Geteuid() == 0, Progress: &bar{w: c.App.ErrWriter, what: "export"}}
			if loc.mnt != "" {
				if err := loc.client.Export(c.Context, dst, c.String("prefix"), t, opts); err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "exported %s from %s (through the mount at %s) to %s\n", t.Summary(), loc.spec, loc.mnt, dst)
				return t.Err("export")
			}
			err = withSession(c, readStore, func(ctx context.Context, o *opened) error {
				if err := o.Export(ctx, dst, c.String("prefix"), t, opts); err != nil {
					return err
				}
				fmt.Fprintf(c.App.Writer, "exported %s from %s to %s\n", t.Summary(), o.spec, dst)
				return nil
			})
			if err != nil {
				return err
			}
			return t.Err("export")
		},
	}
}

// explain adds what to do to the errors a user can cause.
func explain(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, backend.ErrInvalidKey):
		return fmt.Errorf("%w\n  keys are relative slash-separated paths without . or .. segments or control characters, e.g. memory/notes.md", err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w\n  memfs ls lists the keys", err)
	}
	return err
}
