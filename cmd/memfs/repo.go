package main

import (
	"cmp"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/repo"
)

// repoCommand names the repository a directory is in (issue 33).
func repoCommand() *cli.Command {
	return &cli.Command{Name: "repo", Usage: "the repository a directory is in, as memfs names its memory", Subcommands: []*cli.Command{{
		Name: "id", Usage: "print the id of the repository DIR (default: the working directory) is in", ArgsUsage: "[DIR]",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "also print what the id is made of: path, remote, branch"}},
		Action: func(c *cli.Context) error {
			id, err := repo.Identify(c.Context, cmp.Or(c.Args().First(), "."))
			if err == nil { // else the error names the directory
				_, err = fmt.Fprint(c.App.Writer, id.Text(c.Bool("verbose")))
			}
			return err
		},
	}}}
}
