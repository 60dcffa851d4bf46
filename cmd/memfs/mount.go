package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/internal/mounthelper"
	"github.com/memfs/memfs/internal/progress"
	"github.com/memfs/memfs/meta"
	"github.com/memfs/memfs/mountclient"
	"github.com/memfs/memfs/route"
	"github.com/memfs/memfs/session"
)

func mountCommand() *cli.Command {
	return &cli.Command{
		Name:      "mount",
		Usage:     "mount a memory store at MOUNTPOINT, in the foreground (or --daemon)",
		ArgsUsage: "MOUNTPOINT",
		Description: "Serves the store as a directory until SIGINT/SIGTERM or memfs unmount, which flush and\n" +
			"unmount. Writes stay in memory until fsync, the flush interval, or unmount; a file closed\n" +
			"after writing survives a crash of memfs through the store's journal.",
		Flags: append([]cli.Flag{
			storeFlag(),
			embedderFlag(),
			&cli.StringSliceFlag{Name: "bootstrap", Value: cli.NewStringSlice("memory/"), Usage: "key prefixes whose values are loaded at mount (\"\" loads everything)"},
			&cli.DurationFlag{Name: "flush-interval", Value: 30 * time.Second, Usage: "flush dirty values this often: at least 100ms, or 0 = only on fsync and unmount"},
			&cli.DurationFlag{Name: "attr-timeout", Value: time.Second, Usage: "how long the kernel may cache attributes: at least 1ms, or 0 = not at all; unset, a file's are kept until memfs sees a change behind the kernel (an hour at most), .memfs's this long"},
			&cli.DurationFlag{Name: "entry-timeout", Value: time.Second, Usage: "how long the kernel may cache names (and missing names): at least 1ms, or 0 = not at all; unset, a file's name is kept until memfs sees a change behind the kernel (an hour at most), missing names and .memfs's this long"},
			&cli.Int64Flag{Name: "max-file-size", Value: 64 << 20, Usage: "largest file in bytes, at least 1 (there is no unlimited size); larger writes fail with EFBIG"},
			&cli.StringFlag{Name: "max-memory", Value: "auto", Usage: "bytes of file contents kept in memory (512MiB, 2GiB, ...); past it, contents already in the store are dropped " +
				"and read again when opened, and unflushed ones are flushed; auto: a sixteenth of the machine's memory (or of its cgroup's limit), at least 256MiB"},
			&cli.BoolFlag{Name: "read-only", Usage: "mount read-only"},
			&cli.StringSliceFlag{Name: "route", Usage: "PREFIX=STORE[?ttl=DURATION&tier=indexed][:ro]: the keys under PREFIX live in STORE (skills/=dir:/srv/team-skills:ro, scratch/=mem:?ttl=1h, archive/=dir:/srv/archive?tier=indexed)"},
			&cli.StringSliceFlag{Name: "quota", Usage: "PREFIX=LIMITS: the most PREFIX holds: bytes, files, largest file (memory/=100MiB,10000files,1MiB; / is everything, which df shows)"},
			&cli.BoolFlag{Name: "daemon", Usage: "serve in the background: return once the mount answers (exit 0), or fail with its error; logs go to --log-file"},
			&cli.StringFlag{Name: "log-file", Usage: "append the log to FILE (made 0600; a symlink is refused); with --daemon the default is $XDG_STATE_HOME/memfs/log/MOUNTPOINT.log (root's: /var/log/memfs/)"},
			&cli.StringFlag{Name: "on-conflict", Value: "keep-both", Usage: "on a shared (etcd) store or route, what a flush does when another mount saved a file since this one loaded it: " +
				"keep-both (theirs keeps the name, ours is saved as NAME.conflict-AGENT-UTC.EXT), merge (three-way line merge of text; " +
				"an overlap or a binary file keeps both) or last-writer-wins"},
			&cli.BoolFlag{Name: "allow-other", Usage: "let other users in, held to the stored modes (needs user_allow_other in /etc/fuse.conf unless root)"},
			&cli.BoolFlag{Name: "debug", Usage: "log every FUSE request"},
			&cli.BoolFlag{Name: "show-memfs", Usage: "list .memfs in the mount's root (-o show_memfs); without it .memfs is opened by name only and tree walks (grep -r, cp -a, rsync, git add -A) leave it out"},
			&cli.BoolFlag{Name: "index-at-mount", Usage: "open (and repair) the search index right after mounting, in the background, instead of at the first search"},
			// A test seam (memfs.Options.EmbedWait), not a promise: hidden.
			&cli.DurationFlag{Name: "embed-wait", Hidden: true, Usage: "how long a search waits for the embedder before it ranks by keyword (0: 1 s)"},
			&cli.BoolFlag{Name: "xattrs", Value: true, Usage: "extended attributes on the mount (getfattr/setfattr); --xattrs=false makes ls -l about 8x faster on large trees, the kernel then asks for no attribute"},
			typesFlag(),
		}, append(transientFlags(), writeFlags()...)...),
		Action: mountAction,
	}
}

func mountAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("mount: want exactly one MOUNTPOINT, got %d arguments\n  usage: memfs mount [--store SPEC] MOUNTPOINT (SPEC: %s)", c.NArg(), stores.Usage())
	}
	mnt, err := filepath.Abs(c.Args().First())
	if err != nil {
		return err
	}
	if c.Bool("daemon") && !mounthelper.Detached() {
		msg, err := mounthelper.Daemon(os.Args[1:], mnt, c.String("log-file"), memfs.DefaultStateDir())
		if err == nil {
			fmt.Fprintln(c.App.Writer, msg)
		}
		return err
	}
	if path := c.String("log-file"); path != "" {
		f, err := mounthelper.OpenLog(path)
		if err != nil {
			return fmt.Errorf("mount: --log-file: %w", err)
		}
		defer f.Close()
		c.App.ErrWriter = f
	}
	spec, err := parseStore(c.String("store"))
	if err != nil {
		return err
	}
	transient, err := session.ChooseTransient(c.Bool("no-transient"), c.StringSlice("transient"), c.IsSet("transient"))
	if err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	maxMemory, err := memfs.ParseMaxMemory(c.String("max-memory"))
	if err != nil {
		return fmt.Errorf("mount: --max-memory %w", err)
	}
	types, err := meta.ParseTypes(c.String("types"))
	if err != nil {
		return fmt.Errorf("mount: --types: %w", err)
	}
	if c.Bool("read-only") {
		if err := spec.MustExist(); err != nil {
			return err
		}
	}
	if err := mountclient.CheckUnserved(spec, parseStore); err != nil {
		return err
	}
	routes, quotas, err := route.ParseFlags(mnt, c.StringSlice("route"), c.StringSlice("quota"), routeStores)
	if err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	log := logger(c, c.Bool("debug"))
	// I/O must finish after a signal (main's) cancelled the command's
	// context, which asks for flush + unmount (memfs.RunMount).
	return memfs.RunMount(c.Context, mnt, memfs.RunOptions{StoreDir: spec.Dir(), Name: spec.String(), ReadOnly: c.Bool("read-only"), Logger: log,
		HelperArgs: []string{"__apply"}, HelperStderr: c.App.ErrWriter,
		Open: func(ctx context.Context) (*memfs.FS, error) {
			red, err := newRedactor(c, log)
			if err != nil {
				return nil, err
			}
			if err := checkAgent(c); err != nil {
				return nil, err
			}
			policy, err := session.PolicyFor(spec.Local() && !routes.Shared(), spec.String(), c.IsSet("on-conflict"), c.String("on-conflict"))
			if err != nil {
				return nil, err
			}
			emb, err := openEmbedder(c, log)
			if err != nil {
				return nil, err
			}
			o, err := openSession(ctx, spec, false, memfs.Options{
				JournalPath: spec.JournalPath(memfs.DefaultStateDir(), mnt), // a shared store's: this mountpoint's
				Session: session.Options{
					OnConflict:  policy,
					Agent:       c.String("agent"),
					Self:        memfs.SelfWriter(c.String("agent")),
					Redactor:    red,
					MaxFileSize: c.Int64("max-file-size"),
					MaxMemory:   maxMemory,
					ReadOnly:    c.Bool("read-only"),
					Transient:   transient,
					Types:       types,
					DirUID:      uint32(os.Getuid()), DirGID: uint32(os.Getgid()),
				},
				NoRedact: red == nil, // --no-redact
				Routes:   routes, Quotas: quotas,
				Bootstrap: c.StringSlice("bootstrap"),
				Namespace: true,
				Embedder:  emb,
				EmbedWait: c.Duration("embed-wait"),
			}, log)
			if err != nil {
				return nil, err
			}
			return o.FS, nil
		},
		Mount: memfs.MountOptions{
			EntryTimeout: noneIfZero(c.Duration("entry-timeout")), AttrTimeout: noneIfZero(c.Duration("attr-timeout")),
			Steady:        !c.IsSet("entry-timeout") && !c.IsSet("attr-timeout"), // a key's, until memfs sees it change
			AllowOther:    c.Bool("allow-other"),
			Debug:         c.Bool("debug"),
			NoXAttrs:      !c.Bool("xattrs"),
			ShowMemfs:     c.Bool("show-memfs"),
			Agent:         c.String("agent"),
			FlushInterval: c.Duration("flush-interval"),
			IndexAtMount:  c.Bool("index-at-mount"),
			OnFlush: func(why string, entries int) func() {
				return progress.Flush(log, c.App.ErrWriter, why, entries, progressOn(c.App.ErrWriter))
			},
		},
	})
}

// noneIfZero is a cache timeout flag as the engine takes it: the flag's 0
// ("not at all") is the engine's negative.
func noneIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

func unmountCommand() *cli.Command {
	return &cli.Command{
		Name:      "unmount",
		Aliases:   []string{"umount"},
		Usage:     "flush through the running memfs, then unmount MOUNTPOINT",
		ArgsUsage: "MOUNTPOINT",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "how long to wait for the flush and unmount (at least 1s)"},
			&cli.BoolFlag{Name: "lazy", Usage: "a mount in use: detach it now; memfs serves its users until they close it, then flushes and exits"},
			&cli.BoolFlag{Name: "wait", Usage: "a mount in use: wait for its users to close it (up to --timeout); without --lazy or --wait a mount in use is refused"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errors.New("unmount: want exactly one MOUNTPOINT")
			}
			mnt, err := filepath.Abs(c.Args().First())
			if err != nil {
				return err
			}
			u, err := mountclient.Unmount(mnt, mountclient.UnmountOptions{Timeout: c.Duration("timeout"), Lazy: c.Bool("lazy"), Wait: c.Bool("wait")})
			return u.Print(c.App.Writer, c.App.ErrWriter, mnt, err)
		},
	}
}
