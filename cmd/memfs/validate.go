package main

import (
	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/internal/flagrule"
)

// flagRule is what one numeric or duration flag accepts.
type flagRule = flagrule.Rule

// flagRules returns the rules of a command's numeric and duration flags.
func flagRules(command string) []flagRule { return flagrule.For(command) }

// checkFlags is every command's Before: it refuses a numeric or duration
// flag out of its range before the command does any work. A flag left at
// its default is not checked (TestFlagDefaultsPass checks the defaults).
func checkFlags(c *cli.Context) error {
	for _, r := range flagRules(c.Command.Name) {
		if !c.IsSet(r.Name) {
			continue
		}
		if err := r.Check(c.Command.Name, c.Value(r.Name)); err != nil {
			return err
		}
	}
	return nil
}
