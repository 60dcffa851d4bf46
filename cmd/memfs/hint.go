package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/internal/hint"
	"github.com/memfs/memfs/mountclient"
)

func hintCommand() *cli.Command {
	return &cli.Command{
		Name:        "hint",
		Usage:       "print, or write into CLAUDE.md / AGENTS.md / GEMINI.md, where the agent's memory is and how to use it",
		ArgsUsage:   "claude|codex|gemini [FILE]",
		Description: hint.Description,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "mount", Usage: "where the memory is mounted"}, storeFlag(),
			&cli.BoolFlag{Name: "write", Usage: "write the section into FILE instead of printing it"},
		},
		Action: hintAction,
	}
}

func hintAction(c *cli.Context) error {
	t, _ := locate(c) // the mount the other commands work through, if any
	return hint.Run(c.App.Writer, c.App.ErrWriter, c.Args().Slice(), c.Bool("write"), c.String("mount"), t.mnt,
		mountclient.Mountpoints(mountclient.Mounts(), uint32(os.Getuid())))
}
