package main

import (
	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/internal/flagrule"
)

// checkFlags is every command's Before: it refuses a numeric or duration
// flag out of its range before the command does any work. A flag left at
// its default is not checked (TestFlagDefaultsPass checks the defaults).
func checkFlags(c *cli.Context) error {
	for _, r := range flagrule.For(c.Command.FullName()) { // "repo ls" is not "ls"
		if !c.IsSet(r.Name) {
			continue
		}
		if err := r.Check(c.Command.FullName(), c.Value(r.Name)); err != nil {
			return err
		}
	}
	return nil
}
