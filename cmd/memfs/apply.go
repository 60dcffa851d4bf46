package main

import (
	"errors"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/extwatch"
)

// applyCommand is the mount's helper process (extwatch's helper
// protocol): it carries external changes out through MOUNTPOINT, so that
// the kernel emits inotify events to watchers on the mount.
func applyCommand() *cli.Command {
	return &cli.Command{
		Name:      "__apply",
		Hidden:    true,
		Usage:     "internal: carry out external changes through MOUNTPOINT (started by memfs mount)",
		ArgsUsage: "MOUNTPOINT",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return errors.New("__apply: want MOUNTPOINT")
			}
			return extwatch.RunHelper(c.Args().First(), os.Stdin, os.Stdout, logger(c, false))
		},
	}
}
