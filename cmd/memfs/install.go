package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/internal/install"
	"github.com/memfs/memfs/internal/manpage"
	"github.com/memfs/memfs/internal/mounthelper"
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print the shell completion script for bash or zsh",
		ArgsUsage: "bash|zsh",
		Description: "bash: memfs completion bash > /usr/local/share/bash-completion/completions/memfs\n" +
			"     (or: source <(memfs completion bash))\n" +
			"zsh:  memfs completion zsh > \"${fpath[1]}/_memfs\" (or source it after compinit)\n" +
			"memfs install writes both.",
		Action: func(c *cli.Context) error {
			script, err := install.Completion(c.Args().First())
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(c.App.Writer, script)
			return err
		},
	}
}

func manCommand() *cli.Command {
	return &cli.Command{
		Name:  "man",
		Usage: "print the memfs(1) man page (roff)",
		Description: "memfs man > /usr/local/share/man/man1/memfs.1 (memfs install writes it);\n" +
			"read it now with: memfs man | man -l -",
		Action: func(c *cli.Context) error {
			page, err := manPage(c.App)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(c.App.Writer, page)
			return err
		},
	}
}

// manPage renders the app's commands and flags as a section 1 man page.
func manPage(app *cli.App) (string, error) {
	page, err := app.ToManWithSection(1)
	if err != nil {
		return "", fmt.Errorf("man: %w", err)
	}
	return manpage.Finish(page, os.Getenv), nil
}

func installCommand() *cli.Command {
	return &cli.Command{
		Name:        "install",
		Usage:       "install the mount helper (mount -t fuse.memfs, /etc/fstab), shell completions, the man page and the systemd units",
		Description: install.Description,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "prefix", Value: "/usr/local", Usage: "where share/ and lib/systemd/ go"},
			&cli.StringFlag{Name: "helper-dir", Usage: "where the mount.fuse.memfs and umount.fuse.memfs links go", DefaultText: "/sbin, or PREFIX/sbin with --prefix"},
		},
		Action: installAction,
	}
}

func installAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return fmt.Errorf("install: takes no arguments, got %q", c.Args().Slice())
	}
	o := install.Options{Prefix: c.String("prefix"), HelperDir: c.String("helper-dir"), Helpers: []string{mounthelper.Name, mounthelper.UmountName}}
	if err := o.Locate(c.IsSet("prefix")); err != nil {
		return err
	}
	var err error
	if o.ManPage, err = manPage(c.App); err != nil {
		return err
	}
	return install.Install(o, c.App.Writer, c.App.ErrWriter)
}
