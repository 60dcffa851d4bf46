package main

import (
	"errors"
	"fmt"
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

// transientPatterns returns the patterns the transient flags give: nil
// for the session's default, an empty list for none.
func transientPatterns(c *cli.Context) ([]string, error) {
	if c.Bool("no-transient") {
		if c.IsSet("transient") {
			return nil, errors.New("give --transient or --no-transient, not both")
		}
		return []string{}, nil
	}
	if !c.IsSet("transient") {
		return nil, nil
	}
	pats, err := session.ParseTransient(c.StringSlice("transient"))
	if err != nil {
		return nil, fmt.Errorf("--transient: %w", err)
	}
	return pats, nil
}

// checkTransient refuses, for the store command cmd, a transient editor
// file (session.DefaultTransient): a mount keeps it in memory only, so
// that storing one would make a key no mount shows. A store written by a
// mount with other --transient patterns may hold such a key: cat and rm
// call this only for a key the store does not have, to say why.
func checkTransient(cmd, key string) error {
	if session.IsTransient(key, session.DefaultTransient) {
		return fmt.Errorf("%s: %s: a transient editor file lives only in a mounted session (see --transient); not stored", cmd, key)
	}
	return nil
}
