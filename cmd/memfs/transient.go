package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/session"
)

// transientFlags choose the names a mount keeps in the session only.
func transientFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "transient",
			Usage: "a name pattern (path.Match, matched against each path segment) whose files live in the mount only, never in the store; " +
				"repeatable (a comma also separates patterns); --transient '' persists everything",
			DefaultText: strings.Join(session.DefaultTransient, " ")},
		&cli.BoolFlag{Name: "no-transient", Usage: "persist every name, editor swap and lock files included (same as --transient '')"},
	}
}
