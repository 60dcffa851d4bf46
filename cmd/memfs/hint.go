package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/internal/hint"
	"github.com/memfs/memfs/mountclient"
)

func hintCommand() *cli.Command {
	return &cli.Command{
		Name:      "hint",
		Usage:     "print, or write into CLAUDE.md / AGENTS.md / GEMINI.md, where the agent's memory is and how to use it",
		ArgsUsage: "claude|codex|gemini [FILE]",
		Description: "Prints a short section for the agent's instructions file. With --write, puts it into FILE\n" +
			"(default: CLAUDE.md, AGENTS.md or GEMINI.md in the current directory) between marker\n" +
			"lines: a second run replaces that section in place, and changes nothing if it is the same.\n" +
			"The mountpoint is --mount, else the mount the other commands would use (--store, the mount\n" +
			"the working directory is in), else your one memfs mount, else the placeholder " + hint.Placeholder + ".\n" +
			"FILE may be a symlink (a dotfiles manager's): it stays one, and the section is written into\n" +
			"the file it names when that is a regular file of yours; any other target is refused, unchanged.\n" +
			"--write also registers memfs mcp as the MCP server \"memfs\" where the agent reads them: .mcp.json\n" +
			"(claude), .gemini/settings.json (gemini) or .codex/config.toml (codex) beside FILE.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "mount", Usage: "where the memory is mounted"}, storeFlag(),
			&cli.BoolFlag{Name: "write", Usage: "write the section into FILE instead of printing it"},
		},
		Action: hintAction,
	}
}

func hintAction(c *cli.Context) error {
	agent := c.Args().First()
	file, err := hint.File(agent)
	if err != nil {
		return err
	}
	if c.NArg() > 2 || (c.NArg() == 2 && !c.Bool("write")) {
		return fmt.Errorf("hint: want AGENT, and FILE only with --write; got %q", c.Args().Slice())
	}
	t, _ := locate(c) // the mount the other commands work through, if any
	mnt, found, err := hint.Mountpoint(c.String("mount"), t.mnt, mountclient.Mountpoints(mountclient.Mounts(), uint32(os.Getuid())))
	if err != nil {
		return fmt.Errorf("hint: %w", err)
	}
	if !found {
		fmt.Fprintf(c.App.ErrWriter, "hint: no memfs mount found; replace %s with the mountpoint, or pass --mount DIR\n", hint.Placeholder)
	}
	if !c.Bool("write") {
		_, err := fmt.Fprint(c.App.Writer, hint.Section(agent, mnt))
		return err
	}
	if c.NArg() == 2 {
		file = c.Args().Get(1)
	}
	return hint.Install(c.App.Writer, agent, file, mnt)
}
