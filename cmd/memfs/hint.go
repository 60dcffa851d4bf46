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
			"The mountpoint is --mount, else the one memfs mount of yours found in /proc/self/mountinfo\n" +
			"(other users' mounts are not candidates), else the placeholder " + hint.Placeholder + " to fill in.\n" +
			"FILE may be a symlink (a dotfiles manager's): it stays one, and the section is written into\n" +
			"the file it names when that is a regular file of yours; any other target is refused, unchanged.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "mount", Usage: "where the memory is mounted"},
			&cli.BoolFlag{Name: "write", Usage: "write the section into FILE instead of printing it"},
		},
		Action: hintAction,
	}
}

func hintAction(c *cli.Context) error {
	agent := c.Args().First()
	file, ok := hint.Files[agent]
	if !ok {
		return fmt.Errorf("hint: unknown agent %q; want one of: claude, codex, gemini", agent)
	}
	if c.NArg() > 2 || (c.NArg() == 2 && !c.Bool("write")) {
		return fmt.Errorf("hint: want AGENT, and FILE only with --write; got %q", c.Args().Slice())
	}
	mnt, found, err := hint.Mountpoint(c.String("mount"), mountclient.Mountpoints(mountclient.Mounts(), uint32(os.Getuid())))
	if err != nil {
		return fmt.Errorf("hint: %w", err)
	}
	if !found {
		fmt.Fprintf(c.App.ErrWriter, "hint: no memfs mount found; replace %s with the mountpoint, or pass --mount DIR\n", hint.Placeholder)
	}
	section := hint.Section(agent, mnt)
	if !c.Bool("write") {
		_, err := fmt.Fprint(c.App.Writer, section)
		return err
	}
	if c.NArg() == 2 {
		file = c.Args().Get(1)
	}
	changed, err := hint.Write(file, section)
	if err != nil {
		return fmt.Errorf("hint: %w", err)
	}
	if changed {
		fmt.Fprintf(c.App.Writer, "%s: memfs section written\n", file)
	} else {
		fmt.Fprintf(c.App.Writer, "%s: memfs section already up to date\n", file)
	}
	return nil
}
