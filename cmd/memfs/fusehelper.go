package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/internal/flagrule"
	"github.com/memfs/memfs/internal/mounthelper"
)

// helperArgs is mounthelper.Args for this command's commands and stores:
// mount(8)'s and umount(8)'s argument shapes become mount-helper and
// umount-helper commands.
func helperArgs(args []string, commands []*cli.Command) []string {
	isStore := func(src string) bool {
		spec, err := stores.Parse(src)
		return err == nil && spec.Local()
	}
	isCommand := func(name string) bool {
		return name == "help" || name == "h" || argSpec(&cli.Command{Subcommands: commands}).Sub(name) != nil
	}
	return mounthelper.Args(args, isCommand, isStore)
}

func mountHelperCommand() *cli.Command {
	return &cli.Command{
		Name:      "mount-helper",
		Usage:     "what mount(8) runs for type fuse.memfs: start memfs mount in the background and wait until it serves",
		ArgsUsage: "SOURCE MOUNTPOINT",
		Hidden:    true,
		Description: "Run by mount -t fuse.memfs and /etc/fstab through /sbin/mount.fuse.memfs or mount.fuse3.\n" +
			"SOURCE is the store (" + stores.Usage() + "), or any word (memfs) with -o store=SPEC.\n" +
			"Options: ro, rw, allow_other, store=, log=FILE, timeout=DURATION, and every memfs mount flag\n" +
			"as NAME=VALUE or NAME (flush_interval=10s, bootstrap=memory/ repeated for more prefixes,\n" +
			"noxattrs for --xattrs=false); the generic options mount passes (defaults, dev, suid, exec,\n" +
			"auto, user, _netdev, nofail, atime, x-systemd.*, ...) are accepted and ignored.",
		UseShortOptionHandling: true,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "o", Usage: "mount options, comma-separated"},
			&cli.BoolFlag{Name: "s", Usage: "sloppy: ignore unknown options (with a warning) instead of failing"},
			&cli.BoolFlag{Name: "f", Usage: "fake: check the options and do not mount"},
			&cli.BoolFlag{Name: "n", Usage: "no mtab (ignored)"},
			&cli.BoolFlag{Name: "v", Usage: "verbose: print the memfs mount command"},
		},
		Action: mountHelperAction,
	}
}

func mountHelperAction(c *cli.Context) error {
	if c.NArg() != 2 {
		return fmt.Errorf("mount-helper: want SOURCE MOUNTPOINT, got %d arguments", c.NArg())
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("mount-helper: cannot find the memfs binary: %w", err)
	}
	opts := strings.Split(strings.Join(c.StringSlice("o"), ","), ",")
	return mounthelper.Mount(self, c.Args().Get(0), c.Args().Get(1), opts, helperPlanOptions(c.Bool("s")), c.Bool("v"), c.Bool("f"), c.App.Writer, c.App.ErrWriter)
}

// helperPlanOptions is what mounthelper.PlanMount knows of memfs mount:
// its flags, its stores and the state directory.
func helperPlanOptions(sloppy bool) mounthelper.PlanOptions {
	mount := argSpec(mountCommand())
	return mounthelper.PlanOptions{
		Flag: func(name string) (bool, bool) {
			f := mount.Flag(name)
			return f != nil, f != nil && !f.Value
		},
		Store: func(v string) (string, error) {
			spec, err := parseStore(v)
			return spec.String(), err
		},
		StateDir: memfs.DefaultStateDir(),
		Sloppy:   sloppy,
		Check:    func(args []string) error { return flagrule.CheckOptions("mount", args) },
	}
}

func umountHelperCommand() *cli.Command {
	return &cli.Command{
		Name:      "umount-helper",
		Usage:     "what umount(8) runs for type fuse.memfs: unmount, then wait until memfs has flushed and exited",
		ArgsUsage: "MOUNTPOINT",
		Hidden:    true,
		Description: "Unmounts as umount(8) would (a busy mount fails at once with EBUSY, as always), then waits\n" +
			"for the memfs process that served it to make its last flush and exit, so that when umount\n" +
			"returns the store is written and free (systemd stops an fstab mount with umount, then\n" +
			"kills what is left of it).",
		UseShortOptionHandling: true,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "l", Usage: "lazy: detach now, memfs finishes when the last user is gone (not waited for)"},
			&cli.BoolFlag{Name: "f", Usage: "force"},
			&cli.BoolFlag{Name: "n", Usage: "no mtab (ignored)"},
			&cli.BoolFlag{Name: "r", Usage: "remount read-only on failure (ignored)"},
			&cli.BoolFlag{Name: "v", Usage: "verbose"},
			&cli.StringFlag{Name: "t", Usage: "type (ignored)"},
			&cli.DurationFlag{Name: "timeout", Value: 2 * time.Minute, Usage: "how long to wait for memfs to exit (at least 1s)"},
		},
		Action: umountHelperAction,
	}
}

func umountHelperAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("umount-helper: want MOUNTPOINT, got %d arguments", c.NArg())
	}
	mnt, err := filepath.Abs(c.Args().First())
	if err != nil {
		return err
	}
	pid, err := mounthelper.UnmountAndWait(mnt, c.Bool("l"), c.Bool("f"), c.Duration("timeout"))
	if err != nil || pid <= 0 || c.Bool("l") {
		return err
	}
	if c.Bool("v") {
		fmt.Fprintf(c.App.Writer, "%s: unmounted; memfs process %d flushed and exited\n", mnt, pid)
	}
	return nil
}
