package flagrule

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/memfs/memfs"
	"github.com/memfs/memfs/internal/mounthelper"
)

func rule(name string, min, max float64, want string, zero bool) Rule {
	return Rule{Name: name, Min: min, Max: max, Want: want, Zero: zero}
}

// For returns the rules of a memfs command's numeric and duration flags
// (cmd/memfs's TestEveryNumericFlagHasARule keeps the table complete).
// Each rule says what 0 means where 0 is accepted; the flag's usage says
// it too.
func For(command string) []Rule {
	inf := math.Inf(1)
	switch command {
	case "mount":
		return []Rule{
			rule("max-file-size", 1, inf, "a size in bytes of at least 1 (there is no unlimited size: give a large one)", false),
			rule("flush-interval", float64(memfs.MinFlushInterval), inf, "0 (flush only on fsync and unmount) or a duration of at least "+memfs.MinFlushInterval.String(), true),
			// The kernel keeps these in jiffies (1 to 10 ms), rounding up:
			// less than 1ms is not a shorter cache, only a surprising one.
			rule("attr-timeout", float64(time.Millisecond), inf, "0 (the kernel caches no attribute) or a duration of at least 1ms", true),
			rule("entry-timeout", float64(time.Millisecond), inf, "0 (the kernel caches no name) or a duration of at least 1ms", true),
			rule("embed-wait", float64(time.Millisecond), inf, "0 (the default, 1s) or a duration of at least 1ms", true),
		}
	case "unmount", "umount-helper":
		return []Rule{rule("timeout", float64(mounthelper.MinWait), inf, "a duration of at least "+mounthelper.MinWait.String()+" such as 30s", false)}
	case "log":
		return []Rule{
			rule("limit", 1, inf, "a number of events of at least 1", false),
			rule("before", 1, inf, "a sequence number of at least 1 (events are numbered from 1)", false),
			rule("after", 0, inf, "a sequence number of at least 0 (0: from the first event)", false),
		}
	case "ls":
		return []Rule{rule("importance-min", 0, 1, "a number from 0.0 to 1.0", false)}
	case "search":
		return []Rule{
			rule("top-k", 1, inf, "a number of results of at least 1", false),
			rule("min-score", 0, inf, "a score of at least 0 (no score is negative)", false),
			rule("importance-min", 0, 1, "a number from 0.0 to 1.0", false),
		}
	case "context":
		return []Rule{
			rule("max-chars", 1, inf, "a budget in characters of at least 1", false),
			rule("summaries", 0, inf, "a number of summaries of at least 0 (0: none)", false),
			rule("at", 1, inf, "an event-log sequence number of at least 1 (events are numbered from 1)", false),
		}
	}
	return nil
}

// CheckOptions checks the flags of args written as --NAME=VALUE (those
// mount(8)'s options NAME=VALUE became) against command's rules, and
// names a refused one as the option: "option flush_interval=1ms".
func CheckOptions(command string, args []string) error {
	for _, a := range args {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok || !strings.HasPrefix(a, "--") {
			continue
		}
		for _, r := range For(command) {
			if r.Name != name {
				continue
			}
			var v any = value
			if d, err := time.ParseDuration(value); err == nil {
				v = d
			}
			if err := r.Check(command, v); err != nil {
				return fmt.Errorf("option %s=%s: want %s", strings.ReplaceAll(name, "-", "_"), value, r.Want)
			}
		}
	}
	return nil
}
