package main

import (
	"math"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/internal/flagrule"
	"github.com/memfs/memfs/internal/mounthelper"
)

// flagRule is what one numeric or duration flag accepts.
type flagRule = flagrule.Rule

func rule(name string, min, max float64, want string, zero bool) flagRule {
	return flagRule{Name: name, Min: min, Max: max, Want: want, Zero: zero}
}

// flagRules returns the rules of a command's numeric and duration flags
// (TestEveryNumericFlagHasARule keeps the table complete). Each rule says
// what 0 means where 0 is accepted; the flag's Usage says it too.
func flagRules(command string) []flagRule {
	inf := math.Inf(1)
	switch command {
	case "mount":
		return []flagRule{
			rule("max-file-size", 1, inf, "a size in bytes of at least 1 (there is no unlimited size: give a large one)", false),
			rule("flush-interval", float64(memfs.MinFlushInterval), inf, "0 (flush only on fsync and unmount) or a duration of at least "+memfs.MinFlushInterval.String(), true),
			// The kernel keeps these in jiffies (1 to 10 ms), rounding up:
			// less than 1ms is not a shorter cache, only a surprising one.
			rule("attr-timeout", float64(time.Millisecond), inf, "0 (the kernel caches no attribute) or a duration of at least 1ms", true),
			rule("entry-timeout", float64(time.Millisecond), inf, "0 (the kernel caches no name) or a duration of at least 1ms", true),
			rule("embed-wait", float64(time.Millisecond), inf, "0 (the default, 1s) or a duration of at least 1ms", true),
		}
	case "unmount", "umount-helper":
		return []flagRule{rule("timeout", float64(mounthelper.MinWait), inf, "a duration of at least "+mounthelper.MinWait.String()+" such as 30s", false)}
	case "log":
		return []flagRule{
			rule("limit", 1, inf, "a number of events of at least 1", false),
			rule("before", 1, inf, "a sequence number of at least 1 (events are numbered from 1)", false),
			rule("after", 0, inf, "a sequence number of at least 0 (0: from the first event)", false),
		}
	case "ls":
		return []flagRule{rule("importance-min", 0, 1, "a number from 0.0 to 1.0", false)}
	case "search":
		return []flagRule{
			rule("top-k", 1, inf, "a number of results of at least 1", false),
			rule("min-score", 0, inf, "a score of at least 0 (no score is negative)", false),
			rule("importance-min", 0, 1, "a number from 0.0 to 1.0", false),
		}
	case "context":
		return []flagRule{
			rule("max-chars", 1, inf, "a budget in characters of at least 1", false),
			rule("summaries", 0, inf, "a number of summaries of at least 0 (0: none)", false),
			rule("at", 1, inf, "an event-log sequence number of at least 1 (events are numbered from 1)", false),
		}
	}
	return nil
}

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
