package main

import (
	"flag"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs/internal/cliargs"
	"github.com/memfs/memfs/mountclient"
)

// givenFlag is a string flag that remembers whether the command line gave
// it. urfave/cli's IsSet is true for a value taken from the environment
// too, and only a --store typed on the command line conflicts with
// --mount: MEMFS_STORE is a default, which an explicit --mount overrides.
type givenFlag struct{ *cli.StringFlag }

// Apply registers the flag, then wraps its value (cliargs.Given).
func (f givenFlag) Apply(set *flag.FlagSet) error {
	err := f.StringFlag.Apply(set)
	cliargs.WrapGiven(set, f.Names())
	return err
}

// flagGiven reports whether the command line (not the environment) gave
// the givenFlag name.
func flagGiven(c *cli.Context, name string) bool { return cliargs.WasGiven(c.Generic(name)) }

// mountFlag is --mount, the live mount a command works through (locate);
// what says what it does there.
func mountFlag(what string) cli.Flag {
	return &cli.StringFlag{Name: "mount", Usage: what + " the live mount at DIR (the default when a mount serves the store, or the working directory is in one)"}
}

// target is what a command works on (mountclient.Target), with the
// directory of the live mount, if any.
type target struct {
	mountclient.Target[storeSpec]
	mnt string // the live memfs mount serving Spec (Client.Dir); "" to open the store
}

// locate finds what the command c works on (mountclient.Locate).
func locate(c *cli.Context) (target, error) {
	r, err := mountclient.Locate(c.String("mount"), c.String("store"), flagGiven(c, "store"), parseStore)
	if err != nil || r.Client == nil {
		return target{Target: r}, err
	}
	return target{Target: r, mnt: r.Client.Dir}, nil
}

// mountSettings warns that the write flags of a command that goes through
// a mount do not apply: the mount's own --agent and redaction do.
func mountSettings(c *cli.Context, t target) {
	var set []string
	for _, f := range []string{"agent", "no-redact", "redact-config"} {
		if c.IsSet(f) {
			set = append(set, "--"+f)
		}
	}
	if len(set) > 0 {
		logger(c, false).Warn("going through the mount, which writes with its own --agent and redaction; these flags do not apply",
			"flags", strings.Join(set, " "), "mountpoint", t.mnt)
	}
}
