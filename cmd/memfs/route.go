package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/backend"
	"github.com/memfs/memfs/internal/cliargs"
	"github.com/memfs/memfs/internal/names"
	"github.com/memfs/memfs/internal/usererr"
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

// target is what a command works on: a live mount, or a store to open.
type target struct {
	spec   storeSpec
	mnt    string              // the live memfs mount serving spec; "" to open the store
	client *mountclient.Client // the mount at mnt
}

// locate finds what the command c works on (mountclient.Locate).
func locate(c *cli.Context) (target, error) {
	r, err := mountclient.Locate(c.String("mount"), c.String("store"), flagGiven(c, "store"), parseStore)
	if err != nil {
		return target{}, err
	}
	t := target{spec: r.Spec, client: r.Client}
	if r.Client != nil {
		t.mnt = r.Client.Dir
	}
	return t, nil
}

// needsStore refuses, for a command that needs the store to itself, a
// store a mount serves: what to do instead is named.
func needsStore(cmd string, t target, instead string) error {
	if t.mnt == "" {
		return nil
	}
	return fmt.Errorf("%s: %s is mounted at %s (memfs process %d), and %s needs the store to itself\n  %s",
		cmd, t.spec, t.mnt, t.client.PID, cmd, instead)
}

// cat prints the values of keys, each read by value: a file's content, a
// symlink's target (as the store holds it).
func cat(c *cli.Context, keys []string, value func(key string) ([]byte, error)) error {
	for _, k := range keys {
		v, err := value(k)
		var nv *mountclient.NoValueError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := memfs.CheckTransient("cat", k); err != nil {
				return err
			}
			return usererr.Explain(err)
		case errors.As(err, &nv):
			return fmt.Errorf("cat: %s: a %s has no value to print", k, backend.TypeName(nv.Mode))
		case err != nil:
			return usererr.Explain(err)
		}
		if _, err := c.App.Writer.Write(v); err != nil {
			return err
		}
	}
	return nil
}

// rmMissing is what rm does with a key that names nothing: with force,
// nothing; else it is refused (a transient name's own way).
func rmMissing(force bool) func(key string) error {
	return func(k string) error {
		if force {
			return nil
		}
		if err := memfs.CheckTransient("rm", k); err != nil {
			return usererr.Refuse(err)
		}
		return usererr.Refuse(fmt.Errorf("rm: %s: no such key (memfs ls lists them; -r removes a prefix)", names.Show(k)))
	}
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
