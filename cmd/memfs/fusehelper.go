package main

import (
	"fmt"
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
		Name:                   "mount-helper",
		Usage:                  "what mount(8) runs for type fuse.memfs: start memfs mount in the background and wait until it serves",
		ArgsUsage:              "SOURCE MOUNTPOINT",
		Hidden:                 true,
		Description:            mounthelper.MountHelp(stores.Usage()),
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
	return mounthelper.Mount(c.Args().Get(0), c.Args().Get(1), c.StringSlice("o"), helperPlanOptions(c.Bool("s")), c.Bool("v"), c.Bool("f"), c.App.Writer, c.App.ErrWriter)
}

// helperPlanOptions is what mounthelper.PlanMount knows of memfs mount:
// its flags, its stores and the state directory.
func helperPlanOptions(sloppy bool) mounthelper.PlanOptions {
	return mounthelper.PlanOptions{
		Mount: argSpec(mountCommand()),
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
	return mounthelper.Umount(c.App.Writer, c.Args().First(), c.Bool("l"), c.Bool("f"), c.Bool("v"), c.Duration("timeout"))
}
